"""Tensor: the lazy array users program against (NumPy/PyTorch conventions; docs/compiler.md).

Operations build a lazy graph (compiler.lazy) through differentiable primitives (compiler.autograd);
`realize()`, `numpy()`, `tolist()` and `item()` run it on the tensor's device. Shapes, axes and dtypes are
checked when an operation is written, so a mistake raises before anything is compiled or launched.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from compiler import autograd as F
from compiler import device as devices
from compiler.composite import CompositeOps
from compiler.creation import CreationOps
from compiler.dtypes import DType, dtypes, from_bf16_bits, least_float, promote, promote_scalar
from compiler.elementwise import MathOps
from compiler.gather import GatherOps
from compiler.helpers import normalize_axis
from compiler.indexing import IndexingOps
from compiler.ir.ops import Ops
from compiler.lazy import LazyBuffer, LoadOps, reaches, realize
from compiler.movement import MovementOps
from compiler.random import RandomOps
from compiler.reduce import ReduceOps
from compiler.sorting import SortingOps

Scalar = int | float | bool


def _shape_arg(shape) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], Sequence | np.ndarray):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if not isinstance(s, int | np.integer) or isinstance(s, bool):
            raise TypeError(f"shape entries must be ints, got {s!r}")
        if s < 0:
            raise ValueError(f"negative dimension {s} in shape {tuple(shape)}")
        out.append(int(s))
    return tuple(out)


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast of shapes; ValueError naming them when they do not broadcast."""
    n = max(len(s) for s in shapes)
    padded = [(1,) * (n - len(s)) + tuple(s) for s in shapes]
    out = []
    for dims in zip(*padded, strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"shapes {' and '.join(str(tuple(s)) for s in shapes)} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


class Tensor(MathOps, MovementOps, ReduceOps, CompositeOps, IndexingOps, RandomOps, SortingOps, GatherOps, CreationOps):
    """A lazy n-dimensional array on a device (module docstring)."""

    __hash__ = object.__hash__  # == is elementwise, so hash by identity
    no_grad: ClassVar[bool] = False
    training: ClassVar[bool] = False

    def __init__(self, data, dtype=None, device: str | None = None, requires_grad: bool = False):
        device = devices.canonical(device)
        dt = None if dtype is None else dtypes.from_any(dtype)
        if isinstance(data, LazyBuffer):
            lb = data if dt is None or dt == data.dtype else data.cast(dt)
        elif isinstance(data, Tensor):
            lb = data.lazydata if dt is None else data.lazydata.cast(dt)
        elif isinstance(data, bool | int | float | np.generic) and not isinstance(data, np.ndarray):
            dt = dt or (dtypes.from_any(data.dtype) if isinstance(data, np.generic) else dtypes.of_scalar(data))
            _check_scalar_fits(data, dt)
            lb = LazyBuffer.const(data.item() if isinstance(data, np.generic) else data, dt, device)
        else:
            arr, dt = _host_array(data, dt)
            lb = LazyBuffer.from_host(arr, dt, device)
        self.lazydata: LazyBuffer = lb
        self.requires_grad = requires_grad
        self.grad: Tensor | None = None
        self._ctx: F.Function | None = None
        self._parents: tuple[Tensor, ...] = ()

    # ---- properties -------------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape."""
        return self.lazydata.shape

    @property
    def dtype(self) -> DType:
        """The element type."""
        return self.lazydata.dtype

    @property
    def device(self) -> str:
        """The device name ('AMD:0')."""
        return self.lazydata.device

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def numel(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    def size(self, dim: int | None = None):
        """The shape, or one dimension's size (PyTorch's size())."""
        return self.shape if dim is None else self.shape[normalize_axis(dim, self.ndim)]

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        grad = ", requires_grad=True" if self.requires_grad else ""
        return f"<Tensor {self.shape} {self.dtype.name} on {self.device}{grad}>"

    # ---- running ----------------------------------------------------------------------------------------
    def realize(self) -> Tensor:
        """Compute the tensor now (its base then holds device memory); returns self."""
        realize(self.lazydata)
        return self

    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (bfloat16 as float32)."""
        dt = self.dtype
        if self.numel() == 0:
            return np.zeros(self.shape, dt.np)
        lb = self.lazydata
        if lb.base.op is LoadOps.CONST:
            return np.full(self.shape, lb.base.arg, dt.np)
        if lb.is_view and not lb.st.contiguous_layout or lb.base.st.size() != lb.st.size():
            lb = lb.contiguous()
        realize(lb)
        out = np.empty(self.shape, dt.storage)
        lb.base.buffer.copyout(out)
        if dt.name == "bfloat16":
            return from_bf16_bits(out)
        return out

    def tolist(self):
        """The values as (nested) Python lists."""
        return self.numpy().tolist()

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise ValueError(f"item() needs one element; the tensor has shape {self.shape}")
        return self.numpy().reshape(()).item()

    def __bool__(self) -> bool:
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def to(self, device: str) -> Tensor:
        """The tensor on another device (a copy; itself if already there)."""
        device = devices.canonical(device)
        if device == self.device:
            return self
        out = Tensor(self.lazydata.copy_to(device), requires_grad=self.requires_grad)
        return out

    def detach(self) -> Tensor:
        """The same values, cut from the autograd graph."""
        return Tensor(self.lazydata)

    def contiguous(self) -> Tensor:
        """A tensor whose values get a buffer of their own (forces a kernel)."""
        return self._apply(F.Contiguous, self)

    def assign(self, other) -> Tensor:
        """Replace this tensor's values (same shape; cast to its dtype) with other's; returns self.

        When other is computed from the values it replaces (`p.assign(p - lr * g)`), those are realized first, so
        a loop of assigns that never realizes keeps a graph of one step, not one that grows with every step."""
        other = other if isinstance(other, Tensor) else Tensor(other, dtype=self.dtype, device=self.device)
        if other.shape != self.shape:
            raise ValueError(f"assign: shape {other.shape} does not match {self.shape}")
        if other.device != self.device:
            other = other.to(self.device)
        old = self.lazydata
        if not old.realized and old.base.op is not LoadOps.CONST and reaches(other.lazydata, old.base):
            realize(old)
        self.lazydata = other.lazydata if other.dtype == self.dtype else other.lazydata.cast(self.dtype)
        return self

    # in-place operators assign (tinygrad's, and PyTorch's, meaning: `p -= lr * g` updates p, not a new name)
    def __iadd__(self, o):
        return self.assign(self.add(o))

    def __isub__(self, o):
        return self.assign(self.sub(o))

    def __imul__(self, o):
        return self.assign(self.mul(o))

    def __itruediv__(self, o):
        return self.assign(self.div(o))

    def __ifloordiv__(self, o):
        return self.assign(self.floordiv(o))

    def __imod__(self, o):
        return self.assign(self.mod(o))

    def __ipow__(self, o):
        return self.assign(self.pow(o))

    def __imatmul__(self, o):
        return self.assign(self.matmul(o))

    def __iand__(self, o):
        return self.assign(self & o)

    def __ior__(self, o):
        return self.assign(self | o)

    def __ixor__(self, o):
        return self.assign(self ^ o)

    def __ilshift__(self, o):
        return self.assign(self << o)

    def __irshift__(self, o):
        return self.assign(self >> o)

    @staticmethod
    def realize_all(*tensors: Tensor) -> None:
        """Realize several tensors in one schedule (shared work is done once)."""
        realize(*(t.lazydata for t in tensors))

    # ---- autograd -----------------------------------------------------------------------------------------
    @classmethod
    def _apply(cls, fn: type[F.Function], *xs: Tensor, **kw) -> Tensor:
        ctx = fn(*(x.requires_grad for x in xs))
        out = Tensor(ctx.forward(*(x.lazydata for x in xs), **kw))
        if ctx.requires_grad and not Tensor.no_grad:
            out.requires_grad, out._ctx, out._parents = True, ctx, xs
        return out

    def backward(self, gradient: Tensor | None = None) -> None:
        """Accumulate d(self)/d(leaf) into the .grad of every tensor that requires grad (self must be a scalar
        unless gradient is given)."""
        if not self.requires_grad:
            raise RuntimeError("backward() on a tensor that does not require grad")
        if gradient is None:
            if self.numel() != 1:
                raise ValueError(f"backward() without a gradient needs a one-element tensor, not shape {self.shape}")
            gradient = Tensor(LazyBuffer.const(1, self.dtype, self.device, self.shape))
        grads: dict[int, LazyBuffer] = {id(self): gradient.lazydata}
        for t in reversed(self._toposort()):
            g = grads.pop(id(t), None)
            if g is None:
                continue
            if t._ctx is None:
                g_t = Tensor(g)
                t.grad = g_t if t.grad is None else t.grad + g_t
                continue
            back = t._ctx.backward(g)
            back = back if isinstance(back, tuple) else (back,)
            for p, pg in zip(t._parents, back, strict=True):
                if pg is None or not p.requires_grad:
                    continue
                if pg.shape != p.shape:
                    raise AssertionError(f"gradient shape {pg.shape} != {p.shape} ({type(t._ctx).__name__})")
                grads[id(p)] = pg if id(p) not in grads else grads[id(p)].alu(Ops.ADD, pg)

    def _toposort(self) -> list[Tensor]:
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            t, done = stack.pop()
            if done:
                order.append(t)
                continue
            if id(t) in seen:
                continue
            seen.add(id(t))
            stack.append((t, True))
            stack.extend((p, False) for p in t._parents if id(p) not in seen)
        return order

    # ---- creation -----------------------------------------------------------------------------------------
    @staticmethod
    def full(shape, fill_value: Scalar, dtype=None, device: str | None = None, requires_grad: bool = False) -> Tensor:
        """A tensor of one value (no memory until something needs it)."""
        shape = _shape_arg(shape if isinstance(shape, tuple | list) else (shape,))
        dt = dtypes.from_any(dtype) if dtype is not None else dtypes.of_scalar(fill_value)
        lb = LazyBuffer.const(fill_value, dt, devices.canonical(device), shape)
        return Tensor(lb, requires_grad=requires_grad)

    @staticmethod
    def zeros(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Zeros (float32 unless dtype)."""
        return Tensor.full(_shape_arg(shape), 0, dtype or dtypes.default_float, device, requires_grad)

    @staticmethod
    def ones(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
        """Ones (float32 unless dtype)."""
        return Tensor.full(_shape_arg(shape), 1, dtype or dtypes.default_float, device, requires_grad)

    @staticmethod
    def empty(*shape, dtype=None, device=None) -> Tensor:
        """Memory with undefined contents."""
        return Tensor(LazyBuffer.empty(_shape_arg(shape), dtypes.from_any(dtype or dtypes.default_float),
                                       devices.canonical(device)))

    @staticmethod
    def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
        """start, start+step, ... below stop (int32 for int arguments, int64 when the values do not fit int32,
        else float32)."""
        if stop is None:
            start, stop = 0, start
        if step == 0:
            raise ValueError("arange: step must not be 0")
        n = max(0, math.ceil((stop - start) / step))
        is_int = all(isinstance(v, int) for v in (start, stop, step))
        dt = dtypes.from_any(dtype) if dtype is not None else (dtypes.default_int if is_int else dtypes.default_float)
        if dtype is None and is_int and not dt.min <= start + (n - 1) * step <= dt.max:
            dt = dtypes.int64  # values past int32 (NumPy's arange is int64 throughout)
        if n == 0:
            return Tensor.zeros(0, dtype=dt, device=device)
        idx = Tensor(LazyBuffer.iota(n, devices.canonical(device)))
        if dt.is_float:
            return idx.cast(dt) * step + start
        return (idx * step + start).cast(dt) if (start, step) != (0, 1) else idx.cast(dt)

    @staticmethod
    def eye(n: int, m: int | None = None, dtype=None, device=None) -> Tensor:
        """The n x m identity matrix."""
        m = n if m is None else m
        r = Tensor.arange(n, device=device).reshape(n, 1)
        c = Tensor.arange(m, device=device).reshape(1, m)
        return (r == c).cast(dtype or dtypes.default_float)

    def full_like(self, fill_value: Scalar, dtype=None) -> Tensor:
        """A constant tensor of self's shape and device (self's dtype unless dtype)."""
        return Tensor.full(self.shape, fill_value, dtype or self.dtype, self.device)

    def zeros_like(self, dtype=None) -> Tensor:
        """Zeros of self's shape."""
        return self.full_like(0, dtype)

    def ones_like(self, dtype=None) -> Tensor:
        """Ones of self's shape."""
        return self.full_like(1, dtype)

    # ---- types ----------------------------------------------------------------------------------------------
    def cast(self, dtype) -> Tensor:
        """Values converted to dtype (float -> int truncates; x -> bool is x != 0)."""
        dt = dtypes.from_any(dtype)
        return self if dt == self.dtype else self._apply(F.Cast, self, dtype=dt)

    def bitcast(self, dtype) -> Tensor:
        """The bits reinterpreted as dtype (same item size)."""
        dt = dtypes.from_any(dtype)
        if dt.itemsize != self.dtype.itemsize or dtypes.bool in (dt, self.dtype):
            raise TypeError(f"bitcast {self.dtype.name} -> {dt.name}: item sizes must match (and no bool)")
        return self if dt == self.dtype else self._apply(F.Cast, self, dtype=dt, bitcast=True)

    def float(self) -> Tensor:
        """cast(float32)."""
        return self.cast(dtypes.float32)

    def half(self) -> Tensor:
        """cast(float16)."""
        return self.cast(dtypes.float16)

    def int(self) -> Tensor:
        """cast(int32)."""
        return self.cast(dtypes.int32)

    def bool(self) -> Tensor:
        """cast(bool)."""
        return self.cast(dtypes.bool)

    def double(self) -> Tensor:
        """cast(float64)."""
        return self.cast(dtypes.float64)

    # ---- broadcasting binary ops --------------------------------------------------------------------------
    def _operands(self, other, reverse: bool = False, dtype: DType | None = None) -> tuple[Tensor, Tensor]:
        """self and other broadcast to one shape and promoted to one dtype (or dtype)."""
        if isinstance(other, Tensor):
            if other.device != self.device:
                raise ValueError(f"tensors on different devices: {self.device} and {other.device}")
            dt = dtype or promote(self.dtype, other.dtype)
            o = other
        elif isinstance(other, bool | int | float | np.generic):
            other = other.item() if isinstance(other, np.generic) else other
            dt = dtype or promote_scalar(self.dtype, other)
            if isinstance(other, float) and not dt.is_float:
                dt = dtypes.default_float
            o = Tensor(LazyBuffer.const(other, dt, self.device))
        else:
            o = Tensor(other, device=self.device)
            dt = dtype or promote(self.dtype, o.dtype)
        a, b = self.cast(dt), o.cast(dt)
        shape = broadcast_shape(a.shape, b.shape)
        a, b = a._broadcast_to(shape), b._broadcast_to(shape)
        return (b, a) if reverse else (a, b)

    def _broadcast_to(self, shape) -> Tensor:
        if self.shape == tuple(shape):
            return self
        padded = (1,) * (len(shape) - self.ndim) + self.shape
        return self.reshape(padded).expand(shape)

    def _binary(self, fn, other, reverse=False, dtype=None) -> Tensor:
        a, b = self._operands(other, reverse, dtype)
        return self._apply(fn, a, b)

    def _nograd(self, op: Ops, other, reverse=False, out_dtype=None, kinds: str | None = None) -> Tensor:
        a, b = self._operands(other, reverse)
        if kinds is not None and a.dtype.kind not in kinds:
            raise TypeError(f"{op.name.lower()} is not defined for {a.dtype.name}")
        return self._apply(F.NoGrad, a, b, op=op, dtype=out_dtype)

    def add(self, other, reverse=False) -> Tensor:
        """self + other."""
        return self._binary(F.Add, other, reverse)

    def sub(self, other, reverse=False) -> Tensor:
        """self - other."""
        return self._binary(F.Sub, other, reverse)

    def mul(self, other, reverse=False) -> Tensor:
        """self * other."""
        return self._binary(F.Mul, other, reverse)

    def div(self, other, reverse=False) -> Tensor:
        """True division (integers divide as the default float)."""
        a, b = self._operands(other, reverse)
        dt = least_float(a.dtype)
        return self._apply(F.Div, a.cast(dt), b.cast(dt))

    def floordiv(self, other, reverse=False) -> Tensor:
        """Floor division, as NumPy: rounds toward -inf (x // 0 == 0 for integers)."""
        a, b = self._operands(other, reverse)
        if a.dtype.is_float:
            return (a / b).floor()
        if a.dtype.is_unsigned:
            return self._apply(F.NoGrad, a, b, op=Ops.IDIV)
        q = self._apply(F.NoGrad, a, b, op=Ops.IDIV)
        r = self._apply(F.NoGrad, a, b, op=Ops.MOD)
        fix = (r != 0) & ((r < 0) != (b < 0))
        return fix.where(q - 1, q)

    def mod(self, other, reverse=False) -> Tensor:
        """Remainder with the divisor's sign, as NumPy (x % 0 == 0 for integers)."""
        a, b = self._operands(other, reverse)
        if a.dtype.is_float:
            return self._apply(F.FloatMod, a, b)
        r = self._apply(F.NoGrad, a, b, op=Ops.MOD)
        if a.dtype.is_unsigned:
            return r
        fix = (r != 0) & ((r < 0) != (b < 0))
        return fix.where(r + b, r)

    def maximum(self, other) -> Tensor:
        """Elementwise maximum (NaN wins)."""
        return self._binary(F.Maximum, other)

    def minimum(self, other) -> Tensor:
        """Elementwise minimum (NaN wins)."""
        a, b = self._operands(other)
        return (a._flip_order()).maximum(b._flip_order())._flip_order()

    def _flip_order(self) -> Tensor:
        """An order-reversing bijection: -x for floats, ~x for integers, not x for bools."""
        return -self if self.dtype.is_float else ~self

    def __add__(self, o):
        return self.add(o)

    def __radd__(self, o):
        return self.add(o, True)

    def __sub__(self, o):
        return self.sub(o)

    def __rsub__(self, o):
        return self.sub(o, True)

    def __mul__(self, o):
        return self.mul(o)

    def __rmul__(self, o):
        return self.mul(o, True)

    def __truediv__(self, o):
        return self.div(o)

    def __rtruediv__(self, o):
        return self.div(o, True)

    def __floordiv__(self, o):
        return self.floordiv(o)

    def __rfloordiv__(self, o):
        return self.floordiv(o, True)

    def __mod__(self, o):
        return self.mod(o)

    def __rmod__(self, o):
        return self.mod(o, True)

    def __pow__(self, o):
        return self.pow(o)

    def __rpow__(self, o):
        return Tensor(o, device=self.device, dtype=promote_scalar(self.dtype, o)
                      if not isinstance(o, Tensor) else None).pow(self)

    def __neg__(self):
        return self.neg()

    def __abs__(self):
        return self.abs()

    def __matmul__(self, o):
        return self.matmul(o)

    def __rmatmul__(self, o):
        return Tensor(o, device=self.device).matmul(self)

    # comparisons (bool results, no gradient)
    def __lt__(self, o):
        return self._nograd(Ops.CMPLT, o, out_dtype=dtypes.bool)

    def __gt__(self, o):
        return self._nograd(Ops.CMPLT, o, reverse=True, out_dtype=dtypes.bool)

    def __le__(self, o):
        return (self > o).logical_not() if not self._nan_possible(o) else (self < o) | (self == o)

    def __ge__(self, o):
        return (self < o).logical_not() if not self._nan_possible(o) else (self > o) | (self == o)

    def __eq__(self, o):  # type: ignore[override]
        return self._nograd(Ops.CMPEQ, o, out_dtype=dtypes.bool)

    def __ne__(self, o):  # type: ignore[override]
        return self._nograd(Ops.CMPNE, o, out_dtype=dtypes.bool)

    def _nan_possible(self, o) -> bool:
        return self.dtype.is_float or isinstance(o, float) or (isinstance(o, Tensor) and o.dtype.is_float)

    # bitwise (ints and bools)
    def __and__(self, o):
        return self._nograd(Ops.AND, o, kinds="biu")

    def __rand__(self, o):
        return self._nograd(Ops.AND, o, reverse=True, kinds="biu")

    def __or__(self, o):
        return self._nograd(Ops.OR, o, kinds="biu")

    def __ror__(self, o):
        return self._nograd(Ops.OR, o, reverse=True, kinds="biu")

    def __xor__(self, o):
        return self._nograd(Ops.XOR, o, kinds="biu")

    def __rxor__(self, o):
        return self._nograd(Ops.XOR, o, reverse=True, kinds="biu")

    def __lshift__(self, o):
        return self._nograd(Ops.SHL, o, kinds="iu")

    def __rshift__(self, o):
        return self._nograd(Ops.SHR, o, kinds="iu")

    def __rlshift__(self, o):
        return self._nograd(Ops.SHL, o, reverse=True, kinds="iu")

    def __rrshift__(self, o):
        return self._nograd(Ops.SHR, o, reverse=True, kinds="iu")

    def __invert__(self):
        if self.dtype.is_float:
            raise TypeError(f"~ is not defined for {self.dtype.name}")
        return self._apply(F.NoGrad, self, op=Ops.NOT)

    def logical_not(self) -> Tensor:
        """not x (as bool)."""
        return ~self.cast(dtypes.bool)


def _host_array(data, dt: DType | None) -> tuple[np.ndarray, DType]:
    """A host array for Tensor(data): NumPy arrays keep their dtype, Python lists take the defaults."""
    if isinstance(data, np.ndarray):
        arr = data
        dt = dt or dtypes.from_any(arr.dtype)
    else:
        try:
            arr = np.asarray(data)
        except ValueError:
            arr = np.empty(0, object)
        if arr.dtype == object:
            raise TypeError(f"cannot make a tensor from {type(data).__name__} (ragged or non-numeric)")
        if dt is None:
            kind = arr.dtype.kind
            dt = dtypes.bool if kind == "b" else dtypes.default_int if kind in "iu" else \
                dtypes.default_float if kind == "f" else None
            if dt is None:
                raise TypeError(f"cannot make a tensor of {arr.dtype}")
    if dt.name != "bfloat16":
        arr = arr.astype(dt.np, copy=False)
    return np.ascontiguousarray(arr), dt


def _check_scalar_fits(v, dt: DType) -> None:
    if dt.is_int and isinstance(v, int | np.integer) and not dt.min <= int(v) <= dt.max:
        raise OverflowError(f"{v} does not fit in {dt.name}")


@contextlib.contextmanager
def no_grad():
    """Build graphs without recording gradients inside the block."""
    prev, Tensor.no_grad = Tensor.no_grad, True
    try:
        yield
    finally:
        Tensor.no_grad = prev
