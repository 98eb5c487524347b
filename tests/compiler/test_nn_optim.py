"""compiler.nn.optim against tinygrad 0.14's optimizers (CPU device, one subprocess for the module): the same
optimizer text (tinygrad's signatures and defaults) over the same parameters and loss, several steps, and the
parameters after every step must agree. Ours runs on the simulated GPU and on the CPU device."""

import json

import numpy as np
import pytest

from compiler import Tensor
from compiler.nn import optim
from tests.support import tinygrad_oracle

STEPS = 3
# name: optimizer expression over the parameters w and b (a group: one optimizer each)
CASES = {
    "sgd": "optim.SGD([w, b], lr=0.1)",
    "sgd_momentum_wd": "optim.SGD([w, b], lr=0.05, momentum=0.9, weight_decay=0.01)",
    "sgd_nesterov": "optim.SGD([w, b], lr=0.05, momentum=0.8, nesterov=True)",
    "sgd_classic": "optim.SGD([w, b], lr=0.05, momentum=0.9, classic=True)",
    "adam_defaults": "optim.Adam([w, b])",
    "adam": "optim.Adam([w, b], lr=0.01, b1=0.8, b2=0.99, eps=1e-6)",
    "adamw": "optim.AdamW([w, b], lr=0.02, weight_decay=0.1)",
    "lamb": "optim.LAMB([w, b], lr=0.02, weight_decay=0.05)",
    "lars": "optim.LARS([w, b], lr=0.1)",
    "lars_nesterov": "optim.LARS([w, b], lr=0.1, momentum=0.5, nesterov=True, classic=False, tcoef=0.01)",
    "group": "optim.OptimizerGroup(optim.SGD([w], lr=0.1, momentum=0.9), optim.Adam([b], lr=0.01))",
}

_TINYGRAD = """
from tinygrad import Tensor
from tinygrad.nn import optim
from tinygrad.helpers import Context
x, r = Tensor(inp["x"]), Tensor(inp["r"])
for name, text in json.loads(str(inp["cases"])).items():
    w, b = Tensor(inp["w"]), Tensor(inp["b"])
    opt = eval(text)
    with Context(TRAINING=1):
        for i in range(int(inp["steps"])):
            opt.zero_grad()
            (((x @ w + b).tanh()) * r).sum().backward()
            opt.step()
            out[f"{name}:{i}:w"], out[f"{name}:{i}:b"] = w.numpy(), b.numpy()
"""


def _data():
    rng = np.random.default_rng(80)
    return {"x": rng.standard_normal((6, 4)).astype(np.float32), "r": rng.standard_normal((6, 3)).astype(np.float32),
            "w": rng.standard_normal((4, 3)).astype(np.float32), "b": rng.standard_normal(3).astype(np.float32)}


@pytest.fixture(scope="module")
def reference():
    return tinygrad_oracle.run(_TINYGRAD, _data() | {"cases": np.array(json.dumps(CASES)), "steps": np.array(STEPS)})


@pytest.mark.parametrize("kind", ["AMD", "CPU"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_optimizer_steps_match_tinygrad(reference, name, kind):
    d = _data()
    with tinygrad_oracle.on_device(kind):
        x, r = Tensor(d["x"]), Tensor(d["r"])
        w, b = Tensor(d["w"]), Tensor(d["b"])
        opt = eval(CASES[name], {"optim": optim, "w": w, "b": b})
        for i in range(STEPS):
            opt.zero_grad()
            (((x @ w + b).tanh()) * r).sum().backward()
            opt.step()
            np.testing.assert_allclose(w.numpy(), reference[f"{name}:{i}:w"], rtol=1e-5, atol=1e-6,
                                       err_msg=f"w after step {i + 1}")
            np.testing.assert_allclose(b.numpy(), reference[f"{name}:{i}:b"], rtol=1e-5, atol=1e-6,
                                       err_msg=f"b after step {i + 1}")


def test_defaults_are_tinygrads():
    p = Tensor.ones(2)
    adam, lamb, sgd, lars = optim.Adam([p]), optim.LAMB([p]), optim.SGD([p]), optim.LARS([p])
    assert (adam.b1, adam.b2, adam.eps, adam.wd) == (0.9, 0.999, 1e-8, 0.0)
    assert (lamb.eps, lamb.wd, lamb.adam) == (1e-6, 0.0, False)
    assert optim.AdamW([p]).wd == 0.01
    assert (sgd.momentum, sgd.wd, sgd.nesterov, sgd.tcoef) == (0.0, 0.0, False, 0.0)
    assert (lars.momentum, lars.wd, lars.tcoef, lars.classic) == (0.9, 1e-4, 0.001, True)
    assert np.isclose(adam.lr.numpy(), [0.001]).all()


def test_buffers_are_realized_not_updated():
    """A tensor marked is_param=False (BatchNorm's running statistics) is realized by step() but not trained."""
    p, buf = Tensor([1.0, 2.0]), Tensor([5.0])
    buf.is_param = False
    opt = optim.SGD([p, buf], lr=0.5)
    assert opt.params == [p] and opt.buffers == [buf]
    buf.assign(buf + 1)
    (p * p).sum().backward()
    opt.step()
    assert buf.lazydata.realized and buf.numpy().tolist() == [6.0]
    assert p.numpy().tolist() == [0.0, 0.0]


def test_optimizer_errors():
    with pytest.raises(ValueError, match="no parameters"):
        optim.SGD([])
    with pytest.raises(ValueError, match="negative"):
        optim.Adam([Tensor.ones(2)], lr=-1)
    with pytest.raises(NotImplementedError, match="fused"):
        optim.Adam([Tensor.ones(2)], fused=True)
    opt = optim.SGD([Tensor.ones(2)])
    with pytest.raises(RuntimeError, match="no gradient"):
        opt.step()
