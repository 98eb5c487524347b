"""v_exp/v_log/v_sin/v_cos (f16, f32): the fixed algorithms of vector.elementary against NumPy's long double
(x87 80-bit, 64-bit significand: the host C library's exp2l/log2l/sinl) within the ISA reference's bounds (f32 1
ULP, f16 0.51 ULP) over every f16 input and over a million f32 inputs per opcode with the edge cases; exp2 of
integers and log2 of powers of two exact; the specials; and both tiers bit for bit on the same inputs, the JIT
running them natively."""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.shader.semantics import implemented
from simgpu.shader.vector.valu import SPECS
from tests.support import tiers
from tests.support.vfloat_harness import Runner

LD = np.longdouble
UINT = {"f16": np.uint16, "f32": np.uint32}
FLOAT = {"f16": np.float16, "f32": np.float32}
FORMAT = {"f16": (11, -14), "f32": (24, -126)}  # significand bits, smallest normal exponent
TOL = {"f16": 0.51, "f32": 1.0}
TWO_PI = 8 * np.arctan(LD(1))


@pytest.fixture(scope="module", autouse=True)
def _setup():
    assert np.finfo(LD).nmant >= 63, "the oracle needs an extended long double"
    implemented()


def _kernel(name: str, t: str, x: np.ndarray) -> np.ndarray:
    """The interpreter's kernel (generated from the definition) over x."""
    with np.errstate(all="ignore"):
        return SPECS[f"v_{name}_{t}"].fn(None, x.reshape(-1, 1)).reshape(-1)


def _quarter(r: np.ndarray) -> np.ndarray:
    """A revolution r in [-1/2, 1/2] folded into [-1/4, 1/4] with the same sine (sin(pi - a) = sin(a)), exactly."""
    return np.where(np.abs(r) > 0.25, np.copysign(LD(0.5) - np.abs(r), r), r)


def _exact(name: str, x: np.ndarray) -> np.ndarray:
    """The long double reference (finite, nonzero-domain inputs)."""
    w = x.astype(LD)
    if name == "exp":
        return np.exp2(w)
    if name == "log":
        return np.log2(w)
    r = w - np.rint(w)  # (exact)
    if name == "sin":
        return np.sin(TWO_PI * _quarter(r))
    return np.sin(TWO_PI * (LD(0.25) - np.abs(r)))  # cos(2 pi r) = sin(2 pi (1/4 - |r|))


def _ulps(got: np.ndarray, exact: np.ndarray, t: str) -> np.ndarray:
    """|got - exact| in ULPs of t at exact (the subnormal spacing below the smallest normal)."""
    p, emin = FORMAT[t]
    _, e = np.frexp(exact)
    ulp = np.ldexp(LD(1), np.maximum(e.astype(np.int64) - 1, emin) - (p - 1))
    return np.abs(got.astype(LD) - exact) / ulp


def _check(name: str, t: str, x: np.ndarray) -> float:
    """The largest error over the inputs whose result is finite and not flushed (each of the others checked)."""
    got = _kernel(name, t, x)
    with np.errstate(all="ignore"):
        exact = _exact(name, x)
    finite = np.isfinite(x) & np.isfinite(got)
    if t == "f32" and name in ("exp", "log"):  # results below the smallest normal flush to +0
        flushed = finite & (got == 0) & (exact != 0)
        assert (np.abs(exact[flushed]) < LD(2.0 ** -126)).all() and not np.signbit(got[flushed]).any()
        finite &= ~flushed
    if name == "exp":  # an overflow only where the exact value rounds past the largest finite
        big = np.isinf(got) & np.isfinite(x)
        top = LD(np.finfo(FLOAT[t]).max) * (1 + LD(2.0) ** -FORMAT[t][0])
        assert (exact[big] >= top).all()
    err = _ulps(got[finite], exact[finite], t)
    worst = int(np.argmax(err))
    assert err[worst] <= TOL[t], (name, t, float(err[worst]), x[finite][worst])
    return float(err[worst])


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos"])
def test_every_f16_input_within_the_bound(name):
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    if name == "log":
        x = x[~np.signbit(x) & (x != 0)]
    _check(name, "f16", x)


