"""Printing IR: a linearized kernel one uop per line (SIMGPU_DEBUG=2, the kernel cache key), an AST as a tree."""

from __future__ import annotations

from compiler.dtypes import DType
from compiler.ir.linearize import LinearKernel
from compiler.ir.ops import Ops, UOp


def _ty(dt) -> str:
    return dt.name if isinstance(dt, DType) else repr(dt)


def format_kernel(k: LinearKernel) -> str:
    """The kernel's uops in order, each `%n = OP type arg (sources)`, indented by loop depth."""
    names: dict[UOp, str] = {}
    lines = [f"kernel {k.name} grid={k.geometry.grid} block={k.geometry.block}",
             "  params " + ", ".join(f"data{i}: {p!r}" for i, p in enumerate(k.params))]
    depth = 1
    for i, u in enumerate(k.uops):
        names[u] = f"%{i}"
        if u.op is Ops.ENDRANGE:
            depth -= 1
        srcs = ", ".join(names.get(s, "?") for s in u.src)
        arg = "" if u.arg is None else f" {u.arg!r}"
        lines.append(f"{'  ' * depth}%{i} = {u.op.name} {_ty(u.dtype)}{arg}" + (f" ({srcs})" if srcs else ""))
        if u.op is Ops.RANGE:
            depth += 1
    return "\n".join(lines)


def format_ast(u: UOp, indent: int = 0, seen: dict | None = None) -> str:
    """A kernel AST as an indented tree (shared nodes printed once, then referred to). Iterative: an AST may be
    thousands of nodes deep."""
    seen = {} if seen is None else seen
    lines: list[str] = []
    stack = [(u, indent)]
    while stack:
        x, depth = stack.pop()
        pad = "  " * depth
        if x in seen:
            lines.append(f"{pad}<{seen[x]}>")
            continue
        seen[x] = len(seen)
        arg = "" if x.arg is None else f" {x.arg}"
        lines.append(f"{pad}[{seen[x]}] {x.op.name} {_ty(x.dtype)}{arg}")
        stack.extend((s, depth + 1) for s in reversed(x.src))
    return "\n".join(lines)
