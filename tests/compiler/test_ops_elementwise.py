"""Ops suite, elementwise: every unary and binary operation per dtype against NumPy, broadcasting with hypothesis.
Tolerances: tests/support/ops.py (docs/compiler.md, "Testing")."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from compiler import Tensor, dtypes
from tests.support.ops import FLOATS, INTS, assert_close, host_dtype, rand, rounded, tensor

pytestmark = pytest.mark.usefixtures("gpu_arch")  # (also on gfx1201: conftest.py)

SHAPE = (3, 5)


def _gelu_tanh(x):
    """tinygrad's (and our) default GELU, the tanh form."""
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64))


# name -> (tensor fn, numpy fn, input range, extra float tolerance (rtol, atol) for f32/f64 or None)
UNARY = {
    "neg": (lambda t: -t, np.negative, (-3, 3), None),
    "abs": (lambda t: t.abs(), np.abs, (-3, 3), None),
    "exp": (lambda t: t.exp(), np.exp, (-4, 4), (3e-6, 1e-6)),
    "exp2": (lambda t: t.exp2(), np.exp2, (-4, 4), (3e-6, 1e-6)),
    "log": (lambda t: t.log(), np.log, (0.1, 8), (3e-6, 1e-6)),
    "log2": (lambda t: t.log2(), np.log2, (0.1, 8), (3e-6, 1e-6)),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, (0, 8), None),
    "rsqrt": (lambda t: t.rsqrt(), lambda x: 1 / np.sqrt(x), (0.1, 8), (3e-6, 1e-6)),
    "sin": (lambda t: t.sin(), np.sin, (-7, 7), (3e-6, 2e-6)),
    "cos": (lambda t: t.cos(), np.cos, (-7, 7), (3e-6, 2e-6)),
    "tan": (lambda t: t.tan(), np.tan, (-1.2, 1.2), (1e-5, 2e-6)),
    "tanh": (lambda t: t.tanh(), np.tanh, (-3, 3), (1e-5, 2e-6)),
    "sigmoid": (lambda t: t.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), (-5, 5), (3e-6, 1e-6)),
    "relu": (lambda t: t.relu(), lambda x: np.maximum(x, 0), (-3, 3), None),
    "gelu": (lambda t: t.gelu(), _gelu_tanh, (-3, 3), (1e-5, 3e-7)),
    "silu": (lambda t: t.silu(), lambda x: x / (1 + np.exp(-x)), (-5, 5), (3e-6, 1e-6)),
    "erf": (lambda t: t.erf(), _erf, (-3, 3), (1e-5, 3e-7)),
    "floor": (lambda t: t.floor(), np.floor, (-3, 3), None),
    "ceil": (lambda t: t.ceil(), np.ceil, (-3, 3), None),
    "round": (lambda t: t.round(), np.round, (-3, 3), None),
    "trunc": (lambda t: t.trunc(), np.trunc, (-3, 3), None),
    "square": (lambda t: t.square(), np.square, (-3, 3), None),
    "reciprocal": (lambda t: t.reciprocal(), np.reciprocal, (0.5, 4), None),
    "sign": (lambda t: t.sign(), np.sign, (-3, 3), None),
}


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_float(backend, op, dt):
    tfn, nfn, (lo, hi), tol = UNARY[op]
    x = rand(SHAPE, dt, np.random.default_rng(hash(op) % 1000), lo, hi)
    if op in ("round",):
        x[0, :3] = [0.5, 1.5, -2.5]  # ties go to even
    ours = tfn(tensor(x, dt)).numpy()
    ref = nfn(x.astype(host_dtype(dt)))
    if op == "erf" and dt == "float64":
        tol = (1e-6, 3e-7)  # the approximation's own error
    if op == "gelu" and dt == "float64":
        tol = (1e-6, 3e-7)
    rtol, atol = (tol if tol and dt in ("float32", "float64") else (None, None))
    assert ours.dtype == host_dtype(dt)
    assert_close(ours, ref.astype(host_dtype(dt)), dt, rtol, atol)


