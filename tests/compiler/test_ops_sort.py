"""Ops suite, sorting and running reductions: sort argsort topk, cumsum cumprod cummax cummin logcumsumexp, any all,
logsumexp var_mean std_mean normalize, and their gradients: each case against tinygrad 0.14's CPU device (one
subprocess for the module, tests/support/tinygrad_cases.py) and, where NumPy has the operation, NumPy. NaN cases
follow NumPy/PyTorch where tinygrad loses the NaNs (docs/compiler.md, "Names shared with tinygrad")."""


import numpy as np
import pytest

from compiler import Tensor
from compiler import backend as backends
from tests.support.tinygrad_cases import assert_matches, environment, ours, run_tinygrad

SETUP = """
rng = np.random.default_rng(0)
A = rng.standard_normal((3, 37)).astype(np.float32)
B = rng.standard_normal((2, 3, 4)).astype(np.float32)
TIES = rng.integers(0, 4, (5, 9)).astype(np.int32)
I = rng.integers(-5, 5, (4, 6)).astype(np.int32)
POS = (rng.random((3, 5)) + 0.5).astype(np.float32)
E = np.zeros((2, 0), np.float32)
BOOLS = np.array([[True, False], [False, False], [True, True]])
NAN = np.array([3.0, np.nan, 1.0, 2.0, np.nan, 1.0], np.float32)
W = (np.arange(3 * 37, dtype=np.float32).reshape(3, 37) % 5) - 2
"""

CASES = {
    "sort_rows": "T(A).sort(1)",
    "sort_desc_dim0": "T(B).sort(0, descending=True)",
    "sort_neg_dim": "T(B).sort(-2)",
    "sort_ties": "T(TIES).sort(1)",
    "sort_ties_desc": "T(TIES).sort(0, descending=True)",
    "sort_len1": "T(A[:, :1]).sort()",
    "sort_bool": "T(BOOLS.reshape(-1)).sort()",
    "argsort_ties": "T(TIES).argsort(1)",
    "argsort_desc": "T(A).argsort(0, descending=True)",
    "topk": "T(A).topk(3)",
    "topk_smallest": "T(TIES).topk(4, dim=0, largest=False)",
    "topk_ties": "T(TIES).topk(5, 1)",
    "topk_all": "T(B).topk(4)",
    "cumsum_inf": "T(np.array([1.0, np.inf, 2.0, -1.0], np.float32)).cumsum(0)",
    "cumsum_long": "T(np.arange(1200, dtype=np.float32) % 7).cumsum(0)",
    "cumprod": "T(POS).cumprod(1)",
    "cumprod_dim0": "T(POS).cumprod(0)",
    "cumprod_long": "T(1 + (np.arange(600, dtype=np.float32) % 3) / 1000).cumprod(0)",
    "cumprod_int": "T(I).cumprod(0)",
    "cummax": "T(B).cummax(2)",
    "cummax_ties": "T(TIES).cummax(1)",
    "cummax_long": "T(np.sin(np.arange(700, dtype=np.float32))).cummax(0)",
    "cummin": "T(B).cummin(-1)",
    "cummin_ties": "T(TIES).cummin(0)",
    "logcumsumexp": "T(B).logcumsumexp(1)",
    "logcumsumexp_default": "T(A).logcumsumexp()",
    "logsumexp": "T(B).logsumexp()",
    "logsumexp_keepdim": "T(B).logsumexp(axis=1, keepdim=True)",
    "logsumexp_axes": "T(B).logsumexp(0).logsumexp(1)",
    "any_rows": "T(BOOLS).any(1)",
    "all_keepdim": "T(BOOLS).all(0, keepdim=True)",
    "any_ints": "T(I).any()",
    "all_floats": "T(B).all()",
    "any_empty": "T(E).any(1)",
    "all_empty": "T(E).all(1)",
    "any_nan": "T(NAN).any()",
    "all_nan": "T(np.array([np.nan, 1.0], np.float32)).all()",
    "var_mean": "T(B).var_mean(1)",
    "std_mean": "T(B).std_mean((0, 2), keepdim=True, correction=0)",
    "normalize": "T(B).normalize()",
    "normalize_p1": "T(B).normalize(p=1, dim=0)",
    "grad_sort": "grad_of(lambda t: t.sort(1)[0] * T(W[:2, :4]), A[:2, :4])",
    "grad_sort_desc": "grad_of(lambda t: t.sort(0, descending=True)[0] * T(W[:3, :4]), A[:, :4])",
    "grad_topk": "grad_of(lambda t: t.topk(2)[0] * T(W[:2, :2]), A[:2, :4])",
    "grad_cumsum": "grad_of(lambda t: t.cumsum(1) * T(W), A)",
    "grad_cumprod": "grad_of(lambda t: t.cumprod(1), POS)",
    "grad_cummax": "grad_of(lambda t: t.cummax(1)[0] * T(W), A)",
    "grad_logcumsumexp": "grad_of(lambda t: t.logcumsumexp(1), A)",
    "grad_logsumexp": "grad_of(lambda t: t.logsumexp(1), A)",
}

