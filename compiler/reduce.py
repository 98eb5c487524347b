"""Reductions of Tensor (sum max min prod mean var std argmax argmin cumsum), mixed into Tensor."""

from __future__ import annotations

import math
from typing import Self, TypeVar

from compiler import autograd as F
from compiler.dtypes import DType, dtypes
from compiler.einops import einsum
from compiler.helpers import normalize_axis

TensorT = TypeVar("TensorT", bound="ReduceOps")  # a Tensor (the class ReduceOps is mixed into)


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

    def _reduce(self, fn, axis, keepdim: bool) -> Self:
        axes = self._axes(axis)
        for a in axes:
            if self.shape[a] == 0 and fn is not F.Sum:
                raise ValueError(f"reduction over the empty axis {a} of shape {self.shape} has no identity")
        out = self._apply(fn, self, axes=axes) if self.ndim else self
        if keepdim:
            return out
        return out.reshape(tuple(s for i, s in enumerate(self.shape) if i not in axes))

    def sum(self, axis=None, keepdim: bool = False, dtype=None) -> Self:
        """Sum; integers and bools sum as int64 (uint64 for unsigned), float16/bfloat16 accumulate in float32."""
        dt = dtypes.from_any(dtype) if dtype is not None else _sum_dtype(self.dtype)
        acc = dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt
        return self.cast(acc)._reduce(F.Sum, axis, keepdim).cast(dt)

    def max(self, axis=None, keepdim: bool = False) -> Self:
        """Maximum (its gradient is shared by the tied elements)."""
        return self._reduce(F.Max, axis, keepdim)

    def min(self, axis=None, keepdim: bool = False) -> Self:
        """Minimum."""
        return self._flip_order().max(axis, keepdim)._flip_order()

    def prod(self, axis=None, keepdim: bool = False, dtype=None) -> Self:
        """Product (integers as int64/uint64, as sum; dtype the type it is computed and returned in)."""
        dt = dtypes.from_any(dtype) if dtype is not None else _sum_dtype(self.dtype)
        return self.cast(dt)._reduce(F.Prod, axis, keepdim)

    def mean(self, axis=None, keepdim: bool = False) -> Self:
        """Mean (integers give the default float)."""
        x = self._float()
        n = math.prod(self.shape[a] for a in self._axes(axis))
        return x.sum(axis, keepdim) / max(n, 1) if n else x.sum(axis, keepdim) * math.nan

    def var(self, axis=None, keepdim: bool = False, correction: int = 1) -> Self:
        """Variance with PyTorch's default correction=1 (NumPy's ddof)."""
        x = self._float()
        n = math.prod(self.shape[a] for a in self._axes(axis))
        d = x - x.mean(axis, keepdim=True)
        return (d * d).sum(axis, keepdim) / max(n - correction, 0)

    def std(self, axis=None, keepdim: bool = False, correction: int = 1) -> Self:
        """Standard deviation (correction as var)."""
        return self.var(axis, keepdim, correction).sqrt()

    def argmax(self, axis=None, keepdim: bool = False) -> Self:
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
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        rank = T.arange(n, 0, -1, device=self.device).reshape((n,) + (1,) * (self.ndim - a - 1))
        first = (hit.cast(dtypes.int32) * rank).max(a, keepdim)
        return (n - first).cast(dtypes.int64)

    def argmin(self, axis=None, keepdim: bool = False) -> Self:
        """Index of the first minimum (int64)."""
        return self._flip_order().argmax(axis, keepdim)

    def any(self, axis=None, keepdim: bool = False) -> Self:
        """Whether any element is true (non-zero; NaN counts) over axis (False over an empty axis)."""
        return self._bool_reduce(axis, keepdim)

    def all(self, axis=None, keepdim: bool = False) -> Self:
        """Whether every element is true (non-zero; NaN counts) over axis (True over an empty axis)."""
        return (self == 0)._bool_reduce(axis, keepdim).where(False, True)

    def _bool_reduce(self, axis, keepdim: bool) -> Self:
        """any(): a max over bools (False over an empty axis, which max refuses)."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        axes = self._axes(axis)
        if any(self.shape[a] == 0 for a in axes):
            shape = tuple(1 if i in axes else s for i, s in enumerate(self.shape)) if keepdim else \
                tuple(s for i, s in enumerate(self.shape) if i not in axes)
            return T.full(shape, False, dtypes.bool, self.device)
        return self.cast(dtypes.bool).max(axis, keepdim)

    def var_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Self, Self]:
        """(var, mean) over axis."""
        return self.var(axis, keepdim, correction), self.mean(axis, keepdim)

    def std_mean(self, axis=None, keepdim: bool = False, correction: int = 1) -> tuple[Self, Self]:
        """(std, mean) over axis."""
        return self.std(axis, keepdim, correction), self.mean(axis, keepdim)

    def normalize(self, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Self:
        """self divided by its Lp norm along dim (at least eps); p=0 counts the non-zero elements."""
        if p == 0:
            den = (self != 0).sum(dim, keepdim=True).cast(dtypes.default_float)
        else:
            den = self.abs().pow(p).sum(dim, keepdim=True).pow(1 / p)
        return self / den.maximum(eps)

    def logsumexp(self, axis=None, keepdim: bool = False) -> Self:
        """log(sum(exp(x))) over axis, computed around the maximum (an infinite maximum is not subtracted, so
        all -inf gives -inf and an inf gives inf)."""
        x = self._float()
        m = x.max(axis, keepdim=True).detach()
        m = (m.abs() == math.inf).where(0, m)
        out = (x - m).exp().sum(axis, keepdim=True).log() + m
        return out if keepdim else out.reshape(tuple(s for i, s in enumerate(x.shape) if i not in x._axes(axis)))

    @staticmethod
    def einsum(formula: str, *operands, dtype=None) -> Self:
        """Einstein summation over operands ("ij,jk->ik"; compiler.einops)."""
        return einsum(formula, *operands, dtype=dtype)

    # ---- running (cumulative) reductions ------------------------------------------------------------------
    def cumsum(self, axis: int = 0) -> Self:
        """Running sum along axis (as sum: integers accumulate as int64)."""
        dt = _sum_dtype(self.dtype)
        return self.cast(dt)._cumulative(axis, "sum")

    def cumprod(self, axis: int) -> Self:
        """Running product along axis (as prod: integers accumulate as int64)."""
        return self.cast(_sum_dtype(self.dtype))._cumulative(axis, "prod")

    def cummax(self, axis: int = 0) -> tuple[Self, Self]:
        """(running maximum, index of its first occurrence so far, int32) along axis; NaN propagates, as
        NumPy's maximum.accumulate."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        if self.ndim == 0:
            return self, T.full((), 0, dtypes.int32, self.device)
        a = normalize_axis(axis, self.ndim)
        values = self._cumulative(a, "max")
        n = self.shape[a]
        if n == 0:
            return values, T.full(self.shape, 0, dtypes.int32, self.device)
        x, v = self.transpose(a, -1).detach(), values.transpose(a, -1).detach()
        hit = x.unsqueeze(-2) == v.unsqueeze(-1)                          # [..., i, j]: x[j] == running max at i
        if self.dtype.is_float:
            hit = hit | ((x != x).unsqueeze(-2) & (v != v).unsqueeze(-1))
        j = T.arange(n, device=self.device)
        upto = j.reshape(n, 1) >= j.reshape(1, n)
        first = (hit & upto).where(n - j, 0).max(-1)
        return values, (n - first).cast(dtypes.int32).transpose(a, -1)

    def cummin(self, axis: int = 0) -> tuple[Self, Self]:
        """(running minimum, index of its first occurrence so far, int32) along axis; NaN propagates."""
        values, idx = self._flip_order().cummax(axis)
        return values._flip_order(), idx

    def logcumsumexp(self, axis: int = 0) -> Self:
        """log(cumsum(exp(x))) along axis, computed around the running maximum."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        x = self._float()
        if x.ndim == 0:
            return x
        a = normalize_axis(axis, x.ndim)
        n = x.shape[a]
        if n == 0:
            return x
        xt = x.transpose(a, -1)
        m = xt.cummax(-1)[0].detach()
        j = T.arange(n, device=x.device)
        upto = j.reshape(n, 1) >= j.reshape(1, n)
        terms = upto.where(xt.unsqueeze(-2) - m.unsqueeze(-1), -math.inf)
        return (terms.exp().sum(-1).log() + m).transpose(a, -1)

    def _cumulative(self, axis: int, op: str) -> Self:
        """Running sum / prod / max along axis: every output is a reduction of the elements up to it (a
        triangle), in two stages past _CUM_SPLIT * 2 elements (runs within chunks, then the chunks' totals run
        and are combined in), so the work stays near-linear."""
        if self.ndim == 0:
            return self
        a = normalize_axis(axis, self.ndim)
        n = self.shape[a]
        if n == 0:
            return self
        x = self.transpose(a, -1)
        ident = _identity(op, self.dtype)
        if n <= 2 * _CUM_SPLIT:
            return _triangle(x, op, ident).transpose(a, -1)
        pad = -n % _CUM_SPLIT
        chunks = x.pad(((0, 0),) * (x.ndim - 1) + ((pad, 0),), value=ident)
        chunks = chunks.reshape(chunks.shape[:-1] + (-1, _CUM_SPLIT))
        runs = _triangle(chunks, op, ident)                                   # within each chunk
        totals = _triangle(runs.shrink(tuple(None for _ in runs.shape[:-1]) + ((_CUM_SPLIT - 1, _CUM_SPLIT),))
                           .squeeze(-1), op, ident)
        before = totals.pad(((0, 0),) * (totals.ndim - 1) + ((1, -1),), value=ident).unsqueeze(-1)
        out = _combine(runs, before, op).flatten(-2)
        return out.shrink(tuple(None for _ in out.shape[:-1]) + ((pad, pad + n),)).transpose(a, -1)

_CUM_SPLIT = 256


def _identity(op: str, dt: DType):
    if op == "sum":
        return False if dt == dtypes.bool else 0
    if op == "prod":
        return True if dt == dtypes.bool else 1
    return -math.inf if dt.is_float else dt.min


def _combine(a: TensorT, b: TensorT, op: str) -> TensorT:
    return a + b if op == "sum" else a * b if op == "prod" else a.maximum(b)


def _triangle(x: TensorT, op: str, ident) -> TensorT:
    """Running op along the last dimension: out[..., i] reduces x[..., j] for j <= i."""
    n = x.shape[-1]
    j = type(x).arange(n, device=x.device)
    upto = j.reshape(n, 1) >= j.reshape(1, n)
    terms = upto.where(x.unsqueeze(-2), ident)
    if op == "sum":
        return terms.sum(-1, dtype=x.dtype)
    return terms.prod(-1).cast(x.dtype) if op == "prod" else terms.max(-1)


def _sum_dtype(dt: DType) -> DType:
    if dt.kind == "b" or dt.kind == "i":
        return dtypes.int64
    if dt.kind == "u":
        return dtypes.uint64
    return dt
