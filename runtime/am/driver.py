"""AMDriver: the driver protocol (runtime.driver) of the AM backend -- the runtime itself drives the PCI function.

Everything above the driver is runtime.Device's (Buffers, copies, launches, profiling, the HCQ queues of
runtime.queues with their PM4, AQL and SDMA packets, unchanged); what amdkfd does for a KFD Device is done here:
the bring-up (runtime.am.boot), VRAM allocation and the GPU page tables of the user VM context (runtime.am.vram),
queues made by writing an MQD and the HQD registers (compute) or the SDMA ring registers, waiting by polling the
fences and the IH ring, and faults read from IH entries (UTCL2 / SQ error / CP bad opcode / SDMA hang), which the
Device raises as runtime.GPUFault after the queues are restarted. Buffers are all VRAM (a userspace driver maps
no system memory for the GPU), each CPU-mapped through BAR0 at its GPU VA.
"""

from __future__ import annotations

import time

from runtime.am.boot import USER_VMID, bring_up, flush_tlb, smu_message
from runtime.am.pci import PCIFunction, amd_gpus
from runtime.fault import GPUFault
from runtime.memory import PAGE
from runtime.os import MAP_FIXED, MAP_SHARED, DeviceReport, Mapping
from simgpu.hw import ih as hwih
from simgpu.hw import mqd as hwmqd
from simgpu.hw import smu as hwsmu
from simgpu.hw.soc21 import gc, oss

GPU_COUNTER_HZ = 100_000_000  # gfx11's GPU timestamp counter (what amdgpu's DEV_INFO reports as 100000 KHz)
COMPUTE_DOORBELL, SDMA_DOORBELL = 0x3, 0x100  # 64-bit doorbell slots (amdgpu's NAVI10 doorbell layout)
EOP_SIZE = 4096
_FAULT_SOURCES = {hwih.Source.UTCL2_FAULT: "page_fault", hwih.Source.CP_BAD_OPCODE_ERROR: "hang",
                  hwih.Source.SDMA_QUEUE_HANG: "hang"}




