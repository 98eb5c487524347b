"""Tensor: the lazy array users program against (NumPy/PyTorch conventions; docs/compiler.md).

Operations build a lazy graph (compiler.lazy) through differentiable primitives (compiler.autograd);
`realize()`, `numpy()`, `tolist()` and `item()` run it on the tensor's device. Shapes, axes and dtypes are
checked when an operation is written, so a mistake raises before anything is compiled or launched.
"""

from __future__ import annotations

import contextlib
import math
from typing import ClassVar

import numpy as np

from compiler import autograd as F
from compiler import device as devices
from compiler.activations import ActivationOps
from compiler.arithmetic import ArithmeticOps
from compiler.composite import CompositeOps
from compiler.creation import CreationOps
from compiler.dtypes import DType, dtypes, from_bf16_bits, promote_scalar
from compiler.elementwise import MathOps
from compiler.gather import GatherOps
from compiler.gradient import GradientOps
from compiler.helpers import normalize_axis
from compiler.indexing import IndexingOps
from compiler.ir.ops import Ops
from compiler.lazy import LazyBuffer, reaches
from compiler.losses import LossOps
from compiler.movement import MovementOps
from compiler.random import RandomOps
from compiler.realize import realize
from compiler.reduce import ReduceOps
from compiler.sorting import SortingOps
from compiler.transcendental import TranscendentalOps
from compiler.views import ShapeTracker

ASSIGN_OBSERVERS: list = []  # f(tensor, value it replaced) after every assign (compiler.jit follows a step's state)


