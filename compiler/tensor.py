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
from compiler.dtypes import DType, dtypes, from_bf16_bits, least_float, promote, promote_scalar
from compiler.helpers import normalize_axis
from compiler.indexing import IndexingOps
from compiler.ir.ops import Ops
from compiler.lazy import LazyBuffer, LoadOps, realize
from compiler.random import RandomOps

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


def _in_float32(fn):
    """Run a float op on float16/bfloat16 tensors in float32 and round once at the end (as NumPy and PyTorch
    do for half-precision transcendentals: a composite op rounded at every step loses most of 11 bits)."""
    def wrapper(self, *args, **kw):
        if self.dtype in (dtypes.float16, dtypes.bfloat16):
            return fn(self.cast(dtypes.float32), *args, **kw).cast(self.dtype)
        return fn(self, *args, **kw)
    wrapper.__doc__, wrapper.__name__ = fn.__doc__, fn.__name__
    return wrapper


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


class Tensor(CompositeOps, IndexingOps, RandomOps):
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
        """Replace this tensor's values (same shape and dtype) with other's; returns self."""
        other = other if isinstance(other, Tensor) else Tensor(other, dtype=self.dtype, device=self.device)
        if other.shape != self.shape:
            raise ValueError(f"assign: shape {other.shape} does not match {self.shape}")
        if other.device != self.device:
            other = other.to(self.device)
        self.lazydata = other.lazydata if other.dtype == self.dtype else other.lazydata.cast(self.dtype)
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
        """start, start+step, ... below stop (int32 for int arguments, else float32)."""
        if stop is None:
            start, stop = 0, start
        if step == 0:
            raise ValueError("arange: step must not be 0")
        n = max(0, math.ceil((stop - start) / step))
        is_int = all(isinstance(v, int) for v in (start, stop, step))
        dt = dtypes.from_any(dtype) if dtype is not None else (dtypes.default_int if is_int else dtypes.default_float)
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

    # ---- unary math ---------------------------------------------------------------------------------------
    def _float(self) -> Tensor:
        return self.cast(least_float(self.dtype))

    def neg(self) -> Tensor:
        """-x (bool: not x)."""
        if self.dtype == dtypes.bool:
            return self.logical_not()
        return self._apply(F.Neg, self)

    @_in_float32
    def exp2(self) -> Tensor:
        """2 ** x."""
        return self._apply(F.Exp2, self._float())

    @_in_float32
    def exp(self) -> Tensor:
        """e ** x."""
        return (self._float() * (1 / math.log(2))).exp2()

    @_in_float32
    def log2(self) -> Tensor:
        """log base 2."""
        return self._apply(F.Log2, self._float())

    @_in_float32
    def log(self) -> Tensor:
        """Natural logarithm."""
        return self.log2() * math.log(2)

    def sqrt(self) -> Tensor:
        """Square root."""
        return self._apply(F.Sqrt, self._float())

    @_in_float32
    def rsqrt(self) -> Tensor:
        """1 / sqrt(x)."""
        return 1 / self.sqrt()

    @_in_float32
    def sin(self) -> Tensor:
        """Sine."""
        return self._apply(F.Sin, self._float())

    @_in_float32
    def cos(self) -> Tensor:
        """Cosine, as sin(pi/2 - x)."""
        return (math.pi / 2 - self._float()).sin()

    @_in_float32
    def tan(self) -> Tensor:
        """Tangent."""
        return self.sin() / self.cos()

    @_in_float32
    def sigmoid(self) -> Tensor:
        """1 / (1 + e^-x)."""
        return 1 / (1 + (-self._float()).exp())

    @_in_float32
    def tanh(self) -> Tensor:
        """Hyperbolic tangent, 2 sigmoid(2x) - 1."""
        return 2 * (2 * self._float()).sigmoid() - 1

    def relu(self) -> Tensor:
        """max(x, 0) (gradient 0 at 0)."""
        return (self > 0).where(self, 0)

    @_in_float32
    def silu(self) -> Tensor:
        """x * sigmoid(x)."""
        return self * self.sigmoid()

    @_in_float32
    def erf(self) -> Tensor:
        """The error function (Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7)."""
        x = self._float()
        t = 1 / (1 + 0.3275911 * x.abs())
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        y = 1 - poly * (-(x * x)).exp()
        return (x < 0).where(-y, y)

    @_in_float32
    def gelu(self) -> Tensor:
        """x * Phi(x) with the exact (erf) form, as PyTorch's default."""
        return 0.5 * self * (1 + (self * (1 / math.sqrt(2))).erf())

    def abs(self) -> Tensor:
        """|x|."""
        if self.dtype.is_unsigned:
            return self
        return (self < 0).where(-self, self)

    def sign(self) -> Tensor:
        """-1, 0 or 1."""
        return (self > 0).cast(self.dtype) - (self < 0).cast(self.dtype)

    def square(self) -> Tensor:
        """x * x."""
        return self * self

    def reciprocal(self) -> Tensor:
        """1 / x."""
        return 1 / self

    def trunc(self) -> Tensor:
        """Rounded toward zero (floats)."""
        return self if not self.dtype.is_float else self._apply(F.NoGrad, self, op=Ops.TRUNC)

    def floor(self) -> Tensor:
        """Rounded toward -inf."""
        if not self.dtype.is_float:
            return self
        t = self.trunc()
        return (self < t).where(t - 1, t)

    def ceil(self) -> Tensor:
        """Rounded toward +inf."""
        if not self.dtype.is_float:
            return self
        t = self.trunc()
        return (self > t).where(t + 1, t)

    def round(self) -> Tensor:
        """Rounded to nearest, ties to even (NumPy's round)."""
        if not self.dtype.is_float:
            return self
        f = self.floor()
        d = self - f
        even = (f * 0.5).floor() * 2 == f
        up = (d > 0.5) | ((d == 0.5) & even.logical_not())
        return up.where(f + 1, f)

    def where(self, a, b) -> Tensor:
        """a where self is true, else b (broadcast; a and b promoted to one dtype)."""
        cond = self.cast(dtypes.bool)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            dt = promote(dtypes.of_scalar(a), dtypes.of_scalar(b))
            a = Tensor.full((), a, dt, self.device)
        if not isinstance(a, Tensor):
            a, b = b._operands(a, reverse=True)
        else:
            a, b = a._operands(b)
        shape = broadcast_shape(cond.shape, a.shape)
        return self._apply(F.Where, cond._broadcast_to(shape), a._broadcast_to(shape), b._broadcast_to(shape))

    def clip(self, min_=None, max_=None) -> Tensor:
        """Values limited to [min_, max_] (either may be None)."""
        if min_ is None and max_ is None:
            raise ValueError("clip needs min_ or max_")
        out = self
        if min_ is not None:
            out = out.maximum(min_)
        if max_ is not None:
            out = out.minimum(max_)
        return out

    clamp = clip

    def pow(self, exponent) -> Tensor:
        """self ** exponent (NumPy's rules: integer powers exact, negative bases with integer exponents)."""
        if isinstance(exponent, int | np.integer) and not isinstance(exponent, bool) and not \
                (self.dtype.is_float is False and exponent < 0):
            return self._int_power(int(exponent))
        a, b = self._operands(exponent)
        if not a.dtype.is_float:
            return a._int_pow_tensor(b)
        mag = (b * a.abs().log2()).exp2()
        b_int = b.trunc() == b
        odd = b_int & ((b * 0.5).trunc() != b * 0.5)
        neg = a < 0
        out = (neg & odd).where(-mag, mag)
        out = (neg & b_int.logical_not()).where(math.nan, out)
        return (b == 0).where(1.0, out)

    def _int_power(self, n: int) -> Tensor:
        if n == 0:
            return self.ones_like()
        if n < 0:
            return 1 / self._int_power(-n)
        out, base = None, self
        while n:
            if n & 1:
                out = base if out is None else out * base
            n >>= 1
            if n:
                base = base * base
        return out

    def _int_pow_tensor(self, e: Tensor) -> Tensor:
        if (e < 0).any_value():
            raise ValueError("integers to negative integer powers are not allowed")
        out, base = self.ones_like(), self
        for bit in range(e.dtype.bits - 1):
            out = ((e >> bit) & 1).cast(dtypes.bool).where(out * base, out)
            base = base * base
        return out

    def any_value(self) -> bool:
        """Whether any element is nonzero (runs the graph)."""
        return bool(self.numpy().any())

    # ---- movement -------------------------------------------------------------------------------------------
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

    def transpose(self, dim0: int = -2, dim1: int = -1) -> Tensor:
        """Two dimensions swapped."""
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
        return x if new == x.shape else self._apply(F.Expand, x, shape=_shape_arg(new))

    def pad(self, pads, value: Scalar = 0) -> Tensor:
        """NumPy's np.pad(x, pads, constant_values=value): pads is ((before, after),) per dimension, or one
        (before, after) pair for all, or an int."""
        pads = _pad_arg(pads, self.ndim)
        if all(p == (0, 0) for p in pads):
            return self
        out = self._apply(F.Pad, self, pads=pads)
        if value != 0:
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

    @staticmethod
    def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
        """Tensors of one shape stacked along a new dimension."""
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

    # ---- reductions -------------------------------------------------------------------------------------------
    def _axes(self, axis) -> tuple[int, ...]:
        if axis is None:
            return tuple(range(self.ndim))
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        out = tuple(normalize_axis(a, self.ndim) for a in axes)
        if len(set(out)) != len(out):
            raise ValueError(f"repeated axis in {axis}")
        return out

    def _reduce(self, fn, axis, keepdim: bool) -> Tensor:
        axes = self._axes(axis)
        for a in axes:
            if self.shape[a] == 0 and fn is not F.Sum:
                raise ValueError(f"reduction over the empty axis {a} of shape {self.shape} has no identity")
        out = self._apply(fn, self, axes=axes) if self.ndim else self
        if keepdim:
            return out
        return out.reshape(tuple(s for i, s in enumerate(self.shape) if i not in axes))

    def sum(self, axis=None, keepdim: bool = False, dtype=None) -> Tensor:
        """Sum; integers and bools sum as int64 (uint64 for unsigned), float16/bfloat16 accumulate in float32."""
        dt = dtypes.from_any(dtype) if dtype is not None else _sum_dtype(self.dtype)
        acc = dtypes.float32 if dt in (dtypes.float16, dtypes.bfloat16) else dt
        return self.cast(acc)._reduce(F.Sum, axis, keepdim).cast(dt)

    def max(self, axis=None, keepdim: bool = False) -> Tensor:
        """Maximum (its gradient is shared by the tied elements)."""
        return self._reduce(F.Max, axis, keepdim)

    def min(self, axis=None, keepdim: bool = False) -> Tensor:
        """Minimum."""
        return self._flip_order().max(axis, keepdim)._flip_order()

    def prod(self, axis=None, keepdim: bool = False) -> Tensor:
        """Product (integers as int64/uint64, as sum)."""
        dt = _sum_dtype(self.dtype)
        return self.cast(dt)._reduce(F.Prod, axis, keepdim)

    def mean(self, axis=None, keepdim: bool = False) -> Tensor:
        """Mean (integers give the default float)."""
        x = self._float()
        n = math.prod(self.shape[a] for a in self._axes(axis))
        return x.sum(axis, keepdim) / max(n, 1) if n else x.sum(axis, keepdim) * math.nan

    def var(self, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor:
        """Variance with PyTorch's default correction=1 (NumPy's ddof)."""
        x = self._float()
        n = math.prod(self.shape[a] for a in self._axes(axis))
        d = x - x.mean(axis, keepdim=True)
        return (d * d).sum(axis, keepdim) / max(n - correction, 0)

    def std(self, axis=None, keepdim: bool = False, correction: int = 1) -> Tensor:
        """Standard deviation (correction as var)."""
        return self.var(axis, keepdim, correction).sqrt()

    def argmax(self, axis=None, keepdim: bool = False) -> Tensor:
        """Index of the first maximum (int64), over the flattened tensor when axis is None."""
        if axis is None:
            return self.flatten().argmax(0)
        a = normalize_axis(axis, self.ndim)
        n = self.shape[a]
        if n == 0:
            raise ValueError(f"argmax over the empty axis {a}")
        hit = self == self.max(a, keepdim=True)
        rank = Tensor.arange(n, 0, -1, device=self.device).reshape((n,) + (1,) * (self.ndim - a - 1))
        first = (hit.cast(dtypes.int32) * rank).max(a, keepdim)
        return (n - first).cast(dtypes.int64)

    def argmin(self, axis=None, keepdim: bool = False) -> Tensor:
        """Index of the first minimum (int64)."""
        return self._flip_order().argmax(axis, keepdim)

    def cumsum(self, axis: int = 0) -> Tensor:
        """Running sum along axis (as sum: integers accumulate as int64)."""
        a = normalize_axis(axis, self.ndim)
        n = self.shape[a]
        x = self.transpose(a, -1)
        tri = Tensor.arange(n, device=self.device).reshape(n, 1) >= Tensor.arange(n, device=self.device).reshape(1, n)
        dt = _sum_dtype(self.dtype)
        out = (x.unsqueeze(-2).cast(dt) * tri.cast(dt)).sum(-1, dtype=dt)
        return out.transpose(a, -1)


def _sum_dtype(dt: DType) -> DType:
    if dt.kind == "b" or dt.kind == "i":
        return dtypes.int64
    if dt.kind == "u":
        return dtypes.uint64
    return dt


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
