"""Simulated physical memory: VRAM and the system-memory aperture, addressed by physical address.

VRAM is one numpy uint8 array over an anonymous private mmap, or over a buffer the owner provides (the mock
driver backs it with shared memory that CPU clients map): the OS commits it page by page on first write, so a
24 GiB VRAM costs no RSS until used (MAP_NORESERVE so Linux's overcommit heuristic does not refuse a mapping
larger than RAM). Reads of untouched VRAM return zeros.

The system aperture is the host memory the GPU can reach (PTE/PDE SYSTEM bit set): buffers owned by
the simulator, registered at page-aligned system physical addresses. VRAM physical address 0 is the
first byte of VRAM (amdgpu's vram_base_offset is 0 on a dGPU); system addresses are a separate space.

Every access is bounds-checked and goes through these arrays: no guest-provided value ever becomes a
host pointer. Region numbers (0 = VRAM, 1.. = system buffers in address order) are what the MMU
uses to batch lane accesses; they are stable only while no system buffer is added or removed.

Each system buffer says what link carries its bytes (simgpu.clock.Link: host memory over PCIe, or a peer
GPU's VRAM over PCIe or XGMI), which the DMA engines' cost model charges by.
"""

from __future__ import annotations

import bisect
import mmap
import sys

import numpy as np

from simgpu.clock import Link
from simgpu.hw.gmc import PAGE_SHIFT, PAGE_SIZE

DEFAULT_VRAM_SIZE = 24 << 30
# Python 3.11's mmap module lacks MAP_NORESERVE; 0x4000 is its value on Linux.
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform.startswith("linux") else 0)


class PhysicalAddressError(ValueError):
    """A physical access outside VRAM or outside every registered system buffer."""

    def __init__(self, pa: int, nbytes: int, system: bool, reason: str = ""):
        self.pa, self.nbytes, self.system = pa, nbytes, system
        where = "system" if system else "VRAM"
        super().__init__(f"{where} physical access [{pa:#x}, +{nbytes:#x}) {reason or 'is out of range'}")


def _as_u8(buffer) -> np.ndarray:
    """A writable 1-D uint8 numpy view of a buffer (ndarray, bytearray, memoryview, mmap)."""
    arr = buffer if isinstance(buffer, np.ndarray) else np.frombuffer(buffer, dtype=np.uint8)
    arr = arr.reshape(-1).view(np.uint8) if arr.dtype != np.uint8 else arr.reshape(-1)
    if not arr.flags.writeable or not arr.flags.c_contiguous:
        raise ValueError("system buffer must be writable and contiguous")
    return arr


