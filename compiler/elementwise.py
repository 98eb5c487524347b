"""Elementwise math of Tensor (mixed in), with tinygrad 0.14's names: transcendentals and their inverses,
rounding, where/clip, powers, two-operand math (copysign, fmod, lerp, logaddexp), classification (isnan, isinf,
isclose) and bitwise operations; activations are in compiler.activations. Half-precision transcendentals compute
in float32 and round once. Formulas keep their precision at the edges (docs/compiler.md, "Transcendentals")."""

from __future__ import annotations

import functools
import math
from typing import Self

import numpy as np

from compiler import autograd as F
from compiler.dtypes import dtypes, least_float, promote
from compiler.helpers import broadcast_shape
from compiler.ir.ops import Ops


def in_float32(fn):
    """Run a float op on float16/bfloat16 tensors in float32 and round once at the end (as NumPy and PyTorch
    do for half-precision transcendentals: a composite op rounded at every step loses most of 11 bits)."""
    @functools.wraps(fn)
    def wrapper(self, *args, **kw):
        if self.dtype in (dtypes.float16, dtypes.bfloat16):
            return fn(self.cast(dtypes.float32), *args, **kw).cast(self.dtype)
        return fn(self, *args, **kw)
    return wrapper


class MathOps:
    """Mixed into Tensor (module docstring)."""

    def _float(self) -> Self:
        return self.cast(least_float(self.dtype))

    def neg(self) -> Self:
        """-x (bool: not x)."""
        if self.dtype == dtypes.bool:
            return self.logical_not()
        return self._apply(F.Neg, self)

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

    def relu(self) -> Self:
        """max(x, 0) (gradient 0 at 0)."""
        return (self > 0).where(self, 0)

    @in_float32
    def erf(self) -> Self:
        """The error function (Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7)."""
        x = self._float()
        t = 1 / (1 + 0.3275911 * x.abs())
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        y = 1 - poly * (-(x * x)).exp()
        return (x < 0).where(-y, y)

    def abs(self) -> Self:
        """|x|."""
        if self.dtype.is_unsigned:
            return self
        return (self < 0).where(-self, self)

    def sign(self) -> Self:
        """-1, 0 or 1."""
        return (self > 0).cast(self.dtype) - (self < 0).cast(self.dtype)

    def square(self) -> Self:
        """x * x."""
        return self * self

    def reciprocal(self) -> Self:
        """1 / x."""
        return 1 / self

    def trunc(self) -> Self:
        """Rounded toward zero (floats)."""
        return self if not self.dtype.is_float else self._apply(F.NoGrad, self, op=Ops.TRUNC)

    def floor(self) -> Self:
        """Rounded toward -inf."""
        if not self.dtype.is_float:
            return self
        t = self.trunc()
        return (self < t).where(t - 1, t)

    def ceil(self) -> Self:
        """Rounded toward +inf."""
        if not self.dtype.is_float:
            return self
        t = self.trunc()
        return (self > t).where(t + 1, t)

    def round(self) -> Self:
        """Rounded to nearest, ties to even (NumPy's round)."""
        if not self.dtype.is_float:
            return self
        f = self.floor()
        d = self - f
        even = (f * 0.5).floor() * 2 == f
        up = (d > 0.5) | ((d == 0.5) & even.logical_not())
        return up.where(f + 1, f)

    def where(self, x, y) -> Self:
        """x where self is true, else y (broadcast; x and y promoted to one dtype)."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        a, b = x, y
        cond = self.cast(dtypes.bool)
        if not isinstance(a, T) and not isinstance(b, T):
            dt = promote(dtypes.of_scalar(a), dtypes.of_scalar(b))
            a = T.full((), a, dt, self.device)
        if not isinstance(a, T):
            b, a = b._operands(a, name="x")
        else:
            a, b = a._operands(b, name="y")
        try:
            shape = broadcast_shape(cond.shape, a.shape)
        except ValueError:
            raise ValueError(f"where: x and y of shape {a.shape} do not broadcast with self (the condition) of "
                             f"shape {cond.shape}") from None
        return self._apply(F.Where, cond._broadcast_to(shape), a._broadcast_to(shape), b._broadcast_to(shape))

    def masked_fill(self, mask, value) -> Self:
        """value where mask is true, else self (mask and value broadcast; promoted as where promotes)."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        mask = mask if isinstance(mask, T) else T(mask, device=self.device)
        return mask.where(value, self)

    def clip(self, min_=None, max_=None) -> Self:
        """Values limited to [min_, max_] (either may be None)."""
        if min_ is None and max_ is None:
            raise ValueError("clip needs min_ or max_")
        out = self
        if min_ is not None:
            out = out.maximum(min_)
        if max_ is not None:
            out = out.minimum(max_)
        return out

    clamp = clip

    def pow(self, x, reverse: bool = False) -> Self:
        """self ** x, or x ** self if reverse (NumPy's rules: integer powers exact, negative bases with integer
        exponents)."""
        if reverse:
            a, b = self._operands(x, reverse=True)
            return a.pow(b)
        if isinstance(x, int | np.integer) and not isinstance(x, bool) and not \
                (self.dtype.is_float is False and x < 0):
            return self._int_power(int(x))
        a, b = self._operands(x)
        if not a.dtype.is_float:
            return a._int_pow_tensor(b)
        mag = (b * a.abs().log2()).exp2()
        b_int = b.trunc() == b
        odd = b_int & ((b * 0.5).trunc() != b * 0.5)
        neg = a < 0
        out = (neg & odd).where(-mag, mag)
        out = (neg & b_int.logical_not()).where(math.nan, out)
        return (b == 0).where(1.0, out)

    def _int_power(self, n: int) -> Self:
        if n == 0:
            return self.ones_like()
        if n < 0:
            return 1 / self._int_power(-n)
        out, base = None, self
        while n:
            if n & 1:
                out = base if out is None else out * base
            n >>= 1
            if n:
                base = base * base
        return out

    def _int_pow_tensor(self, e: Self) -> Self:
        if (e < 0).any_value():
            raise ValueError("integers to negative integer powers are not allowed")
        out, base = self.ones_like(), self
        for bit in range(e.dtype.bits - 1):
            out = ((e >> bit) & 1).cast(dtypes.bool).where(out * base, out)
            base = base * base
        return out

    def any_value(self) -> bool:
        """Whether any element is nonzero (runs the graph)."""
        return bool(self.numpy().any())

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

    # ---- two-operand math ---------------------------------------------------------------------------------
    def copysign(self, other) -> Self:
        """|self| with the sign of other (a float other's -0.0 counts as negative); the promoted dtype."""
        a, b = self._operands(other)
        neg = ((b < 0) | (b.reciprocal() < 0)) if b.dtype.is_float else b < 0
        mag = a.abs()
        return neg.where(-mag, mag)

    def fmod(self, x) -> Self:
        """C's remainder: the sign of the dividend (mod/% take the divisor's); exact for floats, as C's fmod."""
        a, b = self._operands(x)
        if not a.dtype.is_float:
            return self._apply(F.NoGrad, a, b, op=Ops.MOD)
        r = a.mod(b)
        r = ((r != 0) & ((r < 0) != (a < 0))).where(r - b, r)
        r = (r == 0).where(a * 0, r)  # a zero remainder has the dividend's sign
        return (b.isinf() & a.isfinite()).where(a, r)

    def lerp(self, end, weight) -> Self:
        """self + (end - self) * weight."""
        return self + (end - self) * weight

    def logaddexp(self, other) -> Self:
        """log(e^self + e^other) without overflow: max + log1p(e^-|self - other|)."""
        a, b = self._operands(other)
        a, b = a._float(), b._float()
        m = a.maximum(b)
        same = a == b  # also +-inf with itself, where a - b is NaN
        d = same.where(0.0, a - b).abs()
        return same.where(a + math.log(2), m + (-d).exp()._log1p())

    # ---- classification and comparison --------------------------------------------------------------------
    def isnan(self) -> Self:
        """Whether each element is NaN (never, for integers and bools)."""
        return self != self if self.dtype.is_float else self.full_like(False, dtypes.bool)

    def isinf(self, detect_positive: bool = True, detect_negative: bool = True) -> Self:
        """Whether each element is +inf (if detect_positive) or -inf (if detect_negative)."""
        out = self.full_like(False, dtypes.bool)
        if not self.dtype.is_float:
            return out
        if detect_positive:
            out = out | (self == math.inf)
        if detect_negative:
            out = out | (self == -math.inf)
        return out

    def isfinite(self) -> Self:
        """Whether each element is neither infinite nor NaN."""
        return (self.isinf() | self.isnan()).logical_not()

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan=False) -> Self:
        """|self - other| <= atol + rtol * |other| for finite values, equality for infinities, NaN with NaN only if
        equal_nan (NumPy's isclose; integers compare as the default float, as NumPy does)."""
        a, b = self._operands(other)
        a, b = a._float(), b._float()
        close = a.isfinite() & b.isfinite() & ((a - b).abs() <= atol + rtol * b.abs())
        close = close | ((a.isinf() | b.isinf()) & (a == b))
        return close | (a.isnan() & b.isnan()) if equal_nan else close

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan=False) -> Self:
        """Whether isclose holds everywhere (a 0-d bool tensor)."""
        far = self.isclose(other, rtol, atol, equal_nan).logical_not()
        return far.cast(dtypes.int32).sum() == 0

    def eq(self, x) -> Self:
        """self == x."""
        return self == x

    def ne(self, x) -> Self:
        """self != x."""
        return self != x

    # ---- bitwise ------------------------------------------------------------------------------------------
    def bitwise_and(self, x, reverse: bool = False) -> Self:
        """self & x (integers and bools)."""
        return self._nograd(Ops.AND, x, reverse, kinds="biu")

    def bitwise_or(self, x, reverse: bool = False) -> Self:
        """self | x (integers and bools)."""
        return self._nograd(Ops.OR, x, reverse, kinds="biu")

    def bitwise_xor(self, x, reverse: bool = False) -> Self:
        """self ^ x (integers and bools)."""
        return self._nograd(Ops.XOR, x, reverse, kinds="biu")

    def bitwise_not(self) -> Self:
        """~self (bool: not)."""
        return ~self

    def lshift(self, x, reverse: bool = False) -> Self:
        """self << x (integers)."""
        return self._nograd(Ops.SHL, x, reverse, kinds="iu")

    def rshift(self, x, reverse: bool = False) -> Self:
        """self >> x (integers; arithmetic for signed types)."""
        return self._nograd(Ops.SHR, x, reverse, kinds="iu")
