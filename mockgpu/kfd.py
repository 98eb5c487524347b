"""The /dev/kfd ioctls of the mock driver, with amdkfd's argument validation and errnos.

One `KfdProcess` is the emulated process's kfd_process: its per-GPU VMs (after ACQUIRE_VM), buffer
objects, queues and events. Handlers take the argument struct (a ctypes view of the caller's buffer)
and raise KfdError(errno) like the kernel returns -errno.
"""

from __future__ import annotations

import ctypes
import errno
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from mockgpu.devmem import DeviceMemory
from mockgpu.memory import (
    GTT_SIZE,
    PAGE,
    SYSTEM_PA_BASE,
    VM,
    Allocation,
    KfdError,
    RangeAllocator,
    WouldBlock,
    fragment_align,
    page_align,
)
from mockgpu.usermem import UserMemory
from runtime.uapi import kfd
from simgpu.fault import HardwareFault
from simgpu.interrupt import Interrupt, Kind
from simgpu.soc.pci import bar0_address

VMID = 8  # amdkfd hands the first process VMID 8 (0..7 belong to amdgpu graphics)
VRAM_BASE = 16 << 20  # VRAM below this is reserved (firmware, in the simulation: nothing)
DOORBELL_PAGE = 8192
LDS_APERTURE, SCRATCH_APERTURE = 1 << 48, 2 << 48
GPUVM_BASE, GPUVM_LIMIT = 0x200000, (1 << 47) - (1 << 32) - 1
TYPE_FLAGS = {kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM: "vram", kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT: "gtt",
              kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR: "userptr", kfd.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL: "doorbell",
              kfd.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP: "mmio"}

QUEUE_FORMATS = {kfd.KFD_IOC_QUEUE_TYPE_COMPUTE: "pm4", kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: "aql",
                 kfd.KFD_IOC_QUEUE_TYPE_SDMA: "sdma", kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI: "sdma",
                 kfd.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: "sdma"}
FIRST_NONSIGNAL_EVENT_ID = kfd.KFD_SIGNAL_EVENT_LIMIT


def _place(space: RangeAllocator, size: int, va: int) -> int:
    """Physical room for a buffer at `va`: at its fragment alignment, or page-aligned where only that fits (an
    alignment gap must never make a fragmented but big enough space ENOMEM)."""
    try:
        return space.alloc(size, fragment_align(va, size))
    except KfdError:
        return space.alloc(size)


@dataclass
class Node:
    """One GPU as the driver sees it."""

    index: int
    gpu: object  # simgpu.GPU
    gpu_id: int
    vram: RangeAllocator
    gtt: RangeAllocator  # this GPU's GTT window of the device memory file
    vm: VM | None = None
    drm_fd: int | None = None
    doorbells: set[int] = field(default_factory=set)
    xnack: int = 0


@dataclass
class MockQueue:
    """A user-mode queue and the hardware queue backing it."""

    queue_id: int
    node: Node
    hw: object  # simgpu.cp.queue.Queue
    doorbell: int
    fmt: str


@dataclass
class MockEvent:
    """A KFD event."""

    event_id: int
    type: int
    auto_reset: bool
    signaled: bool = False
    data: bytes = b""  # kfd_event_data union bytes for memory / hw exception events


