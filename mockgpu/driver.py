"""MockOS: the `OS` seam over simulated GPUs: /dev/kfd, /dev/dri/renderD128+, sysfs, mmap, doorbells.

Ioctls on /dev/kfd are decoded with the argument structs of runtime.uapi.kfd and handled by
mockgpu.kfd.KfdProcess; a failure is an OSError with the errno amdkfd returns, and no Python exception
from inside the driver reaches the caller (an internal error is EIO, naming the bug). mmap returns
memoryviews onto simulator-owned memory (mockgpu.mappings); the open files and sysfs are mockgpu.devfiles'.
A doorbell store (mmio_write) rings the simulated GPU, which runs that queue synchronously.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import operator
import os
import threading
import time

from mockgpu import drm, hive, iolinks, pci, progress, symbols, topology
from mockgpu.addrspace import AddressSpace
from mockgpu.devfiles import DeviceFiles, File
from mockgpu.devmem import MAX_GPUS, DeviceMemory
from mockgpu.kfd import KfdProcess
from mockgpu.kfd_node import VMID, VRAM_BASE, Node
from mockgpu.mappings import Mappings
from mockgpu.memory import GTT_SIZE, PAGE, PT_POOL, KfdError, RangeAllocator, WouldBlock
from mockgpu.usermem import LocalProcess, UserMemory
from runtime.os import OS, DeviceReport, Mapping, check_mmio
from runtime.uapi import kfd
from simgpu import settings
from simgpu.clock import Link
from simgpu.fault import HardwareFault
from simgpu.hw.chips import device_arches
from simgpu.shader.engine import DEFAULT_WATCHDOG
from simgpu.soc import SOC, MMIOError

DEFAULT_VRAM = 8 << 30
GPU_ID_BASE = 0x4A10

# request number -> (argument struct, the KfdProcess handler: a method of the process or of one of its parts)
_HANDLERS = {
    kfd.AMDKFD_IOC_GET_VERSION: (kfd.kfd_ioctl_get_version_args, "get_version"),
    kfd.AMDKFD_IOC_CREATE_QUEUE: (kfd.kfd_ioctl_create_queue_args, "queue_manager.create_queue"),
    kfd.AMDKFD_IOC_DESTROY_QUEUE: (kfd.kfd_ioctl_destroy_queue_args, "queue_manager.destroy_queue"),
    kfd.AMDKFD_IOC_SET_MEMORY_POLICY: (kfd.kfd_ioctl_set_memory_policy_args, "set_memory_policy"),
    kfd.AMDKFD_IOC_GET_CLOCK_COUNTERS: (kfd.kfd_ioctl_get_clock_counters_args, "get_clock_counters"),
    kfd.AMDKFD_IOC_UPDATE_QUEUE: (kfd.kfd_ioctl_update_queue_args, "queue_manager.update_queue"),
    kfd.AMDKFD_IOC_CREATE_EVENT: (kfd.kfd_ioctl_create_event_args, "event_manager.create_event"),
    kfd.AMDKFD_IOC_DESTROY_EVENT: (kfd.kfd_ioctl_destroy_event_args, "event_manager.destroy_event"),
    kfd.AMDKFD_IOC_SET_EVENT: (kfd.kfd_ioctl_set_event_args, "event_manager.set_event"),
    kfd.AMDKFD_IOC_RESET_EVENT: (kfd.kfd_ioctl_reset_event_args, "event_manager.reset_event"),
    kfd.AMDKFD_IOC_WAIT_EVENTS: (kfd.kfd_ioctl_wait_events_args, "event_manager.wait_events"),
    kfd.AMDKFD_IOC_SET_SCRATCH_BACKING_VA: (kfd.kfd_ioctl_set_scratch_backing_va_args, "set_scratch_backing_va"),
    kfd.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW: (kfd.kfd_ioctl_get_process_apertures_new_args,
                                               "get_process_apertures_new"),
    kfd.AMDKFD_IOC_ACQUIRE_VM: (kfd.kfd_ioctl_acquire_vm_args, "acquire_vm"),
    kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU: (kfd.kfd_ioctl_alloc_memory_of_gpu_args, "memory.alloc_memory_of_gpu"),
    kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU: (kfd.kfd_ioctl_free_memory_of_gpu_args, "memory.free_memory_of_gpu"),
    kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU: (kfd.kfd_ioctl_map_memory_to_gpu_args, "memory.map_memory_to_gpu"),
    kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU: (kfd.kfd_ioctl_unmap_memory_from_gpu_args, "memory.unmap_memory_from_gpu"),
    kfd.AMDKFD_IOC_SET_XNACK_MODE: (kfd.kfd_ioctl_set_xnack_mode_args, "set_xnack_mode"),
    kfd.AMDKFD_IOC_AVAILABLE_MEMORY: (kfd.kfd_ioctl_get_available_memory_args, "memory.available_memory"),
    kfd.AMDKFD_IOC_RUNTIME_ENABLE: (kfd.kfd_ioctl_runtime_enable_args, "runtime_enable"),
}
_BY_NR = {kfd.ioc_nr(req): (req, *v) for req, v in _HANDLERS.items()}


def _wall_watchdog(seconds: float | None) -> float | None:
    """The opt-in wall-clock watchdog: `seconds`, else SIMGPU_WATCHDOG_S; None (no limit) unless one is set > 0."""
    if seconds is None:
        seconds = settings.get("SIMGPU_WATCHDOG_S")
    return seconds if seconds and seconds > 0 else None


# The JIT's background compile threads (simgpu.shader.jit.build names its pool so): they translate and load code
# and store to no memory of the process, so a wait does not sleep for them.
_COMPILE_THREADS = "simgpu-jit"


def _other_threads_may_store() -> bool:
    """Whether a thread other than the caller could store to a doorbell or to memory a queue waits on: any live
    thread but the caller and the JIT's compile threads (once a kernel was compiled in the background its idle
    pool thread stays, and every wedged wait slept its whole timeout for it)."""
    me = threading.current_thread()
    return any(t is not me and not t.name.startswith(_COMPILE_THREADS) for t in threading.enumerate())


def _observer(callback, gpu_id: int, gpu):
    """A GPU's observer (simgpu.GPU.observer) that calls `callback` with the gpu_id and the host bytes read."""
    def observe(kind: str, vmid: int, va: int, data: bytes) -> bytes:
        return callback(gpu_id, kind, va, data, _host_span(gpu, vmid, va, len(data)))
    return observe


