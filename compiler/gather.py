"""Index-driven reads and writes of Tensor, mixed into Tensor: gather, scatter, scatter_reduce, masked_fill,
masked_select, nonzero, interpolate, max_unpool2d.

Each is a one-hot comparison of an index with the positions of a dimension, then a `where` and a reduction
over the matches (as tinygrad builds them): every load stays provably in bounds, gradients flow through
`where`, and an index outside the dimension matches nothing (gather reads 0 there, scatter writes nothing),
as in tinygrad. masked_select and nonzero without a size have a shape that depends on the data: the count
is computed on the device and read back first, as tinygrad does.
"""

from __future__ import annotations

import math
from typing import Self, TypeVar

import numpy as np

from compiler.dtypes import dtypes
from compiler.helpers import normalize_axis

TensorT = TypeVar("TensorT", bound="GatherOps")  # a Tensor (the class GatherOps is mixed into)


def _check_index(cls: type, index, what: str = "index") -> None:
    """`index` is a `cls` (the Tensor class) of integers."""
    if not isinstance(index, cls):
        raise TypeError(f"{what} must be a Tensor, not {type(index).__name__}")
    if index.dtype.is_float or index.dtype == dtypes.bool:
        raise TypeError(f"{what} must hold integers, not {index.dtype.name}")


def _one_hot_last(index: TensorT, n: int) -> TensorT:
    """index[..., None] == 0..n-1: a bool tensor of index.shape + (n,)."""
    return index.unsqueeze(-1) == type(index).arange(n, device=index.device).cast(index.dtype)


def _lowest(dt):
    return -math.inf if dt.is_float else dt.min


def _highest(dt):
    return math.inf if dt.is_float else dt.max