INT_UNARY = {
    "neg": (lambda t: -t, np.negative),
    "abs": (lambda t: t.abs(), np.abs),
    "invert": (lambda t: ~t, np.invert),
    "square": (lambda t: t * t, lambda x: x * x),
}


@pytest.mark.parametrize("dt", INTS)
@pytest.mark.parametrize("op", sorted(INT_UNARY))
def test_unary_int(backend, op, dt):
    tfn, nfn = INT_UNARY[op]
    x = rand(SHAPE, dt, np.random.default_rng(1), -100, 100)
    with np.errstate(all="ignore"):
        assert_close(tfn(tensor(x, dt)).numpy(), nfn(x), dt)


BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.true_divide),
    "floordiv": (lambda a, b: a // b, np.floor_divide),
    "mod": (lambda a, b: a % b, np.mod),
    "maximum": (lambda a, b: a.maximum(b), np.maximum),
    "minimum": (lambda a, b: a.minimum(b), np.minimum),
}


@pytest.mark.parametrize("dt", FLOATS + ["int8", "uint8", "int16", "int32", "uint32", "int64"])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary(backend, op, dt):
    tfn, nfn = BINARY[op]
    rng = np.random.default_rng(2)
    a = rand(SHAPE, dt, rng, -50, 50)
    b = rand(SHAPE, dt, rng, -50, 50)
    if op in ("div", "floordiv", "mod"):
        b[b == 0] = 3
        if dt in ("float16", "bfloat16") and op != "div":
            a, b = np.trunc(a), np.trunc(b) + (np.trunc(b) == 0)  # exact quotients away from the rounding edges
            a, b = rounded(a, dt), rounded(b, dt)
    ours = tfn(tensor(a, dt), tensor(b, dt)).numpy()
    with np.errstate(all="ignore"):
        ref = nfn(a, b)
    if op == "div" and dt not in FLOATS:
        assert ours.dtype == np.float32
        assert_close(ours, ref.astype(np.float32), "float32")
        return
    if dt not in FLOATS:
        ref = ref.astype(np.dtype(dt))
    assert_close(ours, ref, dt, rtol=1e-5 if op in ("floordiv", "mod") and dt == "float32" else None)


