"""The graphics memory controller as a driver programs it: the GC and MM VM hubs (simgpu.hw.soc21.vmhub).

GC hub (what the CP, SDMA and shaders translate through, i.e. the simulator's `MMU`):
- VM_CONTEXTn_CNTL.ENABLE_CONTEXT = 1 takes the context's PAGE_TABLE_BASE_ADDR (a PDE: valid bit, root address),
  START/END_ADDR (page numbers) and gives them to the MMU; 0 turns the VMID's translation off. A context enabled
  without a valid root, outside VRAM, or with a depth other than 4 levels is an MMIOError naming the registers.
- MC_VM_SYSTEM_APERTURE_LOW/HIGH_ADDR (<< 18) with MC_VM_FB_LOCATION_BASE (<< 24) and MC_VM_FB_OFFSET: VMID 0's
  physical window onto VRAM.
- VM_INVALIDATE_ENGn_REQ: re-reads the contexts of the VMIDs in PER_VMID_INVALIDATE_REQ, drops their cached
  translations and sets those bits in ENGn_ACK; ENGn_SEM always grants (nothing contends).
- A GPU page fault latches VM_L2_PROTECTION_FAULT_STATUS and _ADDR_LO32/HI32 (page number) until a write of
  PROTECTION_FAULT_CNTL.CLEAR_PROTECTION_FAULT_STATUS_ADDR.
The MM hub's registers are the same and are checked the same way, but no simulated engine translates through it.
A part with several hubs of a kind (MI300X: a GC hub per XCC, an MM hub per AID) has a Hub per instance; only XCC
0's GC hub drives the MMU (the XCCs share one address space: the others are programmed and checked alike).
The frame-buffer location registers read as a posted VBIOS left them: VRAM at FB_BASE (MC address 0x80_0000_0000).
"""

from __future__ import annotations

from simgpu.hw import gmc as pte
from simgpu.hw.soc21.vmhub import NUM_CONTEXTS, NUM_ENGINES, VMHub
from simgpu.soc.regfile import MMIOError, RegisterFile

FB_BASE = 0x80_0000_0000  # MC address of VRAM byte 0 (FB_LOCATION_BASE << 24), as amdgpu finds it on dGPUs
PAGE_TABLE_DEPTH = 3  # VM_CONTEXTn_CNTL.PAGE_TABLE_DEPTH of a 4-level (PDB2 -> PTB) gfx11/gfx12 page table
# gfx9's other way to walk the same four levels: three directory levels (depth 2) whose PDB0 entries are PTEs that
# "translate further" (PTE_TF) into a 2^9-entry PTB (PAGE_TABLE_BLOCK_SIZE 9), what tinygrad's AM driver programs.
TRANSLATE_FURTHER = (2, 9)