class AMDriver:
    """Device("AMD:i", driver="am"): the i-th AMD GPU of the PCI bus, driven from userspace."""

    name = "am"
    system_memory = False

    def __init__(self, dev):
        self.dev, self.os = dev, dev.os

    # ---- discovery and set-up ----------------------------------------------------------------------------------
    def open(self) -> None:
        """The dev.index-th AMD function of the PCI bus: enabled, its IP discovery table read, brought up."""
        gpus = amd_gpus(self.os)
        if not 0 <= self.dev.index < len(gpus):
            raise RuntimeError(f"{self.dev.name}: no such PCI device ({len(gpus)} AMD GPU(s) on the PCI bus)")
        self.bdf = self.gpu_id = gpus[self.dev.index]  # the simulator's device_report/sanitize take the bus id
        self.node_id = self.dev.index
        self.pci = PCIFunction(self.os, self.bdf)
        table = self.pci.discover()
        gc_block = next(b for b in table.blocks if b.name == "GC")
        major, minor, rev = gc_block.version
        if (major, minor) != (11, 0):  # its register names resolve against SOC21's offsets (runtime.am.pci)
            raise NotImplementedError(f"{self.dev.name}: the runtime's AM backend brings up GC 11.0 (gfx1100) only, "
                                      f"not GC {major}.{minor}.{rev} (tinygrad's AM driver drives gfx1201)")
        info = table.gc_info
        self.properties = {"gfx_target_version": major * 10000 + minor * 100 + rev,
                           "simd_count": 2 * 2 * info["gc_num_wgp0_per_sa"] * info["gc_num_sa_per_se"]
                           * info["gc_num_se"],
                           "lds_size_in_kb": info["gc_lds_size"], "wave_front_size": info["gc_wave_size"],
                           "max_waves_per_simd": info["gc_max_waves_per_simd"],
                           "array_count": info["gc_num_sa_per_se"] * info["gc_num_se"],
                           "simd_arrays_per_engine": info["gc_num_sa_per_se"],
                           "cu_per_simd_array": 2 * info["gc_num_wgp0_per_sa"], "location_id": 0,
                           "local_mem_size": self.pci.vram_size, "num_sdma_engines": 2}
        self.arch = f"gfx{major}{minor:x}{rev:x}"
        self.booted = bring_up(self.pci)
        self._hqds: dict[object, tuple] = {}  # runtime queue -> (pipe, queue, MQD PA, EOP PA) or ("sdma", engine)
        self.ih_rptr = 0

    def query_info(self) -> None:
        """The timestamp counter's rate and the top GFXCLK level (the SMU); no AMDGPU_INFO to ask."""
        self.dev_info = None
        self.counter_hz = self.properties["gpu_counter_freq"] = GPU_COUNTER_HZ
        top = smu_message(self.pci, hwsmu.Msg.GetDpmFreqByIndex, hwsmu.Clock.GFXCLK << 16 | hwsmu.DPM_COUNT_QUERY)
        self.properties["max_engine_clk"] = smu_message(self.pci, hwsmu.Msg.GetDpmFreqByIndex,
                                                        hwsmu.Clock.GFXCLK << 16 | (top - 1))
        self.hw_ip = {}
        self.firmware = {"smu": self.booted.smu_version}

    def drm_info(self, query: int, result_type, **arg):
        """AM has no render node to ask."""
        raise RuntimeError(f"{self.dev.name}: the AM backend has no DRM render node (AMDGPU_INFO)")

    def create_events(self) -> None:
        """No events to create: the queues' interrupts carry this context id (an AQL completion signal's mailbox
        gets it written too), in a mailbox page of the Device's."""
        self.completion_event = 1
        self.event_page = self.dev.alloc_system(PAGE, name="event mailbox page")
        self.event_page_va = self.event_page.va

    def destroy_events(self) -> None:
        """Nothing: the mailbox page goes with the Device's buffers."""

    # ---- memory ---------------------------------------------------------------------------------------------
    def alloc_memory(self, va: int, size: int, host: bool, executable: bool, uncached: bool,
                     peers: tuple) -> tuple[int, bool]:
        """VRAM from the driver's allocator, mapped at `va` in the user VM's page tables; the handle is its
        physical address. Always VRAM (`host` is ignored)."""
        if peers:
            raise NotImplementedError(f"{self.dev.name}: the AM backend does not map buffers on peer GPUs")
        pa = self.booted.vram.alloc(size, 1 << 21 if size >= 1 << 21 else PAGE)
        self.booted.tables.map(va, pa, size)
        flush_tlb(self.pci)
        return pa, False

    def map_cpu(self, handle: int, va: int, size: int) -> Mapping:
        """BAR0 at the allocation's physical address, placed at its GPU VA."""
        return self.pci.map_vram(handle, size, va, MAP_SHARED | MAP_FIXED)

    def free_memory(self, handle: int, va: int, size: int) -> None:
        """Unmap the buffer from the user VM and give its VRAM back."""
        self.booted.tables.unmap(va, size)
        flush_tlb(self.pci)
        self.booted.vram.release(handle, size)

    def memory_info(self) -> dict:
        """VRAM size and use (the driver's own allocator)."""
        free = sum(hi - lo for lo, hi in self.booted.vram.free)
        return {"vram_size": self.pci.vram_size, "vram_cpu_accessible_size": self.pci.bar0_size, "gtt_size": 0,
                "vram_used": self.booted.vram.used, "gtt_used": 0, "vram_max_allocation": free,
                "gtt_max_allocation": 0}

    # ---- queues -----------------------------------------------------------------------------------------------
    def create_queue(self, q, ring_size: int, rptr: int, wptr: int) -> tuple[int, Mapping, int]:
        """Make a queue: an MQD + HQD for PM4/AQL (MEC 1, pipe 0), SDMA0's queue 0 for SDMA."""
        if q.fmt == "sdma":
            return self._sdma_queue(q, ring_size, rptr, wptr)
        used = {v[1] for v in self._hqds.values() if v[0] != "sdma"}
        queue = next(i for i in range(8) if i not in used)
        slot = COMPUTE_DOORBELL + queue
        window = self.booted.window
        mqd_pa, eop_pa = window.allocator.alloc(hwmqd.MQD_SIZE), window.allocator.alloc(EOP_SIZE)
        mqd_mc = self.booted.fb_base + mqd_pa
        mqd = hwmqd.ComputeMQD(
            header=hwmqd.MQD_HEADER, cp_mqd_base_addr_lo=mqd_mc & 0xFFFFFFFF, cp_mqd_base_addr_hi=mqd_mc >> 32,
            cp_hqd_vmid=USER_VMID, cp_hqd_pq_base_lo=(q.ring.va >> 8) & 0xFFFFFFFF, cp_hqd_pq_base_hi=q.ring.va >> 40,
            cp_hqd_pq_rptr_report_addr_lo=rptr & 0xFFFFFFFC, cp_hqd_pq_rptr_report_addr_hi=rptr >> 32,
            cp_hqd_pq_wptr_poll_addr_lo=wptr & 0xFFFFFFF8, cp_hqd_pq_wptr_poll_addr_hi=wptr >> 32,
            cp_hqd_pq_doorbell_control=gc.CP_HQD_PQ_DOORBELL_CONTROL.pack(doorbell_offset=slot * 2, doorbell_en=1),
            cp_hqd_pq_control=gc.CP_HQD_PQ_CONTROL.pack(queue_size=(ring_size // 4).bit_length() - 2,
                                                        rptr_block_size=5, priv_state=1, kmd_queue=1),
            cp_hqd_eop_base_addr_lo=((self.booted.fb_base + eop_pa) >> 8) & 0xFFFFFFFF,
            cp_hqd_eop_base_addr_hi=(self.booted.fb_base + eop_pa) >> 40,
            cp_hqd_eop_control=gc.CP_HQD_EOP_CONTROL.pack(eop_size=(EOP_SIZE // 4).bit_length() - 2),
            cp_hqd_aql_control=int(q.fmt == "aql"), cp_mqd_control=gc.CP_MQD_CONTROL.pack(priv_state=1))
        image = mqd.pack()
        window.at(mqd_pa, hwmqd.MQD_SIZE)[:] = image
        self._select(pipe=0, queue=queue)
        first = self.pci.regs["CP_MQD_BASE_ADDR"]
        for i, (field, value) in enumerate(zip(hwmqd.HQD_FIELDS, hwmqd.hqd_image(image), strict=True)):
            if field is not None:  # (the unnamed dword of the image has no register behind it)
                self.pci.wreg_dword(first + i, value)
        self.pci.wreg("CP_HQD_ACTIVE", 1)
        self._select()
        self._hqds[q] = (0, queue, mqd_pa, eop_pa)
        return queue, self.pci.bars[2], slot * 8

    def _sdma_queue(self, q, ring_size: int, rptr: int, wptr: int) -> tuple[int, Mapping, int]:
        p = "SDMA0_QUEUE0_"
        w = self.pci.wreg
        w(p + "MINOR_PTR_UPDATE", 1)
        for r in ("RB_RPTR", "RB_RPTR_HI", "RB_WPTR", "RB_WPTR_HI"):
            w(p + r, 0)
        self.pci.wreg64(p + "RB_BASE", p + "RB_BASE_HI", q.ring.va >> 8)
        self.pci.wreg64(p + "RB_RPTR_ADDR_LO", p + "RB_RPTR_ADDR_HI", rptr)
        self.pci.wreg64(p + "RB_WPTR_POLL_ADDR_LO", p + "RB_WPTR_POLL_ADDR_HI", wptr)
        self.pci.wreg_fields(p + "DOORBELL_OFFSET", offset=SDMA_DOORBELL * 2)
        self.pci.wreg_fields(p + "DOORBELL", enable=1)
        w(p + "MINOR_PTR_UPDATE", 0)
        self.pci.wreg_fields(p + "RB_CNTL", rb_enable=1, rb_size=ring_size.bit_length() - 3, rb_vmid=USER_VMID,
                             rptr_writeback_enable=1, f32_wptr_poll_enable=1, rb_priv=1)
        self.pci.wreg_fields(p + "IB_CNTL", ib_enable=1)
        self._hqds[q] = ("sdma", 0)
        return 0, self.pci.bars[2], SDMA_DOORBELL * 8

    def destroy_queue(self, q) -> None:
        """Dequeue: CP_HQD_DEQUEUE_REQUEST for a compute HQD (its MQD and EOP freed), RB_ENABLE off for SDMA."""
        where = self._hqds.pop(q, None)
        if where is None:
            return
        if where[0] == "sdma":
            self.pci.wreg("SDMA0_QUEUE0_RB_CNTL", 0)
            return
        pipe, queue, mqd_pa, eop_pa = where
        self._select(pipe=pipe, queue=queue)
        self.pci.wreg_fields("CP_HQD_DEQUEUE_REQUEST", dequeue_req=1)
        self.pci.wait_reg("CP_HQD_ACTIVE", 1, 0, "compute queue dequeue")
        for r in ("CP_HQD_PQ_RPTR", "CP_HQD_PQ_WPTR_LO", "CP_HQD_PQ_WPTR_HI"):
            self.pci.wreg(r, 0)
        self._select()
        self.booted.window.allocator.release(mqd_pa, hwmqd.MQD_SIZE)
        self.booted.window.allocator.release(eop_pa, EOP_SIZE)

    def _select(self, pipe: int | None = None, queue: int = 0) -> None:
        """GRBM_GFX_CNTL: which HQD the banked CP registers show (MEC 1's pipe/queue; None: back to 0, as amdgpu
        leaves it)."""
        if pipe is None:
            self.pci.wreg("GRBM_GFX_CNTL", 0)
        else:
            self.pci.wreg_fields("GRBM_GFX_CNTL", meid=1, pipeid=pipe, queueid=queue)

    # ---- waiting and faults -----------------------------------------------------------------------------------
    def wait_event(self, timeout_ms: int, done) -> tuple[tuple | None, bool]:
        """Poll until `done()` or a fault entry in the IH ring, for at most timeout_ms: (the fault entry and what the
        fault registers said, or None; whether the time ran out). A page fault's status is read and cleared here,
        as amdgpu's interrupt handler does."""
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            fault = next((e for e in self.take_interrupts() if _fault_kind(e)), None)
            if fault is not None:
                return self._fault_status(fault), False
            if done():
                return None, False
            if time.monotonic() > deadline:
                return None, True

    def take_interrupts(self) -> list[hwih.Entry]:
        """The IH ring's new entries (reading IH_RB_WPTR; IH_RB_RPTR moved past them)."""
        wptr = oss.RB_WPTR.offset.get(self.pci.rreg("IH_RB_WPTR")) << 2
        ring, size, out = self.booted.ih_ring, 4 << oss.RB_CNTL.rb_size.get(self.pci.rreg("IH_RB_CNTL")), []
        while self.ih_rptr != wptr:
            at = ring + self.ih_rptr
            out.append(hwih.Entry.unpack(bytes(self.booted.window.at(at, hwih.ENTRY_SIZE))))
            self.ih_rptr = (self.ih_rptr + hwih.ENTRY_SIZE) % size
        if out:
            self.pci.wreg("IH_RB_RPTR", self.ih_rptr)
        return out

    def _fault_status(self, entry: hwih.Entry) -> tuple[hwih.Entry, str, int | None]:
        """(entry, what happened, the faulting address): a UTCL2 fault's GCVM_L2_PROTECTION_FAULT_STATUS, cleared."""
        what = f"IH entry client {entry.client_id} source {entry.source_id} ring {entry.ring_id} vmid {entry.vmid}"
        if entry.source_id != hwih.Source.UTCL2_FAULT:
            return entry, what, None
        address = hwih.vm_fault_address(entry)
        status = self.pci.rreg("GCVM_L2_PROTECTION_FAULT_STATUS")
        self.pci.wreg_fields("GCVM_L2_PROTECTION_FAULT_CNTL", clear_protection_fault_status_addr=1)
        return entry, f"GPU page fault at {address:#x} (UTCL2, vmid {entry.vmid}, " \
                      f"GCVM_L2_PROTECTION_FAULT_STATUS {status:#x})", address

    def fault(self, event: tuple, report: DeviceReport, notes: list[str], usable: bool) -> GPUFault:
        """The GPUFault of a fault entry: what it says, the driver's report, the runtime's notes."""
        entry, what, address = event
        kind = report.fault or _fault_kind(entry)
        return GPUFault("\n".join([f"{self.dev.name} ({self.bdf}): {what}", *([report.text] if report.text else []),
                                   *notes]), kind, address, self.gpu_id, usable)

    def close(self) -> None:
        """Unmap the driver window and the BARs (the device stays booted, as after a driver exits)."""
        self.os.munmap(self.booted.window.mapping)
        self.pci.close()


def _fault_kind(e: hwih.Entry) -> str:
    if e.source_id == hwih.Source.SQ_INTERRUPT_ID:
        return "shader" if hwih.SQ_CTX1.encoding.get(e.context[1]) == hwih.SqEncoding.ERROR else ""
    return _FAULT_SOURCES.get(e.source_id, "")