class KfdProcess:
    """The emulated process's amdkfd state over the machine's GPUs."""

    def __init__(self, nodes: list[Node], user: UserMemory, devmem: DeviceMemory):
        self.nodes, self.user, self.devmem = nodes, user, devmem
        self.allocs: dict[int, Allocation] = {}
        self.queues: dict[int, MockQueue] = {}
        self.events: dict[int, MockEvent] = {}
        self.sysmem = RangeAllocator(SYSTEM_PA_BASE, SYSTEM_PA_BASE + (1 << 40))
        self.runtime_enabled = False
        self.expired = False  # set by the caller of wait_events once a WouldBlock wait passed its deadline
        self.event_page: Allocation | None = None
        self._next_handle = 1
        self.reset_hooks: list[Callable[[str], None]] = []  # told one line per queue reset: which queue and why
        for n in nodes:
            n.gpu.interrupt_hooks.append(functools.partial(self.on_interrupt, n))

    # ---- helpers ------------------------------------------------------------------------------------
    def node(self, gpu_id: int) -> Node:
        """The node of a gpu_id, or EINVAL."""
        for n in self.nodes:
            if n.gpu_id == gpu_id:
                return n
        raise KfdError(errno.EINVAL, f"no GPU with gpu_id {gpu_id}")

    def vm_node(self, gpu_id: int) -> Node:
        """A node whose VM was acquired (EINVAL otherwise, like a pdd without drm_priv)."""
        n = self.node(gpu_id)
        if n.vm is None:
            raise KfdError(errno.EINVAL, f"gpu_id {gpu_id}: no VM (AMDKFD_IOC_ACQUIRE_VM first)")
        return n

    def alloc_of(self, handle: int) -> Allocation:
        a = self.allocs.get(handle)
        if a is None:
            raise KfdError(errno.EINVAL, f"no buffer object with handle {handle:#x}")
        return a

    # ---- simple ioctls ------------------------------------------------------------------------------------
    def get_version(self, a) -> None:
        a.major_version, a.minor_version = kfd.KFD_IOCTL_MAJOR_VERSION, kfd.KFD_IOCTL_MINOR_VERSION

    def get_process_apertures_new(self, a) -> None:
        if a.num_of_nodes == 0:
            a.num_of_nodes = len(self.nodes)
            return
        count = min(a.num_of_nodes, len(self.nodes))
        out = b""
        for n in self.nodes[:count]:
            ap = kfd.kfd_process_device_apertures(
                lds_base=LDS_APERTURE, lds_limit=LDS_APERTURE | 0xFFFFFFFF, scratch_base=SCRATCH_APERTURE,
                scratch_limit=SCRATCH_APERTURE | 0xFFFFFFFF, gpuvm_base=GPUVM_BASE, gpuvm_limit=GPUVM_LIMIT,
                gpu_id=n.gpu_id)
            out += bytes(ap)
        self.user.write(a.kfd_process_device_apertures_ptr, out)
        a.num_of_nodes = count

    def acquire_vm(self, a, files: dict) -> None:
        f = files.get(a.drm_fd)
        if f is None or f.kind != "render":
            raise KfdError(errno.EINVAL, f"drm_fd {a.drm_fd} is not an open render node")
        n = self.node(a.gpu_id)
        if f.node is not n:
            raise KfdError(errno.EINVAL, f"drm_fd {a.drm_fd} belongs to another GPU")
        if n.vm is not None:
            if n.drm_fd != a.drm_fd:
                raise KfdError(errno.EBUSY, "VM already acquired through another render node file")
            return
        n.vm, n.drm_fd = VM(n.gpu, VMID), a.drm_fd

    def runtime_enable(self, a) -> None:
        enable = bool(a.mode_mask & kfd.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK)
        if enable and self.runtime_enabled:
            raise KfdError(errno.EBUSY, "runtime already enabled")
        self.runtime_enabled = enable

    def set_memory_policy(self, a) -> None:
        self.node(a.gpu_id)
        if a.default_policy > 1 or a.alternate_policy > 1:
            raise KfdError(errno.EINVAL, "cache policy must be COHERENT or NONCOHERENT")

    def set_xnack_mode(self, a) -> None:
        if a.xnack_enabled >= 0:
            if a.xnack_enabled:
                archs = ", ".join(sorted({n.gpu.arch for n in self.nodes}))
                raise KfdError(errno.EPERM, f"{archs} does not support XNACK")
            for n in self.nodes:
                n.xnack = 0
        a.xnack_enabled = 0

    def set_scratch_backing_va(self, a) -> None:
        self.vm_node(a.gpu_id)  # with a hardware scheduler (MES) nothing else is programmed

    def get_clock_counters(self, a) -> None:
        n = self.node(a.gpu_id)
        ts = n.gpu.clock.timestamp()
        # No wall clock: the CPU counters follow the GPU's virtual clock (10 ns per 100 MHz tick).
        a.gpu_clock_counter, a.cpu_clock_counter, a.system_clock_counter = ts, ts * 10, ts * 10
        a.system_clock_freq = 1_000_000_000

    def available_memory(self, a) -> None:
        a.available = self.node(a.gpu_id).vram.available()

    # ---- sanitizers: the driver tells each GPU which buffers are live ---------------------------------------
    def _sanitizer_view(self, al: Allocation):
        """The simulator-side record of a buffer object (one per BO, shared by every GPU that maps it)."""
        if al.sanitized is None:
            from simgpu.sanitize import Allocation as SanAllocation
            what = {"vram": "VRAM buffer", "gtt": "system-memory buffer", "userptr": "userptr buffer"}[al.kind]
            al.sanitized = SanAllocation(al.va, al.size, what, host_visible=self._cpu_writable(al))
        return al.sanitized

    @staticmethod
    def _cpu_writable(al: Allocation) -> bool:
        """Whether the client may write the buffer with plain CPU stores, unseen: a userptr is its own memory, and
        a buffer allocated CPU-accessible (KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC) may be mapped without this driver
        hearing of it (an mmap of the device-memory file through ctypes' libc bypasses `simgpu run`'s
        interposer; tinygrad maps its kernel-argument and signal buffers so). initcheck counts such a buffer
        as written; a mapping it does see marks any other buffer (host_mapped)."""
        return al.kind == "userptr" or bool(al.flags & kfd.KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC)

    def _tell_mapped(self, n: Node, al: Allocation) -> None:
        san = n.gpu.engine.sanitizer
        if san is not None and al.kind in ("vram", "gtt", "userptr"):
            san.allocations.add(VMID, self._sanitizer_view(al))

    def _tell_unmapped(self, n: Node, al: Allocation) -> None:
        san = n.gpu.engine.sanitizer
        if san is not None and al.kind in ("vram", "gtt", "userptr"):
            san.allocations.remove(VMID, al.va, al.va + al.size)

    def track_allocations(self, n: Node) -> None:
        """A GPU's sanitizer was just turned on: tell it what is already mapped there."""
        for al in self.allocs.values():
            if n.index in al.mapped_on:
                self._tell_mapped(n, al)

    def host_mapped(self, al: Allocation) -> None:
        """The CPU mapped a buffer: initcheck counts it as written (plain CPU stores are not seen)."""
        view = self._sanitizer_view(al) if al.kind in ("vram", "gtt", "userptr") else None
        if view is not None:
            view.host_visible = True
            if view.shadow is not None:
                view.shadow[:] = True

    # ---- memory --------------------------------------------------------------------------------------------
    def alloc_memory_of_gpu(self, a) -> None:
        n = self.vm_node(a.gpu_id)
        kinds = [k for bit, k in TYPE_FLAGS.items() if a.flags & bit]
        if len(kinds) != 1:
            raise KfdError(errno.EINVAL, f"flags {a.flags:#x} must name exactly one memory type")
        kind = kinds[0]
        if a.size == 0 or a.va_addr % PAGE:
            raise KfdError(errno.EINVAL, f"bad size {a.size:#x} or VA {a.va_addr:#x} (nonzero size, page-aligned VA)")
        size = page_align(a.size)  # amdkfd rounds the size up to whole pages (the caller's args keep theirs)
        self._check_room(n, kind, size)
        if kind not in ("doorbell", "mmio") and (a.va_addr < GPUVM_BASE or a.va_addr + size > GPUVM_LIMIT + 1):
            raise KfdError(errno.EINVAL, f"VA {a.va_addr:#x} outside the GPUVM aperture")
        for o in self.allocs.values():
            if o.node == n.index and o.va < a.va_addr + size and a.va_addr < o.va + o.size:
                raise KfdError(errno.EINVAL, f"VA range {a.va_addr:#x}+{size:#x} overlaps another buffer")
        al = Allocation((n.gpu_id << 48) | self._next_handle, n.index, kind, a.va_addr, size, a.flags)
        if kind == "vram":
            al.pa = _place(n.vram, size, a.va_addr)
            al.file_offset = self.devmem.vram_offset(n.index) + al.pa
        elif kind == "gtt":
            window = n.gtt.alloc(size)
            al.pa = _place(self.sysmem, size, a.va_addr)
            al.buf = self.devmem.gtt(n.index, window, size)
            al.file_offset = self.devmem.gtt_offset(n.index) + window
        elif kind == "userptr":
            al.buf = self.user.share(a.mmap_offset, size)  # EFAULT unless the caller owns those pages
            al.pa, al.user_addr = _place(self.sysmem, size, a.va_addr), a.mmap_offset
        elif kind == "doorbell":
            if size != DOORBELL_PAGE:
                raise KfdError(errno.EINVAL, f"doorbell allocations are {DOORBELL_PAGE} bytes")
            al.mmap_offset = self.devmem.doorbell_offset(n.index)
        else:
            if size != PAGE:
                raise KfdError(errno.EINVAL, "MMIO_REMAP allocations are one page")
            al.mmap_offset = self.devmem.mmio_offset(n.index)
        if kind in ("vram", "gtt"):
            self.devmem.clear(al.file_offset, size)  # amdgpu clears memory handed to user space
            al.mmap_offset = al.file_offset  # mmap it on the render node (the file holds it at this offset)
        self._next_handle += 1
        self.allocs[al.handle] = al
        a.handle, a.mmap_offset = al.handle, al.mmap_offset

    def _check_room(self, n: Node, kind: str, size: int) -> None:
        """ENOMEM, naming the sizes, for more VRAM or system memory than the device can give."""
        if kind == "vram":
            free, total, what = n.vram.available(), n.vram.size, "VRAM"
        elif kind == "gtt":
            used = sum(al.size for al in self.allocs.values() if al.kind in ("gtt", "userptr"))
            free, total, what = GTT_SIZE - used, GTT_SIZE, "GTT (system memory the GPU may use)"
        else:
            return
        if size > free:
            raise KfdError(errno.ENOMEM, f"{size} bytes exceed the {what} available: {free} of {total} bytes free")

    def free_memory_of_gpu(self, a) -> None:
        al = self.alloc_of(a.handle)
        if any(_inside(q.hw.ring_base, al) and q.node.index in al.mapped_on for q in self.queues.values()):
            raise KfdError(errno.EBUSY, "buffer holds a live queue's ring")
        for i in list(al.mapped_on):
            self.nodes[i].vm.unmap(al)
            self._tell_unmapped(self.nodes[i], al)
        del self.allocs[a.handle]
        if al.kind == "vram":
            self.nodes[al.node].vram.release(al.pa, al.size)
        elif al.kind in ("gtt", "userptr"):
            self.sysmem.release(al.pa, al.size)
        if al.kind == "userptr":
            self.user.unshare(al.user_addr)
        if al.kind == "gtt":
            self.nodes[al.node].gtt.release(al.file_offset - self.devmem.gtt_offset(al.node), al.size)

    def _device_ids(self, a) -> list[Node]:
        if a.n_devices == 0 or a.n_success > a.n_devices or a.n_devices > len(self.nodes) * 4:
            raise KfdError(errno.EINVAL, f"bad device count n_devices={a.n_devices} n_success={a.n_success}")
        raw = self.user.read(a.device_ids_array_ptr, 4 * a.n_devices)
        ids = (ctypes.c_uint32 * a.n_devices).from_buffer_copy(raw)
        return [self.vm_node(i) for i in ids]

    def map_memory_to_gpu(self, a) -> None:
        al = self.alloc_of(a.handle)
        nodes = self._device_ids(a)
        for i, n in enumerate(nodes):
            if i < a.n_success:
                continue
            if al.kind in ("doorbell", "mmio"):
                pass  # the BAR pages are mapped for the CP; nothing a shader reads in the simulation
            elif n.index not in al.mapped_on:
                n.vm.map(al, *self._placement(al, n))
                self._tell_mapped(n, al)
            al.mapped_on.add(n.index)
            a.n_success = i + 1

    def _placement(self, al: Allocation, n: Node) -> tuple[int, bool, object]:
        """Where GPU n's page tables point for a buffer: its own VRAM, or the system aperture (GTT and USERPTR
        pages; another GPU's VRAM through that GPU's BAR, as amdgpu maps peer VRAM over PCIe P2P)."""
        if al.kind != "vram":
            return al.pa, True, al.buf
        if al.node == n.index:
            return al.pa, False, None
        return bar0_address(al.node) + al.pa, True, None  # the machine wires every peer's BAR (MockOS)

    def unmap_memory_from_gpu(self, a) -> None:
        al = self.alloc_of(a.handle)
        nodes = self._device_ids(a)
        for i, n in enumerate(nodes):
            if i < a.n_success:
                continue
            if n.index not in al.mapped_on:
                raise KfdError(errno.EINVAL, f"buffer is not mapped on gpu_id {n.gpu_id}")
            if al.kind not in ("doorbell", "mmio"):
                n.vm.unmap(al)
                self._tell_unmapped(n, al)
            al.mapped_on.discard(n.index)
            a.n_success = i + 1

    # ---- queues ------------------------------------------------------------------------------------
    def create_queue(self, a) -> None:
        n = self.vm_node(a.gpu_id)
        fmt = QUEUE_FORMATS.get(a.queue_type)
        if fmt is None:
            raise KfdError(errno.EINVAL, f"unknown queue type {a.queue_type}")
        if a.queue_percentage > kfd.KFD_MAX_QUEUE_PERCENTAGE or a.queue_priority > kfd.KFD_MAX_QUEUE_PRIORITY:
            raise KfdError(errno.EINVAL, "queue percentage or priority out of range")
        if a.ring_size & (a.ring_size - 1) or a.ring_size < 256 or a.ring_base_address % 256:
            raise KfdError(errno.EINVAL, f"ring {a.ring_base_address:#x}+{a.ring_size:#x}: size must be a power of "
                                         "two >= 256, base 256-byte aligned")
        for what, va, size in (("ring", a.ring_base_address, a.ring_size), ("rptr", a.read_pointer_address, 8),
                               ("wptr", a.write_pointer_address, 8)):
            if not va or not n.vm.mapped(va, size):
                raise KfdError(errno.EINVAL, f"{what} address {va:#x} is not mapped on the GPU")
        slot = next((s for s in range(2, DOORBELL_PAGE // 8) if s not in n.doorbells), None)
        if slot is None or len(self.queues) >= 1024:
            raise KfdError(errno.ENOMEM, "no free doorbell")
        qid = next(i for i in range(len(self.queues) + 1) if i not in self.queues)
        try:
            hw = n.gpu.create_queue(fmt, a.ring_base_address, a.ring_size, VMID, slot, a.read_pointer_address,
                                    a.write_pointer_address, name=f"{fmt}-q{qid}", engine=a.sdma_engine_id & 1)
        except ValueError as e:
            raise KfdError(errno.EINVAL, str(e)) from None
        n.doorbells.add(slot)
        self.queues[qid] = MockQueue(qid, n, hw, slot, fmt)
        a.queue_id = qid
        a.doorbell_offset = self.devmem.doorbell_offset(n.index) + slot * 8

    def destroy_queue(self, a) -> None:
        q = self.queues.pop(a.queue_id, None)
        if q is None:
            raise KfdError(errno.EINVAL, f"no queue {a.queue_id}")
        q.node.gpu.destroy_queue(q.hw)
        q.node.doorbells.discard(q.doorbell)

    def update_queue(self, a) -> None:
        q = self.queues.get(a.queue_id)
        if q is None:
            raise KfdError(errno.EINVAL, f"no queue {a.queue_id}")
        if a.queue_percentage > kfd.KFD_MAX_QUEUE_PERCENTAGE or a.queue_priority > kfd.KFD_MAX_QUEUE_PRIORITY:
            raise KfdError(errno.EINVAL, "queue percentage or priority out of range")
        if a.ring_size & (a.ring_size - 1) or a.ring_size < 256 or a.ring_base_address % 256:
            raise KfdError(errno.EINVAL, "bad ring geometry")
        if not q.node.vm.mapped(a.ring_base_address, a.ring_size):
            raise KfdError(errno.EINVAL, "ring is not mapped on the GPU")
        if q.hw.rptr != q.hw.wptr:
            raise KfdError(errno.EBUSY, "queue is not idle")
        try:
            q.node.gpu.update_queue(q.hw, a.ring_base_address, a.ring_size)
        except ValueError as e:
            raise KfdError(errno.EINVAL, str(e)) from None

    # ---- events ------------------------------------------------------------------------------------
    def create_event(self, a) -> None:
        if a.event_type > kfd.KFD_IOC_EVENT_MEMORY:
            raise KfdError(errno.EINVAL, f"unknown event type {a.event_type}")
        if a.event_page_offset:  # amdkfd takes the event page from the first call that names one, only once
            if self.event_page is not None:
                raise KfdError(errno.EINVAL, "the event page is already set for this process")
            page = self.allocs.get(a.event_page_offset)
            if page is None or page.kind != "gtt":
                raise KfdError(errno.EINVAL, "event page handle is not a system-memory buffer object")
            self.event_page = page
        if a.event_type in (kfd.KFD_IOC_EVENT_SIGNAL, kfd.KFD_IOC_EVENT_DEBUG_EVENT):
            # Slot 0 is reserved (amdkfd ignores CP interrupts without a context id through it); without an
            # event page of its own the process gets amdkfd's page of 256 slots.
            slots = min(self.event_page.size // 8, kfd.KFD_SIGNAL_EVENT_LIMIT) if self.event_page else 256
            eid = next((i for i in range(1, slots) if i not in self.events), None)
            if eid is None:
                raise KfdError(errno.ENOSPC, "out of signal event slots")
            a.event_page_offset = kfd.KFD_MMAP_TYPE_EVENTS
            a.event_trigger_data, a.event_slot_index = eid, eid
        else:
            eid = next(i for i in range(FIRST_NONSIGNAL_EVENT_ID, FIRST_NONSIGNAL_EVENT_ID + len(self.events) + 1)
                       if i not in self.events)
            a.event_trigger_data = eid
        self.events[eid] = MockEvent(eid, a.event_type, bool(a.auto_reset))
        a.event_id = eid

    def event(self, eid: int) -> MockEvent:
        ev = self.events.get(eid)
        if ev is None:
            raise KfdError(errno.EINVAL, f"no event {eid}")
        return ev

    def destroy_event(self, a) -> None:
        self.event(a.event_id)
        del self.events[a.event_id]

    def set_event(self, a) -> None:
        ev = self.event(a.event_id)
        if ev.type not in (kfd.KFD_IOC_EVENT_SIGNAL, kfd.KFD_IOC_EVENT_DEBUG_EVENT):
            raise KfdError(errno.EINVAL, "only signal events can be set from the CPU")
        ev.signaled = True

    def reset_event(self, a) -> None:
        self.event(a.event_id).signaled = False

    def wait_events(self, a) -> None:
        if a.num_events == 0 or a.num_events > kfd.KFD_SIGNAL_EVENT_LIMIT:
            raise KfdError(errno.EINVAL, f"bad event count {a.num_events}")
        size = ctypes.sizeof(kfd.kfd_event_data)
        arr = bytearray(self.user.read(a.events_ptr, size * a.num_events))
        datas = [kfd.kfd_event_data.from_buffer(arr, i * size) for i in range(a.num_events)]
        events = [self.event(d.event_id) for d in datas]

        def done() -> bool:
            return all(e.signaled for e in events) if a.wait_for_all else any(e.signaled for e in events)

        if not done():
            # Run every queue that can move; a dispatch still running when a finite timeout expires is stopped
            # (a `timeout` queue error).
            seconds = a.timeout / 1000 if 0 < a.timeout < kfd.KFD_EVENT_TIMEOUT_INFINITE else None
            self.progress(seconds=seconds)
        if not done():
            if a.timeout and not self.expired:
                raise WouldBlock(a.timeout)  # the caller waits for progress (or the timeout) and asks again
            a.wait_result = kfd.KFD_IOC_WAIT_RESULT_TIMEOUT
            return
        for d, e in zip(datas, events, strict=True):
            if e.signaled and e.data:
                ctypes.memmove(ctypes.addressof(d.u), e.data, len(e.data))
            if e.signaled and e.auto_reset:
                e.signaled = False
        self.user.write(a.events_ptr, bytes(arr))
        a.wait_result = kfd.KFD_IOC_WAIT_RESULT_COMPLETE

    def progress(self, poll_all: bool = True, seconds: float | None = None) -> bool:
        """Run every queue of every GPU that can move: doorbells stored straight into a doorbell page, queues that
        wait (on memory that may have changed) and, with `poll_all`, every queue whose wptr moved in memory;
        True if anything moved. A dispatch running longer than `seconds` is stopped (a `timeout` fault)."""
        moved = False
        for n in self.nodes:
            before = n.gpu.clock.cycles
            with n.gpu.time_limit(seconds):  # the caller's limit holds for doorbell work too (nested: outer wins)
                moved |= n.gpu.scan_doorbells()
                if poll_all:
                    n.gpu.run_until_idle()
                else:
                    while n.gpu.retry_blocked():
                        pass
            moved |= n.gpu.clock.cycles != before
        return moved

    # ---- interrupts from the simulated GPUs --------------------------------------------------------
    def on_interrupt(self, n: Node, intr: Interrupt) -> None:
        """amdkfd's interrupt handler: a completion signals the event its context id names; a queue error
        becomes a memory exception (page faults) or a hardware exception event."""
        if intr.kind == Kind.QUEUE_ERROR:
            self._exception(n, intr.fault)
            if intr.error is not None:
                why = str(intr.fault) if intr.fault is not None else intr.error.why
                for hook in self.reset_hooks:
                    hook(f"{n.gpu.name} (gpu_id {n.gpu_id}): queue {intr.queue} reset: {why}")
            return
        e = self.events.get(intr.context_id)
        if e is not None and e.type in (kfd.KFD_IOC_EVENT_SIGNAL, kfd.KFD_IOC_EVENT_DEBUG_EVENT):
            e.signaled = True

    def _exception(self, n: Node, fault: HardwareFault | None) -> None:
        if fault is not None and fault.kind == "page_fault":
            data = kfd.kfd_hsa_memory_exception_data(va=fault.address or 0, gpu_id=n.gpu_id)
            data.failure.NotPresent = 1
            etype = kfd.KFD_IOC_EVENT_MEMORY
        else:
            data = kfd.kfd_hsa_hw_exception_data(reset_type=kfd.KFD_HW_EXCEPTION_PER_ENGINE_RESET,
                                                 reset_cause=kfd.KFD_HW_EXCEPTION_GPU_HANG, gpu_id=n.gpu_id)
            etype = kfd.KFD_IOC_EVENT_HW_EXCEPTION
        for e in self.events.values():
            if e.type == etype:
                e.signaled, e.data = True, bytes(data)


def _inside(va: int, al: Allocation) -> bool:
    return al.va <= va < al.va + al.size
