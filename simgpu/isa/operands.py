"""Operand codes of gfx11 and their LLVM spellings: registers, register ranges, inline constants.

A source operand is a 9-bit code (8-bit in scalar encodings): 0-105 SGPRs, 106/107 VCC halves,
108-123 TTMPs, 124 null, 125 M0, 126/127 EXEC halves, 128-208 integer inline constants, 240-248 float
inline constants, 255 a 32-bit literal that follows the instruction, 256-511 VGPRs.
"""

from __future__ import annotations

import re

from .errors import AsmError

SGPR_MAX = 105
VCC_LO, VCC_HI, NULL, M0, EXEC_LO, EXEC_HI = 106, 107, 124, 125, 126, 127
TTMP0 = 108
LITERAL = 255
VGPR0 = 256

_NAMED = {VCC_LO: "vcc_lo", VCC_HI: "vcc_hi", NULL: "null", M0: "m0", EXEC_LO: "exec_lo", EXEC_HI: "exec_hi",
          235: "src_shared_base", 236: "src_shared_limit", 237: "src_private_base", 238: "src_private_limit",
          239: "src_pops_exiting_wave_id", 251: "src_vccz", 252: "src_execz", 253: "src_scc",
          254: "src_lds_direct"}
# 64-bit (pair) spellings of the named registers.
_NAMED64 = {VCC_LO: "vcc", EXEC_LO: "exec", NULL: "null"}
_FLOATS = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0}
INV_2PI_32 = "0.15915494"
INV_2PI_64 = "0.15915494309189532"


def reg_range(prefix: str, first: int, count: int) -> str:
    """LLVM's spelling of `count` consecutive registers: v5, v[4:5], s[0:3], ttmp[4:7]."""
    if count == 1:
        return f"{prefix}{first}"
    return f"{prefix}[{first}:{first + count - 1}]"


def scalar_name(code: int, count: int = 1) -> str | None:
    """Spelling of a scalar register code (SGPR, VCC, TTMP, M0, NULL, EXEC) holding `count` dwords."""
    if code <= SGPR_MAX:
        return reg_range("s", code, count) if code + count <= SGPR_MAX + 1 else None
    if TTMP0 <= code < TTMP0 + 16:
        return reg_range("ttmp", code - TTMP0, count) if code - TTMP0 + count <= 16 else None
    if count == 1:
        return _NAMED.get(code)
    if count == 2 and code in _NAMED64:
        return _NAMED64[code]
    return None


def inline_constant(code: int, bits: int = 32) -> str | None:
    """Spelling of an inline constant code for an operand of `bits` width, or None."""
    if 128 <= code <= 192:
        return str(code - 128)
    if 193 <= code <= 208:
        return str(192 - code)
    if code in _FLOATS:
        return repr(_FLOATS[code])
    if code == 248:
        return INV_2PI_64 if bits == 64 else INV_2PI_32
    return None


def src_name(code: int, count: int = 1, bits: int = 32) -> str | None:
    """Spelling of a (non-literal) source code: a register range, special register or inline constant."""
    if code >= VGPR0:
        return reg_range("v", code - VGPR0, count) if code - VGPR0 + count <= 256 else None
    name = scalar_name(code, count)
    if name is not None:
        return name
    if code == NULL:  # a source of three or more dwords reads null too (scalar destinations do not)
        return "null"
    if code in _NAMED and code >= 235:
        return _NAMED[code]
    return inline_constant(code, bits)


_REG_RE = re.compile(r"^(v|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])$")
_NAME_TO_CODE = {v: k for k, v in _NAMED.items()} | {v: k for k, v in _NAMED64.items()}
_CONST_TO_CODE = {repr(v): k for k, v in _FLOATS.items()} | {INV_2PI_32: 248, INV_2PI_64: 248}


def parse_register(tok: str) -> tuple[str, int, int] | None:
    """('v'|'s'|'ttmp', first, count) for a register or range token, else None."""
    m = _REG_RE.match(tok)
    if not m:
        return None
    if m.group(2) is not None:
        return m.group(1), int(m.group(2)), 1
    lo, hi = int(m.group(3)), int(m.group(4))
    if hi < lo:
        return None
    return m.group(1), lo, hi - lo + 1


def parse_src(tok: str, count: int = 1) -> int | None:
    """Source code for a register/special/inline-constant token (literals excluded), or None."""
    reg = parse_register(tok)
    if reg is not None:
        kind, first, n = reg
        if n != count:
            return None
        if kind == "v":
            return VGPR0 + first if first + n <= 256 else None
        if kind == "s":
            return first if first + n <= SGPR_MAX + 1 else None
        return TTMP0 + first if first + n <= 16 else None
    if tok in _NAME_TO_CODE:
        return _NAME_TO_CODE[tok]
    if tok in _CONST_TO_CODE:
        return _CONST_TO_CODE[tok]
    if re.fullmatch(r"-?\d+", tok):
        v = int(tok)
        if 0 <= v <= 64:
            return 128 + v
        if -16 <= v <= -1:
            return 192 - v
    return None


def parse_int(tok: str, line: int = 0, col: int = 0) -> int:
    """An integer in LLVM syntax (decimal, 0x hex, optional sign)."""
    try:
        return int(tok, 0)
    except ValueError:
        raise AsmError("expected an integer", line=line, column=col, token=tok) from None
