"""The SOC21 / SOC24 / SOC15 blocks around one simulated gfx1100, gfx1201, gfx942 or gfx950, as its PCI function
presents them to a userspace driver.

`SOC(gpu)` attaches to a `simgpu.GPU`: the MMIO register file (BAR5) with the blocks that give registers behaviour
(GC and MM VM hubs, IH, PSP, SMU, MEC/HQDs, SDMA rings, NBIO/HDP), the doorbell aperture (BAR2), the PCI
configuration space, and the IP discovery table at the top of VRAM (simgpu.hw.discovery). VRAM itself (BAR0) is the
GPU's PhysicalMemory. The GPU's interrupts become IH ring entries (simgpu.hw.ih; simgpu.soc.irq, which gives gfx942's
SOC15 clients and sources, the table is SOC21's):

| interrupt | IH entry |
|---|---|
| end_of_pipe, signal | GRBM_CP / CP_EOP_INTERRUPT, ring id = ME/pipe/queue, context id 0 = the context id |
| sdma_trap | GFX / SDMA_TRAP, ring id = engine, context id 0 = INT_CONTEXT |
| sendmsg | GFX / SQ_INTERRUPT_ID, encoding INST, context id 0 = the wave's M0 (24 bits) |
| queue_error, page fault | GFX / UTCL2_FAULT with the page address, and GCVM_L2_PROTECTION_FAULT_STATUS/ADDR latched |
| queue_error, other shader fault | GFX / SQ_INTERRUPT_ID, encoding ERROR, type ILLEGAL_INST or MEMVIOL (others) |
| queue_error, bad packet | GRBM_CP / CP_BAD_OPCODE_ERROR (compute) or GFX / SDMA_QUEUE_HANG (SDMA) |

Accesses: `mmio_read` / `mmio_write` take byte offsets in BAR5 and aligned 32-bit values (what amdgpu's RREG32 /
WREG32 do); `doorbell_read` / `doorbell_write` byte offsets in BAR2 (32- or 64-bit). A refused access raises
MMIOError (and is kept in `bus_errors` for describe()).

The register side is modelled for gfx1100 (Navi 31, SOC21), gfx1201 (Navi 48, SOC24: the same blocks over
simgpu.hw.soc24's map, gfx12 page tables, its own discovery table), gfx942 (MI300X: simgpu.hw.soc15's banked map --
a GC hub and MEC per XCC, an MM hub per AID, SDMA 4.4.2's sixteen engines -- gfx9 page tables, PSP/SMU 13.0.6, its
four-die discovery table) and gfx950 (MI350X: the same map and blocks at GC 9.5.0 / SDMA 4.4.4 / MMHUB 1.8.1 /
MP 13.0.12, 160 KiB of LDS in its gc_info). A chip without it (its `am` False) would have its PCI identity,
configuration space and BARs (peers reach its VRAM through BAR0), with every MMIO and doorbell BAR access refused,
naming the chip.
"""

from __future__ import annotations

from dataclasses import dataclass

from simgpu.hw import discovery
from simgpu.hw.mmio import RegisterMap
from simgpu.hw.soc15 import mi300x_map, mi350x_map
from simgpu.hw.soc21 import navi31_map, vmhub
from simgpu.hw.soc21 import nbio as hwnbio
from simgpu.hw.soc24 import navi48_map
from simgpu.interrupt import Interrupt, Kind
from simgpu.soc import irq
from simgpu.soc.cp import MEC
from simgpu.soc.gmc import Hub
from simgpu.soc.ih import InterruptHandler
from simgpu.soc.nbio import NBIO
from simgpu.soc.pci import DOORBELL_BAR_SIZE, MMIO_BAR_SIZE, PCIEndpoint
from simgpu.soc.psp import PSP
from simgpu.soc.regfile import MMIOError, RegisterFile
from simgpu.soc.sdma import SDMAQueues
from simgpu.soc.sdma4 import SDMA4Queues
from simgpu.soc.smu import SMU

