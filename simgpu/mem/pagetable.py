"""PageTableBuilder: writes real gfx11 PDE/PTE words into simulated VRAM (for the mock driver and tests).

Layout follows amdgpu: a 4 KiB root PDB2, then PDB1, PDB0 and PTB tables allocated on demand, every
table one GPU page taken from `allocate_page()` (which returns a VRAM physical address). Fresh tables
are cleared the way amdgpu_vm_pt_clear does it on Vega10+: directory entries to an invalid PDE_PTE,
PTB entries to EXECUTABLE only (both invalid).

A contiguous range is mapped with fragments (amdgpu_vm_pte_fragment): each block gets the largest
power-of-two size its VA, its PA and the remaining length allow; blocks of 2 MiB or more become
huge-page entries (PDE_PTE) at PDB0, of 1 GiB or more at PDB1, exactly like amdgpu_vm_ptes_update
picks the level from the fragment size. (amdgpu picks the fragment from the VA alone; also requiring
PA alignment keeps every huge page naturally aligned.)

Like amdgpu's bo_va mappings, map and unmap whole mappings: changing part of a fragment-mapped range
without unmapping the whole range first leaves neighbours that still claim contiguity. After any
change the driver must invalidate the MMU's TLB.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from simgpu.hw import gmc
from simgpu.mem.physical import PhysicalMemory

_CLEARED_PDE = gmc.PDE_PTE  # amdgpu: "Handle leaf PDEs as PTEs", value 0, VALID clear
_CLEARED_PTE = gmc.PTE_EXECUTABLE  # amdgpu: "Workaround for fault priority problem on GMC9"
_HUGE_LEVELS = (gmc.Level.PDB1, gmc.Level.PDB0)


def _entry_log2(level: gmc.Level) -> int:
    """log2 of the pages one entry of `level` covers."""
    return gmc.level_shift(level) - gmc.PAGE_SHIFT


def _cleared(level: gmc.Level) -> int:
    """The word of an unmapped entry at `level`."""
    return _CLEARED_PTE if level == gmc.Level.PTB else _CLEARED_PDE


def _ctz(x: int) -> int:
    """Trailing zero bits (63 for 0)."""
    return (x & -x).bit_length() - 1 if x else 63


def bump_allocator(start: int, end: int) -> Callable[[], int]:
    """A page allocator handing out consecutive 4 KiB VRAM pages of [start, end) (tests, bench)."""
    state = {"next": start}

    def allocate() -> int:
        pa = state["next"]
        if pa + gmc.PAGE_SIZE > end:
            raise MemoryError("page-table pool exhausted")
        state["next"] = pa + gmc.PAGE_SIZE
        return pa

    return allocate


class PageTableBuilder:
    """Builds and edits one GPUVM page-table tree (one VM) in simulated VRAM."""

    def __init__(self, phys: PhysicalMemory, allocate_page: Callable[[], int],
                 free_page: Callable[[int], None] | None = None):
        self.phys = phys
        self._allocate, self._free = allocate_page, free_page
        self.root = self._new_table(gmc.Level.PDB2)

    @property
    def root_pde(self) -> int:
        """The root as a PDE word, as amdgpu_gmc_pd_addr programs VM_CONTEXTn_PAGE_TABLE_BASE_ADDR."""
        return gmc.encode_pde(self.root)

    # ---- public -----------------------------------------------------------------------------------
    def map(self, va: int, size: int, pa: int, *, system: bool = False, readable: bool = True,
            writeable: bool = True, executable: bool = False, snooped: bool = False, mtype: int = gmc.MType.NC,
            fragments: bool = True) -> None:
        """Map [va, va + size) to the physically contiguous [pa, pa + size) (VRAM, or system if `system`)."""
        vpn, ppn, n = self._pages(va, size, pa)
        flags = dict(system=system, readable=readable, writeable=writeable, executable=executable,
                     snooped=snooped, mtype=mtype)
        while n:
            frag = min(_ctz(vpn), _ctz(ppn), n.bit_length() - 1, 31) if fragments else 0
            level = next((lv for lv in _HUGE_LEVELS if frag >= _entry_log2(lv)), gmc.Level.PTB)
            word = gmc.encode_pte(ppn << gmc.PAGE_SHIFT, fragment=frag, **flags)
            if level != gmc.Level.PTB:
                word |= gmc.PDE_PTE
            count = 1 << frag
            self._write_run(level, vpn, count >> _entry_log2(level), word, (1 << _entry_log2(level)) << 12)
            vpn, ppn, n = vpn + count, ppn + count, n - count

    def map_pages(self, va: int, pages: Iterable[int], **flags) -> None:
        """Map consecutive virtual pages at `va` to the given (possibly scattered) physical pages."""
        run_va, run_pa, run_n = va, None, 0
        for pa in pages:
            if run_pa is not None and pa == run_pa + run_n * gmc.PAGE_SIZE:
                run_n += 1
                continue
            if run_pa is not None:
                self.map(run_va, run_n * gmc.PAGE_SIZE, run_pa, **flags)
                run_va += run_n * gmc.PAGE_SIZE
            run_pa, run_n = pa, 1
        if run_pa is not None:
            self.map(run_va, run_n * gmc.PAGE_SIZE, run_pa, **flags)

    def unmap(self, va: int, size: int) -> None:
        """Clear the entries of [va, va + size) (the tables stay allocated)."""
        vpn, _, n = self._pages(va, size, 0)
        while n:
            log2 = min(_ctz(vpn), n.bit_length() - 1)
            level = next((lv for lv in _HUGE_LEVELS if log2 >= _entry_log2(lv)), gmc.Level.PTB)
            count = 1 << _entry_log2(level)
            self._write_run(level, vpn, 1, _cleared(level), 0, create=False)
            vpn, n = vpn + count, n - count

    def entry(self, va: int) -> tuple[gmc.Level, int]:
        """The deepest existing entry for `va`: (level, word), for debugging and tests."""
        table, vpn = self.root, (va & gmc.VA_MASK) >> gmc.PAGE_SHIFT
        for level in gmc.Level:
            word = self.phys.read_u64(table + self._index(level, vpn) * gmc.ENTRY_SIZE)
            if level == gmc.Level.PTB or word & gmc.PDE_PTE or not word & gmc.PDE_VALID:
                return level, word
            table = word & gmc.PDE_ADDR_MASK
        raise AssertionError("unreachable")

    # ---- internals ------------------------------------------------------------------------------------
    @staticmethod
    def _pages(va: int, size: int, pa: int) -> tuple[int, int, int]:
        """Page numbers of a page-aligned VA/PA range and its length in pages."""
        if (va | size | pa) & (gmc.PAGE_SIZE - 1) or size <= 0:
            raise ValueError(f"va {va:#x}, size {size:#x}, pa {pa:#x} must be 4 KiB aligned, size > 0")
        return (va & gmc.VA_MASK) >> gmc.PAGE_SHIFT, pa >> gmc.PAGE_SHIFT, size >> gmc.PAGE_SHIFT

    @staticmethod
    def _index(level: gmc.Level, vpn: int) -> int:
        return gmc.level_index(vpn << gmc.PAGE_SHIFT, level)

    def _new_table(self, level: gmc.Level, fill: np.ndarray | None = None) -> int:
        """Allocate a table page and clear it (or fill it with `fill` words)."""
        pa = self._allocate()
        if pa % gmc.PAGE_SIZE:
            raise ValueError(f"allocate_page returned unaligned PA {pa:#x}")
        words = np.full(gmc.ENTRIES_PER_TABLE, _cleared(level), dtype="<u8") if fill is None else fill
        self.phys.write(pa, words.tobytes())
        return pa

    def _write_run(self, level: gmc.Level, vpn: int, count: int, word: int, incr: int, create: bool = True) -> None:
        """Write `count` consecutive entries of `level` from `vpn`: word, word + incr, ..."""
        step = 1 << _entry_log2(level)
        while count:
            idx = self._index(level, vpn)
            k = min(count, gmc.ENTRIES_PER_TABLE - idx)
            table = self._table(level, vpn, create)
            if table is not None:
                words = np.uint64(word) + np.arange(k, dtype=np.uint64) * np.uint64(incr)
                self._free_children(level, table, idx, k)
                self.phys.typed_vram("<u8")[(table >> 3) + idx:(table >> 3) + idx + k] = words
            word += k * incr
            vpn += k * step
            count -= k

    def _table(self, level: gmc.Level, vpn: int, create: bool) -> int | None:
        """PA of the `level` table covering `vpn`; creates (or splits huge entries into) tables if `create`."""
        table = self.root
        for parent in gmc.Level:
            if parent == level:
                return table
            entry_pa = table + self._index(parent, vpn) * gmc.ENTRY_SIZE
            word = self.phys.read_u64(entry_pa)
            if word & gmc.PDE_VALID and not word & gmc.PDE_PTE:
                table = word & gmc.PDE_ADDR_MASK
                continue
            child = gmc.Level(parent + 1)
            if not create and not word & gmc.PDE_VALID:
                return None  # already unmapped above this level
            table = self._new_table(child, self._split(word, child) if word & gmc.PDE_VALID else None)
            self.phys.write_u64(entry_pa, gmc.encode_pde(table))
        raise AssertionError("unreachable")

    @staticmethod
    def _split(word: int, child: gmc.Level) -> np.ndarray:
        """Child entries that map the same range as the huge-page entry `word`.

        The children get fragment 0: part of the range is about to change, so it is no longer one
        contiguous block (a conservative choice: only TLB reach is lost).
        """
        incr = (1 << _entry_log2(child)) << gmc.PAGE_SHIFT
        base = word & ~(gmc.PDE_PTE | gmc.PTE_FRAG_MASK)
        words = np.uint64(base) + np.arange(gmc.ENTRIES_PER_TABLE, dtype=np.uint64) * np.uint64(incr)
        return words | np.uint64(gmc.PDE_PTE) if child != gmc.Level.PTB else words

    def _free_children(self, level: gmc.Level, table: int, idx: int, k: int) -> None:
        """Release the sub-tables of directory entries about to be overwritten."""
        if level == gmc.Level.PTB or self._free is None:
            return
        old = self.phys.typed_vram("<u8")[(table >> 3) + idx:(table >> 3) + idx + k]
        for word in old[(old & np.uint64(gmc.PDE_VALID)) != 0].tolist():
            if not word & gmc.PDE_PTE:
                sub = word & gmc.PDE_ADDR_MASK
                self._free_children(gmc.Level(level + 1), sub, 0, gmc.ENTRIES_PER_TABLE)
                self._free(sub)
