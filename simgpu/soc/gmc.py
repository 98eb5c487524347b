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
The frame-buffer location registers read as a posted VBIOS left them: VRAM at FB_BASE (MC address 0x80_0000_0000).
"""

from __future__ import annotations

from simgpu.hw import gmc as pte
from simgpu.hw.soc21.vmhub import NUM_CONTEXTS, NUM_ENGINES, VMHub
from simgpu.soc.regfile import MMIOError, RegisterFile

FB_BASE = 0x80_0000_0000  # MC address of VRAM byte 0 (FB_LOCATION_BASE << 24), as amdgpu finds it on dGPUs
PAGE_TABLE_DEPTH = 3  # VM_CONTEXTn_CNTL.PAGE_TABLE_DEPTH of a 4-level (PDB2 -> PTB) gfx11/gfx12 page table


class Hub:
    """One VM hub's registers; `mmu` is the simulator's MMU for the GC hub, None for the MM hub."""

    def __init__(self, regs: RegisterFile, hub: VMHub, vram_size: int, mmu=None):
        self.regs, self.hub, self.vram_size, self.mmu = regs, hub, vram_size, mmu
        self.enabled = [False] * NUM_CONTEXTS
        top = (FB_BASE + vram_size - 1) >> 24
        regs.set_reset(hub.fb_location_base, FB_BASE >> 24)
        regs.set_reset(hub.fb_location_top, top)
        for vmid in range(NUM_CONTEXTS):
            regs.on_write(hub.context_cntl[vmid], lambda v, vmid=vmid: self._context(vmid))
        for eng in range(NUM_ENGINES):
            regs.on_write(hub.inv_req[eng], lambda v, eng=eng: self._invalidate(eng, v))
            regs.on_read(hub.inv_sem[eng], lambda: 1)
        regs.on_write(hub.fault_cntl, self._fault_cntl)
        for reg in (hub.system_aperture_low, hub.system_aperture_high, hub.fb_location_base, hub.fb_offset):
            regs.on_write(reg, lambda v: self._aperture())
        for reg in (hub.fault_status, hub.fault_addr_lo, hub.fault_addr_hi):
            regs.on_read(reg, lambda reg=reg: regs.get(reg))  # modelled: the hub itself sets them

    # ---- MC addresses ------------------------------------------------------------------------------------------
    @property
    def fb_base(self) -> int:
        """MC address of VRAM byte 0."""
        return (self.regs.get(self.hub.fb_location_base) & 0xFFFFFF) << 24

    def mc_to_pa(self, mc: int, size: int = 1, what: str = "access") -> int:
        """The VRAM physical address of an MC address in the frame-buffer aperture, else MMIOError."""
        pa = mc - self.fb_base + ((self.regs.get(self.hub.fb_offset) & 0xFFFFFF) << 24)
        if not 0 <= pa or pa + size > self.vram_size:
            raise MMIOError(f"{what}: MC address {mc:#x} (+{size:#x}) is outside the frame buffer "
                            f"[{self.fb_base:#x}, {self.fb_base + self.vram_size:#x}) ({self.hub.prefix}MC_VM_FB_"
                            "LOCATION_BASE)")
        return pa

    # ---- VM contexts ------------------------------------------------------------------------------------------------
    def _context(self, vmid: int) -> None:
        h, regs = self.hub, self.regs
        cntl = regs.get(h.context_cntl[vmid])
        if not h.context_cntl[vmid].get(cntl, "enable_context"):
            self.enabled[vmid] = False
            if self.mmu is not None:
                self.mmu.set_context(vmid, None)
            return
        name = h.context_cntl[vmid].name
        base = regs.get(h.pt_base_lo[vmid]) | regs.get(h.pt_base_hi[vmid]) << 32
        depth = h.context_cntl[vmid].get(cntl, "page_table_depth")
        if not base & pte.PDE_VALID:  # (a root at VRAM PA 0 is fine: tinygrad's AM driver puts it there)
            raise MMIOError(f"{name}: VM context {vmid} enabled without a page table: "
                            f"{h.pt_base_lo[vmid].name}/HI32 = {base:#x} is not a valid PDE (VALID, bit 0, clear)")
        root = base & pte.PDE_ADDR_MASK
        if not base & pte.PDE_SYSTEM and root + pte.TABLE_SIZE > self.vram_size:
            raise MMIOError(f"{name}: VM context {vmid}'s root page directory at PA {root:#x} "
                            f"({h.pt_base_lo[vmid].name}) is outside the {self.vram_size:#x}-byte VRAM")
        if depth != PAGE_TABLE_DEPTH:
            raise MMIOError(f"{name}: PAGE_TABLE_DEPTH {depth}: the simulated GPUVM walks 4-level gfx11/gfx12 page "
                            f"tables (PDB2 -> PTB, depth {PAGE_TABLE_DEPTH})")
        first = regs.get(h.pt_start_lo[vmid]) | (regs.get(h.pt_start_hi[vmid]) & 0xF) << 32
        last = regs.get(h.pt_end_lo[vmid]) | (regs.get(h.pt_end_hi[vmid]) & 0xF) << 32
        if last < first:
            raise MMIOError(f"{name}: VM context {vmid} has an empty range: END_ADDR page {last:#x} is below "
                            f"START_ADDR page {first:#x}")
        self.enabled[vmid] = True
        if self.mmu is not None:
            self.mmu.set_context(vmid, base, first, last)

    def _aperture(self) -> None:
        if self.mmu is None:
            return
        h, regs = self.hub, self.regs
        low = (regs.get(h.system_aperture_low) & 0x3FFFFFFF) << 18
        high = ((regs.get(h.system_aperture_high) & 0x3FFFFFFF) << 18) | 0x3FFFF
        if not regs.get(h.system_aperture_low) and not regs.get(h.system_aperture_high):
            self.mmu.set_system_aperture(None)
            return
        self.mmu.set_system_aperture(low, high, self.fb_base, (regs.get(h.fb_offset) & 0xFFFFFF) << 24)

    def _invalidate(self, eng: int, value: int) -> None:
        h, regs = self.hub, self.regs
        mask = h.inv_req[eng].get(value, "per_vmid_invalidate_req")
        for vmid in range(NUM_CONTEXTS):
            if mask >> vmid & 1 and self.mmu is not None:
                if self.enabled[vmid]:
                    self._context(vmid)  # the walker reads the context registers afresh
                self.mmu.invalidate(vmid)
        if h.inv_req[eng].get(value, "clear_protection_fault_status_addr"):
            self._clear_fault()
        regs.set(h.inv_ack[eng], regs.get(h.inv_ack[eng]) | mask)

    # ---- faults ----------------------------------------------------------------------------------------------------
    def _fault_cntl(self, value: int) -> None:
        if self.hub.fault_cntl.get(value, "clear_protection_fault_status_addr"):
            self._clear_fault()

    def _clear_fault(self) -> None:
        for reg in (self.hub.fault_status, self.hub.fault_addr_lo, self.hub.fault_addr_hi):
            self.regs.set(reg, 0)

    def record_fault(self, vmid: int, address: int, write: bool, mapping_error: bool = True) -> None:
        """Latch a translation fault in the status registers (the first one until cleared; later ones only set
        MORE_FAULTS)."""
        h, regs = self.hub, self.regs
        status = regs.get(h.fault_status)
        if status:
            regs.set(h.fault_status, status | h.fault_status.pack(more_faults=1))
            return
        regs.set(h.fault_status, h.fault_status.pack(mapping_error=mapping_error, rw=write, vmid=vmid,
                                                     permission_faults=0 if mapping_error else 1))
        regs.set(h.fault_addr_lo, (address >> 12) & 0xFFFFFFFF)
        regs.set(h.fault_addr_hi, (address >> 44) & 0xF)

    def describe(self) -> list[str]:
        """One line per enabled context."""
        out = []
        for vmid in range(NUM_CONTEXTS):
            if self.enabled[vmid]:
                regs, h = self.regs, self.hub
                base = regs.get(h.pt_base_lo[vmid]) | regs.get(h.pt_base_hi[vmid]) << 32
                first = regs.get(h.pt_start_lo[vmid]) | (regs.get(h.pt_start_hi[vmid]) & 0xF) << 32
                last = regs.get(h.pt_end_lo[vmid]) | (regs.get(h.pt_end_hi[vmid]) & 0xF) << 32
                out.append(f"{h.prefix}VM context {vmid}: root PDE {base:#x}, pages [{first:#x}, {last:#x}]")
        return out
