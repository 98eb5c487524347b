"""`Inst`, one decoded instruction, and the family registry the codec dispatches through.

The codec is split by instruction family (scalar, vector ALU, memory); each family module registers
a `Family` for the encodings it owns (of every architecture: an encoding name means one layout per
architecture, arch.py) when it is imported, and codec.py imports every family module: the registry is full
once the codec is loaded (simgpu.isa loads it at the first use of decode, assemble or Inst). The core
identifies the encoding of a dword, hands the bytes to the family's decoder, and asks the family to print or
assemble; `Inst.encode` is generic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .arch import DEFAULT, get_arch
from .encodings import DPP8, DPP16, SDWA, SDWAB


@dataclass
class Inst:
    """One decoded instruction: encoding, opcode, LLVM mnemonic, named fields and extension dwords."""

    encoding: str
    op: int
    mnemonic: str
    fields: dict[str, int]
    literal: int | None = None
    dpp: dict[str, int] | None = None  # DPP16, DPP8 or SDWA control fields; "kind" is 16, 8 or "sdwa"
    extra: bytes = b""  # MIMG NSA address bytes
    prefix: bytes = b""  # a word before the base encoding: gfx950's v_mfma_ld_scale_b32 before a scaled MFMA
    size: int = 0
    offset: int = 0
    operands: list[str] = field(default_factory=list)  # operand texts as LLVM prints them
    info: dict = field(default_factory=dict)  # the table entry of this opcode
    arch: str = DEFAULT  # the architecture whose encoding this is (arch.py)

    def encode(self) -> bytes:
        """The instruction's bytes: prefix word(s), base word(s), DPP control, literal, NSA addresses."""
        enc = get_arch(self.arch).encodings[self.encoding]
        out = enc.pack(self.fields).to_bytes(enc.size, "little")
        if self.dpp is not None:  # DPP16/DPP8 control, or gfx9's SDWA dword (SDWAB after VOPC)
            layout = {16: DPP16, 8: DPP8, "sdwa": SDWAB if self.encoding == "VOPC" else SDWA}[self.dpp["kind"]]
            out += layout.pack({k: v for k, v in self.dpp.items() if k != "kind"}).to_bytes(4, "little")
        if self.literal is not None:
            out += self.literal.to_bytes(4, "little")
        return self.prefix + out + self.extra

    def text(self) -> str:
        """The instruction as llvm-mc prints it."""
        return family_of(self.encoding).format(self)

    def __str__(self) -> str:
        return self.text()


@dataclass
class Family:
    """The decoder, printer and assembler of a group of encodings."""

    name: str
    encodings: tuple[str, ...]
    decode: Callable[[str, bytes, int, str], Inst]  # (encoding, data, offset, arch name) -> Inst
    format: Callable[[Inst], str]
    # (mnemonic, operand tokens, ctx) -> bytes; ctx.arch names the architecture
    assemble: Callable[[str, list[str], object], bytes | None]
    mnemonics: Callable[[str], frozenset[str]]  # (arch name) -> the mnemonics this family assembles
    # The decoder under LLVM's True16 mode (-mattr=+real-true16), for families whose encodings it changes
    decode16: Callable[[str, bytes, int, str], Inst] | None = None


_FAMILIES: dict[str, Family] = {}


def register(family: Family) -> None:
    """Make a family responsible for its encodings."""
    for enc in family.encodings:
        _FAMILIES[enc] = family


def family_of(encoding: str) -> Family:
    return _FAMILIES[encoding]


def families() -> list[Family]:
    seen: dict[str, Family] = {}
    for f in _FAMILIES.values():
        seen[f.name] = f
    return list(seen.values())
