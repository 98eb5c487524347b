"""Ops suite, composite operations: matmul/dot/linear (NumPy's shape rules), softmax, log_softmax, layernorm,
conv2d (stride, padding, dilation, groups), max/avg pooling, one_hot and scaled dot-product attention."""


import numpy as np
import pytest

from compiler import Tensor, dtypes
from tests.support.ops import assert_close, rand, tensor
from tests.support.refs import conv2d_ref, pool_ref, sdpa_ref, softmax_ref

RNG = np.random.default_rng(40)


def _r(*shape, dt=np.float32):
    return RNG.standard_normal(shape).astype(dt)


MATMUL = [((3, 4), (4, 5)), ((4,), (4, 3)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 2)),
          ((2, 1, 3, 4), (3, 4, 5)), ((1, 8), (8, 1)), ((32, 16), (16, 32)), ((48, 32), (32, 64)),
          ((17, 33), (33, 9))]


@pytest.mark.parametrize("sa,sb", MATMUL, ids=str)
def test_matmul(backend, sa, sb):
    a, b = _r(*sa), _r(*sb)
    assert_close((Tensor(a) @ Tensor(b)).numpy(), a @ b, "float32", rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dt", ["float16", "float64", "int32", "bfloat16"])
def test_matmul_dtypes(backend, dt):
    rng = np.random.default_rng(41)
    a, b = rand((16, 32), dt, rng, -3, 3), rand((32, 16), dt, rng, -3, 3)
    out = tensor(a, dt) @ tensor(b, dt)
    assert out.dtype == getattr(dtypes, dt)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert_close(out.numpy(), ref.astype(a.dtype) if dt == "int32" else ref, dt,
                 rtol={"float16": 5e-3, "bfloat16": 2e-2}.get(dt), atol={"float16": 5e-2, "bfloat16": 0.3}.get(dt))


def test_matmul_errors():
    with pytest.raises(ValueError, match="do not align"):
        Tensor.ones(3, 4) @ Tensor.ones(5, 2)
    with pytest.raises(ValueError, match="at least one dimension"):
        Tensor(1.0) @ Tensor.ones(2)


def test_dot_and_linear(backend):
    x, w, b = _r(5, 4), _r(3, 4), _r(3)
    assert_close(Tensor(x).dot(Tensor(w.T)).numpy(), x @ w.T, "float32", rtol=1e-5)
    assert_close(Tensor(x).linear(Tensor(w.T), Tensor(b)).numpy(), x @ w.T + b, "float32", rtol=1e-5)
    assert_close(Tensor(x).linear(Tensor(w.T)).numpy(), x @ w.T, "float32", rtol=1e-5)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def testsoftmax_ref(backend, axis):
    x = _r(3, 4, 5) * 3
    assert_close(Tensor(x).softmax(axis).numpy(), softmax_ref(x, axis), "float32", rtol=1e-5)


@pytest.mark.parametrize("axis", [-1, 0])
def test_log_softmax(backend, axis):
    x = _r(4, 6) * 3
    assert_close(Tensor(x).log_softmax(axis).numpy(), np.log(softmax_ref(x.astype(np.float64), axis)), "float32",
                 rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("affine", [False, True])
def test_layernorm(backend, affine):
    x = _r(4, 8) * 2 + 1
    w, b = _r(8), _r(8)
    m, v = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    ref = (x - m) / np.sqrt(v + 1e-5)
    ours = Tensor(x).layernorm(-1, weight=Tensor(w), bias=Tensor(b)) if affine else Tensor(x).layernorm()
    assert_close(ours.numpy(), ref * w + b if affine else ref, "float32", rtol=1e-4, atol=1e-5)


CONV = {"plain": {}, "stride": {"stride": 2}, "padding": {"padding": 1}, "dilation": {"dilation": 2},
        "groups": {"groups": 2}, "all": {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2},
        "bias": {"bias": True}, "depthwise": {"groups": 4}}


@pytest.mark.parametrize("name", sorted(CONV))
def test_conv2d(backend, name):
    kw = dict(CONV[name])
    groups = kw.get("groups", 1)
    x = _r(2, 4, 7, 6)
    w = _r(4, 4 // groups, 3, 3)
    b = _r(4) if kw.pop("bias", False) else None
    ours = Tensor(x).conv2d(Tensor(w), None if b is None else Tensor(b), **kw).numpy()
    assert_close(ours, conv2d_ref(x, w, b, **kw), "float32", rtol=1e-4, atol=1e-5)


def test_conv2d_errors():
    with pytest.raises(ValueError, match="groups"):
        Tensor.ones(1, 3, 5, 5).conv2d(Tensor.ones(2, 3, 3, 3), groups=2)
    with pytest.raises(ValueError, match="does not fit"):
        Tensor.ones(1, 1, 2, 2).conv2d(Tensor.ones(1, 1, 3, 3))


@pytest.mark.parametrize("k,s,p", [(2, None, 0), (3, 1, 1), (3, 2, 0), (2, 1, 0)])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool2d(backend, kind, k, s, p):
    x = _r(2, 3, 6, 7)
    if kind == "max":
        ours = Tensor(x).max_pool2d(k, s, padding=p).numpy()
        ref = pool_ref(x, k, s or k, p, np.max, -np.inf)
    else:
        ours = Tensor(x).avg_pool2d(k, s, padding=p).numpy()
        ref = pool_ref(x, k, s or k, p, np.mean, 0.0)
    assert_close(ours, ref, "float32", rtol=1e-5)


def test_one_hot(backend):
    idx = np.array([[0, 3], [2, 1]], np.int32)
    out = Tensor(idx).one_hot(4)
    assert out.dtype == dtypes.int32
    assert_close(out.numpy(), np.eye(4, dtype=np.int32)[idx], "int32")


@pytest.mark.parametrize("variant", ["plain", "causal", "mask", "batched"])
def test_scaled_dot_product_attention(backend, variant):
    shape = (2, 3, 5, 4) if variant == "batched" else (5, 4)
    q, k, v = _r(*shape), _r(*shape), _r(*shape)
    mask = RNG.random((5, 5)) < 0.7
    mask[:, 0] = True
    kw = {"is_causal": variant == "causal"}
    if variant == "mask":
        kw["attn_mask"] = Tensor(mask)
    ours = Tensor(q).scaled_dot_product_attention(Tensor(k), Tensor(v), **kw).numpy()
    ref = sdpa_ref(q, k, v, variant == "causal", mask if variant == "mask" else None)
    assert_close(ours, ref, "float32", rtol=1e-4, atol=1e-5)


# tinygrad's pooling arguments (kernel_size, stride, dilation, padding, ceil_mode, count_include_pad /
# return_indices): compared with tinygrad's CPU device by tests/compiler/test_ops_vs_tinygrad.py, and here with
# the NumPy reference where it has the same form
POOLS = {
    "max_ceil": lambda x: x.max_pool2d(3, 2, ceil_mode=True),
    "max_dilation_padding": lambda x: x.max_pool2d((2, 3), 1, 2, (1, 0)),
    "max_indices": lambda x: x.max_pool2d(2, return_indices=True)[1],
    "max_indices_ceil_padding": lambda x: x.max_pool2d(3, 2, 1, 1, ceil_mode=True, return_indices=True)[1],
    "max_3d": lambda x: x.reshape(1, 2, 3, 6, 7).max_pool2d((2, 2, 3)),
    "avg_ceil": lambda x: x.avg_pool2d(3, 2, ceil_mode=True),
    "avg_ceil_padding": lambda x: x.avg_pool2d(3, 2, 1, 1, ceil_mode=True),
    "avg_exclude_pad": lambda x: x.avg_pool2d(3, 1, padding=1, count_include_pad=False),
    "avg_exclude_pad_ceil": lambda x: x.avg_pool2d(2, 2, 1, 1, ceil_mode=True, count_include_pad=False),
    "avg_flat_padding": lambda x: x.avg_pool2d(2, 1, padding=(1, 0, 0, 1)),
}


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool_dilation_and_padding_against_numpy(backend, kind):
    """tinygrad's positional order: kernel_size, stride, dilation, padding."""
    x = _r(2, 3, 6, 7)
    if kind == "max":
        ours = Tensor(x).max_pool2d(3, 1, 2, 1).numpy()
        ref = pool_ref(x, 3, 1, 1, np.max, -np.inf, dilation=2)
    else:
        ours = Tensor(x).avg_pool2d(3, 1, 2, 1).numpy()
        ref = pool_ref(x, 3, 1, 1, np.mean, 0.0, dilation=2)
    assert_close(ours, ref, "float32", rtol=1e-5)


def test_max_pool_indices_point_at_the_maxima(backend):
    x = _r(2, 3, 6, 7)
    values, idx = Tensor(x).max_pool2d(2, return_indices=True)
    flat = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), -1).reshape(values.shape),
                                  values.numpy())
    assert idx.dtype == dtypes.int32


