"""Instruction selection by rules, shared by the native backends.

A `SelectionRules` table (compiler.ir.rewrite.OpTable, the table type of the rewrite passes too) maps each IR op
to an ordered list of rules; a rule is a predicate over (selector, uop) and an emitter that appends machine
instructions (compiler.backend.mir) for the uop and records its value. The first rule whose predicate holds
wins, so a table lists its fused patterns (an add of a product, a shift feeding an add, a comparison feeding a
select) before the plain forms, and the plain forms before nothing: a uop no rule matches is a `SelectionError`
naming op and dtypes.

`Selector` walks a linearized kernel in order and gives every uop its own instruction list (`slot`), so a value
can be materialized late at its own position (a constant that turns out to need a register, a negation no user
could fold as a source modifier) without reordering anything. A target subclasses it with its register
classes, value representation and structural lowering (loops, gated stores), and registers rules in its table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from compiler.backend.mir import MInst, RegFactory
from compiler.errors import CompileError
from compiler.ir.linearize import LinearKernel
from compiler.ir.ops import Ops, UOp
from compiler.ir.rewrite import OpTable


class SelectionError(CompileError):
    """No rule selects instructions for a uop."""


Predicate = Callable[["Selector", UOp], bool]
Emitter = Callable[["Selector", UOp], None]


@dataclass
class Rule:
    """One selection rule: `when` holds -> `emit` runs (name: for errors and statistics)."""

    name: str
    when: Predicate
    emit: Emitter


class SelectionRules(OpTable[Rule]):
    """Selection rules per IR op, tried in the order they were added (the rewrite passes' table type)."""

    def rule(self, *ops: Ops, when: Predicate | None = None, name: str = ""):
        """Decorator: register fn(sel, uop) for ops under an optional predicate."""
        def deco(fn: Emitter) -> Emitter:
            self.add(ops, Rule(name or fn.__name__, when or (lambda s, u: True), fn))
            return fn
        return deco

    def select(self, sel: Selector, u: UOp) -> str:
        """Run the first matching rule for u; returns its name."""
        for r in self.of(u.op):
            if r.when(sel, u):
                r.emit(sel, u)
                return r.name
        srcs = ", ".join(getattr(s.dtype, "name", repr(s.dtype)) for s in u.src)
        raise SelectionError(f"{sel.name()}: no instruction selection rule for {u.op.name} "
                             f"{getattr(u.dtype, 'name', u.dtype)} ({srcs})")


def value_rules(rules: SelectionRules) -> SelectionRules:
    """`rules` with the rules every target writes alike (through its selector's `src` and `copy`): ASSIGN
    copies the new value into the accumulator's register and stands for it; AFTER stands for its first
    source."""
    @rules.rule(Ops.ASSIGN)
    def _assign(s, u: UOp) -> None:
        acc = s.val[u.src[0]]
        s.copy(acc, s.src(u.src[1]), u.dtype)
        s.set(u, acc)

    @rules.rule(Ops.AFTER)
    def _after(s, u: UOp) -> None:
        s.set(u, s.src(u.src[0]))
    return rules


class Selector:
    """Walks a kernel's uops in order, selecting each with the target's rules (module docstring)."""

    rules: SelectionRules

    def __init__(self, kernel: LinearKernel):
        self.k = kernel
        self.regs = RegFactory()
        self.slot: dict[UOp, list[MInst]] = {}
        self.val: dict[UOp, object] = {}
        self.users: dict[UOp, list[UOp]] = {u: [] for u in kernel.uops}
        for u in kernel.uops:
            for s in u.src:
                if u not in self.users[s]:
                    self.users[s].append(u)
        self.pos = {u: i for i, u in enumerate(kernel.uops)}
        self.cur: list[MInst] = []
        self.prologue: list[MInst] = []
        self.epilogue: list[MInst] = []
        self.used_rules: dict[str, int] = {}
        self.current: UOp | None = None  # the uop being selected

    def name(self) -> str:
        """The kernel's name (for messages)."""
        return self.k.name

    def set(self, u: UOp, value) -> None:
        """Record u's value."""
        self.val[u] = value

    def emit(self, m: MInst) -> MInst:
        """Append an instruction to the current uop's list."""
        self.cur.append(m)
        return m

    def at(self, u: UOp) -> _At:
        """Emit into uop u's own list for a while (late materialization at u's position): `with sel.at(u): ...`."""
        return _At(self, self.slot[u])

    def run(self) -> list[MInst]:
        """Select every uop; the kernel's machine code in order."""
        for u in self.k.uops:
            self.cur = self.slot[u] = []
            self.current = u
            name = self.rules.select(self, u)
            self.used_rules[name] = self.used_rules.get(name, 0) + 1
        return [*self.prologue, *(m for u in self.k.uops for m in self.slot[u]), *self.epilogue]

    def single_user(self, u: UOp) -> UOp | None:
        """u's only user, if it has exactly one."""
        us = self.users.get(u, [])
        return us[0] if len(us) == 1 else None


class _At:
    def __init__(self, sel: Selector, target: list[MInst]):
        self.sel, self.target = sel, target

    def __enter__(self):
        self.saved = self.sel.cur
        self.sel.cur = self.target
        return self

    def __exit__(self, *exc):
        self.sel.cur = self.saved
        return False
