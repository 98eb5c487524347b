"""Registers of the MI300X (gfx942: GC 9.4.3, Aqua Vanjaram) blocks a userspace driver programs, as deltas from
SOC21's (simgpu.hw.soc21), the way simgpu.hw.soc24 is: the same declarations -- names, fields, reset values -- at the
offsets of gc_9_4_3_offset.h, mmhub_1_8_0, osssys_4_4_2, nbio_7_9_0, hdp_4_4_2 and mp_13_0_6 (MP1's mailbox keeps
MP 11.0's header, as on the other parts) where those differ, with gfx9's fields where they differ, without what gfx9
lacks, and with gfx9's own registers (the MEC's CP_MEC_CNTL, SDMA 4.4.2's queue registers, NBIO 7.9's doorbell
fences and routing, the XGMI frame-buffer window).

What moved: GC's GRBM, CP and HQD registers (the HQD run keeps the MQD's dword order: v9_mqd dwords 0x80..), the
shader-memory and RLC safe-mode registers, both VM hubs (simgpu.hw.soc21.vmhub: GCHUB_GFX9 / MMHUB_GFX9), the S2A
doorbell routing entries (NBIO segment 5) and the RCC straps (segment 8). What is gone: the RS64 MEC registers (gfx9's
MEC runs the PSP-loaded F32 firmware, started by CP_MEC_CNTL), RLC_RLCS_BOOTLOAD_STATUS (no RLC autoload), the SDMA
v6 registers SOC21 keeps in the GC space (SDMA 4.4.2 is its own block, below), the MMHUB clock gating register.

MI350X (gfx950: GC 9.5.0, MMHUB 1.8.1, SDMA 4.4.4, MP 13.0.12) is the same map over its own table (`mi350x_map()`).

Banking: GC is one block per XCC (8), SDMA0 one per engine (16), MMHUB one per AID (4); `mi300x_map()` places every
instance at the bases of MI300X's discovery table (simgpu.hw.discovery.MI300X_IP_BLOCKS), so XCC 3's CP_HQD_ACTIVE is
`map.address("CP_HQD_ACTIVE", 3)`. The NBIO, OSSSYS, HDP, MP0/MP1 registers are AID 0's (the other AIDs' copies are
behind NBIO's SMN window).

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw import discovery
from simgpu.hw.bits import Field, Layout
from simgpu.hw.mmio import Reg, RegisterMap, name_registers
from simgpu.hw.soc21 import REGISTERS as SOC21
from simgpu.hw.soc21 import vmhub

# GC: SOC21 name -> gfx9 (segment, offset).
_HQD_FIRST_SOC21, _HQD_LAST_SOC21, _HQD_FIRST = 0x1FA9, 0x1FE0, 0x1245  # CP_MQD_BASE_ADDR .. CP_HQD_PQ_WPTR_HI
MOVED: dict[str, tuple[int, int]] = {
    "GRBM_GFX_CNTL": (0, 0x22), "GRBM_CNTL": (0, 0x0), "GRBM_SOFT_RESET": (0, 0x8),
    **{f"GRBM_SCRATCH_REG{i}": (0, 0x40 + i) for i in range(8)},
    "CP_STAT": (0, 0x1A0), "CP_RB_WPTR_POLL_CNTL": (0, 0x1C2), "CP_INT_CNTL": (0, 0x1049),
    "CP_MEC_DOORBELL_RANGE_LOWER": (0, 0x105C), "CP_MEC_DOORBELL_RANGE_UPPER": (0, 0x105D),
    "SPI_COMPUTE_QUEUE_RESET": (0, 0x11DB), "RLC_SAFE_MODE": (1, 0x4C05), "RLC_SPM_MC_CNTL": (1, 0x4C71),
    "SH_MEM_BASES": (0, 0x30A), "SH_MEM_CONFIG": (0, 0x30D), "TCP_CNTL": (0, 0xB02),
    **{f"S2A_DOORBELL_ENTRY_{i}_CTRL": (5, 0x7A80 + i) for i in range(16)},
    "RCC_DEV0_EPF2_STRAP2": (8, 0xD102),
}
REMOVED = {"CP_MEC_RS64_PRGRM_CNTR_START", "CP_MEC_RS64_PRGRM_CNTR_START_HI", "CP_MEC_RS64_CNTL",
           "CP_HQD_DEQUEUE_STATUS", "RLC_RLCS_BOOTLOAD_STATUS", "MM_ATC_L2_MISC_CG", "IH_RB_STATUS",
           "IH_MSI_STORM_CTRL", *(n for n in SOC21 if n.startswith(("SDMA0_", "SDMA1_"))),
           *(f"MP1_SMN_C2PMSG_{n}" for n in range(104, 128))}

# ---- gfx9's fields where they differ from gfx11's ----------------------------------------------------------
FIELDS: dict[str, Layout] = {
    "GRBM_SOFT_RESET": Layout(soft_reset_cp=Field(0), soft_reset_cpc=Field(18)),  # SDMA resets itself (no bits)
    "CP_MEC_DOORBELL_RANGE_LOWER": Layout(doorbell_range_lower=Field(2, 26)),
    "CP_MEC_DOORBELL_RANGE_UPPER": Layout(doorbell_range_upper=Field(2, 26)),
    "CP_HQD_PQ_CONTROL": Layout(**{**SOC21["CP_HQD_PQ_CONTROL"].fields.fields, "slot_based_wptr": Field(25, 2)}),
    "CP_HQD_DEQUEUE_REQUEST": Layout(dequeue_req=Field(0, 3)),
    "SH_MEM_CONFIG": Layout(address_mode=Field(0), alignment_mode=Field(3, 2), f8_mode=Field(8),
                            retry_disable=Field(12)),
    "RCC_DEV0_EPF2_STRAP2": Layout(),  # nbio_7_9_0 names no field of it
    "HDP_MEM_POWER_CTRL": Layout(iph_mem_power_ctrl_en=Field(0), iph_mem_power_ds_en=Field(2)),
}

# ---- gfx9's own declarations ----------------------------------------------------------------------------------
CP_MEC_CNTL = Reg("GC", 0, 0x8D, Layout(mec_invalidate_icache=Field(4), mec_me1_pipe0_reset=Field(16),
                                        mec_me2_pipe0_reset=Field(20), mec_me2_halt=Field(28), mec_me1_halt=Field(30)),
                  reset=(1 << 28) | (1 << 30))  # both MEs halted until a driver starts them
GB_ADDR_CONFIG = Reg("GC", 0, 0x63E)
TCP_UTCL1_CNTL2 = Reg("GC", 0, 0x12B6, Layout(spare=Field(0, 8)))
XGMI_LFB = Layout(pf_lfb_region=Field(0, 4), pf_max_region=Field(4, 4))
GCMC_VM_XGMI_LFB_CNTL = Reg("GC", 0, 0x957, XGMI_LFB)  # 0: not in a hive (the model's VRAM is its own)
GCMC_VM_XGMI_LFB_SIZE = Reg("GC", 0, 0x958, Layout(pf_lfb_size=Field(0, 17)))
MMMC_VM_XGMI_LFB_CNTL = Reg("MMHUB", 0, 0xC97, XGMI_LFB)
MMMC_VM_XGMI_LFB_SIZE = Reg("MMHUB", 0, 0xC98, Layout(pf_lfb_size=Field(0, 17)))
XCC_DOORBELL_FENCE = Reg("NBIO", 5, 0x740C, Layout(**{f"xcc_{i}_doorbell_fence": Field(i) for i in range(8)},
                                                  shub_slv_mode=Field(16)))
BIFC_GFX_INT_MONITOR_MASK = Reg("NBIO", 8, 0xE8AD)
BIFC_DOORBELL_ACCESS_EN_PF = Reg("NBIO", 8, 0xCF6E, Layout(bifc_doorbell_access_en_pf=Field(0, 20)))
DOORBELL0_CTRL_ENTRY_I_ = [Reg("NBIO", 8, 0xCD00 + i, Layout(**{
    f"bif_doorbell{i}_range_offset_entry": Field(0, 10), f"bif_doorbell{i}_range_size_entry": Field(10, 5)}),
    name=f"DOORBELL0_CTRL_ENTRY_{i}") for i in range(21)]
# SDMA 4.4.2 (sdma_4_4_2_offset.h): one block per engine; the GFX queue is the one a driver sets up.
SDMA_CNTL = Reg("SDMA0", 0, 0x6D, Layout(trap_enable=Field(0), utc_l1_enable=Field(1)))
SDMA_GFX_RB_CNTL = Reg("SDMA0", 0, 0x80, Layout(rb_enable=Field(0), rb_size=Field(1, 5),
                                                rptr_writeback_enable=Field(12), rptr_writeback_timer=Field(16, 5),
                                                rb_priv=Field(23), rb_vmid=Field(24, 4)))
_SDMA_GFX = {"RB_BASE": 0x81, "RB_BASE_HI": 0x82, "RB_RPTR": 0x83, "RB_RPTR_HI": 0x84, "RB_WPTR": 0x85,
             "RB_WPTR_HI": 0x86, "RB_WPTR_POLL_CNTL": 0x87, "RB_RPTR_ADDR_HI": 0x88, "RB_RPTR_ADDR_LO": 0x89,
             "IB_RPTR": 0x8B, "IB_OFFSET": 0x8C, "IB_BASE_LO": 0x8D, "IB_BASE_HI": 0x8E, "IB_SIZE": 0x8F,
             "SKIP_CNTL": 0x90, "CONTEXT_STATUS": 0x91, "CONTEXT_CNTL": 0x93, "STATUS": 0xA8, "DOORBELL_LOG": 0xA9,
             "WATERMARK": 0xAA, "CSA_ADDR_LO": 0xAC, "CSA_ADDR_HI": 0xAD, "IB_SUB_REMAIN": 0xAF, "PREEMPT": 0xB0,
             "DUMMY_REG": 0xB1, "RB_WPTR_POLL_ADDR_HI": 0xB2, "RB_WPTR_POLL_ADDR_LO": 0xB3, "RB_AQL_CNTL": 0xB4,
             "MINOR_PTR_UPDATE": 0xB5, **{f"MIDCMD_DATA{i}": 0xC0 + i for i in range(11)}, "MIDCMD_CNTL": 0xCB}
SDMA_GFX_IB_CNTL = Reg("SDMA0", 0, 0x8A, Layout(ib_enable=Field(0)))
SDMA_GFX_DOORBELL = Reg("SDMA0", 0, 0x92, Layout(enable=Field(28)))
SDMA_GFX_DOORBELL_OFFSET = Reg("SDMA0", 0, 0xAB, Layout(offset=Field(2, 26)))
NEW = name_registers({k: v for k, v in globals().items() if isinstance(v, (Reg, list)) and k.isupper()})
NEW |= {f"SDMA_GFX_{n}": Reg("SDMA0", 0, off, name=f"SDMA_GFX_{n}") for n, off in _SDMA_GFX.items()}

_HUBS = {**vmhub.GCHUB.registers(), **vmhub.MMHUB.registers()}


def _place(name: str, r: Reg) -> tuple[int, int]:
    if name in MOVED:
        return MOVED[name]
    if r.block == "GC" and r.segment == 0 and _HQD_FIRST_SOC21 <= r.offset <= _HQD_LAST_SOC21:
        return 0, r.offset - _HQD_FIRST_SOC21 + _HQD_FIRST
    return r.segment, r.offset


def _relocated() -> dict[str, Reg]:
    out: dict[str, Reg] = {}
    for name, r in SOC21.items():
        if name in _HUBS or name in REMOVED or name in NEW:
            continue
        seg, off = _place(name, r)
        out[name] = Reg(r.block, seg, off, FIELDS.get(name, r.fields), r.reset, name=name)
    return out | vmhub.GCHUB_GFX9.registers() | vmhub.MMHUB_GFX9.registers() | NEW


REGISTERS: dict[str, Reg] = _relocated()


def mi300x_map() -> RegisterMap:
    """Every register at its absolute dword address on the simulated MI300X, each banked block at every instance."""
    blocks = discovery.MI300X_IP_BLOCKS
    return RegisterMap(REGISTERS, discovery.block_bases(blocks), discovery.block_instances(blocks))


def mi350x_map() -> RegisterMap:
    """The same declarations over MI350X's table (simgpu.hw.discovery.MI350X_IP_BLOCKS). GC 9.5.0, MMHUB 1.8.1 and
    SDMA 4.4.4 keep the gc_9_4_3 / mmhub_1_8_0 / sdma_4_4_2 layouts for every register modelled: amdgpu drives them
    with the same files (gfx_v9_4_3.c, mmhub_v1_8.c, sdma_v4_4_2.c, each including only the 9.4.3 / 1.8.0 / 4.4.2
    headers), and tinygrad 0.14 resolves them to those tables (tests/simgpu/hw/test_hw_soc15.py checks each)."""
    blocks = discovery.MI350X_IP_BLOCKS
    return RegisterMap(REGISTERS, discovery.block_bases(blocks), discovery.block_instances(blocks))
