"""The lazy graph: what Tensor operations build before anything runs.

A `LazyBuffer` is either a base (an operation of the IR's vocabulary, compiler.ir.ops.Ops: host data, a constant,
an ALU op over sources of one shape, a reduction, a copy) or a view of a base through a ShapeTracker: movement
operations only make new views. compiler.realize hands the bases to the scheduler (compiler.schedule), which
builds each kernel's UOp AST from them; a realized base holds a device buffer and forgets its sources.

Its nodes are not UOps: a UOp is immutable and hash-consed (equal structure, the same node), while a lazy base
is an identity (two empty tensors of one shape are two buffers, and host data has no structure to compare) that
changes once, when it is realized.
"""

from __future__ import annotations

import math

import numpy as np

from compiler.dtypes import DType, dtypes
from compiler.ir.ops import ALU, Ops, normalize
from compiler.views import ShapeTracker


class LazyBuffer:
    """A node of the lazy graph (module docstring)."""

    def __init__(self, device: str, st: ShapeTracker, dtype: DType, op=None, srcs: tuple = (), arg=None,
                 base: LazyBuffer | None = None):
        self.device, self.st, self.dtype = device, st, dtype
        self.shape = st.shape
        if base is None:
            self.op, self.srcs, self.arg = op, srcs, arg
            self.buffer = None  # a compiler.device.DeviceBuffer once realized
            self._base = None
        else:
            assert base.base is base, "a view's base is a base"
            self._base = base

    @property
    def base(self) -> LazyBuffer:
        """The base this node views (itself for a base)."""
        return self if self._base is None else self._base

    @property
    def is_view(self) -> bool:
        """Whether this node is a view of another."""
        return self._base is not None

    @property
    def realized(self) -> bool:
        """Whether the base holds a device buffer."""
        return self.base.op is Ops.BUFFER

    def __repr__(self) -> str:
        what = self.base.op.name
        return f"<LB {self.device} {self.shape} {self.dtype.name} {what}{' view' if self.is_view else ''}>"

    # ---- creation ------------------------------------------------------------------------------------------
    @staticmethod
    def const(value, dtype: DType, device: str, shape=()) -> LazyBuffer:
        """A constant broadcast to shape (no memory)."""
        c = LazyBuffer(device, ShapeTracker.contiguous(()), dtype, Ops.CONST, (), normalize(dtype, value))
        return c.reshape((1,) * len(shape)).expand(tuple(shape)) if shape else c

    @staticmethod
    def from_host(array: np.ndarray, dtype: DType, device: str) -> LazyBuffer:
        """Host data to copy to the device when realized."""
        return LazyBuffer(device, ShapeTracker.contiguous(array.shape), dtype, Ops.COPYIN, (), array)

    @staticmethod
    def iota(n: int, device: str) -> LazyBuffer:
        """0..n-1 as int32 (int64 when n - 1 does not fit int32)."""
        dt = dtypes.int32 if n - 1 <= dtypes.int32.max else dtypes.int64
        return LazyBuffer(device, ShapeTracker.contiguous((n,)), dt, Ops.IOTA)

    @staticmethod
    def empty(shape, dtype: DType, device: str) -> LazyBuffer:
        """Memory whose contents are undefined."""
        return LazyBuffer(device, ShapeTracker.contiguous(tuple(shape)), dtype, Ops.EMPTY)

    # ---- operations ----------------------------------------------------------------------------------------
    def alu(self, op: Ops, *others: LazyBuffer, dtype: DType | None = None) -> LazyBuffer:
        """An elementwise op over self and others (all of self's shape); the result type is `dtype` or self's."""
        assert op in ALU, f"{op.name} is not an ALU op"
        for o in others:
            if o.shape != self.shape:
                raise ValueError(f"{op.name}: shapes {self.shape} and {o.shape} differ")
        return LazyBuffer(self.device, ShapeTracker.contiguous(self.shape), dtype or self.dtype, op, (self, *others))

    def cast(self, dtype: DType, bitcast: bool = False) -> LazyBuffer:
        """Values converted to dtype (or their bits reinterpreted)."""
        if dtype == self.dtype:
            return self
        op = Ops.BITCAST if bitcast else Ops.CAST
        return LazyBuffer(self.device, ShapeTracker.contiguous(self.shape), dtype, op, (self,))

    def reduce(self, op: Ops, axes: tuple[int, ...]) -> LazyBuffer:
        """Reduce over axes (kept as size 1) with ADD, MAX or MUL. A reduction of SPLIT_MIN or more elements per
        output runs in two stages: partial results of SPLIT_WAYS slices of its longest axis (in parallel), then
        their reduction; a single loop over 2^22 elements is a long serial run for the GPU."""
        axes = tuple(sorted(a for a in axes if self.shape[a] != 1))
        if not axes:
            return self
        shape = tuple(1 if i in axes else s for i, s in enumerate(self.shape))
        split = _split(self.shape, axes)
        if split is not None:
            a, ways = split
            x = self.reshape(self.shape[:a] + (ways, self.shape[a] // ways) + self.shape[a + 1:])
            partial = x.reduce(op, tuple(i if i < a else i + 1 for i in axes))  # the slices' results, at axis a
            return partial.reduce(op, (a,)).reshape(shape)
        return LazyBuffer(self.device, ShapeTracker.contiguous(shape), self.dtype, Ops.REDUCE, (self,), (op, axes))

    def contiguous(self) -> LazyBuffer:
        """A base of its own in row-major order (realized as a buffer when the graph runs)."""
        if not self.is_view and self.op in (Ops.BUFFER, Ops.COPYIN, Ops.CONTIGUOUS):
            return self
        return LazyBuffer(self.device, ShapeTracker.contiguous(self.shape), self.dtype, Ops.CONTIGUOUS, (self,))

    def copy_to(self, device: str) -> LazyBuffer:
        """The values on another device."""
        src = self.contiguous()
        return LazyBuffer(device, ShapeTracker.contiguous(self.shape), self.dtype, Ops.COPY, (src,))

    # ---- movement: views ---------------------------------------------------------------------------------------
    def _view(self, st: ShapeTracker) -> LazyBuffer:
        if st == self.base.st and not (self.base.op is Ops.CONST and st.shape != ()):
            return self.base
        return LazyBuffer(self.device, st, self.dtype, base=self.base)

    def reshape(self, shape) -> LazyBuffer:
        """See ShapeTracker.reshape."""
        return self if tuple(shape) == self.shape else self._view(self.st.reshape(tuple(shape)))

    def permute(self, order) -> LazyBuffer:
        """See ShapeTracker.permute."""
        return self if tuple(order) == tuple(range(len(order))) else self._view(self.st.permute(tuple(order)))

    def expand(self, shape) -> LazyBuffer:
        """See ShapeTracker.expand."""
        return self if tuple(shape) == self.shape else self._view(self.st.expand(tuple(shape)))

    def pad(self, pads) -> LazyBuffer:
        """See ShapeTracker.pad."""
        return self if all(p == (0, 0) for p in pads) else self._view(self.st.pad(tuple(pads)))

    def shrink(self, bounds) -> LazyBuffer:
        """See ShapeTracker.shrink."""
        if all(b == (0, s) for b, s in zip(bounds, self.shape, strict=True)):
            return self
        return self._view(self.st.shrink(tuple(bounds)))

    def flip(self, axes) -> LazyBuffer:
        """See ShapeTracker.flip."""
        axes = tuple(a for a in axes if self.shape[a] > 1)
        return self._view(self.st.flip(axes)) if axes else self


SPLIT_MIN = 1 << 15  # elements per output from which a reduction runs in two stages
SPLIT_WAYS = (256, 128, 64, 32, 16, 8)  # slices of the split axis, the most that divides it


def _split(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, int] | None:
    """(axis, slices) a reduction over axes of shape splits along, or None when it stays one stage."""
    if math.prod(shape[a] for a in axes) < SPLIT_MIN:
        return None
    for a in sorted(axes, key=lambda a: -shape[a]):
        ways = next((w for w in SPLIT_WAYS if shape[a] % w == 0 and shape[a] > w), None)
        if ways is not None:
            return a, ways
    return None


def reaches(root: LazyBuffer, base: LazyBuffer) -> bool:
    """Whether root's unrealized graph reads base (an iterative walk: graphs may be deep)."""
    stack, seen = [root.base], set()
    while stack:
        b = stack.pop()
        if b is base:
            return True
        if b in seen or b.op is Ops.BUFFER:
            continue
        seen.add(b)
        stack.extend(s.base for s in b.srcs)
    return False

