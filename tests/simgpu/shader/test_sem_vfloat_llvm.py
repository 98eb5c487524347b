"""LLVM IR kernels (tests/data/kernels/vf_*.ll, compiled by llvmlite for gfx1100) exercising the float
VALU end to end against numpy: IEEE division macros (div_scale/div_fmas/div_fixup), sqrt, fma, f16 and
f64 arithmetic, transcendental intrinsics, fcmp + select, min/max, conversions and rounding.

Tolerances: results LLVM computes correctly rounded (fadd/fmul/fma/fdiv/sqrt, conversions, rounding,
compares) must match bit for bit; f16 fdiv within 1 ULP; exp2/log2 within 1 ULP and exp/log within
2 ULP of float64 math (LLVM's own expansions); sin/cos within 4e-6 absolute (LLVM scales by a rounded
1/(2 pi) before v_sin/v_cos) for |x| <= 10."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from compiler.llvm import compile_ir
from simgpu.testbed import Testbed
from tests import DATA
from tests.support.vfloat_harness import round_fraction

KERNELS = DATA / "kernels"
N = 1024


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


def run(tb, name, inputs, k, out_dtype):
    kern = tb.load(compile_ir((KERNELS / f"{name}.ll").read_text()))[name]
    bufs = [tb.upload(x) for x in inputs]
    out = tb.alloc(np.dtype(out_dtype).itemsize * k * N)
    tb.launch(kern, [*bufs, out], (N // 256,), (256,))
    return tb.download(out, out_dtype, k * N).reshape(N, k)


def mixed(rng, dt, lo=-20, hi=20, specials=()):
    x = rng.standard_normal(N) * np.exp2(rng.integers(lo, hi, N))
    x = x.astype(dt)
    x[:len(specials)] = specials
    return x


def exact_fma(a, b, c, dt):
    """fma rounded once to dt (exact rationals); exact zeros take IEEE's sign rule for round-to-nearest."""
    t = {np.float16: "f16", np.float32: "f32", np.float64: "f64"}[dt]
    out = []
    for x, y, z in zip(a.astype(float), b.astype(float), c.astype(float), strict=True):
        if not np.isfinite([x, y, z]).all():
            out.append(x * y + z)
            continue
        q = Fraction(x) * Fraction(y) + Fraction(z)
        out.append(round_fraction(q, t, 0) if q else x * y + z)
    return np.array(out).astype(dt)


def ulps(got, want, dt):
    g, w = got.astype(np.float64), want.astype(np.float64)
    u = np.nextafter(np.abs(want), dt(np.inf)).astype(np.float64) - np.abs(w)
    with np.errstate(invalid="ignore"):
        return np.where((g == w) | (np.isnan(g) & np.isnan(w)), 0.0, np.abs(g - w) / u)


