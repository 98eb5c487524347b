"""Linear windows: VA ranges that translate at one VA-to-PA offset into one physical buffer, so that a
coalesced access copies a slice (simgpu.shader.memory.vmem) and native code reads and writes host memory
directly (the JIT tier's windows, simgpu.shader.jit).

A range qualifies when every page translates (through the UTCL2) at one offset into one aperture, grants
the access and is no PRT hole. Verified page runs are remembered per VMID (the last _LINEAR_RUNS, until the
next invalidate) and grown as accesses slide along them, so a loop stepping through a large buffer checks
each page once, not once per access. Nothing here reports a fault: a range that does not qualify is
None, and the caller takes the per-lane path, which does.

`TierMemory` is the interface between the memory system and an execution tier: all a tier may read of
the MMU, and what it may change. A tier keeps its windows in a `TierWindows` table, which keeps that rule.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from simgpu.hw import gmc
from simgpu.mem.physical import PhysicalMemory
from simgpu.mem.utcl2 import UTCL2
from simgpu.mem.walker import NEED, PRT, SYS, check_vmid

_LINEAR_RUNS = 8  # verified linear page runs kept per VMID
# Windows in a tier's table. A training step's ~25 buffers (the allocator hands the same ones back each step, in
# other roles) fit below half of it, so a step's windows outlive the step instead of being made again each time.
MAX_WINDOWS = 128
WINDOW_FIELDS = 4  # a tier's table: [va_lo, va_hi, host address of va_lo, access bits] per row
WIN_READ, WIN_WRITE = 1, 2


class TierMemory(Protocol):
    """What an execution tier (the JIT) may use of the memory system.

    It reads: `linear_window` (a window's first VA and its bytes as a writable uint8 view), `generation` and
    `invalidated_since` (which windows a translation change has retired), and `phys.system_version` (a new
    system buffer retires them all). It changes only the bytes of the views it was given, with the access it
    asked for, and only until invalidated_since names their range; everything else (the per-lane accesses,
    faults) goes through the interpreter's routines, which use the MMU's gather/scatter/atomic.
    """

    phys: PhysicalMemory
    generation: int

    def linear_window(self, vmid: int, va: int, nbytes: int, access: str,
                      limit: int = 1 << 30) -> tuple[int, np.ndarray] | None: ...

    def invalidated_since(self, generation: int) -> list[tuple[int | None, tuple[int, int] | None]] | None: ...


class TierWindows:
    """An execution tier's table of windows, which its native code searches: [lo, hi, host, flags] per window
    (WINDOW_FIELDS; flags WIN_READ, WIN_WRITE) and the views that keep their memory. It keeps TierMemory's rule:
    a window lives until a translation change touches it or a system buffer is added."""

    def __init__(self):
        self._key = None
        self._generation = -1
        self.table = np.zeros((MAX_WINDOWS, WINDOW_FIELDS), np.int64)
        self.views: list = []
        self._aliased = False  # whether two rows reach the same memory through different VAs (kept as rows change)

    def for_dispatch(self, mem, vmid: int) -> None:
        """Keep the windows still valid for a dispatch on `mem` and `vmid`: those no translation change
        (MMU.invalidated_since) touched, while the system buffers are the same. A table half full starts
        empty again: launches keep bringing new buffers (each its kernarg segment), and a full table would
        send every access to one of them down the memory helper's slow path for good."""
        phys = getattr(mem, "phys", None)
        # The system buffers are the same while PhysicalMemory.system_version is: no list of them per dispatch.
        version = getattr(phys, "system_version", None)
        if version is None and phys is not None:
            version = tuple((pa, id(buf)) for pa, buf in phys.system_buffers())
        key = (id(mem), vmid, id(phys), version)
        generation = getattr(mem, "generation", None)
        changes = mem.invalidated_since(self._generation) if key == self._key and \
            hasattr(mem, "invalidated_since") else None
        self._key, self._generation = key, generation
        if changes is None or any(r is None and v in (None, vmid) for v, r in changes) \
                or len(self.views) >= MAX_WINDOWS // 2:
            self.views, self.table[:], self._aliased = [], 0, False
            return
        ranges = [r for v, r in changes if v in (None, vmid)]
        keep = [i for i, (a, b, _h, _f) in enumerate(self.table[:len(self.views)].tolist())
                if not any(a < hi and lo < b for lo, hi in ranges)]
        if len(keep) < len(self.views):
            rows = self.table[keep].copy()
            self.views = [self.views[i] for i in keep]
            self.table[:] = 0
            self.table[:len(keep)] = rows
            rows = self.table[:len(keep)].tolist()
            self._aliased = any(_alias(r, rows[:i]) for i, r in enumerate(rows))

    def add(self, mem, vmid: int, lo_va: int, hi_va: int, access: str = "read") -> bool:
        """Add a window around [lo_va, hi_va) that allows `access` ("read" or "write") if the MMU can make one
        (else lanes take the interpreter's path, which also reports any fault); whether one holds it now."""
        flag = WIN_WRITE if access == "write" else WIN_READ
        if not hasattr(mem, "linear_window") or hi_va <= lo_va:
            return False
        if self.covered(lo_va, hi_va, flag):
            return True
        got = mem.linear_window(vmid, lo_va, hi_va - lo_va, access)
        if got is None:
            return False
        va, view = got
        i = self._row_of(va, va + view.size, view.ctypes.data)
        if i is not None:  # the same window, now asked for another access too: one row allows both
            self.table[i, 3] |= flag
            return True
        if len(self.views) >= MAX_WINDOWS:  # full until the next dispatch (native code may hold rows)
            return False
        i = len(self.views)
        row = (va, va + view.size, view.ctypes.data, flag)
        self._aliased = self._aliased or _alias(row, self.table[:i].tolist())
        self.views.append((vmid, view))
        self.table[i] = row
        return True

    def _row_of(self, lo_va: int, hi_va: int, host: int) -> int | None:
        """The row of the window [lo_va, hi_va) at host address `host`, if the table has it."""
        for i, (a, b, h, _flags) in enumerate(self.table[:len(self.views)].tolist()):
            if (a, b, h) == (lo_va, hi_va, host):
                return i
        return None

    def covered(self, lo_va: int, hi_va: int, flag: int = 0) -> bool:
        """Whether one window (allowing `flag`) holds [lo_va, hi_va)."""
        for a, b, _host, flags in self.table[:len(self.views)].tolist():
            if a <= lo_va and hi_va <= b and flags & flag == flag:
                return True
        return False

    def aliased(self) -> bool:
        """Whether two windows reach the same memory through different VAs (a fused batch's order check
        compares VAs: it holds only when equal memory means equal VA). Kept as rows come and go: a new row is
        compared with the others once (the memory helper asks after every window it adds, and comparing every
        pair each time the table changed grew with the square of the windows a long-lived engine's launches
        leave: about a third of a small JIT launch's CPU at 60 windows)."""
        return self._aliased


def _alias(row, rows) -> bool:
    """Whether window `row` ([lo, hi, host, flags]) and one of `rows` share memory at different VAs."""
    a, b, host = row[0], row[1], row[2]
    end, delta = host + (b - a), host - a
    return any(h < end and host < h + (b2 - a2) and h - a2 != delta for a2, b2, h, _f in rows)


class LinearWindows:
    """Verified linear page runs of 16 VMIDs, and the spans and windows made from them."""

    def __init__(self, phys: PhysicalMemory, tlb: UTCL2):
        self.phys, self.tlb = phys, tlb
        # (first page, last page, translation word of the first page) per VMID
        self._runs: list[list[tuple[int, int, int]]] = [[] for _ in range(gmc.NUM_VMIDS)]

    def forget(self, vmid: int | None = None) -> None:
        """Drop the runs of one VMID (or all): their translations may have changed."""
        for v in range(gmc.NUM_VMIDS) if vmid is None else (vmid,):
            self._runs[v].clear()

    def linear_offset(self, vmid: int, lo: int, hi: int, access: str) -> tuple[int, bool] | None:
        """(PA - VA, SYSTEM bit) when [lo, hi) qualifies (see the module docstring); None otherwise. Low-half
        canonical addresses only."""
        if lo < 0 or hi <= lo or hi > (1 << (gmc.VA_BITS - 1)):
            return None
        first, last = lo >> gmc.PAGE_SHIFT, (hi - 1) >> gmc.PAGE_SHIFT
        runs = self._runs[vmid]
        for i, (a, b, word_a) in enumerate(runs):
            if a <= last + 1 and first <= b + 1:  # the request overlaps or touches this run: try to grow it
                grown = self._grow_run(vmid, a, b, word_a, first, last)
                if grown is not None:
                    runs[i] = grown
                    return _grant(grown[2] + ((first - grown[0]) << 8), first, access)
        word = self.tlb.pages[vmid].get(first)
        if word is None:
            word = self.tlb.fill(vmid, first)
        if word < 0 or not self._pages_follow(vmid, first + 1, last, word + (1 << 8)):
            return None
        if len(runs) >= _LINEAR_RUNS:
            runs.pop(0)
        runs.append((first, last, word))
        return _grant(word, first, access)

    def _grow_run(self, vmid: int, a: int, b: int, word_a: int, first: int, last: int):
        """Run (a, b, word of a) extended to cover [first, last], if the pages outside it continue it."""
        if first < a and not self._pages_follow(vmid, first, a - 1, word_a - ((a - first) << 8)):
            return None
        if last > b and not self._pages_follow(vmid, b + 1, last, word_a + ((b + 1 - a) << 8)):
            return None
        start = min(a, first)
        return start, max(b, last), word_a - ((a - start) << 8)

    def _pages_follow(self, vmid: int, first: int, last: int, word: int) -> bool:
        """Pages first..last translate to the words word, word + 1 page, ... (same bits, consecutive PAs)."""
        if last < first:
            return True
        if word < 0:
            return False
        vals = list(map(self.tlb.pages[vmid].get, range(first, last + 1)))
        if None in vals:
            for i in [i for i, v in enumerate(vals) if v is None]:
                vals[i] = self.tlb.fill(vmid, first + i)
                if vals[i] < 0:  # faults are not cached: stop at the first rather than walk every hole
                    return False
        return vals == list(range(word, word + (len(vals) << 8), 1 << 8))

    def linear_span(self, vmid: int, va: int, nbytes: int, access: str) -> np.ndarray | None:
        """The memory behind [va, va + nbytes) as one writable uint8 view, when the range qualifies: a
        coalesced access then copies a slice instead of translating lanes. None otherwise."""
        check_vmid(vmid)
        linear = self.linear_offset(vmid, va, va + nbytes, access)
        if linear is None:
            return None
        return self.phys.span(va + linear[0], nbytes, linear[1])

    def linear_window(self, vmid: int, va: int, nbytes: int, access: str,
                      limit: int = 1 << 30) -> tuple[int, np.ndarray] | None:
        """A linearly translating range around [va, va + nbytes), grown page by page on both sides as far as
        the pages keep following (up to `limit` bytes, within one physical buffer): (its first VA, its
        memory as a uint8 view). The JIT tier checks a load's lanes against such windows instead of
        translating them. The range is remembered as a verified run, so it is checked once until the next
        invalidate. None when [va, va + nbytes) itself does not translate linearly."""
        if self.linear_span(vmid, va, nbytes, access) is None:
            return None
        first, last = va >> gmc.PAGE_SHIFT, (va + nbytes - 1) >> gmc.PAGE_SHIFT
        word = self.tlb.pages[vmid][first]
        room = max(0, (limit >> gmc.PAGE_SHIFT) - (last - first + 1))
        up = self._follow(vmid, last + 1, word + ((last + 1 - first) << 8), 1, room)
        down = self._follow(vmid, first - 1, word - (1 << 8), -1, min(room - up, first))
        lo, hi = (first - down) << gmc.PAGE_SHIFT, (last + 1 + up) << gmc.PAGE_SHIFT
        span = self.linear_span(vmid, lo, hi - lo, access)  # None if the range runs into another buffer
        return (lo, span) if span is not None else (va, self.linear_span(vmid, va, nbytes, access))

    def _follow(self, vmid: int, page: int, word: int, step: int, most: int) -> int:
        """How many pages from `page` on (by `step`, at most `most`) translate to word, word + step page, ..."""
        n, chunk = 0, 16
        tlb = self.tlb.pages[vmid]
        while n < most:
            k = min(chunk, most - n)
            pages = range(page + step * n, page + step * (n + k), step)
            vals = [tlb.get(p) for p in pages]
            for i, v in enumerate(vals):
                if v is None:
                    v = -1 if pages[i] < 0 else self.tlb.fill(vmid, pages[i])
                if v != word + ((step * (n + i)) << 8):
                    return n + i
            n += k
            chunk = min(chunk * 2, 4096)
        return n


def _grant(word: int, first: int, access: str) -> tuple[int, bool] | None:
    """(PA - VA, SYSTEM bit) of a linear run whose page `first` has translation `word`, if it grants
    `access` and is no PRT hole."""
    need = NEED[access]
    if word & PRT or word & need != need:
        return None
    return ((word >> 8) - first) << gmc.PAGE_SHIFT, bool(word & SYS)
