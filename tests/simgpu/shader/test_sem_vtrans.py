"""VALU transcendentals against numpy float64 within the RDNA3 ISA reference's documented accuracy
(f32 rcp/rsq/sqrt/exp/log: 1 ULP; f16: 0.51 ULP; f64 rcp/rsq/sqrt: well inside 2**29 ULP), the
reference's functional examples bit-exactly, sin/cos in revolutions, f32 denormal flushing, and
v_trig_preop_f64 against 2/pi computed independently with exact rationals."""

from __future__ import annotations

import math
import zlib
from fractions import Fraction

import numpy as np
import pytest

from simgpu.testbed import Testbed
from tests.support.vfloat_harness import FLOAT, UINT, Runner, as_float

N = 2048
REG = {"f16": ("v20", "v10"), "f32": ("v20", "v10"), "f64": ("v[20:21]", "v[10:11]")}


@pytest.fixture(scope="module")
def runner():
    return Runner(Testbed(vram_size=1 << 28))


def _ref(name, x):
    with np.errstate(all="ignore"):
        return {"rcp": lambda: 1.0 / x, "rsq": lambda: 1.0 / np.sqrt(x), "sqrt": lambda: np.sqrt(x),
                "exp": lambda: np.exp2(x), "log": lambda: np.log2(x),
                "sin": lambda: np.sin(2 * np.pi * np.fmod(x, 1.0)),
                "cos": lambda: np.cos(2 * np.pi * np.fmod(x, 1.0))}[name]()


def _ulp(x: np.ndarray, t: str) -> np.ndarray:
    with np.errstate(over="ignore"):  # references past the type's range: their ulp is inf's
        ax = np.abs(x).astype(FLOAT[t])
    return (np.nextafter(ax, FLOAT[t](np.inf)).astype(np.float64) - ax.astype(np.float64))


def _inputs(name, t, rng):
    lo, hi = {"rcp": (-30, 30), "rsq": (-30, 30), "sqrt": (-30, 30), "exp": (-6, 6), "log": (-30, 30),
              "sin": (-8, 4), "cos": (-8, 4)}[name]
    if t == "f16":
        lo, hi = max(lo, -13), min(hi, 14)
    mag = np.exp2(rng.uniform(lo, hi, N)) * (rng.random(N) + 0.5)
    sign = -1.0 if name in ("sin", "cos", "exp") else 1.0
    x = np.where(rng.random(N) < 0.5, sign, 1.0) * mag
    return x.astype(FLOAT[t])


MEASURED = {}


@pytest.mark.parametrize("t,name,tol", [
    ("f32", "rcp", 1.0), ("f32", "rsq", 1.0), ("f32", "sqrt", 1.0), ("f32", "exp", 1.0), ("f32", "log", 1.0),
    ("f32", "sin", 1.0), ("f32", "cos", 1.0), ("f16", "rcp", 0.51), ("f16", "rsq", 0.51), ("f16", "sqrt", 0.51),
    ("f16", "exp", 0.51), ("f16", "log", 0.51), ("f16", "sin", 0.51), ("f16", "cos", 0.51),
    ("f64", "rcp", 1.0), ("f64", "rsq", 1.0), ("f64", "sqrt", 1.0)])
