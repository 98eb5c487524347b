"""Ops suite, gradients: backward() of every differentiable op against central finite differences of the NumPy
reference in float64 (tests/support/ops.check_grad: the loss is sum(out * w) for a random w)."""

import math

import numpy as np
import pytest

from compiler import Tensor
from tests.support.ops import check_grad
from tests.support.refs import conv2d_ref, pool_ref, sdpa_ref, softmax_ref

pytestmark = pytest.mark.usefixtures("gpu_arch")  # (also on gfx1201: conftest.py)

RNG = np.random.default_rng(50)


def _r(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape)


def _gelu_tanh(x):
    """tinygrad's (and our) default GELU, the tanh form."""
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _erf(x):
    return np.vectorize(math.erf)(x)


UNARY = {
    "neg": (lambda t: -t, np.negative, None), "exp": (lambda t: t.exp(), np.exp, None),
    "exp2": (lambda t: t.exp2(), np.exp2, None), "log": (lambda t: t.log(), np.log, (0.5, 3)),
    "log2": (lambda t: t.log2(), np.log2, (0.5, 3)), "sqrt": (lambda t: t.sqrt(), np.sqrt, (0.5, 3)),
    "rsqrt": (lambda t: t.rsqrt(), lambda x: 1 / np.sqrt(x), (0.5, 3)), "sin": (lambda t: t.sin(), np.sin, None),
    "cos": (lambda t: t.cos(), np.cos, None), "tan": (lambda t: t.tan(), np.tan, (-1, 1)),
    "tanh": (lambda t: t.tanh(), np.tanh, None),
    "sigmoid": (lambda t: t.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), None),
    "relu": (lambda t: t.relu(), lambda x: np.maximum(x, 0), None),
    "gelu": (lambda t: t.gelu(), _gelu_tanh, None),
    "silu": (lambda t: t.silu(), lambda x: x / (1 + np.exp(-x)), None),
    "erf": (lambda t: t.erf(), _erf, None), "abs": (lambda t: t.abs(), np.abs, None),
    "square": (lambda t: t.square(), np.square, None),
    "reciprocal": (lambda t: t.reciprocal(), np.reciprocal, (0.5, 2)),
    "pow_int": (lambda t: t ** 3, lambda x: x ** 3, None),
    "pow_float": (lambda t: t ** 1.5, lambda x: x ** 1.5, (0.5, 2)),
    "clip": (lambda t: t.clip(-1, 1), lambda x: np.clip(x, -1, 1), None),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_grad(backend, name):
    tfn, nfn, rng = UNARY[name]
    x = _r(3, 4, lo=rng[0], hi=rng[1]) if rng else _r(3, 4)
    if name in ("relu", "abs", "clip"):
        x[np.abs(np.abs(x) - 1) < 0.05] += 0.2
        x[np.abs(x) < 0.05] += 0.2  # finite differences across a kink are meaningless
    check_grad(tfn, nfn, [x], rtol=2e-3, atol=2e-4)


