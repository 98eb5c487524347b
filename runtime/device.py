"""Device: one AMD GPU over a driver (runtime.driver: amdkfd, or AM), through the `OS` seam: memory, queues, events,
copies, launches, waits and faults."""

from __future__ import annotations

import contextlib
import errno

from runtime import memory as rtmem
from runtime import peer
from runtime import profile as rtprofile
from runtime.driver import Driver
from runtime.fault import GPUFault, GPUTimeout
from runtime.kfd_driver import KFDDriver
from runtime.launch import FencedRing, Launch
from runtime.memory import PAGE, Buffer
from runtime.module import Module
from runtime.os import OS, select_os
from runtime.queues import AQLQueue, PM4Queue, SDMAQueue, SDMAXGMIQueue
from runtime.sanitize import deliver
from runtime.uapi import kfd
from simgpu.hw import sdma
from simgpu.isa.arch import get_arch

STAGING = 4 << 20  # host bounce buffer for copyin/copyout
COPY_CHUNK = 1 << 26  # bytes per SDMA COPY_LINEAR between GPU buffers
KERNARG_RING = 1 << 20
STAMP_RING = 1 << 16  # 64-byte slots: PM4 start/end timestamps, or an AQL completion signal (amd_signal_t)
STAMP_SLOT = 64
DEFAULT_TIMEOUT_MS = 30_000
DRIVERS = ("kfd", "am")


