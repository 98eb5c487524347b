"""Elementwise math of Tensor: transcendentals, activations, rounding, where/clip and powers (mixed into Tensor).
Half-precision transcendentals compute in float32 and round once."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from compiler import autograd as F
from compiler.dtypes import dtypes, least_float, promote
from compiler.ir.ops import Ops

if TYPE_CHECKING:
    from compiler.tensor import Tensor


def _in_float32(fn):
    """Run a float op on float16/bfloat16 tensors in float32 and round once at the end (as NumPy and PyTorch
    do for half-precision transcendentals: a composite op rounded at every step loses most of 11 bits)."""
    def wrapper(self, *args, **kw):
        if self.dtype in (dtypes.float16, dtypes.bfloat16):
            return fn(self.cast(dtypes.float32), *args, **kw).cast(self.dtype)
        return fn(self, *args, **kw)
    wrapper.__doc__, wrapper.__name__ = fn.__doc__, fn.__name__
    return wrapper


class MathOps:
    """Mixed into Tensor (module docstring)."""

    def _float(self) -> Tensor:
        return self.cast(least_float(self.dtype))

    def neg(self) -> Tensor:
        """-x (bool: not x)."""
        if self.dtype == dtypes.bool:
            return self.logical_not()
        return self._apply(F.Neg, self)

    @_in_float32
    def exp2(self) -> Tensor:
        """2 ** x."""
        return self._apply(F.Exp2, self._float())

    @_in_float32
    def exp(self) -> Tensor:
        """e ** x."""
        return (self._float() * (1 / math.log(2))).exp2()

    @_in_float32
    def log2(self) -> Tensor:
        """log base 2."""
        return self._apply(F.Log2, self._float())

    @_in_float32
    def log(self) -> Tensor:
        """Natural logarithm."""
        return self.log2() * math.log(2)

    def sqrt(self) -> Tensor:
        """Square root."""
        return self._apply(F.Sqrt, self._float())

    @_in_float32
    def rsqrt(self) -> Tensor:
        """1 / sqrt(x)."""
        return 1 / self.sqrt()

    @_in_float32
    def sin(self) -> Tensor:
        """Sine."""
        return self._apply(F.Sin, self._float())

    @_in_float32
    def cos(self) -> Tensor:
        """Cosine, as sin(pi/2 - x)."""
        return (math.pi / 2 - self._float()).sin()

    @_in_float32
    def tan(self) -> Tensor:
        """Tangent."""
        return self.sin() / self.cos()

    @_in_float32
    def sigmoid(self) -> Tensor:
        """1 / (1 + e^-x)."""
        return 1 / (1 + (-self._float()).exp())

    @_in_float32
    def tanh(self) -> Tensor:
        """Hyperbolic tangent, 2 sigmoid(2x) - 1."""
        return 2 * (2 * self._float()).sigmoid() - 1

    def relu(self) -> Tensor:
        """max(x, 0) (gradient 0 at 0)."""
        return (self > 0).where(self, 0)

    @_in_float32
    def silu(self) -> Tensor:
        """x * sigmoid(x)."""
        return self * self.sigmoid()

    @_in_float32
    def erf(self) -> Tensor:
        """The error function (Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7)."""
        x = self._float()
        t = 1 / (1 + 0.3275911 * x.abs())
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        y = 1 - poly * (-(x * x)).exp()
        return (x < 0).where(-y, y)

    @_in_float32
    def gelu(self) -> Tensor:
        """x * Phi(x) with the exact (erf) form, as PyTorch's default."""
        return 0.5 * self * (1 + (self * (1 / math.sqrt(2))).erf())

    def abs(self) -> Tensor:
        """|x|."""
        if self.dtype.is_unsigned:
            return self
        return (self < 0).where(-self, self)

    def sign(self) -> Tensor:
        """-1, 0 or 1."""
        return (self > 0).cast(self.dtype) - (self < 0).cast(self.dtype)

    def square(self) -> Tensor:
        """x * x."""
        return self * self

    def reciprocal(self) -> Tensor:
        """1 / x."""
        return 1 / self

    def trunc(self) -> Tensor:
        """Rounded toward zero (floats)."""
        return self if not self.dtype.is_float else self._apply(F.NoGrad, self, op=Ops.TRUNC)

    def floor(self) -> Tensor:
        """Rounded toward -inf."""
        if not self.dtype.is_float:
            return self
        t = self.trunc()
        return (self < t).where(t - 1, t)

    def ceil(self) -> Tensor:
        """Rounded toward +inf."""
        if not self.dtype.is_float:
            return self
        t = self.trunc()
        return (self > t).where(t + 1, t)

    def round(self) -> Tensor:
        """Rounded to nearest, ties to even (NumPy's round)."""
        if not self.dtype.is_float:
            return self
        f = self.floor()
        d = self - f
        even = (f * 0.5).floor() * 2 == f
        up = (d > 0.5) | ((d == 0.5) & even.logical_not())
        return up.where(f + 1, f)

    def where(self, a, b) -> Tensor:
        """a where self is true, else b (broadcast; a and b promoted to one dtype)."""
        from compiler.tensor import Tensor, broadcast_shape
        cond = self.cast(dtypes.bool)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            dt = promote(dtypes.of_scalar(a), dtypes.of_scalar(b))
            a = Tensor.full((), a, dt, self.device)
        if not isinstance(a, Tensor):
            a, b = b._operands(a, reverse=True)
        else:
            a, b = a._operands(b)
        shape = broadcast_shape(cond.shape, a.shape)
        return self._apply(F.Where, cond._broadcast_to(shape), a._broadcast_to(shape), b._broadcast_to(shape))

    def clip(self, min_=None, max_=None) -> Tensor:
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

    def pow(self, exponent) -> Tensor:
        """self ** exponent (NumPy's rules: integer powers exact, negative bases with integer exponents)."""
        if isinstance(exponent, int | np.integer) and not isinstance(exponent, bool) and not \
                (self.dtype.is_float is False and exponent < 0):
            return self._int_power(int(exponent))
        a, b = self._operands(exponent)
        if not a.dtype.is_float:
            return a._int_pow_tensor(b)
        mag = (b * a.abs().log2()).exp2()
        b_int = b.trunc() == b
        odd = b_int & ((b * 0.5).trunc() != b * 0.5)
        neg = a < 0
        out = (neg & odd).where(-mag, mag)
        out = (neg & b_int.logical_not()).where(math.nan, out)
        return (b == 0).where(1.0, out)

    def _int_power(self, n: int) -> Tensor:
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

    def _int_pow_tensor(self, e: Tensor) -> Tensor:
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
