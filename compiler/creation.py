"""Creation of Tensors (mixed into Tensor): constants, ranges, identity, and the *_like forms, with tinygrad's
names and arguments. A constant holds no memory until something needs it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Self

import numpy as np

from compiler import device as devices
from compiler.dtypes import dtypes
from compiler.lazy import LazyBuffer

Scalar = int | float | bool


def shape_arg(shape) -> tuple[int, ...]:
    """A shape given as f(2, 3) or f((2, 3)): a tuple of non-negative ints (TypeError/ValueError naming it)."""
    if len(shape) == 1 and isinstance(shape[0], Sequence | np.ndarray):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if not isinstance(s, int | np.integer) or isinstance(s, bool):
            raise TypeError(f"shape: entries must be ints, got {s!r}")
        if s < 0:
            raise ValueError(f"shape: negative dimension {s} in {tuple(shape)}")
        out.append(int(s))
    return tuple(out)


class CreationOps:
    """Mixed into Tensor (module docstring)."""

    @classmethod
    def full(cls, shape, fill_value: Scalar, dtype=None, device: str | None = None, buffer: bool = True,
             requires_grad: bool = False) -> Self:
        """A tensor of one value. No memory until something needs it, whatever buffer says (tinygrad's buffer=False
        asks for a broadcast constant; ours always is one, with the same values)."""
        shape = shape_arg(shape if isinstance(shape, tuple | list) else (shape,))
        dt = dtypes.from_any(dtype) if dtype is not None else dtypes.of_scalar(fill_value)
        lb = LazyBuffer.const(fill_value, dt, devices.canonical(device), shape)
        return cls(lb, requires_grad=requires_grad)

    @classmethod
    def zeros(cls, *shape, dtype=None, device=None, requires_grad=False) -> Self:
        """Zeros (float32 unless dtype)."""
        return cls.full(shape_arg(shape), 0, dtype or dtypes.default_float, device, requires_grad=requires_grad)

    @classmethod
    def ones(cls, *shape, dtype=None, device=None, requires_grad=False) -> Self:
        """Ones (float32 unless dtype)."""
        return cls.full(shape_arg(shape), 1, dtype or dtypes.default_float, device, requires_grad=requires_grad)

    @classmethod
    def empty(cls, *shape, dtype=None, device=None) -> Self:
        """Memory with undefined contents."""
        return cls(LazyBuffer.empty(shape_arg(shape), dtypes.from_any(dtype or dtypes.default_float),
                                       devices.canonical(device)))

    @classmethod
    def arange(cls, start, stop=None, step=1, dtype=None, device=None) -> Self:
        """start, start+step, ... below stop (int32 for int arguments, int64 when the values do not fit int32,
        else float32)."""
        if stop is None:
            start, stop = 0, start
        if step == 0:
            raise ValueError("arange: step must not be 0")
        n = max(0, math.ceil((stop - start) / step))
        is_int = all(isinstance(v, int) for v in (start, stop, step))
        dt = dtypes.from_any(dtype) if dtype is not None else (dtypes.default_int if is_int else dtypes.default_float)
        if dtype is None and is_int and not dt.min <= start + (n - 1) * step <= dt.max:
            dt = dtypes.int64  # values past int32 (NumPy's arange is int64 throughout)
        if n == 0:
            return cls.zeros(0, dtype=dt, device=device)
        idx = cls(LazyBuffer.iota(n, devices.canonical(device)))
        if dt.is_float:
            return idx.cast(dt) * step + start
        return (idx * step + start).cast(dt) if (start, step) != (0, 1) else idx.cast(dt)

    @classmethod
    def eye(cls, n: int, m: int | None = None, dtype=None, device=None) -> Self:
        """The n x m identity matrix."""
        m = n if m is None else m
        r = cls.arange(n, device=device).reshape(n, 1)
        c = cls.arange(m, device=device).reshape(1, m)
        return (r == c).cast(dtype or dtypes.default_float)

    @classmethod
    def linspace(cls, start: int | float, stop: int | float, steps: int, dtype=None, device=None) -> Self:
        """steps values evenly spaced from start to stop inclusive (float32 unless dtype; not bool)."""
        if not isinstance(steps, int) or steps < 0:
            raise ValueError(f"linspace: steps must be a non-negative int, not {steps!r}")
        dt = dtypes.from_any(dtype) if dtype is not None else dtypes.default_float
        if dt == dtypes.bool:
            raise TypeError("linspace: dtype must not be bool")
        if steps == 1:
            return cls.full((1,), start, dt, device)
        step = (stop - start) / (steps - 1) if steps > 1 else 0.0
        return (cls.arange(steps, dtype=dtypes.default_float, device=device) * step + start).cast(dt)

    def const_like(self, b: Scalar, dtype=None) -> Self:
        """A constant b of self's shape and device (self's dtype unless dtype)."""
        return self.full_like(b, dtype)

    def empty_like(self, dtype=None, device=None) -> Self:
        """Memory of self's shape with undefined contents."""
        return type(self).empty(*self.shape, dtype=dtype or self.dtype, device=device or self.device)

    def full_like(self, fill_value: Scalar, dtype=None, device=None, buffer: bool = True) -> Self:
        """A constant tensor of self's shape (self's dtype and device unless given; buffer: see full)."""
        return type(self).full(self.shape, fill_value, dtype or self.dtype, device or self.device)

    def zeros_like(self, dtype=None, device=None) -> Self:
        """Zeros of self's shape."""
        return self.full_like(0, dtype, device)

    def ones_like(self, dtype=None, device=None) -> Self:
        """Ones of self's shape."""
        return self.full_like(1, dtype, device)
