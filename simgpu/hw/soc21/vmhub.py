"""The two GPUVM hubs' registers: GCVM/GCMC (the graphics hub: CP, SDMA and shaders translate through it) and
MMVM/MMMC (the multimedia hub), from gc_11_0_0_offset.h / mmhub_3_0_0_offset.h and their _sh_mask.h.

Both hubs have the same registers at different offsets (segment 0 of GC and of MMHUB): the memory-controller
apertures (FB location, AGP, system aperture), the L2 and protection-fault controls, 16 VM contexts (CNTL, page
table base/start/end) and 18 invalidation engines (SEM, REQ, ACK, ADDR_RANGE). `VMHub` holds one hub's set.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw.bits import Field, Layout
from simgpu.hw.mmio import Reg, family

NUM_CONTEXTS = 16
NUM_ENGINES = 18

FB_LOCATION_BASE = Layout(fb_base=Field(0, 24))  # address >> 24
FB_LOCATION_TOP = Layout(fb_top=Field(0, 24))
FB_OFFSET = Layout(fb_offset=Field(0, 24))
SYSTEM_APERTURE = Layout(logical_addr=Field(0, 30))  # address >> 18
MX_L1_TLB_CNTL = Layout(enable_l1_tlb=Field(0), system_access_mode=Field(3, 2),
                        system_aperture_unmapped_access=Field(5), enable_advanced_driver_model=Field(6),
                        mtype=Field(11, 3))
L2_CNTL = Layout(enable_l2_cache=Field(0), enable_l2_fragment_processing=Field(1),
                 enable_default_page_out_to_system_memory=Field(11), context1_identity_access_mode=Field(19, 2))
PROTECTION_FAULT_CNTL = Layout(clear_protection_fault_status_addr=Field(0),
                               allow_subsequent_protection_fault_status_addr_updates=Field(1))
PROTECTION_FAULT_STATUS = Layout(more_faults=Field(0), walker_error=Field(1, 3), permission_faults=Field(4, 4),
                                 mapping_error=Field(8), cid=Field(9, 9), rw=Field(18), atomic=Field(19),
                                 vmid=Field(20, 4), vf=Field(24), vfid=Field(25, 4), prt=Field(29))
CONTEXT_CNTL = Layout(enable_context=Field(0), page_table_depth=Field(1, 2), page_table_block_size=Field(3, 4),
                      range_protection_fault_enable_interrupt=Field(9),
                      valid_protection_fault_enable_interrupt=Field(15),
                      read_protection_fault_enable_interrupt=Field(17),
                      write_protection_fault_enable_interrupt=Field(19),
                      execute_protection_fault_enable_interrupt=Field(21))
INVALIDATE_REQ = Layout(per_vmid_invalidate_req=Field(0, 16), flush_type=Field(16, 3), invalidate_l2_ptes=Field(19),
                        invalidate_l2_pde0=Field(20), invalidate_l2_pde1=Field(21), invalidate_l2_pde2=Field(22),
                        invalidate_l1_ptes=Field(23), clear_protection_fault_status_addr=Field(24))
INVALIDATE_ACK = Layout(per_vmid_invalidate_ack=Field(0, 16), semaphore=Field(16))
INVALIDATE_SEM = Layout(semaphore=Field(0))
BANK_SELECT_RESERVED_CID = Layout(reserved_cache_private_invalidation=Field(25))


class VMHub:
    """The registers of one hub; `prefix` is "GC" or "MM" (GCVM_*/GCMC_*, MMVM_*/MMMC_*)."""

    def __init__(self, prefix: str, block: str, offsets: dict[str, int], layouts: dict[str, Layout] | None = None,
                 translate_further: bool = False):
        self.prefix = prefix
        self.translate_further = translate_further  # gfx9: contexts may walk PDB0 PTEs with PTE_TF into a PTB
        split = "VM_L2_PROTECTION_FAULT_STATUS_HI32" in offsets  # gfx12 splits the status in LO32 / HI32
        layouts = layouts or {}  # another generation's fields, by the register's name without the hub prefix

        def reg(name: str, fields: Layout | None = None) -> Reg:
            kind = "MC" if name.startswith("MC_") else "VM"
            return Reg(block, 0, offsets[name], layouts.get(name, fields), name=f"{prefix}{kind}_{name[3:]}")

        self.fb_location_base = reg("MC_VM_FB_LOCATION_BASE", FB_LOCATION_BASE)
        self.fb_location_top = reg("MC_VM_FB_LOCATION_TOP", FB_LOCATION_TOP)
        self.fb_offset = reg("MC_VM_FB_OFFSET", FB_OFFSET)
        self.agp_top, self.agp_bot, self.agp_base = reg("MC_VM_AGP_TOP"), reg("MC_VM_AGP_BOT"), reg("MC_VM_AGP_BASE")
        self.system_aperture_low = reg("MC_VM_SYSTEM_APERTURE_LOW_ADDR", SYSTEM_APERTURE)
        self.system_aperture_high = reg("MC_VM_SYSTEM_APERTURE_HIGH_ADDR", SYSTEM_APERTURE)
        self.system_aperture_default_lsb = reg("MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB")
        self.system_aperture_default_msb = reg("MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB")
        self.mx_l1_tlb_cntl = reg("MC_VM_MX_L1_TLB_CNTL", MX_L1_TLB_CNTL)
        self.l2_cntl = [reg("VM_L2_CNTL", L2_CNTL)] + [reg(f"VM_L2_CNTL{i}") for i in range(2, 6)]
        self.fault_cntl = reg("VM_L2_PROTECTION_FAULT_CNTL", PROTECTION_FAULT_CNTL)
        self.fault_cntl2 = reg("VM_L2_PROTECTION_FAULT_CNTL2")
        self.fault_status = reg("VM_L2_PROTECTION_FAULT_STATUS" + "_LO32" * split, PROTECTION_FAULT_STATUS)
        if split:
            self.fault_status_hi = reg("VM_L2_PROTECTION_FAULT_STATUS_HI32")
        self.fault_addr_lo = reg("VM_L2_PROTECTION_FAULT_ADDR_LO32")  # faulting page number bits 31:0
        self.fault_addr_hi = reg("VM_L2_PROTECTION_FAULT_ADDR_HI32")  # ... bits 35:32
        self.fault_default_lo = reg("VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32")
        self.fault_default_hi = reg("VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32")
        self.identity = [reg(f"VM_L2_{n}") for n in (
            "CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32", "CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32",
            "CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32", "CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32",
            "CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32", "CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32")]
        self.bank_select_reserved_cid2 = reg("VM_L2_BANK_SELECT_RESERVED_CID2", BANK_SELECT_RESERVED_CID)
        vm = f"{prefix}VM_"
        self.context_cntl = family(block, 0, offsets["CONTEXT_CNTL"], 1, NUM_CONTEXTS,
                                   layouts.get("CONTEXT_CNTL", CONTEXT_CNTL),
                                   name=vm + "CONTEXT{i}_CNTL")
        self.pt_base_lo = family(block, 0, offsets["CONTEXT_PT_BASE"], 2, NUM_CONTEXTS,
                                 name=vm + "CONTEXT{i}_PAGE_TABLE_BASE_ADDR_LO32")
        self.pt_base_hi = family(block, 0, offsets["CONTEXT_PT_BASE"] + 1, 2, NUM_CONTEXTS,
                                 name=vm + "CONTEXT{i}_PAGE_TABLE_BASE_ADDR_HI32")
        self.pt_start_lo = family(block, 0, offsets["CONTEXT_PT_START"], 2, NUM_CONTEXTS,
                                  name=vm + "CONTEXT{i}_PAGE_TABLE_START_ADDR_LO32")
        self.pt_start_hi = family(block, 0, offsets["CONTEXT_PT_START"] + 1, 2, NUM_CONTEXTS,
                                  name=vm + "CONTEXT{i}_PAGE_TABLE_START_ADDR_HI32")
        self.pt_end_lo = family(block, 0, offsets["CONTEXT_PT_END"], 2, NUM_CONTEXTS,
                                name=vm + "CONTEXT{i}_PAGE_TABLE_END_ADDR_LO32")
        self.pt_end_hi = family(block, 0, offsets["CONTEXT_PT_END"] + 1, 2, NUM_CONTEXTS,
                                name=vm + "CONTEXT{i}_PAGE_TABLE_END_ADDR_HI32")
        # An engine's semaphore reads 1 (acquired) when free: the model has no concurrent invalidations.
        self.inv_sem = family(block, 0, offsets["ENG_SEM"], 1, NUM_ENGINES, INVALIDATE_SEM, reset=1,
                              name=vm + "INVALIDATE_ENG{i}_SEM")
        self.inv_req = family(block, 0, offsets["ENG_REQ"], 1, NUM_ENGINES,
                              layouts.get("INVALIDATE_REQ", INVALIDATE_REQ),
                              name=vm + "INVALIDATE_ENG{i}_REQ")
        self.inv_ack = family(block, 0, offsets["ENG_ACK"], 1, NUM_ENGINES, INVALIDATE_ACK,
                              name=vm + "INVALIDATE_ENG{i}_ACK")
        self.inv_range_lo = family(block, 0, offsets["ENG_RANGE"], 2, NUM_ENGINES,
                                   name=vm + "INVALIDATE_ENG{i}_ADDR_RANGE_LO32")
        self.inv_range_hi = family(block, 0, offsets["ENG_RANGE"] + 1, 2, NUM_ENGINES,
                                   name=vm + "INVALIDATE_ENG{i}_ADDR_RANGE_HI32")

    def registers(self) -> dict[str, Reg]:
        """Every register of the hub by name."""
        out = {}
        for value in vars(self).values():
            for r in value if isinstance(value, list) else [value]:
                if isinstance(r, Reg):
                    out[r.name] = r
        return out


_MC = ("MC_VM_FB_LOCATION_BASE", "MC_VM_FB_LOCATION_TOP", "MC_VM_AGP_TOP", "MC_VM_AGP_BOT", "MC_VM_AGP_BASE",
       "MC_VM_SYSTEM_APERTURE_LOW_ADDR", "MC_VM_SYSTEM_APERTURE_HIGH_ADDR", "MC_VM_MX_L1_TLB_CNTL")
_L2 = ("VM_L2_CNTL", "VM_L2_CNTL2", "VM_L2_CNTL3")
_FAULT = ("VM_L2_PROTECTION_FAULT_CNTL", "VM_L2_PROTECTION_FAULT_CNTL2", None, None, "VM_L2_PROTECTION_FAULT_STATUS",
          "VM_L2_PROTECTION_FAULT_ADDR_LO32", "VM_L2_PROTECTION_FAULT_ADDR_HI32",
          "VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_LO32", "VM_L2_PROTECTION_FAULT_DEFAULT_ADDR_HI32", None,
          "VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_LO32", "VM_L2_CONTEXT1_IDENTITY_APERTURE_LOW_ADDR_HI32",
          "VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_LO32", "VM_L2_CONTEXT1_IDENTITY_APERTURE_HIGH_ADDR_HI32",
          "VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_LO32", "VM_L2_CONTEXT_IDENTITY_PHYSICAL_OFFSET_HI32", "VM_L2_CNTL4")


# gfx12 (gc_12_0_0 / mmhub_4_1_0): the status is two registers, which moves the rest of the run by one; the
# context control's fields above PAGE_TABLE_DEPTH move up a bit, MTYPE is 2 bits, VFID 5.
_FAULT_GFX12 = _FAULT[:4] + ("VM_L2_PROTECTION_FAULT_STATUS_LO32", "VM_L2_PROTECTION_FAULT_STATUS_HI32") + _FAULT[5:]


def _offsets(mc: int, fb_offset: int, l2: int, fault: int, cid2: int, cntl5: int, context: int, eng: int,
             pt_base: int, fault_run: tuple = _FAULT) -> dict[str, int]:
    """A hub's offsets from the start of each run of consecutive registers in its header."""
    out = {name: mc + i for i, name in enumerate(_MC)}
    out |= {"MC_VM_FB_OFFSET": fb_offset, "MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_LSB": fb_offset + 1,
            "MC_VM_SYSTEM_APERTURE_DEFAULT_ADDR_MSB": fb_offset + 2}
    out |= {name: l2 + i for i, name in enumerate(_L2)}
    out |= {name: fault + i for i, name in enumerate(fault_run) if name}
    out |= {"VM_L2_BANK_SELECT_RESERVED_CID2": cid2, "VM_L2_CNTL5": cntl5, "CONTEXT_CNTL": context,
            "ENG_SEM": eng, "ENG_REQ": eng + NUM_ENGINES, "ENG_ACK": eng + 2 * NUM_ENGINES,
            "ENG_RANGE": eng + 3 * NUM_ENGINES, "CONTEXT_PT_BASE": pt_base, "CONTEXT_PT_START": pt_base + 0x20,
            "CONTEXT_PT_END": pt_base + 0x40}
    return out