def _f32_inputs(name: str, rng: np.random.Generator) -> np.ndarray:
    """A million and more f32 inputs: random bits, the opcode's working range with random significands, and the
    edges (denormals, binade ends, the largest finite)."""
    n = 1 << 19
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    edges = np.array([1, 0x007FFFFF, 0x00800000, 0x00800001, 0x7F7FFFFF, 0x3F7FFFFF, 0x3F800001, 0x3F800000,
                      0x3EFFFFFF, 0x3F000000, 0x3E800000, 0x3E7FFFFF, 0x3E800001, 0x4B000001, 0x4AFFFFFF], np.uint32)
    edges = np.concatenate([edges, edges | 0x80000000])
    if name == "exp":
        span = rng.uniform(-151, 129, n)
    elif name == "log":
        span = np.exp2(rng.uniform(-150, 128, n))
        bits = bits & 0x7FFFFFFF
    else:
        span = rng.choice([-1.0, 1.0], n) * np.exp2(rng.uniform(-40, 24, n))
    x = np.concatenate([bits.view(np.float32), span.astype(np.float32), edges.view(np.float32)])
    return x[np.isfinite(x) & ((x > 0) if name == "log" else True)]


@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos"])
def test_a_million_f32_inputs_within_the_bound(name):
    x = _f32_inputs(name, np.random.default_rng(len(name) * 7 + ord(name[0])))
    assert len(x) >= 1_000_000
    _check(name, "f32", x)


@pytest.mark.parametrize("t", ["f16", "f32"])
def test_exp2_of_integers_and_log2_of_powers_of_two_are_exact(t):
    p, emin = FORMAT[t]
    lo = emin - (p - 1)  # the smallest denormal's exponent
    n = np.arange(lo, -emin + 2)  # up to the largest finite's exponent
    flushed = t == "f32"
    got = _kernel("exp", t, n.astype(FLOAT[t]))
    want = np.where((n < emin) & flushed, 0, np.ldexp(1.0, n)).astype(FLOAT[t])
    assert np.array_equal(got.view(UINT[t]), want.view(UINT[t]))
    k = n[n >= emin] if flushed else n  # every power of two the type holds (f32's denormals flush: -inf)
    got = _kernel("log", t, np.ldexp(1.0, k).astype(FLOAT[t]))
    assert np.array_equal(got.view(UINT[t]), k.astype(FLOAT[t]).view(UINT[t]))


with np.errstate(invalid="ignore"):
    HOST_NAN = {t: int((FLOAT[t](np.inf) - FLOAT[t](np.inf)).view(UINT[t])) for t in FLOAT}