def test_integer_division_by_zero_is_zero(backend):
    a = Tensor(np.array([7, -7, 0, 5], np.int32))
    b = Tensor(np.array([0, 0, 0, 2], np.int32))
    assert (a // b).tolist() == [0, 0, 0, 2]
    assert (a % b).tolist() == [0, 0, 0, 1]


def test_int32_min_divided_by_minus_one_wraps(backend):
    a = Tensor(np.array([-2**31, 9], np.int32))
    b = Tensor(np.array([-1, -1], np.int32))
    assert (a // b).tolist() == [-2**31, -9]
    assert (a % b).tolist() == [0, 0]


def test_float_division_specials(backend):
    a = Tensor(np.array([1.0, -1.0, 0.0, np.inf], np.float32))
    b = Tensor(np.array([0.0, 0.0, 0.0, np.inf], np.float32))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((a / b).numpy(), a.numpy() / b.numpy())


def test_maximum_propagates_nan(backend):
    a = Tensor(np.array([np.nan, 1.0, 2.0], np.float32))
    b = Tensor(np.array([1.0, np.nan, 1.0], np.float32))
    np.testing.assert_array_equal(a.maximum(b).numpy(), np.maximum(a.numpy(), b.numpy()))
    np.testing.assert_array_equal(a.minimum(b).numpy(), np.minimum(a.numpy(), b.numpy()))


COMPARE = {
    "lt": (lambda a, b: a < b, np.less), "le": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater), "ge": (lambda a, b: a >= b, np.greater_equal),
    "eq": (lambda a, b: a == b, np.equal), "ne": (lambda a, b: a != b, np.not_equal),
}


@pytest.mark.parametrize("dt", ["float32", "float16", "int32", "uint8", "int64"])
@pytest.mark.parametrize("op", sorted(COMPARE))
def test_compare(backend, op, dt):
    tfn, nfn = COMPARE[op]
    rng = np.random.default_rng(3)
    a, b = rand(SHAPE, dt, rng, 0, 4), rand(SHAPE, dt, rng, 0, 4)
    if dt in FLOATS:
        a, b = np.round(a), np.round(b)  # ties exercise <= and ==
        a[0, 0] = np.nan
    ours = tfn(tensor(a, dt), tensor(b, dt)).numpy()
    assert ours.dtype == np.bool_
    assert_close(ours, nfn(a, b), "bool")


BITWISE = {
    "and": (lambda a, b: a & b, np.bitwise_and), "or": (lambda a, b: a | b, np.bitwise_or),
    "xor": (lambda a, b: a ^ b, np.bitwise_xor),
    "shl": (lambda a, b: a << b, np.left_shift), "shr": (lambda a, b: a >> b, np.right_shift),
}


@pytest.mark.parametrize("dt", ["int8", "uint16", "int32", "uint32", "int64"])
@pytest.mark.parametrize("op", sorted(BITWISE))
def test_bitwise(backend, op, dt):
    tfn, nfn = BITWISE[op]
    rng = np.random.default_rng(4)
    a = rand(SHAPE, dt, rng, -1000, 1000)
    bits = np.dtype(dt).itemsize * 8
    b = rand(SHAPE, dt, rng, 0, bits + 2) if op in ("shl", "shr") else rand(SHAPE, dt, rng, -1000, 1000)
    assert_close(tfn(tensor(a, dt), tensor(b, dt)).numpy(), nfn(a, b), dt)


def test_bool_logic(backend):
    rng = np.random.default_rng(5)
    a, b = rng.random(SHAPE) < 0.5, rng.random(SHAPE) < 0.5
    ta, tb = Tensor(a), Tensor(b)
    assert_close((ta & tb).numpy(), a & b, "bool")
    assert_close((ta | tb).numpy(), a | b, "bool")
    assert_close((ta ^ tb).numpy(), a ^ b, "bool")
    assert_close((~ta).numpy(), ~a, "bool")
    assert_close(ta.logical_not().numpy(), ~a, "bool")


@pytest.mark.parametrize("case", ["float_int_exp", "float_neg_int_exp", "float_float", "negative_base", "int_int",
                                  "int_scalar", "rpow", "zero_base"])
def test_pow(backend, case):
    rng = np.random.default_rng(6)
    x = rng.uniform(0.5, 3, SHAPE).astype(np.float32)
    if case == "float_int_exp":
        assert_close((Tensor(x) ** 3).numpy(), x ** 3, "float32")
    elif case == "float_neg_int_exp":
        assert_close((Tensor(x) ** -2).numpy(), x ** -2.0, "float32")
    elif case == "float_float":
        y = rng.uniform(-2, 2, SHAPE).astype(np.float32)
        assert_close((Tensor(x) ** Tensor(y)).numpy(), x ** y, "float32", rtol=1e-5)
    elif case == "negative_base":
        b = np.array([-2.0, -2.0, -8.0, 2.0], np.float32)
        e = np.array([3.0, 2.0, 1 / 3, 0.5], np.float32)
        with np.errstate(invalid="ignore"):
            assert_close((Tensor(b) ** Tensor(e)).numpy(), b ** e, "float32")
    elif case == "int_int":
        a = rng.integers(-5, 6, SHAPE).astype(np.int32)
        e = rng.integers(0, 8, SHAPE).astype(np.int32)
        assert_close((Tensor(a) ** Tensor(e)).numpy(), a ** e, "int32")
    elif case == "int_scalar":
        a = rng.integers(-5, 6, SHAPE).astype(np.int64)
        assert_close((Tensor(a) ** 5).numpy(), a ** 5, "int64")
    elif case == "rpow":
        assert_close((2 ** Tensor(x)).numpy(), 2 ** x, "float32", rtol=3e-6)
    else:
        b = np.array([0.0, 0.0, 0.0], np.float32)
        e = np.array([2.0, 0.0, -1.0], np.float32)
        with np.errstate(divide="ignore"):
            assert_close((Tensor(b) ** Tensor(e)).numpy(), b ** e, "float32")


def test_int_to_negative_power_raises(backend):
    with pytest.raises(ValueError, match="negative integer powers"):
        Tensor([2, 3]) ** Tensor([1, -1])


@pytest.mark.parametrize("case", ["where", "where_scalars", "where_broadcast", "clip", "clip_min", "clip_int"])
def test_where_clip(backend, case):
    rng = np.random.default_rng(7)
    x = rng.uniform(-3, 3, SHAPE).astype(np.float32)
    y = rng.uniform(-3, 3, SHAPE).astype(np.float32)
    c = x > y
    if case == "where":
        assert_close(Tensor(c).where(Tensor(x), Tensor(y)).numpy(), np.where(c, x, y), "float32")
    elif case == "where_scalars":
        assert_close(Tensor(c).where(1.5, -2).numpy(), np.where(c, 1.5, -2.0).astype(np.float32), "float32")
    elif case == "where_broadcast":
        assert_close(Tensor(c[:, :1]).where(Tensor(x), Tensor(y[:1])).numpy(), np.where(c[:, :1], x, y[:1]),
                     "float32")
    elif case == "clip":
        assert_close(Tensor(x).clip(-1, 0.5).numpy(), np.clip(x, -1, 0.5), "float32")
    elif case == "clip_min":
        assert_close(Tensor(x).clip(min_=0).numpy(), np.clip(x, 0, None), "float32")
    else:
        a = rng.integers(-20, 20, SHAPE).astype(np.int32)
        assert_close(Tensor(a).clip(-5, 7).numpy(), np.clip(a, -5, 7), "int32")


CASTS = [("float32", "int32"), ("float32", "uint8"), ("float32", "float16"), ("float32", "bfloat16"),
         ("float32", "float64"), ("float64", "float32"), ("float16", "float32"), ("bfloat16", "float32"),
         ("float16", "bfloat16"), ("int32", "float32"), ("int64", "float64"), ("uint32", "float32"),
         ("int32", "int8"), ("int8", "int32"), ("uint8", "int16"), ("int16", "uint8"), ("int32", "int64"),
         ("int64", "int32"), ("uint32", "uint64"), ("int32", "bool"), ("float32", "bool"), ("bool", "float32"),
         ("bool", "int32"), ("uint64", "float32"), ("float64", "int64")]


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast(backend, src, dst):
    rng = np.random.default_rng(8)
    lo, hi = (-100, 100) if dst not in ("uint8",) and src not in ("uint8", "uint32", "uint64") else (0, 200)
    x = rand((4, 6), src, rng, lo, hi)
    if src in FLOATS and dst == "bool":
        x[0, :2] = [0.0, -0.0]
    ours = tensor(x, src).cast(getattr(dtypes, dst)).numpy()
    with np.errstate(all="ignore"):
        ref = x.astype(host_dtype(dst))
    assert_close(ours, rounded(ref, dst) if dst == "bfloat16" else ref, dst)


@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("int32", "float32"), ("float32", "uint32"),
                                     ("float16", "int16"), ("float64", "uint64"), ("int8", "uint8")])
