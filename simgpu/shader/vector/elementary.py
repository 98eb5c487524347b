"""exp2, log2, and sin/cos of revolutions as fixed algorithms in the expression form (sem.expr), for the VALU
transcendentals (vector.trans): both tiers are generated from them, so the interpreter and the JIT give the same
bits, and no result depends on the host's C library (whose exp2/log2/sin differ between hosts and builds).

Each function converts its f16/f32 source to f64 exactly, reduces the argument exactly, evaluates a polynomial in
f64 with the transcendental unit's working arithmetic (expr.add_rn/mul_rn: plain IEEE to nearest even, in the fixed
order Horner's rule gives, never fused), scales by an exact power of two and rounds once to the result type
(cvt_rn). The f64 value is within a few f64 ULPs of the true one, far inside the ISA reference's bounds (f32 1 ULP,
f16 0.51 ULP), so the result is the correctly rounded one except where the true value lies within ~2**-26 f32 ULP
of a rounding boundary. The coefficients are Taylor's, computed here from exact integer series for ln 2 and pi
and rounded once to f64; the degree makes the truncation error below 2**-55 relative on the reduced range.

- exp2: w = n + r with n = rint(w) (the 1.5 * 2**52 shifter) and r in [-1/2, 1/2] exactly; 2**r by its series
  in r (degree 13); 2**n built in the exponent field. Sources beyond +-256 are clamped (every type's result is
  then inf or 0 already), so 2**n stays a normal f64. exp2 of an integer is exact (the series is 1 at r = 0).
- log2: w = 2**e * m with m in [sqrt(1/2), sqrt(2)) read from w's bits; log2(m) = 2 atanh(s) / ln 2 with
  s = (m - 1) / (m + 1) (m - 1 and m + 1 exact, the quotient as f64 rcp times), |s| <= 0.172, series in s*s
  (degree 11). log2 of a power of two is exact (s = 0).
- sin/cos: the revolution r = w - rint(w) in [-1/2, 1/2] exactly; sin folds it into [-1/4, 1/4] (sin(pi - a) =
  sin(a), exact by Sterbenz), cos is sin(2 pi (1/4 - |r|)); sin(2 pi q) by its odd series in q (degree 21).
  Half and whole turns give exact zeros, quarter turns exact ones after rounding, as the reference's examples.
Specials are selected at the end (a NaN source gives itself quieted, a NaN made from numbers - log2 of a negative,
sin/cos of an infinity - the host's default NaN; log2(+-0) = -inf, log2(inf) = inf), so no intermediate NaN
reaches a result.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from simgpu.shader.sem import expr as ex
from simgpu.shader.sem.expr import E, bitcast, eq, lift, select

_PREC = 200  # bits of the fixed-point ln 2 and pi the coefficients are computed from (f64 needs 53, plus guards)
_SHIFTER = 1.5 * 2.0 ** 52  # w + this rounds w to an integer, kept in the low bits (|w| < 2**51)
_SHIFTER_BITS = 0x4338000000000000
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD  # (the f64 just above sqrt(1/2): m's lower bound)
with np.errstate(invalid="ignore"):
    HOST_NAN = float(np.float64(np.inf) - np.float64(np.inf))  # the host's default NaN (bits kept by float())


def _atan_inv(k: int, prec: int) -> int:
    """atan(1/k) * 2**prec, from its series in fixed point (each term truncated: error below one unit a term)."""
    total, term, n, sign = 0, (1 << prec) // k, 1, 1
    while term:
        total += sign * (term // n)
        term //= k * k
        n += 2
        sign = -sign
    return total


def pi_fixed(prec: int) -> int:
    """pi * 2**prec by Machin's formula, within a few hundred units (callers keep guard bits)."""
    return 16 * _atan_inv(5, prec) - 4 * _atan_inv(239, prec)