class Tensor(ArithmeticOps, GradientOps, CreationOps, MathOps, TranscendentalOps, ActivationOps, LossOps, MovementOps,
             ReduceOps, CompositeOps, IndexingOps, RandomOps, SortingOps, GatherOps):
    """A lazy n-dimensional array on a device (module docstring)."""

    __hash__ = object.__hash__  # == is elementwise, so hash by identity
    no_grad: ClassVar[bool] = False
    grad: Tensor | None = None  # an instance's accumulated gradient (backward); declared here as tinygrad does
    is_param: bool = True  # tinygrad's parameter flag (is_param_ sets it)
    training: ClassVar[bool] = False

    def __init__(self, data, device: str | None = None, dtype=None, requires_grad: bool = False):
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

    @property
    def max_shape(self) -> tuple[int, ...]:
        """The largest shape the tensor can have (tinygrad's symbolic shapes; ours are concrete: the shape)."""
        return self.shape

    def max_numel(self) -> int:
        """Elements of max_shape."""
        return math.prod(self.max_shape)

    def is_param_(self, is_param: bool = True) -> Tensor:
        """Mark (or unmark) self as a parameter, tinygrad's flag; returns self."""
        self.is_param = is_param
        return self

    def replace(self, x: Tensor) -> Tensor:
        """Self now stands for x's computation (same shape; x's dtype), without autograd history; returns self."""
        if not isinstance(x, Tensor) or x.shape != self.shape:
            raise ValueError(f"replace: x must be a Tensor of self's shape {self.shape}, not {getattr(x, 'shape', x)}")
        self.lazydata = x.lazydata
        return self

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
        if lb.base.op is Ops.CONST:
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

    def contiguous_backward(self) -> Tensor:
        """self, whose gradient is made contiguous (ours are computed into buffers of their own as needed: the
        same values, so this is the identity)."""
        return self

    def clone(self, device: str | None = None) -> Tensor:
        """A copy with a buffer of its own (on device if given), and a copy of .grad."""
        src = self.to(device or self.device).lazydata
        out = Tensor(LazyBuffer(src.device, ShapeTracker.contiguous(src.shape), src.dtype, Ops.CONTIGUOUS, (src,)))
        if self.grad is not None:
            out.grad = self.grad.clone(device)
        return out

    def to_(self, device: str | None) -> Tensor:
        """Move self (and its .grad) to device, in place; returns self."""
        device = devices.canonical(device)
        self.lazydata = self.to(device).lazydata
        if self.grad is not None:
            self.grad.to_(device)
        return self

    def data(self) -> memoryview:
        """The values as a memoryview of self's shape (runs the graph; bfloat16 has no buffer format: cast first)."""
        if self.dtype == dtypes.bfloat16:
            raise TypeError("data(): bfloat16 has no memoryview format; cast to float32 first")
        return memoryview(np.array(self.numpy(), order="C"))  # NumPy exports the shape and the struct format

    def sequential(self, ll) -> Tensor:
        """Each callable in ll applied in turn, starting from self."""
        out = self
        for f in ll:
            out = f(out)
        return out

    def ufix(self, x) -> Tensor:
        """x itself if a Tensor, else a constant x of self's dtype (a float x makes an integer self's float) on
        self's device."""
        if isinstance(x, Tensor):
            return x
        dt = promote_scalar(self.dtype, x)
        return Tensor.full((), x, dt if isinstance(x, float) and not self.dtype.is_float else self.dtype, self.device)

    def usum(self, *xs) -> Tensor:
        """self + each of xs (or, for bool, |)."""
        out = self
        for x in _flat_args(xs):
            out = out | x if self.dtype == dtypes.bool else out + x
        return out

    def uprod(self, *xs) -> Tensor:
        """self * each of xs (or, for bool, &)."""
        out = self
        for x in _flat_args(xs):
            out = out & x if self.dtype == dtypes.bool else out * x
        return out

    def assign(self, x) -> Tensor:
        """Replace this tensor's values (same shape; cast to its dtype) with other's; returns self.

        When other is computed from the values it replaces (`p.assign(p - lr * g)`), those are realized first, so
        a loop of assigns that never realizes keeps a graph of one step, not one that grows with every step."""
        other = x if isinstance(x, Tensor) else Tensor(x, dtype=self.dtype, device=self.device)
        if other.shape != self.shape:
            raise ValueError(f"assign: x of shape {other.shape} does not match self's shape {self.shape}")
        if other.device != self.device:
            other = other.to(self.device)
        old = self.lazydata
        if not old.realized and old.base.op is not Ops.CONST and reaches(other.lazydata, old.base):
            realize(old)
        self.lazydata = other.lazydata if other.dtype == self.dtype else other.lazydata.cast(self.dtype)
        for observe in ASSIGN_OBSERVERS:
            observe(self, old)
        return self

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

    # ---- types ----------------------------------------------------------------------------------------------
    def cast(self, dtype) -> Tensor:
        """Values converted to dtype (float -> int truncates; x -> bool is x != 0)."""
        dt = dtypes.from_any(dtype)
        return self if dt == self.dtype else self._apply(F.Cast, self, dtype=dt)

    def bitcast(self, dtype) -> Tensor:
        """The bits reinterpreted as dtype (same item size)."""
        dt = dtypes.from_any(dtype)
        if dt.itemsize != self.dtype.itemsize or dtypes.bool in (dt, self.dtype):
            raise TypeError(f"bitcast: dtype {dt.name} must have the item size of self's {self.dtype.name} "
                            "(and neither bool)")
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

    def long(self) -> Tensor:
        """cast(int64)."""
        return self.cast(dtypes.int64)

    def short(self) -> Tensor:
        """cast(int16)."""
        return self.cast(dtypes.int16)

    def bfloat16(self) -> Tensor:
        """cast(bfloat16)."""
        return self.cast(dtypes.bfloat16)

    def element_size(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    def nbytes(self) -> int:
        """Bytes of all elements."""
        return self.numel() * self.dtype.itemsize

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point type."""
        return dtypes.is_float(self.dtype)



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
            raise TypeError(f"Tensor: data must be numbers in a regular nesting; this {type(data).__name__} is ragged "
                            "or non-numeric")
        if dt is None:
            kind = arr.dtype.kind
            dt = dtypes.bool if kind == "b" else dtypes.default_int if kind in "iu" else \
                dtypes.default_float if kind == "f" else None
            if dt is None:
                raise TypeError(f"Tensor: data of NumPy type {arr.dtype} has no tensor dtype")
    if dt.name != "bfloat16":
        arr = arr.astype(dt.np, copy=False)
    return np.ascontiguousarray(arr).reshape(arr.shape), dt  # ascontiguousarray makes a 0-d array 1-d


def _flat_args(xs: tuple) -> tuple:
    """f(a, b) and f([a, b]) alike (tinygrad's argfix)."""
    return tuple(xs[0]) if len(xs) == 1 and isinstance(xs[0], list | tuple) else xs


def _check_scalar_fits(v, dt: DType) -> None:
    if dt.is_int and isinstance(v, int | np.integer) and not dt.min <= int(v) <= dt.max:
        raise OverflowError(f"Tensor: data {v} does not fit in dtype {dt.name}")


@contextlib.contextmanager
def no_grad():
    """Build graphs without recording gradients inside the block."""
    prev, Tensor.no_grad = Tensor.no_grad, True
    try:
        yield
    finally:
        Tensor.no_grad = prev