def test_bitcast(backend, src, dst):
    x = rand((3, 4), src, np.random.default_rng(9), -100, 100)
    assert_close(tensor(x, src).bitcast(getattr(dtypes, dst)).numpy(), x.view(np.dtype(dst)), dst)


def test_bitcast_size_mismatch_is_a_type_error():
    with pytest.raises(TypeError, match="bitcast: dtype int64 must have the item size of self.s float32"):
        Tensor([1.0]).bitcast(dtypes.int64)


def test_conversion_shorthands(backend):
    x = Tensor([1.7, -2.2])
    assert x.int().tolist() == [1, -2] and x.int().dtype == dtypes.int32
    assert x.half().dtype == dtypes.float16 and x.float().dtype == dtypes.float32
    assert Tensor([1, 2]).float().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("dt,scalar,expect", [("int32", 2, "int32"), ("int32", 2.5, "float32"),
                                              ("float16", 2, "float16"), ("uint8", 3, "uint8"),
                                              ("bool", 2, "int32"), ("float64", 1.5, "float64")])
def test_scalar_promotion(backend, dt, scalar, expect):
    x = rand((2, 3), dt, np.random.default_rng(10), 0, 5)
    out = tensor(x, dt) * scalar
    assert out.dtype == getattr(dtypes, expect)
    assert_close(out.numpy(), (x.astype(host_dtype(expect)) * scalar).astype(host_dtype(expect)), expect)


