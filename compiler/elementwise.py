"""Elementwise math of Tensor (mixed in), with tinygrad 0.14's names: sign and magnitude, rounding, where/clip,
powers, two-operand math (copysign, fmod, lerp, logaddexp), classification (isnan, isinf, isclose) and bitwise
operations; transcendentals are in compiler.transcendental, activations in compiler.activations. Formulas keep
their precision at the edges (docs/compiler.md, "Transcendentals")."""

from __future__ import annotations

import math
from typing import Self

import numpy as np

from compiler import autograd as F
from compiler.dtypes import dtypes, least_float, promote
from compiler.helpers import broadcast_shape
from compiler.ir.ops import Ops


class MathOps:
    """Mixed into Tensor (module docstring)."""

    def _float(self) -> Self:
        return self.cast(least_float(self.dtype))

    def neg(self) -> Self:
        """-x (bool: not x)."""
        if self.dtype == dtypes.bool:
            return self.logical_not()
        return self._apply(F.Neg, self)

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
