"""VALU conversions, rounding ops and float compares against reference models written from the RDNA3
ISA reference: every v_cvt_* (truncation, saturation, NaN -> 0, MODE round modes and denormals),
trunc/ceil/floor/rndne/fract/frexp, and v_cmp/v_cmpx (16 predicates, class) on f16/f32/f64."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu.testbed import Testbed
from tests.support.vfloat_harness import FLOAT, UINT, Runner, as_float, flush, lanes, mode_word, round_fraction, same

N = 512
SETTINGS = settings(max_examples=2, deadline=None, derandomize=True)
REG = {"f16": "v10", "f32": "v10", "f64": "v[10:11]"}
DST = {"f16": "v20", "f32": "v20", "f64": "v[20:21]", "i32": "v20", "u32": "v20", "i16": "v20", "u16": "v20"}
IRANGE = {"i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1), "i16": (-2**15, 2**15 - 1), "u16": (0, 2**16 - 1),
          "u8": (0, 255)}


@pytest.fixture(scope="module")
def runner():
    return Runner(Testbed(vram_size=1 << 28))


def ref_to_int(v: float, it: str) -> int:
    """Truncate toward zero, saturate (infinities too), NaN -> 0."""
    lo, hi = IRANGE[it]
    if math.isnan(v):
        return 0
    if math.isinf(v):
        return hi if v > 0 else lo
    return min(max(math.trunc(v), lo), hi)


def _bits(v: int, it: str) -> int:
    return v & ((1 << (16 if "16" in it else 32)) - 1)


# ---------------------------------------------------------------------------------------------- float -> int


@pytest.mark.parametrize("t,it", [("f32", "i32"), ("f32", "u32"), ("f64", "i32"), ("f64", "u32"),
                                  ("f16", "i16"), ("f16", "u16")])
@SETTINGS
@given(data=st.data())
def test_float_to_int(runner, t, it, data):
    a = lanes(data, t, N, 1)
    got, _, _ = runner.run(f"v_cvt_{it}_{t} v20, {REG[t]}", a)
    mask = 0xFFFF if "16" in it else 0xFFFFFFFF
    for i, v in enumerate(as_float(a, t)):
        want = _bits(ref_to_int(float(v), it), it)
        assert int(got[i]) & mask == want, (t, it, hex(int(a[i])), float(v), hex(int(got[i])))


@SETTINGS
@given(data=st.data())
def test_floor_nearest_and_packs(runner, data):
    a, b = lanes(data, "f32", N, 2), lanes(data, "f32", N, 3)
    fa, fb = as_float(a, "f32"), as_float(b, "f32")
    got, _, _ = runner.run("v_cvt_floor_i32_f32 v20, v10", a)
    for i, v in enumerate(fa):
        want = ref_to_int(math.floor(v) if math.isfinite(v) else float(v), "i32")
        assert int(got[i]) == _bits(want, "i32"), ("floor", float(v))
    got, _, _ = runner.run("v_cvt_nearest_i32_f32 v20, v10", a)
    for i, v in enumerate(fa):
        with np.errstate(invalid="ignore"):  # inf + 0.5 and NaN inputs are part of the data
            s = float(np.float32(v) + np.float32(0.5))  # the reference adds 0.5 in f32
        want = ref_to_int(math.floor(s) if math.isfinite(s) else s, "i32")
        assert int(got[i]) == _bits(want, "i32"), ("nearest", float(v))
    for name, it in (("i16", "i16"), ("u16", "u16")):
        got, _, _ = runner.run(f"v_cvt_pk_{name}_f32 v20, v10, v12", a, b)
        for i in range(N):
            want = _bits(ref_to_int(float(fa[i]), it), it) | (_bits(ref_to_int(float(fb[i]), it), it) << 16)
            assert int(got[i]) & 0xFFFFFFFF == want, (name, float(fa[i]), float(fb[i]))
    byte = np.arange(N, dtype=np.uint64) % 4
    acc = np.full(N, 0xA5A5A5A5, np.uint64)
    got, _, _ = runner.run("v_cvt_pk_u8_f32 v20, v10, v12, v14", a, byte, acc)
    for i in range(N):
        sh = 8 * int(byte[i])
        want = (0xA5A5A5A5 & ~(0xFF << sh)) | (ref_to_int(float(fa[i]), "u8") << sh)
        assert int(got[i]) & 0xFFFFFFFF == want, ("pk_u8", float(fa[i]), int(byte[i]))


def _snorm(v: float) -> int:
    v = 0.0 if math.isnan(v) else min(max(v, -1.0), 1.0)
    return round(v * 32767) & 0xFFFF  # Python's round() is ties-to-even


def _unorm(v: float) -> int:
    v = 0.0 if math.isnan(v) else min(max(v, 0.0), 1.0)
    return round(v * 65535)


@pytest.mark.parametrize("t", ["f16", "f32"])
@SETTINGS
@given(data=st.data())
def test_norm_conversions(runner, t, data):
    a, b = lanes(data, t, N, 4), lanes(data, t, N, 5)
    frac = np.random.default_rng(6).uniform(-1.2, 1.2, N).astype(FLOAT[t]).view(UINT[t]).astype(np.uint64)
    a = np.where(np.arange(N) % 2 == 0, frac, a)
    fa, fb = as_float(a, t), as_float(b, t)
    for name, f in (("i16", _snorm), ("u16", _unorm)):
        got, _, _ = runner.run(f"v_cvt_pk_norm_{name}_{t} v20, v10, v12", a, b)
        for i in range(N):
            want = f(float(fa[i])) | (f(float(fb[i])) << 16)
            assert int(got[i]) & 0xFFFFFFFF == want, (name, t, float(fa[i]), float(fb[i]), hex(int(got[i])))
        if t == "f16":
            got, _, _ = runner.run(f"v_cvt_norm_{name}_f16 v20, v10", a)
            for i in range(N):
                assert int(got[i]) & 0xFFFF == f(float(fa[i])), (name, float(fa[i]))


# ---------------------------------------------------------------------------------------------- to float


def _ref_round(v, src, dst, rnd, dm_src=3, dm_dst=3):
    if not dm_src & 1 and src in FLOAT:
        v = flush(v, src)
    if not math.isfinite(v) or v == 0:
        return v
    r = round_fraction(Fraction(v), dst, rnd)
    r = math.copysign(0.0, v) if r == 0 else r
    return flush(r, dst) if not dm_dst & 2 else r


@pytest.mark.parametrize("src,dst", [("f32", "f16"), ("f64", "f32"), ("f16", "f32"), ("f32", "f64")])
@SETTINGS
@given(data=st.data())
def test_float_to_float_modes(runner, src, dst, data):
    a = lanes(data, src, N, 7)
    for rnd in range(4):
        for dm in (3, 0):
            # the destination type's round mode applies; each side's denorm mode applies to its side
            mode = mode_word(round32=rnd if dst == "f32" else 0, round64=rnd if dst != "f32" else 0,
                             denorm32=dm, denorm64=dm)
            got, _, _ = runner.run(f"v_cvt_{dst}_{src} {DST[dst]}, {REG[src]}", a, mode=mode)
            for i, v in enumerate(as_float(a, src)):
                want = _ref_round(float(v), src, dst, rnd, dm, dm)
                assert same(int(got[i]), want, dst), (src, dst, rnd, dm, hex(int(a[i])), hex(int(got[i])), want)


@pytest.mark.parametrize("it,dst", [("i32", "f32"), ("u32", "f32"), ("i32", "f64"), ("u32", "f64"),
                                    ("i16", "f16"), ("u16", "f16")])
def test_int_to_float_modes(runner, it, dst):
    rng = np.random.default_rng(8)
    bits = 16 if "16" in it else 32
    a = rng.integers(0, 1 << bits, N, dtype=np.uint64)
    a[:6] = [0, 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1, 16777217 & ((1 << bits) - 1)]
    for rnd in range(4):
        mode = mode_word(round32=rnd if dst == "f32" else 0, round64=rnd if dst != "f32" else 0)
        got, _, _ = runner.run(f"v_cvt_{dst}_{it} {DST[dst]}, v10", a, mode=mode)
        for i in range(N):
            v = int(a[i])
            v = v - (1 << bits) if it[0] == "i" and v >> (bits - 1) else v
            want = round_fraction(Fraction(v), dst, rnd) if v else 0.0
            assert same(int(got[i]), want, dst), (it, dst, rnd, v, hex(int(got[i])))


def test_small_conversions(runner):
    a = np.random.default_rng(9).integers(0, 1 << 32, N, dtype=np.uint64)
    for k in range(4):
        got, _, _ = runner.run(f"v_cvt_f32_ubyte{k} v20, v10", a)
        want = ((a >> np.uint64(8 * k)) & np.uint64(255)).astype(np.float32).view(np.uint32)
        assert np.array_equal(got.astype(np.uint32), want)
    got, _, _ = runner.run("v_cvt_off_f32_i4 v20, v10", a)
    nib = (a & np.uint64(15)).astype(np.int64)
    want = (np.where(nib >= 8, nib - 16, nib) / 16.0).astype(np.float32).view(np.uint32)
    assert np.array_equal(got.astype(np.uint32), want)


@SETTINGS
@given(data=st.data())
def test_pk_rtz(runner, data):
    a, b = lanes(data, "f32", N, 10), lanes(data, "f32", N, 11)
    got, _, _ = runner.run("v_cvt_pk_rtz_f16_f32 v20, v10, v12", a, b, mode=mode_word(round64=1))
    for i in range(N):
        for half, x in ((0, a), (1, b)):
            want = _ref_round(float(as_float(x[i:i + 1], "f32")[0]), "f32", "f16", 3)
            assert same((int(got[i]) >> (16 * half)) & 0xFFFF, want, "f16"), ("rtz", hex(int(x[i])))


# ---------------------------------------------------------------------------------------------- rounding ops


def ref_round_op(name: str, v: float, t: str) -> float:
    if not math.isfinite(v):
        return v
    if name == "trunc":
        r = float(math.trunc(v))
    elif name == "floor":
        r = float(math.floor(v))
    elif name == "ceil":
        r = float(math.ceil(v))
    else:
        r = float(round(v))  # ties to even
    return math.copysign(r, v) if r == 0 else r


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
@SETTINGS
@given(data=st.data())
def test_rounding_ops_fract_frexp(runner, t, data):
    a = lanes(data, t, N, 12)
    halves = (np.random.default_rng(13).integers(-40, 40, N) + 0.5).astype(FLOAT[t]).view(UINT[t]).astype(np.uint64)
    a = np.where(np.arange(N) % 4 == 0, halves, a)
    fa = as_float(a, t)
    for name in ("trunc", "floor", "ceil", "rndne"):
        got, _, _ = runner.run(f"v_{name}_{t} {DST[t]}, {REG[t]}", a)
        for i, v in enumerate(fa):
            assert same(int(got[i]), ref_round_op(name, float(v), t), t), (name, t, float(v), hex(int(got[i])))
    got, _, _ = runner.run(f"v_fract_{t} {DST[t]}, {REG[t]}", a)
    below_one = float(np.nextafter(FLOAT[t](1), FLOAT[t](0)))
    for i, v in enumerate(fa):
        v = float(v)
        want = math.nan if not math.isfinite(v) else \
            min(round_fraction(Fraction(v) - math.floor(v), t, 0), below_one)
        assert same(int(got[i]), want, t), ("fract", t, v, hex(int(got[i])))
    it = "i16" if t == "f16" else "i32"
    got_m, _, _ = runner.run(f"v_frexp_mant_{t} {DST[t]}, {REG[t]}", a)
    got_e, _, _ = runner.run(f"v_frexp_exp_{it}_{t} v20, {REG[t]}", a)
    for i, v in enumerate(fa):
        v = float(v)
        m, e = math.frexp(v) if math.isfinite(v) else (v, 0)
        assert same(int(got_m[i]), m, t), ("frexp_mant", t, v)
        assert int(got_e[i]) & (0xFFFF if t == "f16" else 0xFFFFFFFF) == _bits(e, it), ("frexp_exp", t, v)


# ---------------------------------------------------------------------------------------------- compares

PREDICATES = {
    "f": lambda a, b: False, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "lg": lambda a, b: a < b or a > b, "ge": lambda a, b: a >= b,
    "o": lambda a, b: not (math.isnan(a) or math.isnan(b)), "u": lambda a, b: math.isnan(a) or math.isnan(b),
    "nge": lambda a, b: not a >= b, "nlg": lambda a, b: not (a < b or a > b), "ngt": lambda a, b: not a > b,
    "nle": lambda a, b: not a <= b, "neq": lambda a, b: not a == b, "nlt": lambda a, b: not a < b,
    "t": lambda a, b: True,
}


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
@SETTINGS
@given(data=st.data())
def test_compares_vcc_sgpr_and_exec(runner, t, data):
    a, b = lanes(data, t, N, 14), lanes(data, t, N, 15)
    b = np.where(np.arange(N) % 3 == 0, a, b)
    fa, fb = as_float(a, t), as_float(b, t)
    y = "v[12:13]" if t == "f64" else "v12"
    for k, (name, pred) in enumerate(PREDICATES.items()):
        want = np.array([pred(float(fa[i]), float(fb[i])) for i in range(N)])
        form = k % 3
        if form == 0:
            _, vcc, _ = runner.run(f"v_cmp_{name}_{t}_e32 vcc_lo, {REG[t]}, {y}", a, b)
        elif form == 1:  # VOP3 form into an SGPR, read back through VCC
            _, vcc, _ = runner.run(f"v_cmp_{name}_{t}_e64 s30, {REG[t]}, {y}\ns_mov_b32 vcc_lo, s30", a, b)
        else:
            _, _, vcc = runner.run(f"v_cmpx_{name}_{t}_e32 {REG[t]}, {y}", a, b)
        assert np.array_equal(vcc, want), (name, t, form, np.flatnonzero(vcc != want)[:5])


def ref_class(v: float, bits: int, t: str) -> int:
    mant = {"f16": 10, "f32": 23, "f64": 52}[t]
    tiny = 2.0 ** {"f16": -14, "f32": -126, "f64": -1022}[t]
    neg = math.copysign(1, v) < 0
    if math.isnan(v):
        return 1 if (bits >> (mant - 1)) & 1 else 0
    if math.isinf(v):
        return 2 if neg else 9
    if v == 0:
        return 5 if neg else 6
    if abs(v) < tiny:
        return 4 if neg else 7
    return 3 if neg else 8


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
@SETTINGS
@given(data=st.data())
def test_cmp_class(runner, t, data):
    a = lanes(data, t, N, 16)
    masks = np.random.default_rng(17).integers(0, 1 << 10, N, dtype=np.uint64)
    masks[:10] = [1 << k for k in range(10)]
    _, vcc, _ = runner.run(f"v_cmp_class_{t}_e32 vcc_lo, {REG[t]}, v12", a, masks)
    _, _, ex = runner.run(f"v_cmpx_class_{t}_e64 {REG[t]}, v12", a, masks)
    for i, v in enumerate(as_float(a, t)):
        want = bool((int(masks[i]) >> ref_class(float(v), int(a[i]), t)) & 1)
        assert vcc[i] == want and ex[i] == want, (t, hex(int(a[i])), hex(int(masks[i])))
