"""What the sanitizers check GPU accesses against: the live allocations of each VMID, as their owner says.

The simulator does not know which bytes of mapped memory are a buffer: the driver does (mockgpu's
ALLOC/MAP/UNMAP/FREE ioctls, the testbed's allocator). It tells the simulator through this table, and
the runtime may narrow an allocation to the bytes its user asked for (a 4000-byte buffer lives in a
4096-byte allocation: byte 4000 is out of bounds although the page is mapped). Freed allocations are
remembered (the most recent FREED_KEPT) so that an access to one is named a use after free.

An `Allocation` object may be mapped in several VMIDs or on several GPUs (a system-memory buffer both
GPUs of a copy map): its shadow state (initcheck) lives on the object and is shared by every mapping.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field

import numpy as np

FREED_KEPT = 256  # freed allocations remembered per table, for use-after-free reports


@dataclass(eq=False)
class Allocation:
    """One buffer: where it is, how big the owner asked it to be, what it is for."""

    va: int
    size: int  # bytes mapped
    name: str = ""  # "buffer", "kernarg ring", "code object", ... (how reports name it)
    requested: int | None = None  # the bytes the owner's user asked for (<= size); None: all of `size`
    host_visible: bool = False  # mapped into the CPU: plain CPU stores may write it at any time
    freed: bool = False
    serial: int = 0  # allocation order, for messages ("allocation #12")
    shadow: np.ndarray | None = field(default=None, repr=False)  # initcheck: byte written (bool), lazily

    @property
    def end(self) -> int:
        """One past the last byte a kernel may access."""
        return self.va + (self.size if self.requested is None else self.requested)

    @property
    def nbytes(self) -> int:
        return self.end - self.va

    def describe(self) -> str:
        """'the 4000-byte buffer at 0x...' (with the mapped size when the owner asked for fewer bytes)."""
        what = self.name or "allocation"
        padded = f" (in a {self.size}-byte allocation)" if self.requested is not None and self.requested != self.size \
            else ""
        return f"the {self.nbytes}-byte {what} at {self.va:#x}{padded}"

    def written(self) -> np.ndarray:
        """The initcheck shadow: one bool per byte, True once the host or the GPU wrote it."""
        if self.shadow is None:
            self.shadow = np.full(self.size, self.host_visible, bool)
        return self.shadow


class AllocationTable:
    """Live allocations by VMID (sorted, disjoint), and the recently freed ones."""

    def __init__(self):
        self._starts: dict[int, list[int]] = {}
        self._allocs: dict[int, list[Allocation]] = {}
        self.freed: deque[tuple[int, Allocation]] = deque(maxlen=FREED_KEPT)
        self._serial = 0
        self.version = 0  # bumped by every change: checkers cache sorted arrays by it

    def add(self, vmid: int, alloc: Allocation) -> Allocation:
        """Register a mapping of `alloc` in `vmid` (an overlapping older entry is replaced)."""
        self.remove(vmid, alloc.va, alloc.va + alloc.size, keep=False)
        if not alloc.serial:
            self._serial += 1
            alloc.serial = self._serial
        starts, allocs = self._starts.setdefault(vmid, []), self._allocs.setdefault(vmid, [])
        i = bisect.bisect_left(starts, alloc.va)
        starts.insert(i, alloc.va)
        allocs.insert(i, alloc)
        self.version += 1
        return alloc

    def map(self, vmid: int, va: int, size: int, name: str = "", host_visible: bool = False) -> Allocation:
        """Register a new allocation (what a driver calls when it maps a buffer)."""
        return self.add(vmid, Allocation(va, size, name, host_visible=host_visible))

    def remove(self, vmid: int, start: int, end: int, keep: bool = True) -> list[Allocation]:
        """Unregister the allocations overlapping [start, end) in `vmid` (unmapped or freed); `keep` them for
        use-after-free reports."""
        starts, allocs = self._starts.get(vmid, []), self._allocs.get(vmid, [])
        gone = [a for a in allocs if a.va < end and start < a.va + a.size]
        for a in gone:
            i = allocs.index(a)
            del starts[i], allocs[i]
            if keep:
                self.freed.append((vmid, a))
        if gone:
            self.version += 1
        return gone

    def find(self, vmid: int, va: int) -> Allocation | None:
        """The live allocation whose mapped bytes hold `va`."""
        starts = self._starts.get(vmid, [])
        i = bisect.bisect_right(starts, va) - 1
        if i >= 0:
            a = self._allocs[vmid][i]
            if va < a.va + a.size:
                return a
        return None

    def live(self, vmid: int) -> list[Allocation]:
        """The live allocations of `vmid`, by address."""
        return self._allocs.get(vmid, [])

    def arrays(self, vmid: int) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends) as uint64 arrays, ends being where accessible bytes stop (requested sizes)."""
        allocs = self.live(vmid)
        return (np.array([a.va for a in allocs], np.uint64), np.array([a.end for a in allocs], np.uint64))

    def nearest(self, vmid: int, va: int, size: int = 1) -> tuple[Allocation | None, str]:
        """The allocation nearest to [va, va + size) and where the access lies relative to it, in words."""
        best = None
        for a in self.live(vmid):
            if va >= a.end:
                dist, where = va - a.end, "past the end of"
            elif va + size <= a.va:
                dist, where = a.va - (va + size), "before"
            else:  # overlaps: it starts inside and runs past the end
                dist, where = va + size - a.end, "beyond the end of"
            if best is None or dist < best[0]:
                best = (dist, a, where)
        if best is None:
            return None, "no allocation is live in this address space"
        dist, a, where = best
        return a, f"{dist} bytes {where} {a.describe()}"

    def freed_at(self, vmid: int, va: int) -> Allocation | None:
        """The most recently freed allocation of `vmid` that held `va` (use after free), if any."""
        for v, a in reversed(self.freed):
            if v == vmid and a.va <= va < a.va + a.size:
                return a
        return None