def test_specials():
    """NaN sources give themselves quieted (sign and payload kept); a NaN made from numbers is the host's default
    NaN; infinities, zeros and f32 denormals (flushed for exp/log, kept for sin/cos) as the reference says."""
    f32 = {"exp": [(0xFF800000, 0), (0x7F800000, 0x7F800000), (0x80000000, 0x3F800000), (0x807FFFFF, 0x3F800000),
                   (0xC3100000, 0), (0x7FA00001, 0x7FE00001), (0xFF800001, 0xFFC00001)],
           "log": [(0, 0xFF800000), (0x80000000, 0xFF800000), (0x00400000, 0xFF800000), (0x7F800000, 0x7F800000),
                   (0x3F800000, 0), (0xBF800000, HOST_NAN["f32"]), (0xFF800000, HOST_NAN["f32"]),
                   (0x807FFFFF, 0xFF800000), (0xFFA00002, 0xFFE00002)],
           "sin": [(0x7F800000, HOST_NAN["f32"]), (0xFF800000, HOST_NAN["f32"]), (0x80000000, 0x80000000),
                   (0x3F000000, 0), (0xBF000000, 0x80000000), (0x3E800000, 0x3F800000), (0xBE800000, 0xBF800000),
                   (0x7FA00001, 0x7FE00001), (0xFF800001, 0xFFC00001), (0x4B7FFFFF, 0), (0xCB7FFFFF, 0)],
           "cos": [(0x7F800000, HOST_NAN["f32"]), (0xFF800000, HOST_NAN["f32"]), (0x80000000, 0x3F800000),
                   (0x3E800000, 0), (0xBE800000, 0), (0x3F000000, 0xBF800000), (0xFF800001, 0xFFC00001),
                   (0x7F7FFFFF, 0x3F800000)]}
    for name, cases in f32.items():
        x = np.array([c[0] for c in cases], np.uint32).view(np.float32)
        got = [hex(int(v)) for v in _kernel(name, "f32", x).view(np.uint32)]
        assert got == [hex(c[1]) for c in cases], name
    sin_denormal = _kernel("sin", "f32", np.array([1], np.uint32).view(np.float32)).view(np.uint32)
    assert sin_denormal[0] == 6  # 2 pi * 2**-149, rounded to nearest: 6.28 -> 6 denormal units
    f16 = {"exp": [(0xFC00, 0), (0x7C00, 0x7C00), (0x8000, 0x3C00), (0xCE00, 0x0001), (0xCE40, 0), (0x4C00, 0x7C00)],
           "log": [(0x8000, 0xFC00), (0x0001, 0xCE00), (0xBC00, HOST_NAN["f16"]), (0x7D01, 0x7F01)],
           "sin": [(0x7C00, HOST_NAN["f16"]), (0x0001, 0x0006), (0x3400, 0x3C00)],
           "cos": [(0x3400, 0), (0xFC01, 0xFE01), (0x3800, 0xBC00)]}
    for name, cases in f16.items():
        x = np.array([c[0] for c in cases], np.uint16).view(np.float16)
        got = [hex(int(v)) for v in _kernel(name, "f16", x).view(np.uint16)]
        assert got == [hex(c[1]) for c in cases], name


def _tier_inputs(t: str) -> np.ndarray:
    if t == "f16":
        return np.arange(1 << 16, dtype=np.uint64)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.integers(0, 1 << 32, 1 << 15, dtype=np.uint64).astype(np.uint32),
                        rng.uniform(-160, 140, 1 << 15).astype(np.float32).view(np.uint32),
                        (rng.choice([-1.0, 1.0], 1 << 15) * np.exp2(rng.uniform(-150, 30, 1 << 15)))
                        .astype(np.float32).view(np.uint32),
                        np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFA00001, 1, 0x807FFFFF,
                                  0x3E800000, 0x3F000000, 0x7F7FFFFF, 0x3F800000], np.uint32)])
    return x.astype(np.uint64)


@pytest.mark.parametrize("t", ["f16", "f32"])
def test_both_tiers_agree_bit_for_bit(t):
    """Every f16 input, 98k f32 ones (random bits, the working ranges, specials), plain and with the e64 source
    modifiers and output modifiers; the JIT runs every instruction natively (no callback to the interpreter)."""
    x = _tier_inputs(t)
    v = "v10"
    insts = [f"v_{name}_{t} v20, {v}" for name in ("exp", "log", "sin", "cos")]
    insts += [f"v_{name}_{t}_e64 v20, -|{v}| clamp" for name in ("exp", "sin")]
    insts += [f"v_{name}_{t}_e64 v20, {v} mul:2" for name in ("log", "cos")]
    results = []
    for tier in ("interpreter", "jit"):
        tb = tiers.testbed(tier)
        runner = Runner(tb)
        results.append([runner.run(inst, x)[0] for inst in insts])
        if tier == "jit":
            stats = tb.engine.jit.stats
            assert stats.native_instructions > 0 and stats.callbacks == 0 and not stats.failures
    for inst, a, b in zip(insts, *results, strict=True):
        assert np.array_equal(a, b), (inst, int((a != b).sum()))
