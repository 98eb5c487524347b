"""Arithmetic of Tensor (mixed in): the broadcasting binary operations (add, sub, mul, div, floordiv, mod,
maximum, minimum) with NumPy's promotion and results, and Python's operators on tensors: arithmetic, comparisons
(bool results, no gradient), bitwise (integers and bools) and the in-place forms, which assign."""

from __future__ import annotations

from typing import Self

import numpy as np

from compiler import autograd as F
from compiler.dtypes import DType, dtypes, least_float, promote, promote_scalar
from compiler.helpers import broadcast_shape
from compiler.ir.ops import Ops
from compiler.lazy import LazyBuffer


class ArithmeticOps:
    """Mixed into Tensor (module docstring)."""

    def _operands(self, other, reverse: bool = False, dtype: DType | None = None, name: str = "x"
                  ) -> tuple[Self, Self]:
        """self and other broadcast to one shape and promoted to one dtype (or dtype); errors call other `name`
        (the argument's name in the method the user called)."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        if isinstance(other, T):
            if other.device != self.device:
                raise ValueError(f"tensors on different devices: {name} is on {other.device}, self on {self.device}")
            dt = dtype or promote(self.dtype, other.dtype)
            o = other
        elif isinstance(other, bool | int | float | np.generic):
            other = other.item() if isinstance(other, np.generic) else other
            dt = dtype or promote_scalar(self.dtype, other)
            if isinstance(other, float) and not dt.is_float:
                dt = dtypes.default_float
            o = T(LazyBuffer.const(other, dt, self.device))
        else:
            o = T(other, device=self.device)
            dt = dtype or promote(self.dtype, o.dtype)
        a, b = self.cast(dt), o.cast(dt)
        try:
            shape = broadcast_shape(a.shape, b.shape)
        except ValueError:
            raise ValueError(f"{name} of shape {b.shape} does not broadcast with self of shape {a.shape}") from None
        a, b = a._broadcast_to(shape), b._broadcast_to(shape)
        return (b, a) if reverse else (a, b)

    def _broadcast_to(self, shape) -> Self:
        if self.shape == tuple(shape):
            return self
        padded = (1,) * (len(shape) - self.ndim) + self.shape
        return self.reshape(padded).expand(shape)

    def _binary(self, fn, other, reverse=False, dtype=None) -> Self:
        a, b = self._operands(other, reverse, dtype)
        return self._apply(fn, a, b)

    def _nograd(self, op: Ops, other, reverse=False, out_dtype=None, kinds: str | None = None) -> Self:
        a, b = self._operands(other, reverse)
        if kinds is not None and a.dtype.kind not in kinds:
            raise TypeError(f"{op.name.lower()} is not defined for {a.dtype.name}")
        return self._apply(F.NoGrad, a, b, op=op, dtype=out_dtype)

    def add(self, x, reverse=False) -> Self:
        """self + other."""
        return self._binary(F.Add, x, reverse)

    def sub(self, x, reverse=False) -> Self:
        """self - other."""
        return self._binary(F.Sub, x, reverse)

    def mul(self, x, reverse=False) -> Self:
        """self * other."""
        return self._binary(F.Mul, x, reverse)

    def div(self, x, reverse=False, rounding_mode: str | None = None) -> Self:
        """True division (integers divide as the default float); rounding_mode "trunc" or "floor" rounds the
        quotient (integers then divide exactly, in their own type)."""
        if rounding_mode not in (None, "trunc", "floor"):
            raise ValueError(f"rounding_mode must be None, 'trunc' or 'floor', not {rounding_mode!r}")
        a, b = self._operands(x, reverse)
        if rounding_mode == "floor":
            return a.floordiv(b)
        if rounding_mode == "trunc":
            return (a / b).trunc() if a.dtype.is_float else self._apply(F.NoGrad, a, b, op=Ops.IDIV)
        dt = least_float(a.dtype)
        return self._apply(F.Div, a.cast(dt), b.cast(dt))

    def floordiv(self, x, reverse=False) -> Self:
        """Floor division, as NumPy: rounds toward -inf (x // 0 == 0 for integers)."""
        a, b = self._operands(x, reverse)
        if a.dtype.is_float:
            return (a / b).floor()
        if a.dtype.is_unsigned:
            return self._apply(F.NoGrad, a, b, op=Ops.IDIV)
        q = self._apply(F.NoGrad, a, b, op=Ops.IDIV)
        r = self._apply(F.NoGrad, a, b, op=Ops.MOD)
        fix = (r != 0) & ((r < 0) != (b < 0))
        return fix.where(q - 1, q)

    def mod(self, x, reverse=False) -> Self:
        """Remainder with the divisor's sign, as NumPy (x % 0 == 0 for integers)."""
        a, b = self._operands(x, reverse)
        if a.dtype.is_float:
            r = self._apply(F.FloatMod, a, b)
            # x mod +-inf: x itself when the signs agree (or x is 0), else the infinity (NumPy)
            keep = (a == 0) | ((a < 0) == (b < 0))
            return (b.isinf() & a.isfinite()).where(keep.where(a, b), r)
        r = self._apply(F.NoGrad, a, b, op=Ops.MOD)
        if a.dtype.is_unsigned:
            return r
        fix = (r != 0) & ((r < 0) != (b < 0))
        return fix.where(r + b, r)

    def maximum(self, x) -> Self:
        """Elementwise maximum (NaN wins)."""
        return self._binary(F.Maximum, x)

    def minimum(self, x) -> Self:
        """Elementwise minimum (NaN wins)."""
        a, b = self._operands(x)
        return (a._flip_order()).maximum(b._flip_order())._flip_order()

    def _flip_order(self) -> Self:
        """An order-reversing bijection: -x for floats, ~x for integers, not x for bools."""
        return -self if self.dtype.is_float else ~self

    def __add__(self, o):
        return self.add(o)

    def __radd__(self, o):
        return self.add(o, True)

    def __sub__(self, o):
        return self.sub(o)

    def __rsub__(self, o):
        return self.sub(o, True)

    def __mul__(self, o):
        return self.mul(o)

    def __rmul__(self, o):
        return self.mul(o, True)

    def __truediv__(self, o):
        return self.div(o)

    def __rtruediv__(self, o):
        return self.div(o, True)

    def __floordiv__(self, o):
        return self.floordiv(o)

    def __rfloordiv__(self, o):
        return self.floordiv(o, True)

    def __mod__(self, o):
        return self.mod(o)

    def __rmod__(self, o):
        return self.mod(o, True)

    def __pow__(self, o):
        return self.pow(o)

    def __rpow__(self, o):
        T = type(self)
        return T(o, device=self.device, dtype=promote_scalar(self.dtype, o) if not isinstance(o, T) else None).pow(self)

    def __neg__(self):
        return self.neg()

    def __abs__(self):
        return self.abs()

    def __matmul__(self, o):
        return self.matmul(o)

    def __rmatmul__(self, o):
        return type(self)(o, device=self.device).matmul(self)

    # comparisons (bool results, no gradient)
    def __lt__(self, o):
        return self._nograd(Ops.CMPLT, o, out_dtype=dtypes.bool)

    def __gt__(self, o):
        return self._nograd(Ops.CMPLT, o, reverse=True, out_dtype=dtypes.bool)

    def __le__(self, o):
        return (self > o).logical_not() if not self._nan_possible(o) else (self < o) | (self == o)

    def __ge__(self, o):
        return (self < o).logical_not() if not self._nan_possible(o) else (self > o) | (self == o)

    def __eq__(self, o):  # type: ignore[override]
        return self._nograd(Ops.CMPEQ, o, out_dtype=dtypes.bool)

    def __ne__(self, o):  # type: ignore[override]
        return self._nograd(Ops.CMPNE, o, out_dtype=dtypes.bool)

    def _nan_possible(self, o) -> bool:
        return self.dtype.is_float or isinstance(o, float) or (isinstance(o, type(self)) and o.dtype.is_float)

    # bitwise (ints and bools)
    def __and__(self, o):
        return self._nograd(Ops.AND, o, kinds="biu")

    def __rand__(self, o):
        return self._nograd(Ops.AND, o, reverse=True, kinds="biu")

    def __or__(self, o):
        return self._nograd(Ops.OR, o, kinds="biu")

    def __ror__(self, o):
        return self._nograd(Ops.OR, o, reverse=True, kinds="biu")

    def __xor__(self, o):
        return self._nograd(Ops.XOR, o, kinds="biu")

    def __rxor__(self, o):
        return self._nograd(Ops.XOR, o, reverse=True, kinds="biu")

    def __lshift__(self, o):
        return self._nograd(Ops.SHL, o, kinds="iu")

    def __rshift__(self, o):
        return self._nograd(Ops.SHR, o, kinds="iu")

    def __rlshift__(self, o):
        return self._nograd(Ops.SHL, o, reverse=True, kinds="iu")

    def __rrshift__(self, o):
        return self._nograd(Ops.SHR, o, reverse=True, kinds="iu")

    def __invert__(self):
        if self.dtype.is_float:
            raise TypeError(f"~ is not defined for {self.dtype.name}")
        return self._apply(F.NoGrad, self, op=Ops.NOT)

    def logical_not(self) -> Self:
        """not x (as bool)."""
        return ~self.cast(dtypes.bool)

    # in-place operators assign (tinygrad's, and PyTorch's, meaning: `p -= lr * g` updates p, not a new name)
    def __iadd__(self, o):
        return self.assign(self.add(o))

    def __isub__(self, o):
        return self.assign(self.sub(o))

    def __imul__(self, o):
        return self.assign(self.mul(o))

    def __itruediv__(self, o):
        return self.assign(self.div(o))

    def __ifloordiv__(self, o):
        return self.assign(self.floordiv(o))

    def __imod__(self, o):
        return self.assign(self.mod(o))

    def __ipow__(self, o):
        return self.assign(self.pow(o))

    def __imatmul__(self, o):
        return self.assign(self.matmul(o))

    def __iand__(self, o):
        return self.assign(self & o)

    def __ior__(self, o):
        return self.assign(self | o)

    def __ixor__(self, o):
        return self.assign(self ^ o)

    def __ilshift__(self, o):
        return self.assign(self << o)

    def __irshift__(self, o):
        return self.assign(self >> o)