class PhysicalMemory:
    """VRAM plus the system-memory aperture of one simulated GPU."""

    def __init__(self, vram_size: int = DEFAULT_VRAM_SIZE, backing=None):
        if vram_size <= 0 or vram_size % PAGE_SIZE:
            raise ValueError(f"VRAM size {vram_size:#x} must be a positive multiple of {PAGE_SIZE:#x}")
        self.vram_size = vram_size
        if backing is None:
            flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
            self._vram_map = mmap.mmap(-1, vram_size, flags=flags)
            backing = self._vram_map
        self.vram = _as_u8(backing)[:vram_size]  # the owner's buffer (e.g. shared memory a CPU client maps)
        if self.vram.size != vram_size:
            raise ValueError(f"VRAM backing of {self.vram.size:#x} bytes is smaller than {vram_size:#x}")
        self._views: dict[str, np.ndarray] = {}
        self._sys_starts: list[int] = []  # sorted system PAs of the registered buffers
        self._sys_bufs: list[np.ndarray] = []
        self._sys_links: list[Link] = []
        self.system_version = 0  # bumped by add_system / remove_system: a view of system memory kept since is stale
        # called by remove_system before it returns: whoever keeps views of system memory drops them there, so the
        # buffer's owner can release it at once (an exported view keeps an mmap from closing)
        self.system_removed_hooks: list = []

    # ---- system aperture ------------------------------------------------------------------------
    def add_system(self, pa: int, buffer, link: Link = Link.PCIE) -> np.ndarray:
        """Register a simulator-owned host buffer at system physical address `pa`, reached over `link`;
        returns its uint8 view."""
        arr = _as_u8(buffer)
        if pa < 0 or pa % PAGE_SIZE or arr.size == 0 or arr.size % PAGE_SIZE:
            raise ValueError(f"system buffer at {pa:#x} of {arr.size:#x} bytes must be page aligned and sized")
        i = bisect.bisect_left(self._sys_starts, pa)
        if i > 0 and self._sys_starts[i - 1] + self._sys_bufs[i - 1].size > pa:
            raise ValueError(f"system buffer at {pa:#x} overlaps the one at {self._sys_starts[i - 1]:#x}")
        if i < len(self._sys_starts) and pa + arr.size > self._sys_starts[i]:
            raise ValueError(f"system buffer at {pa:#x} overlaps the one at {self._sys_starts[i]:#x}")
        self._sys_starts.insert(i, pa)
        self._sys_bufs.insert(i, arr)
        self._sys_links.insert(i, Link(link))
        self.system_version += 1
        return arr

    def remove_system(self, pa: int) -> None:
        """Unregister the system buffer that starts at `pa`."""
        i = bisect.bisect_left(self._sys_starts, pa)
        if i == len(self._sys_starts) or self._sys_starts[i] != pa:
            raise KeyError(f"no system buffer registered at {pa:#x}")
        del self._sys_starts[i], self._sys_bufs[i], self._sys_links[i]
        self.system_version += 1
        for hook in self.system_removed_hooks:
            hook()

    def link(self, pa: int, system: bool) -> Link:
        """The link that carries accesses to physical address `pa` (an unbacked system address: PCIe)."""
        if not system:
            return Link.VRAM
        i = bisect.bisect_right(self._sys_starts, pa) - 1
        if i < 0 or pa >= self._sys_starts[i] + self._sys_bufs[i].size:
            return Link.PCIE
        return self._sys_links[i]

    def system_buffers(self) -> list[tuple[int, np.ndarray]]:
        """The registered system buffers as (system PA, uint8 array), in address order."""
        return list(zip(self._sys_starts, self._sys_bufs, strict=True))

    # ---- driver-side (VMID-less) access -------------------------------------------------------------
    def _segments(self, pa: int, nbytes: int, system: bool) -> list[tuple[np.ndarray, int, int]]:
        """(buffer, offset, length) pieces covering [pa, pa + nbytes), or PhysicalAddressError."""
        if pa < 0 or nbytes < 0:
            raise PhysicalAddressError(pa, nbytes, system, "has a negative address or size")
        if not system:
            if pa + nbytes > self.vram_size:
                raise PhysicalAddressError(pa, nbytes, system, f"exceeds VRAM size {self.vram_size:#x}")
            return [(self.vram, pa, nbytes)]
        pieces, cur, end = [], pa, pa + nbytes
        while cur < end:
            i = bisect.bisect_right(self._sys_starts, cur) - 1
            if i < 0 or cur >= self._sys_starts[i] + self._sys_bufs[i].size:
                raise PhysicalAddressError(pa, nbytes, system, f"touches unbacked system address {cur:#x}")
            off = cur - self._sys_starts[i]
            n = min(end - cur, self._sys_bufs[i].size - off)
            pieces.append((self._sys_bufs[i], off, n))
            cur += n
        return pieces

    def read(self, pa: int, nbytes: int, system: bool = False) -> bytes:
        """Read `nbytes` at physical address `pa` (VRAM, or the system aperture if `system`)."""
        return b"".join(buf[off:off + n].tobytes() for buf, off, n in self._segments(pa, nbytes, system))

    def write(self, pa: int, data, system: bool = False) -> None:
        """Write bytes-like `data` at physical address `pa`."""
        src = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        pos = 0
        for buf, off, n in self._segments(pa, src.size, system):
            buf[off:off + n] = src[pos:pos + n]
            pos += n

    def read_u64(self, pa: int, system: bool = False) -> int:
        """Read one little-endian 64-bit word (page-table entries)."""
        if not system and pa % 8 == 0 and 0 <= pa <= self.vram_size - 8:
            return int(self.typed_vram("<u8")[pa >> 3])
        return int.from_bytes(self.read(pa, 8, system), "little")

    def write_u64(self, pa: int, value: int, system: bool = False) -> None:
        """Write one little-endian 64-bit word."""
        self.write(pa, int(value).to_bytes(8, "little"), system)

    def view(self, pa: int, nbytes: int, system: bool = False) -> memoryview:
        """A writable zero-copy memoryview of [pa, pa + nbytes) (must lie in one buffer): for mmap."""
        pieces = self._segments(pa, nbytes, system)
        if len(pieces) != 1:
            raise PhysicalAddressError(pa, nbytes, system, "spans more than one system buffer")
        buf, off, n = pieces[0]
        return memoryview(buf[off:off + n])

    # ---- for the MMU ---------------------------------------------------------------------------------
    def typed_vram(self, dtype: str) -> np.ndarray:
        """VRAM viewed as little-endian `dtype` elements (cached view, no copy)."""
        v = self._views.get(dtype)
        if v is None:
            v = self._views[dtype] = self.vram.view(np.dtype(dtype))
        return v

    def span(self, pa: int, nbytes: int, system: bool = False) -> np.ndarray | None:
        """[pa, pa + nbytes) as a writable uint8 view when it lies inside one buffer (VRAM or one system
        buffer), else None."""
        try:
            pieces = self._segments(pa, nbytes, system)
        except PhysicalAddressError:
            return None
        if len(pieces) != 1:
            return None
        buf, off, n = pieces[0]
        return buf[off:off + n]

    def region_buffers(self) -> list[np.ndarray]:
        """Buffers by region number: 0 is VRAM, i + 1 is the i-th system buffer in address order."""
        return [self.vram, *self._sys_bufs]

    def locate_pages(self, ppn: np.ndarray, system: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For physical page numbers: (region, byte offset of the page in that region's buffer, backed?)."""
        ppn = ppn.astype(np.int64, copy=False)
        region = np.zeros(ppn.size, dtype=np.int64)
        base = ppn << PAGE_SHIFT
        ok = (ppn >= 0) & (ppn < (self.vram_size >> PAGE_SHIFT))
        if not system.any():
            return region, base, ok
        s = np.flatnonzero(system)
        if not self._sys_starts:
            ok[s] = False
            return region, base, ok
        starts = np.array(self._sys_starts, dtype=np.int64) >> PAGE_SHIFT
        ends = starts + np.array([b.size for b in self._sys_bufs], dtype=np.int64) // PAGE_SIZE
        idx = np.maximum(np.searchsorted(starts, ppn[s], side="right") - 1, 0)
        inside = (ppn[s] >= starts[idx]) & (ppn[s] < ends[idx])
        region[s] = np.where(inside, idx + 1, 0)
        base[s] = np.where(inside, (ppn[s] - starts[idx]) << PAGE_SHIFT, 0)
        ok[s] = inside
        return region, base, ok
