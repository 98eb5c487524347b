"""gfx11 operand spellings: inline constants, literals per operand type, registers after allocation.

An immediate is an inline constant when the hardware has a code for it (integers -16..64; +-0.5, +-1, +-2, +-4
and 1/(2*pi) in the operand's float format), otherwise a 32-bit literal (one per instruction; for a 64-bit
float operand the literal is the high half, so only values whose low 32 bits are zero have one).
"""

from __future__ import annotations

import struct

from compiler.backend.mir import Imm, Phys, Sub

_INLINE_FLOATS = (0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0)
INV_2PI = 0.15915494309189532
VCC, EXEC, NULL, OFF, SCC, M0 = Phys("vcc_lo"), Phys("exec_lo"), Phys("null"), Phys("off"), Phys("scc"), Phys("m0")


def f32_bits(x: float) -> int:
    """The IEEE single bits of x (rounded to nearest)."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x: float) -> int:
    """The IEEE double bits of x."""
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f16_bits(x: float) -> int:
    """The IEEE half bits of x (rounded to nearest; overflow to inf)."""
    import numpy as np
    with np.errstate(over="ignore"):
        return int(np.array([x], np.float16).view(np.uint16)[0])


def _float_inline(bits_fn, bits: int) -> str | None:
    for c in _INLINE_FLOATS:
        if bits_fn(c) == bits:
            return repr(c)
    if bits_fn(INV_2PI) == bits:
        return "0.15915494309189532"
    return None


def imm(value, kind: str) -> Imm | None:
    """The immediate operand for `value` read as `kind` ('b32' integer, 'f32', 'f16', 'f64', 'b64' integer,
    'b16' integer), or None when it needs a register (an f64 with nonzero low bits, a 64-bit integer outside
    the inline range)."""
    if kind in ("b32", "b16"):
        v = int(value) & (0xFFFFFFFF if kind == "b32" else 0xFFFF)
        s = v - (1 << 32) if kind == "b32" and v >= 1 << 31 else v
        if kind == "b16" and v >= 1 << 15:
            s = v - (1 << 16)
        if -16 <= s <= 64:
            return Imm(s, str(s))
        return Imm(v, hex(v))
    if kind == "b64":
        v = int(value) & ((1 << 64) - 1)
        s = v - (1 << 64) if v >= 1 << 63 else v
        return Imm(s, str(s)) if -16 <= s <= 64 else None
    if kind == "f32":
        bits = value if isinstance(value, int) else f32_bits(value)
        text = _float_inline(f32_bits, bits) if bits else "0"
        if text is None:
            text = hex(bits)
        return Imm(bits, text)
    if kind == "f16":
        bits = value if isinstance(value, int) else f16_bits(value)
        text = _float_inline(f16_bits, bits) if bits else "0"
        return Imm(bits, text if text is not None else hex(bits))
    if kind == "f64":
        bits = value if isinstance(value, int) else f64_bits(value)
        if bits == 0:
            return Imm(0, "0")
        text = _float_inline(f64_bits, bits)
        if text is not None:
            return Imm(bits, text)
        if bits & 0xFFFFFFFF == 0:
            return Imm(bits, hex(bits >> 32))
        return None
    raise ValueError(f"unknown immediate kind {kind}")


def is_inline(o) -> bool:
    """Whether an operand is an inline constant (no literal dword)."""
    if not isinstance(o, Imm):
        return False
    t = o.text
    return not t.startswith("0x") or t in ("0x0",)


def reg_text(o: Sub) -> str:
    """An allocated register operand as the assembler spells it (s5, v[2:3], -|v1|)."""
    p = o.reg.phys
    if p is None:
        raise ValueError(f"unallocated register {o.reg!r}")
    a = p + o.off
    name = f"{o.rc}{a}" if o.n == 1 else f"{o.rc}[{a}:{a + o.n - 1}]"
    if o.abs:
        name = f"|{name}|"
    return "-" + name if o.neg else name


def text(o) -> str:
    """Any operand as text."""
    if isinstance(o, Sub):
        return reg_text(o)
    if isinstance(o, Phys):
        return ("-" if o.neg else "") + o.name
    return str(o)


def nan_bits(kind: str) -> int:
    """The canonical quiet NaN of a float kind."""
    return {"f32": 0x7FC00000, "f16": 0x7E00, "f64": 0x7FF8000000000000}[kind]

