"""Memory of the mock driver: VRAM and system-address allocators, buffer objects and the per-GPU VM (page
tables written with simgpu.mem.PageTableBuilder).

The bytes themselves are numpy views of shared memory (mockgpu.devmem; USERPTR pages: mockgpu.usermem); the GPU
reaches them only through its MMU, so a bad GPU address is a GPU page fault, never a host crash.
"""

from __future__ import annotations

import bisect
import errno
from dataclasses import dataclass, field

import numpy as np

from runtime.uapi import kfd
from simgpu.hw import gmc
from simgpu.hw.discovery import DISCOVERY_TMR_OFFSET
from simgpu.mem import PageTableBuilder

PAGE = 4096
SYSTEM_PA_BASE = 1 << 32  # system-aperture physical addresses of GTT/USERPTR buffers
PT_POOL = 64 << 20  # VRAM at the top of each GPU reserved for page tables (but for the IP discovery table's 64 KiB)
GTT_SIZE = 32 << 30  # amdgpu's default GTT limit: half of system memory (the CPU node shows 64 GiB)


class KfdError(Exception):
    """An ioctl failure: becomes OSError(errno) at the seam."""

    def __init__(self, err: int, why: str = ""):
        super().__init__(why or errno.errorcode.get(err, str(err)))
        self.errno = err


class WouldBlock(Exception):  # noqa: N818 - a control-flow signal, like BlockingIOError, not a failure
    """WAIT_EVENTS has nothing to report yet and its timeout has not passed: the caller waits for progress
    (up to `timeout_ms`) and asks again."""

    def __init__(self, timeout_ms: int):
        super().__init__(f"waiting up to {timeout_ms} ms")
        self.timeout_ms = timeout_ms


def page_align(n: int) -> int:
    """n rounded up to whole pages."""
    return -(-n // PAGE) * PAGE


FRAGMENT_ALIGN = 2 << 20  # the largest physical alignment given to a buffer (amdgpu's VRAM manager: 2 MiB blocks)


def fragment_align(size: int) -> int:
    """The physical alignment period of a buffer of `size` bytes: the largest power of two the size holds, from a
    page up to 2 MiB. The buffer is placed at the same offset within that period as its VA (_place in
    mockgpu.kfd_memory), so VA and PA agree in their low bits and its PTEs form large fragments -- one
    page-table write per fragment, what the GPU's TLB caches, 2 MiB pages in the middle -- whatever the VA's own
    alignment: a VA only page-aligned (tinygrad maps a buffer at the address its mmap got) placed 2 MiB-aligned
    gave a PTE per page (48,829 page-table writes, 3.5 s, for one 200 MB buffer of tinygrad's test_hcq)."""
    return max(min(FRAGMENT_ALIGN, 1 << (max(size, PAGE).bit_length() - 1)), PAGE)


class RangeAllocator:
    """First-fit allocator of page-aligned ranges (VRAM, system physical addresses)."""

    def __init__(self, start: int, end: int):
        self.free: list[tuple[int, int]] = [(start, end - start)]
        self.size = end - start

    def alloc(self, size: int, align: int = PAGE, phase: int = 0) -> int:
        """Start of a free range of `size` bytes at `phase` modulo `align` (the first such that fits), or ENOMEM."""
        for i, (s, n) in enumerate(self.free):
            a = s + (phase - s) % align
            if a + size <= s + n:
                pieces = [(s, a - s)] if a > s else []
                if a + size < s + n:
                    pieces.append((a + size, s + n - a - size))
                self.free[i:i + 1] = pieces
                return a
        raise KfdError(errno.ENOMEM, f"out of memory for {size:#x} bytes")

    def release(self, start: int, size: int) -> None:
        """Give a range back (coalescing neighbours)."""
        bisect.insort(self.free, (start, size))
        merged: list[tuple[int, int]] = []
        for s, n in self.free:
            if merged and merged[-1][0] + merged[-1][1] == s:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((s, n))
        self.free = merged

    def available(self) -> int:
        """Free bytes."""
        return sum(n for _, n in self.free)


@dataclass
class Allocation:
    """A KFD buffer object: where its bytes live and where it is mapped."""

    handle: int
    node: int  # GPU index it was allocated on
    kind: str  # "vram", "gtt", "userptr", "doorbell", "mmio"
    va: int
    size: int
    flags: int
    pa: int = 0  # VRAM physical address, or system-aperture address (gtt/userptr)
    buf: np.ndarray | None = None  # the bytes of system memory
    file_offset: int = 0  # where the bytes live in the device memory file (vram/gtt)
    mmap_offset: int = 0
    user_addr: int = 0  # USERPTR: the caller's address of its pages
    mapped_on: set[int] = field(default_factory=set)
    sanitized: object = None  # its simgpu.sanitize.Allocation, once a GPU with sanitizers maps it


class VM:
    """One process's GPU virtual address space on one GPU (its VMID and page tables)."""

    def __init__(self, gpu, vmid: int):
        self.gpu, self.vmid = gpu, vmid
        top = gpu.phys.vram_size
        self._pt_pages = RangeAllocator(top - PT_POOL, top - DISCOVERY_TMR_OFFSET)
        self.tables = PageTableBuilder(gpu.phys, lambda: self._pt_pages.alloc(PAGE),
                                       lambda pa: self._pt_pages.release(pa, PAGE), gmc.pte_format(gpu.chip.family))
        gpu.mmu.set_root(vmid, self.tables.root)
        # What this VM mapped, as sorted disjoint ranges: its page tables have no other writer, so these answer
        # mapped() exactly without walking the tables page by page.
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._system: dict[int, int] = {}  # buffer handle -> system-aperture address registered for it

    def map(self, a: Allocation, pa: int, system: bool, buf: np.ndarray | None = None) -> None:
        """Write PTEs for the allocation at `pa` (VRAM, or the system aperture where `buf` is registered) and
        flush the TLB."""
        writable = bool(a.flags & kfd.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE)
        executable = bool(a.flags & kfd.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE)
        if system and buf is not None:
            self.gpu.phys.add_system(pa, buf)
            self._system[a.handle] = pa
        self.tables.map(a.va, a.size, pa, system=system, writeable=writable, executable=executable,
                        snooped=system)
        self.gpu.mmu.invalidate(self.vmid)
        i = bisect.bisect_left(self._starts, a.va)
        self._starts.insert(i, a.va)
        self._ends.insert(i, a.va + a.size)

    def unmap(self, a: Allocation) -> None:
        """Clear the allocation's PTEs (and its system-aperture registration) and flush the TLB."""
        self.tables.unmap(a.va, a.size)
        pa = self._system.pop(a.handle, None)
        if pa is not None:
            self.gpu.phys.remove_system(pa)
        self.gpu.mmu.invalidate(self.vmid)
        i = bisect.bisect_left(self._starts, a.va)
        if i < len(self._starts) and self._starts[i] == a.va:
            del self._starts[i], self._ends[i]

    def mapped(self, va: int, nbytes: int = 1) -> bool:
        """Whether every byte of [va, va + nbytes) is mapped (exact; O(log n) plus one step per adjacent range)."""
        end = va + max(nbytes, 1)
        i = bisect.bisect_right(self._starts, va) - 1
        while 0 <= i < len(self._starts) and self._starts[i] <= va < self._ends[i]:
            if end <= self._ends[i]:
                return True
            va, i = self._ends[i], i + 1  # continues only into a range that starts exactly here
        return False
