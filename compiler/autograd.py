"""Differentiable primitives: each `Function` computes its forward on lazy buffers and its backward as more
lazy buffers, so gradients are graphs the scheduler fuses like any other. Every Tensor operation is one of
these or a composition of them (compiler.tensor, compiler.composite), which is how every op gets a gradient.
"""

from __future__ import annotations

import math

from compiler.dtypes import dtypes
from compiler.ir.ops import Ops
from compiler.lazy import LazyBuffer

LN2 = math.log(2)


class Function:
    """One differentiable primitive applied to tensors (see Tensor._apply)."""

    def __init__(self, *needs_grad: bool):
        self.needs_input_grad = needs_grad
        self.requires_grad = any(needs_grad)

    def forward(self, *args: LazyBuffer, **kw) -> LazyBuffer:
        """The result, built from the inputs' lazy buffers."""
        raise NotImplementedError

    def backward(self, grad: LazyBuffer):
        """The gradients of the inputs (None for those that need none) given the output's gradient."""
        raise NotImplementedError


def _const(like: LazyBuffer, v) -> LazyBuffer:
    return LazyBuffer.const(v, like.dtype, like.device, like.shape)


# ---- unary ------------------------------------------------------------------------------------------------
class Neg(Function):
    def forward(self, x):
        return x.alu(Ops.NEG)

    def backward(self, g):
        return g.alu(Ops.NEG)


class Exp2(Function):
    def forward(self, x):
        self.ret = x.alu(Ops.EXP2)
        return self.ret

    def backward(self, g):
        return g.alu(Ops.MUL, self.ret).alu(Ops.MUL, _const(g, LN2))


class Log2(Function):
    def forward(self, x):
        self.x = x
        return x.alu(Ops.LOG2)

    def backward(self, g):
        return g.alu(Ops.FDIV, self.x.alu(Ops.MUL, _const(self.x, LN2)))


class Sin(Function):
    def forward(self, x):
        self.x = x
        return x.alu(Ops.SIN)

    def backward(self, g):
        cos = _const(self.x, math.pi / 2).alu(Ops.SUB, self.x).alu(Ops.SIN)
        return g.alu(Ops.MUL, cos)


class Sqrt(Function):
    def forward(self, x):
        self.ret = x.alu(Ops.SQRT)
        return self.ret

    def backward(self, g):
        return g.alu(Ops.FDIV, self.ret.alu(Ops.MUL, _const(self.ret, 2)))


class Cast(Function):
    def forward(self, x, dtype, bitcast=False):
        self.src, self.bitcast = x.dtype, bitcast
        return x.cast(dtype, bitcast)

    def backward(self, g):
        return None if self.bitcast else g.cast(self.src)


class NoGrad(Function):
    """An op with no gradient (comparisons, integer and bitwise ops, trunc)."""

    def forward(self, *xs, op=None, dtype=None):
        return xs[0].alu(op, *xs[1:], dtype=dtype)

    def backward(self, g):
        return (None,) * len(self.needs_input_grad)


# ---- binary -----------------------------------------------------------------------------------------------
class Add(Function):
    def forward(self, a, b):
        return a.alu(Ops.ADD, b)

    def backward(self, g):
        return g, g


class Sub(Function):
    def forward(self, a, b):
        return a.alu(Ops.SUB, b)

    def backward(self, g):
        return g, g.alu(Ops.NEG)


class Mul(Function):
    def forward(self, a, b):
        self.a, self.b = a, b
        return a.alu(Ops.MUL, b)

    def backward(self, g):
        return (g.alu(Ops.MUL, self.b) if self.needs_input_grad[0] else None,
                g.alu(Ops.MUL, self.a) if self.needs_input_grad[1] else None)


class Div(Function):
    def forward(self, a, b):
        self.a, self.b = a, b
        return a.alu(Ops.FDIV, b)

    def backward(self, g):
        ga = g.alu(Ops.FDIV, self.b) if self.needs_input_grad[0] else None
        gb = None
        if self.needs_input_grad[1]:
            gb = g.alu(Ops.MUL, self.a).alu(Ops.FDIV, self.b.alu(Ops.MUL, self.b)).alu(Ops.NEG)
        return ga, gb


