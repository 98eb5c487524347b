"""Rewriting the IR: a pass is a `Rules` set (functions per op that return a replacement node or None), and
`rewrite(root, rules)` applies it bottom-up until nothing changes."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from compiler.ir.ops import Ops, UOp

Rule = Callable[[UOp], "UOp | None"]


class Rules:
    """A set of rewrite rules keyed by op; `a + b` is both sets (a's rules tried first)."""

    def __init__(self, rules: Iterable[tuple[Ops | Iterable[Ops], Rule]] = ()):
        self.by_op: dict[Ops, list[Rule]] = {}
        for ops, fn in rules:
            for op in (ops,) if isinstance(ops, Ops) else ops:
                self.by_op.setdefault(op, []).append(fn)

    def __add__(self, other: Rules) -> Rules:
        out = Rules()
        for src in (self, other):
            for op, fns in src.by_op.items():
                out.by_op.setdefault(op, []).extend(fns)
        return out

    def apply(self, u: UOp) -> UOp | None:
        """The first rule's replacement of u, or None when no rule changes it."""
        for fn in self.by_op.get(u.op, ()):
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
