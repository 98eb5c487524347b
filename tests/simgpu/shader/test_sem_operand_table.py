"""Inline constants and literals of every operand type, table-driven from the RDNA3 ISA reference.

The reference's operand table (section 3.x, "Scalar ALU operands" / VALU source codes): codes 128-192
are the integers 0..64, 193-208 are -1..-16, 240-247 are +-0.5, +-1.0, +-2.0, +-4.0 and 248 is 1/(2*pi);
255 is a 32-bit literal dword. What an operand reads depends on its type:
- integer constants are the integer, sign-extended to the operand's width (in a float operand too: the
  integer's bits, not its value converted);
- float constants are the bit pattern of the operand's float type (f16, f32, f64); a 64-bit integer
  operand reads the f64 pattern; a packed f16 operand reads the f16 bits in its low half and 0 in its
  high half, a packed integer operand the f32 pattern (hardware-verified, see test_sem_regressions);
- a literal is the dword itself for 32-bit operands, its low half for 16-bit ones, and for 64-bit
  operands: the high half of an f64, zero-extended for bit/unsigned ones, sign-extended for signed ones.

Each type runs one kernel: an identity instruction per code (`max(x, x)`, a move or a shift by 0), its
result stored for the check.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from simgpu.testbed import Testbed

FLOATS = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0}
INV_2PI = {"f16": 0x3118, "f32": 0x3E22F983, "f64": 0x3FC45F306DC9C882}  # the reference's 1/(2*pi) patterns
CODES = list(range(128, 209)) + list(range(240, 249))
LITERALS = [0x12345678, 0x80000000, 0xFFFF8001, 0x3F800000, 0x00010000, 0xDEADBEEF]
M16, M32, M64 = 0xFFFF, 0xFFFFFFFF, (1 << 64) - 1


WIDE = ("f64", "b64", "i64", "s_b64", "s_i64")


def code_text(code: int, t: str) -> str:
    """The assembler's spelling of an inline-constant code (LLVM's: 1/(2*pi) with f64 digits for 64-bit)."""
    if code <= 192:
        return str(code - 128)
    if code <= 208:
        return str(192 - code)
    if code == 248:
        return "0.15915494309189532" if t in WIDE else "0.15915494"
    return repr(FLOATS[code])


def float_bits(x: float, t: str) -> int:
    if t == "f16":
        return int(np.array(x, np.float16).view(np.uint16))
    fmt = {"f32": "<f", "f64": "<d"}[t]
    return int.from_bytes(struct.pack(fmt, x), "little")


def integer(code: int) -> int:
    return code - 128 if code <= 192 else 192 - code


def constant(code: int, t: str) -> int:
    """The bits an operand of type t reads for an inline-constant code (the reference's table)."""
    bits = {"f16": 16, "b16": 16, "f32": 32, "b32": 32, "f64": 64, "b64": 64, "pk_f16": 32, "pk_i16": 32}[t]
    if code <= 208:
        return integer(code) & ((1 << bits) - 1)
    ft = {"b16": "f16", "b32": "f32", "b64": "f64", "pk_f16": "f16", "pk_i16": "f32"}.get(t, t)
    return INV_2PI[ft] if code == 248 else float_bits(FLOATS[code], ft)


def literal(value: int, t: str) -> int:
    """The bits an operand of type t reads for a 32-bit literal."""
    if t in ("f16", "b16"):
        return value & M16
    if t == "f64":
        return value << 32
    if t == "i64":
        return value | (0xFFFFFFFF00000000 if value & 0x80000000 else 0)
    return value  # b32, f32, packed, and zero-extended b64


# type -> (identity instruction text for source X into v20/v[20:21], result bits, expected for a constant).
# For packed ops the constant's high lane reads the constant's high half (op_sel_hi defaults to 1).
TYPES = {
    "b32": ("v_mov_b32 v20, {x}", 32),
    "f32": ("v_max_f32_e64 v20, {x}, {x}", 32),
    "f16": ("v_max_f16_e64 v20, {x}, {x}", 16),
    "b16": ("v_add_nc_u16 v20, {x}, 0", 16),
    "f64": ("v_max_f64 v[20:21], {x}, {x}", 64),
    "b64": ("v_lshlrev_b64 v[20:21], 0, {x}", 64),
    "i64": ("v_ashrrev_i64 v[20:21], 0, {x}", 64),
    "pk_f16": ("v_pk_max_f16 v20, {x}, {x}", 32),
    "pk_i16": ("v_pk_max_u16 v20, {x}, {x}", 32),
    "s_b32": ("s_mov_b32 s40, {x}\nv_mov_b32 v20, s40", 32),
    "s_b64": ("s_mov_b64 s[40:41], {x}\nv_mov_b32 v20, s40\nv_mov_b32 v21, s41", 64),
    "s_i64": ("s_ashr_i64 s[40:41], {x}, 0\nv_mov_b32 v20, s40\nv_mov_b32 v21, s41", 64),
}
CONST_TYPE = {"s_b32": "b32", "s_b64": "b64", "s_i64": "b64", "i64": "b64"}  # constants: same as these
LIT_TYPE = {"s_b32": "b32", "s_b64": "b64", "s_i64": "i64", "pk_f16": "b32", "pk_i16": "b32"}


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 26)


