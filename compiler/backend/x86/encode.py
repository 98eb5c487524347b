"""The x86-64 encoder: one instruction (compiler.backend.x86.isa) -> bytes, from a table of instruction forms
written in the Intel manual's notation (`F3 0F 58 /r`, `REX.W 81 /0 id`, `B8+r io`).

A form is a mnemonic, an operand signature and an operand encoding (the manual's Op/En column):

- signature tokens: r8/r16/r32/r64 (a general-purpose register of that width), m (memory of any size),
  m8..m128, rm8..rm64 (register or memory), x (XMM), xm32/xm64/xm128 (XMM or memory), i8/i16/i32/i64 (an
  immediate that fits, signed), u8 (0-255), one (the immediate 1), cl, al/ax/eax/rax (that register), rel
  (a branch target);
- encodings: RM (ModRM.reg <- op0, ModRM.rm <- op1), MR (the reverse), M (ModRM.rm <- op0, reg <- /digit),
  MI / RMI (plus an immediate), O / OI (register in the opcode's low bits), I (implicit register), D (branch),
  ZO (no operands).

The first form that matches wins, and forms are listed in the order LLVM's assembler picks them (the short
`83 /0 ib` before `05 id` before `81 /0 id`), so `llvm-mc -show-encoding` gives the same bytes (tested).
Mandatory prefixes (66, F2, F3) precede REX; REX is emitted when W is set, a register number is 8 or more, or
a byte register is spl/bpl/sil/dil. ModRM/SIB follow the manual: rsp/r12 bases need a SIB byte, rbp/r13 bases
need a displacement, no base is `[disp32]` through SIB base=101, and there is no RIP-relative addressing (the
backend never needs it).

Hand-written rather than taken from a library: no well-kept Python x86 *encoder* exists (capstone decodes,
keystone is unmaintained and not installable here), and the backend needs exact control over the forms.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass

from compiler.backend.x86.isa import CC, CMP_PREDICATES, Imm, Inst, Label, Mem, Reg, Rel


class EncodeError(ValueError):
    """No form of the mnemonic takes these operands, or an operand cannot be encoded."""


@dataclass(frozen=True)
class Form:
    """One encoding of a mnemonic (module docstring)."""

    mnemonic: str
    sig: tuple[str, ...]
    openc: str
    prefix: bytes  # mandatory prefix before REX (66/F2/F3)
    w: bool
    opcode: bytes
    digit: int | None  # ModRM.reg for /digit forms
    imm: int  # immediate bytes
    plus_r: bool
    suffix: bytes = b""  # opcode bytes after ModRM (the predicate of cmpXXss)


FORMS: dict[str, list[Form]] = {}


def _form(mnemonic: str, sig: str, openc: str, spec: str) -> None:
    prefix, opcode, suffix = b"", b"", b""
    w, digit, imm, plus_r = False, None, 0, False
    seen_op = seen_modrm = False
    for tok in spec.split():
        if tok == "REX.W":
            w = True
        elif tok.startswith("/"):
            digit = None if tok == "/r" else int(tok[1])
            seen_modrm = True
        elif tok in ("ib", "cb"):
            imm = 1
        elif tok == "iw":
            imm = 2
        elif tok in ("id", "cd"):
            imm = 4
        elif tok == "io":
            imm = 8
        elif tok.endswith("+r"):
            opcode += bytes([int(tok[:-2], 16)])
            plus_r = True
            seen_op = True
        else:
            b = int(tok, 16)
            if seen_modrm:
                suffix += bytes([b])
            elif not seen_op and not w and b in (0x66, 0xF2, 0xF3):
                prefix += bytes([b])
            else:
                opcode += bytes([b])
                seen_op = True
    f = Form(mnemonic, tuple(sig.split()), openc, prefix, w, opcode, digit, imm, plus_r, suffix)
    FORMS.setdefault(mnemonic, []).append(f)


def _sized(widths=(16, 32, 64)):
    """(width, operand-size prefix text) for the 16/32/64-bit variants of an instruction."""
    for wd in widths:
        yield wd, {16: "66", 32: "", 64: "REX.W"}[wd]


def _build() -> None:
    # ---- integer ALU: add or adc sbb and sub xor cmp (opcode group 1) ------------------------------------------
    for n, name in enumerate(("add", "or", "adc", "sbb", "and", "sub", "xor", "cmp")):
        base = 8 * n
        _form(name, "rm8 r8", "MR", f"{base:02X} /r")
        _form(name, "r8 m8", "RM", f"{base + 2:02X} /r")
        _form(name, "al i8", "I", f"{base + 4:02X} ib")
        _form(name, "rm8 i8", "MI", f"80 /{n} ib")
        for wd, p in _sized():
            _form(name, f"rm{wd} r{wd}", "MR", f"{p} {base + 1:02X} /r")
            _form(name, f"r{wd} m{wd}", "RM", f"{p} {base + 3:02X} /r")
            _form(name, f"rm{wd} i8", "MI", f"{p} 83 /{n} ib")
            acc = {16: "ax", 32: "eax", 64: "rax"}[wd]
            _form(name, f"{acc} i{min(wd, 32)}", "I", f"{p} {base + 5:02X} {'iw' if wd == 16 else 'id'}")
            _form(name, f"rm{wd} i{min(wd, 32)}", "MI", f"{p} 81 /{n} {'iw' if wd == 16 else 'id'}")
    # ---- moves ---------------------------------------------------------------------------------------------------
    _form("mov", "rm8 r8", "MR", "88 /r")
    _form("mov", "r8 m8", "RM", "8A /r")
    _form("mov", "r8 i8", "OI", "B0+r ib")
    _form("mov", "m8 i8", "MI", "C6 /0 ib")
    for wd, p in _sized():
        _form("mov", f"rm{wd} r{wd}", "MR", f"{p} 89 /r")
        _form("mov", f"r{wd} m{wd}", "RM", f"{p} 8B /r")
    _form("mov", "r16 i16", "OI", "66 B8+r iw")
    _form("mov", "r32 i32", "OI", "B8+r id")
    _form("mov", "rm64 i32", "MI", "REX.W C7 /0 id")
    _form("mov", "m16 i16", "MI", "66 C7 /0 iw")
    _form("mov", "m32 i32", "MI", "C7 /0 id")
    _form("movabs", "r64 i64", "OI", "REX.W B8+r io")
    for wd, p in ((32, ""), (64, "REX.W")):
        _form("movzx", f"r{wd} rm8", "RM", f"{p} 0F B6 /r")
        _form("movzx", f"r{wd} rm16", "RM", f"{p} 0F B7 /r")
        _form("movsx", f"r{wd} rm8", "RM", f"{p} 0F BE /r")
        _form("movsx", f"r{wd} rm16", "RM", f"{p} 0F BF /r")
        _form("lea", f"r{wd} m", "RM", f"{p} 8D /r")
    _form("movsxd", "r64 rm32", "RM", "REX.W 63 /r")
    # ---- test, imul, unary group 3, shifts (group 2) -----------------------------------------------------------
    _form("test", "rm8 r8", "MR", "84 /r")
    _form("test", "al i8", "I", "A8 ib")
    _form("test", "rm8 i8", "MI", "F6 /0 ib")
    for wd, p in _sized():
        imm = "iw" if wd == 16 else "id"
        _form("test", f"rm{wd} r{wd}", "MR", f"{p} 85 /r")
        _form("test", f"{ {16: 'ax', 32: 'eax', 64: 'rax'}[wd]} i{min(wd, 32)}", "I", f"{p} A9 {imm}")
        _form("test", f"rm{wd} i{min(wd, 32)}", "MI", f"{p} F7 /0 {imm}")
        _form("imul", f"r{wd} rm{wd}", "RM", f"{p} 0F AF /r")
        _form("imul", f"r{wd} rm{wd} i8", "RMI", f"{p} 6B /r ib")
        _form("imul", f"r{wd} rm{wd} i{min(wd, 32)}", "RMI", f"{p} 69 /r {imm}")
        for n, name in ((2, "not"), (3, "neg"), (4, "mul"), (6, "div"), (7, "idiv")):
            _form(name, f"rm{wd}", "M", f"{p} F7 /{n}")
        for n, name in ((4, "shl"), (5, "shr"), (7, "sar"), (0, "rol"), (1, "ror")):
            _form(name, f"rm{wd} one", "M1", f"{p} D1 /{n}")
            _form(name, f"rm{wd} cl", "MC", f"{p} D3 /{n}")
            _form(name, f"rm{wd} u8", "MI", f"{p} C1 /{n} ib")
    for n, name in ((2, "not"), (3, "neg")):
        _form(name, "rm8", "M", f"F6 /{n}")
    _form("cwd", "", "ZO", "66 99")
    _form("cdq", "", "ZO", "99")
    _form("cqo", "", "ZO", "REX.W 99")
    for cc, code in CC.items():
        _form(f"set{cc}", "rm8", "M", f"0F {0x90 + code:02X} /0")
        for wd, p in _sized():
            _form(f"cmov{cc}", f"r{wd} rm{wd}", "RM", f"{p} 0F {0x40 + code:02X} /r")
        _form(f"j{cc}", "rel8", "D", f"{0x70 + code:02X} cb")
        _form(f"j{cc}", "rel32", "D", f"0F {0x80 + code:02X} cd")
    # ---- control ----------------------------------------------------------------------------------------------
    _form("jmp", "rel8", "D", "EB cb")
    _form("jmp", "rel32", "D", "E9 cd")
    _form("jmp", "rm64", "M", "FF /4")
    _form("call", "rel32", "D", "E8 cd")
    _form("call", "rm64", "M", "FF /2")
    _form("ret", "", "ZO", "C3")
    _form("push", "r64", "O", "50+r")
    _form("pop", "r64", "O", "58+r")
    _form("nop", "", "ZO", "90")
    _form("hlt", "", "ZO", "F4")
    _form("int3", "", "ZO", "CC")
    _form("ud2", "", "ZO", "0F 0B")
    # ---- SSE / SSE2 / SSE4.1 -------------------------------------------------------------------------------------
    for name, op in (("add", 0x58), ("mul", 0x59), ("sub", 0x5C), ("min", 0x5D), ("div", 0x5E), ("max", 0x5F),
                     ("sqrt", 0x51)):
        _form(f"{name}ss", "x xm32", "RM", f"F3 0F {op:02X} /r")
        _form(f"{name}sd", "x xm64", "RM", f"F2 0F {op:02X} /r")
    _form("movss", "x xm32", "RM", "F3 0F 10 /r")
    _form("movss", "m32 x", "MR", "F3 0F 11 /r")
    _form("movsd", "x xm64", "RM", "F2 0F 10 /r")
    _form("movsd", "m64 x", "MR", "F2 0F 11 /r")
    _form("movaps", "x xm128", "RM", "0F 28 /r")
    _form("movaps", "m128 x", "MR", "0F 29 /r")
    _form("movdqu", "x xm128", "RM", "F3 0F 6F /r")
    _form("movdqu", "m128 x", "MR", "F3 0F 7F /r")
    _form("movd", "x rm32", "RM", "66 0F 6E /r")
    _form("movd", "rm32 x", "MR", "66 0F 7E /r")
    _form("movq", "x r64", "RM", "66 REX.W 0F 6E /r")
    _form("movq", "r64 x", "MR", "66 REX.W 0F 7E /r")
    for name, op in (("and", 0x54), ("andn", 0x55), ("or", 0x56), ("xor", 0x57)):
        _form(f"{name}ps", "x xm128", "RM", f"0F {op:02X} /r")
        _form(f"{name}pd", "x xm128", "RM", f"66 0F {op:02X} /r")
    _form("pxor", "x xm128", "RM", "66 0F EF /r")
    _form("ucomiss", "x xm32", "RM", "0F 2E /r")
    _form("ucomisd", "x xm64", "RM", "66 0F 2E /r")
    _form("cvtss2sd", "x xm32", "RM", "F3 0F 5A /r")
    _form("cvtsd2ss", "x xm64", "RM", "F2 0F 5A /r")
    for wd, p in ((32, ""), (64, "REX.W")):
        _form("cvtsi2ss", f"x rm{wd}", "RM", f"F3 {p} 0F 2A /r")
        _form("cvtsi2sd", f"x rm{wd}", "RM", f"F2 {p} 0F 2A /r")
        _form("cvttss2si", f"r{wd} xm32", "RM", f"F3 {p} 0F 2C /r")
        _form("cvttsd2si", f"r{wd} xm64", "RM", f"F2 {p} 0F 2C /r")
        _form("cvtss2si", f"r{wd} xm32", "RM", f"F3 {p} 0F 2D /r")
        _form("cvtsd2si", f"r{wd} xm64", "RM", f"F2 {p} 0F 2D /r")
    for k, pred in enumerate(CMP_PREDICATES):
        _form(f"cmp{pred}ss", "x xm32", "RM", f"F3 0F C2 /r {k:02X}")
        _form(f"cmp{pred}sd", "x xm64", "RM", f"F2 0F C2 /r {k:02X}")
    _form("roundss", "x xm32 u8", "RMI", "66 0F 3A 0A /r ib")
    _form("roundsd", "x xm64 u8", "RMI", "66 0F 3A 0B /r ib")
    # packed: four float32 or int32 lanes (compiler.backend.x86.vector)
    for name, op in (("add", 0x58), ("mul", 0x59), ("sub", 0x5C), ("min", 0x5D), ("div", 0x5E), ("max", 0x5F),
                     ("sqrt", 0x51)):
        _form(f"{name}ps", "x xm128", "RM", f"0F {op:02X} /r")
    _form("movups", "x xm128", "RM", "0F 10 /r")
    _form("movups", "m128 x", "MR", "0F 11 /r")
    for k, pred in enumerate(CMP_PREDICATES):
        _form(f"cmp{pred}ps", "x xm128", "RM", f"0F C2 /r {k:02X}")
    _form("roundps", "x xm128 u8", "RMI", "66 0F 3A 08 /r ib")
    _form("cvtdq2ps", "x xm128", "RM", "0F 5B /r")
    _form("cvttps2dq", "x xm128", "RM", "F3 0F 5B /r")
    _form("pshufd", "x xm128 u8", "RMI", "66 0F 70 /r ib")
    for name, op in (("paddd", "FE"), ("psubd", "FA"), ("pcmpeqd", "76"), ("pcmpgtd", "66"), ("pmulld", "38 40"),
                     ("pminsd", "38 39"), ("pminud", "38 3B"), ("pmaxsd", "38 3D"), ("pmaxud", "38 3F")):
        _form(name, "x xm128", "RM", f"66 0F {op} /r")
    for name, digit in (("psrld", 2), ("psrad", 4), ("pslld", 6)):
        _form(name, "x u8", "MI", f"66 0F 72 /{digit} ib")
    _form("pslldq", "x u8", "MI", "66 0F 73 /7 ib")
    _form("unpcklps", "x xm128", "RM", "0F 14 /r")
    _form("unpcklpd", "x xm128", "RM", "66 0F 14 /r")


_build()

_IMPLICIT = {"al": (0, 1), "ax": (0, 2), "eax": (0, 4), "rax": (0, 8), "cl": (1, 1)}


def _fits(value: int, bits: int) -> bool:
    return -(1 << (bits - 1)) <= value < (1 << (bits - 1))


def matches(tok: str, o) -> bool:
    """Whether operand o fits signature token tok (module docstring)."""
    if tok in _IMPLICIT:
        num, size = _IMPLICIT[tok]
        return isinstance(o, Reg) and o.kind == "g" and o.num == num and o.size == size
    if tok in ("rel8", "rel32"):
        return isinstance(o, Label) or (isinstance(o, Rel) and o.width == (1 if tok == "rel8" else 4))
    if isinstance(o, Imm):
        if tok == "one":
            return o.value == 1
        if tok == "u8":
            return 0 <= o.value <= 255
        if tok[0] == "i":
            bits = int(tok[1:])
            return _fits(o.value, bits) or (bits == 64 and 0 <= o.value < 1 << 64)
        return False
    if isinstance(o, Reg):
        if o.kind == "x":
            return tok in ("x", "xm32", "xm64", "xm128")
        return tok in (f"r{8 * o.size}", f"rm{8 * o.size}")
    if isinstance(o, Mem):
        if tok == "m":
            return True
        for pre in ("rm", "xm", "m"):
            if tok.startswith(pre) and tok[len(pre):].isdigit():
                return 8 * o.size == int(tok[len(pre):])
    return False


def find_form(inst: Inst) -> Form:
    """The first form of inst's mnemonic whose signature its operands match."""
    forms = FORMS.get(inst.mnemonic)
    if not forms:
        raise EncodeError(f"unknown mnemonic {inst.mnemonic!r}")
    for f in forms:
        if len(f.sig) == len(inst.ops) and all(matches(t, o) for t, o in zip(f.sig, inst.ops, strict=True)):
            return f
    given = ", ".join(f"{type(o).__name__} {o}" for o in inst.ops)
    raise EncodeError(f"no form of {inst.mnemonic} takes ({given})")