def _host_span(gpu, vmid: int, va: int, n: int):
    """The host memory behind [va, va + n) of a VMID (a numpy view; None when none: a read that crosses a page or
    lands in a PRT hole). The GPU has just read these bytes, so the translation is cached and succeeds."""
    if not n or (va & (PAGE - 1)) + n > PAGE:
        return None
    try:
        t = gpu.mmu.translate(vmid, va)
    except HardwareFault:  # (not after a read that succeeded; a recording must not fail the GPU's work if it did)
        return None
    return None if t.prt else gpu.phys.span(t.pa, n, t.system)


class MockOS(OS):
    """The amdkfd driver, DRM render nodes and sysfs over `devices` simulated GPUs: gfx1100s unless `arch` (or
    SIMGPU_ARCH) names another architecture of simgpu.hw.chips, for all of them ("gfx1201") or one per device
    (["gfx1100", "gfx1201"], or "gfx1100,gfx1201")."""

    def __init__(self, devices: int | None = None, vram_size: int | None = None, watchdog: int | None = None,
                 lazy_doorbells: bool | None = None, wall_watchdog: float | None = None, sanitize=None, user=None,
                 place: bool = True, arch: str | list[str] | tuple[str, ...] | None = None):
        from simgpu import sanitize as sanitizers
        from simgpu.gpu import GPU
        n = devices if devices is not None else settings.get("MOCKGPU_DEVICES")
        if not 1 <= n <= MAX_GPUS:
            raise ValueError(f"{n} devices: mockgpu emulates 1 to {MAX_GPUS} GPUs")
        archs = device_arches(n, arch)
        vram = vram_size or settings.get("MOCKGPU_VRAM") or DEFAULT_VRAM
        kw = {"watchdog": watchdog or settings.get("MOCKGPU_WATCHDOG") or DEFAULT_WATCHDOG,
              "wall_watchdog": _wall_watchdog(wall_watchdog)}
        self.devmem = DeviceMemory([vram] * n, GTT_SIZE)  # every byte a client can map: mockgpu/devmem.py
        self.gpus = [GPU(vram, name=f"gpu{i}", vram_backing=self.devmem.vram(i),
                         doorbell_page=self.devmem.doorbell_page(i), arch=archs[i], **kw) for i in range(n)]
        for g in self.gpus:  # what the limits' faults tell a user to change
            g.engine.watchdog_setting = "MOCKGPU_WATCHDOG=<wave-instructions> or MockOS(watchdog=...)"
            g.wall_watchdog_setting = "SIMGPU_WATCHDOG_S" if wall_watchdog is None else "MockOS(wall_watchdog=...)"
        if progress.enabled():
            for g in self.gpus:
                g.engine.progress_hooks.append(progress.DispatchProgress(g.name))
        hives = hive.hives([g.chip for g in self.gpus])  # gfx942s share an XGMI hive (mockgpu/hive.py)
        self.nodes = [Node(i, g, GPU_ID_BASE + 0x111 * i, RangeAllocator(VRAM_BASE, vram - PT_POOL),
                           RangeAllocator(0, GTT_SIZE), hive=hive.hive_of(hives, i)) for i, g in enumerate(self.gpus)]
        # Each GPU is also a PCI function (simgpu.soc: registers, doorbell and VRAM BARs, config space) for a
        # userspace driver; every GPU reaches every other one's VRAM at that GPU's BAR0 bus address (PCIe P2P), and
        # a member of its hive's too at that member's window of the hive aperture (XGMI).
        self.socs = [SOC(g, i) for i, g in enumerate(self.gpus)]
        for i, soc in enumerate(self.socs):
            for j, g in enumerate(self.gpus):
                if i != j:
                    g.phys.add_system(soc.pci.bars[0].address, self.gpus[i].phys.vram, link=Link.PEER_PCIE)
                if hive.same_hive(hives, i, j):
                    g.phys.add_system(self.nodes[i].hive.window(i), self.gpus[i].phys.vram, link=Link.PEER_XGMI)
        firmware = pci.FirmwareStore.from_environment()
        # Lazy doorbells only record the write pointer: the GPUs run when a WAIT_EVENTS needs them, as if the
        # hardware had not got to the work yet (the runtime must not rely on work finishing at the doorbell).
        self.lazy_doorbells = bool(settings.get("MOCKGPU_LAZY_DOORBELLS")) \
            if lazy_doorbells is None else lazy_doorbells
        # The caller's CPU address space as this driver sees it; addresses it did not hand out are the caller's own
        # memory, reached through `user` (default: this process, checked by the kernel; False: none, EFAULT, for
        # callers whose pointers are garbage on purpose, like fuzzers) -- mockgpu/usermem.py.
        # `place`: a MAP_FIXED mapping of device memory over a range the caller reserved in this process is put
        # there for real, so its address is a real pointer (CPU VA = GPU VA); never in a replay or a server.
        self.space = AddressSpace()
        self.user = UserMemory(self.space, LocalProcess() if user is None else (user or None))
        self.process = KfdProcess(self.nodes, self.user, self.devmem)
        for g in self.gpus:  # faults name kernels the runtime did not name by the code object in memory
            g.engine.find_kernel_name = functools.partial(symbols.kernel_symbol, g.mmu, self.process.allocs.values)
        # Sanitizers (docs/shader.md "Sanitizers"): SIMGPU_SANITIZE unless `sanitize` says; the driver tells
        # each GPU's sanitizer about every buffer it maps (kfd_memory.py) and the runtime's exact sizes (annotate).
        checks = sanitizers.requested() if sanitize is None else sanitizers.parse_checks(sanitize)
        if checks:
            for g in self.gpus:
                g.sanitize(checks)
        self._wait_limits: dict[int, float] = {}  # gpu_id -> seconds the caller waits for its next doorbell's work
        shapes = [(nd.gpu_id, topology.gpu_shape(g)) for nd, g in zip(self.nodes, self.gpus, strict=True)]
        atomics = [iolinks.atomic_completer(soc.pci.read) for soc in self.socs]
        self.sysfs = topology.build(shapes, atomics) | pci.sysfs(self.socs)
        self.files = DeviceFiles(self.nodes, self.socs, firmware, self.sysfs)
        self.mappings = Mappings(self.files, self.space, self.devmem, self.process.memory, self.nodes, self.socs,
                                 place)

    def simulator(self, gpu_id: int | str):
        """The simgpu.GPU behind a gpu_id or a PCI bus id ("0000:03:00.0") (None if unknown): for tests and tools;
        the runtime never asks."""
        return next((nd.gpu for nd in self.nodes if gpu_id in (nd.gpu_id, pci.bus_id(nd.index))), None)

    def gpu_clocks(self) -> dict[int, int]:
        """Each GPU's virtual timestamp counter by gpu_id (read by traces.RecordingOS after every call)."""
        return {nd.gpu_id: nd.gpu.clock.timestamp() for nd in self.nodes}

    def doorbell_stores(self) -> list[list]:
        """The doorbells scan_doorbells acted on since the previous ask, [gpu_id, slot, value] (the seam's
        `OS.doorbell_stores`); each GPU keeps them from the first ask on."""
        out = []
        for nd in self.nodes:
            if nd.gpu.scanned is None:
                nd.gpu.scanned = []
            out += [[nd.gpu_id, int(slot), int(value)] for slot, value in nd.gpu.scanned]
            nd.gpu.scanned.clear()
        return out

    def observe_reads(self, callback) -> bool:
        """Hand every GPU's observed reads to `callback` (the seam's `OS.observe_reads`), None: stop."""
        for nd in self.nodes:
            nd.gpu.observer = None if callback is None else _observer(callback, nd.gpu_id, nd.gpu)
        return True

    def sanitize(self, gpu_id: int, checks=None) -> dict:
        """The simulator's sanitizers of a GPU: turns `checks` on (if given) and returns the checks now on and
        the findings not taken before, as plain data (the seam's `OS.sanitize`)."""
        gpu = self.simulator(gpu_id)
        if gpu is None:
            raise OSError(errno.ENODEV, f"no GPU with gpu_id {gpu_id}")
        try:
            san = gpu.sanitize(checks) if checks else gpu.engine.sanitizer
        except ValueError as e:
            raise OSError(errno.EINVAL, str(e)) from None
        if san is None:
            return {"checks": [], "findings": []}
        if checks:
            self.process.memory.track_allocations(self.nodes[[nd.gpu_id for nd in self.nodes].index(gpu_id)])
        return {"checks": sorted(san.checks), "findings": [f.as_dict() for f in san.take()]}

    def annotate(self, note: dict) -> None:
        """The runtime's notes: a buffer's exact size and purpose, a code object's kernels (for the sanitizers and
        the kernel names of fault reports), how long the caller waits for the work of its next doorbell (the
        doorbell runs it here, so that wait's timeout must bound the doorbell: a `timeout` fault, as inside the
        wait)."""
        gpu = self.simulator(note.get("gpu_id", -1))
        timeout = note.get("timeout_ms")
        if gpu is not None and note.get("what") == "wait" and isinstance(timeout, int) and timeout > 0:
            self._wait_limits[int(note["gpu_id"])] = timeout / 1000  # the next doorbell's work runs at most this long
        if gpu is not None and note.get("what") == "code_object":  # fault reports name the kernel
            for name, _, code_va in note.get("kernels", []):
                gpu.engine.kernel_names[int(code_va)] = str(name)
        san = gpu.engine.sanitizer if gpu is not None else None
        if san is None:
            return
        if note.get("what") == "buffer":
            a = san.allocations.find(VMID, int(note.get("va", -1)))
            if a is not None and a.va == note["va"]:
                a.requested = min(int(note.get("nbytes", a.size)), a.size) or a.size
                a.name = str(note.get("name", a.name))
        elif note.get("what") == "code_object":
            for name, _, code_va in note.get("kernels", []):
                san.name_kernel(int(code_va), str(name))

    def device_report(self, gpu_id: int | str) -> DeviceReport:
        """The simulator's account of a GPU (by gpu_id, or PCI bus id for a userspace driver): every queue's state,
        its error and fault (wave, PC, instruction, registers) for a queue that stopped, the SOC's state (VM
        contexts, IH, PSP, errors), and the kind of the first fault."""
        gpu = self.simulator(gpu_id)
        if gpu is None:
            raise OSError(errno.ENODEV, f"no GPU with gpu_id {gpu_id}")
        fault = next((q.error.fault for q in gpu.queues if q.error is not None and q.error.fault is not None), None)
        error = next((q.error for q in gpu.queues if q.error is not None), None)
        blocked = next((q for q in gpu.queues if q.state == "blocked"), None)
        summary = str(error.fault) if error is not None and error.fault is not None else \
            f"queue {error.queue}: {error.why}" if error is not None else \
            f"queue {blocked.name} blocked: {blocked.waiting}" if blocked is not None else ""
        return DeviceReport(gpu.describe(), fault.kind if fault is not None else "", summary)

    # ---- files (mockgpu.devfiles) -----------------------------------------------------------------------
    def open(self, path: str, flags: int = os.O_RDWR) -> int:
        return self.files.open(path, flags)

    def close(self, fd: int) -> None:
        self.files.close(fd)

    def pread(self, fd: int, length: int, offset: int) -> bytes:
        return self.files.pread(fd, length, offset)

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        return self.files.pwrite(fd, data, offset)

    def read_text(self, path: str) -> str:
        return self.files.read_text(path)

    def listdir(self, path: str) -> list[str]:
        return self.files.listdir(path)

    def exists(self, path: str) -> bool:
        return self.files.exists(path)

    # ---- ioctl --------------------------------------------------------------------------------------
    def ioctl(self, fd: int, request: int, buf: bytearray) -> int:
        f = self.files.get(fd)
        if f is None:
            raise OSError(errno.EBADF, f"fd {fd} is not open")
        deadline = None
        try:
            while True:
                try:
                    self._ioctl(f, request, buf)
                    return 0
                except WouldBlock as w:  # WAIT_EVENTS with a timeout: wait for progress, then ask again
                    deadline = deadline or time.monotonic() + w.timeout_ms / 1000
                    self.process.expired = not self._wait_for_progress(deadline)
        except KfdError as e:
            raise OSError(e.errno, f"{kfd.COMMANDS.get(request, hex(request))}: {e}") from None
        except Exception as e:  # noqa: BLE001 - a driver bug must not escape as a Python exception
            raise OSError(errno.EIO, f"mockgpu internal error in ioctl {request:#x}: {type(e).__name__}: {e}") \
                from None
        finally:
            self.process.expired = False

    def _wait_for_progress(self, deadline: float) -> bool:
        """Sleep until the GPUs move or an event is signaled (True), or until `deadline` (False: the wait times
        out). While the caller sleeps here only another thread of this process can store to a doorbell or to
        memory a queue waits on; with no other thread nothing can change, so it is False at once."""
        pause = 50e-6
        while _other_threads_may_store() and time.monotonic() < deadline:
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 2e-3)
            left = max(deadline - time.monotonic(), 1e-3)  # the caller's timeout bounds a dispatch started here
            if self.process.progress(seconds=left) or any(e.signaled for e in self.process.events.values()):
                return True
        return False

    def _ioctl(self, f: File, request: int, buf) -> None:
        if not isinstance(buf, bytearray | memoryview):
            raise KfdError(errno.EFAULT, "ioctl argument must be a writable buffer")
        if f.kind != "kfd":
            drm.ioctl(f.node, self.process, request, buf)  # AMDGPU_INFO; other DRM ioctls: EINVAL
            return
        if kfd.ioc_type(request) != kfd.AMDKFD_IOCTL_BASE:
            raise KfdError(errno.ENOTTY, f"request {request:#x} is not an amdkfd ioctl")
        nr = kfd.ioc_nr(request)
        if nr not in _BY_NR:
            raise KfdError(errno.EINVAL, f"amdkfd command {nr:#x} is not implemented by mockgpu (docs/driver.md)")
        _, struct, name = _BY_NR[nr]
        usize = kfd.ioc_size(request)
        if len(buf) < usize:
            raise KfdError(errno.EFAULT, f"argument buffer of {len(buf)} bytes is shorter than {usize}")
        # Like amdkfd: copy in min(user, kernel) size, zero-extend, run, copy the user's size back out.
        data = bytearray(max(ctypes.sizeof(struct), usize))
        data[:usize] = bytes(buf[:usize])
        args = struct.from_buffer(data)
        handler = operator.attrgetter(name)(self.process)
        handler(args, self.files) if name == "acquire_vm" else handler(args)
        if request >> 30 & 2:  # _IOC_READ: results go back to user space
            buf[:usize] = data[:usize]

    def progress(self, poll_all: bool = True) -> bool:
        """Run every queue that can move (doorbells stored straight into a doorbell page, queues waiting on memory
        that changed, and with `poll_all` every queue's wptr); True if anything moved. What the GPU does on its
        own while the caller is not in a driver call (the process-level server calls it continually)."""
        return self.process.progress(poll_all)

    # ---- mmap (mockgpu.mappings) ----------------------------------------------------------------------------
    def mmap(self, fd: int, length: int, prot: int, flags: int, offset: int = 0, addr: int | None = None) -> Mapping:
        return self.mappings.mmap(fd, length, prot, flags, offset, addr)

    def check_mmap(self, fd: int, length: int, offset: int) -> None:
        """OSError(errno) unless an mmap of fd at offset would succeed (the process-level server asks first)."""
        self.mappings.check_mmap(fd, length, offset)

    def munmap(self, mapping: Mapping) -> None:
        self.mappings.munmap(mapping)

    # ---- MMIO: doorbells and the PCI function's registers ----------------------------------------------------
    def mmio_write(self, mapping: Mapping, offset: int, value: int, size: int = 4) -> None:
        check_mmio(mapping, offset, size)
        kind, node = mapping.handle if isinstance(mapping.handle, tuple) else (None, None)
        if kind in ("bar2", "bar5"):
            soc = self.socs[node.index]
            try:
                if kind == "bar5":
                    soc.mmio_write(mapping.offset + offset, value, size)
                elif self.lazy_doorbells and size == 8 and soc.nbio.doorbells_enabled:
                    node.gpu.doorbells[(mapping.offset + offset) // 8] = value & 0xFFFFFFFFFFFFFFFF
                else:
                    soc.doorbell_write(mapping.offset + offset, value, size)
            except MMIOError as e:
                raise OSError(errno.EIO, str(e)) from None
            return
        if kind == "doorbell" and node is not None:
            slot = (mapping.offset & 0x1FFF) // 8 + offset // 8
            if self.lazy_doorbells:
                node.gpu.doorbells[slot] = value & 0xFFFFFFFFFFFFFFFF  # polled from wptr later
            else:
                node.gpu.ring_doorbell(slot, value, self._wait_limits.pop(node.gpu_id, None))
            return
        mapping.view[offset:offset + size] = int(value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")

    def mmio_read(self, mapping: Mapping, offset: int, size: int = 4) -> int:
        check_mmio(mapping, offset, size)
        kind, node = mapping.handle if isinstance(mapping.handle, tuple) else (None, None)
        if kind in ("bar2", "bar5"):
            soc = self.socs[node.index]
            if any(q.state != "idle" for q in node.gpu.queues) or node.gpu.pending_doorbells():
                self.process.progress()  # the device runs while the CPU reads its registers
            try:
                if kind == "bar5":
                    return soc.mmio_read(mapping.offset + offset, size)
                return soc.doorbell_read(mapping.offset + offset, size)
            except MMIOError as e:
                raise OSError(errno.EIO, str(e)) from None
        return int.from_bytes(bytes(mapping.view[offset:offset + size]), "little")