class GatherOps:
    """Mixed into Tensor (module docstring)."""

    def gather(self, dim: int, index: Self) -> Self:
        """out[..., j, ...] = self[..., index[..., j, ...], ...] along dim (index has self's rank; its other
        dimensions may be shorter than self's)."""
        _check_index(type(self), index)
        if index.ndim != self.ndim:
            raise ValueError(f"gather: index has {index.ndim} dimensions, self {self.ndim}")
        d = normalize_axis(dim, self.ndim, "dim")
        if any(i > s for k, (s, i) in enumerate(zip(self.shape, index.shape, strict=True)) if k != d):
            raise ValueError(f"gather: index shape {index.shape} exceeds self shape {self.shape} outside dim {d}")
        x = self.shrink(tuple((0, i) if k != d else None for k, i in enumerate(index.shape)))
        x = x.unsqueeze(-1).transpose(d, -1)                           # dim d moved last, a 1 in its place
        return _one_hot_last(index, self.shape[d]).where(x, 0).sum(-1, dtype=self.dtype)

    def _scatter_parts(self, d: int, index: Self, src: Self) -> tuple[Self, Self]:
        """(hit, values) of self.shape + (k,), k = index.shape[d]: hit[..., p, ..., j] says index[..., j, ...]
        is p, values holds src[..., j, ...] there (zero padded where index is shorter than self)."""
        k = index.shape[d]
        hit = _one_hot_last(index, self.shape[d]).transpose(d, -1)
        vals = src.shrink(tuple((0, i) for i in index.shape)).unsqueeze(-1).transpose(d, -1)
        vals = vals._broadcast_to(hit.shape)
        full = self.shape + (k,)
        pads = tuple((0, f - s) for f, s in zip(full, hit.shape, strict=True))
        return hit.pad(pads), vals.pad(pads)

    def _scatter_check(self, dim: int, index: Self, src: Self) -> int:
        _check_index(type(self), index)
        d = normalize_axis(dim, self.ndim, "dim")
        if not index.ndim == self.ndim == src.ndim:
            raise ValueError(f"scatter: self, index and src need one rank, got {self.ndim}, {index.ndim}, {src.ndim}")
        for k, (s, i, r) in enumerate(zip(self.shape, index.shape, src.shape, strict=True)):
            if i > r or (k != d and i > s):
                raise ValueError(f"scatter: index shape {index.shape} must fit in src {src.shape} and in self "
                                 f"{self.shape} outside dim {d}")
        if src.dtype != self.dtype:
            raise TypeError(f"scatter: src is {src.dtype.name}, self {self.dtype.name} (they must match)")
        return d

    def scatter(self, dim: int, index: Self, src, reduce: str | None = None) -> Self:
        """A copy of self with self[..., index[..., j, ...], ...] = src[..., j, ...] along dim (the last write
        wins when indices repeat); reduce "add" or "multiply" (with a scalar src) combines instead."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        if reduce not in (None, "add", "multiply"):
            raise ValueError(f"scatter: reduce must be None, 'add' or 'multiply', not {reduce!r}")
        if not isinstance(src, T):
            _check_index(type(self), index)
            src = T.full(index.shape, src, self.dtype, self.device)
        elif reduce is not None:
            raise TypeError("scatter: reduce needs a scalar src (use scatter_reduce for a tensor src)")
        if reduce is not None:
            return self.scatter_reduce(dim, index, src, "sum" if reduce == "add" else "prod")
        d = self._scatter_check(dim, index, src)
        if index.numel() == 0:
            return self
        hit, vals = self._scatter_parts(d, index, src)
        k = hit.shape[-1]
        rank = T.arange(1, k + 1, device=self.device)
        last = hit.where(rank, 0).max(-1, keepdim=True)
        new = (hit & (rank == last)).where(vals, 0).sum(-1, dtype=self.dtype)
        return (last.squeeze(-1) > 0).where(new, self)

    def scatter_reduce(self, dim: int, index: Self, src: Self, reduce: str,
                       include_self: bool = True) -> Self:
        """self with src combined into the positions index names along dim by "sum", "prod", "mean", "amax"
        or "amin" (include_self=False leaves self's value out where something lands)."""
        if reduce not in ("sum", "prod", "mean", "amax", "amin"):
            raise ValueError(f"scatter_reduce: reduce must be sum, prod, mean, amax or amin, not {reduce!r}")
        d = self._scatter_check(dim, index, src)
        if index.numel() == 0:
            return self
        hit, vals = self._scatter_parts(d, index, src)
        landed = hit.any(-1)
        dt = self.dtype

        def base(neutral):
            return self if include_self else landed.where(neutral, self)

        if reduce == "sum":
            return (hit.where(vals, 0).sum(-1, dtype=dt) + base(0)).cast(dt)
        if reduce == "prod":
            return (hit.where(vals, 1).prod(-1).cast(dt) * base(1)).cast(dt)
        if reduce == "amax":
            return hit.where(vals, _lowest(dt)).max(-1).maximum(base(_lowest(dt))).cast(dt)
        if reduce == "amin":
            return hit.where(vals, _highest(dt)).min(-1).minimum(base(_highest(dt))).cast(dt)
        count = hit.sum(-1, dtype=dtypes.int32) + (1 if include_self else landed.where(0, 1))
        return (hit.where(vals, 0).sum(-1, dtype=dt) + base(0)) / count

    def _compact(self, keep: Self, size: int | None, fill_value) -> Self:
        """The rows of self (N, C) where keep (N,) is true, in order, as (L, C): L is size (padded with
        fill_value, or truncated), or the number of kept rows (read back from the device)."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        n = keep.shape[0]
        count = keep.cast(dtypes.int32).sum(dtype=dtypes.int32)
        length = int(count.item()) if size is None else size
        if length == 0 or n == 0:
            return T.full((length,) + self.shape[1:], fill_value, self.dtype, self.device)
        slot = keep.cast(dtypes.int32).cumsum(0).cast(dtypes.int32) - 1        # where each kept row goes
        rows = T.arange(length, device=self.device).reshape(length, 1)
        pick = (slot.reshape(1, n) == rows) & keep.reshape(1, n)                # (L, N)
        out = pick.unsqueeze(-1).where(self.unsqueeze(0), 0).sum(1, dtype=self.dtype)
        if size is None:
            return out
        return (rows < count).where(out, fill_value).cast(self.dtype)

    def masked_select(self, mask: Self, size: int | None = None, fill_value=0) -> Self:
        """The elements where mask (bool, broadcast to self) is true, flattened in order; size fixes the length
        (padding with fill_value), else the length is the number of true elements."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        if not isinstance(mask, T) or mask.dtype != dtypes.bool:
            raise TypeError(f"masked_select: mask must be a bool Tensor, not {getattr(mask, 'dtype', type(mask))}")
        keep = mask._broadcast_to(self.shape).flatten()
        return self.flatten().unsqueeze(-1)._compact(keep, size, fill_value).reshape(-1)

    def nonzero(self, size: int | None = None, fill_value=0) -> Self:
        """The coordinates (count, ndim) of the non-zero elements in row-major order, int32; size fixes the count
        (padding with fill_value)."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        keep = (self != 0).flatten() if self.ndim else (self != 0).reshape(1)
        if self.ndim == 0:
            length = int(keep.cast(dtypes.int32).sum().item()) if size is None else size
            return T.zeros(length, 0, dtype=dtypes.int32, device=self.device)
        coords = [T.arange(s, device=self.device).cast(dtypes.int32).reshape(
            tuple(s if j == i else 1 for j in range(self.ndim)))._broadcast_to(self.shape).flatten()
            for i, s in enumerate(self.shape)]
        table = coords[0].stack(*coords[1:], dim=-1)
        return table._compact(keep, size, fill_value)

    def interpolate(self, size, mode: str = "linear", align_corners: bool = False) -> Self:
        """Resampled to size over the last len(size) dimensions: "linear" (bi/trilinear, align_corners as
        PyTorch), "nearest" or "nearest-exact"."""
        if not isinstance(size, tuple | list) or not all(isinstance(s, int) for s in size) or \
                not 0 < len(size) <= self.ndim:
            raise ValueError(f"interpolate: size must be 1 to {self.ndim} ints, got {size!r}")
        if mode not in ("linear", "nearest", "nearest-exact"):
            raise ValueError(f"interpolate: mode must be linear, nearest or nearest-exact, not {mode!r}")
        if align_corners and mode != "linear":
            raise ValueError("interpolate: align_corners applies to mode='linear' only")
        x = self
        for axis in range(-1, -len(size) - 1, -1):
            n_in, n_out = self.shape[axis], size[axis]
            shape = x.shape[:x.ndim + axis] + (n_out,) + x.shape[x.ndim + axis + 1:]
            if mode == "linear":
                low, high, frac = _linear_taps(n_in, n_out, align_corners)
                a, b = (x.gather(axis, _table(type(self), v, np.int32, axis, shape, self.device)) for v in (low, high))
                x = a + (b - a) * _table(type(self), frac, np.float32, axis, shape, self.device)
            else:
                taps = _nearest_taps(n_in, n_out, mode == "nearest-exact")
                x = x.gather(axis, _table(type(self), taps, np.int32, axis, shape, self.device))
        return x.cast(self.dtype)

    def max_unpool2d(self, indices: Self, kernel_size=(2, 2), stride=None, dilation=1, padding=0,
                     output_size=None) -> Self:
        """The inverse of max pooling with indices: each value written at its flat index into zeros of the
        unpooled spatial shape (any number of spatial dimensions, as tinygrad)."""
        _check_index(type(self), indices, "indices")
        if indices.shape != self.shape or self.ndim < 3:
            raise ValueError(f"max_unpool2d: indices {indices.shape} must match self {self.shape} (N, C, *spatial)")
        bs, c, *spatial = self.shape
        nd = len(spatial)
        if output_size is None:
            k, d = _ints(kernel_size, nd, "kernel_size"), _ints(dilation, nd, "dilation")
            s = k if stride is None else _ints(stride, nd, "stride")
            p = _ints(padding, nd, "padding")
            output_size = tuple((i - 1) * st - 2 * pp + dd * (kk - 1) + 1
                                for i, kk, dd, st, pp in zip(spatial, k, d, s, p, strict=True))
        else:
            output_size = tuple(output_size)[-nd:]
        total = math.prod(output_size)
        hit = _one_hot_last(indices.reshape(bs, c, -1), total)           # (N, C, L, total)
        out = hit.where(self.reshape(bs, c, -1, 1), 0).sum(2, dtype=self.dtype)
        return out.reshape(bs, c, *output_size)


def _table(cls: type[TensorT], values, dt, axis: int, shape: tuple[int, ...], device: str) -> TensorT:
    """A per-position table of one axis (constants of the resampling, not data) broadcast to shape, as a `cls`
    (the Tensor class)."""
    view = tuple(v if i == len(shape) + axis else 1 for i, v in enumerate(shape))
    return cls(np.asarray(values, dt), device=device).reshape(view)._broadcast_to(shape)


def _ints(v, n: int, what: str) -> tuple[int, ...]:
    t = (v,) * n if isinstance(v, int) else tuple(v)
    if len(t) != n:
        raise ValueError(f"max_unpool2d: {what} must be an int or {n} ints, got {v!r}")
    return t


def _linear_taps(n_in: int, n_out: int, align_corners: bool):
    """For each output position: the two input positions it lies between and the weight of the upper one
    (exact integer arithmetic, so tables agree with tinygrad's to the last bit)."""
    o = np.arange(n_out, dtype=np.int64)
    if align_corners:
        num, den = o * (n_in - 1), max(n_out - 1, 1)
    else:
        num, den = (2 * o + 1) * n_in - n_out, 2 * n_out
    num = np.clip(num, 0, (n_in - 1) * den)
    return num // den, -(-num // den), (num % den).astype(np.float32) / np.float32(den)


def _nearest_taps(n_in: int, n_out: int, exact: bool):
    """The input position each output position copies (float32 arithmetic, truncated, as tinygrad)."""
    scale = np.float32(n_in / n_out)
    pos = np.arange(n_out, dtype=np.float32) + (np.float32(0.5) if exact else np.float32(0))
    return np.minimum((scale * pos).astype(np.int32), n_in - 1)
