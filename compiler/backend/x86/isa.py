"""x86-64 operands and instructions as the encoder reads them: registers (general-purpose of 1-8 bytes, XMM),
memory operands ([base + index*scale + disp] of an access size), immediates and branch targets, and an
instruction's Intel-syntax text as capstone prints it (`mov dword ptr [rbx + rsi*4 + 0x10], eax`).

Register numbers are the hardware's (the low three bits go into ModRM/SIB, the fourth into REX): rax=0, rcx=1,
rdx=2, rbx=3, rsp=4, rbp=5, rsi=6, rdi=7, r8-r15 = 8-15; xmm0-xmm15 likewise.
"""

from __future__ import annotations

from dataclasses import dataclass

_GPR = {
    8: ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi"),
    4: ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"),
    2: ("ax", "cx", "dx", "bx", "sp", "bp", "si", "di"),
    1: ("al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil"),
}
_SUFFIX = {8: "", 4: "d", 2: "w", 1: "b"}
SIZE_NAME = {1: "byte", 2: "word", 4: "dword", 8: "qword", 16: "xmmword"}

RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI = range(8)

# Condition codes (the low nibble of Jcc/SETcc/CMOVcc opcodes), by the mnemonic suffix capstone prints.
CC = {"o": 0, "no": 1, "b": 2, "ae": 3, "e": 4, "ne": 5, "be": 6, "a": 7, "s": 8, "ns": 9, "p": 10, "np": 11,
      "l": 12, "ge": 13, "le": 14, "g": 15}
NEGATE = {"o": "no", "no": "o", "b": "ae", "ae": "b", "e": "ne", "ne": "e", "be": "a", "a": "be", "s": "ns",
          "ns": "s", "p": "np", "np": "p", "l": "ge", "ge": "l", "le": "g", "g": "le"}

# cmpss/cmpsd predicates (SSE, imm8 0-7) by the pseudo-mnemonic's infix (cmpltss = cmpss with 1).
CMP_PREDICATES = ("eq", "lt", "le", "unord", "neq", "nlt", "nle", "ord")


@dataclass(frozen=True, slots=True)
class Reg:
    """A register: `kind` 'g' (general-purpose, `size` 1/2/4/8 bytes) or 'x' (XMM, size 16)."""

    kind: str
    num: int
    size: int

    @property
    def name(self) -> str:
        if self.kind == "x":
            return f"xmm{self.num}"
        if self.num < 8:
            return _GPR[self.size][self.num]
        return f"r{self.num}{_SUFFIX[self.size]}"

    def sized(self, size: int) -> Reg:
        """The same general-purpose register at another width (eax of rax)."""
        return Reg(self.kind, self.num, size)

    def __str__(self) -> str:
        return self.name


def gpr(num: int, size: int = 8) -> Reg:
    """General-purpose register `num` at width `size` bytes."""
    return Reg("g", num, size)


def xmm(num: int) -> Reg:
    """XMM register `num`."""
    return Reg("x", num, 16)


@dataclass(frozen=True, slots=True)
class Mem:
    """A memory operand: `size` bytes at base + index*scale + disp (base/index: 64-bit GPRs or None)."""

    size: int
    base: Reg | None = None
    index: Reg | None = None
    scale: int = 1
    disp: int = 0

    def __str__(self) -> str:
        parts = []
        if self.base is not None:
            parts.append(self.base.name)
        if self.index is not None:
            parts.append(f"{self.index.name}*{self.scale}")
        text = " + ".join(parts)
        if not parts:
            text = hex(self.disp & 0xFFFFFFFFFFFFFFFF) if self.disp >= 0 else hex(self.disp)
        elif self.disp:
            text += f" + {hex(self.disp)}" if self.disp > 0 else f" - {hex(-self.disp)}"
        return f"{SIZE_NAME[self.size]} ptr [{text}]"


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate: the value as the instruction's operand reads it (signed or unsigned Python int)."""

    value: int

    def __str__(self) -> str:
        return hex(self.value) if abs(self.value) > 9 else str(self.value)


@dataclass(frozen=True, slots=True)
class Label:
    """A branch or call target by name (the assembler turns it into a displacement)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Rel:
    """A branch displacement already resolved: `disp` bytes from the end of the instruction, encoded in
    `width` bytes (1 or 4)."""

    disp: int
    width: int

    def __str__(self) -> str:
        return hex(self.disp)


Operand = Reg | Mem | Imm | Label | Rel


@dataclass(frozen=True, slots=True)
class Inst:
    """One x86-64 instruction: mnemonic and operands, destination first (Intel order)."""

    mnemonic: str
    ops: tuple = ()

    def text(self) -> str:
        """Intel syntax (capstone's spelling of registers and memory sizes)."""
        return self.mnemonic + (" " + ", ".join(str(o) for o in self.ops) if self.ops else "")

    def __str__(self) -> str:
        return self.text()
