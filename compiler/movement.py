"""Movement operations of Tensor (views: no kernel until something reads them), mixed into Tensor."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from compiler import autograd as F
from compiler.dtypes import dtypes, promote
from compiler.helpers import normalize_axis

if TYPE_CHECKING:
    from compiler.tensor import Tensor


class MovementOps:
    """Mixed into Tensor (module docstring)."""

    def reshape(self, *shape) -> Tensor:
        """The same elements in a new shape (one -1 is inferred)."""
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], Sequence) else shape
        if shape.count(-1) > 1:
            raise ValueError(f"reshape: at most one -1 in {shape}")
        known = math.prod(s for s in shape if s != -1)
        if -1 in shape:
            if known == 0 or self.numel() % known:
                raise ValueError(f"cannot reshape {self.shape} into {shape}")
            shape = tuple(self.numel() // known if s == -1 else s for s in shape)
        from compiler.tensor import _shape_arg
        shape = _shape_arg(shape)
        if math.prod(shape) != self.numel():
            raise ValueError(f"cannot reshape {self.shape} ({self.numel()} elements) into {shape}")
        return self if shape == self.shape else self._apply(F.Reshape, self, shape=shape)

    def view(self, *shape) -> Tensor:
        """reshape (PyTorch's name)."""
        return self.reshape(*shape)

    def permute(self, *order) -> Tensor:
        """Dimensions reordered."""
        order = tuple(order[0]) if len(order) == 1 and isinstance(order[0], Sequence) else order
        order = tuple(normalize_axis(o, self.ndim) for o in order)
        if sorted(order) != list(range(self.ndim)):
            raise ValueError(f"permute: {order} is not a permutation of {self.ndim} dimensions")
        return self._apply(F.Permute, self, order=order)

    def transpose(self, dim0: int = 1, dim1: int = 0) -> Tensor:
        """Two dimensions swapped (by default the first two, as tinygrad's transpose())."""
        order = list(range(self.ndim))
        a, b = normalize_axis(dim0, self.ndim), normalize_axis(dim1, self.ndim)
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    @property
    def T(self) -> Tensor:  # noqa: N802 - NumPy's name
        """All dimensions reversed."""
        return self.permute(tuple(reversed(range(self.ndim))))

    def expand(self, *shape) -> Tensor:
        """Size-1 dimensions broadcast (-1 keeps a size; new leading dimensions allowed)."""
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], Sequence) else shape
        if len(shape) < self.ndim:
            raise ValueError(f"expand: {shape} has fewer dimensions than {self.shape}")
        cur = (1,) * (len(shape) - self.ndim) + self.shape
        new = tuple(c if s == -1 else s for s, c in zip(shape, cur, strict=True))
        for c, s in zip(cur, new, strict=True):
            if c != s and c != 1:
                raise ValueError(f"expand: cannot expand {self.shape} to {shape}")
        x = self.reshape(cur) if cur != self.shape else self
        from compiler.tensor import _shape_arg
        return x if new == x.shape else self._apply(F.Expand, x, shape=_shape_arg(new))

    def pad(self, pads, value: int | float | bool = 0) -> Tensor:
        """NumPy's np.pad(x, pads, constant_values=value): pads is ((before, after),) per dimension, or one
        (before, after) pair for all, or an int."""
        pads = _pad_arg(pads, self.ndim)
        if all(p == (0, 0) for p in pads):
            return self
        out = self._apply(F.Pad, self, pads=pads)
        if value != 0:
            from compiler.lazy import LazyBuffer
            from compiler.tensor import Tensor
            mask = Tensor(LazyBuffer.const(True, dtypes.bool, self.device, self.shape)).pad(pads)
            out = mask.where(out, value)
        return out

    def shrink(self, bounds) -> Tensor:
        """The box [lo, hi) of each dimension (None keeps a dimension whole)."""
        if len(bounds) != self.ndim:
            raise ValueError(f"shrink: {len(bounds)} bounds for {self.ndim} dimensions")
        bounds = tuple((0, s) if b is None else tuple(b) for b, s in zip(bounds, self.shape, strict=True))
        for (lo, hi), s in zip(bounds, self.shape, strict=True):
            if not 0 <= lo <= hi <= s:
                raise ValueError(f"shrink: bounds {bounds} do not fit shape {self.shape}")
        if all(b == (0, s) for b, s in zip(bounds, self.shape, strict=True)):
            return self
        return self._apply(F.Shrink, self, bounds=bounds)

    def flip(self, axis=None) -> Tensor:
        """Elements reversed along axis (an int, a sequence, or None for all)."""
        axes = range(self.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        axes = tuple(normalize_axis(a, self.ndim) for a in axes)
        return self._apply(F.Flip, self, axes=axes) if axes else self

    def squeeze(self, dim=None) -> Tensor:
        """Size-1 dimensions removed (all, or the given one if it has size 1)."""
        if dim is None:
            return self.reshape(tuple(s for s in self.shape if s != 1))
        d = normalize_axis(dim, self.ndim)
        return self if self.shape[d] != 1 else self.reshape(self.shape[:d] + self.shape[d + 1:])

    def unsqueeze(self, dim: int) -> Tensor:
        """A size-1 dimension inserted at dim."""
        d = normalize_axis(dim, self.ndim + 1)
        return self.reshape(self.shape[:d] + (1,) + self.shape[d:])

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Dimensions start_dim..end_dim merged into one."""
        if self.ndim == 0:
            return self.reshape(1)
        a, b = normalize_axis(start_dim, self.ndim), normalize_axis(end_dim, self.ndim)
        return self.reshape(self.shape[:a] + (math.prod(self.shape[a:b + 1]),) + self.shape[b + 1:])

    def cat(self, *others: Tensor, dim: int = 0) -> Tensor:
        """Tensors joined along dim (other dimensions must match)."""
        ts = (self, *others)
        d = normalize_axis(dim, self.ndim)
        for t in others:
            if t.ndim != self.ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, self.shape, strict=True))
                                         if i != d):
                raise ValueError(f"cat along {d}: shapes {[t.shape for t in ts]} differ outside that dimension")
        dt = ts[0].dtype
        for t in ts[1:]:
            dt = promote(dt, t.dtype)
        total = sum(t.shape[d] for t in ts)
        out, pos = None, 0
        for t in ts:
            pads = [(0, 0)] * self.ndim
            pads[d] = (pos, total - pos - t.shape[d])
            piece = t.cast(dt).pad(pads)
            out = piece if out is None else out + piece
            pos += t.shape[d]
        return out

    def stack(self, *others: Tensor, dim: int = 0) -> Tensor:
        """Tensors of one shape stacked along a new dimension: `a.stack(b, c, dim=1)` or `Tensor.stack(a, b, c)`
        (tinygrad's signature), or `Tensor.stack([a, b, c], dim)` (PyTorch's: a sequence first)."""
        if isinstance(self, Sequence):
            if len(others) == 1 and isinstance(others[0], int):  # PyTorch's positional dim
                others, dim = (), others[0]
            tensors = (*self, *others)
        else:
            tensors = (self, *others)
        if not tensors:
            raise ValueError("stack needs at least one tensor")
        shapes = {t.shape for t in tensors}
        if len(shapes) != 1:
            raise ValueError(f"stack: shapes differ: {[t.shape for t in tensors]}")
        d = normalize_axis(dim, tensors[0].ndim + 1)
        parts = [t.unsqueeze(d) for t in tensors]
        return parts[0].cat(*parts[1:], dim=d)

    def repeat(self, *repeats) -> Tensor:
        """Tiled repeats times along each dimension (PyTorch's repeat, NumPy's tile)."""
        repeats = tuple(repeats[0]) if len(repeats) == 1 and isinstance(repeats[0], Sequence) else repeats
        if len(repeats) < self.ndim:
            raise ValueError(f"repeat: {len(repeats)} repeats for {self.ndim} dimensions")
        x = self.reshape((1,) * (len(repeats) - self.ndim) + self.shape)
        interleaved = tuple(v for s in x.shape for v in (1, s))
        expanded = tuple(v for r, s in zip(repeats, x.shape, strict=True) for v in (r, s))
        return x.reshape(interleaved).expand(expanded).reshape(tuple(r * s for r, s in zip(repeats, x.shape,
                                                                                               strict=True)))


def _pad_arg(pads, ndim: int) -> tuple[tuple[int, int], ...]:
    if isinstance(pads, int):
        pads = ((pads, pads),) * ndim
    pads = tuple(pads)
    if len(pads) == 2 and all(isinstance(p, int) for p in pads):
        pads = (tuple(pads),) * ndim
    if len(pads) != ndim or any(len(p) != 2 for p in pads):
        raise ValueError(f"pad: need (before, after) for each of {ndim} dimensions, got {pads}")
    out = tuple((int(a), int(b)) for a, b in pads)
    if any(a < 0 or b < 0 for a, b in out):
        raise ValueError(f"pad: negative padding {out} (use shrink)")
    return out
