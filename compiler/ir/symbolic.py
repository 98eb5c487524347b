"""Simplification rules: constant folding, algebraic identities, and index arithmetic with value ranges
(x // c and x % c of sums, comparisons of scaled sums), so that views lowered to div/mod chains come out as
the plain multiply-adds a programmer would write.

Integer rules assume nothing about overflow except where value ranges show the operands stay in range
(compiler.ir.ranges widens any interval that could wrap to the whole type)."""

from __future__ import annotations

import math

from compiler.dtypes import DType
from compiler.ir.fold import exec_alu
from compiler.ir.ops import ALU, COMMUTATIVE, Ops, UOp
from compiler.ir.ranges import vmax, vmin
from compiler.ir.rewrite import Rules

Linear = tuple[dict[UOp, int], int]


def _is_int(u: UOp) -> bool:
    return isinstance(u.dtype, DType) and u.dtype.is_int


def _c(u: UOp):
    return u.arg if u.op is Ops.CONST else None


def linear(u: UOp) -> Linear:
    """u as sum(coefficient * term) + constant, looking through ADD, SUB, NEG and MUL by constants (ints)."""
    if u.op is Ops.CONST:
        return {}, u.arg
    if u.op in (Ops.ADD, Ops.SUB):
        (ta, ca), (tb, cb) = linear(u.src[0]), linear(u.src[1])
        sign = 1 if u.op is Ops.ADD else -1
        terms = dict(ta)
        for t, k in tb.items():
            terms[t] = terms.get(t, 0) + sign * k
        return {t: k for t, k in terms.items() if k}, ca + sign * cb
    if u.op is Ops.NEG:
        t, c = linear(u.src[0])
        return {x: -k for x, k in t.items()}, -c
    if u.op is Ops.MUL and u.src[1].op is Ops.CONST:
        t, c = linear(u.src[0])
        k = u.src[1].arg
        return ({x: v * k for x, v in t.items() if v * k}, c * k)
    return {u: 1}, 0


def build(terms: dict[UOp, int], const: int, dtype: DType) -> UOp:
    """The node for sum(k * t) + const, terms in a deterministic order (larger coefficients first)."""
    out = None
    for t, k in sorted(terms.items(), key=lambda tk: (-abs(tk[1]), tk[0]._hash)):
        x = t if k == 1 else UOp(Ops.MUL, dtype, (t, UOp.const(dtype, k)))
        out = x if out is None else UOp(Ops.ADD, dtype, (out, x))
    if out is None:
        return UOp.const(dtype, const)
    return out if const == 0 else UOp(Ops.ADD, dtype, (out, UOp.const(dtype, const)))


def _span(terms: dict[UOp, int], const: int) -> tuple[int, int]:
    lo = hi = const
    for t, k in terms.items():
        a, b = vmin(t) * k, vmax(t) * k
        lo, hi = lo + min(a, b), hi + max(a, b)
    return lo, hi


def _fits(u: UOp, lo: int, hi: int) -> bool:
    return u.dtype.min <= lo and hi <= u.dtype.max


# ---- constant folding and identities ---------------------------------------------------------------------
def fold_constants(u: UOp) -> UOp | None:
    """An ALU op or cast of constants becomes a constant (exact ops only: see compiler.ir.fold)."""
    if not all(s.op is Ops.CONST for s in u.src) or not u.src:
        return None
    r = exec_alu(u.op, u.dtype, [s.arg for s in u.src], u.src[0].dtype)
    return None if r is None else UOp.const(u.dtype, r)


def fold_range(u: UOp) -> UOp | None:
    """An integer or bool node whose value range is one value becomes that constant."""
    if u.op in (Ops.CONST, Ops.DEFINE_ACC, Ops.ASSIGN, Ops.AFTER, Ops.LOAD, Ops.RANGE, Ops.SPECIAL):
        return None
    if isinstance(u.dtype, DType) and not u.dtype.is_float and vmin(u) == vmax(u):
        return UOp.const(u.dtype, vmin(u))
    return None


def const_last(u: UOp) -> UOp | None:
    """Commutative ops keep a constant operand second."""
    if len(u.src) == 2 and u.src[0].op is Ops.CONST and u.src[1].op is not Ops.CONST:
        return u.replace(src=(u.src[1], u.src[0]))
    return None


def identities(u: UOp) -> UOp | None:  # noqa: C901 - a flat table of small identities
    """x+0, x*1, x*0 (ints), x//1, x%1, x-x, double negation, WHERE with a constant or equal branches..."""
    op, s = u.op, u.src
    b = _c(s[1]) if len(s) > 1 else None
    integer = _is_int(u)
    if op is Ops.ADD and b == 0 and integer:
        return s[0]
    if op is Ops.SUB and integer and (b == 0 or s[0] is s[1]):
        return s[0] if b == 0 else UOp.const(u.dtype, 0)
    if op is Ops.MUL and b == 1:
        return s[0]
    if op is Ops.MUL and b == 0 and integer:
        return s[1]
    if op is Ops.IDIV and b == 1:
        return s[0]
    if op is Ops.MOD and b == 1:
        return UOp.const(u.dtype, 0)
    if op in (Ops.NEG, Ops.NOT) and s[0].op is op:
        return s[0].src[0]
    if op in (Ops.MAX, Ops.MIN) and s[0] is s[1]:
        return s[0]
    if op is Ops.WHERE:
        if s[0].op is Ops.CONST:
            return s[1] if s[0].arg else s[2]
        if s[1] is s[2]:
            return s[1]
        if s[2].op is Ops.CONST and s[2].arg == 0 and s[1].op is Ops.LOAD and len(s[1].src) == 3 and \
                s[1].src[2] is s[0] and not (s[2].dtype.is_float and math.copysign(1, s[2].arg) < 0):
            return s[1]  # a load gated by the same condition already gives 0 where it is false
    if op in (Ops.AND, Ops.OR) and u.dtype.kind == "b":
        if s[0] is s[1]:
            return s[0]
        if b is not None:
            return (s[0] if b else s[1]) if op is Ops.AND else (s[1] if b else s[0])
    if op is Ops.CAST and s[0].op is Ops.CAST and _is_int(u) and _is_int(s[0]) and _is_int(s[0].src[0]):
        inner = s[0].src[0]
        if _fits(s[0], vmin(inner), vmax(inner)):  # the middle type held every value: one conversion
            return inner.cast(u.dtype)
    return None


