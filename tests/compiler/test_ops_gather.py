"""Ops suite, index-driven reads and writes: gather scatter scatter_reduce masked_fill masked_select nonzero
interpolate max_unpool2d einsum, and gradients through gather and scatter: each case against tinygrad 0.14's CPU
device (one subprocess for the module, tests/support/tinygrad_cases.py) and, where it has the operation, NumPy."""

import numpy as np
import pytest

from compiler import Tensor
from tests.support.tinygrad_cases import assert_matches, environment, ours, run_tinygrad

SETUP = """
rng = np.random.default_rng(1)
X = rng.standard_normal((3, 4)).astype(np.float32)
Y = rng.standard_normal((2, 3, 4)).astype(np.float32)
IX = np.array([[0, 3, 3], [1, 0, 2], [2, 2, 0]], np.int32)
IY = rng.integers(0, 3, (2, 3, 2)).astype(np.int32)
SRC = np.arange(1, 11, dtype=np.float32).reshape(2, 5)
REP = np.zeros((2, 5), np.int32)
SCI = np.array([[0, 1, 2, 0]], np.int32)
MASK = np.array([[True, False, True, False], [False, False, False, False], [True, True, False, True]])
IMG = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
P = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
PI = np.array([[[[5, 7], [13, 15]]]], np.int32)
"""

CASES = {
    "gather_dim1": "T(X).gather(1, T(IX))",
    "gather_dim0": "T(X).gather(0, T(IX))",
    "gather_neg_dim": "T(Y).gather(-2, T(IY))",
    "gather_out_of_range": "T(X).gather(1, T(np.array([[0, 5], [-1, 1]], np.int32)))",
    "scatter_dim0": "T.zeros(3, 5).scatter(0, T(SCI), T(SRC))",
    "scatter_dim1": "T.zeros(3, 5).scatter(1, T(np.array([[0, 1, 2], [0, 1, 4]], np.int32)), T(SRC))",
    "scatter_repeat_last_wins": "T.zeros(1, 5).scatter(1, T(np.array([[1, 1, 3, 1]], np.int32)), T(SRC[:1]))",
    "scatter_scalar": "T.ones(3, 4).scatter(1, T(IX), 7.0)",
    "scatter_add": "T.full((2, 4), 2.0).scatter(1, T(np.array([[2], [3]], np.int32)), 1.5, reduce='add')",
    "scatter_multiply": "T.full((2, 4), 2.0).scatter(1, T(np.array([[2], [2]], np.int32)), 1.5, reduce='multiply')",
    "scatter_reduce_sum": "T.ones(1, 5).scatter_reduce(0, T(REP), T(SRC), 'sum')",
    "scatter_reduce_prod": "T.ones(1, 5).scatter_reduce(0, T(REP), T(SRC), 'prod', include_self=False)",
    "scatter_reduce_mean": "T.ones(1, 5).scatter_reduce(0, T(REP), T(SRC), 'mean')",
    "scatter_reduce_mean_excl": "T.ones(1, 5).scatter_reduce(0, T(REP), T(SRC), 'mean', include_self=False)",
    "scatter_reduce_amax": "T(np.array([[-10, 20, 0, 5, 10]], np.float32)).scatter_reduce(0, T(REP), T(SRC), 'amax')",
    "scatter_reduce_amin": "T(np.array([[-10, 20, 0, 5, 10]], np.float32)).scatter_reduce(0, T(REP), T(SRC), 'amin')",
    "scatter_reduce_amax_excl":
        "T.zeros(3, 5).scatter_reduce(1, T(np.array([[0, 0], [4, 1]], np.int32)), T(SRC), 'amax', include_self=False)",
    "masked_fill": "T(X).masked_fill(T(MASK), -1.0)",
    "masked_fill_broadcast": "T(Y).masked_fill(T(MASK[0]), 0.5)",
    "masked_select": "T(X).masked_select(T(MASK))",
    "masked_select_size": "T(X).masked_select(T(MASK), size=7, fill_value=-2.0)",
    "masked_select_truncated": "T(X).masked_select(T(MASK), size=2)",
    "masked_select_none": "T(X).masked_select(T(np.zeros((3, 4), bool)))",
    "nonzero": "T(np.array([[1, 0, 3], [0, 0, 2]], np.int32)).nonzero()",
    "nonzero_3d": "T((Y > 0.5).astype(np.float32)).nonzero()",
    "nonzero_size": "T(np.array([1.0, 0.0, 2.0], np.float32)).nonzero(size=4, fill_value=-1)",
    "interpolate_linear": "T(IMG).interpolate((5, 7))",
    "interpolate_down": "T(IMG).interpolate((2, 3))",
    "interpolate_corners": "T(IMG).interpolate((5, 6), align_corners=True)",
    "interpolate_1d": "T(X).interpolate((9,))",
    "interpolate_nearest": "T(IMG).interpolate((6, 5), mode='nearest')",
    "interpolate_nearest_exact": "T(IMG).interpolate((2, 7), mode='nearest-exact')",
    "interpolate_int": "T(np.arange(12, dtype=np.int32).reshape(3, 4)).interpolate((5, 6))",
    "max_unpool2d": "T(np.array([[[[6.0, 8.0], [14.0, 16.0]]]], np.float32)).max_unpool2d(T(PI))",
    "max_unpool2d_size": "T(np.array([[[[6.0, 8.0], [14.0, 16.0]]]], np.float32)).max_unpool2d(T(PI), "
                         "output_size=(5, 4))",
    "einsum_matmul": "T.einsum('ij,jk->ik', T(X), T(Y[0].T))",
    "einsum_implicit": "T.einsum('ij,kj', T(X), T(Y[0]))",
    "einsum_trace": "T.einsum('ii', T(X[:, :3]))",
    "einsum_diag": "T.einsum('ii->i', T(X[:, :3]))",
    "einsum_batch": "T.einsum('bij,bkj->bik', T(Y), T(Y))",
    "einsum_ellipsis": "T.einsum('...j,jk->...k', T(Y), T(X.T))",
    "einsum_outer": "T.einsum('i,j->ij', T(X[0]), T(X[1]))",
    "einsum_sum": "T.einsum('ijk->', T(Y))",
    "einsum_list": "T.einsum('ij,jk->ki', [T(X), T(Y[1].T)])",
    "grad_gather": "grad_of(lambda t: t.gather(1, T(IX)) * T(np.arange(9, dtype=np.float32).reshape(3, 3)), X)",
    "grad_scatter_src": "grad_of(lambda t: T.zeros(3, 5).scatter(1, T(np.array([[0, 1, 2], [0, 1, 4]], np.int32)), t)"
                        " * T(np.arange(15, dtype=np.float32).reshape(3, 5)), SRC)",
    "grad_scatter_self": "grad_of(lambda t: t.scatter(1, T(IX), 7.0) * T(np.arange(12, dtype=np.float32)"
                         ".reshape(3, 4)), X)",
    "grad_interpolate": "grad_of(lambda t: t.interpolate((5, 7)) * T(np.arange(70, dtype=np.float32)"
                        ".reshape(1, 2, 5, 7)), IMG)",
}