@pytest.mark.parametrize("a,b,expect", [("int8", "uint8", "int16"), ("int32", "float16", "float16"),
                                        ("float16", "bfloat16", "float32"), ("int32", "uint32", "int64"),
                                        ("bool", "int8", "int8"), ("float32", "float64", "float64")])
def test_tensor_promotion(backend, a, b, expect):
    rng = np.random.default_rng(11)
    x, y = rand((2, 2), a, rng, 0, 5), rand((2, 2), b, rng, 0, 5)
    out = tensor(x, a) + tensor(y, b)
    assert out.dtype == getattr(dtypes, expect)
    assert_close(out.numpy(), x.astype(host_dtype(expect)) + y.astype(host_dtype(expect)), expect)


def _broadcastable(draw):
    shape = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    other = [draw(st.sampled_from([s, 1])) for s in shape]
    cut = draw(st.integers(0, len(other) - 1))
    return tuple(shape), tuple(other[cut:])


@given(st.data())
def test_broadcasting_property(backend, data):
    sa, sb = _broadcastable(data.draw)
    if data.draw(st.booleans()):
        sa, sb = sb, sa
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    assert_close((Tensor(a) * Tensor(b) + Tensor(b)).numpy(), a * b + b, "float32")


@given(st.lists(st.integers(1, 4), min_size=2, max_size=3), st.data())
def test_strided_operands_property(backend, shape, data):
    """Operands that are permuted, flipped and sliced views (strides other than row-major)."""
    rng = np.random.default_rng(13)
    a = rng.standard_normal(shape).astype(np.float32)
    order = data.draw(st.permutations(range(len(shape))))
    flip = data.draw(st.integers(0, len(shape) - 1))
    ta = Tensor(a).permute(order).flip(flip)
    na = np.flip(a.transpose(order), flip)
    step = data.draw(st.integers(1, 2))
    ta, na = ta[..., ::step], na[..., ::step]
    assert_close((ta * 2 - ta.exp()).numpy(), na * 2 - np.exp(na), "float32", rtol=3e-6)


def test_broadcast_mismatch_names_shapes():
    """The error names the argument as the method calls it (tinygrad's names: x, y) and both shapes."""
    with pytest.raises(ValueError, match=r"x of shape \(5,\) does not broadcast with self of shape \(3, 4\)"):
        Tensor.ones(3, 4) + Tensor.ones(5)
    with pytest.raises(ValueError, match=r"x of shape \(2,\) does not broadcast with self of shape \(3,\)"):
        Tensor.ones(3).maximum(Tensor.ones(2))
    with pytest.raises(ValueError, match=r"y of shape \(2,\) does not broadcast with self of shape \(3,\)"):
        Tensor.ones(3).where(Tensor.ones(3), Tensor.ones(2))
    with pytest.raises(ValueError, match=r"where: x and y of shape \(3,\) do not broadcast with self"):
        Tensor.ones(2).where(Tensor.ones(3), 0.0)
    with pytest.raises(ValueError, match=r"assign: x of shape \(2,\)"):
        Tensor.ones(3).assign(Tensor.ones(2))
    with pytest.raises(ValueError, match="rounding_mode"):
        Tensor.ones(3).div(2, rounding_mode="round")


@pytest.mark.parametrize("dt", ["int32", "int8", "uint16", "int64"])
def test_logical_not_of_integers(backend, dt):
    """not x for integers: the value range of a cast to bool took bool(int32.min) as its low end (True), so
    NOT folded to a constant False."""
    a = np.array([1, 0, -3, 5, 0], dtype=np.dtype(dt)) if dt[0] == "i" else np.array([1, 0, 3, 5, 0], dt)
    assert_close(Tensor(a).logical_not().numpy(), np.logical_not(a), "bool")