# ---- index arithmetic -------------------------------------------------------------------------------------
def combine_sums(u: UOp) -> UOp | None:
    """Integer sums (ADD/SUB/NEG/MUL by constants) to one canonical sum when that merges terms or constants."""
    if not _is_int(u):
        return None
    if u.op is Ops.MUL and u.src[1].op is Ops.CONST and u.src[0].op not in (Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG):
        return None
    terms, const = linear(u)
    lo, hi = _span(terms, const)
    if not _fits(u, lo, hi) or any(not _fits(u, *_span({t: k}, 0)) for t, k in terms.items()):
        return None
    new = build(terms, const, u.dtype)
    return None if new is u or _size(new) >= _size(u) else new


def _size(u: UOp) -> int:
    n, stack = 0, [u]
    while stack and n < 64:
        x = stack.pop()
        if x.op in (Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG):
            n += 1
            stack.extend(x.src)
    return n


def div_mod(u: UOp) -> UOp | None:
    """x // c and x % c for x >= 0, c > 0: terms whose coefficients c divides leave the remainder alone, and a
    remainder whose range sits in one multiple of c folds (the div/mod chains of reshaped views)."""
    x, d = u.src
    c = _c(d)
    if not _is_int(u) or c is None or c <= 0 or vmin(x) < 0:
        return None
    if u.op is Ops.MOD and vmax(x) < c:
        return x
    if x.op is u.op and x.src[1].op is Ops.CONST and x.src[1].arg > 0 and vmin(x.src[0]) >= 0:
        c2 = x.src[1].arg
        if u.op is Ops.IDIV:
            return x.src[0] // (c * c2) if _fits(u, 0, c * c2) else None
        if c2 % c == 0:
            return x.src[0] % c
    terms, const = linear(x)
    if any(vmin(t) < 0 for t in terms) or not terms:
        return None
    g = math.gcd(c, const, *terms.values())
    if g > 1 and u.op is Ops.IDIV:
        return build({t: k // g for t, k in terms.items()}, const // g, u.dtype) // (c // g)
    quot = {t: k // c for t, k in terms.items() if k // c}  # x = c * (quot + qc) + (rem + rc), rem + rc >= 0
    rem = {t: k % c for t, k in terms.items() if k % c}
    rc = const % c
    qc = const // c
    lo, hi = _span(rem, rc)
    if lo < 0:
        return None
    if lo // c == hi // c:
        k = lo // c
        if u.op is Ops.IDIV:
            return build(quot, qc + k, u.dtype)
        return build(rem, rc - k * c, u.dtype)
    if u.op is Ops.MOD and (quot or any(terms[t] != k for t, k in rem.items()) or rc != const):
        return build(rem, rc, u.dtype) % c
    if u.op is Ops.IDIV and quot and _fits(u, *_span(rem, rc)):
        return build(quot, qc, u.dtype) + build(rem, rc, u.dtype) // c
    return None


def compare(u: UOp) -> UOp | None:
    """k*y + r < c with 0 <= r < k and k | c becomes y < c/k (masks of padded views, loop bounds)."""
    x, cu = u.src
    c = _c(cu)
    if c is None or not _is_int(x):
        return None
    terms, const = linear(x)
    if not terms or any(vmin(t) < 0 for t in terms):
        return None
    for k in sorted({abs(v) for v in terms.values() if v > 1}, reverse=True):
        big = {t: v // k for t, v in terms.items() if v % k == 0}
        rest = {t: v for t, v in terms.items() if v % k}
        lo, hi = _span(rest, const)
        if big and 0 <= lo and hi < k and c % k == 0:
            return build(big, 0, x.dtype).lt(c // k)
    return None


def drop_true_gate(u: UOp) -> UOp | None:
    """A LOAD or STORE whose gate is the constant True has no gate."""
    n = 3 if u.op is Ops.LOAD else 4
    if len(u.src) == n and u.src[-1].op is Ops.CONST and u.src[-1].arg:
        return u.replace(src=u.src[:-1])
    return None


SYMBOLIC = Rules([
    (ALU | {Ops.CAST}, fold_constants),
    (ALU, fold_range),
    (COMMUTATIVE, const_last),
    (ALU | {Ops.CAST}, identities),
    ((Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG), combine_sums),
    ((Ops.IDIV, Ops.MOD), div_mod),
    (Ops.CMPLT, compare),
    ((Ops.LOAD, Ops.STORE), drop_true_gate),
])
