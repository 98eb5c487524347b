"""Loop unrolling of a linearized kernel, for backends that do their own code generation (the LLVM backend leaves
this to LLVM's unroller).

An innermost loop whose only effects are accumulator updates (ASSIGN; no store, barrier or inner loop) and
whose trips times body size is within BUDGET uops is unrolled fully: the body is repeated with the loop
variable replaced by 0, 1, ..., and each copy reads the accumulator values the previous copy computed, so the
ASSIGNs collapse to one per accumulator after the last copy. A bigger loop whose trip count has a power-of-two
factor U (2..8) with U times its body within BUDGET is unrolled by U: a loop over ro with n/U trips whose body
is U copies at ro*U + k (the shorter loop is planned again: its body keeps doubling while it stays within
BUDGET). Unrolled indices fold (simplifier) to base + constant, which the backends turn into
address offsets and wide loads, and the loop overhead goes. Enclosing loops that become innermost and small are
unrolled in turn. The result is equivalent for every loop value, so the index proof of the original kernel
holds for it.
"""

from __future__ import annotations

from compiler.dtypes import dtypes
from compiler.ir.linearize import LinearKernel, linearize, loops_of
from compiler.ir.ops import Ops, UOp
from compiler.ir.rewrite import Rules, rewrite, substitute
from compiler.ir.symbolic import SYMBOLIC

BUDGET = 256
MAX_FACTOR = 8


def _c(v: int) -> UOp:
    return UOp.const(dtypes.int32, v)


def _plan(order: list[UOp]) -> tuple[UOp, UOp, int] | None:
    """An innermost loop to unroll: (RANGE, ENDRANGE, factor; factor == trips means fully)."""
    scope = loops_of(order)
    body: dict[UOp, list[UOp]] = {}
    for u in order:
        for r in scope[u]:
            if u is not r:
                body.setdefault(r, []).append(u)
    ends = {u.src[0]: u for u in order if u.op is Ops.ENDRANGE}
    for r, e in ends.items():
        inner = body.get(r, [])
        if any(x.op in (Ops.RANGE, Ops.STORE, Ops.BARRIER) for x in inner) or r.src[0].op is not Ops.CONST:
            continue
        if not all(a.op is Ops.ASSIGN for a in e.src[1:]):
            continue
        size = max(1, sum(1 for x in inner if x.op not in (Ops.CONST, Ops.ENDRANGE)))
        n = int(r.src[0].arg)
        if n * size <= BUDGET:
            return r, e, n
        factor = 1
        while factor * 2 <= MAX_FACTOR and n % (factor * 2) == 0 and factor * 2 * size <= BUDGET:
            factor *= 2
        if factor > 1:
            return r, e, factor
    return None


def _unrolled(r: UOp, e: UOp, factor: int) -> tuple[UOp, ...]:
    """What replaces ENDRANGE e: the final ASSIGNs (fully unrolled) or the ENDRANGE of the shorter loop."""
    n = int(r.src[0].arg)
    assigns = list(e.src[1:])
    accs = [a.src[0] for a in assigns]
    full = factor == n
    ro = None if full else UOp(Ops.RANGE, r.dtype, (_c(n // factor), *r.src[1:]), f"{r.arg}x{factor}")
    cur = {acc: acc for acc in accs}
    for k in range(factor):
        at = _c(k) if full else (ro * _c(factor) + _c(k) if k else ro * _c(factor))
        mapping = {r: at} | {acc: v for acc, v in cur.items() if v is not acc}
        cur = {acc: substitute(a.src[1], mapping) for acc, a in zip(accs, assigns, strict=True)}
    new = tuple(UOp(Ops.ASSIGN, a.dtype, (acc, cur[acc])) for acc, a in zip(accs, assigns, strict=True))
    return new if full else (UOp(Ops.ENDRANGE, e.dtype, (ro, *new)),)


def _replace(sink: UOp, old: UOp, new: tuple[UOp, ...]) -> UOp:
    """sink with `old` replaced by the nodes `new` wherever it is a source (one source becomes len(new))."""
    memo: dict[UOp, UOp] = {}
    for u in sink.toposort():
        if u is old:
            continue
        src: list[UOp] = []
        for s in u.src:
            src.extend(new) if s is old else src.append(memo.get(s, s))
        memo[u] = u if len(src) == len(u.src) and all(a is b for a, b in zip(src, u.src, strict=True)) else \
            u.replace(src=tuple(src))
    return memo[sink]


def unroll(k: LinearKernel, rules: Rules = SYMBOLIC) -> LinearKernel:
    """k with its small innermost loops unrolled (module docstring); rules: the simplifier to fold the copies'
    index arithmetic with."""
    if not any(u.op is Ops.RANGE for u in k.uops):
        return k
    sink, order, changed = k.uops[-1], k.uops, False
    for _ in range(16):
        plan = _plan(order)
        if plan is None:
            break
        r, e, factor = plan
        sink = rewrite(_replace(sink, e, _unrolled(r, e, factor)), rules)
        order = sink.toposort()
        changed = True
    if not changed:
        return k
    out = linearize(sink, k.geometry, k.params)
    out.name = k.name
    return out
