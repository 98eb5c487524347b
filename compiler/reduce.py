"""Reductions of Tensor (sum max min prod mean var std argmax argmin cumsum), mixed into Tensor."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from compiler import autograd as F
from compiler.dtypes import DType, dtypes
from compiler.helpers import normalize_axis

if TYPE_CHECKING:
    from compiler.tensor import Tensor


class ReduceOps:
    """Mixed into Tensor (module docstring)."""

    def _axes(self, axis) -> tuple[int, ...]:
        if axis is None:
            return tuple(range(self.ndim))
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        out = tuple(normalize_axis(a, self.ndim) for a in axes)
        if len(set(out)) != len(out):
            raise ValueError(f"repeated axis in {axis}")
        return out

    def _reduce(self, fn, axis, keepdim: bool) -> Tensor:
        axes = self._axes(axis)
        for a in axes:
            if self.shape[a] == 0 and fn is not F.Sum:
                raise ValueError(f"reduction over the empty axis {a} of shape {self.shape} has no identity")
        out = self._apply(fn, self, axes=axes) if self.ndim else self
        if keepdim:
            return out
        return out.reshape(tuple(s for i, s in enumerate(self.shape) if i not in axes))

    def sum(self, axis=None, keepdim: bool = False, dtype=None) -> Tensor:
        """Sum; integers and bools sum as int64 (uint64 for unsigned), float16/bfloat16 accumulate in float32."""
        dt = dtypes.from_any(dtype) if dtype is not None else _sum_dtype(self.dtype)
        acc = dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt
        return self.cast(acc)._reduce(F.Sum, axis, keepdim).cast(dt)

    def max(self, axis=None, keepdim: bool = False) -> Tensor:
        """Maximum (its gradient is shared by the tied elements)."""
        return self._reduce(F.Max, axis, keepdim)

    def min(self, axis=None, keepdim: bool = False) -> Tensor:
        """Minimum."""
        return self._flip_order().max(axis, keepdim)._flip_order()

    def prod(self, axis=None, keepdim: bool = False) -> Tensor:
        """Product (integers as int64/uint64, as sum)."""
        dt = _sum_dtype(self.dtype)
        return self.cast(dt)._reduce(F.Prod, axis, keepdim)

    def mean(self, axis=None, keepdim: bool = False) -> Tensor:
        """Mean (integers give the default float)."""
        x = self._float()
        n = math.prod(self.shape[a] for a in self._axes(axis))
        return x.sum(axis, keepdim) / max(n, 1) if n else x.sum(axis, keepdim) * math.nan

    def var(self, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor:
        """Variance with PyTorch's default correction=1 (NumPy's ddof)."""
        x = self._float()
        n = math.prod(self.shape[a] for a in self._axes(axis))
        d = x - x.mean(axis, keepdim=True)
        return (d * d).sum(axis, keepdim) / max(n - correction, 0)

    def std(self, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor:
        """Standard deviation (correction as var)."""
        return self.var(axis, keepdim, correction).sqrt()

    def argmax(self, axis=None, keepdim: bool = False) -> Tensor:
        """Index of the first maximum (int64; the first NaN when there is one, as NumPy), over the flattened tensor
        when axis is None."""
        if axis is None:
            return self.flatten().argmax(0)
        a = normalize_axis(axis, self.ndim)
        n = self.shape[a]
        if n == 0:
            raise ValueError(f"argmax over the empty axis {a}")
        hit = self == self.max(a, keepdim=True)
        if self.dtype.is_float:  # a NaN is the maximum (max propagates it), and the first one wins, as NumPy
            hit = hit | (self != self)
        from compiler.tensor import Tensor
        rank = Tensor.arange(n, 0, -1, device=self.device).reshape((n,) + (1,) * (self.ndim - a - 1))
        first = (hit.cast(dtypes.int32) * rank).max(a, keepdim)
        return (n - first).cast(dtypes.int64)

    def argmin(self, axis=None, keepdim: bool = False) -> Tensor:
        """Index of the first minimum (int64)."""
        return self._flip_order().argmax(axis, keepdim)

    def cumsum(self, axis: int = 0) -> Tensor:
        """Running sum along axis (as sum: integers accumulate as int64)."""
        a = normalize_axis(axis, self.ndim)
        n = self.shape[a]
        x = self.transpose(a, -1)
        from compiler.tensor import Tensor
        tri = Tensor.arange(n, device=self.device).reshape(n, 1) >= Tensor.arange(n, device=self.device).reshape(1, n)
        dt = _sum_dtype(self.dtype)
        out = (x.unsqueeze(-2).cast(dt) * tri.cast(dt)).sum(-1, dtype=dt)
        return out.transpose(a, -1)


def _sum_dtype(dt: DType) -> DType:
    if dt.kind == "b" or dt.kind == "i":
        return dtypes.int64
    if dt.kind == "u":
        return dtypes.uint64
    return dt
