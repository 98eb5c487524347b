"""Ops suite, reductions: sum max min mean prod argmax argmin var std cumsum over axes, with keepdim, per dtype;
long reductions (the workgroup/LDS strategy) and hypothesis-drawn shapes and axes."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler import Tensor
from compiler.schedule import schedule
from tests.support.ops import assert_close, rand, tensor

pytestmark = pytest.mark.usefixtures("gpu_arch")  # (also on gfx1201: conftest.py)

SHAPE = (3, 4, 5)
AXES = [None, 0, 1, -1, (0, 2), (1, 2)]


def _ref(name, a, axis, keepdim):
    if name == "var":
        return np.var(a, axis=axis, keepdims=keepdim, ddof=1)
    if name == "std":
        return np.std(a, axis=axis, keepdims=keepdim, ddof=1)
    return getattr(np, name)(a, axis=axis, keepdims=keepdim)


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "prod", "var", "std"])
def test_reduce_float32(backend, name, axis):
    a = rand(SHAPE, "float32", np.random.default_rng(20), 0.5, 1.5 if name == "prod" else 3)
    ours = getattr(tensor(a, "float32"), name)(axis=axis)
    assert_close(ours.numpy(), _ref(name, a, axis, False).astype(np.float32), "float32", rtol=1e-5)


@pytest.mark.parametrize("name", ["sum", "max", "min", "mean"])
def test_reduce_keepdim(backend, name):
    a = rand(SHAPE, "float32", np.random.default_rng(21))
    ours = getattr(Tensor(a), name)(axis=(0, 2), keepdim=True)
    assert ours.shape == (1, 4, 1)
    assert_close(ours.numpy(), _ref(name, a, (0, 2), True), "float32", rtol=1e-5)


@pytest.mark.parametrize("dt", ["int8", "uint8", "int32", "uint32", "int64", "bool"])
@pytest.mark.parametrize("name", ["sum", "max", "min", "prod"])
def test_reduce_int(backend, name, dt):
    a = rand(SHAPE, dt, np.random.default_rng(22), -4, 4)
    for axis in (None, 1):
        ours = getattr(tensor(a, dt), name)(axis=axis).numpy()
        ref = _ref(name, a, axis, False)
        assert ours.dtype == ref.dtype, (ours.dtype, ref.dtype)
        assert_close(ours, ref, dt)


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name", ["sum", "max", "mean"])
def test_reduce_other_floats(backend, name, dt):
    a = rand(SHAPE, dt, np.random.default_rng(23))
    ours = getattr(tensor(a, dt), name)(axis=-1).numpy()
    ref = _ref(name, a.astype(np.float64), -1, False)
    assert_close(ours, ref, dt, rtol=2e-3 if dt == "float16" else None)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 2])
def test_argmax_argmin(backend, name, axis):
    a = rand(SHAPE, "float32", np.random.default_rng(24))
    a[1, 2, :] = a[1, 2, 0]  # ties: the first index wins
    ours = getattr(Tensor(a), name)(axis=axis).numpy()
    ref = getattr(np, name)(a, axis=axis)
    assert ours.dtype == np.int64
    assert_close(ours, np.asarray(ref), "int64")


@pytest.mark.parametrize("dt,axis", [("float32", 0), ("float32", -1), ("int32", 1), ("float64", 2)])
def test_cumsum(backend, dt, axis):
    a = rand(SHAPE, dt, np.random.default_rng(25), -5, 5)
    assert_close(tensor(a, dt).cumsum(axis).numpy(), np.cumsum(a, axis=axis), dt)


@pytest.mark.parametrize("n,name", [(4096, "sum"), (4096, "max"), (3000, "sum"), (1000, "min"), (2048 * 3, "mean")])
def test_long_reduction(backend, n, name):
    """One output over thousands of elements: the workgroup reduction through LDS (a remainder included)."""
    a = np.random.default_rng(26).standard_normal(n).astype(np.float32)
    ours = getattr(Tensor(a), name)().numpy()
    assert_close(ours, _ref(name, a.astype(np.float64), None, False).astype(np.float32), "float32", rtol=1e-4,
                 atol=1e-4)


def test_long_reductions_per_row(backend):
    a = np.random.default_rng(27).standard_normal((4, 1024)).astype(np.float32)
    assert_close(Tensor(a).sum(1).numpy(), a.astype(np.float64).sum(1), "float32", rtol=1e-4, atol=1e-4)
    assert_close(Tensor(a).max(1).numpy(), a.max(1), "float32")


def test_reduce_fuses_elementwise_before_and_after(backend):
    a = np.random.default_rng(28).standard_normal((6, 7)).astype(np.float32)
    out = ((Tensor(a) * 2).exp().sum(1) + 1).sqrt()
    assert_close(out.numpy(), np.sqrt(np.exp(a * 2).sum(1) + 1), "float32", rtol=1e-5)


def test_reduce_of_reduce_and_expand(backend):
    a = np.random.default_rng(29).standard_normal((5, 6)).astype(np.float32)
    x = Tensor(a)
    out = (x - x.mean(1, keepdim=True)).sum(0).max()
    assert_close(out.numpy(), (a - a.mean(1, keepdims=True)).sum(0).max(), "float32", rtol=1e-4, atol=1e-5)


def test_reductions_of_empty_and_scalar(backend):
    assert Tensor.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]
    assert Tensor(3.5).sum().item() == 3.5
    assert Tensor(2.0).max().item() == 2.0
    with pytest.raises(ValueError, match="empty axis"):
        Tensor.zeros(0, 3).max(0)


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.data())
def test_reduce_property(backend, shape, data):
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    keep = data.draw(st.booleans())
    name = data.draw(st.sampled_from(["sum", "max", "min"]))
    a = np.random.default_rng(30).standard_normal(shape).astype(np.float32)
    axis = tuple(axes) if axes else None
    ours = getattr(Tensor(a), name)(axis=axis, keepdim=keep)
    assert_close(ours.numpy(), getattr(np, name)(a, axis=axis, keepdims=keep), "float32", rtol=1e-5)


@pytest.mark.parametrize("n", [3, 40, 3000], ids=["serial", "group", "long"])
def test_reductions_with_nan_follow_numpy(backend, n):
    """Issue 28.3: max/min/sum propagate NaN and argmax/argmin give the first NaN's index (numpy), in the serial
    loop, the workgroup's LDS tree and a long reduction; per row too, with a row without NaN."""
    a = np.arange(n, dtype=np.float32) - n / 2
    a[n // 3] = a[-1] = np.nan
    rows = np.stack([a, np.roll(a, 1), np.arange(n, dtype=np.float32)])
    for x in (a, rows):
        axis = None if x.ndim == 1 else 1
        for name in ("argmax", "argmin", "max", "min", "sum"):
            ours = getattr(Tensor(x), name)(axis=axis).numpy()
            ref = getattr(np, name)(x, axis=axis)
            if name.startswith("arg"):
                np.testing.assert_array_equal(ours, ref, err_msg=f"{name} {x.shape}")
            else:
                np.testing.assert_allclose(ours, ref, rtol=1e-5, err_msg=f"{name} {x.shape}")
    assert Tensor([1.0, np.nan, 3.0]).argmax().item() == 1


def test_a_large_sum_runs_in_parallel_stages():
    """Issue 28.4: a 2^22-element sum() was one loop in one workgroup, past the watchdog. It runs in two stages:
    256 partial sums of 2^14 elements (256 workgroups), then their sum."""
    a = np.random.default_rng(31).standard_normal(1 << 22).astype(np.float32)
    t = Tensor(a).realize()
    items = [i for i in schedule([t.sum().lazydata.base]) if i.kind == "kernel"]
    assert [i.out.st.size() for i in items] == [256, 1], [i.ast.arg for i in items]
    np.testing.assert_allclose(t.sum().numpy(), a.astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize("name", ["sum", "max", "min", "argmax"])
def test_large_reductions_per_row_and_across_rows(backend, name):
    """Splits of a reduced axis with outputs beside it: per row (the last axis) and down the columns (axis 0)."""
    a = np.random.default_rng(32).standard_normal((3, 1 << 15)).astype(np.float32)
    for x, axis in ((a, 1), (np.ascontiguousarray(a.T), 0)):
        ours = getattr(Tensor(x), name)(axis=axis).numpy()
        ref = getattr(np, name)(x.astype(np.float64), axis=axis)
        np.testing.assert_allclose(ours, ref, rtol=1e-5, err_msg=f"{name} axis {axis}")
