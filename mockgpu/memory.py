"""Memory of the mock driver: host memory (anonymous mmaps), VRAM ranges, system-aperture buffers and
the per-GPU VM (page tables written with simgpu.mem.PageTableBuilder).

All bytes are simulator-owned numpy buffers; CPU addresses handed out here are fake (they name a
buffer and an offset, never a host pointer), which is what lets a guest-provided address fault
cleanly instead of crashing the host.
"""

from __future__ import annotations

import bisect
import errno
from dataclasses import dataclass, field

import numpy as np

from runtime.uapi import kfd
from simgpu.mem import PageTableBuilder

PAGE = 4096
HOST_BASE = 0x7E00_0000_0000  # fake CPU addresses of anonymous mappings
SYSTEM_PA_BASE = 1 << 32  # system-aperture physical addresses of GTT/USERPTR buffers
PT_POOL = 64 << 20  # VRAM at the top of each GPU reserved for page tables
GTT_SIZE = 32 << 30  # amdgpu's default GTT limit: half of system memory (the CPU node shows 64 GiB)


class KfdError(Exception):
    """An ioctl failure: becomes OSError(errno) at the seam."""

    def __init__(self, err: int, why: str = ""):
        super().__init__(why or errno.errorcode.get(err, str(err)))
        self.errno = err


def page_align(n: int) -> int:
    """n rounded up to whole pages."""
    return -(-n // PAGE) * PAGE


class HostMemory:
    """The emulated process's anonymous memory: fake CPU address -> simulator-owned buffer."""

    def __init__(self):
        self._starts: list[int] = []
        self._bufs: list[np.ndarray] = []
        self._next = HOST_BASE

    def map(self, length: int, addr: int | None = None) -> tuple[int, np.ndarray]:
        """New zeroed memory at a fresh (or the requested, if free) address."""
        size = page_align(length)
        if addr is None or addr % PAGE or self.find(addr, size, quiet=True) is not None or self._overlaps(addr, size):
            addr = self._next
        self._next = max(self._next, addr + size + PAGE)
        buf = np.zeros(size, np.uint8)
        i = bisect.bisect_left(self._starts, addr)
        self._starts.insert(i, addr)
        self._bufs.insert(i, buf)
        return addr, buf

    def _overlaps(self, addr: int, size: int) -> bool:
        return any(s < addr + size and addr < s + b.size for s, b in zip(self._starts, self._bufs, strict=True))

    def unmap(self, addr: int) -> None:
        """Drop the anonymous mapping starting at addr."""
        i = bisect.bisect_left(self._starts, addr)
        if i < len(self._starts) and self._starts[i] == addr:
            del self._starts[i], self._bufs[i]

    def find(self, addr: int, nbytes: int, quiet: bool = False) -> np.ndarray | None:
        """The bytes [addr, addr + nbytes) of one mapping (a view), or EFAULT."""
        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0 and nbytes >= 0 and addr + nbytes <= self._starts[i] + self._bufs[i].size:
            off = addr - self._starts[i]
            return self._bufs[i][off:off + nbytes]
        if quiet:
            return None
        raise KfdError(errno.EFAULT, f"bad user address {addr:#x} (+{nbytes:#x})")

    def read(self, addr: int, nbytes: int) -> bytes:
        """copy_from_user."""
        return self.find(addr, nbytes).tobytes()

    def write(self, addr: int, data: bytes) -> None:
        """copy_to_user."""
        self.find(addr, len(data))[:] = np.frombuffer(data, np.uint8)


class RangeAllocator:
    """First-fit allocator of page-aligned ranges (VRAM, system physical addresses)."""

    def __init__(self, start: int, end: int):
        self.free: list[tuple[int, int]] = [(start, end - start)]
        self.size = end - start

    def alloc(self, size: int, align: int = PAGE) -> int:
        """Start of a free range of `size` bytes, or ENOMEM."""
        for i, (s, n) in enumerate(self.free):
            a = -(-s // align) * align
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
    mmap_offset: int = 0
    mapped_on: set[int] = field(default_factory=set)
    sanitized: object = None  # its simgpu.sanitize.Allocation, once a GPU with sanitizers maps it


class VM:
    """One process's GPU virtual address space on one GPU (its VMID and page tables)."""

    def __init__(self, gpu, vmid: int):
        self.gpu, self.vmid = gpu, vmid
        top = gpu.phys.vram_size
        self._pt_pages = RangeAllocator(top - PT_POOL, top)
        self.tables = PageTableBuilder(gpu.phys, lambda: self._pt_pages.alloc(PAGE),
                                       lambda pa: self._pt_pages.release(pa, PAGE))
        gpu.mmu.set_root(vmid, self.tables.root)
        # What this VM mapped, as sorted disjoint ranges: its page tables have no other writer, so these answer
        # mapped() exactly without walking the tables page by page.
        self._starts: list[int] = []
        self._ends: list[int] = []

    def map(self, a: Allocation) -> None:
        """Write PTEs for the allocation (VRAM or system aperture) and flush the TLB."""
        writable = bool(a.flags & kfd.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE)
        executable = bool(a.flags & kfd.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE)
        system = a.kind in ("gtt", "userptr")
        if system:
            regs = dict(self.gpu.phys.system_buffers())
            if a.pa not in regs:
                self.gpu.phys.add_system(a.pa, a.buf)
        self.tables.map(a.va, a.size, a.pa, system=system, writeable=writable, executable=executable,
                        snooped=system)
        self.gpu.mmu.invalidate(self.vmid)
        i = bisect.bisect_left(self._starts, a.va)
        self._starts.insert(i, a.va)
        self._ends.insert(i, a.va + a.size)

    def unmap(self, a: Allocation) -> None:
        """Clear the allocation's PTEs and flush the TLB."""
        self.tables.unmap(a.va, a.size)
        if a.kind in ("gtt", "userptr") and a.pa in dict(self.gpu.phys.system_buffers()):
            self.gpu.phys.remove_system(a.pa)
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
