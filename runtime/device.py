"""Device: one AMD GPU opened through amdkfd (the `OS` seam): memory, queues, events, copies, launches."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import struct

from runtime import memory as rtmem
from runtime import profile as rtprofile
from runtime.fault import HW, MEMORY, GPUFault, GPUTimeout
from runtime.launch import FencedRing, Launch
from runtime.memory import PAGE, Buffer
from runtime.os import MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, MAP_SHARED, OS, PROT_READ, PROT_WRITE, TOPOLOGY, select_os
from runtime.process import kfd_context
from runtime.queues import AQLQueue, PM4Queue, SDMAQueue
from runtime.sanitize import deliver
from runtime.uapi import amdgpu_drm as drm
from runtime.uapi import kfd
from simgpu.hw import sdma

STAGING = 4 << 20  # host bounce buffer for copyin/copyout
COPY_CHUNK = 1 << 26  # bytes per SDMA COPY_LINEAR between GPU buffers
KERNARG_RING = 1 << 20
STAMP_RING = 1 << 16  # 64-byte slots: PM4 start/end timestamps, or an AQL completion signal (amd_signal_t)
STAMP_SLOT = 64
DEFAULT_TIMEOUT_MS = 30_000
_EVENT_SIZE = ctypes.sizeof(kfd.kfd_event_data)
# Offsets in the host page of ioctl pointer arguments (args_page).
_ARGS_DEVICE_IDS, _ARGS_EVENTS, _ARGS_INFO = 0, 4096, 8192


def _arch(version: int) -> str:
    return f"gfx{version // 10000}{(version // 100) % 100:x}{version % 100:x}"


def _size(n: int) -> str:
    """A byte count for messages: exact bytes, and the largest binary unit that keeps it above 1."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n} bytes ({n / (1 << shift):.4g} {unit})"
    return f"{n} bytes"


def _props(text: str) -> dict:
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        if k:
            out[k] = int(v) if v.strip().lstrip("-").isdigit() else v.strip()
    return out


