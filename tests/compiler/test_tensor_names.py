"""Tensor-level names of tinygrad 0.14 (issue 28): gradient, linspace, const_like, empty_like, clone, to_, data,
sequential, ufix, usum, uprod, contiguous_backward, the grad attribute; against tinygrad's CPU device (one
subprocess) and NumPy."""

import numpy as np
import pytest

from compiler import Tensor, dtypes
from tests.support.tinygrad_cpu import run_tinygrad

_SCRIPT = """
import json, sys
import numpy as np
from tinygrad import Tensor, dtypes
out = {}
out["linspace"] = Tensor.linspace(-1.5, 2.0, 8).numpy().tolist()
out["linspace_int"] = Tensor.linspace(0, 10, 6, dtype=dtypes.int32).numpy().tolist()
out["linspace_1"] = Tensor.linspace(3, 7, 1).numpy().tolist()
x = Tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
w = Tensor([[0.3], [-0.2], [0.1]])
y = ((x @ w).relu() * x.sum(1, keepdim=True)).sum()
gx, gw = y.gradient(x, w)
out["grad_x"], out["grad_w"] = gx.numpy().tolist(), gw.numpy().tolist()
z = x.exp().sum(1)
out["grad_seeded"] = z.gradient(x, gradient=Tensor([1.0, -2.0]))[0].numpy().tolist()
out["usum"] = x.usum(x, x * 2).numpy().tolist()
out["uprod"] = x.uprod([x, x]).numpy().tolist()
out["usum_bool"] = (x > 0).usum(x < -1.5).numpy().tolist()
out["const_like"] = x.const_like(7).numpy().tolist()
out["sequential"] = x.sequential([lambda t: t * 2, Tensor.relu, lambda t: t - 1]).numpy().tolist()
out["ufix_int"] = str(Tensor([1, 2]).ufix(2.5).dtype)
out["data"] = Tensor([[1, 2], [3, 4]], dtype=dtypes.int16).data().tolist()
out["data_fmt"] = Tensor([[1, 2], [3, 4]], dtype=dtypes.int16).data().format
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def tiny():
    return run_tinygrad(_SCRIPT)


def test_creation_names_match_tinygrad(tiny):
    np.testing.assert_allclose(Tensor.linspace(-1.5, 2.0, 8).numpy(), tiny["linspace"], rtol=1e-6)
    got = Tensor.linspace(0, 10, 6, dtype=dtypes.int32)
    assert got.dtype == dtypes.int32 and got.numpy().tolist() == tiny["linspace_int"]
    assert Tensor.linspace(3, 7, 1).numpy().tolist() == tiny["linspace_1"]
    assert Tensor.linspace(0, 1, 0).shape == (0,)
    x = Tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    assert x.const_like(7).numpy().tolist() == tiny["const_like"]
    e = x.empty_like(dtype=dtypes.int16)
    assert e.shape == x.shape and e.dtype == dtypes.int16
    with pytest.raises(TypeError, match="bool"):
        Tensor.linspace(0, 1, 3, dtype=dtypes.bool)


def test_gradient_matches_tinygrad_and_leaves_grad_alone(tiny):
    x = Tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)
    w = Tensor([[0.3], [-0.2], [0.1]], requires_grad=True)
    y = ((x @ w).relu() * x.sum(1, keepdim=True)).sum()
    gx, gw = y.gradient(x, w)
    np.testing.assert_allclose(gx.numpy(), tiny["grad_x"], rtol=1e-6)
    np.testing.assert_allclose(gw.numpy(), tiny["grad_w"], rtol=1e-6)
    assert x.grad is None and w.grad is None
    z = x.exp().sum(1)
    np.testing.assert_allclose(z.gradient(x, gradient=Tensor([1.0, -2.0]))[0].numpy(), tiny["grad_seeded"], rtol=1e-6)
    unrelated = Tensor([1.0, 2.0], requires_grad=True)
    assert y.gradient(unrelated)[0].numpy().tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="one-element"):
        z.gradient(x)
    with pytest.raises(TypeError, match=r"targets\[0\] must be a float"):
        y.gradient(Tensor([1, 2]))


def test_combinators_match_tinygrad(tiny):
    x = Tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    assert x.usum(x, x * 2).numpy().tolist() == tiny["usum"]
    assert x.uprod([x, x]).numpy().tolist() == tiny["uprod"]
    assert (x > 0).usum(x < -1.5).numpy().tolist() == tiny["usum_bool"]
    assert x.sequential([lambda t: t * 2, Tensor.relu, lambda t: t - 1]).numpy().tolist() == tiny["sequential"]
    # tinygrad keeps a weak float until the constant meets a tensor; ours takes the default float at once
    assert tiny["ufix_int"] == "dtypes.weakfloat" and Tensor([1, 2]).ufix(2.5).dtype == dtypes.float32
    assert Tensor([1, 2]).ufix(3).dtype == dtypes.int32 and x.ufix(x) is x


def test_data_clone_to_and_grad(tiny):
    t = Tensor([[1, 2], [3, 4]], dtype=dtypes.int16)
    mv = t.data()
    assert mv.tolist() == tiny["data"] and mv.format == tiny["data_fmt"] and mv.shape == (2, 2)
    assert Tensor(3.5).data().tolist() == 3.5 and Tensor([True, False]).data().tolist() == [True, False]
    half = Tensor([1.5, 2.0], dtype=dtypes.half).data()  # (memoryview.tolist of format 'e' needs Python 3.12)
    assert half.format == "e" and np.frombuffer(half, np.float16).tolist() == [1.5, 2.0]
    assert Tensor.zeros(0).data().tolist() == []
    a = Tensor([1.0, 2.0], requires_grad=True)
    (a * 3).sum().backward()
    c = a.clone()
    assert c.numpy().tolist() == [1.0, 2.0] and c.grad.numpy().tolist() == [3.0, 3.0]
    assert c.lazydata is not a.lazydata
    assert a.contiguous_backward().numpy().tolist() == [1.0, 2.0]
    assert Tensor.grad is None and Tensor([1.0]).grad is None
    b = Tensor([5.0, 6.0])
    assert b.to_(b.device) is b and b.numpy().tolist() == [5.0, 6.0]


def test_small_tinygrad_names():
    t = Tensor([[1.0, 2.0, 3.0]])
    assert t.max_shape == (1, 3) and t.max_numel() == 3
    assert t.is_param and t.is_param_(False) is t and not t.is_param
    u = Tensor([[4.0, 5.0, 6.0]])
    assert t.replace(u) is t and t.numpy().tolist() == [[4.0, 5.0, 6.0]]
    with pytest.raises(ValueError, match="replace: x must be a Tensor of self's shape"):
        t.replace(Tensor([1.0]))
