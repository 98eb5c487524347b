"""Transcendental functions of Tensor (mixed in), with tinygrad 0.14's names: exponentials, logarithms and roots,
trigonometric and hyperbolic functions and their inverses, sigmoid, tanh and erf, and the building blocks they share
(expm1 and log1p without cancellation, pi in two parts). Half-precision transcendentals compute in float32 and round
once (in_float32). Formulas keep their precision at the edges (docs/compiler.md, "Transcendentals"). All are
compositions of the primitives exp2, log2, sqrt and sin (compiler.ir.transcendental lowers exp2, log2 and sin in
the kernel IR for targets without an instruction for them)."""

from __future__ import annotations

import functools
import math
from typing import Self

import numpy as np

from compiler import autograd as F
from compiler.dtypes import dtypes


def in_float32(fn):
    """Run a float op on float16/bfloat16 tensors in float32 and round once at the end (as NumPy and PyTorch
    do for half-precision transcendentals: a composite op rounded at every step loses most of 11 bits)."""
    @functools.wraps(fn)
    def wrapper(self, *args, **kw):
        if self.dtype in (dtypes.float16, dtypes.bfloat16):
            return fn(self.cast(dtypes.float32), *args, **kw).cast(self.dtype)
        return fn(self, *args, **kw)
    return wrapper


