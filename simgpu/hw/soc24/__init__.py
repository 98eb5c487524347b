"""Registers of the SOC24 (gfx12: GC 12.0.1, Navi 48) blocks a userspace driver programs, as deltas from SOC21's
(simgpu.hw.soc21): the same declarations -- names, fields, reset values -- at the offsets of gc_12_0_0_offset.h,
mmhub_4_1_0, osssys_7_0_0, nbif_6_3_1, hdp_7_0_0 and mp_14_0_2 where those differ, under gfx12's names where amdgpu
renamed a register, and the registers only gfx12 has.

What moved: the GC and MM VM hubs (their own tables in simgpu.hw.soc21.vmhub: gfx12 splits
VM_L2_PROTECTION_FAULT_STATUS into _LO32/_HI32), the SDMA v7 queue and engine registers, the IH ring registers
(osssys 7 swaps RB_BASE/_HI and RB_RPTR/WPTR), RLC_RLCS_BOOTLOAD_STATUS (GFX_INIT_DONE is bit 1). Renamed: the SDMA
microcontroller's F32_CNTL is MCU_CNTL (HALT still bit 0), MP0's C2PMSG mailbox is MPASP_SMN_C2PMSG (same offsets),
NBIO's S2A doorbell routing is GDC_S2A0_S2A_DOORBELL_ENTRY_n_CTRL (segment 2). New: the graphics ME/PFP RS64 program
counters and CP_ME_CNTL, which tinygrad's gfx12 path programs. `navi48_map()` resolves the SOC21 names the blocks use
(simgpu.soc) to their gfx12 registers, so one model serves both parts.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw import discovery
from simgpu.hw.bits import Field, Layout
from simgpu.hw.mmio import Reg, RegisterMap, family, name_registers
from simgpu.hw.soc21 import REGISTERS as SOC21
from simgpu.hw.soc21 import vmhub

_SDMA_STRIDE = 0x600
# gfx12 offsets of SOC21 registers (by their SOC21 name): (segment, dword offset).
_SDMA_MOVED = {"CNTL": 0xD, "WATCHDOG_CNTL": 0x2B, "UTCL1_CNTL": 0x35, "UTCL1_PAGE": 0x38, "RLC_CGCG_CTRL": 0x55,
               "QUEUE0_RB_RPTR_ADDR_LO": 0x87, "QUEUE0_IB_CNTL": 0x89, "QUEUE0_DOORBELL": 0x8F,
               "QUEUE0_DOORBELL_OFFSET": 0x91, "QUEUE0_RB_WPTR_POLL_ADDR_LO": 0x98, "QUEUE0_RB_WPTR_POLL_ADDR_HI": 0x99,
               "QUEUE0_RB_AQL_CNTL": 0x9A, "QUEUE0_MINOR_PTR_UPDATE": 0x9B, "QUEUE0_CONTEXT_STATUS": 0xB0}
MOVED: dict[str, tuple[int, int]] = {
    **{f"SDMA{e}_{n}": (0, e * _SDMA_STRIDE + off) for e in range(2) for n, off in _SDMA_MOVED.items()},
    "IH_RB_RPTR": (0, 0x81), "IH_RB_WPTR": (0, 0x82), "IH_RB_BASE": (0, 0x83), "IH_RB_BASE_HI": (0, 0x84),
    "IH_RB_RPTR_RING1": (0, 0x8D), "IH_RB_WPTR_RING1": (0, 0x8E), "IH_RB_BASE_RING1": (0, 0x8F),
    "IH_RB_BASE_HI_RING1": (0, 0x90), "IH_CNTL": (0, 0xA8), "IH_STORM_CLIENT_LIST_CNTL": (0, 0xAA),
}
# MP 14's PSP mailbox dwords (mp_14_0_2_offset.h); MP1's SMU mailbox keeps MP 11.0's header up to C2PMSG_103.
_MPASP = (*range(32, 40), *range(60, 90), *range(100, 104))
# SOC21 name -> gfx12 name (the blocks keep using the SOC21 name; the map answers it with the gfx12 register).
RENAMED: dict[str, str] = {
    "SDMA0_F32_CNTL": "SDMA0_MCU_CNTL", "SDMA1_F32_CNTL": "SDMA1_MCU_CNTL",
    **{f"MP0_SMN_C2PMSG_{n}": f"MPASP_SMN_C2PMSG_{n}" for n in _MPASP},
    **{f"{hub}VM_L2_PROTECTION_FAULT_STATUS": f"{hub}VM_L2_PROTECTION_FAULT_STATUS_LO32" for hub in ("GC", "MM")},
}
# SOC21 registers gfx12 does not have (dword 26 of the HQD image is unnamed in gc_12_0_0; the MMHUB clock gating
# register is gone from mmhub_4_1_0; the S2A entries moved into GDC, below).
REMOVED = {"CP_HQD_SEMA_CMD", "MM_ATC_L2_MISC_CG", *(f"S2A_DOORBELL_ENTRY_{i}_CTRL" for i in range(16)),
           *(f"MP0_SMN_C2PMSG_{n}" for n in range(32, 104) if n not in _MPASP),
           *(f"MP1_SMN_C2PMSG_{n}" for n in range(104, 128))}

# ---- gfx12's own declarations (new, or with other fields) ----------------------------------------------------
RLC_RLCS_BOOTLOAD_STATUS = Reg("GC", 1, 0x4E7C, Layout(gfx_init_done=Field(1), bootload_complete=Field(31)))
CP_ME_CNTL = Reg("GC", 1, 0x803, Layout(pfp_invalidate_icache=Field(6), me_invalidate_icache=Field(8),
                                        pfp_pipe0_reset=Field(18), pfp_pipe1_reset=Field(19),
                                        me_pipe0_reset=Field(20), me_pipe1_reset=Field(21), pfp_halt=Field(26),
                                        me_halt=Field(28)))
CP_PFP_PRGRM_CNTR_START = Reg("GC", 0, 0x1E44)  # per pipe (GRBM_GFX_CNTL ME 0): the PFP's ucode start >> 2
CP_ME_PRGRM_CNTR_START = Reg("GC", 0, 0x1E45)
CP_PFP_PRGRM_CNTR_START_HI = Reg("GC", 0, 0x1E59)
CP_ME_PRGRM_CNTR_START_HI = Reg("GC", 0, 0x1E79)
GRBM_CNTL = Reg("GC", 0, 0xDA0, Layout(read_timeout=Field(0, 12)))
SDMA_MCU_CNTL = Layout(halt=Field(0), reset=Field(1))
SDMA_I__MCU_CNTL = family("GC", 1, 0x588E, 0x20, 2, SDMA_MCU_CNTL)  # SOC21's F32_CNTL
SDMA_RB_CNTL = Layout(rb_enable=Field(0), rb_size=Field(1, 5), wptr_poll_enable=Field(8),
                      mcu_wptr_poll_enable=Field(11), rptr_writeback_enable=Field(12),
                      rptr_writeback_timer=Field(16, 5), rb_priv=Field(23),
                      rb_vmid=Field(24, 4))
SDMA_I__QUEUE0_RB_CNTL = family("GC", 0, 0x80, _SDMA_STRIDE, 2, SDMA_RB_CNTL)
GDC_S2A0_S2A_DOORBELL_ENTRY_I__CTRL = family("NBIO", 2, 0x1CB, 1, 16, name="GDC_S2A0_S2A_DOORBELL_ENTRY_{i}_CTRL")
NEW = name_registers({k: v for k, v in globals().items() if isinstance(v, (Reg, list)) and k.isupper()})

_HUBS = {**vmhub.GCHUB.registers(), **vmhub.MMHUB.registers()}


def _relocated() -> dict[str, Reg]:
    out: dict[str, Reg] = {}
    for name, r in SOC21.items():
        if name in _HUBS or name in REMOVED or RENAMED.get(name, name) in NEW:
            continue
        seg, off = MOVED.get(name, (r.segment, r.offset))
        new = RENAMED.get(name, name)
        out[new] = Reg(r.block, seg, off, r.fields, r.reset, name=new)
    return out | vmhub.GCHUB_GFX12.registers() | vmhub.MMHUB_GFX12.registers() | NEW


REGISTERS: dict[str, Reg] = _relocated()


def navi48_map() -> RegisterMap:
    """Every register at its absolute dword address on the simulated Navi 48, also under its SOC21 name."""
    regs = dict(REGISTERS)
    regs.update({old: REGISTERS[new] for old, new in RENAMED.items()})  # aliases after their registers
    return RegisterMap(regs, discovery.block_bases(discovery.NAVI48_IP_BLOCKS))
