"""What kind of instruction an issued instruction is, for the SQ counters and the thread trace's tokens.

One `Kind` per mnemonic (and encoding), computed once: the SQ_INSTS_* category it counts in and the SQTT
token the SQ writes when it issues on the traced SIMD (INST with an op, VALUINST, IMMEDIATE, or none for
s_delay_alu, which the hardware does not trace, and s_endpgm, whose token is WAVEEND).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from simgpu.hw.sqtt import InstOp

# Per-wave count columns of the observer (simgpu.profile.observer): one per SQ_INSTS_* category.
CATEGORIES = ("SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_SMEM", "SQ_INSTS_LDS", "SQ_INSTS_FLAT",
              "SQ_INSTS_TEX_LOAD", "SQ_INSTS_TEX_STORE", "SQ_INSTS_BRANCH")
_SOPP_BRANCH = re.compile(r"^s_(branch|cbranch_\w+)$")
_BRANCH = {"s_setpc_b64", "s_swappc_b64", "s_call_b64"}
_TRANS = re.compile(r"^v_(exp|log|rcp|rsq|sqrt|sin|cos)_")
_SHIFT64 = {"v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64"}
_MAD64 = {"v_mad_u64_u32", "v_mad_i64_i32"}
_DS_READS = ("ds_load", "ds_read", "ds_swizzle", "ds_permute", "ds_bpermute", "ds_append", "ds_consume")
NULL_SADDR = 124  # FLAT saddr field: SGPR_NULL (or 0x7f "off")


@dataclass(frozen=True)
class Kind:
    """An instruction's counter category (an index into CATEGORIES, or -1) and its trace token."""

    category: int
    token: str  # "INST", "VALUINST", "IMMEDIATE", "WAVEEND", "" (not traced)
    op: int = 0  # the INST token's op
    valu: bool = False
    lds: bool = False
    branch: bool = False  # taken or not decides JUMP / JUMP_NO
    end: bool = False


def _cat(name: str) -> int:
    return CATEGORIES.index(name)


def classify(inst) -> Kind:
    """The Kind of a decoded instruction."""
    enc, m = inst.encoding, inst.mnemonic
    if enc.startswith("VOP") or enc == "VINTERP":
        return _valu(m)
    if enc == "SMEM":
        return Kind(_cat("SQ_INSTS_SMEM"), "INST", InstOp.SMEM_RD)
    if enc == "DS":
        read = "_rtn" in m or m.startswith(_DS_READS)
        return Kind(_cat("SQ_INSTS_LDS"), "INST", InstOp.LDS_RD if read else InstOp.LDS_WR_2, lds=True)
    if enc in ("FLAT", "VFLAT", "VGLOBAL", "VSCRATCH"):  # (V*: gfx12's encodings)
        return _flat(inst)
    if enc in ("MUBUF", "MTBUF", "MIMG", "VBUFFER", "VIMAGE", "VSAMPLE"):
        load = "load" in m or m.startswith(("image_get", "image_sample", "image_gather"))
        return Kind(_cat("SQ_INSTS_TEX_LOAD" if load else "SQ_INSTS_TEX_STORE"), "INST",
                    InstOp.SGMEM_RD_2 if load else InstOp.SGMEM_WR_3)
    if enc == "SOPP":
        return _sopp(m)
    if m in _BRANCH:
        return Kind(_cat("SQ_INSTS_BRANCH"), "INST", InstOp.CALL if m == "s_call_b64" else InstOp.JUMP, branch=True)
    if "saveexec" in m or "wrexec" in m:
        return Kind(_cat("SQ_INSTS_SALU"), "INST", InstOp.SALU_WR_EXEC)
    return Kind(_cat("SQ_INSTS_SALU"), "INST", InstOp.SALU)


def _valu(m: str) -> Kind:
    cat = _cat("SQ_INSTS_VALU")
    if m.startswith("v_cmpx_"):
        return Kind(cat, "INST", InstOp.VALU1_WR_EXEC, valu=True)
    if _TRANS.match(m):
        return Kind(cat, "INST", InstOp.VALUT_4, valu=True)
    if m in _SHIFT64:
        return Kind(cat, "INST", InstOp.VALUB_2, valu=True)
    if m in _MAD64:
        return Kind(cat, "INST", InstOp.VALUB_4, valu=True)
    if "_f64" in m:
        return Kind(cat, "INST", InstOp.VALUB_16, valu=True)
    return Kind(cat, "VALUINST", valu=True)


def _flat(inst) -> Kind:
    m = inst.mnemonic
    load = "load" in m or ("atomic" in m and (inst.fields.get("glc", 0) or inst.fields.get("th", 0) & 1))
    if m.startswith("flat_"):
        op = InstOp.FLAT_RD_2 if load else InstOp.FLAT_WR_3
    elif load:
        op = InstOp.SGMEM_RD_2 if inst.fields.get("saddr", NULL_SADDR) >= NULL_SADDR else InstOp.SGMEM_RD_1
    else:
        op = InstOp.SGMEM_WR_3 if inst.fields.get("saddr", NULL_SADDR) >= NULL_SADDR else InstOp.SGMEM_WR_2
    return Kind(_cat("SQ_INSTS_FLAT"), "INST", op)


def _sopp(m: str) -> Kind:
    if _SOPP_BRANCH.match(m):
        return Kind(_cat("SQ_INSTS_BRANCH"), "INST", InstOp.JUMP, branch=True)
    if m == "s_endpgm" or m.startswith("s_endpgm"):
        return Kind(-1, "WAVEEND", end=True)
    if m in ("s_barrier", "s_barrier_wait"):
        return Kind(-1, "INST", InstOp.BARRIER)
    if m.startswith("s_sendmsg"):
        return Kind(-1, "INST", InstOp.MESSAGE)
    if m == "s_delay_alu":
        return Kind(-1, "")
    return Kind(-1, "IMMEDIATE")  # s_waitcnt*, s_nop, s_clause, s_setprio, s_sleep, ...
