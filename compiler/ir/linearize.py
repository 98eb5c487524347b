"""The linearizer: orders a lowered kernel's graph into the list backends read.

A node sits inside the loops its sources sit in (a RANGE opens its own loop, an ENDRANGE closes one). The
order is a topological sort that emits everything it can in the current loop nest before opening a loop,
and closes the innermost loop as soon as its ENDRANGE is ready, so loop-invariant work is hoisted and
loops nest as the lowering built them. Ties break by a structural key, so the order (and the kernel cache
key) depends only on the graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.dtypes import PtrDType
from compiler.ir.lower import Geometry
from compiler.ir.ops import Ops, UOp


@dataclass
class LinearKernel:
    """What a backend compiles: the ordered uops, the buffer parameters and the launch geometry."""

    name: str
    uops: list[UOp]
    params: list[PtrDType]
    geometry: Geometry

    @property
    def lds_bytes(self) -> int:
        """Bytes of LDS the kernel's arrays need."""
        return sum(u.dtype.size * u.dtype.itemsize for u in self.uops if u.op is Ops.LDS)


def loops_of(order: list[UOp]) -> dict[UOp, frozenset]:
    """The loops (RANGE nodes) each node of a topological order sits inside."""
    scope: dict[UOp, frozenset] = {}
    for u in order:
        s = frozenset().union(*(scope[x] for x in u.src))
        if u.op is Ops.RANGE:
            s = s | {u}
        elif u.op is Ops.ENDRANGE:
            s = s - {u.src[0]}
        scope[u] = s
    return scope


def linearize(sink: UOp, geometry: Geometry, params: list[PtrDType] | None = None) -> LinearKernel:
    """The kernel's uops in execution order (module docstring). params: every buffer argument of the kernel
    (those the simplifier left unused too; default: the PARAMs still in the graph)."""
    order = sink.toposort()
    scope = loops_of(order)
    rank = {u: i for i, u in enumerate(order)}  # structural: a DFS from the sink in source order
    users: dict[UOp, list[UOp]] = {u: [] for u in order}
    waiting = {u: len(set(u.src)) for u in order}
    for u in order:
        for s in set(u.src):
            users[s].append(u)
    ready = [u for u in order if waiting[u] == 0]
    out: list[UOp] = []
    stack: list[UOp] = []  # open loops, innermost last
    while ready:
        open_ = set(stack)
        pick = None
        # 1. anything whose loops are open (RANGE and ENDRANGE aside), outermost scope first
        cands = [u for u in ready if u.op not in (Ops.RANGE, Ops.ENDRANGE) and scope[u] <= open_]
        if cands:
            pick = min(cands, key=lambda u: (len(scope[u]), rank[u]))
        # 2. close the innermost loop
        if pick is None:
            pick = next((u for u in ready if u.op is Ops.ENDRANGE and stack and u.src[0] is stack[-1]), None)
        # 3. open a loop whose outer loops are open, the most deeply nested first
        if pick is None:
            cands = [u for u in ready if u.op is Ops.RANGE and scope[u] - {u} <= open_]
            pick = min(cands, key=lambda u: (-len(scope[u]), rank[u])) if cands else None
        if pick is None:
            raise AssertionError(f"linearize: no node can be placed (open loops {[r.arg for r in stack]})")
        ready.remove(pick)
        out.append(pick)
        if pick.op is Ops.RANGE:
            stack.append(pick)
        elif pick.op is Ops.ENDRANGE:
            stack.pop()
        for x in users[pick]:
            waiting[x] -= 1
            if waiting[x] == 0:
                ready.append(x)
    assert not stack, "linearize: a loop was never closed"
    if params is None:
        params = [p.dtype for p in sorted((u for u in out if u.op is Ops.PARAM), key=lambda u: u.arg)]
    return LinearKernel(sink.arg or geometry.name, out, params, geometry)
