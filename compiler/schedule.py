"""The scheduler: cuts the lazy graph (compiler.lazy) into kernels and orders them.

Every base that must live in memory becomes one kernel (or a copy): the requested outputs, host data,
CONTIGUOUS, and reductions whose result is read through a view that is not the identity (softmax's
`x - x.max(keepdim)`), by more than one consumer, or inside another reduction's input. Elementwise work is
fused into every consumer, loads included, through views (the view of a view composes; a masked view wraps
the fused value in its VALID condition, so padding reads 0 whatever the op). A reduction read once through
the identity fuses with the elementwise work after it, except that an elementwise input a reduction reads
through an expanding view (matmul's operands) is computed once by a kernel of its own when it holds a
transcendental or a division. Elementwise kernels of one shape that are ready together share one kernel.
Each kernel is an AST of the kernel IR:

    SINK(STORE(PARAM 0, VIEW, value), STORE(PARAM 1, ...)...)     one STORE per output
    value := LOAD(PARAM i, VIEW) | CONST | IOTA(VIEW) | VALID(VIEW) | ALU(value...) | REDUCE(value)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from compiler.dtypes import PtrDType, dtypes
from compiler.ir.ops import ELEMENTWISE, Ops, UOp, _key_arg
from compiler.lazy import LazyBuffer
from compiler.views import ShapeTracker

# a fused elementwise input that every output element of a reduction reads again is computed once instead,
# when it costs one of these (the rest of ALU is cheaper than a round trip through memory)
EXPENSIVE = {Ops.EXP2, Ops.LOG2, Ops.SIN, Ops.SQRT, Ops.FDIV, Ops.IDIV, Ops.MOD}
MAX_FUSED = 400  # AST nodes a kernel may fuse before an input is computed by a kernel of its own
MAX_OUTPUTS = 8  # stores one elementwise kernel may make
MAX_DEPTH = MAX_FUSED // 4  # fused ops in a chain before one gets a kernel of its own


@dataclass
class ScheduleItem:
    """One step: a kernel (ast; buffers: the outputs, then the inputs) or a copy ('copyin'/'copy'/'empty')."""

    kind: str
    outs: list[LazyBuffer]
    ast: UOp | None = None
    inputs: list[LazyBuffer] = field(default_factory=list)

    @property
    def out(self) -> LazyBuffer:
        """The (first) output."""
        return self.outs[0]


@dataclass(frozen=True)
class Cut:
    """What building a kernel found instead of its AST: `base` must get a kernel of its own (size: because the
    kernel reading it grew past MAX_FUSED; member: the index of the group member whose value was being built).
    The schedule then adds base to the bases it realizes and is made again."""

    base: LazyBuffer
    size: bool = False
    member: int = 0


def schedule(outs: list[LazyBuffer]) -> list[ScheduleItem]:
    """The ordered steps that realize the bases `outs` (and what they need). A graph of a structure scheduled
    before (a training step's, every step) takes that schedule's kernels again (_structure)."""
    nodes, key = _structure(outs)
    if key is not None and key in _SCHEDULES:
        return [ScheduleItem(kind, [nodes[i] for i in o], ast, [nodes[i] for i in ins])
                for kind, o, ast, ins in _SCHEDULES[key]]
    items = _schedule(outs)
    if key is not None:
        index = {id(n): i for i, n in enumerate(nodes)}
        try:
            _SCHEDULES[key] = [(it.kind, [index[id(o)] for o in it.outs], it.ast, [index[id(i)] for i in it.inputs])
                               for it in items]
        except KeyError:  # an item of a base the walk did not number: nothing to reuse
            return items
        while len(_SCHEDULES) > MAX_SCHEDULES:
            del _SCHEDULES[next(iter(_SCHEDULES))]
    return items


MAX_SCHEDULES = 256
_SCHEDULES: dict[tuple, list[tuple]] = {}  # a graph's structure -> its items, bases as numbers in the walk


def _structure(outs: list[LazyBuffer]) -> tuple[list[LazyBuffer], tuple | None]:
    """The bases reachable from outs (realized ones as leaves), sources first, and a key that is equal for two
    graphs exactly when one schedule serves both: per base its op, dtype, device, shape, argument (constants
    by their bits; host data not at all: a copy-in takes the current base's) and its sources as (number, view).
    Devices are numbered in the order the walk meets them: the scheduler only compares them (a group's members
    share one; a copy moves between two), so a layer's graph on the CPU device takes the schedule its graph on
    the GPU made (test_nn's LSTM cells: seconds of scheduling each). None for the key when an argument is not a
    plain value."""
    number: dict[int, int] = {}
    devices: dict[str, int] = {}
    nodes: list[LazyBuffer] = []
    sig: list[tuple] = []
    stack = [(b, False) for b in reversed(outs)]
    plain = True
    while stack:
        b, ready = stack.pop()
        if id(b) in number:
            continue
        if not ready and b.op is not Ops.BUFFER:
            stack.append((b, True))
            stack.extend((s.base, False) for s in reversed(b.srcs) if id(s.base) not in number)
            continue
        number[id(b)] = len(nodes)
        nodes.append(b)
        arg = None if b.op in (Ops.COPYIN, Ops.BUFFER) else _plain(b.arg)
        if arg is _NOT_PLAIN:
            plain = False
        sig.append((b.op, b.dtype, devices.setdefault(b.device, len(devices)), b.shape, arg,
                    tuple((number[id(s.base)], s.st) for s in b.srcs)))
    key = (tuple(sig), tuple(number[id(b)] for b in outs)) if plain else None
    return nodes, key


_NOT_PLAIN = object()


def _plain(arg):
    """An argument as a key (floats by their bits, in tuples too), or _NOT_PLAIN for anything but numbers, strings,
    enums and tuples of them."""
    if isinstance(arg, tuple):
        items = tuple(_plain(a) for a in arg)
        return _NOT_PLAIN if any(a is _NOT_PLAIN for a in items) else items
    if arg is None or isinstance(arg, int | float | str | Enum):
        return _key_arg(arg)
    return _NOT_PLAIN


def _schedule(outs: list[LazyBuffer]) -> list[ScheduleItem]:
    graph = _collect(outs)
    consumers: dict[LazyBuffer, set[LazyBuffer]] = {b: set() for b in graph}
    for b in graph:
        for s in b.srcs:
            if s.base in consumers:
                consumers[s.base].add(b)
    must = {b for b in outs} | {b for b in graph if _must_realize(b, consumers)}
    _cut_deep(graph, must)
    kernels = _Kernels(must)
    while isinstance(items := _items(graph, must, kernels), Cut):
        kernels.cut(items.base)
    return items


class _Kernels:
    """The kernels built while a schedule is made, by group. A Cut adds a base to `must` and the items are made
    again; only the kernels that visited that base are built again: a kernel depends on `must` only through the
    bases its walk visits, so every other one would come out the same (an LSTM cell's graph is cut some 80 times,
    and rebuilding every kernel at each cut was most of its schedule's time). So are each base's dependencies and
    whether it is elementwise (_deps, _groupable: a quarter of that schedule's time when made afresh per cut)."""

    def __init__(self, must: set):
        self.must = must
        self._built: dict[tuple, tuple[ScheduleItem, set]] = {}
        self._walks: dict[tuple, tuple[Any, set]] = {}  # (walk, base) -> (its answer, the bases it visited)

    def deps(self, b: LazyBuffer) -> set[LazyBuffer]:
        """_deps(b, must), walked once while no base it visited is cut."""
        return self._walk(_deps, b)

    def groupable(self, b: LazyBuffer) -> bool:
        """_groupable(b, must), walked once while no base it visited is cut."""
        return self._walk(_groupable, b)

    def _walk(self, fn: Callable, b: LazyBuffer):
        hit = self._walks.get((fn, b))
        if hit is None:
            hit = self._walks[(fn, b)] = fn(b, self.must)
        return hit[0]

    def get(self, group: list[LazyBuffer]) -> ScheduleItem | Cut:
        """_kernel(group), built once while no base it visited is cut."""
        key = tuple(group)
        hit = self._built.get(key)
        if hit is not None:
            return hit[0]
        item, visited = _kernel(group, self.must)
        if not isinstance(item, Cut):
            self._built[key] = (item, visited)
        return item

    def cut(self, base: LazyBuffer) -> None:
        """base gets a kernel of its own: forget the kernels that visited it."""
        self.must.add(base)
        self._built = {k: v for k, v in self._built.items() if base not in v[1]}
        self._walks = {k: v for k, v in self._walks.items() if base not in v[1]}


def _items(graph: list[LazyBuffer], must: set, kernels: _Kernels) -> list[ScheduleItem] | Cut:
    """Steps in dependency order; elementwise kernels of one shape whose inputs are ready, or are computed by
    the kernel itself, share one kernel (up to MAX_OUTPUTS stores: an optimizer step updates a parameter and
    its state in one launch; fewer when together they would fuse more than MAX_FUSED nodes). While such a
    group is open, ready reductions and copies run first: they may make more of its members ready."""
    todo = [b for b in graph if b in must]
    deps = {b: kernels.deps(b) for b in todo}
    elementwise = {b: kernels.groupable(b) for b in todo}
    done: set[LazyBuffer] = set()
    items: list[ScheduleItem] = []
    group: list[LazyBuffer] = []

    def emit(item: ScheduleItem) -> None:
        items.append(item)
        done.update(item.outs)

    def joins(x: LazyBuffer) -> bool:
        g = group[0]
        return len(group) < MAX_OUTPUTS and x.device == g.device and _squeeze(x.shape) == _squeeze(g.shape) and \
            elementwise[x]

    while todo or group:
        inline = done | set(group)
        b = next((x for x in todo if group and deps[x] <= inline and joins(x)), None)
        if b is None:
            ready = [x for x in todo if deps[x] <= done]
            b = next((x for x in ready if not group or not elementwise[x]), None)
            if b is None:
                if group:  # nothing else can run first: the group's kernel runs now
                    made = _group_kernel(group, kernels)
                    if isinstance(made, Cut):
                        return made
                    item, rest = made
                    emit(item)
                    todo[:0], group = rest, []
                    continue
                b = ready[0]
        todo.remove(b)
        if b.op in (Ops.COPYIN, Ops.EMPTY) or b.st.size() == 0:
            emit(ScheduleItem("copyin" if b.op is Ops.COPYIN else "empty", [b]))
        elif b.op is Ops.COPY:
            emit(ScheduleItem("copy", [b], inputs=[b.srcs[0].base]))
        elif not elementwise[b]:
            item = kernels.get([b])
            if isinstance(item, Cut):
                return item
            emit(item)
        else:
            group.append(b)
    return items


def _group_kernel(group: list[LazyBuffer], kernels: _Kernels) -> tuple[ScheduleItem, list[LazyBuffer]] | Cut:
    """The kernel of the longest prefix of group that fuses at most MAX_FUSED nodes, and the members left out
    (a member may compute another's value inline: a chain's pieces would otherwise fuse back together)."""
    item = kernels.get(group)
    if not isinstance(item, Cut):
        return item, []
    if not item.size or item.member == 0:
        return item
    prefix = kernels.get(group[:item.member])
    return prefix if isinstance(prefix, Cut) else (prefix, group[item.member:])


def _cut_deep(graph: list[LazyBuffer], must: set) -> None:
    """Give a kernel of its own to every MAX_DEPTH-th base of a long chain of fused ops (`t = t + 1` 10,000 times),
    so kernels stay small and alike (one compile serves them all) without a restart per MAX_FUSED nodes."""
    depth: dict[LazyBuffer, int] = {}
    for b in graph:  # sources first
        d = 0 if b in must else 1 + max((depth.get(s.base, 0) for s in b.srcs), default=0)
        if d > MAX_DEPTH:
            must.add(b)
            d = 0
        depth[b] = d


def _groupable(b: LazyBuffer, must: set) -> tuple[bool, set[LazyBuffer]]:
    """Whether b's kernel is elementwise (it may share a kernel with others of its shape), and the bases that
    depended on."""
    if b.op in (Ops.COPYIN, Ops.EMPTY, Ops.COPY) or b.st.size() == 0:
        return False, set()
    found, seen = _has_reduce(b, must)
    return not found, seen


def _deps(b: LazyBuffer, must: set) -> tuple[set[LazyBuffer], set[LazyBuffer]]:
    """The realized-in-this-schedule bases b's kernel reads (through fused sources), and the bases the walk
    visited."""
    out, stack, seen = set(), list(s.base for s in b.srcs), set()
    while stack:
        x = stack.pop()
        if x in seen or x.op is Ops.BUFFER:
            continue
        seen.add(x)
        if x in must:
            out.add(x)
        else:
            stack.extend(s.base for s in x.srcs)
    return out, seen


def _has_reduce(b: LazyBuffer, must: set) -> tuple[bool, set[LazyBuffer]]:
    """Whether b's kernel would contain a reduction (one fused into it, or b itself), and the bases the walk
    visited."""
    stack, seen = [b], set()
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        if x.op is Ops.REDUCE and (x is b or x not in must):
            return True, seen
        if x is b or (x not in must and (x.op in ELEMENTWISE or x.op is Ops.CONTIGUOUS)):
            stack.extend(s.base for s in x.srcs)
    return False, seen


def _collect(outs: list[LazyBuffer]) -> list[LazyBuffer]:
    """Unrealized bases reachable from outs, sources first."""
    order, seen = [], set()
    stack = [(b, False) for b in outs]
    while stack:
        b, done = stack.pop()
        if done:
            order.append(b)
            continue
        if b in seen or b.op is Ops.BUFFER:
            continue
        seen.add(b)
        stack.append((b, True))
        stack.extend((s.base, False) for s in b.srcs if s.base not in seen)
    return order


def _must_realize(b: LazyBuffer, consumers) -> bool:
    if b.op in (Ops.COPYIN, Ops.EMPTY, Ops.CONTIGUOUS, Ops.COPY):
        return True
    if b.op is Ops.REDUCE:
        users = consumers[b]
        if len(users) != 1:
            return True
        (user,) = users
        views = [s for s in user.srcs if s.base is b]
        return user.op is Ops.REDUCE or not all(_is_reshape(v.st, b.shape) for v in views)
    return False


def _is_reshape(st: ShapeTracker, shape) -> bool:
    """Whether st reads a base of shape `shape` in order, only inserting or removing size-1 dimensions."""
    return st.contiguous_layout and _squeeze(st.shape) == _squeeze(shape)


def _squeeze(shape) -> tuple[int, ...]:
    return tuple(s for s in shape if s != 1)


def _kernel_shape(root: LazyBuffer, must: set) -> tuple[int, ...]:
    """The index space of root's kernel: root's shape, or the shape of a reduction fused into it that differs
    only by size-1 dimensions (sum(keepdim=False) followed by elementwise work), so the reduction is read
    through the identity."""
    stack, seen = [root], set()
    while stack:
        b = stack.pop()
        if b in seen:
            continue
        seen.add(b)
        if b.op is Ops.REDUCE and b is not root and b not in must:
            return b.shape if _squeeze(b.shape) == _squeeze(root.shape) else root.shape
        if b.op in ELEMENTWISE or b is root and b.op is Ops.CONTIGUOUS:
            stack.extend(s.base for s in b.srcs if _is_reshape(s.st, s.base.shape) and s.base not in must)
    return root.shape


class _Builder:
    """Builds one kernel's AST, collecting its input buffers."""

    def __init__(self, roots: list[LazyBuffer], must: set):
        self.roots, self.must = roots, must
        self.costly: dict[LazyBuffer, bool] = {}
        self.inputs: list[LazyBuffer] = []
        self.memo: dict = {}
        self.kids: dict = {}
        self.size = 0

    def param(self, b: LazyBuffer) -> UOp:
        if b not in self.inputs:
            self.inputs.append(b)
        i = len(self.roots) + self.inputs.index(b)
        return UOp(Ops.PARAM, PtrDType(_mem(b.dtype), "global", b.st.size()), (), i)

    def build(self, b: LazyBuffer, st: ShapeTracker, in_reduce: bool) -> UOp | Cut:
        """The value of b read through st (inside a reduction's input when in_reduce), or the Cut that b's value
        needs first. An iterative walk, sources first: a chain of 10,000 ops is a graph 10,000 deep (the kernel
        is cut at MAX_FUSED nodes)."""
        root = (b, st, in_reduce)
        stack = [root]
        while stack:
            key = stack[-1]
            if key in self.memo:
                stack.pop()
                continue
            if key not in self.kids:
                kids = self._sources(*key)
                if isinstance(kids, Cut):
                    return kids
                self.kids[key] = kids
            todo = [k for k in self.kids[key] if k not in self.memo]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            self.memo[key] = self._make(*key)
            self.size += 1
            b = key[0]
            if self.size > MAX_FUSED and b not in self.roots and not self._loads(b) and b.op is not Ops.CONST:
                return Cut(b, size=True)  # b gets a kernel of its own (a load is one already)
        return self.memo[root]

    def _loads(self, b: LazyBuffer) -> bool:
        """Whether b's kernel reads b from memory instead of computing it."""
        return b.op is Ops.BUFFER or (b in self.must and b not in self.roots)

    def _sources(self, b: LazyBuffer, st: ShapeTracker, in_reduce: bool) -> list[tuple] | Cut:
        """The (base, view, in_reduce) keys b's value is made of, or a Cut when b needs a kernel of its own."""
        if self._loads(b) or b.op in (Ops.CONST, Ops.IOTA):
            return []
        if b.op is Ops.REDUCE:
            if in_reduce or (st != ShapeTracker.contiguous(b.shape) and b not in self.roots):
                return Cut(b)
            (src,) = b.srcs
            return [(src.base, src.st, True)]
        if b.op is Ops.CONTIGUOUS:
            (src,) = b.srcs
            return [(src.base, src.st + st, in_reduce)]
        if b.op in ELEMENTWISE:
            if in_reduce and self._recompute_is_costly(b, st):
                return Cut(b)
            return [(s.base, s.st + st, in_reduce) for s in b.srcs]
        raise AssertionError(f"cannot fuse {b}")

    def _make(self, b: LazyBuffer, st: ShapeTracker, in_reduce: bool) -> UOp:
        """b's node from its sources' (built already). The VIEW node only where one reads it (a load, an iota, a
        masked view): most nodes are ALU ops, and making an unused VIEW was a third of the nodes a schedule made."""
        srcs = [self.memo[k] for k in self.kids[(b, st, in_reduce)]]
        if self._loads(b):
            return UOp(Ops.LOAD, _mem(b.dtype), (self.param(b), UOp(Ops.VIEW, dtypes.int32, (), st))).cast(b.dtype)
        if b.op is Ops.CONTIGUOUS:
            return srcs[0]
        if b.op is Ops.CONST:
            v = UOp.const(b.dtype, b.arg)
        elif b.op is Ops.IOTA:
            v = UOp(Ops.IOTA, b.dtype, (UOp(Ops.VIEW, dtypes.int32, (), st),))
        elif b.op is Ops.REDUCE:
            v = UOp(Ops.REDUCE, b.dtype, (srcs[0],), (*b.arg, b.srcs[0].shape))
        else:
            v = UOp(b.op, b.dtype, tuple(srcs))
        if st.masked:
            v = UOp(Ops.VALID, dtypes.bool, (UOp(Ops.VIEW, dtypes.int32, (), st),)).where(v, UOp.const(b.dtype, 0))
        return v

    def _recompute_is_costly(self, b: LazyBuffer, st: ShapeTracker) -> bool:
        """Whether reading b through st (an expanding view) would recompute a transcendental or a division."""
        return st.size() > b.st.size() and self._holds_expensive(b)

    def _holds_expensive(self, root: LazyBuffer) -> bool:
        """Whether b's fused graph holds an EXPENSIVE op (iteratively, sources first)."""
        def fused(x: LazyBuffer) -> list[LazyBuffer]:
            return [s.base for s in x.srcs if s.base.op in ELEMENTWISE and s.base not in self.must]
        stack = [root]
        while stack:
            b = stack[-1]
            if b in self.costly:
                stack.pop()
                continue
            todo = [s for s in fused(b) if s not in self.costly]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            self.costly[b] = b.op in EXPENSIVE or any(self.costly[s] for s in fused(b))
        return self.costly[root]


def _mem(dt):
    """The type a buffer of dt holds (bool as bytes)."""
    return dtypes.uint8 if dt == dtypes.bool else dt


def _kernel(group: list[LazyBuffer], must: set) -> tuple[ScheduleItem | Cut, set[LazyBuffer]]:
    """One kernel storing every base of group (a single one may take a fused reduction's index space), and the
    bases its walk visited (_kernel_shape's walk visits a subset of the builder's)."""
    builder = _Builder(group, must)
    stores = []
    for i, b in enumerate(group):
        shape = _kernel_shape(b, must) if len(group) == 1 else group[0].shape
        here = ShapeTracker.contiguous(b.shape).reshape(shape)  # kernel index -> b's flat index
        value = builder.build(b, here, False)
        if isinstance(value, Cut):
            return replace(value, member=i), set()
        value = value.cast(_mem(b.dtype))
        out = UOp(Ops.PARAM, PtrDType(_mem(b.dtype), "global", b.st.size()), (), i)
        stores.append(UOp(Ops.STORE, dtypes.int32, (out, UOp(Ops.VIEW, dtypes.int32, (), here), value)))
    visited = {key[0] for key in builder.memo} | set(builder.costly)
    return ScheduleItem("kernel", list(group), UOp(Ops.SINK, dtypes.int32, tuple(stores)), builder.inputs), visited
