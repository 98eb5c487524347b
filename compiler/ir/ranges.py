"""Value ranges of IR nodes: the [vmin, vmax] interval every integer or bool node can take, from its sources.

The index simplifier uses them to fold (x // c, x % c, comparisons) and the proof uses them to check that no
index intermediate wraps around its integer type. An interval that would leave its type's range becomes the
whole range (the arithmetic wraps, so nothing is known). Floats get (-inf, inf).
"""

from __future__ import annotations

from compiler.dtypes import DType
from compiler.ir.ops import Ops, UOp


def tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero (the IR's IDIV), with x // 0 == 0."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def tmod(a: int, b: int) -> int:
    """Remainder with the dividend's sign (the IR's MOD), with x % 0 == 0."""
    return 0 if b == 0 else a - b * tdiv(a, b)


def _whole(dt) -> tuple:
    if not isinstance(dt, DType):
        return (0, 0)
    if dt.kind == "b":
        return (False, True)
    return (dt.min, dt.max)


def value_range(u: UOp) -> tuple:
    """(vmin, vmax) of u (see module docstring)."""
    dt = u.dtype
    if not isinstance(dt, DType) or dt.is_float:
        return (u.arg, u.arg) if u.op is Ops.CONST and isinstance(dt, DType) else _whole(dt)
    lo, hi = _range(u)
    if dt.kind == "b":
        return (bool(lo), bool(hi))
    if lo < dt.min or hi > dt.max:
        return (dt.min, dt.max)
    return (lo, hi)


def _range(u: UOp) -> tuple:  # noqa: C901 - one case per op reads best as a flat table
    op, s = u.op, u.src
    if op is Ops.CONST:
        return (u.arg, u.arg)
    if op is Ops.SPECIAL:
        return (0, u.arg[2] - 1)
    if op is Ops.RANGE:
        return (0, s[0].vmax - 1)
    if op in (Ops.ASSIGN, Ops.AFTER):
        return (s[-1 if op is Ops.ASSIGN else 0].vmin, s[-1 if op is Ops.ASSIGN else 0].vmax)
    if op is Ops.WHERE:
        c = s[0]
        if c.vmin == c.vmax:
            return (s[1].vmin, s[1].vmax) if c.vmin else (s[2].vmin, s[2].vmax)
        return (min(s[1].vmin, s[2].vmin), max(s[1].vmax, s[2].vmax))
    if op is Ops.CAST:
        src = s[0]
        if isinstance(src.dtype, DType) and not src.dtype.is_float:
            lo, hi = int(src.vmin), int(src.vmax)
            if u.dtype.kind == "b":  # x != 0: true unless 0 is possible, false only if x is always 0
                return (not lo <= 0 <= hi, lo != 0 or hi != 0)
            return (lo, hi)
        return _whole(u.dtype)
    if op not in _ARITH:
        return _whole(u.dtype)
    return _ARITH[op](*s)


def _mul(a, b):
    c = (a.vmin * b.vmin, a.vmin * b.vmax, a.vmax * b.vmin, a.vmax * b.vmax)
    return (min(c), max(c))


def _idiv(a, b):
    if b.vmin == b.vmax and b.vmin != 0:
        q = (tdiv(a.vmin, b.vmin), tdiv(a.vmax, b.vmin))
        return (min(q), max(q))
    if b.vmin > 0 or b.vmax < 0:
        c = [tdiv(x, y) for x in (a.vmin, a.vmax) for y in (b.vmin, b.vmax)]
        return (min(c), max(c))
    m = max(abs(a.vmin), abs(a.vmax))
    return (-m, m)


def _mod(a, b):
    if b.vmin == b.vmax and b.vmin != 0:
        c = abs(b.vmin)
        if a.vmin >= 0:
            return (a.vmin, a.vmax) if a.vmax < c else (0, c - 1)
        if a.vmax <= 0:
            return (a.vmin, a.vmax) if a.vmin > -c else (-(c - 1), 0)
        return (max(a.vmin, -(c - 1)), min(a.vmax, c - 1))
    m = max(abs(b.vmin), abs(b.vmax)) - 1
    if a.vmin >= 0:
        return (0, max(0, min(a.vmax, m)))
    return (-max(m, 0), max(m, 0))


def _cmplt(a, b):
    if a.vmax < b.vmin:
        return (True, True)
    if a.vmin >= b.vmax:
        return (False, False)
    return (False, True)


def _cmpeq(a, b):
    if a.vmin == a.vmax == b.vmin == b.vmax:
        return (True, True)
    if a.vmax < b.vmin or b.vmax < a.vmin:
        return (False, False)
    return (False, True)


def _cmpne(a, b):
    lo, hi = _cmpeq(a, b)
    return (not hi, not lo)


def _and(a, b):
    if a.dtype.kind == "b":
        return (a.vmin and b.vmin, a.vmax and b.vmax)
    if a.vmin >= 0 and b.vmin >= 0:
        return (0, min(a.vmax, b.vmax))
    return _whole(a.dtype)


def _or(a, b):
    if a.dtype.kind == "b":
        return (a.vmin or b.vmin, a.vmax or b.vmax)
    if a.vmin >= 0 and b.vmin >= 0:
        return (max(a.vmin, b.vmin), (1 << max(int(a.vmax), int(b.vmax), 1).bit_length()) - 1)
    return _whole(a.dtype)


def _not(a):
    if a.dtype.kind == "b":
        return (not a.vmax, not a.vmin)
    return (~a.vmax, ~a.vmin) if a.dtype.kind == "i" else _whole(a.dtype)


def _shl(a, b):
    if b.vmin == b.vmax and 0 <= b.vmin < a.dtype.bits:
        return (a.vmin << b.vmin, a.vmax << b.vmin)
    return _whole(a.dtype)


def _shr(a, b):
    if b.vmin == b.vmax and 0 <= b.vmin < a.dtype.bits and a.vmin >= 0:
        return (a.vmin >> b.vmin, a.vmax >> b.vmin)
    return _whole(a.dtype)


_ARITH = {
    Ops.ADD: lambda a, b: (a.vmin + b.vmin, a.vmax + b.vmax),
    Ops.SUB: lambda a, b: (a.vmin - b.vmax, a.vmax - b.vmin),
    Ops.MUL: _mul,
    Ops.NEG: lambda a: (-a.vmax, -a.vmin),
    Ops.IDIV: _idiv,
    Ops.MOD: _mod,
    Ops.MAX: lambda a, b: (max(a.vmin, b.vmin), max(a.vmax, b.vmax)),
    Ops.MIN: lambda a, b: (min(a.vmin, b.vmin), min(a.vmax, b.vmax)),
    Ops.CMPLT: _cmplt,
    Ops.CMPEQ: _cmpeq,
    Ops.CMPNE: _cmpne,
    Ops.AND: _and,
    Ops.OR: _or,
    Ops.NOT: _not,
    Ops.SHL: _shl,
    Ops.SHR: _shr,
    Ops.MULACC: lambda a, b, c: (lambda m: (m[0] + c.vmin, m[1] + c.vmax))(_mul(a, b)),
}