ON_CPU = ["gather_dim1", "scatter_dim0", "scatter_reduce_mean", "masked_select", "nonzero", "interpolate_linear",
          "einsum_batch"]


@pytest.fixture(scope="module")
def tinygrad_results():
    return run_tinygrad(SETUP, CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tinygrad(tinygrad_results, name):
    assert_matches(ours(SETUP, CASES[name]), tinygrad_results[name], name, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ON_CPU)
def test_matches_tinygrad_on_cpu(tinygrad_results, name):
    assert_matches(ours(SETUP, CASES[name], device="CPU"), tinygrad_results[name], name, rtol=2e-5, atol=2e-5)


# ---- NumPy ----------------------------------------------------------------------------------------------------
def _env():
    return environment(SETUP)


def test_gather_is_take_along_axis():
    env = _env()
    x, ix, y, iy = env["X"], env["IX"], env["Y"], env["IY"]
    np.testing.assert_array_equal(Tensor(x).gather(1, Tensor(ix)).numpy(), np.take_along_axis(x, ix, 1))
    np.testing.assert_array_equal(Tensor(y).gather(1, Tensor(iy)).numpy(),
                                  np.take_along_axis(y[:, :, :2], iy, 1))
    np.testing.assert_array_equal(Tensor(x).gather(1, Tensor(np.zeros((3, 0), np.int32))).numpy(), np.zeros((3, 0)))


def test_scatter_is_put_along_axis():
    env = _env()
    x, ix = env["X"], env["IX"]
    src = np.arange(9, dtype=np.float32).reshape(3, 3)
    ix_unique = np.array([[0, 3, 1], [1, 0, 2], [2, 3, 0]], np.int32)
    ref = x.copy()
    np.put_along_axis(ref, ix_unique, src, 1)
    np.testing.assert_array_equal(Tensor(x).scatter(1, Tensor(ix_unique), Tensor(src)).numpy(), ref)
    added = x.copy()
    np.add.at(added, (np.arange(3)[:, None], ix), src)
    np.testing.assert_allclose(Tensor(x).scatter_reduce(1, Tensor(ix), Tensor(src), "sum").numpy(), added,
                               rtol=1e-6)


def test_masked_select_and_nonzero_match_numpy():
    env = _env()
    x, mask = env["X"], env["MASK"]
    np.testing.assert_array_equal(Tensor(x).masked_select(Tensor(mask)).numpy(), x[mask])
    np.testing.assert_array_equal(Tensor(x).masked_fill(Tensor(mask), 3.0).numpy(), np.where(mask, 3.0, x))
    y = (env["Y"] > 0).astype(np.float32)
    np.testing.assert_array_equal(Tensor(y).nonzero().numpy(), np.argwhere(y))
    assert Tensor(np.zeros(5, np.float32)).nonzero().shape == (0, 1)


def test_einsum_matches_numpy():
    env = _env()
    x, y = env["X"], env["Y"]
    for formula, ops in (("ij,jk->ik", (x, y[0].T)), ("bij,bkj->bik", (y, y)), ("ii", (x[:, :3],)),
                         ("ij->ji", (x,)), ("...j,jk->...k", (y, x.T)), ("i,i->", (x[0], x[1]))):
        got = Tensor.einsum(formula, *(Tensor(o) for o in ops)).numpy()
        np.testing.assert_allclose(got, np.einsum(formula, *ops), rtol=1e-5, atol=1e-6, err_msg=formula)


def test_errors_name_the_argument():
    x = Tensor(np.zeros((3, 4), np.float32))
    with pytest.raises(TypeError, match="index must hold integers"):
        x.gather(1, Tensor(np.zeros((3, 1), np.float32)))
    with pytest.raises(ValueError, match="index has 1 dimensions"):
        x.gather(0, Tensor(np.zeros(3, np.int32)))
    with pytest.raises(TypeError, match="mask must be a bool"):
        x.masked_select(Tensor(np.zeros((3, 4), np.int32)))
    with pytest.raises(ValueError, match="reduce must be"):
        x.scatter_reduce(0, Tensor(np.zeros((1, 4), np.int32)), x, "max")
    with pytest.raises(ValueError, match="letter 'j'"):
        Tensor.einsum("ij,jk", x, x)
    with pytest.raises(ValueError, match="align_corners"):
        x.interpolate((5,), mode="nearest", align_corners=True)