# ours accumulate integer products as int64, as NumPy's cumprod (and our prod/cumsum); tinygrad keeps int32
OUR_DTYPE = {"cumprod_int"}
# run on the CPU device too (cheap ones)
ON_CPU = ["sort_ties", "topk", "cummax_ties", "cumprod", "any_rows", "logsumexp_keepdim"]


@pytest.fixture(scope="module")
def tinygrad_results():
    return run_tinygrad(SETUP, CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tinygrad(tinygrad_results, name):
    got = ours(SETUP, CASES[name])
    assert_matches(got, tinygrad_results[name], name, rtol=2e-5, atol=1e-5, check_dtype=name not in OUR_DTYPE)


def test_sort_gradient_on_the_native_backend(tinygrad_results):
    """Its flips made indices `c - k*i`: the native backend once folded c into the offset field and left a negative
    VGPR offset, read as unsigned (a page fault); it folds only offsets whose rest cannot go below 0 now."""
    with backends.using("native"):
        got = ours(SETUP, CASES["grad_sort_desc"])
    assert_matches(got, tinygrad_results["grad_sort_desc"], "grad_sort_desc")


@pytest.mark.parametrize("name", ON_CPU)
def test_matches_tinygrad_on_cpu(tinygrad_results, name):
    assert_matches(ours(SETUP, CASES[name], device="CPU"), tinygrad_results[name], name, rtol=2e-5, atol=1e-5)


# ---- NumPy ----------------------------------------------------------------------------------------------------
def _env():
    return environment(SETUP)


def test_sort_matches_numpy_stable_sort():
    env = _env()
    for a, axis in ((env["A"], 1), (env["TIES"], 0), (env["TIES"], -1), (env["B"], 1)):
        v, i = Tensor(a).sort(axis)
        np.testing.assert_array_equal(v.numpy(), np.sort(a, axis))
        np.testing.assert_array_equal(i.numpy(), np.argsort(a, axis, kind="stable"))
        assert i.dtype.name == "int32"


def test_sort_descending_keeps_ties_in_index_order():
    t = _env()["TIES"]
    v, i = Tensor(t).sort(1, descending=True)
    ref = np.stack([np.lexsort((np.arange(t.shape[1]), -row)) for row in t])   # by -value, then index
    np.testing.assert_array_equal(i.numpy(), ref)
    np.testing.assert_array_equal(v.numpy(), np.take_along_axis(t, ref, 1))


def test_sort_nan_orders_above_every_number():
    """NumPy's sort puts NaN last; descending puts it first (PyTorch). tinygrad 0.14 loses NaNs (pads with inf)."""
    x = _env()["NAN"]
    v, i = Tensor(x).sort()
    np.testing.assert_array_equal(v.numpy(), np.sort(x))
    np.testing.assert_array_equal(i.numpy(), np.argsort(x, kind="stable"))
    v, i = Tensor(x).sort(descending=True)
    ref = np.lexsort((np.arange(x.size), -np.nan_to_num(x), ~np.isnan(x)))
    np.testing.assert_array_equal(i.numpy(), ref)
    np.testing.assert_array_equal(v.numpy(), x[ref])


def test_sort_power_of_two_and_odd_lengths():
    rng = np.random.default_rng(3)
    for n in (2, 3, 8, 17):
        a = rng.integers(-3, 3, (2, n)).astype(np.float32)
        v, i = Tensor(a).sort()
        np.testing.assert_array_equal(v.numpy(), np.sort(a, 1))
        np.testing.assert_array_equal(i.numpy(), np.argsort(a, 1, kind="stable"))


def test_sort_edge_shapes():
    assert Tensor(np.zeros((3, 0), np.float32)).sort(1)[0].shape == (3, 0)
    v, i = Tensor(np.float32(2.5)).sort()
    assert v.item() == 2.5 and i.item() == 0
    np.testing.assert_array_equal(Tensor(np.zeros((0, 4), np.float32)).sort(1)[1].numpy(), np.zeros((0, 4)))


def test_cumulative_nan_propagates_as_numpy():
    """np.maximum.accumulate: a NaN stays; cummax's index is the first NaN's (tinygrad 0.14 skips the NaN)."""
    x = np.array([1.0, 3.0, np.nan, 2.0, 5.0], np.float32)
    v, i = Tensor(x).cummax(0)
    np.testing.assert_array_equal(v.numpy(), np.maximum.accumulate(x))
    np.testing.assert_array_equal(i.numpy(), [0, 1, 2, 2, 2])
    v, _ = Tensor(x).cummin(0)
    np.testing.assert_array_equal(v.numpy(), np.minimum.accumulate(x))
    np.testing.assert_array_equal(Tensor(x).cumsum().numpy(), np.cumsum(x))
    np.testing.assert_array_equal(Tensor(x).cumprod(0).numpy(), np.cumprod(x))


def test_cumulative_matches_numpy():
    env = _env()
    a, ints = env["POS"], env["I"]
    np.testing.assert_allclose(Tensor(a).cumprod(1).numpy(), np.cumprod(a, 1), rtol=1e-6)
    np.testing.assert_array_equal(Tensor(ints).cumprod(1).numpy(), np.cumprod(ints.astype(np.int64), 1))
    np.testing.assert_array_equal(Tensor(ints).cummax(0)[0].numpy(), np.maximum.accumulate(ints, 0))
    np.testing.assert_array_equal(Tensor(ints).cummin(1)[0].numpy(), np.minimum.accumulate(ints, 1))
    long = np.random.default_rng(5).standard_normal(1500).astype(np.float32)
    np.testing.assert_array_equal(Tensor(long).cummax(0)[0].numpy(), np.maximum.accumulate(long))
    np.testing.assert_allclose(Tensor(long).cumsum().numpy(), np.cumsum(long.astype(np.float64)), atol=1e-3)
    b = env["B"]
    np.testing.assert_allclose(Tensor(b).logcumsumexp(2).numpy(), np.logaddexp.accumulate(b, 2), rtol=1e-5)


def test_logsumexp_infinite_maximum():
    """All -inf gives -inf and an inf gives inf (NumPy's logaddexp.reduce; tinygrad 0.14 gives NaN for both)."""
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, 1.0]], np.float32)
    np.testing.assert_allclose(Tensor(x).logsumexp(1).numpy(), np.logaddexp.reduce(x, 1), rtol=1e-6)


def test_any_all_match_numpy():
    env = _env()
    for a in (env["BOOLS"], env["I"], env["B"], env["E"], env["NAN"]):
        for axis in (None, 0, -1) if a.ndim > 1 else (None, 0):
            np.testing.assert_array_equal(Tensor(a).any(axis).numpy(), np.any(a, axis))
            np.testing.assert_array_equal(Tensor(a).all(axis).numpy(), np.all(a, axis))


def test_errors_name_the_argument():
    t = Tensor(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="k=4"):
        t.topk(4)
    with pytest.raises(IndexError, match="dim 2"):
        t.sort(2)
    with pytest.raises(NotImplementedError, match="sorted_"):
        t.topk(1, sorted_=False)