def _needs_rex_byte(r: Reg) -> bool:
    return r.kind == "g" and r.size == 1 and 4 <= r.num < 8


def _modrm_mem(reg_field: int, m: Mem) -> tuple[bytes, int, int]:
    """(ModRM [SIB] [disp] bytes, REX.X, REX.B) for a memory operand."""
    if m.base is not None and (m.base.kind != "g" or m.base.size != 8):
        raise EncodeError(f"base {m.base} is not a 64-bit general-purpose register")
    if m.index is not None and (m.index.kind != "g" or m.index.size != 8 or m.index.num == 4):
        raise EncodeError(f"index {m.index} cannot index memory")
    if m.scale not in (1, 2, 4, 8):
        raise EncodeError(f"scale {m.scale} is not 1, 2, 4 or 8")
    if not _fits(m.disp, 32):
        raise EncodeError(f"displacement {m.disp:#x} does not fit 32 bits")
    ss = {1: 0, 2: 1, 4: 2, 8: 3}[m.scale]
    rx = (m.index.num >> 3) if m.index is not None else 0
    reg3 = (reg_field & 7) << 3
    if m.base is None:  # [index*scale + disp32] or [disp32]
        idx = (m.index.num & 7) if m.index is not None else 4
        return bytes([reg3 | 4, (ss << 6) | (idx << 3) | 5]) + struct.pack("<i", m.disp), rx, 0
    b = m.base.num
    if m.disp == 0 and (b & 7) != 5:
        mod, disp = 0, b""
    elif _fits(m.disp, 8):
        mod, disp = 1, struct.pack("<b", m.disp)
    else:
        mod, disp = 2, struct.pack("<i", m.disp)
    if m.index is None and (b & 7) != 4:
        return bytes([(mod << 6) | reg3 | (b & 7)]) + disp, 0, b >> 3
    idx = (m.index.num & 7) if m.index is not None else 4
    return bytes([(mod << 6) | reg3 | 4, (ss << 6) | (idx << 3) | (b & 7)]) + disp, rx, b >> 3


