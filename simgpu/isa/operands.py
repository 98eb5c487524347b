"""Operand codes of gfx11 (and gfx12, gfx9) and their LLVM spellings: registers, register ranges, inline constants.

A source operand is a 9-bit code (8-bit in scalar encodings): 0-105 SGPRs, 106/107 VCC halves,
108-123 TTMPs, 124 null, 125 M0, 126/127 EXEC halves, 128-208 integer inline constants, 240-248 float
inline constants, 255 a 32-bit literal that follows the instruction, 256-511 VGPRs.

gfx9 (gfx942) names the scalar codes differently (ScalarRegs, GFX9_REGS): 0-101 SGPRs, 102/103 flat_scratch,
104/105 xnack_mask, 124 M0 and 125 null (which LLVM 19 prints, though gfx9 has no null register). Its AGPRs
(a0-a255) are written like VGPRs with the prefix "a"; which operands are AGPRs the tables and encodings say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


@dataclass(frozen=True)
class ScalarRegs:
    """How a family names its scalar register codes below 128."""

    sgpr_max: int  # the last SGPR
    named: dict[int, str]  # one-dword names (vcc_lo, m0, ...)
    named64: dict[int, str]  # pair names (vcc, exec, ...)
    null: int | None  # the code a source of three or more dwords reads as null

    def __post_init__(self) -> None:
        object.__setattr__(self, "codes", {v: k for k, v in self.named.items()} | {v: k for k, v in
                                                                                     self.named64.items()})


GFX11_REGS = ScalarRegs(SGPR_MAX, _NAMED, _NAMED64, NULL)
GFX9_REGS = ScalarRegs(101, {102: "flat_scratch_lo", 103: "flat_scratch_hi", 104: "xnack_mask_lo",
                             105: "xnack_mask_hi", VCC_LO: "vcc_lo", VCC_HI: "vcc_hi", 124: "m0", 125: "null",
                             EXEC_LO: "exec_lo", EXEC_HI: "exec_hi"} | {k: v for k, v in _NAMED.items() if k >= 235},
                       {102: "flat_scratch", 104: "xnack_mask", VCC_LO: "vcc", EXEC_LO: "exec"}
                       | {k: v for k, v in _NAMED.items() if k >= 235}, None)  # src_vccz as a VOPC e64 sdst
REGS = {"gfx11": GFX11_REGS, "gfx12": GFX11_REGS, "gfx9": GFX9_REGS}


def reg_range(prefix: str, first: int, count: int) -> str:
    """LLVM's spelling of `count` consecutive registers: v5, v[4:5], s[0:3], ttmp[4:7]."""
    if count == 1:
        return f"{prefix}{first}"
    return f"{prefix}[{first}:{first + count - 1}]"


def scalar_name(code: int, count: int = 1, family: str = "gfx11") -> str | None:
    """Spelling of a scalar register code (SGPR, VCC, TTMP, M0, NULL, EXEC) holding `count` dwords."""
    regs = REGS[family]
    if code <= regs.sgpr_max:
        return reg_range("s", code, count) if code + count <= regs.sgpr_max + 1 else None
    if TTMP0 <= code < TTMP0 + 16:
        return reg_range("ttmp", code - TTMP0, count) if code - TTMP0 + count <= 16 else None
    if count == 1:
        return regs.named.get(code)
    if count == 2 and code in regs.named64:
        return regs.named64[code]
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


def src_name(code: int, count: int = 1, bits: int = 32, family: str = "gfx11") -> str | None:
    """Spelling of a (non-literal) source code: a register range, special register or inline constant."""
    if code >= VGPR0:
        return reg_range("v", code - VGPR0, count) if code - VGPR0 + count <= 256 else None
    name = scalar_name(code, count, family)
    if name is not None:
        return name
    if code == REGS[family].null:  # a source of three or more dwords reads null too (scalar destinations do not)
        return "null"
    if code in _NAMED and code >= 235:
        return _NAMED[code]
    return inline_constant(code, bits)


_REG_RE = re.compile(r"^(v|s|ttmp|a)(?:(\d+)|\[(\d+):(\d+)\])$")
_NAME_TO_CODE = {v: k for k, v in _NAMED.items()} | {v: k for k, v in _NAMED64.items()}
_CONST_TO_CODE = {repr(v): k for k, v in _FLOATS.items()} | {INV_2PI_32: 248, INV_2PI_64: 248}


def parse_register(tok: str) -> tuple[str, int, int] | None:
    """('v'|'s'|'ttmp'|'a', first, count) for a register or range token, else None."""
    m = _REG_RE.match(tok)
    if not m:
        return None
    if m.group(2) is not None:
        return m.group(1), int(m.group(2)), 1
    lo, hi = int(m.group(3)), int(m.group(4))
    if hi < lo:
        return None
    return m.group(1), lo, hi - lo + 1


def parse_src(tok: str, count: int = 1, family: str = "gfx11") -> int | None:
    """Source code for a register/special/inline-constant token (literals excluded, AGPRs too), or None."""
    reg = parse_register(tok)
    if reg is not None:
        kind, first, n = reg
        if n != count:
            return None
        if kind == "v":
            return VGPR0 + first if first + n <= 256 else None
        if kind == "s":
            return first if first + n <= REGS[family].sgpr_max + 1 else None
        if kind == "a":
            return None
        return TTMP0 + first if first + n <= 16 else None
    regs = REGS[family]
    if tok in regs.codes:
        return regs.codes[tok]
    if tok in _NAME_TO_CODE and _NAME_TO_CODE[tok] >= 128:
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
