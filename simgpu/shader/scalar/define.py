"""Scalar ALU instructions defined in the expression form (sem.expr): one definition per opcode, from which the
interpreter's kernel (sem.scalar_gen) and the JIT's IR (jit.lower_salu, through jit.lower_sem) are generated.

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

from simgpu.shader.scalar.alu import read_scc, read_sgpr, source_wide, sources, write_scc, write_sgpr
from simgpu.shader.sem.expr import Definition, bits, signed
from simgpu.shader.sem.scalar_gen import scalar_kernel
from simgpu.shader.semantics import register
from simgpu.shader.state import EXEC_LO


@dataclass
class SOp:
    """One scalar opcode's definition: operands read and written as (name, type), the kernel generated from it."""

    reads: tuple[tuple[str, str], ...]
    writes: tuple[tuple[str, str], ...]
    definition: Definition
    fn: Callable
    family: str | None = None


SPECS: dict[str, SOp] = {}


def _operands(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((name, t or "bool") for name, _, t in (word.partition(":") for word in text.split()))


def sdefine(names, signature: str, fn, family: str | None = None) -> None:
    """Register the definition `fn` of the opcodes `names` (one name or several): shared, or `family`'s own."""
    ins, _, outs = signature.partition("->")
    reads, writes = _operands(ins), _operands(outs)
    d = Definition(tuple(t for _, t in reads), fn)
    first = names if isinstance(names, str) else names[0]
    if len(d.tree()) != len(writes):
        raise TypeError(f"{first}: the definition returns {len(d.tree())} values for {len(writes)} operands")
    spec = SOp(reads, writes, d, scalar_kernel(d, first), family)
    for name in [names] if isinstance(names, str) else names:
        SPECS[name] = spec
        register(name, _execute(spec), family)


def simm16(inst, t: str) -> int:
    """SOPK's immediate as type t's bit pattern: sign-extended for a signed type, zero-extended otherwise."""
    v = inst.fields["simm16"]
    if signed(t) and v & 0x8000:
        v -= 0x10000
    return v & ((1 << bits(t)) - 1)


def _reader(inst, name: str, t: str):
    """fn(ex, w, srcs) reading one operand (srcs: the instruction's ssrc0/ssrc1 as scalar.alu read them)."""
    wide = bits(t) == 64
    if name in ("ssrc0", "ssrc1"):
        k = int(name[-1])
        if source_wide(inst, k) != wide:
            raise TypeError(f"{inst.mnemonic}: {name} is typed {t}, the instruction table says otherwise")
        return lambda ex, w, srcs: srcs[k]
    if name == "sdst":
        return lambda ex, w, srcs: read_sgpr(ex, w, inst.fields["sdst"], wide)
    if name == "exec":
        return lambda ex, w, srcs: read_sgpr(ex, w, EXEC_LO, wide)
    if name == "simm16":
        k = simm16(inst, t)
        return lambda ex, w, srcs: k
    return lambda ex, w, srcs: read_scc(ex, w) != 0


def _execute(spec: SOp):
    def fn(ex, w, inst):
        readers = inst.__dict__.get("_sdef")
        if readers is None:
            readers = inst.__dict__["_sdef"] = [_reader(inst, n, t) for n, t in spec.reads]
        srcs = sources(ex, w, inst)
        out = spec.fn(*[r(ex, w, srcs) for r in readers])
        for (name, t), v in zip(spec.writes, out, strict=True):
            if name == "scc":
                write_scc(ex, w, v)
            else:
                write_sgpr(ex, w, EXEC_LO if name == "exec" else inst.fields["sdst"], v, bits(t) == 64)
    return fn