GCHUB = VMHub("GC", "GC", _offsets(mc=0x1678, fb_offset=0x15A7, l2=0x15BC, fault=0x15C4, cid2=0x15D7, cntl5=0x15DA,
                                   context=0x1688, eng=0x1699, pt_base=0x16F3))
MMHUB = VMHub("MM", "MMHUB", _offsets(mc=0x8EC, fb_offset=0x8D7, l2=0x700, fault=0x708, cid2=0x71B, cntl5=0x71E,
                                      context=0x740, eng=0x751, pt_base=0x7AB))
MM_ATC_L2_MISC_CG = Reg("MMHUB", 0, 0x6CD, Layout(enable=Field(18), mem_ls_enable=Field(19)), name="MM_ATC_L2_MISC_CG")

# gfx12: gc_12_0_0_offset.h / mmhub_4_1_0_offset.h (simgpu.hw.soc24 places them).
_GFX12_LAYOUTS = {
    "CONTEXT_CNTL": Layout(enable_context=Field(0), page_table_depth=Field(1, 2), page_table_block_size=Field(4, 4),
                           range_protection_fault_enable_interrupt=Field(10),
                           valid_protection_fault_enable_interrupt=Field(16),
                           read_protection_fault_enable_interrupt=Field(18),
                           write_protection_fault_enable_interrupt=Field(20),
                           execute_protection_fault_enable_interrupt=Field(22)),
    "MC_VM_MX_L1_TLB_CNTL": Layout(enable_l1_tlb=Field(0), system_access_mode=Field(3, 2),
                                   system_aperture_unmapped_access=Field(5), enable_advanced_driver_model=Field(6),
                                   mtype=Field(11, 2)),
    "VM_L2_PROTECTION_FAULT_STATUS_LO32": Layout(more_faults=Field(0), walker_error=Field(1, 3),
                                                 permission_faults=Field(4, 4), mapping_error=Field(8),
                                                 cid=Field(9, 9), rw=Field(18), atomic=Field(19), vmid=Field(20, 4),
                                                 vf=Field(24), vfid=Field(25, 5), prt=Field(30)),
}
GCHUB_GFX12 = VMHub("GC", "GC", _offsets(mc=0x1614, fb_offset=0x15A7, l2=0x15C4, fault=0x15CC, cid2=0x15E0,
                                         cntl5=0x15E3, context=0x1624, eng=0x1635, pt_base=0x168F,
                                         fault_run=_FAULT_GFX12), _GFX12_LAYOUTS)
