"""Elementwise math and activations with tinygrad 0.14's names (issue 28): each against tinygrad's CPU device (one
subprocess for the module) on ordinary inputs, and against NumPy (long double) at the edges -- huge, tiny,
negative, infinite and NaN inputs -- where our formulas must keep their precision (the simulated GPU is
bit-exact to the ISA: an error here is the formula's)."""

import math

import numpy as np
import pytest

from compiler import Tensor, dtypes
from tests.support.tinygrad_cpu import run_tinygrad

X = [-3.0, -1.5, -0.7, -0.2, -1e-3, 0.0, 1e-3, 0.3, 0.9, 1.7, 2.5, 4.0]
UNIT = [-0.99, -0.7, -0.3, -1e-3, 0.0, 1e-4, 0.2, 0.5, 0.8, 0.999]
POS = [1.0, 1.001, 1.3, 2.0, 5.0, 40.0, 1e4]

# name -> (call on a tensor, input values); tinygrad's CPU device computes the same calls
CASES = {
    "asin": ("x.asin()", UNIT), "acos": ("x.acos()", UNIT), "atan": ("x.atan()", X + [30.0, -300.0]),
    "sinh": ("x.sinh()", X), "cosh": ("x.cosh()", X), "asinh": ("x.asinh()", X + [1e4]),
    "acosh": ("x.acosh()", POS), "atanh": ("x.atanh()", UNIT), "log10": ("x.log10()", POS + [0.01, 1e-20]),
    "tanh": ("x.tanh()", X), "leaky_relu": ("x.leaky_relu()", X), "leaky_relu_0.2": ("x.leaky_relu(0.2)", X),
    "elu": ("x.elu()", X), "elu_2": ("x.elu(2.0)", X), "celu": ("x.celu(0.5)", X), "selu": ("x.selu()", X),
    "softplus": ("x.softplus()", X + [30.0, -30.0]), "softplus_b": ("x.softplus(2.0)", X),
    "softsign": ("x.softsign()", X), "mish": ("x.mish()", X), "hardswish": ("x.hardswish()", X),
    "hardsigmoid": ("x.hardsigmoid()", X), "hardsigmoid_ab": ("x.hardsigmoid(0.3, 0.4)", X),
    "hardtanh": ("x.hardtanh()", X), "hardtanh_ab": ("x.hardtanh(-0.5, 2.0)", X), "relu6": ("x.relu6()", X + [7.0]),
    "swish": ("x.swish()", X), "silu": ("x.silu()", X), "quick_gelu": ("x.quick_gelu()", X),
    "logsigmoid": ("x.logsigmoid()", X + [30.0]), "gelu": ("x.gelu()", X), "gelu_none": ("x.gelu('none')", X),
    "softmin": ("x.reshape(3, 4).softmin()", X), "softmin0": ("x.reshape(3, 4).softmin(0)", X),
    "isnan": ("x.isnan()", [1.0, math.nan, -math.inf]), "isinf": ("x.isinf()", [1.0, math.nan, math.inf, -math.inf]),
    "isinf_pos": ("x.isinf(detect_negative=False)", [1.0, math.inf, -math.inf]),
    "isinf_neg": ("x.isinf(True, False)", [1.0, math.inf, -math.inf]),
    "isfinite": ("x.isfinite()", [1.0, math.nan, math.inf, -math.inf, 0.0]),
    "copysign": ("x.copysign(Tensor([-1.0, 2.0, -0.0, 0.0, 3.0, -5.0]))", [1.0, -2.0, 3.0, -4.0, -0.0, 0.0]),
    "copysign_s": ("x.copysign(-2.0)", X),
    "fmod": ("x.fmod(Tensor([2.0, -3.0, 0.7, -0.7, 5.0, 1.5]))", [-4.0, 7.5, 5.0, 4.3, -7.0, 8.0]),
    "fmod_s": ("x.fmod(1.25)", X),
    "lerp": ("x.lerp(Tensor([4.0, 5.0, 6.0, -1.0]), 0.25)", [1.0, 2.0, -3.0, 0.5]),
    "lerp_t": ("x.lerp(Tensor([4.0, 5.0, 6.0, -1.0]), Tensor([0.0, 0.5, 1.0, 2.0]))", [1.0, 2.0, -3.0, 0.5]),
    "logaddexp": ("x.logaddexp(Tensor([0.5] * 12))", X), "logaddexp_s": ("x.logaddexp(2.0)", X + [80.0]),
    "isclose": ("x.isclose(Tensor([1.0, 1.0001, math.nan, math.inf, 2.0]))", [1.0, 1.0, math.nan, math.inf, 2.1]),
    "isclose_nan": ("x.isclose(Tensor([1.0, math.nan, 3.0]), equal_nan=True, atol=0.5)", [1.2, math.nan, 3.6]),
    "allclose_t": ("x.allclose(x + 1e-9)", X), "allclose_f": ("x.allclose(x + 1.0)", X),
    "eq": ("x.eq(Tensor([0.0, 2.0, math.nan]))", [0.0, 1.0, math.nan]),
    "masked_fill_f": ("x.masked_fill(x > 0.5, 0.25)", X),
    "div_trunc": ("x.div(Tensor([2.0, -2.0, 0.5, 3.0]), rounding_mode='trunc')", [7.0, 7.0, -1.3, -7.5]),
    "div_floor": ("x.div(Tensor([2.0, -2.0, 0.5, 3.0]), rounding_mode='floor')", [7.0, 7.0, -1.3, -7.5]),
    "pow_reverse": ("x.pow(2.0, reverse=True)", [0.5, -1.0, 3.0]),
    "ne": ("x.ne(Tensor([0.0, 2.0, math.nan]))", [0.0, 1.0, math.nan]),
}
INT_CASES = {  # on int32 inputs
    "bitwise_and": ("x.bitwise_and(6)", [0, 3, 5, -7, 12]), "bitwise_or": ("x.bitwise_or(6)", [0, 3, 5, -7, 12]),
    "bitwise_xor": ("x.bitwise_xor(Tensor([1, 2, 3, 4, 5]))", [0, 3, 5, -7, 12]),
    "bitwise_not": ("x.bitwise_not()", [0, 3, 5, -7, 12]), "lshift": ("x.lshift(2)", [0, 3, 5, -7, 12]),
    "rshift": ("x.rshift(1)", [0, 3, 5, 100, 12]), "fmod_int": ("x.fmod(Tensor([3, -3, 2, 5, -5]))", [7, 7, -5, -7, 0]),
    "copysign_int": ("x.copysign(Tensor([1, -1, -2, 0, 3]))", [7, 7, -5, -7, 0]),
    "eq_int": ("x.eq(3)", [0, 3, 5, -7, 3]),
    "masked_fill": ("x.masked_fill(Tensor([True, False, True, False, False]), -12)", [1, 2, 3, 4, 5]),
    "masked_fill_t": ("x.masked_fill(Tensor([[True], [False]]), Tensor([-1, -2, -3, -4, -5]))", [1, 2, 3, 4, 5]),
    "div_trunc_int": ("x.div(Tensor([2, -2, 3, 4]), rounding_mode='trunc')", [7, 7, -7, -9]),
    "div_floor_int": ("x.div(Tensor([2, -2, 3, 4]), rounding_mode='floor')", [7, 7, -7, -9]),
    "isnan_int": ("x.isnan()", [0, 3]),
}

