"""Sorting of Tensor on the device: a bitonic network (sort, argsort, topk), mixed into Tensor.

The sorted axis is padded to a power of two m and every compare-exchange stage is one pass over values and indices:
the axis is viewed as (blocks, 2, half) and each element compared with its partner in the other half.
All comparators point the same way because the first stage of each merge compares an element with its mirror
image in the block (the "flip" form of the network), so no stage needs a direction mask. Elements are ordered
by (value, original index), which makes the sort stable (ties keep their order, as tinygrad promises) and gives
the permutation without a second pass. NaN orders above every number (last ascending, first descending, as
NumPy and PyTorch); padding orders after everything. Values move through `where`, so they carry gradients.
"""

from __future__ import annotations

import math
from typing import Self, TypeVar

from compiler.dtypes import dtypes
from compiler.helpers import normalize_axis

TensorT = TypeVar("TensorT", bound="SortingOps")  # a Tensor (the class SortingOps is mixed into)


def _comes_first(ka: TensorT, ia: TensorT, kb: TensorT, ib: TensorT, n: int, descending: bool) -> TensorT:
    """Whether element a belongs before element b: by key (NaN above every number), then by original index;
    indices n and above are padding and go last."""
    ka, kb = ka.detach(), kb.detach()
    if ka.dtype == dtypes.bool:
        ka, kb = ka.cast(dtypes.int8), kb.cast(dtypes.int8)
    ahead = ka > kb if descending else ka < kb
    same = ka == kb
    if ka.dtype.is_float:
        na, nb = ka != ka, kb != kb
        ahead = ahead | (na & nb.logical_not() if descending else nb & na.logical_not())
        same = same | (na & nb)
    order = ahead | (same & (ia < ib))
    return (ia < n) & ((ib >= n) | order)


def _exchange(keys: TensorT, idx: TensorT, block: int, mirror: bool, n: int,
              descending: bool) -> tuple[TensorT, TensorT]:
    """One stage: within blocks of `block` elements, element i of the first half meets element i of the second
    half (or, when mirror, the element as far from the block's end) and the pair is put in order. Every element
    reads its partner through a flipped view and keeps itself or takes the partner: no concatenation."""
    lead, m = keys.shape[:-1], keys.shape[-1]
    shape = lead + (m // block, 2, block // 2)
    axes = (-2, -1) if mirror else (-2,)
    k, i = keys.reshape(shape), idx.reshape(shape)
    kp, ip = k.flip(axes), i.flip(axes)
    top = type(keys).arange(2, device=keys.device).reshape(2, 1) == 0
    take = top.where(_comes_first(kp, ip, k, i, n, descending), _comes_first(k, i, kp, ip, n, descending))
    return (take.where(kp, k).reshape(lead + (m,)).contiguous(),
            take.where(ip, i).reshape(lead + (m,)).contiguous())


class SortingOps:
    """Mixed into Tensor (module docstring)."""

    def sort(self, dim: int = -1, descending: bool = False) -> tuple[Self, Self]:
        """(values, indices) sorted along dim; stable; indices are int32 (tinygrad's default int)."""
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        if self.ndim == 0:
            return self, T.full((), 0, dtypes.int32, self.device)
        d = normalize_axis(dim, self.ndim, "dim")
        n = self.shape[d]
        if n <= 1:
            return self, T.full(self.shape, 0, dtypes.int32, self.device)
        order = [i for i in range(self.ndim) if i != d] + [d]
        x = self.permute(order)
        lead = x.shape[:-1]
        rows = math.prod(lead)
        # the network runs on (rows, m), or (m,) for one row: fewer view dimensions to index
        x = x.reshape((rows, n) if rows != 1 else (n,))
        m = 1 << (n - 1).bit_length()
        keys = x.pad(((0, 0),) * (x.ndim - 1) + ((0, m - n),))
        idx = T.arange(m, device=self.device).cast(dtypes.int32)._broadcast_to(keys.shape)
        block = 2
        while block <= m:
            keys, idx = _exchange(keys, idx, block, True, n, descending)
            half = block // 2
            while half >= 2:
                keys, idx = _exchange(keys, idx, half, False, n, descending)
                half //= 2
            block *= 2
        back = [order.index(i) for i in range(self.ndim)]
        cut = tuple(None for _ in keys.shape[:-1]) + ((0, n),)
        return tuple(t.shrink(cut).reshape(lead + (n,)).permute(back) for t in (keys, idx))

    def argsort(self, dim: int = -1, descending: bool = False) -> Self:
        """The indices that sort along dim (stable; int32)."""
        return self.sort(dim, descending)[1]

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted_: bool = True) -> tuple[Self, Self]:
        """The k largest (or smallest) values along dim and their indices, in sorted order (ties by index)."""
        if not sorted_:
            raise NotImplementedError("topk: sorted_=False is not supported (as in tinygrad)")
        d = normalize_axis(dim, self.ndim, "dim")
        if not 0 <= k <= (self.shape[d] if self.ndim else 1):
            raise ValueError(f"topk: k={k} is out of range for dimension {d} of shape {self.shape}")
        values, idx = self.sort(d, descending=largest)
        if self.ndim == 0:
            return values, idx
        cut = tuple((0, k) if i == d else None for i in range(self.ndim))
        return values.shrink(cut), idx.shrink(cut)
