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


def vrange(u: UOp) -> tuple:
    """(vmin, vmax) of u (module docstring), computed once per node: kept in the node (UOp.range_memo)."""
    r = u.range_memo
    if r is None:
        r = u.range_memo = value_range(u)
    return r


def vmin(u: UOp):
    """The smallest value u can take (floats and unknowns: the type's range)."""
    return vrange(u)[0]


def vmax(u: UOp):
    """The largest value u can take."""
    return vrange(u)[1]


def value_range(u: UOp) -> tuple:
    """(vmin, vmax) of u from its sources' (see module docstring)."""
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
        return (0, vmax(s[0]) - 1)
    if op in (Ops.ASSIGN, Ops.AFTER):
        return vrange(s[-1 if op is Ops.ASSIGN else 0])
    if op is Ops.WHERE:
        c = s[0]
        if vmin(c) == vmax(c):
            return vrange(s[1]) if vmin(c) else vrange(s[2])
        return (min(vmin(s[1]), vmin(s[2])), max(vmax(s[1]), vmax(s[2])))
    if op is Ops.CAST:
        src = s[0]
        if isinstance(src.dtype, DType) and not src.dtype.is_float:
            lo, hi = int(vmin(src)), int(vmax(src))
            if u.dtype.kind == "b":  # x != 0: true unless 0 is possible, false only if x is always 0
                return (not lo <= 0 <= hi, lo != 0 or hi != 0)
            return (lo, hi)
        return _whole(u.dtype)
    if op not in _ARITH:
        return _whole(u.dtype)
    return _ARITH[op](*s)


def _mul(a, b):
    c = (vmin(a) * vmin(b), vmin(a) * vmax(b), vmax(a) * vmin(b), vmax(a) * vmax(b))
    return (min(c), max(c))


def _idiv(a, b):
    if vmin(b) == vmax(b) and vmin(b) != 0:
        q = (tdiv(vmin(a), vmin(b)), tdiv(vmax(a), vmin(b)))
        return (min(q), max(q))
    if vmin(b) > 0 or vmax(b) < 0:
        c = [tdiv(x, y) for x in vrange(a) for y in vrange(b)]
        return (min(c), max(c))
    m = max(abs(vmin(a)), abs(vmax(a)))
    return (-m, m)


def _mod(a, b):
    if vmin(b) == vmax(b) and vmin(b) != 0:
        c = abs(vmin(b))
        if vmin(a) >= 0:
            return vrange(a) if vmax(a) < c else (0, c - 1)
        if vmax(a) <= 0:
            return vrange(a) if vmin(a) > -c else (-(c - 1), 0)
        return (max(vmin(a), -(c - 1)), min(vmax(a), c - 1))
    m = max(abs(vmin(b)), abs(vmax(b))) - 1
    if vmin(a) >= 0:
        return (0, max(0, min(vmax(a), m)))
    return (-max(m, 0), max(m, 0))


def _cmplt(a, b):
    if vmax(a) < vmin(b):
        return (True, True)
    if vmin(a) >= vmax(b):
        return (False, False)
    return (False, True)


def _cmpeq(a, b):
    if vmin(a) == vmax(a) == vmin(b) == vmax(b):
        return (True, True)
    if vmax(a) < vmin(b) or vmax(b) < vmin(a):
        return (False, False)
    return (False, True)


def _cmpne(a, b):
    lo, hi = _cmpeq(a, b)
    return (not hi, not lo)


def _and(a, b):
    if a.dtype.kind == "b":
        return (vmin(a) and vmin(b), vmax(a) and vmax(b))
    if vmin(a) >= 0 and vmin(b) >= 0:
        return (0, min(vmax(a), vmax(b)))
    return _whole(a.dtype)


def _or(a, b):
    if a.dtype.kind == "b":
        return (vmin(a) or vmin(b), vmax(a) or vmax(b))
    if vmin(a) >= 0 and vmin(b) >= 0:
        return (max(vmin(a), vmin(b)), (1 << max(int(vmax(a)), int(vmax(b)), 1).bit_length()) - 1)
    return _whole(a.dtype)


def _not(a):
    if a.dtype.kind == "b":
        return (not vmax(a), not vmin(a))
    return (~vmax(a), ~vmin(a)) if a.dtype.kind == "i" else _whole(a.dtype)


def _shl(a, b):
    if vmin(b) == vmax(b) and 0 <= vmin(b) < a.dtype.bits:
        return (vmin(a) << vmin(b), vmax(a) << vmin(b))
    return _whole(a.dtype)


def _shr(a, b):
    if vmin(b) == vmax(b) and 0 <= vmin(b) < a.dtype.bits and vmin(a) >= 0:
        return (vmin(a) >> vmin(b), vmax(a) >> vmin(b))
    return _whole(a.dtype)


_ARITH = {
    Ops.ADD: lambda a, b: (vmin(a) + vmin(b), vmax(a) + vmax(b)),
    Ops.SUB: lambda a, b: (vmin(a) - vmax(b), vmax(a) - vmin(b)),
    Ops.MUL: _mul,
    Ops.NEG: lambda a: (-vmax(a), -vmin(a)),
    Ops.IDIV: _idiv,
    Ops.MOD: _mod,
    Ops.MAX: lambda a, b: (max(vmin(a), vmin(b)), max(vmax(a), vmax(b))),
    Ops.MIN: lambda a, b: (min(vmin(a), vmin(b)), min(vmax(a), vmax(b))),
    Ops.CMPLT: _cmplt,
    Ops.CMPEQ: _cmpeq,
    Ops.CMPNE: _cmpne,
    Ops.AND: _and,
    Ops.OR: _or,
    Ops.NOT: _not,
    Ops.SHL: _shl,
    Ops.SHR: _shr,
    Ops.MULACC: lambda a, b, c: (lambda m: (m[0] + vmin(c), m[1] + vmax(c)))(_mul(a, b)),
}
