#!/usr/bin/env python3
"""Verify the fast exact FMA (fpexact.fma_nearest) bit for bit on many millions of inputs.

    python -m tools.verify_fma [--millions N] [--seed S]

For f32 every input triple is checked three ways: fma_nearest against the exact path (fpexact.fma_small,
which the test suite checks against exact rationals) bit for bit, NaN results as the engine makes them
(fpexact.first_nan: the first NaN operand, quieted), and both against the host C library's fmaf
(ctypes, libm), bit for bit where the result is a number and by NaN-ness where it is NaN (payload rules
are the engine's, not libm's). f16 triples are checked against the exact path bit for bit. Inputs come
in families (random bit patterns with NaN/inf/denormals, wide exponent ranges, cancellations, crafted
f32 midpoints just above, below and on the tie, subnormal results, overflow) so the rare double-rounding
cases are hit many times, not by luck.
The test suite runs a smaller version (tests/simgpu/shader/test_fma_nearest.py).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import sys
import time

import numpy as np

from simgpu.shader.sem import fpexact as fx

F16, F32, F64 = np.float16, np.float32, np.float64
CHUNK = 1 << 18


def _bits32(rng, n):
    return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(F32)


def _wide(rng, n, lo=-60, hi=60):
    """Finite f32 values with random sign, mantissa and exponents in [lo, hi)."""
    m = rng.random(n) + 1.0
    e = rng.integers(lo, hi, n)
    s = rng.choice([-1.0, 1.0], n)
    return (s * np.ldexp(m, e)).astype(F32)


def family_bits(rng, n):
    """Random bit patterns: NaNs, infinities, denormals, zeros of both signs all occur."""
    return _bits32(rng, n), _bits32(rng, n), _bits32(rng, n)


def family_wide(rng, n):
    return _wide(rng, n), _wide(rng, n), _wide(rng, n, -120, 120)


def family_cancel(rng, n):
    """c within a few ulps of -a*b: massive cancellation, tiny exact results."""
    a, b = _wide(rng, n, -40, 40), _wide(rng, n, -40, 40)
    c = -(a.astype(F64) * b.astype(F64)).astype(F32)
    step = rng.integers(-3, 4, n)
    c = np.where(step > 0, np.nextafter(c, F32(np.inf)), np.where(step < 0, np.nextafter(c, F32(-np.inf)), c))
    return a, b, c.astype(F32)


def family_midpoint(rng, n):
    """a*b = ulp(c)/2 * (1 + d) with |d| tiny: the float64 sum lands exactly on an f32 midpoint of c's
    grid while the exact sum is just below it (d = -x^2), just above it (d = x^3), or on it (d = 0)."""
    e = rng.integers(-100, 100, n)
    c = (rng.choice([-1.0, 1.0], n) * np.ldexp(1.0 + (rng.integers(1, 1 << 23, n) / 2.0 ** 23), e)).astype(F32)
    half_ulp = np.ldexp(1.0, e - 24)
    kind = rng.integers(0, 3, n)
    k_lo = rng.integers(15, 24, n)  # below: (1 + x)(1 - x) = 1 - x^2, x = 2^-k
    k_hi = rng.integers(8, 12, n)  # above: (1 + x)(1 - x + x^2) = 1 + x^3
    x = np.where(kind == 0, np.ldexp(1.0, -k_lo), np.ldexp(1.0, -k_hi))
    a = np.where(kind == 2, 1.0, 1.0 + x)
    b = np.where(kind == 0, 1.0 - x, np.where(kind == 1, 1.0 - x + x * x, 1.0))
    sign = rng.choice([-1.0, 1.0], n)  # toward or away from zero: the midpoint above or below c
    a = (a * sign).astype(F32)
    b = (b * half_ulp).astype(F32)
    return a, b, c


def family_subnormal(rng, n):
    """Products and addends near and below f32's smallest normal: subnormal results."""
    a = _wide(rng, n, -80, -50)
    b = _wide(rng, n, -90, -60)
    c = (rng.integers(-(1 << 24), 1 << 24, n) * 2.0 ** -149).astype(F32)
    return a, b, c


def family_subnormal_midpoint(rng, n):
    """Subnormal c (k * 2^-149) plus a*b = 2^-150 * (1 - x^2) or exactly 2^-150: the float64 sum lands on
    a midpoint of the subnormal grid, just above the exact sum or on it."""
    c = (rng.integers(1, 1 << 23, n) * rng.choice([-1, 1], n) * 2.0 ** -149).astype(F32)
    x = np.ldexp(1.0, -rng.integers(15, 20, n))
    tie = rng.random(n) < 0.25
    a = (np.where(tie, 1.0, 1.0 + x) * 2.0 ** -20 * rng.choice([-1.0, 1.0], n)).astype(F32)
    b = (np.where(tie, 1.0, 1.0 - x) * 2.0 ** -130).astype(F32)
    return a, b, c


