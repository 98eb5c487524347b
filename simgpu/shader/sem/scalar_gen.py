"""The interpreter's scalar-unit functions generated from definitions (sem.expr), for the SALU.

The values are the scalar unit's (scalar.value): a Python int when one wave runs the instruction, a uint64
array over the waves otherwise, each the unsigned bit pattern of its type (a signed type's too); a `bool` is a
Python bool or a numpy bool array. One source serves both kinds because it keeps value.py's rules: every result
is masked to its width, nothing negative meets an array (NOT is an xor), shift amounts stay below 64, signed
compares and arithmetic shifts go through value.signed. Generated as Python source, the operand reads and result
writes included (one line per node, constants written as literals), as numpy_gen does for the VALU, so a function
costs what the hand-written one did.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.scalar import value as sv
from simgpu.shader.sem.expr import Definition, E, bits, is_float, nodes, signed

_INFIX = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^", "shl": "<<",
          "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
_WRAPS = ("add", "sub", "mul", "shl")  # results that can leave the type's width


def _ashr(x, amount, n: int):
    """x >> amount with the sign of an n-bit x shifted in (an array amount as int64: numpy mixes no signedness)."""
    if not isinstance(amount, int):
        amount = amount.astype(np.int64)
    return sv.unsigned(sv.signed(x, n) >> amount, n)


def _bsel(cond, a, b):
    """select over bools."""
    return np.where(cond, a, b) if isinstance(cond, np.ndarray) else (a if cond else b)


def _ctz(x, n: int):
    """Trailing zeros of an n-bit x (n for 0)."""
    return sv.select(x == 0, n, sv.popcount((sv.lowest_bit(x) + sv.M64) & sv.M64))


def _wrap64(x):
    """A 64-bit result wrapped: a Python int masked, a uint64 array as it is (numpy wrapped it already)."""
    return x & sv.M64 if x.__class__ is int else x


_HELPERS = {"sv": sv, "_ashr": _ashr, "_bsel": _bsel, "_ctz": _ctz, "_wrap64": _wrap64}


def _signed_of(n: E, code: str) -> str:
    """An operand as its signed value, for a compare of a signed type."""
    if n.op == "const":
        return str(n.value)  # (lift keeps a signed type's constant signed)
    return f"sv.signed({code}, {bits(n.t)})"


def _node(n: E, a: list[str]) -> str:
    mask = (1 << bits(n.t)) - 1 if n.t != "bool" else None
    src = n.args[0].t if n.args else n.t
    if n.op in ("lt", "le", "gt", "ge") and src != "bool" and signed(src):
        return f"{_signed_of(n.args[0], a[0])} {_INFIX[n.op]} {_signed_of(n.args[1], a[1])}"
    if n.op in _INFIX:
        code = f"{a[0]} {_INFIX[n.op]} {a[1]}"
        if n.op not in _WRAPS:
            return code
        return f"_wrap64({code})" if bits(n.t) == 64 else f"({code}) & {mask:#x}"
    if n.op == "shr":
        return f"_ashr({a[0]}, {a[1]}, {bits(n.t)})" if signed(n.t) else f"{a[0]} >> {a[1]}"
    if n.op == "not":
        return f"{a[0]} ^ True" if n.t == "bool" else f"{a[0]} ^ {mask:#x}"
    if n.op == "select":
        return f"{'_bsel' if n.t == 'bool' else 'sv.select'}({a[0]}, {a[1]}, {a[2]})"
    if n.op in ("min", "max"):
        less = _node(E("lt", "bool", n.args), a)
        return f"sv.select({less}, {a[0] if n.op == 'min' else a[1]}, {a[1] if n.op == 'min' else a[0]})"
    if n.op == "cast":
        if src == "bool":
            return f"sv.flag({a[0]})"
        if n.t == "bool":
            return f"({a[0]} & 1) == 1"
        if bits(n.t) > bits(src) and signed(src):
            return f"sv.unsigned(sv.signed({a[0]}, {bits(src)}), {bits(n.t)})"
        return f"{a[0]} & {mask:#x}" if bits(n.t) < bits(src) else a[0]
    if n.op == "bitcast":
        return a[0]
    if n.op == "popcount":
        return f"sv.popcount({a[0]})"
    if n.op == "clz":
        return f"{bits(n.t)} - sv.popcount(sv.smear_right({a[0]}))"
    if n.op == "ctz":
        return f"_ctz({a[0]}, {bits(n.t)})"
    if n.op == "bitreverse":
        return f"sv.bit_reverse({a[0]}, {bits(n.t)})"
    raise TypeError(f"{n.op} has no scalar-unit form")


def scalar_function(d: Definition, name: str, reads: list[str], writes, env: dict):
    """A function `name(ex, w, inst)` of the interpreter: the lines `reads` set the sources s0, s1, ..., the
    definition's nodes are computed over them, and writes(results) gives the lines storing its result node(s).
    `env`: the names the read and write lines use. Its source is fn.source."""
    roots = d.tree()
    names: dict[int, str] = {}
    lines = [f"def {name}(ex, w, inst):", *(f"    {line}" for line in reads)]
    for n in nodes(roots):
        if is_float(n.t) or (n.args and is_float(n.args[0].t)):
            raise TypeError(f"{name}: the scalar unit's definitions are integer ones")
        if n.op == "src":
            names[id(n)] = f"s{n.value}"
        elif n.op == "const":
            names[id(n)] = repr(bool(n.value)) if n.t == "bool" else str(n.value & ((1 << bits(n.t)) - 1))
        else:
            args = [names[id(x)] for x in n.args]
            code = _node(n, args)
            if args and code == args[0]:  # (a cast or bitcast that keeps the value)
                names[id(n)] = code
                continue
            names[id(n)] = f"t{len(lines)}"
            lines.append(f"    t{len(lines)} = {code}")
    lines += [f"    {line}" for line in writes([names[id(r)] for r in roots])]
    source = "\n".join(lines) + "\n"
    env = {**_HELPERS, **env}
    exec(compile(source, f"<scalar definition {name}>", "exec"), env)  # noqa: S102 - source generated from the tree
    fn = env[name]
    fn.source = source
    return fn
