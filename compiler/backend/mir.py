"""Machine IR shared by the native backends: virtual registers of a register class, instructions in the target's
own syntax with their operands in order, labels and branches.

An instruction is what the target's assembler reads, with virtual registers where physical ones will go: the
first `ndef` operands are written, the rest read (an `rmw` instruction also reads what it writes: a lane
write, a d16 load, a tied accumulator). Sub-ranges of a register (`VReg[i]`, `VReg.part(i, n)`) name the dwords
of a tuple, so a 64-bit value is one register of size 2 whose halves are operands of their own. The register
allocator (compiler.backend.regalloc) replaces virtual registers by physical ones per register class; the
target prints and encodes the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class VReg:
    """A virtual register: `size` consecutive registers of class `rc` (a tuple when size > 1)."""

    __slots__ = ("id", "rc", "size", "fixed", "no_spill", "whole", "phys", "name")

    def __init__(self, rid: int, rc: str, size: int = 1, fixed: int | None = None, name: str = ""):
        self.id, self.rc, self.size, self.fixed, self.name = rid, rc, size, fixed, name
        self.no_spill = False  # a spill reload or store temporary: never spilled again
        self.whole = False  # live through the whole kernel (SGPR spill lanes)
        self.phys: int | None = fixed

    def part(self, off: int, n: int = 1) -> Sub:
        """Registers off..off+n-1 of this tuple as an operand."""
        return Sub(self, off, n)

    def __getitem__(self, i: int) -> Sub:
        return Sub(self, i, 1)

    @property
    def all(self) -> Sub:
        """The whole register as an operand."""
        return Sub(self, 0, self.size)

    def __repr__(self) -> str:
        return f"%{self.rc}{self.id}" + (f"x{self.size}" if self.size > 1 else "")


@dataclass(frozen=True, slots=True)
class Sub:
    """Registers [off, off + n) of a virtual register, with source modifiers (neg, abs) for printing."""

    reg: VReg
    off: int = 0
    n: int = 1
    neg: bool = False
    abs: bool = False

    @property
    def rc(self) -> str:
        return self.reg.rc

    def __neg__(self) -> Sub:
        return Sub(self.reg, self.off, self.n, not self.neg, self.abs)

    def __abs__(self) -> Sub:
        return Sub(self.reg, self.off, self.n, False, True)

    def units(self) -> range:
        """The register indices (within the virtual register) this operand touches."""
        return range(self.off, self.off + self.n)


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate operand: `value` as the instruction reads it (an int of its width, or a float), printed as
    `text` (an inline constant's spelling or a literal)."""

    value: int | float
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Phys:
    """A named physical register or keyword operand the allocator does not touch (vcc_lo, exec_lo, null, off)."""

    name: str
    neg: bool = False
    abs: bool = False

    def __neg__(self) -> Phys:
        return Phys(self.name, not self.neg, self.abs)

    def __str__(self) -> str:
        return self.name


Operand = Sub | Imm | Phys


@dataclass(slots=True)
class MInst:
    """One machine instruction (module docstring). `target` names a label for branches; `mods` are the trailing
    modifiers as the assembler spells them (offset:16, glc, op_sel:[0,1]); `flags` name properties passes read:
    'early' (the definitions may not share a register with the uses), 'scc' (writes SCC), 'use_scc',
    'exec' (writes EXEC), 'barrier', 'vmem'/'smem'/'lds' (memory kind; 'load' or 'store'), 'trans'."""

    op: str
    ops: list = field(default_factory=list)
    ndef: int = 0
    mods: str = ""
    target: str | None = None
    flags: frozenset = frozenset()
    rmw: bool = False
    comment: str = ""

    @property
    def defs(self) -> list:
        return self.ops[:self.ndef]

    @property
    def uses(self) -> list:
        return self.ops[self.ndef:]

    def vdefs(self):
        """(VReg, units) written."""
        for o in self.ops[:self.ndef]:
            if isinstance(o, Sub):
                yield o.reg, o.units()

    def vuses(self):
        """(VReg, units) read (the written operands too when rmw)."""
        for o in (self.ops if self.rmw else self.ops[self.ndef:]):
            if isinstance(o, Sub):
                yield o.reg, o.units()

    def is_label(self) -> bool:
        return self.op == "label"


def label(name: str) -> MInst:
    """A label pseudo-instruction (no code)."""
    return MInst("label", target=name)


class RegFactory:
    """Numbers the virtual registers of one kernel."""

    def __init__(self) -> None:
        self.n = 0
        self.all: list[VReg] = []

    def new(self, rc: str, size: int = 1, fixed: int | None = None, name: str = "") -> VReg:
        """A fresh virtual register."""
        self.n += 1
        r = VReg(self.n, rc, size, fixed, name)
        self.all.append(r)
        return r