class TranscendentalOps:
    """Mixed into Tensor (module docstring)."""

    @in_float32
    def exp2(self) -> Self:
        """2 ** x."""
        return self._apply(F.Exp2, self._float())

    @in_float32
    def exp(self) -> Self:
        """e ** x = 2^n * 2^(r / ln 2) with n = round(x / ln 2) and r = x - n ln 2 in two parts (Cody-Waite):
        exp2(x / ln 2) directly would carry the rounding of x / ln 2, ~|x| ULP. 2^n is applied in two halves so
        a result near the overflow or underflow threshold does not pass through inf or 0."""
        x = self._float()
        if x.dtype == dtypes.float64:
            hi, lo, lim = 6.93147180369123816490e-01, 1.90821492927058770002e-10, 1100.0
        else:  # ln 2 with 9 trailing zero bits: n * hi is exact for |n| < 2^9
            hi, lo, lim = 0.693145751953125, 1.428606765330187e-06, 200.0
        n = (x * (1 / math.log(2)) + 0.5).floor().clip(-lim, lim)
        r = (x - n * hi) - n * lo
        n1 = (n * 0.5).floor()
        return (r * (1 / math.log(2))).exp2() * n1.exp2() * (n - n1).exp2()

    @in_float32
    def log2(self) -> Self:
        """log base 2."""
        return self._apply(F.Log2, self._float())

    @in_float32
    def log(self) -> Self:
        """Natural logarithm."""
        return self.log2() * math.log(2)

    def sqrt(self) -> Self:
        """Square root."""
        return self._apply(F.Sqrt, self._float())

    @in_float32
    def rsqrt(self) -> Self:
        """1 / sqrt(x)."""
        return 1 / self.sqrt()

    @in_float32
    def sin(self) -> Self:
        """Sine."""
        return self._apply(F.Sin, self._float())

    @in_float32
    def cos(self) -> Self:
        """Cosine, as sin(pi/2 - x)."""
        return (math.pi / 2 - self._float()).sin()

    @in_float32
    def tan(self) -> Self:
        """Tangent."""
        return self.sin() / self.cos()

    @in_float32
    def sigmoid(self) -> Self:
        """1 / (1 + e^-x), as (1 or e^-|x|) / (1 + e^-|x|): e^-|x| never overflows, so the value and its
        gradient stay finite in both tails."""
        x = self._float()
        e = (-x.abs()).exp()
        return (x >= 0).where(1.0, e) / (1 + e)

    @in_float32
    def tanh(self) -> Self:
        """Hyperbolic tangent: -t / (t + 2) with t = expm1(-2|x|) up to |x| = 0.5 (no cancellation near 0, where
        2 sigmoid(2x) - 1 lost every digit), 1 - 2 / (e^(2|x|) + 1) beyond (exp's error only, no log's)."""
        x = self._float()
        a = x.abs()
        small = a <= 0.5
        t = (small.where(a, 0.5) * -2)._expm1()
        e = (small.where(1.0, a) * 2).exp()
        y = small.where(-t / (t + 2), 1 - 2 / (e + 1))
        return (x < 0).where(-y, y)

    @in_float32
    def erf(self) -> Self:
        """The error function (Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7)."""
        x = self._float()
        t = 1 / (1 + 0.3275911 * x.abs())
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        y = 1 - poly * (-(x * x)).exp()
        return (x < 0).where(-y, y)

    # ---- building blocks without cancellation -------------------------------------------------------------
    def _expm1(self) -> Self:
        """e^x - 1 accurate near 0 (Kahan: (u - 1) * x / log(u) with u = e^x rounded; the rounding of u cancels)."""
        u = self.exp()
        # below 2^-60 e^x - 1 rounds to -1 in every type (and log of a subnormal u is not accurate enough)
        tiny = u < 2.0 ** -60
        safe = ((u == 1) | tiny | u.isinf()).where(2.0, u)  # keeps the unused branch (and its gradient) finite
        y = (safe - 1) * (self / safe.log())
        return (u == 1).where(self, tiny.where(-1.0, u.isinf().where(u, y)))

    def _log1p(self) -> Self:
        """log(1 + x) accurate near 0 (Goldberg: log(w) * x / (w - 1) with w = 1 + x rounded)."""
        w = 1 + self
        odd = (w == 1) | w.isinf()
        safe = odd.where(2.0, w)
        y = safe.log() * (self / (safe - 1))
        return (w == 1).where(self, w.isinf().where(w.log(), y))

    def _pi_const(self, frac: float) -> tuple[float, float]:
        """pi * frac as hi + lo for self's float type (lo carries what hi's rounding lost)."""
        val = math.pi * frac
        if self.dtype == dtypes.float64:
            return val, {0.5: 6.123233995736766e-17, 0.25: 3.061616997868383e-17}[frac]
        hi = float(np.float32(val))
        return hi, val - hi

    # ---- trigonometric inverses ---------------------------------------------------------------------------
    @in_float32
    def atan(self) -> Self:
        """Inverse tangent: |x| > 1 -> pi/2 - atan(1/|x|), |x| > tan(pi/8) -> pi/4 + atan((x-1)/(x+1)), then the
        Taylor series on |t| <= tan(pi/8) with enough terms for the type (float64: 21, else 10)."""
        x = self._float()
        a = x.abs()
        big = a > 1
        r = big.where(1 / big.where(a, 1.0), a)
        mid = r > 0.41421356237309503
        t = mid.where((r - 1) / (r + 1), r)
        z = t * t
        terms = 21 if x.dtype == dtypes.float64 else 10
        coef = [(-1) ** k / (2 * k + 1) for k in range(terms)]
        p = z * coef[-1] + coef[-2]
        for c in reversed(coef[:-2]):
            p = p * z + c
        y = t * p
        q_hi, q_lo = x._pi_const(0.25)
        h_hi, h_lo = x._pi_const(0.5)
        y = mid.where(q_hi + (y + q_lo), y)
        y = big.where(h_hi - (y - h_lo), y)
        return (x < 0).where(-y, y)

    @in_float32
    def asin(self) -> Self:
        """Inverse sine, atan(x / sqrt((1 - x)(1 + x))) (NaN outside [-1, 1])."""
        x = self._float()
        return (x / ((1 - x) * (1 + x)).sqrt()).atan()

    @in_float32
    def acos(self) -> Self:
        """Inverse cosine, 2 atan(sqrt((1 - x) / (1 + x))) (accurate at both ends; NaN outside [-1, 1])."""
        x = self._float()
        return ((1 - x) / (1 + x)).sqrt().atan() * 2

    # ---- hyperbolics ----------------------------------------------------------------------------------------
    @in_float32
    def sinh(self) -> Self:
        """Hyperbolic sine: (E + E/(E+1)) / 2 with E = expm1(|x|) below 1, else h*(h/2) - 1/(2h^2), h = e^(|x|/2)
        (finite up to the type's overflow of sinh itself, not of e^x)."""
        x = self._float()
        a = x.abs()
        small = a < 1
        e = small.where(a, 0.0)._expm1()
        h = (small.where(1.0, a) * 0.5).exp()
        y = small.where((e + e / (e + 1)) * 0.5, h * (h * 0.5) - 0.5 / (h * h))
        return (x < 0).where(-y, y)

    @in_float32
    def cosh(self) -> Self:
        """Hyperbolic cosine, h*(h/2) + 1/(2h^2) with h = e^(|x|/2)."""
        h = (self._float().abs() * 0.5).exp()
        return h * (h * 0.5) + 0.5 / (h * h)

    @in_float32
    def asinh(self) -> Self:
        """Inverse hyperbolic sine: log1p(a + a^2/(1 + sqrt(1 + a^2))) for a = |x| <= 2^28, else log(a) + log(2)."""
        x = self._float()
        a = x.abs()
        large = a > 2.0 ** 28
        s = large.where(1.0, a)
        y = large.where(a.log() + math.log(2), (s + s * s / (1 + (1 + s * s).sqrt()))._log1p())
        return (x < 0).where(-y, y)

    @in_float32
    def acosh(self) -> Self:
        """Inverse hyperbolic cosine: log1p((x-1) + sqrt((x-1)(x+1))), log(x) + log(2) past 2^28 (NaN below 1)."""
        x = self._float()
        large = x > 2.0 ** 28
        s = large.where(1.0, x)
        y = large.where(x.log() + math.log(2), ((s - 1) + ((s - 1) * (s + 1)).sqrt())._log1p())
        return (x < 1).where(math.nan, y)

    @in_float32
    def atanh(self) -> Self:
        """Inverse hyperbolic tangent, sign(x) log1p(2|x| / (1 - |x|)) / 2 (+-inf at +-1, NaN beyond)."""
        x = self._float()
        a = x.abs()
        y = (2 * a / (1 - a))._log1p() * 0.5
        return (x < 0).where(-y, y)

    @in_float32
    def log10(self) -> Self:
        """Base-10 logarithm."""
        return self.log2() * math.log10(2)