# The shape the GC info table reports (gc_info_v1_2): 6 SEs x 2 SAs x 4 WGPs (8 CUs), wave32, 64 KiB LDS.
GC_INFO = {"gc_num_se": 6, "gc_num_wgp0_per_sa": 4, "gc_num_wgp1_per_sa": 0, "gc_num_rb_per_se": 4, "gc_num_gl2c": 24,
           "gc_num_gprs": 1536, "gc_wave_size": 32, "gc_max_waves_per_simd": 16, "gc_max_scratch_slots_per_cu": 32,
           "gc_lds_size": 64, "gc_num_sc_per_se": 1, "gc_num_sa_per_se": 2, "gc_num_packer_per_sc": 4,
           "gc_num_gl2a": 4, "gc_num_tcp_per_sa": 8, "gc_num_sdp_interface": 16, "gc_num_tcps": 96,
           "gc_num_tcp_per_wpg": 2, "gc_tcp_l1_size": 32, "gc_num_sqc_per_wgp": 1,
           "gc_l1_instruction_cache_size_per_sqc": 32, "gc_l1_data_cache_size_per_sqc": 16, "gc_gl1c_per_sa": 1,
           "gc_gl1c_size_per_instance": 256, "gc_gl2c_per_gpu": 6144}
# Navi 48 (gc_info v1.2 like Navi 31): 4 SEs x 2 SAs x 4 WGPs (64 CUs), 8 MiB of L2.
GC_INFO_NAVI48 = GC_INFO | {"gc_num_se": 4, "gc_num_gl2c": 16, "gc_num_tcps": 64, "gc_gl2c_per_gpu": 8192}
# MI300X (gc_info v2.1, one XCC's values, as amdgpu reads them on GC 9.4.3): 4 SEs x 1 SH x 10 CU slots (38 of 40
# CUs active per XCC: the CU masks, not this table, say which), wave64, 8 waves a SIMD, 512 VGPRs a lane, 64 KiB LDS,
# 16 L2 channels of a 4 MiB L2, 32 KiB L1 a CU, 64 KiB instruction / 16 KiB scalar cache per SQC of 2 CUs.
GC_INFO_MI300X = {"gc_num_se": 4, "gc_num_cu_per_sh": 10, "gc_num_sh_per_se": 1, "gc_num_tccs": 16,
                  "gc_num_gprs": 512, "gc_wave_size": 64, "gc_max_waves_per_simd": 8,
                  "gc_max_scratch_slots_per_cu": 32, "gc_lds_size": 64, "gc_num_tcp_per_sh": 10,
                  "gc_tcp_size_per_cu": 32, "gc_num_cu_per_sqc": 2, "gc_instruction_cache_size_per_sqc": 64,
                  "gc_scalar_data_cache_size_per_sqc": 16, "gc_tcc_size": 4096}
# MI350X (gc_info v2.1, one XCC's values): 4 SEs x 1 SH x 9 CU slots (AMD's CDNA4 description: 36 CUs an XCD, 32
# active; the CU masks, not this table, say which; what MI350X's own gc_info holds is not confirmed), wave64, 8 waves
# a SIMD, 160 KiB of LDS (CDNA4's LDS per CU, what tinygrad sizes its CWSR area from on GC 9.5), MI300X's caches.
GC_INFO_MI350X = GC_INFO_MI300X | {"gc_num_cu_per_sh": 9, "gc_num_tcp_per_sh": 9, "gc_lds_size": 160}


@dataclass(frozen=True)
class Part:
    """What differs between the modelled parts: register map, VM hubs, discovery table (the page-table format is the
    chip family's, simgpu.hw.gmc.pte_format, and the MMU's from power-on)."""

    regmap: RegisterMap
    hubs: tuple[vmhub.VMHub, vmhub.VMHub]  # GC, MM
    blocks: tuple[discovery.IpBlock, ...]
    gc_info: dict[str, int]
    gc_info_version: tuple[int, int] = (1, 2)
    harvest: tuple[tuple[int, int], ...] | None = None  # the harvest table's entries (None: no harvest table)
    sdma: type = SDMAQueues  # the SDMA block (SOC21's queue 0 of two engines; SDMA 4.4.2's GFX queue of sixteen)


PARTS = {"gfx1100": lambda: Part(navi31_map(), (vmhub.GCHUB, vmhub.MMHUB), discovery.NAVI31_IP_BLOCKS, GC_INFO),
         "gfx1201": lambda: Part(navi48_map(), (vmhub.GCHUB_GFX12, vmhub.MMHUB_GFX12), discovery.NAVI48_IP_BLOCKS,
                                 GC_INFO_NAVI48),
         # gfx942: MI300X's discovery binary (four dies, harvest table, gc_info v2.1) and banked register map: a GC hub
         # and MEC per XCC, an MM hub per AID, SDMA 4.4.2's sixteen engines
         "gfx942": lambda: Part(mi300x_map(), (vmhub.GCHUB_GFX9, vmhub.MMHUB_GFX9), discovery.MI300X_IP_BLOCKS,
                                GC_INFO_MI300X, (2, 1), (), SDMA4Queues),
         # gfx950: the same blocks and banking at MI350X's IP versions (GC 9.5.0, SDMA 4.4.4, MP 13.0.12)
         "gfx950": lambda: Part(mi350x_map(), (vmhub.GCHUB_GFX9, vmhub.MMHUB_GFX9), discovery.MI350X_IP_BLOCKS,
                                GC_INFO_MI350X, (2, 1), (), SDMA4Queues)}