def run_all(tb, t: str, operands: list[str]) -> list[int]:
    """The result bits of TYPES[t]'s instruction for each operand text, in one kernel."""
    text, bits = TYPES[t]
    # MODE: round to nearest even, denormals kept (an integer constant in a float operand is a denormal
    # pattern), IEEE on
    body = ["s_load_b64 s[4:5], s[0:1], 0x0", "s_waitcnt lgkmcnt(0)", "v_mov_b32 v4, 0",
            "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 10), 0x2f0"]
    for k, x in enumerate(operands):
        body += ["v_mov_b32 v20, 0", "v_mov_b32 v21, 0", text.format(x=x),
                 f"global_store_b64 v4, v[20:21], s[4:5] offset:{8 * k}"]
    k = tb.load_asm("\n".join(body + ["s_endpgm"]), args=1)
    out = tb.alloc(8 * len(operands))
    tb.launch(k, [out], (1,), (32,))
    raw = tb.download(out, np.uint64, len(operands))
    return [int(v) & ((1 << bits) - 1) for v in raw]


@pytest.mark.parametrize("t", sorted(TYPES))
def test_inline_constants_of_every_operand_type(tb, t):
    # LLVM accepts only the integer constants in a 16-bit integer operand (its float codes do not
    # disassemble: "source code 240 is not allowed here"), so those are not run.
    codes = [c for c in CODES if c <= 208] if t == "b16" else CODES
    got = run_all(tb, t, [code_text(c, t) for c in codes])
    ct = CONST_TYPE.get(t, t)
    want = [constant(c, ct) for c in codes]
    bad = [(code_text(c, t), hex(g), hex(w)) for c, g, w in zip(codes, got, want, strict=True) if g != w]
    assert not bad, f"{t}: {bad}"


@pytest.mark.parametrize("t", sorted(TYPES))
def test_literals_of_every_operand_type(tb, t):
    if t in ("f16", "b16"):  # a 16-bit operand's literal is printed and encoded as its low 16 bits
        values = [v & M16 for v in LITERALS]
    else:
        values = LITERALS
    # values that equal an inline constant would be folded to it by the assembler, as llvm-mc does
    got = run_all(tb, t, [hex(v) for v in values])
    lt = LIT_TYPE.get(t, t)
    want = [literal(v, lt) for v in values]
    bad = [(hex(v), hex(g), hex(w)) for v, g, w in zip(values, got, want, strict=True) if g != w]
    assert not bad, f"{t}: {bad}"
