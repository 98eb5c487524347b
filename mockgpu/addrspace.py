"""The CPU address space of the emulated process as the mock driver keeps it: which mappings it handed out where.

Addresses are the driver's own bookkeeping, chosen deterministically (a hint is honoured when that range is free,
MAP_FIXED replaces whatever was there, as mmap does), so that the same calls give the same addresses run after run
and a recorded trace replays at the same addresses. Each area's bytes are a numpy array: fresh zeroed memory for
anonymous mappings, a slice of the device memory file (mockgpu.devmem) for /dev/kfd and render-node mappings, or
nothing for a PROT_NONE reservation (any access to it is EFAULT, like the kernel's copy_from_user).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from mockgpu.memory import PAGE, page_align

HOST_BASE = 0x7E00_0000_0000  # where addresses the caller did not choose start

@dataclass
class Area:
    """A mapped range [start, end) and its bytes (None: reserved, inaccessible)."""

    start: int
    end: int
    buf: np.ndarray | None


class AddressSpace:
    """Sorted, disjoint areas; map/unmap split areas as the kernel splits VMAs."""

    def __init__(self, base: int = HOST_BASE):
        self._starts: list[int] = []
        self._areas: list[Area] = []
        self._next = base

    # ---- mapping ----------------------------------------------------------------------------------------
    def choose(self, length: int, addr: int | None = None) -> int:
        """Where a new mapping of `length` bytes goes: the hint if it is page-aligned and free, else a fresh range
        (followed by a free guard page)."""
        size = page_align(length)
        if addr is not None and addr > 0 and addr % PAGE == 0 and self.free(addr, size):
            return addr
        while True:
            i = bisect.bisect_left(self._starts, self._next + size + PAGE) - 1  # last area starting below the end
            if i < 0 or self._areas[i].end <= self._next:
                return self._next
            self._next = self._areas[i].end + PAGE

    def map(self, addr: int, length: int, buf: np.ndarray | None) -> Area:
        """Map [addr, addr + page-aligned length) to `buf` (at least that long, or None), replacing what was there."""
        size = page_align(length)
        self.unmap(addr, size)
        area = Area(addr, addr + size, None if buf is None else buf[:size])
        i = bisect.bisect_left(self._starts, addr)
        self._starts.insert(i, addr)
        self._areas.insert(i, area)
        self._next = max(self._next, addr + size + PAGE)
        return area

    def unmap(self, addr: int, length: int) -> None:
        """Remove [addr, addr + length) from every area it touches (splitting them)."""
        end = addr + page_align(length)
        i = max(bisect.bisect_right(self._starts, addr) - 1, 0)
        while i < len(self._areas) and self._areas[i].start < end:
            a = self._areas[i]
            if a.end <= addr:
                i += 1
                continue
            pieces = []
            if a.start < addr:
                pieces.append(Area(a.start, addr, None if a.buf is None else a.buf[:addr - a.start]))
            if end < a.end:
                pieces.append(Area(end, a.end, None if a.buf is None else a.buf[end - a.start:]))
            self._areas[i:i + 1] = pieces
            self._starts[i:i + 1] = [p.start for p in pieces]
            i += len(pieces)

    def free(self, addr: int, size: int) -> bool:
        """Whether no area overlaps [addr, addr + size)."""
        i = bisect.bisect_right(self._starts, addr + size - 1) - 1
        return i < 0 or self._areas[i].end <= addr

    # ---- access -----------------------------------------------------------------------------------------
    def area(self, addr: int) -> Area | None:
        """The area holding addr, if any."""
        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0 and addr < self._areas[i].end:
            return self._areas[i]
        return None

    def pieces(self, addr: int, nbytes: int) -> list[np.ndarray] | None:
        """The bytes [addr, addr + nbytes) as views of consecutive accessible areas, or None if any byte is not
        mapped or not accessible."""
        out, cur, end = [], addr, addr + nbytes
        while cur < end:
            a = self.area(cur)
            if a is None or a.buf is None:
                return None
            n = min(end, a.end) - cur
            out.append(a.buf[cur - a.start:cur - a.start + n])
            cur += n
        return out