class FloatMod(Function):
    """a mod b with b's sign, as NumPy: r = a - floor(a/b)*b in one fused multiply-add (exact when the quotient
    is right), then corrected by b when the rounded quotient was off by one."""

    def forward(self, a, b):
        bool_ = dtypes.bool
        q = a.alu(Ops.FDIV, b)
        t = q.alu(Ops.TRUNC)
        self.floor = q.alu(Ops.CMPLT, t, dtype=bool_).alu(Ops.WHERE, t.alu(Ops.SUB, _const(t, 1)), t, dtype=t.dtype)
        r = self.floor.alu(Ops.NEG).alu(Ops.MULACC, b, a)
        zero = _const(r, 0)
        b_neg = b.alu(Ops.CMPLT, zero, dtype=bool_)
        wrong_sign = r.alu(Ops.CMPNE, zero, dtype=bool_).alu(
            Ops.AND, r.alu(Ops.CMPLT, zero, dtype=bool_).alu(Ops.XOR, b_neg, dtype=bool_), dtype=bool_)
        r = wrong_sign.alu(Ops.WHERE, r.alu(Ops.ADD, b), r, dtype=r.dtype)
        too_big = b_neg.alu(Ops.WHERE, b.alu(Ops.CMPLT, r, dtype=bool_).alu(Ops.NOT, dtype=bool_),
                            r.alu(Ops.CMPLT, b, dtype=bool_).alu(Ops.NOT, dtype=bool_), dtype=bool_)
        return too_big.alu(Ops.WHERE, r.alu(Ops.SUB, b), r, dtype=r.dtype)

    def backward(self, g):
        return g, g.alu(Ops.MUL, self.floor).alu(Ops.NEG)


class Maximum(Function):
    """max(a, b); at ties each side gets half the gradient."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a.alu(Ops.MAX, b)

    def backward(self, g):
        gt = self.b.alu(Ops.CMPLT, self.a, dtype=dtypes.bool).cast(g.dtype)
        eq = self.a.alu(Ops.CMPEQ, self.b, dtype=dtypes.bool).cast(g.dtype).alu(Ops.MUL, _const(g, 0.5))
        wa = gt.alu(Ops.ADD, eq)
        lt = self.a.alu(Ops.CMPLT, self.b, dtype=dtypes.bool).cast(g.dtype)
        wb = lt.alu(Ops.ADD, eq)
        return g.alu(Ops.MUL, wa), g.alu(Ops.MUL, wb)


class Where(Function):
    def forward(self, c, a, b):
        self.c = c
        return c.alu(Ops.WHERE, a, b, dtype=a.dtype)

    def backward(self, g):
        zero = _const(g, 0)
        return (None, self.c.alu(Ops.WHERE, g, zero, dtype=g.dtype) if self.needs_input_grad[1] else None,
                self.c.alu(Ops.WHERE, zero, g, dtype=g.dtype) if self.needs_input_grad[2] else None)


# ---- reductions --------------------------------------------------------------------------------------------
class Sum(Function):
    def forward(self, x, axes):
        self.shape = x.shape
        return x.reduce(Ops.ADD, axes)

    def backward(self, g):
        return g.expand(self.shape)


class Max(Function):
    """The maximum; its gradient is shared equally by the elements equal to it."""

    def forward(self, x, axes):
        self.x, self.axes = x, axes
        self.ret = x.reduce(Ops.MAX, axes)
        return self.ret

    def backward(self, g):
        hit = self.x.alu(Ops.CMPEQ, self.ret.expand(self.x.shape), dtype=dtypes.bool).cast(g.dtype)
        count = hit.reduce(Ops.ADD, self.axes).expand(self.x.shape)
        return hit.alu(Ops.FDIV, count).alu(Ops.MUL, g.expand(self.x.shape))


class Prod(Function):
    """The product; gradient prod / x (inputs must be nonzero for it)."""

    def forward(self, x, axes):
        self.x = x
        self.ret = x.reduce(Ops.MUL, axes)
        return self.ret

    def backward(self, g):
        return g.expand(self.x.shape).alu(Ops.MUL, self.ret.expand(self.x.shape)).alu(Ops.FDIV, self.x)


# ---- movement ----------------------------------------------------------------------------------------------
class Reshape(Function):
    def forward(self, x, shape):
        self.shape = x.shape
        return x.reshape(shape)

    def backward(self, g):
        return g.reshape(self.shape)


class Permute(Function):
    def forward(self, x, order):
        self.inverse = tuple(sorted(range(len(order)), key=lambda i: order[i]))
        return x.permute(order)

    def backward(self, g):
        return g.permute(self.inverse)


class Expand(Function):
    def forward(self, x, shape):
        self.axes = tuple(i for i, (a, b) in enumerate(zip(x.shape, shape, strict=True)) if a != b)
        return x.expand(shape)

    def backward(self, g):
        return g.reduce(Ops.ADD, self.axes)


class Pad(Function):
    def forward(self, x, pads):
        self.bounds = tuple((a, a + s) for s, (a, _) in zip(x.shape, pads, strict=True))
        return x.pad(pads)

    def backward(self, g):
        return g.shrink(self.bounds)


class Shrink(Function):
    def forward(self, x, bounds):
        self.pads = tuple((lo, s - hi) for s, (lo, hi) in zip(x.shape, bounds, strict=True))
        return x.shrink(bounds)

    def backward(self, g):
        return g.pad(self.pads)


class Flip(Function):
    def forward(self, x, axes):
        self.axes = axes
        return x.flip(axes)

    def backward(self, g):
        return g.flip(self.axes)


class Contiguous(Function):
    def forward(self, x):
        return x.contiguous()

    def backward(self, g):
        return g