# tinygrad's positional arguments of the products and attention, compared with tinygrad's CPU device by
# tests/compiler/test_ops_vs_tinygrad.py (inputs: the shapes listed in tests/support/ops_cases.py)
SIGNATURES = {
    "matmul_reverse": lambda a, b: a.matmul(b, True),
    "sdpa_positional": lambda q, k, v: q.scaled_dot_product_attention(k, v, None, 0.0, True),
    "sdpa_gqa": lambda q, k, v: q.scaled_dot_product_attention(k, v, enable_gqa=True),
}
SIGNATURE_SHAPES = {"matmul_reverse": ((4, 3), (5, 4)), "sdpa_positional": ((2, 5, 4),) * 3,
                    "sdpa_gqa": ((1, 4, 3, 2), (1, 2, 3, 2), (1, 2, 3, 2))}


def test_dtype_arguments(backend):
    """matmul/dot/softmax/log_softmax/prod(dtype=...): computed and returned in that dtype."""
    a, b = _r(3, 4).astype(np.float16), _r(4, 5).astype(np.float16)
    out = Tensor(a).matmul(Tensor(b), dtype=dtypes.float32)
    assert out.dtype == dtypes.float32
    assert_close(out.numpy(), a.astype(np.float32) @ b.astype(np.float32), "float32", rtol=1e-5)
    assert Tensor(a).dot(Tensor(b), dtype=dtypes.float32).dtype == dtypes.float32
    sm = Tensor(a).softmax(dtype=dtypes.float32)
    assert sm.dtype == dtypes.float32
    assert_close(sm.numpy(), softmax_ref(a.astype(np.float32), -1), "float32", rtol=1e-5)
    assert Tensor(a).log_softmax(0, dtypes.float32).dtype == dtypes.float32
    p = Tensor(np.array([[2, 3], [4, 5]], np.int8)).prod(1, dtype=dtypes.int16)
    assert p.dtype == dtypes.int16 and p.tolist() == [6, 20]
