"""PageTableBuilder: writes real PDE/PTE words into simulated VRAM (for the mock driver and tests), in the flag
positions of the GPU's generation (gmc.PteFormat: gfx9, gfx11 or gfx12, as amdgpu writes them for that GC).

Layout follows amdgpu: a 4 KiB root PDB2, then PDB1, PDB0 and PTB tables allocated on demand, every
table one GPU page taken from `allocate_page()` (which returns a VRAM physical address). Fresh tables
are cleared the way amdgpu_vm_pt_clear does it on Vega10+: directory entries to an invalid PDE_PTE (the format's
huge-page bit), PTB entries to EXECUTABLE only (both invalid).

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

_CLEARED_PTE = gmc.PTE_EXECUTABLE  # amdgpu: "Workaround for fault priority problem on GMC9"
_HUGE_LEVELS = (gmc.Level.PDB1, gmc.Level.PDB0)


def _entry_log2(level: gmc.Level) -> int:
    """log2 of the pages one entry of `level` covers."""
    return gmc.level_shift(level) - gmc.PAGE_SHIFT


def _cleared(level: gmc.Level, fmt: gmc.PteFormat) -> int:
    """The word of an unmapped entry at `level`: a directory entry is a huge-page PTE with VALID clear (amdgpu:
    "Handle leaf PDEs as PTEs", AMDGPU_PDE_PTE_FLAG)."""
    return _CLEARED_PTE if level == gmc.Level.PTB else fmt.huge


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
                 free_page: Callable[[int], None] | None = None, fmt: gmc.PteFormat = gmc.GFX11_FORMAT):
        self.phys = phys
        self.fmt = fmt  # the flag positions of the GPU's generation
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
            word = self.fmt.pte(ppn << gmc.PAGE_SHIFT, fragment=frag, **flags)
            if level != gmc.Level.PTB:
                word |= self.fmt.huge
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
        huge = 1 << _entry_log2(_HUGE_LEVELS[-1])  # pages of the smallest huge entry
        while n:
            log2 = min(_ctz(vpn), n.bit_length() - 1)
            level = next((lv for lv in _HUGE_LEVELS if log2 >= _entry_log2(lv)), gmc.Level.PTB)
            if level == gmc.Level.PTB:  # every PTE up to the next huge-aligned page (or the end) in one run: a
                count = min(n, huge - vpn % huge)  # walk of the tree per table, not per page
                self._write_run(level, vpn, count, _CLEARED_PTE, 0, create=False)
            else:
                count = 1 << _entry_log2(level)
                self._write_run(level, vpn, 1, _cleared(level, self.fmt), 0, create=False)
            vpn, n = vpn + count, n - count

    def entry(self, va: int) -> tuple[gmc.Level, int]:
        """The deepest existing entry for `va`: (level, word), for debugging and tests."""
        table, vpn = self.root, (va & gmc.VA_MASK) >> gmc.PAGE_SHIFT
        for level in gmc.Level:
            word = self.phys.read_u64(table + self._index(level, vpn) * gmc.ENTRY_SIZE)
            if level == gmc.Level.PTB or word & self.fmt.huge or not word & gmc.PDE_VALID:
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
        words = np.full(gmc.ENTRIES_PER_TABLE, _cleared(level, self.fmt), dtype="<u8") if fill is None else fill
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
            if word & gmc.PDE_VALID and not word & self.fmt.huge:
                table = word & gmc.PDE_ADDR_MASK
                continue
            child = gmc.Level(parent + 1)
            if not create and not word & gmc.PDE_VALID:
                return None  # already unmapped above this level
            table = self._new_table(child, self._split(word, child) if word & gmc.PDE_VALID else None)
            self.phys.write_u64(entry_pa, gmc.encode_pde(table))
        raise AssertionError("unreachable")

    def _split(self, word: int, child: gmc.Level) -> np.ndarray:
        """Child entries that map the same range as the huge-page entry `word`.

        The children get fragment 0: part of the range is about to change, so it is no longer one
        contiguous block (a conservative choice: only TLB reach is lost).
        """
        incr = (1 << _entry_log2(child)) << gmc.PAGE_SHIFT
        base = word & ~(self.fmt.huge | gmc.PTE_FRAG_MASK)
        words = np.uint64(base) + np.arange(gmc.ENTRIES_PER_TABLE, dtype=np.uint64) * np.uint64(incr)
        return words | np.uint64(self.fmt.huge) if child != gmc.Level.PTB else words

    def _free_children(self, level: gmc.Level, table: int, idx: int, k: int) -> None:
        """Release the sub-tables of directory entries about to be overwritten."""
        if level == gmc.Level.PTB or self._free is None:
            return
        old = self.phys.typed_vram("<u8")[(table >> 3) + idx:(table >> 3) + idx + k]
        for word in old[(old & np.uint64(gmc.PDE_VALID)) != 0].tolist():
            if not word & self.fmt.huge:
                sub = word & gmc.PDE_ADDR_MASK
                self._free_children(gmc.Level(level + 1), sub, 0, gmc.ENTRIES_PER_TABLE)
                self._free(sub)
