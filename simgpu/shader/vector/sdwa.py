"""gfx9's SDWA (sub-dword addressing) form of VOP1/VOP2/VOPC: each source a byte, a word or the dword of its
register, zero- or sign-extended; the result written into a byte, a word or the dword of VDST, the other bits
zeroed, sign-extended or kept (Vega / CDNA3 ISA, "SDWA": SRC0_SEL, SRC1_SEL, SEXT, DST_SEL, DST_UNUSED).

The codec decodes the SDWA dword into `inst.dpp` (kind "sdwa"): src0 is its VGPR number, or with S0 set an SGPR
or constant code (likewise S1 for VOP2's vsrc1); neg/abs apply to float sources (valu), sext to integer ones. A
16-bit operation reads the low half of the selected and extended 32-bit value. VOPC's SDWAB form writes its mask to
SDST when SD is set, else VCC (valu._write_compare). Clamp and omod are in the SDWA dword.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import vector_src, write_vgpr
from simgpu.shader.state import wsel

U32 = np.uint32
# SEL value -> (bit offset, width): BYTE_0..3, WORD_0, WORD_1, DWORD
SELECT = {0: (0, 8), 1: (8, 8), 2: (16, 8), 3: (24, 8), 4: (0, 16), 5: (16, 16), 6: (0, 32)}
UNUSED_PAD, UNUSED_SEXT, UNUSED_PRESERVE = 0, 1, 2


def _sign_extend(v: np.ndarray, width: int) -> np.ndarray:
    top = U32(1 << (width - 1))
    return ((v ^ top) - top).astype(U32)


def source(ex, w, inst, field: str, bits: int) -> np.ndarray:
    """The raw bits [n, lanes] of an SDWA source ("src0" or "vsrc1"), selected and extended; uint16 for 16-bit
    operands (the low half of the extended value)."""
    d = inst.dpp
    i = 0 if field == "src0" else 1
    reg = d["src0"] if i == 0 else inst.fields["vsrc1"]
    code = reg if d[f"s{i}"] else 256 + reg
    raw = vector_src(ex, w, code, None, "b16" if bits == 16 else "b32").astype(U32)
    shift, width = SELECT.get(d[f"src{i}_sel"], (0, 32))
    if width < 32:
        raw = (raw >> U32(shift)) & U32((1 << width) - 1)
        if d[f"src{i}_sext"]:
            raw = _sign_extend(raw, width)
    return raw.astype(np.uint16) if bits == 16 else raw


def omod(inst) -> int:
    """The output modifier of an SDWA instruction (0 for any other encoding without a VOP3 omod)."""
    d = inst.dpp
    return d.get("omod", 0) if d is not None and d["kind"] == "sdwa" else 0


def clamp(inst) -> bool:
    d = inst.dpp
    return bool(d.get("clamp", 0)) if d is not None and d["kind"] == "sdwa" else False


def write_mask(ex, w, inst) -> np.ndarray:
    """SDWA masks no lanes beyond EXEC."""
    return np.ones((len(w), ex.st.lanes), bool)


def write(ex, w, inst, raw: np.ndarray, bits: int, mask: np.ndarray) -> None:
    """Write a `bits`-wide result into DST_SEL's field of VDST, the rest as DST_UNUSED says, in lanes `mask`."""
    d = inst.dpp
    vdst = inst.fields["vdst"]
    shift, width = SELECT.get(d["dst_sel"], (0, 32))
    width = min(width, bits)
    field = np.asarray(raw).astype(U32) & U32((1 << width) - 1 if width < 32 else 0xFFFFFFFF)
    new = field << U32(shift)
    unused = d["dst_unused"]
    if width + shift < 32 or shift:
        if unused == UNUSED_SEXT and width < 32:
            new = _sign_extend(field, width) << U32(shift)
        elif unused == UNUSED_PRESERVE:
            keep = U32(~(((1 << width) - 1) << shift) & 0xFFFFFFFF)
            new = new | (ex.st.vgpr[vdst, wsel(w), :] & keep)
    write_vgpr(ex, w, vdst, new, mask)