class Hub:
    """One VM hub's registers; `mmu` is the simulator's MMU for the GC hub, None for the MM hub."""

    def __init__(self, regs: RegisterFile, hub: VMHub, vram_size: int, mmu=None, inst: int = 0):
        self.regs, self.hub, self.vram_size, self.mmu, self.inst = regs, hub, vram_size, mmu, inst
        self.enabled = [False] * NUM_CONTEXTS
        top = (FB_BASE + vram_size - 1) >> 24
        regs.set_reset(hub.fb_location_base, FB_BASE >> 24, inst)
        regs.set_reset(hub.fb_location_top, top, inst)
        for vmid in range(NUM_CONTEXTS):
            regs.on_write(hub.context_cntl[vmid], lambda v, vmid=vmid: self._context(vmid), inst)
        for eng in range(NUM_ENGINES):
            regs.on_write(hub.inv_req[eng], lambda v, eng=eng: self._invalidate(eng, v), inst)
            regs.on_read(hub.inv_sem[eng], lambda: 1, inst)
        regs.on_write(hub.fault_cntl, self._fault_cntl, inst)
        for reg in (hub.system_aperture_low, hub.system_aperture_high, hub.fb_location_base, hub.fb_offset):
            regs.on_write(reg, lambda v: self._aperture(), inst)
        for reg in (hub.fault_status, hub.fault_addr_lo, hub.fault_addr_hi):
            regs.on_read(reg, lambda reg=reg: self._get(reg), inst)  # modelled: the hub itself sets them

    def _get(self, reg) -> int:
        return self.regs.get(reg, self.inst)

    def _set(self, reg, value: int) -> None:
        self.regs.set(reg, value, self.inst)

    # ---- MC addresses ------------------------------------------------------------------------------------------
    @property
    def fb_base(self) -> int:
        """MC address of VRAM byte 0."""
        return (self._get(self.hub.fb_location_base) & 0xFFFFFF) << 24

    def mc_to_pa(self, mc: int, size: int = 1, what: str = "access") -> int:
        """The VRAM physical address of an MC address in the frame-buffer aperture, else MMIOError."""
        pa = mc - self.fb_base + ((self._get(self.hub.fb_offset) & 0xFFFFFF) << 24)
        if not 0 <= pa or pa + size > self.vram_size:
            raise MMIOError(f"{what}: MC address {mc:#x} (+{size:#x}) is outside the frame buffer "
                            f"[{self.fb_base:#x}, {self.fb_base + self.vram_size:#x}) ({self.hub.prefix}MC_VM_FB_"
                            "LOCATION_BASE)")
        return pa

    # ---- VM contexts ------------------------------------------------------------------------------------------------
    def _context(self, vmid: int) -> None:
        h = self.hub
        cntl = self._get(h.context_cntl[vmid])
        if not h.context_cntl[vmid].get(cntl, "enable_context"):
            self.enabled[vmid] = False
            if self.mmu is not None:
                self.mmu.set_context(vmid, None)
            return
        name = h.context_cntl[vmid].name
        base = self._get(h.pt_base_lo[vmid]) | self._get(h.pt_base_hi[vmid]) << 32
        depth = h.context_cntl[vmid].get(cntl, "page_table_depth")
        if not base & pte.PDE_VALID:  # (a root at VRAM PA 0 is fine: tinygrad's AM driver puts it there)
            raise MMIOError(f"{name}: VM context {vmid} enabled without a page table: "
                            f"{h.pt_base_lo[vmid].name}/HI32 = {base:#x} is not a valid PDE (VALID, bit 0, clear)")
        root = base & pte.PDE_ADDR_MASK
        if not base & pte.PDE_SYSTEM and root + pte.TABLE_SIZE > self.vram_size:
            raise MMIOError(f"{name}: VM context {vmid}'s root page directory at PA {root:#x} "
                            f"({h.pt_base_lo[vmid].name}) is outside the {self.vram_size:#x}-byte VRAM")
        block = h.context_cntl[vmid].get(cntl, "page_table_block_size")
        further = h.translate_further and (depth, block) == TRANSLATE_FURTHER
        if (depth, block) != (PAGE_TABLE_DEPTH, 0) and not further:
            gfx9 = f", or gfx9's translate-further PDB2 -> PDB0 (depth {TRANSLATE_FURTHER[0]}, block size " \
                f"{TRANSLATE_FURTHER[1]})" if h.translate_further else ""
            raise MMIOError(f"{name}: PAGE_TABLE_DEPTH {depth}, PAGE_TABLE_BLOCK_SIZE {block}: the simulated GPUVM "
                            f"walks 4-level page tables (PDB2 -> PTB, depth {PAGE_TABLE_DEPTH}, block size 0{gfx9})")
        first = self._get(h.pt_start_lo[vmid]) | (self._get(h.pt_start_hi[vmid]) & 0xF) << 32
        last = self._get(h.pt_end_lo[vmid]) | (self._get(h.pt_end_hi[vmid]) & 0xF) << 32
        if last < first:
            raise MMIOError(f"{name}: VM context {vmid} has an empty range: END_ADDR page {last:#x} is below "
                            f"START_ADDR page {first:#x}")
        self.enabled[vmid] = True
        if self.mmu is not None:
            self.mmu.set_context(vmid, base, first, last, translate_further=further)

    def _aperture(self) -> None:
        if self.mmu is None:
            return
        h = self.hub
        low = (self._get(h.system_aperture_low) & 0x3FFFFFFF) << 18
        high = ((self._get(h.system_aperture_high) & 0x3FFFFFFF) << 18) | 0x3FFFF
        if not self._get(h.system_aperture_low) and not self._get(h.system_aperture_high):
            self.mmu.set_system_aperture(None)
            return
        self.mmu.set_system_aperture(low, high, self.fb_base, (self._get(h.fb_offset) & 0xFFFFFF) << 24)

    def _invalidate(self, eng: int, value: int) -> None:
        h = self.hub
        mask = h.inv_req[eng].get(value, "per_vmid_invalidate_req")
        for vmid in range(NUM_CONTEXTS):
            if mask >> vmid & 1 and self.mmu is not None:
                if self.enabled[vmid]:
                    self._context(vmid)  # the walker reads the context registers afresh
                self.mmu.invalidate(vmid)
        if h.inv_req[eng].get(value, "clear_protection_fault_status_addr"):
            self._clear_fault()
        self._set(h.inv_ack[eng], self._get(h.inv_ack[eng]) | mask)

    # ---- faults ----------------------------------------------------------------------------------------------------
    def _fault_cntl(self, value: int) -> None:
        if self.hub.fault_cntl.get(value, "clear_protection_fault_status_addr"):
            self._clear_fault()

    def _clear_fault(self) -> None:
        for reg in (self.hub.fault_status, self.hub.fault_addr_lo, self.hub.fault_addr_hi):
            self._set(reg, 0)

    def record_fault(self, vmid: int, address: int, write: bool, mapping_error: bool = True) -> None:
        """Latch a translation fault in the status registers (the first one until cleared; later ones only set
        MORE_FAULTS)."""
        h = self.hub
        status = self._get(h.fault_status)
        if status:
            self._set(h.fault_status, status | h.fault_status.pack(more_faults=1))
            return
        self._set(h.fault_status, h.fault_status.pack(mapping_error=mapping_error, rw=write, vmid=vmid,
                                                     permission_faults=0 if mapping_error else 1))
        self._set(h.fault_addr_lo, (address >> 12) & 0xFFFFFFFF)
        self._set(h.fault_addr_hi, (address >> 44) & 0xF)

    def describe(self) -> list[str]:
        """One line per enabled context."""
        out = []
        for vmid in range(NUM_CONTEXTS):
            if self.enabled[vmid]:
                h = self.hub
                base = self._get(h.pt_base_lo[vmid]) | self._get(h.pt_base_hi[vmid]) << 32
                first = self._get(h.pt_start_lo[vmid]) | (self._get(h.pt_start_hi[vmid]) & 0xF) << 32
                last = self._get(h.pt_end_lo[vmid]) | (self._get(h.pt_end_hi[vmid]) & 0xF) << 32
                out.append(f"{h.prefix}VM context {vmid}: root PDE {base:#x}, pages [{first:#x}, {last:#x}]")
        return out
