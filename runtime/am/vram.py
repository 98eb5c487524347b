"""The AM backend's own memory management: VRAM allocators, the driver's window onto its own VRAM (through BAR0),
and the GPU page tables (real gfx11 PDE/PTE words, simgpu.hw.gmc) it writes there, as amdgpu's VM code would."""

from __future__ import annotations

import numpy as np

from simgpu.hw import gmc

PAGE = gmc.PAGE_SIZE


class VRAMAllocator:
    """First-fit ranges of VRAM [start, end) (the driver's, not the firmware's or the discovery table's)."""

    def __init__(self, start: int, end: int):
        self.free = [(start, end)]
        self.used = 0

    def alloc(self, size: int, align: int = PAGE) -> int:
        """A physical address of `size` bytes aligned to `align`; MemoryError when nothing fits."""
        size = -(-size // PAGE) * PAGE
        for i, (lo, hi) in enumerate(self.free):
            at = -(-lo // align) * align
            if at + size <= hi:
                self.free[i:i + 1] = [r for r in ((lo, at), (at + size, hi)) if r[0] < r[1]]
                self.used += size
                return at
        raise MemoryError(f"VRAM: no free range of {size} bytes (aligned {align:#x}); {self.used} bytes in use")

    def release(self, pa: int, size: int) -> None:
        """Give a range back (merged with its neighbours)."""
        size = -(-size // PAGE) * PAGE
        self.used -= size
        self.free.append((pa, pa + size))
        self.free.sort()
        merged = [self.free[0]]
        for lo, hi in self.free[1:]:
            if lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
            else:
                merged.append((lo, hi))
        self.free = merged


class Window:
    """A CPU mapping of VRAM [base, base + size) through BAR0: what the driver reads and writes of its own structures
    (rings, MQDs, page tables, firmware staging). Only this much is mapped, not all of VRAM: a recording of the
    seam tracks every mapping's bytes."""

    def __init__(self, pci, base: int, size: int):
        self.base, self.size = base, size
        self.mapping = pci.map_vram(base, size)
        self.bytes = np.frombuffer(self.mapping.view, np.uint8)
        self.words = self.bytes.view(np.uint64)
        self.allocator = VRAMAllocator(base, base + size)

    def at(self, pa: int, n: int) -> memoryview:
        """The bytes of VRAM [pa, pa + n) (inside the window)."""
        if not self.base <= pa <= pa + n <= self.base + self.size:
            raise ValueError(f"VRAM [{pa:#x}, +{n:#x}) is outside the driver's window")
        return self.mapping.view[pa - self.base:pa - self.base + n]


class PageTables:
    """One GPUVM address space: a PDB2 root and the tables below it, in the driver's VRAM window."""

    def __init__(self, window: Window):
        self.window, self.allocator = window, window.allocator
        self.root = self._table()

    def _slot(self, table: int, index: int) -> int:
        """The window word holding entry `index` of the table at VRAM address `table`."""
        return (table - self.window.base) // 8 + index

    def _table(self) -> int:
        pa = self.allocator.alloc(gmc.TABLE_SIZE)
        first = self._slot(pa, 0)
        self.window.words[first:first + gmc.ENTRIES_PER_TABLE] = 0
        return pa

    @property
    def root_pde(self) -> int:
        """The root as VM_CONTEXTn_PAGE_TABLE_BASE_ADDR takes it."""
        return gmc.encode_pde(self.root)

    def _ptb(self, va: int) -> int:
        """The PTB covering `va`, created on the way down."""
        words, table = self.window.words, self.root
        for level in (gmc.Level.PDB2, gmc.Level.PDB1, gmc.Level.PDB0):
            slot = self._slot(table, gmc.level_index(va, level))
            if not int(words[slot]) & gmc.PDE_VALID:
                words[slot] = gmc.encode_pde(self._table())
            table = int(words[slot]) & gmc.PDE_ADDR_MASK
        return table

    def map(self, va: int, pa: int, size: int, executable: bool = True) -> None:
        """Map [va, va + size) to VRAM [pa, pa + size) with 4 KiB PTEs, written one PTB's run at a time."""
        flags = gmc.encode_pte(0, executable=executable)
        span = PAGE << gmc.BLOCK_BITS  # what one PTB maps
        off = 0
        while off < size:
            n = min((size - off) // PAGE, (span - (va + off) % span) // PAGE)
            first = self._slot(self._ptb(va + off), gmc.level_index(va + off, gmc.Level.PTB))
            self.window.words[first:first + n] = (pa + off + np.arange(n, dtype=np.uint64) * PAGE) | np.uint64(flags)
            off += n * PAGE

    def unmap(self, va: int, size: int) -> None:
        """Clear the PTEs of [va, va + size)."""
        span, off = PAGE << gmc.BLOCK_BITS, 0
        while off < size:
            n = min((size - off) // PAGE, (span - (va + off) % span) // PAGE)
            first = self._slot(self._ptb(va + off), gmc.level_index(va + off, gmc.Level.PTB))
            self.window.words[first:first + n] = 0
            off += n * PAGE
