"""Views: how a tensor's elements sit in its buffer, so movement operations cost no kernel.

A `View` maps an index of its shape to a flat element offset, offset + sum(idx * stride), and a mask (a box
of valid indices per dimension; outside it the element is 0: what pad makes). A `ShapeTracker` is a stack
of views: when a reshape cannot be expressed as strides of the last view, a new contiguous view goes on top,
whose flat offsets are indices of the view below (unflattened by its shape). Lowering a view gives the IR's
index arithmetic (compiler.ir.lower); the simplifier folds the div/mod of stacked views where it can.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from math import prod


def strides_for(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major (C) strides of a shape, 0 for size-1 dimensions."""
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc if s != 1 else 0)
        acc *= s
    return tuple(reversed(out))


@dataclass(frozen=True)
class View:
    """shape, strides, offset and an optional mask ((lo, hi) per dimension)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    mask: tuple[tuple[int, int], ...] | None = None

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        """The dataclass's hash of the fields, computed once: views are dictionary keys wherever the scheduler
        builds a kernel (every node of it, several lookups each; rehashing them was a seventh of a schedule's time).
        Only ints: the same in every process."""
        return hash((self.shape, self.strides, self.offset, self.mask))

    @staticmethod
    def create(shape, strides=None, offset: int = 0, mask=None) -> View:
        """A view with canonical strides (0 for size-1 dims) and a mask that is dropped when it covers all."""
        shape = tuple(int(s) for s in shape)
        strides = strides_for(shape) if strides is None else tuple(0 if s == 1 else st for s, st in zip(
            shape, strides, strict=True))
        if mask is not None:
            mask = tuple((max(0, lo), min(s, hi)) for (lo, hi), s in zip(mask, shape, strict=True))
            if any(lo >= hi for lo, hi in mask):  # nothing is valid: every element reads as 0
                mask = tuple((0, 0) for _ in shape)
                strides, offset = (0,) * len(shape), 0
            elif all(lo == 0 and hi == s for (lo, hi), s in zip(mask, shape, strict=True)):
                mask = None
        return View(shape, strides, offset, mask)

    @cached_property
    def contiguous(self) -> bool:
        """Whether the view is the plain row-major layout of its shape."""
        return self.offset == 0 and self.mask is None and self.strides == strides_for(self.shape)

    def size(self) -> int:
        """Number of elements."""
        return prod(self.shape)

    # ---- movement ---------------------------------------------------------------------------------------
    def permute(self, order) -> View:
        """Dimensions reordered."""
        return View.create(tuple(self.shape[i] for i in order), tuple(self.strides[i] for i in order), self.offset,
                           None if self.mask is None else tuple(self.mask[i] for i in order))

    def expand(self, shape) -> View:
        """Size-1 dimensions broadcast to `shape` (stride 0)."""
        mask = None if self.mask is None else tuple(
            m if s == n else ((0, n) if m == (0, 1) else (0, 0)) for m, s, n in zip(self.mask, self.shape, shape,
                                                                                     strict=True))
        return View.create(shape, tuple(st if s == n else 0 for st, s, n in zip(self.strides, self.shape, shape,
                                                                                 strict=True)), self.offset, mask)

    def shrink(self, bounds) -> View:
        """The box [lo, hi) of each dimension."""
        offset = self.offset + sum(lo * st for (lo, _), st in zip(bounds, self.strides, strict=True))
        mask = None if self.mask is None else tuple(
            (max(0, mlo - lo), max(0, min(mhi - lo, hi - lo))) for (mlo, mhi), (lo, hi) in zip(self.mask, bounds,
                                                                                                 strict=True))
        return View.create(tuple(hi - lo for lo, hi in bounds), self.strides, offset, mask)

    def pad(self, pads) -> View:
        """(before, after) zeros around each dimension: a larger shape whose mask is the old elements."""
        shape = tuple(s + a + b for s, (a, b) in zip(self.shape, pads, strict=True))
        old = self.mask or tuple((0, s) for s in self.shape)
        mask = tuple((lo + a, hi + a) for (lo, hi), (a, _) in zip(old, pads, strict=True))
        offset = self.offset - sum(a * st for (a, _), st in zip(pads, self.strides, strict=True))
        return View.create(shape, self.strides, offset, mask)

    def flip(self, axes) -> View:
        """The given dimensions reversed."""
        strides = list(self.strides)
        offset = self.offset
        mask = list(self.mask) if self.mask is not None else None
        for a in axes:
            offset += (self.shape[a] - 1) * strides[a]
            strides[a] = -strides[a]
            if mask is not None:
                lo, hi = mask[a]
                mask[a] = (self.shape[a] - hi, self.shape[a] - lo)
        return View.create(self.shape, strides, offset, None if mask is None else tuple(mask))

    def reshape(self, shape) -> View | None:
        """The same elements in a new shape, or None when strides cannot express it (then a view is stacked)."""
        shape = tuple(shape)
        if shape == self.shape:
            return self
        if self.contiguous or prod(shape) == 0:
            return View.create(shape)
        if self.mask is not None and any(m == (0, 0) for m in self.mask):
            return View.create(shape, None, 0, tuple((0, 0) for _ in shape))  # all masked away
        groups = _match_groups(self.shape, shape)
        if groups is None:
            return None
        strides, mask = [], []
        for old_dims, new_dims in groups:
            olds = [d for d in old_dims if self.shape[d] != 1]
            news = [shape[d] for d in new_dims]
            if self.mask is not None and any(self.mask[d] != (0, self.shape[d]) for d in old_dims):
                # a masked dimension survives only unsplit: one old dim of size > 1 becomes one new dim of that size
                big = [i for i, n in zip(new_dims, news, strict=True) if n != 1]
                if len(olds) != 1 or len(big) != 1:
                    return None
                d = olds[0]
                for i in new_dims:
                    strides.append(self.strides[d] if i == big[0] else 0)
                    mask.append(self.mask[d] if i == big[0] else (0, 1))
                continue
            # old dims must be row-major among themselves to be split or merged
            if any(self.strides[a] != self.strides[b] * self.shape[b] for a, b in zip(olds, olds[1:], strict=False)):
                return None
            step, group = (self.strides[olds[-1]] if olds else 0), []
            for n in reversed(news):
                group.append(step if n != 1 else 0)
                step *= n
            strides.extend(reversed(group))
            mask.extend((0, n) for n in news)
        return View.create(shape, tuple(strides), self.offset, tuple(mask) if self.mask is not None else None)


def _match_groups(old: tuple[int, ...], new: tuple[int, ...]):
    """Pairs (old dims, new dims) of equal products covering both shapes in order; None if they differ."""
    if prod(old) != prod(new):
        return None
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        oi, nj, po, pn = [], [], 1, 1
        while True:  # one dim from each side, then grow the side with the smaller product
            if i < len(old) and (not oi or po < pn):
                oi.append(i)
                po *= old[i]
                i += 1
            elif j < len(new) and (not nj or pn < po):
                nj.append(j)
                pn *= new[j]
                j += 1
            else:
                break
        if po != pn:
            return None
        groups.append((oi, nj))
    return groups


@dataclass(frozen=True)
class ShapeTracker:
    """A stack of views, the last one the tensor's shape (module docstring)."""

    views: tuple[View, ...]

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        """The dataclass's hash of the views, computed once (View._hash)."""
        return hash((self.views,))

    @staticmethod
    def contiguous(shape) -> ShapeTracker:
        """The plain row-major layout of shape."""
        return ShapeTracker((View.create(tuple(shape)),))

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the outermost view."""
        return self.views[-1].shape

    @property
    def view(self) -> View:
        """The outermost view."""
        return self.views[-1]

    def size(self) -> int:
        """Elements in the outermost shape."""
        return prod(self.shape)

    @property
    def contiguous_layout(self) -> bool:
        """Whether this is the plain layout: element i of the shape is element i of the buffer."""
        return len(self.views) == 1 and self.views[0].contiguous

    @cached_property
    def masked(self) -> bool:
        """Whether some view has a mask (elements that read as 0)."""
        return any(v.mask is not None for v in self.views)

    def _with(self, v: View) -> ShapeTracker:
        return ShapeTracker(self.views[:-1] + (v,))

    def permute(self, order) -> ShapeTracker:
        """See View.permute."""
        return self._with(self.view.permute(order))

    def expand(self, shape) -> ShapeTracker:
        """See View.expand."""
        return self._with(self.view.expand(tuple(shape)))

    def shrink(self, bounds) -> ShapeTracker:
        """See View.shrink."""
        return self._with(self.view.shrink(tuple(bounds)))

    def pad(self, pads) -> ShapeTracker:
        """See View.pad."""
        return self._with(self.view.pad(tuple(pads)))

    def flip(self, axes) -> ShapeTracker:
        """See View.flip."""
        return self._with(self.view.flip(tuple(axes)))

    def reshape(self, shape) -> ShapeTracker:
        """See View.reshape; stacks a contiguous view when strides cannot express it."""
        v = self.view.reshape(tuple(shape))
        if v is not None:
            return self._with(v)
        return ShapeTracker(self.views + (View.create(tuple(shape)),)).simplify()

    def __add__(self, other: ShapeTracker) -> ShapeTracker:
        """This tracker read through `other` (other's flat offsets index this tracker's shape)."""
        return _compose(self, other)

    def simplify(self) -> ShapeTracker:
        """Merge the top view into the one below when its strides walk whole dimensions of it."""
        if len(self.views) < 2:
            return self
        merged = merge_views(self.views[-2], self.views[-1])
        return self if merged is None else ShapeTracker(self.views[:-2] + (merged,)).simplify()


@lru_cache(maxsize=1 << 16)
def _compose(st: ShapeTracker, other: ShapeTracker) -> ShapeTracker:
    """ShapeTracker.__add__, remembered: the scheduler composes the same views again each time it builds a kernel
    again (after a Cut: an LSTM cell's backward graph, some 80 times), a fifth of its time when made afresh."""
    views = st.views
    for v in other.views:
        views = ShapeTracker(views + (v,)).simplify().views
    return ShapeTracker(views)


def merge_views(inner: View, outer: View) -> View | None:
    """One view equal to reading `inner` through `outer` (outer's flat offsets unflattened by inner.shape),
    or None when a stride of outer does not stay inside one dimension of inner."""
    if outer.mask is not None and any(m == (0, 0) for m in outer.mask):
        return View.create(outer.shape, None, 0, outer.mask)
    if inner.contiguous:
        return outer
    if outer.contiguous:
        return inner.reshape(outer.shape)
    if inner.mask is not None:
        return None
    cstr = strides_for(inner.shape)
    # the offset and every stride of outer as coordinates in inner's dims
    coords, rem = [], outer.offset
    if rem < 0:
        return None
    for c in cstr:
        q, rem = (rem // c, rem % c) if c else (0, rem)
        coords.append(q)
    if rem or any(q >= s and s > 0 for q, s in zip(coords, inner.shape, strict=True)):
        return None
    lo, hi = list(coords), list(coords)
    strides = []
    bounds = outer.mask or tuple((0, s) for s in outer.shape)
    for n, st, (mlo, mhi) in zip(outer.shape, outer.strides, bounds, strict=True):
        if st == 0 or n == 1:
            strides.append(0)
            continue
        # the outermost inner dim whose stride divides st (a step of st moves along that dim only)
        d = next((d for d, c in enumerate(cstr) if c and abs(st) >= c and st % c == 0), None)
        if d is None:
            return None
        k = st // cstr[d]
        lo[d] += min(k * mlo, k * (mhi - 1))
        hi[d] += max(k * mlo, k * (mhi - 1))
        strides.append(k * inner.strides[d])
    if any(a < 0 or b >= s for a, b, s in zip(lo, hi, inner.shape, strict=True)):
        return None
    offset = inner.offset + sum(q * st for q, st in zip(coords, inner.strides, strict=True))
    return View.create(outer.shape, tuple(strides), offset, outer.mask)


def view_indices(st: ShapeTracker):
    """(flat offsets, valid) as NumPy arrays of st.shape: what lowering the views computes, evaluated on the host
    (the tests compare it with NumPy's own movement operations)."""
    import numpy as np
    v = st.views[-1]
    grid = np.indices(v.shape, dtype=np.int64) if v.shape else np.zeros((0,), np.int64)
    flat = np.full(v.shape, v.offset, np.int64)
    valid = np.ones(v.shape, bool)
    for views_left in range(len(st.views) - 1, -1, -1):
        v = st.views[views_left]
        if views_left != len(st.views) - 1:
            rest = flat
            coords = []
            for s in reversed(v.shape):
                coords.append(rest % s if s else rest)
                rest = rest // s if s else rest
            grid = list(reversed(coords))
            flat = np.full(flat.shape, v.offset, np.int64)
        for d, st_d in enumerate(v.strides):
            flat = flat + grid[d] * st_d
        if v.mask is not None:
            for d, (lo, hi) in enumerate(v.mask):
                valid &= (grid[d] >= lo) & (grid[d] < hi)
    return flat, valid