def same_bits(got, want):
    both_nan = np.isnan(got) & np.isnan(want)
    return np.all(both_nan | (got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")))


def test_f32_math(tb):
    rng = np.random.default_rng(1)
    sp = [0.0, -0.0, np.inf, 1e-40, 3e38, 1.0, -2.5]
    a, b, c = mixed(rng, np.float32, specials=sp), mixed(rng, np.float32, specials=sp[::-1]), mixed(rng, np.float32)
    b[10:20] = np.float32(1e-39)  # denormal divisors: the macro's scaling path
    a[20:30] = np.float32(3e38)
    r = run(tb, "vf_f32_math", [a, b, c], 5, np.float32)
    with np.errstate(all="ignore"):
        assert same_bits(r[:, 0], a / b)
        assert same_bits(r[:, 1], np.sqrt(a))
        assert same_bits(r[:, 2], exact_fma(a, b, c, np.float32))
        assert same_bits(r[:, 3], a * b - c)
        assert same_bits(r[:, 4], a + c)


def test_f16_arith(tb):
    rng = np.random.default_rng(2)
    a, b, c = (mixed(rng, np.float16, -8, 8, [0.0, -0.0, np.inf, 6e-8, 1.0]) for _ in range(3))
    r = run(tb, "vf_f16", [a, b, c], 6, np.float16)
    with np.errstate(all="ignore"):
        assert same_bits(r[:, 0], a + b)
        assert same_bits(r[:, 1], a * b)
        assert ulps(r[:, 2], (a.astype(np.float64) / b).astype(np.float16), np.float16).max() <= 1
        assert same_bits(r[:, 3], exact_fma(a, b, c, np.float16))
        assert same_bits(r[:, 4], np.sqrt(a.astype(np.float64)).astype(np.float16))
        assert same_bits(r[:, 5], (a.astype(np.float32) * b.astype(np.float32)).astype(np.float16))


def test_f64_arith(tb):
    rng = np.random.default_rng(3)
    sp = [0.0, -0.0, np.inf, 5e-324, 1e308, 1.0, 2.0 ** -1060]
    a, b, c = (mixed(rng, np.float64, -300, 300, sp) for _ in range(3))
    r = run(tb, "vf_f64", [a, b, c], 5, np.float64)
    with np.errstate(all="ignore"):
        assert same_bits(r[:, 0], a / b)
        assert same_bits(r[:, 1], np.sqrt(a))
        assert same_bits(r[:, 2], exact_fma(a, b, c, np.float64))
        assert same_bits(r[:, 3], a + c)
        assert same_bits(r[:, 4], a * b)


def test_transcendental_intrinsics(tb):
    rng = np.random.default_rng(4)
    a = rng.uniform(-130, 120, N).astype(np.float32)
    b = np.exp2(rng.uniform(-140, 120, N)).astype(np.float32)  # includes denormal inputs to log
    c = rng.uniform(-10, 10, N).astype(np.float32)
    r = run(tb, "vf_trans", [a, b, c], 6, np.float32)
    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    assert ulps(r[:, 0], np.exp2(a64).astype(np.float32), np.float32).max() <= 1
    assert ulps(r[:, 1], np.log2(b64).astype(np.float32), np.float32).max() <= 1
    assert np.abs(r[:, 2] - np.sin(c64)).max() <= 4e-6
    assert np.abs(r[:, 3] - np.cos(c64)).max() <= 4e-6
    ok = np.abs(a64) < 85  # exp overflows / flushes beyond
    assert ulps(r[ok, 4], np.exp(a64[ok]).astype(np.float32), np.float32).max() <= 2
    assert ulps(r[:, 5], np.log(b64).astype(np.float32), np.float32).max() <= 2


def test_fcmp_select_minmax(tb):
    rng = np.random.default_rng(5)
    sp = [np.nan, 1.0, -0.0, 0.0, np.inf, np.nan]
    a, b, c = mixed(rng, np.float32, specials=sp), mixed(rng, np.float32, specials=sp[::-1]), mixed(rng, np.float32)
    b[100:200] = a[100:200]
    c[300:310] = np.nan
    r = run(tb, "vf_cmp_select", [a, b, c], 7, np.float32)
    with np.errstate(invalid="ignore"):
        assert same_bits(r[:, 0], np.where(a < b, a, c))
        assert same_bits(r[:, 1], np.where((a == b) | np.isnan(a) | np.isnan(b), 1.0, 2.0).astype(np.float32))
        assert same_bits(r[:, 2], np.where(np.isnan(a) | np.isnan(c), b, c))
        assert same_bits(r[:, 3], np.where(b >= c, b, np.float32(-3.0)))
    mn, mx = np.fmin(a, b), np.fmax(b, c)
    zero = (a == 0) & (b == 0)  # minnum may return either zero for +-0
    assert np.array_equal(r[~zero, 4], mn[~zero], equal_nan=True) and np.all(r[zero, 4] == 0)
    zero = (b == 0) & (c == 0)
    assert np.array_equal(r[~zero, 5], mx[~zero], equal_nan=True) and np.all(r[zero, 5] == 0)
    assert same_bits(r[:, 6], np.copysign(np.abs(a), c))


def test_conversions_and_rounding(tb):
    rng = np.random.default_rng(6)
    sp = [np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 0.5, -0.0]
    a = mixed(rng, np.float32, -4, 34, sp)
    b = mixed(rng, np.float32, -4, 34, sp[::-1])
    c = rng.integers(-2**31, 2**31, N).astype(np.int32).view(np.float32)
    a[200:300] = rng.uniform(-1e6, 1e6, 100).astype(np.float32)
    r = run(tb, "vf_convert", [a, b, c], 10, np.int32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)

    def sat(x, lo, hi):
        return np.clip(np.nan_to_num(np.trunc(x), nan=0, posinf=hi, neginf=lo), lo, hi).astype(np.int64)

    assert np.array_equal(r[:, 0], sat(a64, -2**31, 2**31 - 1).astype(np.int32))
    assert np.array_equal(r[:, 1].view(np.uint32), sat(b64, 0, 2**32 - 1).astype(np.uint32))
    ci = c.view(np.int32)
    assert np.array_equal(r[:, 2].view(np.float32), ci.astype(np.float32))
    assert np.array_equal(r[:, 3].view(np.float32), ci.view(np.uint32).astype(np.float32))
    small = np.isfinite(a64) & (np.abs(a64 * 3) < 2**31)  # fptosi is poison out of range: only check in range
    assert np.array_equal(r[small, 4], np.trunc(a64[small] * 3).astype(np.int32))
    fin = np.isfinite(a)
    assert np.array_equal(r[fin, 5].view(np.float32), np.floor(a[fin]))
    assert same_bits(r[:, 6].view(np.float32), np.ceil(b))
    assert same_bits(r[:, 7].view(np.float32), np.trunc(a))
    assert same_bits(r[:, 8].view(np.float32), np.rint(b))
    assert np.array_equal(r[:, 9].view(np.float32), ci.astype(np.float64).astype(np.float32))