def test_accuracy_vs_numpy(runner, t, name, tol):
    x = _inputs(name, t, np.random.default_rng(zlib.crc32(f"{t}{name}".encode())))
    d, s = REG[t]
    got, _, _ = runner.run(f"v_{name}_{t} {d}, {s}", x.view(UINT[t]).astype(np.uint64))
    g = as_float(got, t).astype(np.float64)
    want = _ref(name, x.astype(np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(g == want.astype(FLOAT[t]), 0.0, np.abs(g - want) / _ulp(want, t))  # equal: also both infinite
    # near the zeros of sin/cos the absolute error of the f64 reference dominates: compare absolutely there
    small = np.abs(want) < 2.0 ** -10
    err = np.where(small & (np.abs(g - want) < _ulp(np.array(2.0 ** -10), t)), 0, err)
    MEASURED[(t, name)] = float(np.max(err))
    assert np.max(err) <= tol, (t, name, float(np.max(err)), x[np.argmax(err)])


EXAMPLES = {  # the reference's functional examples: (op, input bits, result bits)
    "f32": [("exp", 0xFF800000, 0), ("exp", 0x80000000, 0x3F800000), ("exp", 0x7F800000, 0x7F800000),
            ("log", 0xFF800000, 0xFFC00000), ("log", 0xBF800000, 0xFFC00000), ("log", 0x80000000, 0xFF800000),
            ("log", 0, 0xFF800000), ("log", 0x3F800000, 0), ("log", 0x7F800000, 0x7F800000),
            ("rcp", 0xFF800000, 0x80000000), ("rcp", 0xC0000000, 0xBF000000), ("rcp", 0x80000000, 0xFF800000),
            ("rcp", 0, 0x7F800000), ("rcp", 0x7F800000, 0), ("rsq", 0xFF800000, 0xFFC00000),
            ("rsq", 0x80000000, 0xFF800000), ("rsq", 0, 0x7F800000), ("rsq", 0x40800000, 0x3F000000),
            ("rsq", 0x7F800000, 0), ("sqrt", 0xFF800000, 0xFFC00000), ("sqrt", 0x80000000, 0x80000000),
            ("sqrt", 0, 0), ("sqrt", 0x40800000, 0x40000000), ("sqrt", 0x7F800000, 0x7F800000),
            ("sin", 0xFF800000, 0xFFC00000), ("sin", 0xFF7FFFFF, 0), ("sin", 0x80000000, 0x80000000),
            ("sin", 0x3E800000, 0x3F800000), ("sin", 0x7F800000, 0xFFC00000), ("cos", 0xFF800000, 0xFFC00000),
            ("cos", 0xFF7FFFFF, 0x3F800000), ("cos", 0x80000000, 0x3F800000), ("cos", 0x3E800000, 0),
            ("cos", 0x7F800000, 0xFFC00000)],
    "f16": [("rcp", 0xFC00, 0x8000), ("rcp", 0xC000, 0xB800), ("rcp", 0x8000, 0xFC00), ("rcp", 0, 0x7C00),
            ("rcp", 0x7C00, 0), ("sqrt", 0xFC00, 0xFE00), ("sqrt", 0x8000, 0x8000), ("sqrt", 0x4400, 0x4000),
            ("rsq", 0x8000, 0xFC00), ("rsq", 0x4400, 0x3800), ("log", 0x8000, 0xFC00), ("log", 0x3C00, 0),
            ("exp", 0xFC00, 0), ("exp", 0x8000, 0x3C00), ("sin", 0xFBFF, 0), ("sin", 0x3400, 0x3C00),
            ("sin", 0x7BFF, 0), ("cos", 0xFBFF, 0x3C00), ("cos", 0x3400, 0), ("cos", 0x7C00, 0xFE00)],
}


@pytest.mark.parametrize("t", ["f32", "f16"])
def test_reference_examples(runner, t):
    mask = 0xFFFF if t == "f16" else 0xFFFFFFFF
    for name, x, want in EXAMPLES[t]:
        got, _, _ = runner.run(f"v_{name}_{t} v20, v10", np.full(256, x, np.uint64))
        g = int(got[0]) & mask
        gv = float(np.array(g, UINT[t]).view(FLOAT[t]))
        if math.isnan(gv):  # NaN results: any quiet NaN of the reference's sign-agnostic kind
            assert math.isnan(float(np.array(want, UINT[t]).view(FLOAT[t]))), (name, hex(x))
        else:
            assert g == want, (t, name, hex(x), hex(g), hex(want))


def test_f32_denormals_flushed(runner):
    x = np.array([1, 0x807FFFFF, 0x00400000], np.uint64).repeat(256 // 3 + 1)[:256]
    got, _, _ = runner.run("v_rcp_f32 v20, v10", x)
    assert set(int(v) & 0xFFFFFFFF for v in got) <= {0x7F800000, 0xFF800000}  # 1/+-0
    got, _, _ = runner.run("v_exp_f32 v20, v10", np.full(256, 0xC3100000, np.uint64))  # 2**-144: denormal
    assert int(got[0]) & 0xFFFFFFFF == 0
    got, _, _ = runner.run("v_sin_f32 v20, v10", np.full(256, 1, np.uint64))  # sin keeps denormals
    assert int(got[0]) & 0xFFFFFFFF != 0


def _two_over_pi(bits: int) -> int:
    """floor(2/pi * 2**bits) from the BBP-free arctan series of pi/4 = atan(1/2) + atan(1/3), exactly."""
    def atan_inv(k, terms):
        return sum(Fraction((-1) ** n, (2 * n + 1) * k ** (2 * n + 1)) for n in range(terms))
    terms = bits // 2 + 40  # atan(1/2) gains two bits a term
    pi_lo = 4 * (atan_inv(2, terms) + atan_inv(3, terms))
    q = Fraction(2) / pi_lo * 2 ** bits
    return q.numerator // q.denominator


def test_trig_preop_segments(runner):
    v = _two_over_pi(1201)  # the reference's table: 1201 fraction bits, zeros beyond
    x = np.array([1.0, 3.0, 2.0 ** 60, 2.0 ** 600, 2.0 ** 1000, 1e-300], np.float64)
    sel = np.arange(32)
    a = np.repeat(x, 32).view(np.uint64)
    b = np.tile(sel, len(x)).astype(np.uint64)
    got, _, _ = runner.run("v_trig_preop_f64 v[20:21], v[10:11], v12", a, b)
    for i in range(len(a)):
        e = (int(a[i]) >> 52) & 0x7FF
        shift = 53 * int(b[i]) + max(e - 1077, 0)
        down = 1201 - 53 - shift
        seg = ((v >> down) if down >= 0 else (v << -down)) & ((1 << 53) - 1)
        want = math.ldexp(seg, -53 - shift + (128 if e >= 1968 else 0))
        assert float(got[i:i + 1].view(np.float64)[0]) == want, (i, int(b[i]), e)
