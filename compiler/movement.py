"""Movement operations of Tensor (views: no kernel until something reads them), mixed into Tensor."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Self, TypeVar

from compiler import autograd as F
from compiler.creation import shape_arg
from compiler.dtypes import dtypes, promote
from compiler.einops import rearrange as _rearrange
from compiler.helpers import broadcast_shape, normalize_axis
from compiler.lazy import LazyBuffer

TensorT = TypeVar("TensorT", bound="MovementOps")  # a Tensor (the class MovementOps is mixed into)


class MovementOps:
    """Mixed into Tensor (module docstring)."""

    def reshape(self, *shape) -> Self:
        """The same elements in a new shape (one -1 is inferred)."""
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], Sequence) else shape
        if shape.count(-1) > 1:
            raise ValueError(f"reshape: at most one -1 in {shape}")
        known = math.prod(s for s in shape if s != -1)
        if -1 in shape:
            if known == 0 or self.numel() % known:
                raise ValueError(f"cannot reshape {self.shape} into {shape}")
            shape = tuple(self.numel() // known if s == -1 else s for s in shape)
        shape = shape_arg(shape)
        if math.prod(shape) != self.numel():
            raise ValueError(f"cannot reshape {self.shape} ({self.numel()} elements) into {shape}")
        return self if shape == self.shape else self._apply(F.Reshape, self, shape=shape)

    def view(self, *shape) -> Self:
        """reshape (PyTorch's name)."""
        return self.reshape(*shape)

    def permute(self, *order) -> Self:
        """Dimensions reordered."""
        order = tuple(order[0]) if len(order) == 1 and isinstance(order[0], Sequence) else order
        order = tuple(normalize_axis(o, self.ndim) for o in order)
        if sorted(order) != list(range(self.ndim)):
            raise ValueError(f"permute: {order} is not a permutation of {self.ndim} dimensions")
        return self._apply(F.Permute, self, order=order)

    def transpose(self, dim0: int = 1, dim1: int = 0) -> Self:
        """Two dimensions swapped (by default the first two, as tinygrad's transpose())."""
        order = list(range(self.ndim))
        a, b = normalize_axis(dim0, self.ndim), normalize_axis(dim1, self.ndim)
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    @property
    def T(self) -> Self:  # noqa: N802 - NumPy's name
        """transpose(): dimensions 0 and 1 swapped (tinygrad's; NumPy's .T reverses all: the same for 2-D); a
        tensor of fewer than two dimensions is itself (NumPy; tinygrad raises)."""
        return self.transpose() if self.ndim >= 2 else self

    def expand(self, *shape) -> Self:
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
        return x if new == x.shape else self._apply(F.Expand, x, shape=shape_arg(new))

    def pad(self, padding, mode: str = "constant", value: int | float | bool = 0.0) -> Self:
        """tinygrad's pad: padding is grouped, one (before, after) or None per dimension (NumPy's order), or flat,
        (left, right, top, bottom, ...) from the last dimension back (PyTorch's order); an int pads every side.
        Negative amounts shrink. mode is constant (filled with value), reflect, replicate or circular."""
        pads = _pad_arg(padding, self.ndim)
        if mode not in ("constant", "reflect", "replicate", "circular"):
            raise ValueError(f"pad: mode must be constant, reflect, replicate or circular, not {mode!r}")
        if mode == "circular":  # negative amounts cut first, then the rest wraps around (tinygrad's order)
            return self._shrink_negative(pads)._pad_edges(tuple((max(a, 0), max(b, 0)) for a, b in pads), mode)
        if mode != "constant":
            return self._pad_edges(pads, mode)
        x = self._shrink_negative(pads)
        pads = tuple((max(a, 0), max(b, 0)) for a, b in pads)
        if all(p == (0, 0) for p in pads):
            return x
        out = x._apply(F.Pad, x, pads=pads)
        if value != 0:
            T = type(self)  # the Tensor class (mixins never import compiler.tensor)
            mask = T(LazyBuffer.const(True, dtypes.bool, x.device, x.shape)).pad(pads)
            out = mask.where(out, value)
        return out

    def _shrink_negative(self, pads) -> Self:
        """The box that negative pad amounts cut away (Python's negative-slice meaning)."""
        if all(a >= 0 and b >= 0 for a, b in pads):
            return self
        for (a, b), s in zip(pads, self.shape, strict=True):
            if -min(a, 0) - min(b, 0) > s:
                raise ValueError(f"pad: negative padding {pads} removes more than shape {self.shape} holds")
        return self.shrink(tuple((-min(a, 0), s + min(b, 0)) for (a, b), s in zip(pads, self.shape, strict=True)))

    def _pad_edges(self, pads, mode: str) -> Self:
        """reflect / replicate / circular padding: pieces of self joined to each side (negative amounts shrink
        afterwards, so reflect and replicate see the whole tensor first, as tinygrad)."""
        x = self
        for d, (a, b) in enumerate(pads):
            before, after = max(a, 0), max(b, 0)
            if not before and not after:
                continue
            s = x.shape[d]
            if mode == "reflect" and (before >= s or after >= s):
                raise ValueError(f"pad: reflect padding ({before}, {after}) must be smaller than size {s} of dim {d}")
            if mode == "circular" and (before > s or after > s):
                raise ValueError(f"pad: circular padding ({before}, {after}) wraps more than once around size {s}")
            if mode == "replicate" and s == 0:
                raise ValueError(f"pad: cannot replicate the empty dimension {d}")
            pieces = []
            if before:
                pieces.append(_edge_piece(x, d, before, mode, front=True))
            pieces.append(x)
            if after:
                pieces.append(_edge_piece(x, d, after, mode, front=False))
            x = pieces[0].cat(*pieces[1:], dim=d)
        return x._shrink_negative(tuple((min(a, 0), min(b, 0)) for a, b in pads))

    def pad_to(self, shape, *args, value: int | float | bool = 0) -> Self:
        """Padded at the end of each dimension up to shape (None keeps a dimension)."""
        shape = _shape_args(shape, args)
        if len(shape) != self.ndim:
            raise ValueError(f"pad_to: {shape} has {len(shape)} dimensions, the tensor {self.ndim}")
        return self.pad(tuple((0, 0 if n is None else n - s) for s, n in zip(self.shape, shape, strict=True)),
                        value=value)

    def shrink_to(self, shape, *args) -> Self:
        """The leading corner of the given shape (None keeps a dimension)."""
        shape = _shape_args(shape, args)
        if len(shape) != self.ndim:
            raise ValueError(f"shrink_to: {shape} has {len(shape)} dimensions, the tensor {self.ndim}")
        return self.shrink(tuple(None if n is None else (0, n) for n in shape))

    def shrink(self, arg) -> Self:
        """The box [lo, hi) of each dimension (None keeps a dimension whole)."""
        bounds = arg
        if len(bounds) != self.ndim:
            raise ValueError(f"shrink: {len(bounds)} bounds for {self.ndim} dimensions")
        bounds = tuple((0, s) if b is None else tuple(b) for b, s in zip(bounds, self.shape, strict=True))
        for (lo, hi), s in zip(bounds, self.shape, strict=True):
            if not 0 <= lo <= hi <= s:
                raise ValueError(f"shrink: bounds {bounds} do not fit shape {self.shape}")
        if all(b == (0, s) for b, s in zip(bounds, self.shape, strict=True)):
            return self
        return self._apply(F.Shrink, self, bounds=bounds)

    def flip(self, axis=None) -> Self:
        """Elements reversed along axis (an int, a sequence, or None for all)."""
        axes = range(self.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        axes = tuple(normalize_axis(a, self.ndim) for a in axes)
        return self._apply(F.Flip, self, axes=axes) if axes else self

    def squeeze(self, dim=None) -> Self:
        """Size-1 dimensions removed (all, or the given one if it has size 1)."""
        if dim is None:
            return self.reshape(tuple(s for s in self.shape if s != 1))
        d = normalize_axis(dim, self.ndim)
        return self if self.shape[d] != 1 else self.reshape(self.shape[:d] + self.shape[d + 1:])

    def unsqueeze(self, dim: int) -> Self:
        """A size-1 dimension inserted at dim."""
        d = normalize_axis(dim, self.ndim + 1)
        return self.reshape(self.shape[:d] + (1,) + self.shape[d:])

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Self:
        """Dimensions start_dim..end_dim merged into one."""
        if self.ndim == 0:
            return self.reshape(1)
        a, b = normalize_axis(start_dim, self.ndim), normalize_axis(end_dim, self.ndim)
        return self.reshape(self.shape[:a] + (math.prod(self.shape[a:b + 1]),) + self.shape[b + 1:])

    def cat(self, *others: Self, dim: int = 0) -> Self:
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

    def stack(self, *others: Self, dim: int = 0) -> Self:
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

    def repeat(self, *repeats) -> Self:
        """Tiled repeats times along each dimension (PyTorch's repeat, NumPy's tile)."""
        repeats = tuple(repeats[0]) if len(repeats) == 1 and isinstance(repeats[0], Sequence) else repeats
        if len(repeats) < self.ndim:
            raise ValueError(f"repeat: {len(repeats)} repeats for {self.ndim} dimensions")
        x = self.reshape((1,) * (len(repeats) - self.ndim) + self.shape)
        interleaved = tuple(v for s in x.shape for v in (1, s))
        expanded = tuple(v for r, s in zip(repeats, x.shape, strict=True) for v in (r, s))
        return x.reshape(interleaved).expand(expanded).reshape(tuple(r * s for r, s in zip(repeats, x.shape,
                                                                                               strict=True)))

    # ---- splitting and windows ------------------------------------------------------------------------------
    def split(self, sizes, dim: int = 0) -> tuple[Self, ...]:
        """Views of consecutive pieces along dim: an int gives pieces of that size (the last may be smaller),
        a sequence gives the sizes (which must sum to the dimension)."""
        d = normalize_axis(dim, self.ndim)
        n = self.shape[d]
        if isinstance(sizes, int):
            if sizes <= 0:
                raise ValueError(f"split: size must be positive, got {sizes}")
            sizes = [min(sizes, n - i) for i in range(0, max(1, n), sizes)]
        sizes = [int(v) for v in sizes]
        if sum(sizes) != n or any(v < 0 for v in sizes):
            raise ValueError(f"split: sizes {sizes} must be non-negative and sum to {n} (dim {d})")
        starts = [sum(sizes[:k]) for k in range(len(sizes))]
        return tuple(self.shrink(tuple((a, a + v) if j == d else None for j in range(self.ndim)))
                     for a, v in zip(starts, sizes, strict=True))

    def chunk(self, chunks: int, dim: int = 0) -> list[Self]:
        """split into pieces of ceil(size / chunks) (so possibly fewer than chunks pieces)."""
        if chunks <= 0:
            raise ValueError(f"chunk: chunks must be positive, got {chunks}")
        n = self.shape[normalize_axis(dim, self.ndim)]
        return list(self.split(-(-n // chunks) if n else [0] * chunks, dim))

    def unflatten(self, dim: int, sizes) -> Self:
        """Dimension dim reshaped into sizes (one -1 is inferred)."""
        d = normalize_axis(dim, self.ndim)
        return self.reshape(self.shape[:d] + tuple(sizes) + self.shape[d + 1:])

    def unfold(self, dim: int, size: int, step: int) -> Self:
        """Windows of length size every step along dim: dim becomes (windows,) and a last dimension of size."""
        if size < 0 or step <= 0:
            raise ValueError(f"unfold: need size >= 0 and step > 0, got size={size} step={step}")
        d = normalize_axis(dim, self.ndim)
        if size > self.shape[d]:
            raise ValueError(f"unfold: size {size} exceeds dimension {d} of size {self.shape[d]}")
        order = [i for i in range(self.ndim) if i != d] + [d]
        win = self.permute(order)._windows((size,), (step,), (1,))      # (others..., windows, size)
        back = list(range(self.ndim - 1))
        return win.permute(back[:d] + [self.ndim - 1] + back[d:] + [self.ndim])

    def roll(self, shifts, dims=None) -> Self:
        """Elements shifted circularly by shifts along dims (the flattened tensor when dims is None)."""
        if dims is None:
            return self.flatten().roll(shifts, 0).reshape(self.shape)
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
        shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
        if len(dims) != len(shifts):
            raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
        x = self
        for d, sh in zip(dims, shifts, strict=True):
            d = normalize_axis(d, self.ndim)
            n = x.shape[d]
            if n == 0 or sh % n == 0:
                continue
            k = sh % n
            x = x._slice(d, slice(n - k, n)).cat(x._slice(d, slice(0, n - k)), dim=d)
        return x

    def repeat_interleave(self, repeats: int, dim: int | None = None) -> Self:
        """Each element repeated repeats times in place along dim (of the flattened tensor when dim is None)."""
        x, d = (self.flatten(), 0) if dim is None else (self, normalize_axis(dim, self.ndim))
        s = x.shape
        x = x.reshape(s[:d + 1] + (1,) + s[d + 1:]).expand(s[:d + 1] + (repeats,) + s[d + 1:])
        return x.reshape(s[:d] + (s[d] * repeats,) + s[d + 1:])

    def meshgrid(self, *args: Self, indexing: str = "ij") -> tuple[Self, ...]:
        """Coordinate grids of 1-D (or 0-D) tensors; indexing "ij" (matrix) or "xy" (the first two swapped)."""
        if indexing not in ("ij", "xy"):
            raise ValueError(f'meshgrid: indexing must be "ij" or "xy", not {indexing!r}')
        ts = (self, *args)
        if len(ts) == 1:
            return ts
        axes = list(range(len(ts)))
        if indexing == "xy":
            axes[0], axes[1] = 1, 0
        shaped = [t.reshape(tuple(-1 if j == a else 1 for j in range(len(ts)))) for t, a in zip(ts, axes, strict=True)]
        shape = broadcast_shape(*(t.shape for t in shaped))
        return tuple(t._broadcast_to(shape) for t in shaped)

    def rearrange(self, formula: str, **sizes) -> Self:
        """einops' rearrange: "b (h w) c -> b h w c" style formulas (reshape, permute, reshape)."""
        return _rearrange(self, formula, **sizes)

    # ---- diagonals and triangles --------------------------------------------------------------------------
    def diag(self) -> Self:
        """The square matrix with the 1-D self on its diagonal."""
        if self.ndim != 1:
            raise ValueError(f"diag: expected a 1-D tensor, got shape {self.shape}")
        n = self.shape[0]
        return self.unsqueeze(-1).pad(((0, 0), (0, n))).flatten().shrink(((0, n * n),)).reshape(n, n)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Self:
        """The diagonal (offset above the main one if positive) of dims dim1, dim2, as the last dimension."""
        a, b = normalize_axis(dim1, self.ndim, "dim1"), normalize_axis(dim2, self.ndim, "dim2")
        if a == b:
            raise ValueError(f"diagonal: dim1 and dim2 are both {a}")
        x = self.permute([i for i in range(self.ndim) if i not in (a, b)] + [a, b])
        lead = x.shape[:-2]
        r, c = x.shape[-2:]
        r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
        n = max(0, min(r - r0, c - c0))
        if n == 0:
            return x.reshape(lead + (r * c,)).shrink(tuple(None for _ in lead) + ((0, 0),))
        x = x.shrink(tuple(None for _ in lead) + ((r0, r0 + n), (c0, c0 + n))).reshape(lead + (n * n,))
        x = x.pad(((0, 0),) * len(lead) + ((0, n),)).reshape(lead + (n, n + 1))
        return x.shrink(tuple(None for _ in lead) + (None, (0, 1))).reshape(lead + (n,))

    def _tri_keep(self, diagonal: int, upper: bool) -> Self:
        T = type(self)  # the Tensor class (mixins never import compiler.tensor)
        if self.ndim < 2:
            raise ValueError(f"{'triu' if upper else 'tril'}: needs at least 2 dimensions, got {self.shape}")
        r, c = self.shape[-2:]
        row = T.arange(r, device=self.device).reshape(r, 1)
        col = T.arange(c, device=self.device).reshape(1, c)
        keep = (col - row >= diagonal) if upper else (col - row <= diagonal)
        return keep.where(self, T.full((), 0, self.dtype, self.device))

    def triu(self, diagonal: int = 0) -> Self:
        """Zero below the given diagonal of the last two dimensions."""
        return self._tri_keep(diagonal, upper=True)

    def tril(self, diagonal: int = 0) -> Self:
        """Zero above the given diagonal of the last two dimensions."""
        return self._tri_keep(diagonal, upper=False)


def _shape_args(shape, args) -> tuple:
    return tuple(shape) if not args and isinstance(shape, Sequence) else (shape, *args)


def _edge_piece(x: TensorT, d: int, n: int, mode: str, front: bool) -> TensorT:
    """The n values that pad dimension d of x at the front or the back in the given mode."""
    s = x.shape[d]
    if mode == "reflect":
        sl = slice(n, 0, -1) if front else slice(s - 2, s - 2 - n if s - 2 - n >= 0 else None, -1)
        return x._slice(d, sl)
    if mode == "circular":
        return x._slice(d, slice(s - n, s) if front else slice(0, n))
    edge = x._slice(d, slice(0, 1) if front else slice(s - 1, s))
    return edge.expand(tuple(n if i == d else v for i, v in enumerate(x.shape)))


def _pad_arg(pads, ndim: int) -> tuple[tuple[int, int], ...]:
    """Grouped (one pair or None per dimension), flat (PyTorch's order, last dimension first) or an int."""
    if isinstance(pads, int):
        return ((int(pads), int(pads)),) * ndim
    pads = tuple(pads)
    if not any(isinstance(p, Sequence) or p is None for p in pads):
        if len(pads) % 2:
            raise ValueError(f"pad: flat padding {pads} needs an even number of amounts")
        if len(pads) // 2 > ndim:
            raise ValueError(f"pad: flat padding {pads} covers {len(pads) // 2} dimensions of {ndim}")
        flat = [(int(pads[i]), int(pads[i + 1])) for i in range(0, len(pads), 2)]
        return ((0, 0),) * (ndim - len(flat)) + tuple(reversed(flat))
    if len(pads) != ndim or any(p is not None and len(p) != 2 for p in pads):
        raise ValueError(f"pad: need (before, after) or None for each of {ndim} dimensions, got {pads}")
    return tuple((0, 0) if p is None else (int(p[0]), int(p[1])) for p in pads)
