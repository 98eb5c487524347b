"""Rewriting the IR: a pass is a `Rules` set (functions per op that return a replacement node or None), and
`rewrite(root, rules)` applies it bottom-up until nothing changes."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from compiler.ir.ops import Ops, UOp

Rule = Callable[[UOp], "UOp | None"]
R = TypeVar("R")


class OpTable(Generic[R]):
    """Rules per IR op, kept in the order they were added: the one table type of the compiler's rule-driven
    passes. A rewrite pass (`Rules`) and instruction selection (compiler.backend.isel.SelectionRules) both look
    up the rules of a node's op and take the first that applies; they differ only in what a rule does."""

    def __init__(self) -> None:
        self.by_op: dict[Ops, list[R]] = {}

    def add(self, ops: Ops | Iterable[Ops], rule: R) -> None:
        """Append rule to the rules of each of ops (tried after those added before)."""
        for op in (ops,) if isinstance(ops, Ops) else ops:
            self.by_op.setdefault(op, []).append(rule)

    def of(self, op: Ops) -> list[R] | tuple[()]:
        """The rules of op, in order."""
        return self.by_op.get(op, ())

    def __add__(self, other: OpTable[R]) -> OpTable[R]:
        """Both tables' rules, this one's first for every op."""
        out = type(self)()
        for src in (self, other):
            for op, rules in src.by_op.items():
                out.by_op.setdefault(op, []).extend(rules)
        return out


class Rules(OpTable[Rule]):
    """A rewrite pass: functions per op that return a replacement node or None; `a + b` is both passes' rules
    (a's tried first)."""

    def __init__(self, rules: Iterable[tuple[Ops | Iterable[Ops], Rule]] = ()):
        super().__init__()
        for ops, fn in rules:
            self.add(ops, fn)

    def apply(self, u: UOp) -> UOp | None:
        """The first rule's replacement of u, or None when no rule changes it."""
        for fn in self.of(u.op):
            r = fn(u)
            if r is not None and r is not u:
                return r
        return None


def rewrite(root: UOp, rules: Rules, memo: dict | None = None) -> UOp:
    """root with every node rewritten by `rules`, sources first, each node until no rule applies."""
    memo = {} if memo is None else memo
    for u in root.toposort():
        if u in memo:
            continue
        src = tuple(memo[s] for s in u.src)
        n = u if all(a is b for a, b in zip(src, u.src, strict=True)) else u.replace(src=src)
        for _ in range(1000):
            r = rules.apply(n)
            if r is None:
                break
            n = rewrite(r, rules, memo) if r not in memo else memo[r]
        else:
            raise RuntimeError(f"rewrite of {u} does not converge")
        memo[u] = n
    return memo[root]


def substitute(root: UOp, mapping: dict[UOp, UOp]) -> UOp:
    """root with the nodes in `mapping` replaced (and everything above them rebuilt)."""
    memo = dict(mapping)
    for u in root.toposort():
        if u in memo:
            continue
        src = tuple(memo[s] for s in u.src)
        memo[u] = u if all(a is b for a, b in zip(src, u.src, strict=True)) else u.replace(src=src)
    return memo[root]
