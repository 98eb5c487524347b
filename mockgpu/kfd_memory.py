"""The process's buffer objects: AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, FREE_MEMORY_OF_GPU, MAP_MEMORY_TO_GPU,
UNMAP_MEMORY_FROM_GPU and AVAILABLE_MEMORY (amdgpu_amdkfd_gpuvm.c in the kernel): where each buffer's bytes live
(VRAM, GTT, USERPTR pages, a GPU's doorbell or MMIO remap page), which GPUs' page tables map it, and what each GPU's
sanitizer is told of it."""

from __future__ import annotations

import bisect
import ctypes
import errno

from mockgpu.devmem import DeviceMemory
from mockgpu.kfd_node import DOORBELL_PAGE, GPUVM_BASE, GPUVM_LIMIT, VMID, Node, node_of, vm_node_of
from mockgpu.kfd_queues import MockQueue
from mockgpu.memory import (
    GTT_SIZE,
    PAGE,
    SYSTEM_PA_BASE,
    Allocation,
    KfdError,
    RangeAllocator,
    fragment_align,
    page_align,
)
from mockgpu.usermem import UserMemory
from runtime.uapi import kfd
from simgpu.soc.pci import bar0_address

TYPE_FLAGS = {kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM: "vram", kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT: "gtt",
              kfd.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR: "userptr", kfd.KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL: "doorbell",
              kfd.KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP: "mmio"}


def _place(space: RangeAllocator, size: int, va: int) -> int:
    """Physical room for a buffer at `va`: congruent to the VA modulo its fragment alignment (fragment_align), or
    page-aligned where only that fits (an alignment gap must never make a fragmented but big enough space ENOMEM)."""
    align = fragment_align(size)
    try:
        return space.alloc(size, align, va % align)
    except KfdError:
        return space.alloc(size)



class _Spans:
    """The VA ranges of a process's buffers per GPU node, sorted by start, for the overlap check at allocation: they
    never overlap, so their ends are in the same order and only the last range starting below a new range's end can
    reach into it. (A scan of every buffer made each allocation cost O(buffers): a test process holds thousands,
    the code objects its compiler loaded.)"""

    def __init__(self):
        self._starts: dict[int, list[int]] = {}  # node index -> starts, sorted
        self._ends: dict[tuple[int, int], int] = {}  # (node index, start) -> end

    def overlaps(self, node: int, va: int, size: int) -> bool:
        starts = self._starts.get(node, [])
        i = bisect.bisect_left(starts, va + size)
        return i > 0 and self._ends[(node, starts[i - 1])] > va

    def add(self, node: int, va: int, size: int) -> None:
        bisect.insort(self._starts.setdefault(node, []), va)
        self._ends[(node, va)] = va + size

    def remove(self, node: int, va: int) -> None:
        starts = self._starts[node]
        del starts[bisect.bisect_left(starts, va)]
        del self._ends[(node, va)]


class KfdMemory:
    """The buffer objects of one kfd_process, by handle (module docstring)."""

    def __init__(self, nodes: list[Node], user: UserMemory, devmem: DeviceMemory, queues: dict[int, MockQueue]):
        self.nodes, self.user, self.devmem = nodes, user, devmem
        self.queues = queues  # the process's queues: a buffer holding a live queue's ring is not freed
        self.allocs: dict[int, Allocation] = {}
        self._spans = _Spans()  # the allocations' VA ranges (the overlap check)
        self.sysmem = RangeAllocator(SYSTEM_PA_BASE, SYSTEM_PA_BASE + (1 << 40))
        self._next_handle = 1

    def alloc_of(self, handle: int) -> Allocation:
        a = self.allocs.get(handle)
        if a is None:
            raise KfdError(errno.EINVAL, f"no buffer object with handle {handle:#x}")
        return a

    def available_memory(self, a) -> None:
        a.available = node_of(self.nodes, a.gpu_id).vram.available()

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

    # ---- ALLOC/FREE/MAP/UNMAP ------------------------------------------------------------------------------
    def alloc_memory_of_gpu(self, a) -> None:
        n = vm_node_of(self.nodes, a.gpu_id)
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
        if self._spans.overlaps(n.index, a.va_addr, size):
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
        self._spans.add(al.node, al.va, al.size)
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
        self._spans.remove(al.node, al.va)
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
        return [vm_node_of(self.nodes, i) for i in ids]

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
        pages; another GPU's VRAM over XGMI when both are in one hive -- amdgpu_xgmi_same_hive -- else through that
        GPU's BAR, as amdgpu maps peer VRAM over PCIe P2P)."""
        if al.kind != "vram":
            return al.pa, True, al.buf
        if al.node == n.index:
            return al.pa, False, None
        owner = self.nodes[al.node]
        if owner.hive is not None and owner.hive is n.hive:  # the hive aperture (mockgpu/hive.py)
            return owner.hive.window(al.node) + al.pa, True, None
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


def _inside(va: int, al: Allocation) -> bool:
    return al.va <= va < al.va + al.size
