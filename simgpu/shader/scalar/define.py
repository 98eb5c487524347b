"""Scalar ALU instructions defined in the expression form (sem.expr): one definition per opcode, from which the
interpreter's semantic function (sem.scalar_gen: the operand reads, the nodes and the writes as one Python
function) and the JIT's IR (jit.lower_salu, through jit.lower_sem) are generated.

A definition names what it reads and writes in a signature, then gives the function:

    sdefine("s_add_u32", "ssrc0:u32 ssrc1:u32 -> sdst:u32 scc", lambda a, b: (a + b, a + b < a))

Operands read, in the function's argument order: `ssrc0`, `ssrc1` (as scalar.alu reads them: the types' widths
must be the instruction table's), `sdst` (the destination's current value), `simm16` (SOPK's immediate, sign- or
zero-extended by its type), `scc`, `exec`; each typed (`bool` for scc, the default). Operands written, in order,
one per value the function returns: `sdst`, `exec` (typed) and `scc`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from simgpu.shader.scalar.alu import read_scc, read_sgpr, sources, write_scc, write_sgpr
from simgpu.shader.sem.expr import Definition, bits, signed
from simgpu.shader.sem.scalar_gen import scalar_function
from simgpu.shader.semantics import register
from simgpu.shader.state import EXEC_LO


@dataclass
class SOp:
    """One scalar opcode's definition: operands read and written as (name, type), the interpreter's function
    generated from it."""

    reads: tuple[tuple[str, str], ...]
    writes: tuple[tuple[str, str], ...]
    definition: Definition
    fn: Callable | None = None
    family: str | None = None


SPECS: dict[str, SOp] = {}


def simm16(inst, t: str) -> int:
    """SOPK's immediate as type t's bit pattern: sign-extended for a signed type, zero-extended otherwise."""
    v = inst.fields["simm16"]
    if signed(t) and v & 0x8000:
        v -= 0x10000
    return v & ((1 << bits(t)) - 1)


_ENV = {"sources": sources, "read_sgpr": read_sgpr, "read_scc": read_scc, "write_sgpr": write_sgpr,
        "write_scc": write_scc, "simm16": simm16}


def _operands(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((name, t or "bool") for name, _, t in (word.partition(":") for word in text.split()))


def sdefine(names, signature: str, fn, family: str | None = None) -> None:
    """Register the definition `fn` of the opcodes `names` (one name or several): shared, or `family`'s own."""
    ins, _, outs = signature.partition("->")
    spec = SOp(_operands(ins), _operands(outs), Definition(tuple(t for _, t in _operands(ins)), fn), family=family)
    first = names if isinstance(names, str) else names[0]
    if len(spec.definition.tree()) != len(spec.writes):
        raise TypeError(f"{first}: the definition returns {len(spec.definition.tree())} values for "
                        f"{len(spec.writes)} operands")
    spec.fn = scalar_function(spec.definition, first, _reads(spec), lambda out: _writes(spec, out), _ENV)
    for name in [names] if isinstance(names, str) else names:
        SPECS[name] = spec
        register(name, spec.fn, family)


def _reads(spec: SOp) -> list[str]:
    """Lines setting s0, s1, ... to the operands read (ssrc0/ssrc1 as scalar.alu.sources reads them: the JIT's
    translation checks their types' widths against the instruction table, jit.lower_salu)."""
    lines = ["srcs = sources(ex, w, inst)"] if any(n.startswith("ssrc") for n, _ in spec.reads) else []
    for i, (name, t) in enumerate(spec.reads):
        wide = bits(t) == 64
        code = {"ssrc0": "srcs[0]", "ssrc1": "srcs[1]", "sdst": f"read_sgpr(ex, w, inst.fields['sdst'], {wide})",
                "exec": f"read_sgpr(ex, w, {EXEC_LO}, {wide})", "simm16": f"simm16(inst, {t!r})",
                "scc": "read_scc(ex, w) != 0"}[name]
        lines.append(f"s{i} = {code}")
    return lines


def _writes(spec: SOp, out: list[str]) -> list[str]:
    """Lines writing the results `out` to the operands written, in order."""
    lines = []
    for (name, t), v in zip(spec.writes, out, strict=True):
        if name == "scc":
            lines.append(f"write_scc(ex, w, {v})")
        else:
            code = EXEC_LO if name == "exec" else "inst.fields['sdst']"
            lines.append(f"write_sgpr(ex, w, {code}, {v}, {bits(t) == 64})")
    return lines