class Device:
    """An AMD GPU: Device("AMD:0", queue="pm4"|"aql", driver="kfd"|"am"); os defaults to the process's OS
    (select_os()). driver="am" gives a runtime.am.device.AMDevice, which drives the PCI function itself. Several
    Devices may drive one GPU in one process (they share its amdkfd context); close() or a `with` block
    releases what one holds. `sanitize` ("memcheck,initcheck,racecheck,hazards" or "all") turns on the
    simulator's sanitizers (runtime.sanitize; OSError on a real GPU)."""

    driver = "kfd"  # (runtime.am.device.AMDevice: "am")

    def __new__(cls, *args, driver: str = "kfd", **kwargs):
        if driver not in ("kfd", "am"):
            raise ValueError(f"driver must be 'kfd' or 'am', not {driver!r}")
        if cls is Device and driver == "am":
            from runtime.am.device import AMDevice  # the AM backend: this runtime drives the PCI function itself
            cls = AMDevice
        return super().__new__(cls)

    def __init__(self, name: str = "AMD:0", queue: str = "pm4", os: OS | None = None, sanitize: str | None = None,
                 driver: str = "kfd"):
        if queue not in ("pm4", "aql"):
            raise ValueError(f"queue must be 'pm4' or 'aql', not {queue!r}")
        self.name, self.queue_kind = name, queue
        self.os = os if os is not None else select_os()
        self.va_space = rtmem.va_space(self.os)  # shared with every Device on this OS object
        self.index = int(name.partition(":")[2] or 0)
        self._find_node()
        self.usable = True
        self._open_driver()
        self.findings: list[dict] = []  # non-fatal sanitizer findings (runtime.sanitize)
        state = self.os.sanitize(self.gpu_id, sanitize)
        self.sanitizers = frozenset(state["checks"])
        deliver(state["findings"], self.findings)
        self._query_driver_info()
        self._setup_memory_and_events()
        self.sdma = SDMAQueue(self, self.completion_event)
        self.compute = (AQLQueue if queue == "aql" else PM4Queue)(self, self.completion_event)
        self.staging = self.alloc_system(STAGING, name="staging buffer")
        self.kernargs = self.alloc_system(KERNARG_RING, name="kernarg ring")
        self.stamps = self.alloc_system(STAMP_RING, name="timestamp/signal ring")
        self.kernarg_ring, self.stamp_ring = FencedRing(KERNARG_RING, 64), FencedRing(STAMP_RING, STAMP_SLOT)
        self.launches = 0
        self.sync_epoch, self.sync_time = 0, 0.0  # GPU time of this epoch's retired launches (synchronize())
        self._aborted: list[tuple[int, int, str]] = []  # compute timeline ranges (lo, hi] a fault discarded
        # A runtime.profile.Profiler around every launch (SIMGPU_PROFILE / SIMGPU_SQTT, Device.profile), or None.
        self.profiler = rtprofile.from_environment(self)

    # ---- discovery and set-up -----------------------------------------------------------------------
    def _find_node(self) -> None:
        nodes = sorted(int(n) for n in self.os.listdir(f"{TOPOLOGY}/nodes"))
        gpus = [n for n in nodes if int(self.os.read_text(f"{TOPOLOGY}/nodes/{n}/gpu_id").strip() or 0)]
        if not 0 <= self.index < len(gpus):
            raise RuntimeError(f"{self.name}: no such device ({len(gpus)} AMD GPU(s) found)")
        node = gpus[self.index]
        self.node_id = node
        self.gpu_id = int(self.os.read_text(f"{TOPOLOGY}/nodes/{node}/gpu_id"))
        self.properties = _props(self.os.read_text(f"{TOPOLOGY}/nodes/{node}/properties"))
        self.arch = _arch(self.properties["gfx_target_version"])

    def _open_driver(self) -> None:
        """This GPU in the process's amdkfd context (opened by the first Device on this OS object)."""
        self.process = kfd_context(self.os)
        self.kfd_fd, self.kfd_version = self.process.kfd_fd, self.process.version
        self.drm_fd = self.process.render_fd(self.gpu_id, self.properties["drm_render_minor"])
        # Host memory for ioctl arguments that are pointers (device id arrays, event data).
        self.args_page = self.os.mmap(-1, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS)
        self._doorbells: dict[int, object] = {}
        self._buffers: dict[int, Buffer] = {}  # live buffers by VA: freed by close()
        self.closed = False

    def _query_driver_info(self) -> None:
        """What the render node says (AMDGPU_INFO): clocks for .properties, the engines the runtime needs."""
        self.dev_info = self.drm_info(drm.AMDGPU_INFO_DEV_INFO, drm.drm_amdgpu_info_device)
        self.properties["gpu_counter_freq"] = self.dev_info.gpu_counter_freq * 1000  # KHz -> Hz
        self.properties["max_engine_clk"] = self.dev_info.max_engine_clock // 1000  # KHz -> MHz
        self.counter_hz = self.properties["gpu_counter_freq"]
        self.hw_ip = {name: self.drm_info(drm.AMDGPU_INFO_HW_IP_INFO, drm.drm_amdgpu_info_hw_ip, query_hw_ip=(ip, 0))
                      for name, ip in (("gfx", drm.AMDGPU_HW_IP_GFX), ("compute", drm.AMDGPU_HW_IP_COMPUTE),
                                       ("dma", drm.AMDGPU_HW_IP_DMA))}
        for name in ("compute", "dma"):
            if not self.hw_ip[name].available_rings:
                raise RuntimeError(f"{self.name}: the driver reports no {name} engine")
        self.firmware = {name: self.drm_info(drm.AMDGPU_INFO_FW_VERSION, drm.drm_amdgpu_info_firmware,
                                             query_fw=drm.drm_amdgpu_query_fw(fw_type=fw)).ver
                         for name, fw in (("me", drm.AMDGPU_INFO_FW_GFX_ME), ("mec", drm.AMDGPU_INFO_FW_GFX_MEC),
                                          ("rlc", drm.AMDGPU_INFO_FW_GFX_RLC))}

    def drm_info(self, query: int, result_type, **arg):
        """DRM_IOCTL_AMDGPU_INFO on the render node: the answer to `query` as a `result_type` struct; `arg`
        sets the query's argument (query_hw_ip=(type, instance), query_fw=drm_amdgpu_query_fw(...))."""
        size = ctypes.sizeof(result_type)
        a = drm.drm_amdgpu_info(return_pointer=self.args_page.addr + _ARGS_INFO, return_size=size, query=query)
        for k, v in arg.items():
            setattr(a, k, v)
        self.args_page.view[_ARGS_INFO:_ARGS_INFO + size] = bytes(size)
        self.os.ioctl(self.drm_fd, drm.DRM_IOCTL_AMDGPU_INFO, a.pack())
        return result_type.unpack(self.args_page.view[_ARGS_INFO:_ARGS_INFO + size])

    def memory_info(self) -> dict:
        """VRAM and GTT sizes and usage in bytes (AMDGPU_INFO_VRAM_GTT and AMDGPU_INFO_MEMORY)."""
        vg = self.drm_info(drm.AMDGPU_INFO_VRAM_GTT, drm.drm_amdgpu_info_vram_gtt)
        mem = self.drm_info(drm.AMDGPU_INFO_MEMORY, drm.drm_amdgpu_memory_info)
        return {"vram_size": vg.vram_size, "vram_cpu_accessible_size": vg.vram_cpu_accessible_size,
                "gtt_size": vg.gtt_size, "vram_used": mem.vram.heap_usage, "gtt_used": mem.gtt.heap_usage,
                "vram_max_allocation": mem.vram.max_allocation, "gtt_max_allocation": mem.gtt.max_allocation}

    def _setup_memory_and_events(self) -> None:
        self.process.event_page_on(self.gpu_id)
        self.event_page_va = self.process.event_page_va  # signal event e's mailbox is at + 8 * e
        self.completion_event = self.process.create_event(kfd.KFD_IOC_EVENT_SIGNAL, self.node_id)
        self.memory_event = self.process.create_event(kfd.KFD_IOC_EVENT_MEMORY, self.node_id)
        self.hw_event = self.process.create_event(kfd.KFD_IOC_EVENT_HW_EXCEPTION, self.node_id)

    def kfd_ioctl(self, request: int, args):
        """Issue an amdkfd ioctl with a ctypes argument struct; returns the updated struct."""
        buf = args.pack()
        self.os.ioctl(self.kfd_fd, request, buf)
        return type(args).unpack(buf)

    def create_hw_queue(self, q, ring_size: int, rptr: int, wptr: int) -> tuple[int, object, int]:
        """CREATE_QUEUE for a runtime.queues queue: (queue id, doorbell page mapping, byte offset in it)."""
        a = kfd.kfd_ioctl_create_queue_args(ring_base_address=q.ring.va, ring_size=ring_size, gpu_id=self.gpu_id,
                                            queue_type=q.queue_type, queue_percentage=100, queue_priority=7,
                                            read_pointer_address=rptr, write_pointer_address=wptr)
        a = self.kfd_ioctl(kfd.AMDKFD_IOC_CREATE_QUEUE, a)
        return a.queue_id, self.doorbell_mapping(a.doorbell_offset), a.doorbell_offset & 0x1FFF

    def destroy_hw_queue(self, q) -> None:
        """DESTROY_QUEUE."""
        self.kfd_ioctl(kfd.AMDKFD_IOC_DESTROY_QUEUE, kfd.kfd_ioctl_destroy_queue_args(queue_id=q.queue_id))

    def doorbell_mapping(self, doorbell_offset: int):
        """The CPU mapping of the doorbell page holding `doorbell_offset` (mapped once)."""
        page = doorbell_offset & ~0x1FFF
        if page not in self._doorbells:
            self._doorbells[page] = self.os.mmap(self.kfd_fd, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED, page)
        return self._doorbells[page]

    # ---- memory ---------------------------------------------------------------------------------
    def _map_on(self, handle: int, gpu_ids: list[int], unmap: bool = False) -> None:
        struct.pack_into(f"<{len(gpu_ids)}I", self.args_page.view, _ARGS_DEVICE_IDS, *gpu_ids)
        cls, req = ((kfd.kfd_ioctl_unmap_memory_from_gpu_args, kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU) if unmap else
                    (kfd.kfd_ioctl_map_memory_to_gpu_args, kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU))
        self.kfd_ioctl(req, cls(handle=handle, device_ids_array_ptr=self.args_page.addr + _ARGS_DEVICE_IDS,
                                n_devices=len(gpu_ids)))

    def _alloc(self, nbytes: int, flags: int, cpu: bool, peers: tuple = (), name: str = "buffer") -> Buffer:
        size = max(PAGE, -(-nbytes // PAGE) * PAGE)
        va, reservation = self.va_space.reserve(size, 1 << 21 if size >= 1 << 21 else PAGE)
        try:
            a = self.kfd_ioctl(kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, kfd.kfd_ioctl_alloc_memory_of_gpu_args(
                va_addr=va, size=size, gpu_id=self.gpu_id, flags=flags))
        except OSError as e:
            self.os.munmap(reservation)
            if e.errno == errno.ENOMEM:
                raise MemoryError(self._out_of_memory(nbytes, bool(flags & kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT))) from e
            raise
        self._map_on(a.handle, [self.gpu_id, *(p.gpu_id for p in peers)])
        for gpu_id in (self.gpu_id, *(p.gpu_id for p in peers)):  # what the buffer is, for the sanitizers
            self.os.annotate({"what": "buffer", "gpu_id": gpu_id, "va": va, "nbytes": nbytes, "name": name})
        # The CPU mapping goes over the reservation, at the GPU VA: CPU address = GPU address.
        mapping = self.os.mmap(self.drm_fd, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, a.mmap_offset,
                               va) if cpu else None
        buf = Buffer(self, va, nbytes, size, a.handle, bool(flags & kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT), mapping,
                     [self, *peers], reservation)
        self._buffers[va] = buf
        return buf

    def _out_of_memory(self, nbytes: int, host: bool) -> str:
        info = self.memory_info()
        what, total, used = ("system memory the GPU may use (GTT)", info["gtt_size"], info["gtt_used"]) if host \
            else ("VRAM", info["vram_size"], info["vram_used"])
        return (f"{self.name}: cannot allocate {_size(nbytes)} of {what}: it exceeds the device's memory "
                f"({_size(total - used)} free of {_size(total)})")

    def alloc(self, nbytes: int, host: bool = False, executable: bool = False, name: str = "buffer") -> Buffer:
        """GPU memory of at least `nbytes` (VRAM, or host memory the GPU reaches when `host`); MemoryError
        naming the sizes when the device has not that much free."""
        if nbytes <= 0:
            raise ValueError(f"cannot allocate {nbytes} bytes")
        self._check_usable()
        flags = (kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT if host else kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM) | \
            kfd.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | kfd.KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE | \
            (kfd.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE if executable else 0)
        return self._alloc(nbytes, flags, cpu=False, name=name)

    def alloc_system(self, nbytes: int, peers: tuple = (), name: str = "runtime buffer") -> Buffer:
        """Runtime-internal host memory, mapped on this GPU (and `peers`) and into the CPU."""
        flags = kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT | kfd.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | \
            kfd.KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | kfd.KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED
        return self._alloc(nbytes, flags, cpu=True, peers=peers, name=name)

    def free(self, buf: Buffer) -> None:
        """Free a buffer (Buffer.free calls this), once the queues are done with it."""
        self._buffers.pop(buf.va, None)
        if buf.mapping is not None:
            self.os.munmap(buf.mapping)
        if buf.reservation is not None:
            self.os.munmap(buf.reservation)
        if not self.closed:  # close() destroyed the queues first: nothing uses the buffer any more
            self.wait_idle()
        self._free_memory(buf)

    def _free_memory(self, buf: Buffer) -> None:
        """Give the buffer's memory back to the driver (FREE_MEMORY_OF_GPU)."""
        self.kfd_ioctl(kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU, kfd.kfd_ioctl_free_memory_of_gpu_args(handle=buf.handle))

    # ---- copies ---------------------------------------------------------------------------------
    def _after_launches(self) -> None:
        """Wait for every kernel launched so far before an SDMA copy: the SDMA queue does not wait for the compute
        queue by itself, so a copy could read a buffer before a kernel launched with wait=False wrote it (zeros)
        or overwrite one it has not read yet. Waiting also raises the GPUFault of a kernel that faulted instead
        of copying out the output it never wrote. (Only a doorbell that runs the GPU at once hid this.)"""
        self.wait(self.compute, self.compute.submitted)

    def copy_from_host(self, dst_va: int, src: memoryview) -> None:
        """Host bytes -> GPU VA, through the staging buffer and SDMA (after the kernels launched before)."""
        self._after_launches()
        for pos in range(0, src.nbytes, STAGING):
            n = min(STAGING, src.nbytes - pos)
            self.staging.view[:n] = src[pos:pos + n]
            self.wait(self.sdma, self.sdma.submit(sdma.copy_linear(dst_va + pos, self.staging.va, n)))

    def copy_to_host(self, dst: memoryview, src_va: int) -> None:
        """GPU VA -> host bytes, through SDMA and the staging buffer (after the kernels launched before)."""
        self._after_launches()
        for pos in range(0, dst.nbytes, STAGING):
            n = min(STAGING, dst.nbytes - pos)
            self.wait(self.sdma, self.sdma.submit(sdma.copy_linear(self.staging.va, src_va + pos, n)))
            dst[pos:pos + n] = self.staging.view[:n]

    def copy_between(self, dst: Buffer, src: Buffer, nbytes: int) -> None:
        """Buffer -> buffer; across devices through a system-memory buffer both GPUs map."""
        if dst.device is self:
            self._sdma_copy(dst.va, src.va, nbytes)
            return
        if src.device is not self:
            src.device.copy_between(dst, src, nbytes)
            return
        bounce = self.alloc_system(min(nbytes, STAGING), peers=(dst.device,), name="copy bounce buffer")
        try:
            for pos in range(0, nbytes, STAGING):
                n = min(STAGING, nbytes - pos)
                self._sdma_copy(bounce.va, src.va + pos, n)
                dst.device._sdma_copy(dst.va + pos, bounce.va, n)
        finally:
            bounce.free()

    def _sdma_copy(self, dst_va: int, src_va: int, nbytes: int) -> None:
        self._after_launches()
        packets = []
        for pos in range(0, nbytes, COPY_CHUNK):
            packets += sdma.copy_linear(dst_va + pos, src_va + pos, min(COPY_CHUNK, nbytes - pos))
        self.wait(self.sdma, self.sdma.submit(packets))

    # ---- code -------------------------------------------------------------------------------------
    def load(self, code_object: bytes):
        """Load a code object (ET_DYN or ET_REL); returns a Module."""
        from runtime.module import Module
        return Module(self, code_object)

    # ---- waiting ----------------------------------------------------------------------------------
    def profile(self, fn, counters: list[str] | None = None, sqtt: bool = False) -> rtprofile.Profile:
        """Run `fn` (which launches kernels on this device) with every launch's performance counters collected,
        once per counter pass (all modelled counters by default), and with thread traces if `sqtt`."""
        return rtprofile.profile(self, fn, counters, sqtt)

    def synchronize(self, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> float:
        """Wait until every queue finished its work; the summed GPU time (s) of the kernels launched since the
        previous synchronize() (waited for or not; launches a fault aborted count 0)."""
        self.wait_idle(timeout_ms)
        self.stamp_ring.retire_all()  # every launch not yet retired still owns its stamp slot
        total, self.sync_time = self.sync_time, 0.0
        self.sync_epoch += 1
        return total

    def wait_idle(self, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> None:
        """Wait until every queue of the device finished its submitted work (what the runtime itself uses)."""
        for q in (self.sdma, self.compute):
            self.wait(q, q.submitted, timeout_ms)

    def wait(self, q, value: int, timeout_ms: int | None = DEFAULT_TIMEOUT_MS) -> None:
        """Wait until queue q reaches timeline `value` (WAIT_EVENTS); GPUFault otherwise, GPUTimeout (a TimeoutError
        too) when the timeout expired first, after which the queues are reset."""
        timeout_ms = DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms
        while q.completed() < value:
            with self.abort_on_interrupt():
                result, fired = self._wait_events(timeout_ms)
            if fired:
                self._fault(fired)
            if result == kfd.KFD_IOC_WAIT_RESULT_TIMEOUT and q.completed() < value:
                self._timed_out(q, value, timeout_ms)
        if self.sanitizers:  # the dispatches this wait saw end may have findings
            self.take_findings()

    def take_findings(self) -> list[dict]:
        """Fetch the sanitizers' findings not fetched yet: appended to `findings`, warned about, returned."""
        fresh: list[dict] = []
        deliver(self.os.sanitize(self.gpu_id)["findings"], fresh, stacklevel=4)
        self.findings += fresh
        return fresh

    def _wait_events(self, timeout_ms: int) -> tuple[int, list]:
        ids = (self.completion_event, self.memory_event, self.hw_event)
        arr = b"".join(bytes(kfd.kfd_event_data(event_id=i)) for i in ids)
        base = _ARGS_EVENTS
        self.args_page.view[base:base + len(arr)] = arr
        a = self.kfd_ioctl(kfd.AMDKFD_IOC_WAIT_EVENTS, kfd.kfd_ioctl_wait_events_args(
            events_ptr=self.args_page.addr + base, num_events=len(ids), wait_for_all=0, timeout=timeout_ms))
        out = [kfd.kfd_event_data.unpack(self.args_page.view[base + i * _EVENT_SIZE:]) for i in range(1, 3)]
        mem, hw = out[0].u.memory_exception_data, out[1].u.hw_exception_data
        fired = [(event, data) for event, data in ((MEMORY, mem), (HW, hw)) if data.gpu_id == self.gpu_id]
        return a.wait_result, fired

    def _fault(self, fired: list) -> None:
        """Raise the GPUFault of the first exception event that fired, after restarting the hung queues (a
        dispatch the driver stopped at the wait's timeout raises GPUTimeout, a TimeoutError too)."""
        report = self.os.device_report(self.gpu_id)  # before the restart: the queues still hold their errors
        if self.sanitizers:
            self.take_findings()
        notes, lost = self._restart_queues()
        fault = GPUFault.from_exception(self.name, self.gpu_id, *fired[0], report, notes, self.usable)
        if lost[0] < lost[1]:
            self._aborted.append((*lost, fault.report.partition("\n")[0]))
        raise fault

    def _timed_out(self, q, value: int, timeout_ms: int) -> None:
        """Raise the GPUTimeout of a wait that expired with the queue short of `value`: a packet that waits for what
        never came (WAIT_REG_MEM on memory nobody writes) or work still running. The work is given up like after a
        fault: the queues are reset, so the next launch does not queue up behind it."""
        report = self.os.device_report(self.gpu_id)  # before the reset: what the queue waits for, and where
        head = f"{self.name}: {q.fmt} queue did not reach {value} (at {q.completed()}) within {timeout_ms} ms"
        notes, lost = self._restart_queues()
        text = "\n".join([head + (f": {report.summary}" if report.summary else ""),
                          *([report.text] if report.text else []), *notes,
                          "the queues were reset: the work they had not finished is given up"])
        fault = GPUTimeout(text, "timeout", None, self.gpu_id, self.usable)
        if lost[0] < lost[1]:
            self._aborted.append((*lost, head))
        raise fault

    def _restart_queues(self) -> tuple[list[str], tuple[int, int]]:
        """Destroy and recreate every queue with unfinished work (its work counts as done); (notes, the compute
        timeline range that was lost)."""
        notes, lost = [], (self.compute.completed(), self.compute.submitted)
        try:
            for q in (self.sdma, self.compute):
                if q.completed() < q.submitted:
                    q.recreate()
        except OSError as e:
            self.usable = False
            notes.append(f"device lost: recreating the queue failed: {e}")
        return notes, lost

    @contextlib.contextmanager
    def abort_on_interrupt(self):
        """Ctrl-C while the GPU runs (inside a doorbell or a wait) abandons the work in flight: the exception
        event it raised is taken and the queues are restarted before KeyboardInterrupt goes on, so the next
        launch runs on a clean queue instead of resuming the interrupted kernel."""
        try:
            yield
        except KeyboardInterrupt:
            try:
                self._wait_events(kfd.KFD_EVENT_TIMEOUT_IMMEDIATE)
            except OSError:
                pass  # nothing to take
            _, lost = self._restart_queues()
            if lost[0] < lost[1]:
                self._aborted.append((*lost, f"{self.name}: interrupted by KeyboardInterrupt"))
            raise

    def aborted_by(self, value: int, name: str = "launch") -> GPUFault | None:
        """The fault that discarded compute timeline `value` (unfinished when it hit), or None."""
        for lo, hi, what in self._aborted:
            if lo < value <= hi:
                return GPUFault(f"{name} (compute #{value}) was aborted by an earlier GPU fault: {what}",
                                "aborted", None, self.gpu_id, self.usable)
        return None

    def _check_usable(self) -> None:
        if self.closed:
            raise RuntimeError(f"{self.name} is closed")
        if not self.usable:
            raise RuntimeError(f"{self.name} is lost after a fault; create a new Device")

    # ---- launch support ----------------------------------------------------------------------------
    def kernarg_alloc(self, nbytes: int) -> int:
        """Offset of 64-byte aligned kernarg space in self.kernargs; claim it with kernarg_ring.claim()."""
        return self.kernarg_ring.alloc(nbytes)

    def stamp_slot(self) -> int:
        """Offset of a 64-byte slot in self.stamps (timestamps or an amd_signal_t); claim it with stamp_ring."""
        return self.stamp_ring.alloc(STAMP_SLOT)

    def launched(self, launch: Launch, kernarg_off: int, kernarg_size: int) -> None:
        """Record a submitted launch: it owns its kernarg region and stamp slot until it completes."""
        self.kernarg_ring.claim(kernarg_off, kernarg_size, launch)
        self.stamp_ring.claim(launch._slot, STAMP_SLOT, launch)
        self.launches += 1

    def close(self) -> None:
        """Release everything this Device holds: its queues, events, buffers (they count as freed) and
        mappings. The process's amdkfd context (/dev/kfd, the render node, the VM, the event page) stays for
        the next Device on the same OS, as the kernel keeps it for the life of the process."""
        if self.closed:
            return
        if self.usable:
            self.wait_idle()
        for q in (self.sdma, self.compute):
            try:
                q.destroy()
            except OSError:
                pass  # a queue lost with the device is gone already
        for event in (self.completion_event, self.memory_event, self.hw_event):
            self.process.destroy_event(event)
        self.closed = True
        for buf in list(self._buffers.values()):
            buf.release()
        for mapping in (*self._doorbells.values(), self.args_page):
            self.os.munmap(mapping)
        self._doorbells.clear()

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Device {self.name} {self.arch} gpu_id {self.gpu_id} queue {self.queue_kind}>"