BINARY = {
    "add": (lambda a, b: a + b, np.add), "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply), "div": (lambda a, b: a / b, np.divide),
    "pow": (lambda a, b: a ** b, np.power), "maximum": (lambda a, b: a.maximum(b), np.maximum),
    "minimum": (lambda a, b: a.minimum(b), np.minimum), "mod": (lambda a, b: a % b, np.mod),
    "where": (lambda a, b: (a > b).where(a * 2, b), lambda a, b: np.where(a > b, a * 2, b)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_grad(backend, name):
    tfn, nfn = BINARY[name]
    a, b = _r(3, 4, lo=0.5, hi=2), _r(1, 4, lo=0.5, hi=2)  # b broadcasts: its gradient is summed
    if name == "mod":
        a = a * 3
        a[np.abs(np.mod(a, b) / b - 0.5) > 0.45] += 0.25
    check_grad(tfn, nfn, [a, b], rtol=2e-3, atol=2e-4)


REDUCE = {
    "sum": (lambda t: t.sum(1), lambda x: x.sum(1)), "sum_all": (lambda t: t.sum(), lambda x: x.sum()),
    "max": (lambda t: t.max(0), lambda x: x.max(0)), "min": (lambda t: t.min(1), lambda x: x.min(1)),
    "mean": (lambda t: t.mean((0, 1)), lambda x: x.mean((0, 1))), "prod": (lambda t: t.prod(1), lambda x: x.prod(1)),
    "var": (lambda t: t.var(1), lambda x: x.var(1, ddof=1)), "std": (lambda t: t.std(0), lambda x: x.std(0, ddof=1)),
    "cumsum": (lambda t: t.cumsum(1), lambda x: np.cumsum(x, 1)),
    "softmax": (lambda t: t.softmax(-1), lambda x: softmax_ref(x, -1)),
    "log_softmax": (lambda t: t.log_softmax(0), lambda x: np.log(softmax_ref(x, 0))),
    "layernorm": (lambda t: t.layernorm(), lambda x: (x - x.mean(-1, keepdims=True)) /
                  np.sqrt(x.var(-1, keepdims=True) + 1e-5)),
}


@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce_grad(backend, name):
    tfn, nfn = REDUCE[name]
    x = _r(3, 5, lo=0.5, hi=2) if name == "prod" else _r(3, 5)
    check_grad(tfn, nfn, [x], rtol=3e-3, atol=3e-4)


MOVEMENT = {
    "reshape": (lambda t: t.reshape(4, 6), lambda x: x.reshape(4, 6)),
    "permute": (lambda t: t.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1)),
    "expand": (lambda t: t[:, :1].expand(2, 5, 4), lambda x: np.broadcast_to(x[:, :1], (2, 5, 4))),
    "pad": (lambda t: t.pad(((1, 0), (0, 2), (1, 1))), lambda x: np.pad(x, ((1, 0), (0, 2), (1, 1)))),
    "shrink": (lambda t: t.shrink(((0, 1), (1, 3), None)), lambda x: x[0:1, 1:3]),
    "flip": (lambda t: t.flip(2), lambda x: np.flip(x, 2)),
    "slice_step": (lambda t: t[:, ::-2, 1::2], lambda x: x[:, ::-2, 1::2]),
    "gather": (lambda t: t[:, Tensor([2, 0, 2])], lambda x: x[:, [2, 0, 2]]),
    "cat": (lambda t: t.cat(t * 3, dim=2), lambda x: np.concatenate([x, x * 3], 2)),
    "stack": (lambda t: Tensor.stack([t, t.exp()], 1), lambda x: np.stack([x, np.exp(x)], 1)),
    "repeat": (lambda t: t.repeat(1, 2, 1), lambda x: np.tile(x, (1, 2, 1))),
    "transpose_flatten": (lambda t: t.transpose(0, 2).flatten(), lambda x: x.swapaxes(0, 2).flatten()),
}


@pytest.mark.parametrize("name", sorted(MOVEMENT))
def test_movement_grad(backend, name):
    tfn, nfn = MOVEMENT[name]
    check_grad(tfn, nfn, [_r(2, 3, 4)])


COMPOSITE = {
    "matmul": (lambda a, b: a @ b, lambda a, b: a @ b, [(3, 4), (4, 5)]),
    "matmul_batched": (lambda a, b: a @ b, lambda a, b: a @ b, [(2, 3, 4), (4, 2)]),
    "linear": (lambda x, w: x.linear(w), lambda x, w: x @ w, [(3, 4), (4, 5)]),
    "conv2d": (lambda x, w: x.conv2d(w, padding=1, stride=(1, 2)),
               lambda x, w: conv2d_ref(x, w, padding=1, stride=(1, 2)), [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "conv2d_groups": (lambda x, w: x.conv2d(w, groups=2, dilation=2),
                      lambda x, w: conv2d_ref(x, w, groups=2, dilation=2), [(1, 4, 6, 6), (2, 2, 2, 2)]),
    "max_pool2d": (lambda x: x.max_pool2d(2), lambda x: pool_ref(x, 2, 2, 0, np.max, -np.inf), [(1, 2, 4, 4)]),
    "avg_pool2d": (lambda x: x.avg_pool2d(3, 1, padding=1), lambda x: pool_ref(x, 3, 1, 1, np.mean, 0.0),
                   [(1, 1, 4, 5)]),
    "attention": (lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
                  lambda q, k, v: sdpa_ref(q, k, v, causal=True), [(4, 3), (4, 3), (4, 3)]),
}


@pytest.mark.parametrize("name", sorted(COMPOSITE))
def test_composite_grad(backend, name):
    tfn, nfn, shapes = COMPOSITE[name]
    check_grad(tfn, nfn, [_r(*s) for s in shapes], rtol=3e-3, atol=3e-4)


def test_grad_accumulates_and_no_grad(backend):
    x = Tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    from compiler import no_grad
    with no_grad():
        y = x * 2
    assert not y.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()
    with pytest.raises(ValueError, match="one-element"):
        (x * 2).backward()