def family_overflow(rng, n):
    """Results around FLT_MAX and the overflow midpoint 2^128 - 2^103."""
    big = np.finfo(F32).max
    c = (big * rng.uniform(0.9, 1.0, n)).astype(F32) * rng.choice([-1, 1], n).astype(F32)
    half_ulp = 2.0 ** 103
    a = rng.uniform(0.5, 2.0, n).astype(F32)
    b = (half_ulp / a.astype(F64) * rng.choice([0.999999, 1.0, 1.000001], n)).astype(F32) * np.sign(c)
    return a, b, c


FAMILIES = [family_bits, family_wide, family_cancel, family_midpoint, family_subnormal, family_subnormal_midpoint,
            family_overflow]


def c_fmaf():
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    f = libm.fmaf
    f.argtypes = [ctypes.c_float] * 3
    f.restype = ctypes.c_float
    return f


def same_bits(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    u = {2: np.uint16, 4: np.uint32}[x.dtype.itemsize]
    return x.view(u) == y.view(u)


def check_f32(a, b, c, fmaf, with_c: bool) -> tuple[int, int, int, float, float]:
    """(mismatches vs the exact path, mismatches vs C fmaf, lanes where rounding the float64 sum alone
    would be wrong, seconds fast, seconds exact)."""
    t0 = time.perf_counter()
    fast = fx.fma_nearest(a, b, c, F32)
    t1 = time.perf_counter()
    exact = fx.fma_small(a, b, c, F32, fx.RNE)
    t2 = time.perf_counter()
    fast, exact = fx.first_nan(fast, a, b, c), fx.first_nan(exact, a, b, c)  # the engine's NaN rule on both
    bad_exact = int(np.count_nonzero(~same_bits(fast, exact)))
    naive = (a.astype(F64) * b.astype(F64) + c.astype(F64)).astype(F32)
    hard = int(np.count_nonzero(~same_bits(naive, exact) & ~np.isnan(exact)))
    bad_c = 0
    if with_c:
        ref = np.fromiter(map(fmaf, a.tolist(), b.tolist(), c.tolist()), F32, len(a))
        nan = np.isnan(ref)
        ok = np.where(nan, np.isnan(fast), same_bits(fast, ref))
        bad_c = int(np.count_nonzero(~ok))
    return bad_exact, bad_c, hard, t1 - t0, t2 - t1


def check_f16(rng, n) -> int:
    """Mismatches of the f16 fast path against the exact path over random f16 bit patterns and near
    cancellations. (For f16 the float64 sum cannot double-round: when it is inexact, the product lies
    below the addend's float64 ulp and the sum is the addend itself, or the result overflows.)"""
    u = rng.integers(0, 1 << 16, (3, n), dtype=np.uint64).astype(np.uint16).view(F16)
    a, b = u[0], u[1]
    c = np.where(rng.random(n) < 0.5, u[2], (a.astype(F64) * b.astype(F64) * -rng.uniform(0.99, 1.01, n)).astype(F16))
    fast, exact = (fx.first_nan(r, a, b, c) for r in (fx.fma_nearest(a, b, c, F16), fx.fma_small(a, b, c, F16, fx.RNE)))
    return int(np.count_nonzero(~same_bits(fast, exact)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--millions", type=int, default=12, help="f32 triples to check, in millions (default 12)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-libm", action="store_true", help="skip the C fmaf comparison (the slow part)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    fmaf = c_fmaf()
    total = bad_exact = bad_c = 0
    t_fast = t_exact = 0.0
    per_family = {f.__name__: [0, 0, 0, 0] for f in FAMILIES}
    chunks = -(-args.millions * 1_000_000 // CHUNK)
    with np.errstate(all="ignore"):
        for i in range(chunks):
            fam = FAMILIES[i % len(FAMILIES)]
            a, b, c = fam(rng, CHUNK)
            e, cm, hard, tf, te = check_f32(a, b, c, fmaf, not args.no_libm)
            rec = per_family[fam.__name__]
            rec[0] += CHUNK
            rec[1] += e
            rec[2] += cm
            rec[3] += hard
            total += CHUNK
            bad_exact += e
            bad_c += cm
            t_fast += tf
            t_exact += te
        f16_n = chunks * CHUNK
        bad16 = sum(check_f16(rng, CHUNK) for _ in range(chunks))
    for name, (n, e, cm, hard) in per_family.items():
        print(f"  {name:26s} {n:>10,d} triples ({hard:>9,d} double-rounding cases)  mismatches: "
              f"{e} vs the exact path, {cm} vs C fmaf")
    print(f"f32: {total:,d} triples, {bad_exact} mismatches vs the exact path, "
          f"{'skipped' if args.no_libm else bad_c} vs C fmaf")
    print(f"f16: {f16_n:,d} triples, {bad16} mismatches vs the exact path")
    print(f"time per 1M f32 triples: fast {t_fast / total * 1e9:.1f} ms, exact path {t_exact / total * 1e9:.1f} ms "
          f"(x{t_exact / max(t_fast, 1e-9):.1f})")
    return 0 if bad_exact == 0 and bad_c == 0 and bad16 == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