def _imm_bytes(value: int, n: int) -> bytes:
    return (value & ((1 << (8 * n)) - 1)).to_bytes(n, "little")


def signed_imms(inst: Inst) -> Inst:
    """inst with immediates written as the signed values of its operand size (0xFFFFFFF0 of a 32-bit `and` is
    -16), so the short sign-extended forms are found as LLVM finds them."""
    first = inst.ops[0] if inst.ops else None
    if not isinstance(first, (Reg, Mem)) or (isinstance(first, Reg) and first.kind != "g"):
        return inst
    bits = 8 * first.size
    if not any(isinstance(o, Imm) and (1 << (bits - 1)) <= o.value < (1 << bits) for o in inst.ops):
        return inst
    ops = tuple(Imm(o.value - (1 << bits)) if isinstance(o, Imm) and (1 << (bits - 1)) <= o.value < (1 << bits)
                else o for o in inst.ops)
    return Inst(inst.mnemonic, ops)


@functools.lru_cache(maxsize=1 << 16)
def encode(inst: Inst) -> bytes:
    """The machine code of one instruction (branch targets as resolved `Rel` operands). Memoized: the bytes depend
    on the (frozen) instruction alone, `assemble` encodes each instruction at least twice (its size, then its
    code), and kernels share most of their instructions; finding the form was most of a CPU kernel's assembly."""
    inst = signed_imms(inst)
    f = find_form(inst)
    ops = inst.ops
    rex_w = 1 if f.w else 0
    rex_r = rex_x = rex_b = 0
    tail = b""
    opcode = f.opcode
    regs = [o for o in ops if isinstance(o, Reg)]
    force_rex = any(_needs_rex_byte(r) for r in regs)
    if f.openc in ("RM", "MR", "M", "MI", "RMI", "M1", "MC"):
        if f.openc == "MR":
            rm, reg = ops[0], ops[1]
        elif f.openc in ("RM", "RMI"):
            reg, rm = ops[0], ops[1]
        else:
            rm, reg = ops[0], None
        reg_field = f.digit if reg is None else reg.num
        if f.digit is not None and reg is not None:
            raise EncodeError(f"form {f.mnemonic} {f.sig} mixes /digit and a register")
        rex_r = reg_field >> 3
        if isinstance(rm, Mem):
            modrm, rex_x, rex_b = _modrm_mem(reg_field, rm)
        else:
            modrm = bytes([0xC0 | ((reg_field & 7) << 3) | (rm.num & 7)])
            rex_b = rm.num >> 3
        tail = modrm + f.suffix
        if f.openc in ("MI", "RMI"):
            tail += _imm_bytes(ops[-1].value, f.imm)
    elif f.openc in ("O", "OI"):
        r = ops[0]
        opcode = opcode[:-1] + bytes([opcode[-1] + (r.num & 7)])
        rex_b = r.num >> 3
        if f.openc == "OI":
            tail = _imm_bytes(ops[1].value, f.imm)
    elif f.openc == "I":
        tail = _imm_bytes(ops[1].value, f.imm)
    elif f.openc == "D":
        o = ops[0]
        if not isinstance(o, Rel):
            raise EncodeError(f"{inst.mnemonic} to an unresolved label {o}")
        if not _fits(o.disp, 8 * f.imm):
            raise EncodeError(f"branch displacement {o.disp} does not fit {f.imm} bytes")
        tail = _imm_bytes(o.disp, f.imm)
    rex = 0x40 | (rex_w << 3) | (rex_r << 2) | (rex_x << 1) | rex_b
    return f.prefix + (bytes([rex]) if rex != 0x40 or force_rex else b"") + opcode + tail