class SOC:
    """Registers, doorbells, configuration space and interrupt ring of one simulated GPU."""

    def __init__(self, gpu, index: int = 0):
        self.gpu, self.index = gpu, index
        vram = gpu.phys.vram_size
        self.part = PARTS.get(gpu.arch, PARTS["gfx1100"])()  # (a part without a register side keeps gfx1100's)
        self.regs = RegisterFile(self.part.regmap)
        self.queue_owner: dict[str, tuple] = {}  # queue name -> ("cp", me, pipe, queue) | ("sdma", engine)
        # a GC hub per XCC (XCC 0's drives the MMU: the XCCs share the address space), an MM hub per AID
        gc_hub, mm_hub = self.part.hubs
        self.gchubs = [Hub(self.regs, gc_hub, vram, gpu.mmu if x == 0 else None, x)
                       for x in self.regs.instances(gc_hub.context_cntl[0])]
        self.mmhubs = [Hub(self.regs, mm_hub, vram, None, a) for a in self.regs.instances(mm_hub.context_cntl[0])]
        self.gchub, self.mmhub, self.aids = self.gchubs[0], self.mmhubs[0], len(self.mmhubs)
        self.ih = InterruptHandler(self.regs, self.mmhub.mc_to_pa, gpu.phys)
        self.psp, self.smu = PSP(self), SMU(self)
        self.cp, self.sdma, self.nbio = MEC(self), self.part.sdma(self), NBIO(self, vram)
        self.pci = PCIEndpoint(index, vram, gpu.chip.device_id, gpu.chip.pci_revision)
        self.bus_errors: list[str] = []
        self.dropped_doorbells = 0
        gpu.interrupt_hooks.append(self._interrupt)
        gpu.soc = self
        self.power_on()

    # ---- reset ---------------------------------------------------------------------------------------------------
    def power_on(self) -> None:
        """Every block at its reset state; the discovery table written at the top of VRAM."""
        for block in (self.cp, self.sdma):
            block.reset()
        self.regs.reset()
        for block in (self.ih, self.psp, self.smu):
            block.reset()
        for hub in (*self.gchubs, *self.mmhubs):
            for vmid in range(len(hub.enabled)):
                if hub.enabled[vmid] and hub.mmu is not None:
                    hub.mmu.set_context(vmid, None)
                hub.enabled[vmid] = False
        self.gpu.mmu.set_system_aperture(None)
        table = discovery.build_table(self.part.blocks, self.part.gc_info, self.part.gc_info_version,
                                      self.part.harvest)
        self.gpu.phys.write(self.discovery_offset, table)

    def mode1_reset(self) -> None:
        """The SMU's mode-1 reset: the whole SOC returns to its power-on state (VRAM contents stay)."""
        self.power_on()

    @property
    def discovery_offset(self) -> int:
        """VRAM byte offset of the IP discovery table."""
        return self.gpu.phys.vram_size - discovery.DISCOVERY_TMR_OFFSET

    # ---- BAR5: registers ---------------------------------------------------------------------------------------
    def _check(self, what: str, offset: int, size: int, limit: int) -> None:
        if size != 4 or offset % 4 or not 0 <= offset < limit:
            raise self._error(f"{what} of {size} bytes at byte {offset:#x}: the register aperture takes aligned "
                              "32-bit accesses inside its 1 MiB")

    def _error(self, why: str) -> MMIOError:
        self.bus_errors.append(why)
        return MMIOError(why)

    def _modelled(self, what: str) -> None:
        """Refuse a register-side access to a chip whose registers are not modelled."""
        if not self.gpu.chip.am:
            raise self._error(f"{what}: the {self.gpu.arch} ({self.gpu.chip.asic}) PCI function's registers and IP "
                              "discovery table are not modelled (an AM driver can drive gfx1100, gfx1201, gfx942 and "
                              "gfx950)")

    def mmio_read(self, offset: int, size: int = 4) -> int:
        """A driver's read of the MMIO BAR at byte `offset`."""
        self._check("MMIO read", offset, size, MMIO_BAR_SIZE)
        self._modelled(f"MMIO read at byte {offset:#x}")
        if self._remap(offset):
            return 0
        try:
            return self.regs.read(offset // 4)
        except MMIOError as e:
            self.bus_errors.append(str(e))
            raise

    def mmio_peek(self, offset: int) -> int:
        """What a read of that dword would give, without side effects or errors."""
        return 0 if self._remap(offset) else self.regs.peek(offset // 4)

    def mmio_write(self, offset: int, value: int, size: int = 4) -> None:
        """A driver's write of the MMIO BAR at byte `offset`."""
        self._check("MMIO write", offset, size, MMIO_BAR_SIZE)
        self._modelled(f"MMIO write at byte {offset:#x}")
        if self._remap(offset):
            self.nbio.remap_flush()
            return
        try:
            self.regs.write(offset // 4, value)
        except MMIOError as e:
            self.bus_errors.append(str(e))
            raise

    @staticmethod
    def _remap(offset: int) -> bool:
        return hwnbio.MMIO_REG_HOLE_OFFSET <= offset < hwnbio.MMIO_REG_HOLE_OFFSET + 4096

    # ---- BAR2: doorbells ---------------------------------------------------------------------------------------
    def doorbell_read(self, offset: int, size: int = 8) -> int:
        """A read of the doorbell BAR: the doorbell's last value (one half for a 32-bit read)."""
        slot = self._slot(offset, size)
        if slot is None:
            return 0
        value = int(self.gpu.doorbells[slot])
        return value if size == 8 else (value >> (32 if offset % 8 else 0)) & 0xFFFFFFFF

    def doorbell_write(self, offset: int, value: int, size: int = 8) -> None:
        """A store to the doorbell BAR: rings that doorbell (its queue runs) while the doorbell aperture is on."""
        self._modelled(f"doorbell write at byte {offset:#x}")
        slot = self._slot(offset, size)
        if slot is None:
            return
        if not self.nbio.doorbells_enabled:
            self.dropped_doorbells += 1
            self.bus_errors.append(f"doorbell write at byte {offset:#x} while RCC_DEV0_EPF0_RCC_DOORBELL_APER_EN is 0 "
                                   "(dropped)")
            return
        if size == 4:
            old = int(self.gpu.doorbells[slot])
            value = (old & 0xFFFFFFFF) | (value & 0xFFFFFFFF) << 32 if offset % 8 else \
                (old & ~0xFFFFFFFF) | (value & 0xFFFFFFFF)
        self.gpu.ring_doorbell(slot, value)

    def _slot(self, offset: int, size: int) -> int | None:
        if size not in (4, 8) or offset % size or not 0 <= offset < DOORBELL_BAR_SIZE:
            raise self._error(f"doorbell access of {size} bytes at byte {offset:#x}: doorbells are aligned 32- or "
                              "64-bit")
        slot = offset // 8
        if slot >= len(self.gpu.doorbells):
            self.bus_errors.append(f"doorbell at byte {offset:#x}: the simulated GPU has {len(self.gpu.doorbells)} "
                                   "64-bit doorbells (the first 8 KiB of BAR2); ignored")
            return None
        return slot

    # ---- interrupts -----------------------------------------------------------------------------------------------
    def _interrupt(self, intr: Interrupt) -> None:
        if not self.regs.get("IH_RB_CNTL") & 1:
            return  # no ring: nothing to write (what KFD-mode operation sees)
        owner = self.queue_owner.get(intr.queue, ())
        q = next((q for q in self.gpu.queues if q.name == intr.queue), None)
        vmid = q.vmid if q is not None else 0
        fault = intr.fault
        if intr.kind == Kind.QUEUE_ERROR and fault is not None and fault.kind == "page_fault" and \
                fault.address is not None:
            write = fault.access in ("write", "atomic")
            self.gchub.record_fault(fault.vmid if fault.vmid is not None else vmid, fault.address, write)
        e = irq.entry(intr, owner, vmid, soc15=self.part.gc_info_version[0] == 2)
        if e is not None:
            self.ih.post(e)

    # ---- info -----------------------------------------------------------------------------------------------------
    def describe(self) -> list[str]:
        """The SOC's state: VM contexts, queues, IH, PSP, SMU, errors, registers no header names."""
        consulted = set(self.regs.consulted)  # (describing reads registers: that is not the device using them)
        lines = self.gchub.describe() + self.mmhub.describe() + self.cp.describe() + self.sdma.describe()
        lines += self.ih.describe() + self.psp.describe() + self.smu.describe()
        self.regs.consulted = consulted
        lines += [f"bus error: {e}" for e in self.bus_errors[-16:]]
        return lines + self.regs.describe()
