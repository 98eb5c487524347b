"""The JIT's operations generated from definitions (sem.expr): each node becomes one LLVM instruction over
<lanes x T> values, through the same text builder (ir.Builder) as the rest of the translator.

Why text and not llvmlite.ir: the region's function is assembled as IR text (ir.py: several times faster
to build than llvmlite.ir's object graph, and translation time is the JIT's budget), and the block assembly
rewrites that text (unmasked.py copies a block's lines, renaming values). Values built with llvmlite.ir
would have to be printed back into those lines anyway; generating the text from the definition keeps one
builder and still leaves no hand-written IR for a defined instruction.

The generated emitter has the signature of lower_valu's hand-written ones (`emit(op, *sources)`, op a
lower_valu.Op; lower_valu imports this module, so not the other way round) and reads
the definition from op.spec when it translates, so a definition replaced at run time (sem.define.override)
is what the next translation uses.
"""

from __future__ import annotations

from simgpu.shader.sem.expr import FLOAT_TYPES, E, bits, nodes, signed

_PLAIN = {"add": "add", "sub": "sub", "mul": "mul", "and": "and", "or": "or", "xor": "xor", "shl": "shl"}
_FLOAT_ELEM = {"f16": "half", "f32": "float", "f64": "double"}
_INTRINSIC = {"popcount": "ctpop", "clz": "ctlz", "ctz": "cttz", "bitreverse": "bitreverse"}


def signed_spelling(value: str, bits: int) -> str:
    """An integer constant in the signed spelling LLVM accepts for its width (other values as they are)."""
    if value.lstrip("-").isdigit():
        v = int(value) & ((1 << bits) - 1)
        return str(v - (1 << bits) if v >> (bits - 1) else v)
    return value


def elem(t: str) -> str:
    return _FLOAT_ELEM[t] if t in FLOAT_TYPES else f"i{bits(t)}"


def _const(n: E) -> str:
    if n.t == "bool":
        return f"splat (i1 {'true' if n.value else 'false'})"
    return f"splat ({elem(n.t)} {signed_spelling(str(n.value), bits(n.t))})"


def _intrinsic(op, name: str, t: str, args: list[str], extra: str = "") -> str:
    """A call to a vector intrinsic over <lanes x t> (`extra`: a trailing scalar argument, e.g. `i1 false`)."""
    b = op.b
    vt = b.vec(elem(t))
    fn = f"@llvm.{name}.v{op.lw.lanes}{elem(t)}"
    call = [(vt, a) for a in args] + ([tuple(extra.split())] if extra else [])
    decl = ", ".join([vt] * len(args) + ([extra.split()[0]] if extra else []))
    return b.call(vt, fn, call, f"declare {vt} {fn}({decl})")


def _node(op, n: E, a: list[str]) -> str:
    b = op.b
    x = a[0] if a else None
    vt = b.vec(elem(n.args[0].t if n.args else n.t))
    if n.op in _PLAIN:
        return b.op(f"{_PLAIN[n.op]} {vt} {x}, {a[1]}")
    if n.op == "shr":
        return b.op(f"{'ashr' if signed(n.t) else 'lshr'} {vt} {x}, {a[1]}")
    if n.op in ("min", "max"):
        return _intrinsic(op, ("s" if signed(n.t) else "u") + n.op, n.t, a)
    if n.op in ("lt", "le", "gt", "ge"):
        return b.op(f"icmp {'s' if signed(n.args[0].t) else 'u'}{n.op} {vt} {x}, {a[1]}")
    if n.op in ("eq", "ne"):
        return b.op(f"icmp {n.op} {vt} {x}, {a[1]}")
    if n.op == "not":
        return b.op(f"xor {vt} {x}, {_const(E('const', n.t, value=1 if n.t == 'bool' else -1))}")
    if n.op == "select":
        rt = b.vec(elem(n.t))
        return b.op(f"select {vt} {x}, {rt} {a[1]}, {rt} {a[2]}")
    if n.op == "cast":
        src, wide, narrow = n.args[0].t, bits(n.t), bits(n.args[0].t)
        if wide == narrow:
            return x
        kind = "trunc" if wide < narrow else "sext" if src != "bool" and signed(src) else "zext"
        return b.op(f"{kind} {vt} {x} to {b.vec(elem(n.t))}")
    if n.op == "lane":
        return "<" + ", ".join(f"i32 {i}" for i in range(op.lw.lanes)) + ">"
    if n.op in ("clz", "ctz"):
        return _intrinsic(op, _INTRINSIC[n.op], n.t, a, "i1 false")
    return _intrinsic(op, _INTRINSIC[n.op], n.t, a)


def emit_definition(op, *sources: str):
    """The IR of op.spec's definition over the typed source vectors: the result, or (result, carry mask)."""
    roots = op.spec.definition.tree(op.clamp)
    if len(roots) > 1 and not op.carry_used:
        roots = roots[:1]
    values: dict[int, str] = {}
    for n in nodes(roots):
        if n.op == "src":
            values[id(n)] = sources[n.value]
        elif n.op == "const":
            values[id(n)] = _const(n)
        else:
            values[id(n)] = _node(op, n, [values[id(x)] for x in n.args])
    out = [values[id(r)] for r in roots]
    if op.spec.carry_out:
        return out[0], (out[1] if len(out) > 1 else None)
    return out[0]