def length(inst: Inst) -> int:
    """Bytes of inst's encoding (branches: with the displacement width they carry)."""
    return len(encode(inst))


@dataclass
class Assembled:
    """Machine code with the offset of every label and of every instruction (in input order)."""

    code: bytes
    labels: dict[str, int]
    offsets: list[int]


_SHORT = {"jmp"} | {f"j{cc}" for cc in CC}


def assemble(items: list[Inst | str]) -> Assembled:
    """Instructions and label names (str) -> code. Branches to labels get the shortest displacement that
    reaches (rel8, else rel32), found by growing the ones that do not fit until nothing changes."""
    insts = [(i, it) for i, it in enumerate(items) if isinstance(it, Inst)]
    wide = {i for i, it in insts if any(isinstance(o, Label) for o in it.ops) and it.mnemonic not in _SHORT}
    while True:
        offs, labels, pos = {}, {}, 0
        sizes = {}
        for i, it in enumerate(items):
            if isinstance(it, str):
                labels[it] = pos
                continue
            offs[i] = pos
            sizes[i] = len(encode(_resolved(it, 0, 4 if i in wide else 1)))
            pos += sizes[i]
        grow = set()
        for i, it in insts:
            tgt = next((o for o in it.ops if isinstance(o, Label)), None)
            if tgt is None:
                continue
            if tgt.name not in labels:
                raise EncodeError(f"branch to undefined label {tgt.name}")
            if i not in wide and not _fits(labels[tgt.name] - (offs[i] + sizes[i]), 8):
                grow.add(i)
        if not grow:
            break
        wide |= grow
    out = bytearray()
    for i, it in insts:
        tgt = next((o for o in it.ops if isinstance(o, Label)), None)
        disp = labels[tgt.name] - (offs[i] + sizes[i]) if tgt is not None else 0
        out += encode(_resolved(it, disp, 4 if i in wide else 1))
    return Assembled(bytes(out), labels, [offs[i] for i, _ in insts])


def _resolved(inst: Inst, disp: int, width: int) -> Inst:
    if not any(isinstance(o, Label) for o in inst.ops):
        return inst
    return Inst(inst.mnemonic, tuple(Rel(disp, width) if isinstance(o, Label) else o for o in inst.ops))
