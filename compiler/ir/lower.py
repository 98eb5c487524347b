"""Lowering a kernel AST to index arithmetic: the launch geometry, views to indices, reductions to loops.

The kernel's output shape goes onto the grid (the last dimension on x; more than three dimensions fold the
leading ones into z); each output element's index is built from SPECIAL ids. A view's index is its strides
and offset applied to that index, its masks a bool `valid` that gates the load; stacked views unflatten
the flat offset with // and %. Reductions become an accumulator (DEFINE_ACC, ASSIGN) in RANGE loops:

- serial: each work-item loops over the reduced axes (many outputs);
- group: a workgroup of 16-64 work-items splits the reduced elements, each accumulates a strided part,
  and the partial results are combined in LDS by a tree (log2 steps, a barrier each) (outputs up to a
  few thousand, reductions of 16 or more: fewer sequential instructions than a loop per output);
- tiled (matrix products): a 16x16 workgroup computes a 16x16 output tile; each step of the reduction
  stages, through LDS, the 16x16 tiles of the inputs that one of the two tile dimensions does not index,
  so a work-item loads one element of each per step instead of 16 (compiler.ir.tiling).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from compiler.dtypes import DType, PtrDType, dtypes
from compiler.ir import tiling
from compiler.ir.index import INT, c, unflatten, view_index
from compiler.ir.ops import Ops, UOp

MAX_LOCAL = 256
GROUP_MIN_REDUCE = 16     # the group strategy serves reductions at least this long...
GROUP_MAX_OUTPUTS = 2048  # ...with at most this many outputs (more outputs fill the GPU one loop each)


def group_lanes(n: int) -> int:
    """Work-items sharing a reduction of n elements (a power of two: the LDS tree halves it)."""
    return 16 if n < 64 else 32 if n < 256 else 64


@dataclass(frozen=True)
class Geometry:
    """A kernel's name and launch shape: `grid` counts workgroups (HIP's convention), `block` work-items."""

    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


def reduce_identity(op: Ops, dt: DType):
    """The value a reduction starts from."""
    if op is Ops.ADD:
        return 0
    if op is Ops.MUL:
        return 1
    return dt.min if not dt.is_float else float("-inf")


def combine(op: Ops, acc: UOp, v: UOp) -> UOp:
    """One step of a reduction."""
    return UOp(op, acc.dtype, (acc, v))


class Lowerer:
    """Lowers one kernel AST (see module docstring)."""

    def __init__(self, ast: UOp, features: frozenset[str] = frozenset()):
        self.ast, self.features = ast, features
        self.stores = ast.src  # one STORE per output, all over the same index space
        self.shape = self.stores[0].src[1].arg.shape
        self.reduces = [u for u in ast.toposort() if u.op is Ops.REDUCE]
        self.memo: dict = {}
        self.loops = 0
        self.accs = 0
        self.lds = 0

    # ---- ids --------------------------------------------------------------------------------------------------
    def special(self, kind: str, axis: int, extent: int) -> UOp:
        """A workgroup id or a work-item id (0 when the extent is 1)."""
        return c(0) if extent == 1 else UOp(Ops.SPECIAL, INT, (), (kind, axis, extent))

    def new_range(self, n: int, *after: UOp) -> UOp:
        """A fresh loop variable over [0, n), opened after `after` (outer loops, barriers)."""
        if n == 1:
            return c(0)
        self.loops += 1
        return UOp(Ops.RANGE, INT, (c(n), *after), self.loops - 1)

    def new_acc(self, dt: DType, init) -> UOp:
        """A fresh accumulator register."""
        self.accs += 1
        return UOp(Ops.DEFINE_ACC, dt, (UOp.const(dt, init),), self.accs - 1)

    def new_lds(self, dt: DType, n: int) -> UOp:
        """A fresh LDS array of n elements."""
        self.lds += 1
        return UOp(Ops.LDS, PtrDType(dt, "local", n), (), self.lds - 1)

    # ---- the kernel ----------------------------------------------------------------------------------------
    def run(self) -> tuple[UOp, Geometry]:
        """The lowered kernel (a SINK of STOREs) and its launch geometry."""
        for plan in (tiling.plan_wmma, tiling.plan):
            counters = (self.loops, self.accs, self.lds)
            tiled = plan(self)
            if tiled is not None:
                return tiled
            self.loops, self.accs, self.lds = counters  # a plan that gave up numbers nothing
        out_elems = prod(self.shape)
        if len(self.reduces) == 1 and len(self.stores) == 1 and out_elems <= GROUP_MAX_OUTPUTS and \
                prod(self.reduces[0].arg[2]) // max(out_elems, 1) >= GROUP_MIN_REDUCE:
            return self.run_group()
        idx, gate, grid, block = self.grid_index(self.shape)
        return self.finish(idx, gate, gate, grid, block, "R" if self.reduces else "E")

    def finish(self, idx, gate, store_gate, grid, block, prefix: str, more_idx=()) -> tuple[UOp, Geometry]:
        """The STOREs of every output's value (computed under gate) at idx and each of more_idx (stored under
        store_gate), and the geometry."""
        stores = []
        for at in (idx, *more_idx):
            for st in self.stores:
                value = self.lower(st.src[2], at, gate)
                flat, valid = view_index(st.src[1].arg, at)
                g = valid.logical_and(store_gate)
                stores.append(UOp(Ops.STORE, INT, (st.src[0], flat, value) + (() if _is_true(g) else (g,))))
        dims = "_".join(str(s) for s in self.shape if s != 1) or "1"
        name = f"{prefix}{len(self.stores) if len(self.stores) > 1 else ''}_{dims}"
        if self.reduces:
            name += "_" + "_".join(str(prod(r.arg[2]) // max(prod(self.shape), 1)) for r in self.reduces)
        return UOp(Ops.SINK, INT, tuple(stores), name), Geometry(name, grid, block)

    def grid_index(self, shape: tuple[int, ...], max_local: int = MAX_LOCAL, first_axis: int = 0):
        """Index UOps for every dimension of shape from grid ids, a bounds gate, grid and block sizes."""
        dims = [i for i, s in enumerate(shape) if s != 1]
        groups = [[d] for d in dims]
        n_axes = 3 - first_axis
        if len(groups) > n_axes:  # fold the leading dimensions into one grid axis
            k = len(groups) - n_axes + 1
            groups = [sum(groups[:k], [])] + groups[k:]
        idx = [c(0)] * len(shape)
        gate = UOp.const(dtypes.bool, True)
        grid, block = [1, 1, 1], [1, 1, 1]
        budget = max_local
        for axis, group in enumerate(reversed(groups)):
            axis += first_axis
            size = prod(shape[d] for d in group)
            local = _pick_local(size, budget)
            budget //= local
            n_groups = -(-size // local)
            grid[axis], block[axis] = n_groups, local
            gid, lid = self.special("group", axis, n_groups), self.special("local", axis, local)
            g = lid if n_groups == 1 else gid if local == 1 else gid * local + lid
            if n_groups * local != size:
                gate = gate.logical_and(g.lt(size))
            for d, i in zip(group, unflatten(g, tuple(shape[d] for d in group)), strict=True):
                idx[d] = i
        return tuple(idx), gate, tuple(grid), tuple(block)

    # ---- values -------------------------------------------------------------------------------------------
    def lower(self, u: UOp, idx: tuple[UOp, ...], gate: UOp) -> UOp:
        """The IR computing AST node u at index idx (loads gated by gate)."""
        key = (u, idx, gate)
        if key not in self.memo:
            self.memo[key] = self._lower(u, idx, gate)
        return self.memo[key]

    def _lower(self, u: UOp, idx, gate) -> UOp:
        if u.op is Ops.LOAD:
            buf, view = u.src
            flat, valid = view_index(view.arg, idx)
            g = valid.logical_and(gate)
            return UOp(Ops.LOAD, u.dtype, (buf, flat) + (() if _is_true(g) else (g,)))
        if u.op is Ops.VALID:
            return view_index(u.src[0].arg, idx)[1]
        if u.op is Ops.IOTA:
            return view_index(u.src[0].arg, idx)[0].cast(u.dtype)
        if u.op is Ops.REDUCE:
            return self.reduce_serial(u, idx, gate)
        if u.op is Ops.CONST:
            return u
        return u.replace(src=tuple(self.lower(s, idx, gate) for s in u.src))

    def reduce_serial(self, u: UOp, idx, gate) -> UOp:
        """A reduction as nested loops over its axes in one work-item."""
        op, axes, full = u.arg
        ranges: list[UOp] = []
        new_idx = list(idx)
        for a in axes:
            r = self.new_range(full[a], *[x for x in ranges if x.op is Ops.RANGE])
            ranges.append(r)
            new_idx[a] = r
        acc = self.new_acc(u.dtype, reduce_identity(op, u.dtype))
        v = self.lower(u.src[0], tuple(new_idx), gate)
        end = UOp(Ops.ASSIGN, u.dtype, (acc, combine(op, acc, v)))
        for r in reversed(ranges):
            if r.op is Ops.RANGE:
                end = UOp(Ops.ENDRANGE, INT, (r, end))
        return UOp(Ops.AFTER, u.dtype, (acc, end))

    def run_group(self) -> tuple[UOp, Geometry]:
        """The group strategy (module docstring) for the kernel's one reduction."""
        (red,) = self.reduces
        op, axes, full = red.arg
        idx, gate, grid, block = self.grid_index(self.shape, max_local=1, first_axis=1)
        total = prod(full[a] for a in axes)
        lanes = group_lanes(total)
        lid = self.special("local", 0, lanes)
        block = (lanes, 1, 1)
        step = self.new_range(-(-total // lanes))
        rr = step * lanes + lid
        inside = gate if total % lanes == 0 else gate.logical_and(rr.lt(total))
        new_idx = list(idx)
        for a, i in zip(axes, unflatten(rr, tuple(full[a] for a in axes)), strict=True):
            new_idx[a] = i
        ident = reduce_identity(op, red.dtype)
        acc = self.new_acc(red.dtype, ident)
        v = self.lower(red.src[0], tuple(new_idx), inside)
        if total % lanes:
            v = inside.where(v, UOp.const(red.dtype, ident))
        partial = UOp(Ops.ASSIGN, red.dtype, (acc, combine(op, acc, v)))
        if step.op is Ops.RANGE:
            partial = UOp(Ops.AFTER, red.dtype, (acc, UOp(Ops.ENDRANGE, INT, (step, partial))))
        lds = self.new_lds(red.dtype, lanes)
        barrier = UOp(Ops.BARRIER, INT, (UOp(Ops.STORE, INT, (lds, lid, partial)),))
        half = lanes // 2
        while half:  # a tree: work-item i < half adds element i + half, then everyone waits
            ready = UOp(Ops.AFTER, lds.dtype, (lds, barrier))
            lo = UOp(Ops.LOAD, red.dtype, (ready, lid))
            active = lid.lt(half)
            # the others read their own element (and store nothing): not a gated load, which reads element 0
            # where the gate is off, an element this step stores (the simulated GPU's JIT then cannot run the
            # waves of the group one after the other between barriers: its LDS order check sees a conflict)
            hi = UOp(Ops.LOAD, red.dtype, (ready, active.where(lid + half, lid)))
            store = UOp(Ops.STORE, INT, (lds, lid, combine(op, lo, hi), active))
            barrier = UOp(Ops.BARRIER, INT, (store,))
            half //= 2
        total_v = UOp(Ops.LOAD, red.dtype, (UOp(Ops.AFTER, lds.dtype, (lds, barrier)), c(0)))
        self.memo[(red, idx, gate)] = total_v
        return self.finish(idx, gate, gate.logical_and(lid.eq(0)), grid, block, "G")


def _pick_local(size: int, budget: int) -> int:
    """Work-items along one grid axis: all of it when it fits, else the largest dividing power of two (>= 32),
    else 64 with a bounds gate."""
    if budget <= 1:
        return 1
    if size <= budget:
        return size
    for p in (256, 128, 64, 32):
        if p <= budget and size % p == 0:
            return p
    return min(64, budget)


def _is_true(u: UOp) -> bool:
    return u.op is Ops.CONST and u.arg is True


def lower(ast: UOp, features: frozenset[str] = frozenset()) -> tuple[UOp, Geometry]:
    """The kernel AST lowered to index arithmetic and loops, with its launch geometry; features: what the
    backend's target offers (compiler.backend.Backend.features)."""
    return Lowerer(ast, features).run()
