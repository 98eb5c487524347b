"""Index arithmetic on the kernel IR: int32 index constants, a view's flat offset and validity at an index,
and the row-major unflattening of a flat index. Below both lowerings (compiler.ir.lower and its tiled plans in
compiler.ir.tiling), which build their index expressions from these."""

from __future__ import annotations

from compiler.dtypes import DType, dtypes
from compiler.ir.ops import UOp
from compiler.views import ShapeTracker

INT = dtypes.int32


def c(v: int) -> UOp:
    """An int32 index constant (a value outside int32 is a compiler bug, not a wrapped index)."""
    if not _fits(INT, v):
        raise AssertionError(f"index constant {v} does not fit {INT.name}")
    return UOp.const(INT, v)


def view_index(st: ShapeTracker, idx: tuple[UOp, ...]) -> tuple[UOp, UOp]:
    """(flat offset, valid) of the views of st at the index idx of its shape. A view whose offsets may leave
    int32 (a shrink at 2^31 + 5 of arange(2^31 + 10)) computes in int64 from there on, never wrapping."""
    valid = UOp.const(dtypes.bool, True)
    flat = None
    it = INT
    for n, v in enumerate(reversed(st.views)):
        if n:
            idx = unflatten(flat, v.shape)
        if it is INT and not _fits(INT, *_offset_range(v)):
            it = dtypes.int64
        flat = UOp.const(it, v.offset)
        for i, s in zip(idx, v.strides, strict=True):
            if s:
                flat = flat + i.cast(it) * UOp.const(it, s)
        if v.mask is not None:
            for i, (lo, hi), size in zip(idx, v.mask, v.shape, strict=True):
                if lo > 0:
                    valid = valid.logical_and(i.ge(lo))
                if hi < size:
                    valid = valid.logical_and(i.lt(hi))
    return flat, valid


def _offset_range(v) -> tuple[int, int]:
    """The smallest and largest flat offset a view reaches (its shape's corners)."""
    lo = hi = v.offset
    for size, stride in zip(v.shape, v.strides, strict=True):
        reach = (size - 1) * stride
        lo, hi = lo + min(0, reach), hi + max(0, reach)
    return lo, hi


def _fits(dt: DType, *values: int) -> bool:
    return all(dt.min <= x <= dt.max for x in values)


def unflatten(flat: UOp, shape: tuple[int, ...]) -> tuple[UOp, ...]:
    """The row-major index of `flat` in shape (the first dimension unbounded: it is gated by the caller)."""
    out, inner = [], 1
    for k in range(len(shape) - 1, -1, -1):
        s = shape[k]
        if s == 1:
            out.append(c(0))
            continue
        q = flat if inner == 1 else flat // inner
        out.append(q if k == 0 else q % s)
        inner *= s
    return tuple(reversed(out))
