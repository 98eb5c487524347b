"""The codec's entry points: decode, disassemble and assemble machine code of gfx1100 (the default) or
another architecture of arch.py (`arch="gfx1201"`).

Encoding identification and line handling live here; everything per instruction is in the family
modules (scalar, valu, memory), which are driven by the tables generated from LLVM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import memory, scalar, valu  # noqa: F401  (importing a family module registers its Family: inst.py)
from .arch import DEFAULT, Arch, get_arch
from .encodings import identify
from .errors import AsmError, DecodeError
from .inst import Inst, families, family_of


def decode(data: bytes, offset: int = 0, true16: bool | None = False, arch: str | Arch | None = None) -> Inst:
    """Decode the instruction at `offset` of `data` (machine code of `arch`, default gfx1100).

    `true16` picks LLVM's mode: False is llvm-mc's default (fake16), True its -mattr=+real-true16 (16-bit
    VGPR halves printed vN.l/vN.h, and encodings only that mode has, like v_mov_b16_e64), None either:
    the default first, then True16 (what compiled code from an LLVM with real True16 registers needs)."""
    data = bytes(data)
    if offset < 0 or offset + 4 > len(data):
        raise DecodeError("truncated instruction: fewer than 4 bytes", offset)
    word = int.from_bytes(data[offset:offset + 4], "little")
    a = get_arch(arch)
    enc = identify(word, a.family)
    if enc is None:
        raise DecodeError(f"no {a.family} encoding has these high bits", offset, word)
    fam = family_of(enc)
    if true16 is False or fam.decode16 is None:
        inst = fam.decode(enc, data, offset, a.name)
    elif true16:
        inst = fam.decode16(enc, data, offset, a.name)
    else:
        try:
            inst = fam.decode(enc, data, offset, a.name)
        except DecodeError:
            inst = fam.decode16(enc, data, offset, a.name)
    inst.offset = offset
    return inst


def fetch_size(word0: int, arch: str | Arch | None = None) -> int:
    """The most bytes the instruction whose first dword is `word0` can occupy: its encoding's base words, one
    extension dword (a literal or DPP control), MIMG's NSA address dwords, or the MFMA after gfx950's
    v_mfma_ld_scale_b32. Fetching that many and decoding gives the instruction and its exact `size`."""
    a = get_arch(arch)
    enc = a.identify(word0)
    if enc is None:
        return 4
    e = a.encodings[enc]
    if enc == "VOP3P" and (entry := valu.entry(enc, e.field("op").get(word0), arch=a.name)) and entry.get("pair"):
        return 2 * e.size  # gfx950's v_mfma_ld_scale_b32 and the MFMA it may pair with (a scaled MFMA)
    nsa = e.field("nsa").get(word0) if enc == "MIMG" else 0
    return e.size + 4 * max(1, nsa)


def decode_all(data: bytes, true16: bool | None = False, arch: str | Arch | None = None) -> list[Inst]:
    """Decode a whole code buffer, instruction after instruction."""
    out, pos = [], 0
    while pos < len(data):
        inst = decode(data, pos, true16, arch)
        out.append(inst)
        pos += inst.size
    return out


def disassemble(data: bytes, true16: bool = False, arch: str | Arch | None = None) -> list[str]:
    """One line per instruction, as `llvm-mc --disassemble -mcpu=<arch>` prints it (with
    `-mattr=+real-true16` when `true16`)."""
    return [inst.text() for inst in decode_all(data, true16, arch)]


@dataclass
class AsmContext:
    """What a family's assembler may need beyond the operands: labels, the current offset, the line."""

    line: int = 0
    column: int = 1
    pc: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    final: bool = False  # second pass: every label must resolve
    arch: str = DEFAULT  # the architecture being assembled for (arch.py)

    def label(self, name: str) -> int | None:
        if name in self.labels:
            return self.labels[name]
        if self.final:
            return None
        return self.pc  # first pass: sizes do not depend on branch targets

    def error(self, message: str, token: str = "") -> AsmError:
        return AsmError(message, line=self.line, column=self.column, token=token)


_LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*):")


def split_operands(rest: str) -> list[str]:
    """Split an operand string at top-level commas and spaces, keeping brackets and parentheses whole."""
    toks, cur, depth = [], [], 0
    for ch in rest:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            if cur:
                toks.append("".join(cur))
                cur = []
            continue
        cur.append(ch)
    if cur:
        toks.append("".join(cur))
    return toks


_BLOCK_COMMENT = re.compile(r"/\*.*?\*/")


def _strip_comment(line: str) -> str:
    line = _BLOCK_COMMENT.sub(" ", line)  # C-style comments, as llvm-mc writes /*Invalid register...*/ notes
    for marker in ("//", ";"):
        i = line.find(marker)
        if i >= 0:
            line = line[:i]
    return line


def _statements(source: str) -> list[tuple[int, int, str | None, str]]:
    """(line, column, label or None, statement text) for each non-empty line of source."""
    out = []
    for n, raw in enumerate(source.splitlines(), 1):
        text = _strip_comment(raw)
        col = len(text) - len(text.lstrip()) + 1
        text = text.strip()
        while True:
            m = _LABEL.match(text)
            if not m:
                break
            out.append((n, col, m.group(1), ""))
            text = text[m.end():].strip()
        if text and not text.startswith("."):
            out.append((n, col, None, text))
    return out


def _assemble_one(text: str, ctx: AsmContext) -> bytes:
    parts = text.split(None, 1)
    mnemonic, rest = parts[0], (parts[1] if len(parts) > 1 else "")
    toks = split_operands(rest)
    error = None
    try:
        out = _assemble_mnemonic(mnemonic, toks, ctx)
    except AsmError as e:  # e.g. a VOPC name that is also its DPP form's: the plain forms may still fit
        out, error = None, e
    if out is not None:
        return out
    # Like llvm-mc, a VALU mnemonic without an encoding suffix takes the shortest encoding that fits.
    for suffix in ("_e32", "_e64"):
        try:
            out = _assemble_mnemonic(mnemonic + suffix, toks, ctx)
        except AsmError as e:  # a known form that does not fit: its reason is the one to report
            error = e
            continue
        if out is not None:
            return out
    if error is not None:
        raise error
    raise AsmError(f"expected a {ctx.arch} instruction mnemonic", line=ctx.line, column=ctx.column, token=mnemonic)


def _assemble_mnemonic(mnemonic: str, toks: list[str], ctx: AsmContext) -> bytes | None:
    for fam in families():
        if mnemonic in fam.mnemonics(ctx.arch):
            out = fam.assemble(mnemonic, toks, ctx)
            if out is not None:
                return out
    return None


def assemble(source: str, arch: str | Arch | None = None) -> bytes:
    """Assemble LLVM-syntax assembly of `arch` (default gfx1100; labels, comments, blank lines) to llvm-mc's
    bytes. Both syntaxes of 16-bit operands are accepted: the default one and True16's vN.l/vN.h halves."""
    name = get_arch(arch).name
    stmts = _statements(source)
    labels: dict[str, int] = {}
    # a first pass sizes the statements for the labels' offsets; a source that defines none needs only the final one
    for final in (False, True) if any(label is not None for _, _, label, _ in stmts) else (True,):
        out = bytearray()
        for line, col, label, text in stmts:
            if label is not None:
                labels[label] = len(out)
                continue
            ctx = AsmContext(line=line, column=col, pc=len(out), labels=labels, final=final, arch=name)
            try:
                out += _assemble_one(text, ctx)
            except AsmError as e:
                if e.line:
                    raise
                # raised below the statement (an operand parser without the context): give it the position
                raise AsmError(e.expected, line=line, column=col, token=e.token) from None
    return bytes(out)