_SCRIPT = """
import json, math, sys
from tinygrad import Tensor, dtypes
cases = json.loads(sys.argv[1]) if len(sys.argv) > 1 else None
out = {}
for name, (expr, xs, dt) in CASES.items():
    x = Tensor(xs, dtype=getattr(dtypes, dt))
    r = eval(expr)
    out[name] = r.numpy().tolist()
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def tiny():
    cases = {k: (e, xs, "float32") for k, (e, xs) in CASES.items()}
    cases.update({k: (e, xs, "int32") for k, (e, xs) in INT_CASES.items()})
    return run_tinygrad(f"import math\nnan, inf = math.nan, math.inf\nCASES = {cases!r}\n" + _SCRIPT)


def _ours(expr, xs, dt):
    x = Tensor(np.array(xs, dtype=dt))
    return eval(expr, {"x": x, "Tensor": Tensor, "math": math}).numpy()


def test_float_names_match_tinygrad(tiny):
    """Each call, on tinygrad's CPU device and on ours (tinygrad's shorter formulas: tolerances of float32 sums)."""
    for name, (expr, xs) in CASES.items():
        ours, ref = _ours(expr, xs, np.float32), np.array(tiny[name])
        assert ours.shape == ref.shape, name
        if ref.dtype == bool:
            assert ours.dtype == np.bool_ and np.array_equal(ours, ref), (name, ours, ref)
        else:
            np.testing.assert_allclose(ours, ref, rtol=2e-5, atol=2e-6, equal_nan=True, err_msg=name)


def test_int_names_match_tinygrad(tiny):
    for name, (expr, xs) in INT_CASES.items():
        ours, ref = _ours(expr, xs, np.int32), np.array(tiny[name])
        assert np.array_equal(ours, ref), (name, ours, ref)


def test_gelu_default_is_the_tanh_form():
    x = np.linspace(-4, 4, 17, dtype=np.float32)
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x.astype(np.float64) ** 3)))
    np.testing.assert_allclose(Tensor(x).gelu().numpy(), tanh_form, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="approximate"):
        Tensor(x).gelu("erf")


# ---- edges against NumPy's long double -----------------------------------------------------------------------------
EDGE = [0.0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 1e-4, -1e-4, 0.3, -0.3, 0.5, -0.5, 0.99, -0.99, 1.0, -1.0, 1.0001,
        2.0, -2.0, 10.0, -10.0, 30.0, -30.0, 80.0, -80.0, 1e10, -1e10, 1e30, -1e30, math.inf, -math.inf, math.nan]


def _np_gelu(v):
    return 0.5 * v * (1 + np.tanh(np.sqrt(np.longdouble(2) / np.pi) * (v + np.longdouble(0.044715) * v ** 3)))


REF = {
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "log10": np.log10, "tanh": np.tanh,
    "softplus": lambda v: np.logaddexp(v, 0), "logsigmoid": lambda v: -np.logaddexp(-v, 0),
    "elu": lambda v: np.where(v > 0, v, np.expm1(v)), "celu": lambda v: np.maximum(v, 0) + np.minimum(0, np.expm1(v)),
    "selu": lambda v: 1.0507 * np.where(v >= 0, v, 1.67326 * np.expm1(v)),
    "mish": lambda v: v * np.tanh(np.logaddexp(v, 0)), "softsign": lambda v: v / (1 + np.abs(v)),
    "silu": lambda v: v / (1 + np.exp(-v)), "logaddexp": lambda v: np.logaddexp(v, np.longdouble(0.5)),
}


def _relerr(ours, ref, tiny_abs):
    """|ours - ref| / |ref| (absolute below tiny_abs); 0 where both are the same NaN or infinity."""
    ref = ref.astype(np.float64)
    same = (np.isnan(ours) & np.isnan(ref)) | (np.isinf(ref) & (ours == ref))
    with np.errstate(all="ignore"):
        err = np.abs(ours.astype(np.float64) - ref) / np.maximum(np.abs(ref), tiny_abs)
    err[same] = 0
    err[np.isnan(ours) != np.isnan(ref)] = np.inf
    return err


@pytest.mark.parametrize("device", [None, "CPU"])
@pytest.mark.parametrize("dt, rtol", [("float32", 3e-6), ("float64", 1e-13)])
def test_precision_at_the_edges(dt, rtol, device):
    """Largest relative error over the edge inputs, on the default device (the simulated GPU) and the CPU device:
    float32 within 3e-6 (~25 ulp; most functions are within 3), float64 1e-13."""
    x = np.array(EDGE, dt)
    t = Tensor(x, device=device)
    worst = {}
    with np.errstate(all="ignore"):
        ref_in = x.astype(np.longdouble)
        for name, ref in REF.items():
            ours = t.logaddexp(0.5).numpy() if name == "logaddexp" else getattr(t, name)().numpy()
            assert ours.dtype == np.dtype(dt), name
            err = _relerr(ours, ref(ref_in), np.finfo(dt).tiny)
            worst[name] = (float(err.max()), x[int(err.argmax())], ours[int(err.argmax())])
    bad = {k: v for k, v in worst.items() if not v[0] <= rtol}
    assert not bad, bad


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_types_compute_in_float32(dt):
    """float16/bfloat16 results are the float32 result rounded once."""
    x = np.array([-3.0, -0.5, -1e-3, 0.25, 0.9, 2.0], np.float32)
    t32, th = Tensor(x), Tensor(x, dtype=getattr(dtypes, dt))
    xh = th.cast(dtypes.float32)
    for name in ("atan", "sinh", "asinh", "elu", "mish", "softplus", "gelu", "logsigmoid"):
        got = getattr(th, name)()
        assert got.dtype == getattr(dtypes, dt)
        want = getattr(xh, name)().cast(getattr(dtypes, dt)).numpy()
        assert np.array_equal(got.numpy(), want), name
    assert t32.atan().dtype == dtypes.float32


def test_fmod_is_exact_and_takes_the_dividends_sign():
    a = np.array([1e30, -7.5, 5.0, 0.1, -0.0, 3.0, np.inf, 2.0], np.float32)
    b = np.array([3.0, 2.0, -0.7, 0.03, 1.0, np.inf, 2.0, 0.0], np.float32)
    ours = Tensor(a).fmod(Tensor(b)).numpy()
    with np.errstate(invalid="ignore"):
        want, want_mod = np.fmod(a, b), np.mod(a, b)
    np.testing.assert_array_equal(ours, want)
    real = ~np.isnan(want)  # a NaN's sign is the host's default NaN's
    np.testing.assert_array_equal(np.signbit(ours[real]), np.signbit(want[real]))
    np.testing.assert_array_equal(Tensor(a).mod(Tensor(b)).numpy(), want_mod)  # x mod inf too


def test_classification_and_isclose_follow_numpy():
    x = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 3e38], np.float32)
    y = np.array([1.00001, np.nan, np.inf, np.inf, 1e-9, 3.0000001e38], np.float32)
    t, u = Tensor(x), Tensor(y)
    np.testing.assert_array_equal(t.isnan().numpy(), np.isnan(x))
    np.testing.assert_array_equal(t.isinf().numpy(), np.isinf(x))
    np.testing.assert_array_equal(t.isinf(False, True).numpy(), np.isneginf(x))
    np.testing.assert_array_equal(t.isfinite().numpy(), np.isfinite(x))
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1e-8}):
        np.testing.assert_array_equal(t.isclose(u, **kw).numpy(), np.isclose(x, y, **kw), err_msg=str(kw))
    assert t.isclose(u).dtype == dtypes.bool and t.allclose(t).shape == ()
    assert not bool(t.allclose(t)) and bool(t.allclose(t, equal_nan=True))
    assert bool(Tensor([1, 2], dtype=dtypes.uint8).allclose(Tensor([1, 2], dtype=dtypes.uint8)))


def test_bitwise_names_reject_floats():
    with pytest.raises(TypeError, match="float32"):
        Tensor([1.0]).bitwise_and(1)
    with pytest.raises(TypeError, match="float32"):
        Tensor([1.0]).lshift(1)


def test_activations_have_gradients():
    """Backward through the new compositions is finite where the function is smooth, including the far tails."""
    x = Tensor(np.array([-100.0, -20.0, -1.0, -1e-4, 0.5, 20.0, 100.0], np.float32), requires_grad=True)
    for name in ("elu", "selu", "celu", "softplus", "logsigmoid", "mish", "gelu", "sinh", "asinh", "atan", "tanh",
                 "sigmoid", "silu"):
        x.grad = None
        getattr(x, name)().sum().backward()
        g = x.grad.numpy()
        finite = np.abs(x.numpy()) < 90 if name == "sinh" else True  # sinh' = cosh overflows float32 past 89.4
        assert np.isfinite(g[finite]).all(), (name, g)
    x.grad = None
    x.softplus().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / (1 + np.exp(-x.numpy().astype(np.float64))), rtol=1e-5, atol=1e-7)
