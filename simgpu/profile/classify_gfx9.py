"""The class a gfx9 thread trace's INST token gives an issued instruction (simgpu.hw.sqtt_gfx9.InstType), or None
for the instructions it writes no INST token for (s_waitcnt, s_nop, s_barrier and gfx9's other immediate SOPP
instructions). Branches are JUMP when taken, NEXT when not: the caller decides which after the instruction ran.

VALU_32 / VALU_64 and SALU_32 / SALU_64 tell the instruction's encoded size (4 or 8 bytes: VOP3, VOP3P, a literal),
not its operand width: a gfx950 trace shows v_lshl_or_b32 and v_pk_mul_f32 as VALU_64, v_add_f32_e32 as VALU_32,
s_lshl_b64 and s_and_saveexec_b64 as SALU_32 (tests/data/sqtt/gfx950_inst_types.json).
"""

from __future__ import annotations

import re

from simgpu.hw.sqtt_gfx9 import InstType

_BRANCH = re.compile(r"^s_(branch|cbranch_\w+)$")
_PC = {"s_setpc_b64", "s_swappc_b64", "s_call_b64"}
WORD = 4  # bytes of a 32-bit encoding


def inst_type(inst) -> InstType | None:
    """The INST_TYPE of a decoded gfx9 instruction (JUMP for a branch, taken or not)."""
    enc, m = inst.encoding, inst.mnemonic
    if enc.startswith("VOP") or enc == "SDWA" or enc == "DPP":
        if m.startswith(("v_mfma", "v_smfmac")):
            return InstType.VALU_MAI
        return InstType.VALU_32 if inst.size == WORD else InstType.VALU_64
    if enc == "SMEM":
        return InstType.SMEM_WR if m.startswith(("s_store", "s_buffer_store", "s_atomic", "s_buffer_atomic")) \
            else InstType.SMEM_RD
    if enc == "DS":
        return InstType.LDS
    if enc == "FLAT":
        return InstType.FLAT_RD if _loads(inst) else InstType.FLAT_WR
    if enc in ("MUBUF", "MTBUF"):
        return InstType.VMEM_RD if _loads(inst) else InstType.VMEM_WR
    if enc == "SOPP":
        if _BRANCH.match(m):
            return InstType.JUMP
        if m.startswith(("s_endpgm", "s_sendmsg")):
            return InstType.OTHER_MSG
        return None
    if m in _PC:
        return InstType.JUMP
    return InstType.SALU_32 if inst.size == WORD else InstType.SALU_64


def _loads(inst) -> bool:
    """A memory instruction that returns data: a load, or an atomic with GLC (returning the old value)."""
    m = inst.mnemonic
    return "load" in m or ("atomic" in m and bool(inst.fields.get("glc", 0) or inst.fields.get("sc0", 0)))
