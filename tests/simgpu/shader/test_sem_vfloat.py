"""VALU float arithmetic against exact-rational reference models written from the RDNA3 ISA reference:
add/sub/mul/fma (f16/f32/f64, every MODE round mode, denormals kept or flushed), fmac/fmamk/fmaak,
DX9-zero forms, ldexp, min/max (IEEE and legacy NaN rules), min3/max3/med3/minmax, div_scale/div_fmas/
div_fixup, cube ops. Each instruction runs over 512 lanes of one hand-assembled kernel."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu.testbed import Testbed
from tests.support.vfloat_harness import (
    FLOAT,
    UINT,
    Runner,
    as_float,
    flush,
    lanes,
    mode_word,
    round_fraction,
    same,
)

N = 512
SETTINGS = settings(max_examples=2, deadline=None, derandomize=True)


@pytest.fixture(scope="module")
def runner():
    return Runner(Testbed(vram_size=1 << 28))


# ---------------------------------------------------------------------------------------------- reference models


def _zero_sum_sign(x: float, y: float, mode: int) -> float:
    """IEEE 754 sign of an exact zero x + y."""
    if x == 0 and y == 0 and math.copysign(1, x) == math.copysign(1, y):
        return x
    return -0.0 if mode == 2 else 0.0


def ref_fma(a: float, b: float, c: float, t: str, mode: int, dm: int) -> float:
    """fma(a, b, c) rounded once to t in `mode`, with denorm mode dm (bit 0 keep input, bit 1 keep output)."""
    if not dm & 1:
        a, b, c = flush(a, t), flush(b, t), flush(c, t)
    if math.isinf(c) and math.isfinite(a) and math.isfinite(b):
        return c  # the exact product is finite, even where a * b overflows a double
    if not all(map(math.isfinite, (a, b, c))):
        return a * b + c  # infinities and NaNs: exact IEEE results in Python's double arithmetic
    q = Fraction(a) * Fraction(b) + Fraction(c)
    if q == 0:  # an exact zero: the product is a signed zero, or c cancels it exactly
        prod = math.copysign(0.0, math.copysign(1, a) * math.copysign(1, b)) if a == 0 or b == 0 else 1.0
        return _zero_sum_sign(prod, c, mode)
    r = round_fraction(q, t, mode)
    r = math.copysign(0.0, q) if r == 0 else r
    return flush(r, t) if not dm & 2 else r


def ref_add(a, b, t, mode, dm):
    return ref_fma(a, 1.0, b, t, mode, dm)


def ref_mul(a, b, t, mode, dm):
    if not dm & 1:
        a, b = flush(a, t), flush(b, t)
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b
    q = Fraction(a) * Fraction(b)
    r = round_fraction(q, t, mode)
    if r == 0:
        r = math.copysign(0.0, math.copysign(1, a) * math.copysign(1, b))
    return flush(r, t) if not dm & 2 else r


# ---------------------------------------------------------------------------------------------- harness


def _draw(data, t, k, seed):
    return [lanes(data, t, N, seed + i) for i in range(k)]


def _check(got, want_fn, t, inputs, label):
    vals = [as_float(x, t) for x in inputs]
    bad = []
    for i in range(len(got)):
        want = want_fn(*(float(v[i]) for v in vals))
        if not same(int(got[i]), want, t):
            bad.append((i, [hex(int(x[i])) for x in inputs], hex(int(got[i])), want))
    assert not bad, (label, len(bad), bad[:5])


def _mode(t, rnd, dm):
    return mode_word(round32=rnd, denorm32=dm) if t == "f32" else mode_word(round64=rnd, denorm64=dm)


def _regs(t):
    return ("v[20:21]", "v[10:11]", "v[12:13]", "v[14:15]") if t == "f64" else ("v20", "v10", "v12", "v14")


MODES = [(0, 3), (1, 3), (2, 3), (3, 3), (0, 0), (3, 1)]  # (round mode, denorm mode)


@pytest.mark.parametrize("t", ["f32", "f16", "f64"])
@SETTINGS
@given(data=st.data())
def test_fma_rounds_once_in_every_mode(runner, t, data):
    d, x, y, z = _regs(t)
    a, b, c = _draw(data, t, 3, 11)
    # hard cases: addends that nearly cancel the product, so the rounding happens far below it
    with np.errstate(all="ignore"):  # NaN/inf operands are part of the data
        af, bf = as_float(a, t).astype(np.float64), as_float(b, t).astype(np.float64)
        near = (-(af * bf)).astype(FLOAT[t]).view(UINT[t]).astype(np.uint64)
    c = np.where(np.arange(N) % 3 == 0, near, c)
    for rnd, dm in MODES:
        got, _, _ = runner.run(f"v_fma_{t} {d}, {x}, {y}, {z}", a, b, c, mode=_mode(t, rnd, dm))
        _check(got, lambda p, q, r, rnd=rnd, dm=dm: ref_fma(p, q, r, t, rnd, dm), t, (a, b, c), (t, rnd, dm))


@pytest.mark.parametrize("t", ["f32", "f16", "f64"])
@settings(max_examples=1, deadline=None, derandomize=True)
@given(data=st.data())
def test_add_mul_in_every_mode(runner, t, data):
    d, x, y, _ = _regs(t)
    a, b = _draw(data, t, 2, 21)
    for rnd, dm in MODES:
        m = _mode(t, rnd, dm)
        got, _, _ = runner.run(f"v_add_{t} {d}, {x}, {y}", a, b, mode=m)
        _check(got, lambda p, q, rnd=rnd, dm=dm: ref_add(p, q, t, rnd, dm), t, (a, b), ("add", t, rnd, dm))
        got, _, _ = runner.run(f"v_mul_{t} {d}, {x}, {y}", a, b, mode=m)
        _check(got, lambda p, q, rnd=rnd, dm=dm: ref_mul(p, q, t, rnd, dm), t, (a, b), ("mul", t, rnd, dm))
        if t != "f64" and rnd in (0, 2):
            got, _, _ = runner.run(f"v_sub_{t}_e64 {d}, {x}, -{y}", a, b, mode=m)
            _check(got, lambda p, q, rnd=rnd, dm=dm: ref_add(p, q, t, rnd, dm), t, (a, b), ("sub neg", t, rnd, dm))
            got, _, _ = runner.run(f"v_subrev_{t} {d}, {x}, {y}", a, b, mode=m)
            _check(got, lambda p, q, rnd=rnd, dm=dm: ref_add(q, -p, t, rnd, dm), t, (a, b), ("subrev", t, rnd, dm))


def test_fma_f64_of_a_product_beyond_the_range_and_an_infinite_addend(runner):
    """The exact product of two finite doubles is finite even where it overflows a double, so an infinite
    addend is the result (IEEE 754 fusedMultiplyAdd), not the NaN of inf - inf (the host's FMA agrees)."""
    big, two32 = 0x7FEFFFFFFFFFFFFF, 0x41F0000000000000
    ninf, pinf = 0xFFF0000000000000, 0x7FF0000000000000
    a = np.array([big, big, big | 1 << 63, 0x3FF0000000000000], np.uint64)
    b = np.array([two32, big, big, pinf], np.uint64)
    c = np.array([ninf, ninf, pinf, ninf], np.uint64)
    for rnd in (0, 3):
        got, _, _ = runner.run("v_fma_f64 v[20:21], v[10:11], v[12:13], v[14:15]", a, b, c, mode=_mode("f64", rnd, 3))
        assert [hex(int(x)) for x in got[:3]] == [hex(ninf), hex(ninf), hex(pinf)]
        assert np.isnan(got[3:].view(np.float64)).all()  # 1 * inf - inf


@pytest.mark.parametrize("t", ["f32", "f16"])
@SETTINGS
@given(data=st.data())
def test_fmac_fmamk_fmaak(runner, t, data):
    a, b, c = _draw(data, t, 3, 31)
    k, kf = (0x3FB504F3, 1.41421353816986083984375) if t == "f32" else (0x3DA8, 1.4140625)
    got, _, _ = runner.run(f"v_fmac_{t} v20, v10, v12", a, b, None, c)
    _check(got, lambda p, q, r: ref_fma(p, q, r, t, 0, 3), t, (a, b, c), "fmac")
    got, _, _ = runner.run(f"v_fmamk_{t} v20, v10, {k:#x}, v12", a, b)
    _check(got, lambda p, q: ref_fma(p, kf, q, t, 0, 3), t, (a, b), "fmamk")
    got, _, _ = runner.run(f"v_fmaak_{t} v20, v10, v12, {k:#x}", a, b)
    _check(got, lambda p, q: ref_fma(p, q, kf, t, 0, 3), t, (a, b), "fmaak")


@SETTINGS
@given(data=st.data())
def test_dx9_zero_and_mullit(runner, data):
    a, b, c = _draw(data, "f32", 3, 41)
    a = np.where(np.arange(N) % 4 == 0, np.uint64(0), a)

    def fma_dx9(p, q, r):
        return r if p == 0 or q == 0 else ref_fma(p, q, r, "f32", 0, 3)

    got, _, _ = runner.run("v_fma_dx9_zero_f32 v20, v10, v12, v14", a, b, c)
    _check(got, fma_dx9, "f32", (a, b, c), "fma_dx9")
    got, _, _ = runner.run("v_fmac_dx9_zero_f32 v20, v10, v12", a, b, None, c)
    _check(got, fma_dx9, "f32", (a, b, c), "fmac_dx9")
    got, _, _ = runner.run("v_mul_dx9_zero_f32 v20, v10, v12", a, b)
    _check(got, lambda p, q: 0.0 if p == 0 or q == 0 else ref_mul(p, q, "f32", 0, 3), "f32", (a, b), "mul_dx9")
    fmax = float(np.finfo(np.float32).max)

    def mullit(p, q, r):
        if q == -fmax or q == -math.inf or math.isnan(q) or r <= 0 or math.isnan(r):
            return -fmax
        return ref_mul(p, q, "f32", 0, 3)

    got, _, _ = runner.run("v_mullit_f32 v20, v10, v12, v14", a, b, c)
    _check(got, mullit, "f32", (a, b, c), "mullit")


@pytest.mark.parametrize("t", ["f32", "f16", "f64"])
@SETTINGS
@given(data=st.data())
def test_ldexp(runner, t, data):
    d, x, _, _ = _regs(t)
    (a,) = _draw(data, t, 1, 51)
    rng = np.random.default_rng(5)
    n = rng.integers(-1200, 1200, N)
    n[:8] = [0, 1, -1, 2**31 - 1, -2**31, 200, -200, 64]
    n[8:64] = rng.integers(-2**31, 2**31, 56)
    nbits = (n & (0xFFFF if t == "f16" else 0xFFFFFFFF)).astype(np.uint64)
    for rnd in (0, 3):
        got, _, _ = runner.run(f"v_ldexp_{t} {d}, {x}, v12", a, nbits, mode=_mode(t, rnd, 3))
        # beyond +-3000 every result saturates exactly as at +-3000 (keeps the rationals small)
        ns = np.clip(n.astype(np.int16) if t == "f16" else n.astype(np.int32), -3000, 3000)
        vals = as_float(a, t)
        for i in range(N):
            v = float(vals[i])
            want = v if not math.isfinite(v) or v == 0 else \
                round_fraction(Fraction(v) * Fraction(2) ** int(ns[i]), t, rnd) or math.copysign(0.0, v)
            assert same(int(got[i]), want, t), (t, rnd, v, int(ns[i]), hex(int(got[i])), want)


# ---------------------------------------------------------------------------------------------- min/max


def _is_snan(bits: int, t: str) -> bool:
    mant = {"f16": 10, "f32": 23, "f64": 52}[t]
    v = float(np.array(bits, UINT[t]).view(FLOAT[t]))
    return math.isnan(v) and not (bits >> (mant - 1)) & 1


def _quiet(bits: int, t: str) -> int:
    mant = {"f16": 10, "f32": 23, "f64": 52}[t]
    return bits | (1 << (mant - 1))


def ref_minmax(x: int, y: int, t: str, want_max: bool, ieee: bool) -> int:
    """The reference's v_min/v_max on bit patterns (exact NaN bits, -0 < +0)."""
    fx, fy = (float(np.array(v, UINT[t]).view(FLOAT[t])) for v in (x, y))
    if ieee and _is_snan(x, t):
        return _quiet(x, t)
    if ieee and _is_snan(y, t):
        return _quiet(y, t)
    if math.isnan(fy):
        return x
    if math.isnan(fx):
        return y
    lt = fx < fy or (fx == fy == 0 and math.copysign(1, fx) < 0 < math.copysign(1, fy))
    gt = fx > fy or (fx == fy == 0 and math.copysign(1, fx) > 0 > math.copysign(1, fy))
    return x if (gt if want_max else lt) else y


@pytest.mark.parametrize("t", ["f32", "f16", "f64"])
@SETTINGS
@given(data=st.data())
def test_min_max_nan_rules(runner, t, data):
    d, x, y, _ = _regs(t)
    a, b = _draw(data, t, 2, 61)
    b = np.where(np.arange(N) % 5 == 0, a ^ np.uint64(1 << ({"f16": 15, "f32": 31, "f64": 63}[t])), b)
    for ieee in (1, 0):
        for name, mx in (("max", True), ("min", False)):
            got, _, _ = runner.run(f"v_{name}_{t} {d}, {x}, {y}", a, b, mode=mode_word(ieee=ieee))
            for i in range(N):
                want = ref_minmax(int(a[i]), int(b[i]), t, mx, bool(ieee))
                assert int(got[i]) == want, (name, t, ieee, hex(int(a[i])), hex(int(b[i])), hex(int(got[i])))


@pytest.mark.parametrize("t", ["f32", "f16"])
@SETTINGS
@given(data=st.data())
def test_min3_max3_med3_minmax(runner, t, data):
    a, b, c = _draw(data, t, 3, 71)

    def mn(p, q):
        return ref_minmax(p, q, t, False, True)

    def mx(p, q):
        return ref_minmax(p, q, t, True, True)

    def med3(p, q, r):
        fs = [float(np.array(v, UINT[t]).view(FLOAT[t])) for v in (p, q, r)]
        if any(map(math.isnan, fs)):
            return mn(mn(p, q), r)
        m = float(np.array(mx(mx(p, q), r), UINT[t]).view(FLOAT[t]))
        if m == fs[0]:
            return mx(q, r)
        if m == fs[1]:
            return mx(p, r)
        return mx(p, q)

    refs = {"min3": lambda p, q, r: mn(mn(p, q), r), "max3": lambda p, q, r: mx(mx(p, q), r), "med3": med3,
            "maxmin": lambda p, q, r: mn(mx(p, q), r), "minmax": lambda p, q, r: mx(mn(p, q), r)}
    for name, ref in refs.items():
        got, _, _ = runner.run(f"v_{name}_{t} v20, v10, v12, v14", a, b, c)
        for i in range(N):
            want = ref(int(a[i]), int(b[i]), int(c[i]))
            assert int(got[i]) == want, (name, hex(int(a[i])), hex(int(b[i])), hex(int(c[i])), hex(int(got[i])))


# ---------------------------------------------------------------------------------------------- division helpers


def _exp_field(v: float, t: str) -> int:
    bits = int(np.array(v, FLOAT[t]).view(UINT[t]))
    return (bits >> (23 if t == "f32" else 52)) & (0xFF if t == "f32" else 0x7FF)


def ref_div_scale(s0, s1, s2, t, dm=3):
    """(D, VCC) of V_DIV_SCALE, from the reference pseudo-code, on MODE's view of the operands (denorm
    mode dm: inputs flushed unless bit 0), with the hardware's VCC for zero operands and 1/S1 tested in
    the operand's type, scaling the denominator down (see test_sem_regressions)."""
    gap, k, tiny = (96, 64, 23) if t == "f32" else (768, 128, 53)
    tinyn = 2.0 ** (-126 if t == "f32" else -1022)
    if not dm & 1:
        s0, s1, s2 = flush(s0, t), flush(s1, t), flush(s2, t)

    def den(v):
        return v != 0 and math.isfinite(v) and abs(v) < tinyn

    def q_den():
        if s1 == 0 or not math.isfinite(s1) or math.isnan(s2):
            return False
        q = float(np.float64(s2) / np.float64(s1)) if t == "f64" else float(np.float32(s2 / s1))
        return den(q)

    with np.errstate(all="ignore"):
        rcp_den = s1 != 0 and math.isfinite(s1) and den(float(FLOAT[t](1.0 / s1)))
    with np.errstate(all="ignore"):
        up, down = (float(np.ldexp(FLOAT[t](s0), e).astype(FLOAT[t])) for e in (k, -k))
    if s2 == 0 or s1 == 0:
        return math.nan, True
    if _exp_field(s2, t) - _exp_field(s1, t) >= gap:
        return (up if s0 == s1 else s0), True
    if den(s1):
        return up, False
    if rcp_den and q_den():
        return (down if s0 == s1 else s0), True
    if rcp_den:
        return down, False
    if q_den():
        return (up if s0 == s2 else s0), True
    if _exp_field(s2, t) <= tiny:
        return up, False
    return s0, False


@pytest.mark.parametrize("t", ["f32", "f64"])
@SETTINGS
@given(data=st.data())
def test_div_scale(runner, t, data):
    d, x, y, z = _regs(t)
    a, b = _draw(data, t, 2, 81)
    fa, fb = as_float(a, t), as_float(b, t)
    for dm in (3, 0):
        for pick in ("den", "num"):
            s0 = a if pick == "den" else b
            got, vcc, _ = runner.run(f"v_div_scale_{t} {d}, vcc_lo, {x}, {y}, {z}", s0, a, b, mode=_mode(t, 0, dm))
            for i in range(N):
                want, wv = ref_div_scale(float(as_float(s0[i:i + 1], t)[0]), float(fa[i]), float(fb[i]), t, dm)
                assert same(int(got[i]), want, t) and bool(vcc[i]) == wv, (t, dm, pick, hex(int(a[i])),
                                                                          hex(int(b[i])))


def ref_div_fixup(q, den, num, t):
    neg = (math.copysign(1, den) < 0) != (math.copysign(1, num) < 0)
    s = -1.0 if neg else 1.0
    if math.isnan(num) or math.isnan(den):
        return math.nan
    if (den == 0 and num == 0) or (math.isinf(den) and math.isinf(num)):
        return math.nan
    if den == 0 or math.isinf(num):
        return s * math.inf
    if math.isinf(den) or num == 0:
        return s * 0.0
    if t != "f16" and _exp_field(num, t) - _exp_field(den, t) < (-150 if t == "f32" else -1075):
        return s * 0.0
    if t != "f16" and not math.isfinite(q):  # OVERFLOW: a NaN (or inf) quotient (test_sem_regressions)
        return s * math.inf
    return s * abs(q)


@pytest.mark.parametrize("t", ["f32", "f16", "f64"])
@SETTINGS
@given(data=st.data())
def test_div_fixup(runner, t, data):
    d, x, y, z = _regs(t)
    q, den, num = _draw(data, t, 3, 91)
    got, _, _ = runner.run(f"v_div_fixup_{t} {d}, {x}, {y}, {z}", q, den, num)
    _check(got, lambda a, b, c: ref_div_fixup(a, b, c, t), t, (q, den, num), "div_fixup")


@pytest.mark.parametrize("t", ["f32", "f64"])
@SETTINGS
@given(data=st.data())
def test_div_fmas(runner, t, data):
    d, x, y, z = _regs(t)
    a, b, c = _draw(data, t, 3, 101)
    got, _, _ = runner.run(f"v_div_fmas_{t} {d}, {x}, {y}, {z}", a, b, c)
    k, bias = (64, 127) if t == "f32" else (128, 1023)
    fa, fb, fc = (as_float(v, t) for v in (a, b, c))
    for i in range(N):
        p, q, r = float(fa[i]), float(fb[i]), float(fc[i])
        scaled = (0x5A5A33CC >> (i % 32)) & 1
        post = (k if _exp_field(r, t) > bias else -k) if scaled else 0
        if all(map(math.isfinite, (p, q, r))):
            ex = (Fraction(p) * Fraction(q) + Fraction(r)) * Fraction(2) ** post
            want = round_fraction(ex, t, 0) if ex else ref_fma(p, q, r, t, 0, 3)
            want = math.copysign(0.0, ex) if want == 0 and ex else want
        else:
            want = p * q + r
        assert same(int(got[i]), want, t), (t, i, p, q, r, hex(int(got[i])), want)


# ---------------------------------------------------------------------------------------------- cube maps


def ref_cube(x, y, z):
    """(id, sc, tc, ma) of the reference's cube-map ops."""
    if abs(z) >= abs(x) and abs(z) >= abs(y):
        return (5.0 if z < 0 else 4.0), (-x if z < 0 else x), -y, 2 * z
    if abs(y) >= abs(x):
        return (3.0 if y < 0 else 2.0), x, (-z if y < 0 else z), 2 * y
    return (1.0 if x < 0 else 0.0), (z if x < 0 else -z), -y, 2 * x


@SETTINGS
@given(data=st.data())
def test_cube_ops(runner, data):
    a, b, c = _draw(data, "f32", 3, 111)
    for k, name in enumerate(("cubeid", "cubesc", "cubetc", "cubema")):
        got, _, _ = runner.run(f"v_{name}_f32 v20, v10, v12, v14", a, b, c)
        with np.errstate(over="ignore"):  # references past the f32 range round to inf, as the hardware does
            _check(got, lambda x, y, z, k=k: float(np.float32(ref_cube(x, y, z)[k])), "f32", (a, b, c), name)