MMHUB_GFX12 = VMHub("MM", "MMHUB", _offsets(mc=0x554, fb_offset=0x4C7, l2=0x4E4, fault=0x4EC, cid2=0x500,
                                            cntl5=0x503, context=0x564, eng=0x575, pt_base=0x5CF,
                                            fault_run=_FAULT_GFX12), _GFX12_LAYOUTS)

# gfx9 (gc_9_4_3 / mmhub_1_8_0, simgpu.hw.soc15 places them): FLUSH_TYPE is 2 bits, which moves the invalidation
# request's flags down by one; MTYPE is 2 bits; the fault status has no PRT bit (29 and 30 are UCE and FED).
_GFX9_LAYOUTS = {
    "INVALIDATE_REQ": Layout(per_vmid_invalidate_req=Field(0, 16), flush_type=Field(16, 2),
                             invalidate_l2_ptes=Field(18), invalidate_l2_pde0=Field(19), invalidate_l2_pde1=Field(20),
                             invalidate_l2_pde2=Field(21), invalidate_l1_ptes=Field(22),
                             clear_protection_fault_status_addr=Field(23)),
    "MC_VM_MX_L1_TLB_CNTL": _GFX12_LAYOUTS["MC_VM_MX_L1_TLB_CNTL"],
    "VM_L2_PROTECTION_FAULT_STATUS": Layout(more_faults=Field(0), walker_error=Field(1, 3),
                                            permission_faults=Field(4, 4), mapping_error=Field(8), cid=Field(9, 9),
                                            rw=Field(18), atomic=Field(19), vmid=Field(20, 4), vf=Field(24),
                                            vfid=Field(25, 4)),
}
GCHUB_GFX9 = VMHub("GC", "GC", _offsets(mc=0x95C, fb_offset=0x947, l2=0x820, fault=0x827, cid2=0x83B, cntl5=0x838,
                                        context=0x860, eng=0x871, pt_base=0x8CB), _GFX9_LAYOUTS, True)
MMHUB_GFX9 = VMHub("MM", "MMHUB", _offsets(mc=0xC9C, fb_offset=0xC87, l2=0xB60, fault=0xB67, cid2=0xB7B,
                                           cntl5=0xB78, context=0xBA0, eng=0xBB1, pt_base=0xC0B), _GFX9_LAYOUTS,
                    True)
