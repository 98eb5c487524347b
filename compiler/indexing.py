"""Indexing and assignment with NumPy's rules: ints, slices with steps, None, Ellipsis (views, no kernel) and
integer tensors (a gather: a one-hot comparison with the index summed away, so it is differentiable and every
load stays provably in bounds). Integer index tensors are checked against the dimension's size on the host
(which runs their graph), so an out-of-range index is an IndexError, not a wrong value."""

from __future__ import annotations

from typing import Self

import numpy as np

from compiler.dtypes import dtypes
from compiler.helpers import broadcast_shape


def _expand_index(idx, ndim: int) -> list:
    """The index as a list with Ellipsis replaced by full slices."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in items if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices: {used} for a tensor with {ndim} dimensions")
    at = next((k for k, i in enumerate(items) if i is Ellipsis), None)
    if at is not None:
        items[at:at + 1] = [slice(None)] * (ndim - used)
    else:
        items += [slice(None)] * (ndim - used)
    return items


class IndexingOps:
    """Mixed into Tensor (module docstring)."""

    def __getitem__(self, idx) -> Self:
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        items = _expand_index(idx, self.ndim)
        x, dim, out_dims = self, 0, 0
        advanced: list[tuple[int, Self]] = []  # (output dim, index tensor)
        for it in items:
            if it is None:
                x = x.unsqueeze(out_dims)
                out_dims += 1
            elif isinstance(it, bool):
                raise IndexError("boolean indices are not supported (the result shape would depend on data)")
            elif isinstance(it, int | np.integer):
                size = x.shape[out_dims]
                i = int(it)
                if not -size <= i < size:
                    raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
                i %= size
                x = x.shrink(tuple((i, i + 1) if d == out_dims else None for d in range(x.ndim))).squeeze(out_dims)
                dim += 1
            elif isinstance(it, slice):
                x = x._slice(out_dims, it)
                dim += 1
                out_dims += 1
            else:
                t = it if isinstance(it, T) else T(np.asarray(it), device=self.device)
                if t.dtype.is_float or t.dtype == dtypes.bool:
                    raise IndexError(f"tensors used as indices must be integers, not {t.dtype.name}")
                advanced.append((out_dims, t))
                dim += 1
                out_dims += 1
        return x._gather(advanced) if advanced else x

    def _slice(self, d: int, sl: slice) -> Self:
        """Dimension d sliced (any step) with views only."""
        size = self.shape[d]
        start, stop, step = sl.indices(size)
        if step == 0:
            raise ValueError("slice step cannot be zero")
        n = len(range(start, stop, step))
        x = self
        if step < 0:
            x = x.flip(d)
            start, step = size - 1 - start, -step
        if n == 0:
            return x.shrink(tuple((0, 0) if i == d else None for i in range(x.ndim)))
        end = min(size, start + n * step)
        x = x.shrink(tuple((start, end) if i == d else None for i in range(x.ndim)))
        if step == 1:
            return x
        x = x.pad(tuple((0, n * step - (end - start)) if i == d else (0, 0) for i in range(x.ndim)))
        x = x.reshape(x.shape[:d] + (n, step) + x.shape[d + 1:])
        x = x.shrink(tuple((0, 1) if i == d + 1 else None for i in range(x.ndim)))
        return x.reshape(x.shape[:d + 1] + x.shape[d + 2:])

    def _gather(self, advanced: list[tuple[int, Self]]) -> Self:
        """NumPy advanced indexing by integer tensors at the given dims (broadcast together); their result
        dims replace the indexed ones where they were if adjacent, else lead (NumPy's placement rule)."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        dims = [d for d, _ in advanced]
        bshape = broadcast_shape(*(t.shape for _, t in advanced))
        idx = []
        for d, t in advanced:
            size = self.shape[d]
            vals = t.numpy()
            if vals.size and (vals.min() < -size or vals.max() >= size):
                bad = int(vals[(vals < -size) | (vals >= size)].flat[0])
                raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
            t = t.cast(dtypes.int32)
            idx.append((t < 0).where(t + size, t)._broadcast_to(bshape))
        rest = [d for d in range(self.ndim) if d not in dims]
        x = self.permute(rest + dims)                                  # (rest..., indexed...)
        nb, nrest = len(bshape), len(rest)
        x = x.reshape(x.shape[:nrest] + (1,) * nb + x.shape[nrest:])    # (rest..., 1*nb, indexed...)
        hit = None
        for k, (d, t) in enumerate(zip(dims, idx, strict=True)):
            classes = T.arange(self.shape[d], device=self.device)
            shape = (1,) * nrest + bshape + tuple(self.shape[e] if j == k else 1 for j, e in enumerate(dims))
            m = t.reshape((1,) * nrest + bshape + (1,) * len(dims)) == classes.reshape(
                (1,) * (nrest + nb) + tuple(self.shape[e] if j == k else 1 for j, e in enumerate(dims)))
            m = m._broadcast_to(shape)
            hit = m if hit is None else hit & m
        picked = hit.where(x, 0).sum(tuple(range(nrest + nb, nrest + nb + len(dims))), dtype=self.dtype)
        adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
        if adjacent and dims[0] > 0:
            at = sum(1 for d in rest if d < dims[0])
            order = list(range(at)) + list(range(nrest, nrest + nb)) + list(range(at, nrest))
            return picked.permute(order)
        return picked.permute(list(range(nrest, nrest + nb)) + list(range(nrest)))

    def __setitem__(self, idx, value) -> None:
        """self[idx] = value: self's values are replaced by a new graph (a where over the positions idx
        selects), so earlier readers of self keep the old values, as with functional updates."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        positions = T.arange(self.numel(), device=self.device).reshape(self.shape)[idx]
        value = value if isinstance(value, T) else T.full((), value, self.dtype, self.device)
        value = value.cast(self.dtype)._broadcast_to(positions.shape)
        if positions.numel() == 0:
            return
        flat_pos = positions.flatten()
        vals = value.flatten()
        n = self.numel()
        every = T.arange(n, device=self.device).reshape(n, 1)
        hit = every == flat_pos.reshape(1, -1)                         # (n, selected)
        # the last write wins when positions repeat (NumPy): rank the hits and keep the highest
        rank = T.arange(1, flat_pos.numel() + 1, device=self.device).reshape(1, -1)
        last = hit.where(rank, 0).max(1, keepdim=True)
        chosen = hit & (rank == last)
        new = chosen.where(vals.reshape(1, -1), 0).sum(1, dtype=self.dtype)
        written = last.reshape(n) > 0
        self.lazydata = written.where(new, self.flatten()).reshape(self.shape).cast(self.dtype).lazydata
        self.requires_grad, self._ctx, self._parents = False, None, ()