def _ln2_fixed(prec: int) -> int:
    """ln 2 * 2**prec = sum over k >= 1 of 2**prec / (k 2**k), within prec units."""
    return sum((1 << prec) // (k << k) for k in range(1, prec + 1))


def _coefficients() -> tuple[list[float], list[float], list[float]]:
    ln2 = Fraction(_ln2_fixed(_PREC), 1 << _PREC)
    two_pi = 2 * Fraction(pi_fixed(_PREC), 1 << _PREC)
    exp2 = [float(ln2 ** k / math.factorial(k)) for k in range(14)]  # 2**r = sum (r ln 2)**k / k!
    log2 = [float(2 / ((2 * k + 1) * ln2)) for k in range(12)]  # log2(m) = s sum (s*s)**k 2 / ((2k + 1) ln 2)
    sin = [float((-1) ** k * two_pi ** (2 * k + 1) / math.factorial(2 * k + 1)) for k in range(11)]
    return exp2, log2, sin


EXP2, LOG2, SIN = _coefficients()


def _horner(x: E, coefficients: list[float]) -> E:
    """sum coefficients[k] * x**k, highest first, one rounding per step."""
    acc = lift(coefficients[-1], "f64")
    for c in reversed(coefficients[:-1]):
        acc = ex.add_rn(ex.mul_rn(acc, x), c)
    return acc


def _quieted(x: E) -> E:
    ut, man, _ = ex.FLOAT_LAYOUT[x.t]
    return bitcast(bitcast(x, ut) | (1 << (man - 1)), x.t)


def _nan_source(x: E, out: E) -> E:
    return select(ex.isnan(x), _quieted(x), out)


def exp2(x: E) -> E:
    """2**x (f16 or f32 x), rounded once to x's type."""
    w = ex.cvt_rn(x, "f64")
    w = select(w > 256.0, 256.0, select(w < -256.0, -256.0, w))  # (a NaN stays)
    shifted = ex.add_rn(w, _SHIFTER)
    r = ex.sub_rn(w, ex.sub_rn(shifted, _SHIFTER))
    scale = bitcast((bitcast(shifted, "u64") + 1023) << 52, "f64")  # 2**n: n + 1023 into the exponent field
    return _nan_source(x, ex.cvt_rn(ex.mul_rn(_horner(r, EXP2), scale), x.t))


def log2(x: E) -> E:
    """log2(x) (f16 or f32 x), rounded once to x's type."""
    w = ex.cvt_rn(x, "f64")  # (a normal f64 for every finite nonzero x)
    i = bitcast(w, "u64")
    e = bitcast(i - _SQRT_HALF_BITS, "i64") >> 52  # w = 2**e * m, m in [sqrt(1/2), sqrt(2))
    m = bitcast(i - bitcast(e << 52, "u64"), "f64")
    e_f64 = ex.sub_rn(bitcast(bitcast(e, "u64") + _SHIFTER_BITS, "f64"), _SHIFTER)
    s = ex.mul_rn(ex.sub_rn(m, 1.0), ex.rcp(ex.add_rn(m, 1.0)))
    out = ex.cvt_rn(ex.add_rn(e_f64, ex.mul_rn(s, _horner(ex.mul_rn(s, s), LOG2))), x.t)
    out = select(eq(x, math.inf), math.inf, out)
    out = select(eq(x, 0.0), -math.inf, out)
    out = select(x < 0.0, HOST_NAN, out)
    return _nan_source(x, out)


def _revolution(w: E) -> E:
    """w - rint(w) in [-1/2, 1/2], exact; a zero w keeps its sign."""
    return select(eq(w, 0.0), w, ex.sub_rn(w, ex.rint(w)))


def _sin_quarter(q: E) -> E:
    """sin(2 pi q) for |q| <= 1/4 (exactly 0 for q = 0, with q's sign)."""
    return ex.mul_rn(q, _horner(ex.mul_rn(q, q), SIN))


def _trig_specials(x: E, out: E) -> E:
    return _nan_source(x, select(eq(ex.fabs(x), math.inf), HOST_NAN, out))


def sin_rev(x: E) -> E:
    """sin(2 pi x) (f16 or f32 x), rounded once to x's type."""
    r = _revolution(ex.cvt_rn(x, "f64"))
    a = ex.fabs(r)
    half = ex.sub_rn(lift(0.5, "f64"), a)
    q = select(a > 0.25, select(r < 0.0, -half, half), r)
    return _trig_specials(x, ex.cvt_rn(_sin_quarter(q), x.t))


def cos_rev(x: E) -> E:
    """cos(2 pi x) = sin(2 pi (1/4 - |r|)) (f16 or f32 x), rounded once to x's type."""
    a = ex.fabs(_revolution(ex.cvt_rn(x, "f64")))
    return _trig_specials(x, ex.cvt_rn(_sin_quarter(ex.sub_rn(lift(0.25, "f64"), a)), x.t))