def _size(n: int) -> str:
    """A byte count for messages: exact bytes, and the largest binary unit that keeps it above 1."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n} bytes ({n / (1 << shift):.4g} {unit})"
    return f"{n} bytes"


class Device:
    """An AMD GPU: Device("AMD:0", queue="pm4"|"aql", driver="kfd"|"am"); os defaults to the process's OS
    (select_os()). The driver (`.driver`, runtime.driver's protocol) is amdkfd (runtime.kfd_driver.KFDDriver) or,
    with driver="am", the runtime itself driving the PCI function (runtime.am.driver.AMDriver). Several Devices
    may drive one GPU in one process (they share its amdkfd context); close() or a `with` block releases what one
    holds. `sanitize` ("memcheck,initcheck,racecheck,hazards" or "all") turns on the simulator's sanitizers
    (runtime.sanitize; OSError on a real GPU). `arch` ("gfx1201"): the GPU must be of that architecture (what its
    topology's gfx_target_version says), else a RuntimeError naming what it is; `.arch` is always the GPU's.
    (The simulated GPUs' architecture is the OS's: MockOS(arch=...), SIMGPU_ARCH, `simgpu run --arch`.)"""

    def __init__(self, name: str = "AMD:0", queue: str = "pm4", os: OS | None = None, sanitize: str | None = None,
                 driver: str = "kfd", arch: str | None = None):
        if driver not in DRIVERS:
            raise ValueError(f"driver must be 'kfd' or 'am', not {driver!r}")
        if queue not in ("pm4", "aql"):
            raise ValueError(f"queue must be 'pm4' or 'aql', not {queue!r}")
        self.name, self.queue_kind = name, queue
        self.os = os if os is not None else select_os()
        self.va_space = rtmem.va_space(self.os)  # shared with every Device on this OS object
        self.index = int(name.partition(":")[2] or 0)
        self.usable, self.closed = True, False
        self._buffers: dict[int, Buffer] = {}  # live buffers by VA: freed by close()
        self.driver: Driver = _driver(driver)(self)
        self.driver.open()
        d = self.driver
        self.gpu_id, self.node_id, self.properties, self.arch = d.gpu_id, d.node_id, d.properties, d.arch
        if arch is not None and arch != self.arch:
            d.close()
            raise RuntimeError(f"{name} is a {self.arch}, not a {arch} (on the simulator: MockOS(arch=...), "
                               f"SIMGPU_ARCH={arch} or `simgpu run --arch {arch}` picks the GPUs' architecture)")
        self.findings: list[dict] = []  # non-fatal sanitizer findings (runtime.sanitize)
        state = self.os.sanitize(self.gpu_id, sanitize)
        self.sanitizers = frozenset(state["checks"])
        deliver(state["findings"], self.findings)
        d.query_info()
        self.dev_info, self.hw_ip, self.firmware, self.counter_hz = d.dev_info, d.hw_ip, d.firmware, d.counter_hz
        d.create_events()
        self.completion_event, self.event_page_va = d.completion_event, d.event_page_va
        # gfx9's SDMA 4 moves at most 4 MiB a COPY_LINEAR and has no FENCE cache fields (simgpu.hw.sdma)
        self.sdma_major = sdma.SDMA_MAJOR.get(get_arch(self.arch).family, 6)
        self.copy_chunk = min(COPY_CHUNK, sdma.max_linear_bytes(self.sdma_major))
        self.sdma = SDMAQueue(self, self.completion_event)
        self.compute = (AQLQueue if queue == "aql" else PM4Queue)(self, self.completion_event)
        self.sdma_xgmi: SDMAXGMIQueue | None = None  # copies to hive peers: made by the first one (runtime.peer)
        self.staging = self.alloc_system(STAGING, name="staging buffer")
        self.kernargs = self.alloc_system(KERNARG_RING, name="kernarg ring")
        self.stamps = self.alloc_system(STAMP_RING, name="timestamp/signal ring")
        self.kernarg_ring, self.stamp_ring = FencedRing(KERNARG_RING, 64), FencedRing(STAMP_RING, STAMP_SLOT)
        self.launches = 0
        self.sync_epoch, self.sync_time = 0, 0.0  # GPU time of this epoch's retired launches (synchronize())
        self._aborted: list[tuple[int, int, str]] = []  # compute timeline ranges (lo, hi] a fault discarded
        # A runtime.profile.Profiler around every launch (SIMGPU_PROFILE / SIMGPU_SQTT, Device.profile), or None.
        self.profiler = rtprofile.from_environment(self)

    # ---- the driver -------------------------------------------------------------------------------------
    def drm_info(self, query: int, result_type, **arg):
        """DRM_IOCTL_AMDGPU_INFO on the render node: the answer to `query` as a `result_type` struct; `arg`
        sets the query's argument (query_hw_ip=(type, instance), query_fw=drm_amdgpu_query_fw(...)).
        RuntimeError on AM, which has no render node."""
        return self.driver.drm_info(query, result_type, **arg)

    def memory_info(self) -> dict:
        """VRAM and GTT sizes and usage in bytes (AMDGPU_INFO_VRAM_GTT and AMDGPU_INFO_MEMORY)."""
        return self.driver.memory_info()

    def create_hw_queue(self, q, ring_size: int, rptr: int, wptr: int) -> tuple[int, object, int]:
        """The driver's CREATE_QUEUE for a runtime.queues queue: (queue id, doorbell mapping, byte offset in it)."""
        return self.driver.create_queue(q, ring_size, rptr, wptr)

    def destroy_hw_queue(self, q) -> None:
        """The driver's DESTROY_QUEUE."""
        self.driver.destroy_queue(q)

    # ---- memory ---------------------------------------------------------------------------------
    def _alloc(self, nbytes: int, host: bool, cpu: bool, executable: bool = False, uncached: bool = False,
               peers: tuple = (), name: str = "buffer") -> Buffer:
        size = max(PAGE, -(-nbytes // PAGE) * PAGE)
        va, reservation = self.va_space.reserve(size, 1 << 21 if size >= 1 << 21 else PAGE)
        try:
            handle, in_host = self.driver.alloc_memory(va, size, host, executable, uncached, peers)
        except OSError as e:
            self.os.munmap(reservation)
            if e.errno == errno.ENOMEM:
                raise MemoryError(self._out_of_memory(nbytes, host and self.driver.system_memory)) from e
            raise
        except BaseException:
            self.os.munmap(reservation)
            raise
        for gpu_id in (self.gpu_id, *(p.gpu_id for p in peers)):  # what the buffer is, for the sanitizers
            self.os.annotate({"what": "buffer", "gpu_id": gpu_id, "va": va, "nbytes": nbytes, "name": name})
        # The CPU mapping goes over the reservation, at the GPU VA: CPU address = GPU address.
        mapping = self.driver.map_cpu(handle, va, size) if cpu else None
        buf = Buffer(self, va, nbytes, size, handle, in_host, mapping, [self, *peers], reservation)
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
        return self._alloc(nbytes, host, cpu=False, executable=executable, name=name)

    def alloc_system(self, nbytes: int, peers: tuple = (), name: str = "runtime buffer") -> Buffer:
        """Runtime-internal host memory, mapped on this GPU (and `peers`) and into the CPU."""
        return self._alloc(nbytes, True, cpu=True, uncached=True, peers=peers, name=name)

    def free(self, buf: Buffer) -> None:
        """Free a buffer (Buffer.free calls this), once the queues are done with it."""
        self._buffers.pop(buf.va, None)
        if buf.mapping is not None:
            self.os.munmap(buf.mapping)
        if buf.reservation is not None:
            self.os.munmap(buf.reservation)
        if not self.closed:  # close() destroyed the queues first: nothing uses the buffer any more
            self.wait_idle()
        self.driver.free_memory(buf.handle, buf.va, buf.size)

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
            self.wait(self.sdma, self.sdma.submit(sdma.copy_linear(dst_va + pos, self.staging.va, n, self.sdma_major)))

    def copy_to_host(self, dst: memoryview, src_va: int) -> None:
        """GPU VA -> host bytes, through SDMA and the staging buffer (after the kernels launched before)."""
        self._after_launches()
        for pos in range(0, dst.nbytes, STAGING):
            n = min(STAGING, dst.nbytes - pos)
            self.wait(self.sdma, self.sdma.submit(sdma.copy_linear(self.staging.va, src_va + pos, n, self.sdma_major)))
            dst[pos:pos + n] = self.staging.view[:n]

    def copy_between(self, dst: Buffer, src: Buffer, nbytes: int) -> None:
        """Buffer -> buffer; across devices as runtime.peer copies (over XGMI to a hive peer, else a bounce)."""
        if dst.device is self:
            self.sdma_copy(dst.va, src.va, nbytes)
        elif src.device is not self:
            src.device.copy_between(dst, src, nbytes)
        else:
            peer.copy_across(self, dst, src, nbytes)

    def sdma_copy(self, dst_va: int, src_va: int, nbytes: int, queue: SDMAQueue | None = None) -> None:
        """GPU VA -> GPU VA on an SDMA queue of this GPU (default: its SDMA queue), after the kernels launched."""
        self._after_launches()
        queue = queue or self.sdma
        packets = []
        for pos in range(0, nbytes, self.copy_chunk):
            packets += sdma.copy_linear(dst_va + pos, src_va + pos, min(self.copy_chunk, nbytes - pos), self.sdma_major)
        self.wait(queue, queue.submit(packets))

    @property
    def hw_queues(self) -> list:
        """The device's queues: SDMA, compute, and the XGMI SDMA queue once made."""
        return [q for q in (self.sdma, self.compute, self.sdma_xgmi) if q is not None]

    # ---- code -------------------------------------------------------------------------------------
    def load(self, code_object: bytes):
        """Load a code object (ET_DYN or ET_REL); returns a Module."""
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
        for q in self.hw_queues:
            self.wait(q, q.submitted, timeout_ms)

    def wait(self, q, value: int, timeout_ms: int | None = DEFAULT_TIMEOUT_MS) -> None:
        """Wait until queue q reaches timeline `value` (WAIT_EVENTS); GPUFault otherwise, GPUTimeout (a TimeoutError
        too) when the timeout expired first, after which the queues are reset."""
        timeout_ms = DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms
        while q.completed() < value:
            with self.abort_on_interrupt():
                event, expired = self.driver.wait_event(timeout_ms, lambda: q.completed() >= value)
            if event is not None:
                self._fault(event)
            if expired and q.completed() < value:
                self._timed_out(q, value, timeout_ms)
        if self.sanitizers:  # the dispatches this wait saw end may have findings
            self.take_findings()

    def take_findings(self) -> list[dict]:
        """Fetch the sanitizers' findings not fetched yet: appended to `findings`, warned about, returned."""
        fresh: list[dict] = []
        deliver(self.os.sanitize(self.gpu_id)["findings"], fresh, stacklevel=4)
        self.findings += fresh
        return fresh

    def _fault(self, event) -> None:
        """Raise the GPUFault of a fault event the driver's wait returned, after restarting the hung queues (a
        dispatch the driver stopped at the wait's timeout raises GPUTimeout, a TimeoutError too)."""
        report = self.os.device_report(self.gpu_id)  # before the restart: the queues still hold their errors
        if self.sanitizers:
            self.take_findings()
        notes, lost = self._restart_queues()
        fault = self.driver.fault(event, report, notes, self.usable)
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
            for q in self.hw_queues:
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
                self.driver.wait_event(kfd.KFD_EVENT_TIMEOUT_IMMEDIATE, lambda: True)
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
        the next Device on the same OS, as the kernel keeps it for the life of the process (AM: the device stays
        booted)."""
        if self.closed:
            return
        if self.usable:
            self.wait_idle()
        for q in self.hw_queues:
            try:
                q.destroy()
            except OSError:
                pass  # a queue lost with the device is gone already
        self.driver.destroy_events()
        self.closed = True
        for buf in list(self._buffers.values()):
            buf.release()
        self.driver.close()

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        where = f"gpu_id {self.gpu_id}" if self.driver.name == "kfd" else f"{self.gpu_id} (AM)"
        return f"<Device {self.name} {self.arch} {where} queue {self.queue_kind}>"


def _driver(name: str) -> type[Driver]:
    if name == "am":  # start-up: only AM loads its bring-up, firmware and register tables
        from runtime.am.driver import AMDriver
        return AMDriver
    return KFDDriver
