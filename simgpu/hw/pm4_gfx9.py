"""gfx9's own forms of the PM4 packets whose layout changed in gfx10 (gfx942's MEC): ACQUIRE_MEM and RELEASE_MEM.

Every other compute packet a queue sends (SET_SH_REG, WAIT_REG_MEM, INDIRECT_BUFFER, PRED_EXEC, EVENT_WRITE,
DISPATCH_*, COPY_DATA, WRITE_DATA, DMA_DATA, ATOMIC_MEM) has the same header and body layout on gfx9 and gfx11;
simgpu.hw.pm4 declares those once. Facts from amdgpu's soc15d.h (PACKET3_ACQUIRE_MEM's ordinals and its
PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_* bits; RELEASE_MEM's EOP_*_ACTION_EN bits), amdkfd's kfd_pm4_headers_ai.h
(struct pm4_mec_release_mem: which bits of the event dword are reserved) and gfx_v9_0.c (what amdgpu emits):

- ACQUIRE_MEM has 6 body dwords on gfx9: CP_COHER_CNTL (cache actions; [31] ENGINE_SEL), COHER_SIZE, COHER_SIZE_HI
  [23:0], COHER_BASE_LO, COHER_BASE_HI [23:0], POLL_INTERVAL [15:0]. gfx10+ has 7, a zero first dword and the
  cache actions as GCR_CNTL in the last.
- RELEASE_MEM has 7 body dwords on both; the event dword's bits 12-21 are gfx9's EOP cache actions (TC = L2, TCL1
  = the vector L1), where gfx10+ has GCR_CNTL bits 12-22. The data dword (DST_SEL, INT_SEL, DATA_SEL) is the same.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw import pm4
from simgpu.hw.bits import Field, Layout, lo32
from simgpu.hw.pm4 import DataSel, Event, IntSel, Op, packet

ACQUIRE_MEM_BODY_DWORDS = 6

# CP_COHER_CNTL, ACQUIRE_MEM's first body dword (soc15d.h's PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_*; ENGINE_SEL [31]).
CP_COHER_CNTL = Layout(tc_nc_action_ena=Field(3), tc_wc_action_ena=Field(4), tc_inv_metadata_action_ena=Field(5),
                       tcl1_vol_action_ena=Field(15), tc_wb_action_ena=Field(18), tcl1_action_ena=Field(22),
                       tc_action_ena=Field(23), cb_action_ena=Field(25), db_action_ena=Field(26),
                       sh_kcache_action_ena=Field(27), sh_kcache_vol_action_ena=Field(28),
                       sh_icache_action_ena=Field(29), sh_kcache_wb_action_ena=Field(30), engine_sel=Field(31))
# What one dispatch must see of another's writes: the shader caches invalidated, L2 written back and invalidated, the
# vector L1 invalidated (gfx_v9_0_emit_mem_sync's actions).
COHER_INVALIDATE_ALL = CP_COHER_CNTL.pack(sh_icache_action_ena=1, sh_kcache_action_ena=1, tc_action_ena=1,
                                          tcl1_action_ena=1, tc_wb_action_ena=1)

# RELEASE_MEM's event dword on gfx9 (pm4_mec_release_mem's ordinal 2; EXECUTE [28] is soc15d.h's EOP_EXEC).
RELEASE_EVENT_CNTL = Layout(event_type=pm4.EVENT_CNTL.event_type, event_index=pm4.EVENT_CNTL.event_index,
                            tcl1_vol_action_ena=Field(12), tc_vol_action_ena=Field(13), tc_wb_action_ena=Field(15),
                            tcl1_action_ena=Field(16), tc_action_ena=Field(17), tc_nc_action_ena=Field(19),
                            tc_wc_action_ena=Field(20), tc_md_action_ena=Field(21), cache_policy=Field(25, 2),
                            execute=Field(28), pq_exe_status=Field(29))
# Bits gfx9 reserves in that dword that gfx10+'s GCR_CNTL uses (nvd.h's PACKET3_RELEASE_MEM_GCR_*): a gfx11 form.
GFX10_GCR_BITS = {14: "GLV_INV", 18: "GL2_RANGE", 22: "SEQ"}


def _defined_mask(layout: Layout) -> int:
    return sum(f.mask << f.lo for f in layout.fields.values())


COHER_CNTL_DEFINED = _defined_mask(CP_COHER_CNTL)
RELEASE_EVENT_DEFINED = _defined_mask(RELEASE_EVENT_CNTL)


def acquire_mem(base: int = 0, size: int = (1 << 64) - 1, coher_cntl: int = COHER_INVALIDATE_ALL,
                poll_interval: int = 0x0A) -> list[int]:
    """gfx9's cache acquire over [base, base + size) (in 256-byte units, as amdgpu programs it)."""
    return packet(Op.ACQUIRE_MEM, coher_cntl, lo32(size), pm4.ACQUIRE_HI.bits(size >> 32), lo32(base),
                  pm4.ACQUIRE_HI.bits(base >> 32), poll_interval)


def release_mem(addr: int = 0, data: int = 0, data_sel: int = DataSel.DATA32, int_sel: int = IntSel.NONE,
                event: int = Event.CACHE_FLUSH_AND_INV_TS_EVENT, ctx_id: int = 0, actions: int = 0) -> list[int]:
    """gfx9's end-of-pipe release; `actions` are RELEASE_EVENT_CNTL cache-action bits (e.g. tc_wb_action_ena)."""
    dw0 = RELEASE_EVENT_CNTL.pack(event_type=event, event_index=pm4.EVENT_INDEX_END_OF_PIPE) | actions
    dw1 = pm4.RELEASE_MEM_DATA_CNTL.pack(data_sel=data_sel, int_sel=int_sel)
    return packet(Op.RELEASE_MEM, dw0, dw1, lo32(addr), lo32(addr >> 32), lo32(data), lo32(data >> 32), ctx_id)


def release_mem_reserved(dw0: int) -> str | None:
    """Why gfx9 refuses a RELEASE_MEM event dword (bits it reserves set), or None."""
    bad = dw0 & ~RELEASE_EVENT_DEFINED & 0xFFFFFFFF
    if not bad:
        return None
    bits = [b for b in range(32) if bad >> b & 1]
    gcr = [f"{GFX10_GCR_BITS[b]} (bit {b})" for b in bits if b in GFX10_GCR_BITS]
    why = f"RELEASE_MEM event dword bits {', '.join(map(str, bits))} are reserved on gfx9"
    if gcr:
        why += f"; {', '.join(gcr)} {'is' if len(gcr) == 1 else 'are'} gfx10+'s GCR_CNTL (the gfx11 form)"
    return why
