"""gfx942 (CDNA3, ISA family gfx9) scalar instructions: the family's own entries of the semantics table.

gfx9 spells many of gfx11's scalar instructions otherwise; a renamed instruction runs gfx11's semantics (`alias`),
the meaning taken from the CDNA3 ISA reference and checked against LLVM's instruction definitions (the same
SALU opcode records carry both names). What gfx9 changes:

- Operand codes: 124 is M0 and 125 null (state.null_and_m0); 102-105 are FLAT_SCRATCH and XNACK_MASK, plain SGPRs
  here (gfx942's scratch is architected: the kernel never reads FLAT_SCRATCH).
- Renames: s_andn2 / s_orn2 (b32, b64, saveexec) are s_and_not1 / s_or_not1, s_andn1 / s_orn1 saveexec and the
  wrexec forms s_and_not0 / s_or_not0 / s_and_not1_wrexec; s_ff1_i32_b32/b64 are s_ctz_i32_*, s_flbit_i32_b32/b64
  s_clz_i32_u32/u64, s_flbit_i32 / s_flbit_i32_i64 s_cls_i32 / s_cls_i32_i64.
- SMEM: s_load_dword(xN) and s_buffer_load_dword(xN) are gfx11's s_load_bN; the offset is IMM's signed 21-bit byte
  offset, or with IMM = 0 the SGPR its field names, plus SGPR[SOFFSET] when SOE is set (the encoding LLVM uses for
  "s[...], sN offset:imm"). IMM = 0 with SOE = 1 is refused (its meaning is not stated consistently: llvm-mc 19
  prints the field as an immediate). s_memtime reads the engine's 64-bit cycle counter, s_memrealtime the device's
  real-time counter (gfx11's s_sendmsg_rtn REALTIME). Cache maintenance (s_dcache_wb/inv/discard, *_vol): no-ops.
  Not implemented: SMEM stores and atomics (s_store_*, s_scratch_*, s_atomic_*, s_buffer_atomic_*).
- Hardware registers: gfx9's ids are MODE 1, STATUS 2, TRAPSTS 3, HW_ID 4, GPR_ALLOC 5, LDS_ALLOC 6, IB_STS 7, ...
  s_getreg / s_setreg model MODE, STATUS (SCC) and TRAPSTS as gfx11 does; any other id is an illegal-instruction
  fault (their gfx9 layouts, e.g. HW_ID's wave/SIMD/CU fields, are not modelled).
- s_waitcnt's fields sit at other bits (vmcnt 3:0 and 15:14): still a no-op, every access completes at its
  instruction.
- Not implemented (illegal_instruction): s_set_gpr_idx_* (VGPR indexing mode), s_cbranch_g_fork / i_fork / join,
  s_setvskip, s_ff0_*, s_rfe_restore_b64, s_endpgm_ordered_ps_done.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import scalar_src, write_sgpr
from simgpu.shader.scalar import sop1, sop2, sopp  # noqa: F401 - the shared entries aliased below
from simgpu.shader.semantics import alias, register
from simgpu.shader.state import HW_MODE, HW_STATUS, HW_TRAPSTS

G = "gfx9"
U32, U64 = np.uint32, np.uint64

for _new, _old in (("s_andn2_b32", "s_and_not1_b32"), ("s_andn2_b64", "s_and_not1_b64"),
                   ("s_orn2_b32", "s_or_not1_b32"), ("s_orn2_b64", "s_or_not1_b64"),
                   ("s_andn2_saveexec_b64", "s_and_not1_saveexec_b64"),
                   ("s_orn2_saveexec_b64", "s_or_not1_saveexec_b64"),
                   ("s_andn1_saveexec_b64", "s_and_not0_saveexec_b64"),
                   ("s_orn1_saveexec_b64", "s_or_not0_saveexec_b64"),
                   ("s_andn1_wrexec_b64", "s_and_not0_wrexec_b64"), ("s_andn2_wrexec_b64", "s_and_not1_wrexec_b64"),
                   ("s_ff1_i32_b32", "s_ctz_i32_b32"), ("s_ff1_i32_b64", "s_ctz_i32_b64"),
                   ("s_flbit_i32_b32", "s_clz_i32_u32"), ("s_flbit_i32_b64", "s_clz_i32_u64"),
                   ("s_flbit_i32", "s_cls_i32"), ("s_flbit_i32_i64", "s_cls_i32_i64")):
    alias(_new, _old, G)


# ---------------------------------------------------------------------------------------------- SMEM

_IMM_BITS = 21


def _smem_offset(ex, w, inst) -> np.ndarray:
    """gfx9's SMEM offset in bytes, per wave (sopp._smem_offset asks this for gfx9 instructions)."""
    f = inst.fields
    if f["imm"]:
        off = f["offset"]
        off = np.full(len(w), off - (1 << _IMM_BITS) if off & (1 << (_IMM_BITS - 1)) else off, np.int64)
    elif f["soe"]:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: IMM = 0 with SOE = 1 is not modelled")
    else:
        off = scalar_src(ex, w, f["offset"], None).astype(np.int64)
    if f["soe"]:
        off = off + scalar_src(ex, w, f["soffset"], None).astype(np.int64)
    return off


sopp.SMEM_OFFSETS[G] = _smem_offset
for _dwords, _gfx11 in ((1, "b32"), (2, "b64"), (4, "b128"), (8, "b256"), (16, "b512")):
    _x = "" if _dwords == 1 else f"x{_dwords}"
    alias(f"s_load_dword{_x}", f"s_load_{_gfx11}", G)
    alias(f"s_buffer_load_dword{_x}", f"s_buffer_load_{_gfx11}", G)


def _nop(ex, w, inst):
    return None


for _name in ("s_dcache_wb", "s_dcache_wb_vol", "s_dcache_inv_vol", "s_dcache_discard", "s_dcache_discard_x2"):
    register(_name, _nop, G)  # the simulator has no caches: every access reaches memory at its instruction


def _memtime(realtime: bool):
    def fn(ex, w, inst):
        value = ex.engine.clock.timestamp() if realtime else ex.engine.clock.cycles
        sdata = inst.fields["sdata"]
        write_sgpr(ex, w, sdata, np.full(len(w), value & 0xFFFFFFFFFFFFFFFF, U64), wide=True)
    return fn


register("s_memtime", _memtime(False), G)
register("s_memrealtime", _memtime(True), G)


# ---------------------------------------------------------------------------------------------- hwreg

_MODELLED_HWREGS = {HW_MODE, HW_STATUS, HW_TRAPSTS}


def _hwreg_checked(shared):
    """The gfx11 s_getreg / s_setreg for the hardware registers gfx9 numbers alike; a fault for the others."""
    def fn(ex, w, inst):
        rid = inst.fields["simm16"] & 0x3F
        if rid not in _MODELLED_HWREGS:
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: gfx9 hardware register {rid} is not modelled")
        return shared(ex, w, inst)
    return fn


for _name in ("s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32"):
    register(_name, _hwreg_checked(sopp._getreg if _name == "s_getreg_b32" else
                                   sopp._setreg if _name == "s_setreg_b32" else sopp._setreg_imm), G)
