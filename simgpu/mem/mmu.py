"""The GPUVM MMU: per-VMID page-table walks over simulated memory, a TLB, and vectorized lane access.

Translation. Each of the 16 VMIDs has a root (PDB2) physical address, as the driver programs it in
VM_CONTEXTn_PAGE_TABLE_BASE_ADDR. A walk reads real gfx11 PDE/PTE words (simgpu.hw.gmc) from
simulated memory: PDB2 -> PDB1 -> PDB0 -> PTB, stopping early at a PDE_PTE (huge page) entry. The
leaf's fragment field widens the translation to 2^(12 + fragment) bytes: PA(va) = entry PA +
(va - entry VA) for every page of the fragment (amdgpu guarantees the block is physically contiguous;
the MMU trusts it like the hardware L1 does). VAs are 48-bit; the upper half is addressed by
sign-extended canonical addresses (0xFFFF8000_00000000 and up); anything else faults.

TLB. Translations are cached per VMID, per page and per fragment/huge-page leaf. Like the hardware,
the MMU never notices page-table writes: after changing tables (or the root), the driver must call
`invalidate(vmid, va_range)`, otherwise stale translations persist for the pages and fragments
already cached (until evicted: the page cache is emptied when it reaches TLB_CAPACITY entries).
Faults are never cached.

Permissions. read needs READABLE, write WRITEABLE, execute EXECUTABLE, atomic READABLE and WRITEABLE.
The SYSTEM bit selects the system aperture instead of VRAM. A PTE with PRT set and VALID clear (a
partially resident texture hole, as amdgpu writes it) does not fault: reads return zeros and writes
and atomics are dropped.

Lane access (gather/scatter/atomic) is numpy over all lanes: addresses may have any shape (e.g.
[waves, lanes]); lane order is their flat C order. Each unique page is translated once per call;
every lane is checked before anything is written, so a faulting call changes no memory. The first
faulting lane (lowest index) is reported. Accesses may be unaligned and may cross a page (both pages
are translated); atomics must be naturally aligned. When several lanes store to the same byte, the
highest lane wins; atomics apply in increasing lane order (see simgpu.mem.atomics).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from typing import NamedTuple

import numpy as np

from simgpu.fault import HardwareFault
from simgpu.hw import gmc
from simgpu.mem import atomics
from simgpu.mem.lanes import last_wins, unique_inverse
from simgpu.mem.physical import PhysicalAddressError, PhysicalMemory

# Cached per-page translation: (physical page number << 8) | these bits; -1 means "faults".
_R, _W, _X, _SYS, _PRT = 1, 2, 4, 8, 16
_NEED = {"read": _R, "write": _W, "execute": _X, "atomic": _R | _W}
_BAD_VPN = 1 << (gmc.VA_BITS - gmc.PAGE_SHIFT)  # stands for any page outside the 48-bit VA space
_OUTSIDE = "address outside the canonical 48-bit GPU VA space"
_LANE_DTYPES = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8", 16: "<u4"}
_U64 = np.uint64
# Per-page TLB entries kept per VMID before the page cache is emptied (fragment/huge-page leaves stay):
# bounds host memory like a finite hardware TLB, deterministically.
TLB_CAPACITY = 1 << 20
_LINEAR_RUNS = 8  # verified linear page runs kept per VMID
_CHANGES_KEPT = 64  # translation changes remembered for invalidated_since


class Translation(NamedTuple):
    """Where one virtual address lands."""

    pa: int
    system: bool  # system aperture (else VRAM)
    prt: bool  # PRT hole: reads zero, writes dropped


class Leaf(NamedTuple):
    """A walked leaf entry widened to its fragment: 2^log2 pages from va_page map to pa_page on."""

    log2: int
    va_page: int
    pa_page: int
    bits: int


@dataclass
class _Resolved:
    """Translation of the active lanes of one call: per unique page, and each lane's pages."""

    vals: np.ndarray  # per page: cached translation word
    region: np.ndarray  # per page: region number in PhysicalMemory.region_buffers()
    base: np.ndarray  # per page: byte offset of the page in its region buffer
    prt: np.ndarray | None  # per page: PRT hole (None if there is none)
    first: np.ndarray  # per lane: page index of its first byte
    second: np.ndarray  # per lane: page index of its last byte
    inpage: np.ndarray  # per lane: offset of its first byte in the page
    crossing: bool  # some lane spans two pages
    one_region: bool  # every touched page is VRAM


def _as_addrs(addrs) -> np.ndarray:
    """Lane addresses as a 1-D uint64 array (negative int64 values wrap like a 64-bit register)."""
    a = np.asarray(addrs)
    if a.dtype != _U64:
        a = a.astype(np.int64, copy=False).view(_U64) if a.dtype.kind == "i" else a.astype(_U64)
    return a.reshape(-1)


def _as_values(values, size: int, lane_shape: tuple[int, ...]) -> np.ndarray:
    """Lane values as unsigned little-endian words, flat: shape (n,), or (n, 4) dwords for 16 bytes."""
    target = np.dtype(_LANE_DTYPES[size])
    v = np.asarray(values)
    if v.dtype.itemsize == target.itemsize and v.dtype.kind in "uif":
        v = v.view(target)  # reinterpret floats and signed ints bit for bit
    else:
        v = v.astype(target)
    shape = lane_shape + ((4,) if size == 16 else ())
    if v.shape != shape:
        try:  # a scalar (or one row) for every lane
            v = np.broadcast_to(v, shape)
        except ValueError:
            raise ValueError(f"values have shape {v.shape}, expected {shape} for {size}-byte lanes") from None
    return v.reshape((-1, 4) if size == 16 else -1)


def _active(mask, n: int) -> np.ndarray | None:
    """Indices of the active lanes in flat lane order, or None for all."""
    if mask is None:
        return None
    m = np.asarray(mask).reshape(-1)
    if m.size != n:
        raise ValueError(f"mask has {m.size} lanes, addresses have {n}")
    if m.all():
        return None
    return np.flatnonzero(m)


class MMU:
    """GPUVM address translation for 16 VMIDs over one PhysicalMemory."""

    def __init__(self, phys: PhysicalMemory):
        self.phys = phys
        self._roots: list[tuple[int, bool] | None] = [None] * gmc.NUM_VMIDS
        # Per VMID, the page range its VM context covers (VM_CONTEXTn_PAGE_TABLE_START/END_ADDR): pages outside it
        # fault. None (what a driver that sets only roots gets) covers everything.
        self._ranges: list[tuple[int, int] | None] = [None] * gmc.NUM_VMIDS
        # VMID 0's system aperture (MC_VM_SYSTEM_APERTURE_LOW/HIGH_ADDR): addresses in [low, high] reach VRAM
        # physically at address - fb_base + fb_offset (the MC's frame-buffer aperture).
        self.system_aperture: tuple[int, int, int] | None = None  # (low, high, PA - address), bytes
        self._tlb: list[dict[int, int]] = [{} for _ in range(gmc.NUM_VMIDS)]
        self._leaves: list[dict[tuple[int, int], Leaf]] = [{} for _ in range(gmc.NUM_VMIDS)]
        self._leaf_log2s: list[set[int]] = [set() for _ in range(gmc.NUM_VMIDS)]
        # (first page, last page, translation word of the first page) of verified linear runs; see _linear_offset
        self._linear_runs: list[list[tuple[int, int, int]]] = [[] for _ in range(gmc.NUM_VMIDS)]
        self.walks = 0  # page-table walks so far (TLB misses that were not covered by a cached leaf)
        self.generation = 0  # bumped by every root change, invalidate and TLB flush (see invalidated_since)
        self._changes: list[tuple[int, int | None, tuple[int, int] | None]] = []  # (generation, vmid, range)

    # ---- configuration --------------------------------------------------------------------------------
    def set_root(self, vmid: int, pa: int | None) -> None:
        """Set the VMID's root page directory (PDB2) physical address; PDE flag bits (SYSTEM) are honoured."""
        _check_vmid(vmid)
        self._roots[vmid] = None if pa is None else (pa & gmc.PDE_ADDR_MASK, bool(pa & gmc.PDE_SYSTEM))
        self._changed(vmid, None)

    def set_context(self, vmid: int, root: int | None, first_page: int | None = None,
                    last_page: int | None = None) -> None:
        """Program a VM context: its root (as set_root) and the page numbers [first_page, last_page] it translates
        (None: all); drops the VMID's cached translations."""
        self.set_root(vmid, root)
        self._ranges[vmid] = None if first_page is None else (first_page, last_page)
        self.invalidate(vmid)

    def set_system_aperture(self, low: int | None, high: int = 0, fb_base: int = 0, fb_offset: int = 0) -> None:
        """VMID 0's system aperture: [low, high] (bytes) maps to VRAM at address - fb_base + fb_offset; None: off."""
        self.system_aperture = None if low is None or high < low else (low, high, fb_offset - fb_base)
        self.invalidate(0)

    def invalidate(self, vmid: int | None = None, va_range: tuple[int, int] | None = None) -> None:
        """Drop cached translations of one VMID (or all) for [start, end) (or everything)."""
        self._changed(vmid, va_range)
        for v in range(gmc.NUM_VMIDS) if vmid is None else (_check_vmid(vmid),):
            self._linear_runs[v].clear()
            if va_range is None:
                self._tlb[v].clear()
                self._leaves[v].clear()
                self._leaf_log2s[v].clear()
                continue
            lo = (va_range[0] & gmc.VA_MASK) >> gmc.PAGE_SHIFT
            hi = ((va_range[1] - 1) & gmc.VA_MASK) >> gmc.PAGE_SHIFT
            tlb = self._tlb[v]
            if hi - lo < len(tlb):
                for p in range(lo, hi + 1):
                    tlb.pop(p, None)
            else:
                for p in [p for p in tlb if lo <= p <= hi]:
                    del tlb[p]
            leaves = self._leaves[v]
            for key in [k for k, lf in leaves.items() if lf.va_page <= hi and lf.va_page + (1 << lf.log2) > lo]:
                del leaves[key]

    def _changed(self, vmid: int | None, va_range: tuple[int, int] | None) -> None:
        self.generation += 1
        self._changes.append((self.generation, vmid, va_range))
        del self._changes[:-_CHANGES_KEPT]

    def invalidated_since(self, generation: int) -> list[tuple[int | None, tuple[int, int] | None]] | None:
        """The (VMID or None for all, VA range or None for all) whose translations changed after
        `generation`, oldest first; None when that is further back than the MMU remembers. Views of
        translations (the JIT tier's memory windows) outside these ranges are still valid."""
        if generation == self.generation:
            return []
        if not self._changes or self._changes[0][0] > generation + 1:
            return None
        return [(v, r) for g, v, r in self._changes if g > generation]

    # ---- walking --------------------------------------------------------------------------------------
    def walk(self, vmid: int, va: int) -> Leaf | str:
        """Walk the page tables for `va` (no TLB): the leaf, or why the address faults."""
        _check_vmid(vmid)
        return self._walk(vmid, (va & gmc.VA_MASK) >> gmc.PAGE_SHIFT if _canonical(va) else _BAD_VPN)

    def _walk(self, vmid: int, vpn: int) -> Leaf | str:
        root = self._roots[vmid]
        if vpn >= _BAD_VPN:
            return _OUTSIDE
        if vmid == 0 and self.system_aperture is not None:
            low, high, delta = self.system_aperture
            if low >> gmc.PAGE_SHIFT <= vpn <= high >> gmc.PAGE_SHIFT:
                return self._aperture_leaf(vpn, delta)
        rng = self._ranges[vmid]
        if rng is not None and not rng[0] <= vpn <= rng[1]:
            return (f"address outside VM context {vmid}'s range [{rng[0] << gmc.PAGE_SHIFT:#x}, "
                    f"{(rng[1] + 1) << gmc.PAGE_SHIFT:#x}) (VM_CONTEXT{vmid}_PAGE_TABLE_START/END_ADDR)")
        if root is None:
            return f"VMID {vmid} has no page table"
        self.walks += 1
        table, table_sys = root
        # The walker indexes the tables by the page's offset from the context's START_ADDR (amdgpu starts its VMs
        # at 0; tinygrad's AM driver starts VMID 0 at 0x2000_0000_0000).
        first = rng[0] if rng is not None else 0
        va = (vpn - first) << gmc.PAGE_SHIFT
        for level in gmc.Level:
            entry_pa = table + gmc.level_index(va, level) * gmc.ENTRY_SIZE
            try:
                word = self.phys.read_u64(entry_pa, table_sys)
            except PhysicalAddressError:
                return f"{level.name} table entry at unbacked {'system' if table_sys else 'VRAM'} PA {entry_pa:#x}"
            if level == gmc.Level.PTB or word & gmc.PDE_PTE:
                leaf = _leaf(word, vpn - first, level)
                if not first or isinstance(leaf, str):
                    return leaf
                if first % (1 << leaf.log2):  # a run not aligned in VA once rebased: keep only this page
                    leaf = Leaf(0, vpn - first, leaf.pa_page + (vpn - first - leaf.va_page), leaf.bits)
                return leaf._replace(va_page=leaf.va_page + first)
            if not word & gmc.PDE_VALID:
                return f"PDE not valid at {level.name}"
            table, table_sys = word & gmc.PDE_ADDR_MASK, bool(word & gmc.PDE_SYSTEM)
        raise AssertionError("unreachable: the PTB level always ends the walk")

    def _aperture_leaf(self, vpn: int, delta: int) -> Leaf | str:
        """A physical VRAM translation through the system aperture, one page at a time (its bounds need not be
        aligned to anything larger)."""
        pa = (vpn << gmc.PAGE_SHIFT) + delta
        if not 0 <= pa < self.phys.vram_size:
            return f"system aperture address maps to PA {pa:#x}, outside VRAM"
        return Leaf(0, vpn, pa >> gmc.PAGE_SHIFT, _R | _W | _X)

    def _fill(self, vmid: int, vpn: int) -> int:
        """Translate one page on a TLB miss (cached leaf, else a walk); -1 if it faults."""
        leaf = None
        for log2 in self._leaf_log2s[vmid]:
            leaf = self._leaves[vmid].get((log2, vpn >> log2))
            if leaf is not None:
                break
        if leaf is None:
            leaf = self._walk(vmid, vpn)
            if isinstance(leaf, str):
                return -1
            if leaf.log2:
                self._leaves[vmid][(leaf.log2, vpn >> leaf.log2)] = leaf
                self._leaf_log2s[vmid].add(leaf.log2)
        value = ((leaf.pa_page + vpn - leaf.va_page) << 8) | leaf.bits
        tlb = self._tlb[vmid]
        if len(tlb) >= TLB_CAPACITY:
            tlb.clear()
            self._changed(vmid, None)
        tlb[vpn] = value
        return value

    def _page_values(self, vmid: int, pages: np.ndarray) -> np.ndarray:
        """Translation words of unique pages: TLB lookups, walks only for misses."""
        keys = pages.tolist()
        vals = np.fromiter(map(self._tlb[vmid].get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
        for i in np.flatnonzero(vals < 0).tolist():
            vals[i] = self._fill(vmid, keys[i])
        return vals

    def _linear_offset(self, vmid: int, lo: int, hi: int, access: str) -> tuple[int, bool] | None:
        """(PA - VA, SYSTEM bit) when every page of [lo, hi) translates (through the TLB) at one VA->PA
        offset into one aperture, grants `access` and is no PRT hole; None otherwise, and then the general
        path translates lane by lane (and reports faults). Low-half canonical addresses only.

        Verified page runs are remembered (until the next invalidate) and grown as accesses slide along
        them, so a loop stepping through a large buffer checks each page once, not once per access."""
        if lo < 0 or hi <= lo or hi > (1 << (gmc.VA_BITS - 1)):
            return None
        first, last = lo >> gmc.PAGE_SHIFT, (hi - 1) >> gmc.PAGE_SHIFT
        runs = self._linear_runs[vmid]
        for i, (a, b, word_a) in enumerate(runs):
            if a <= last + 1 and first <= b + 1:  # the request overlaps or touches this run: try to grow it
                grown = self._grow_run(vmid, a, b, word_a, first, last)
                if grown is not None:
                    runs[i] = grown
                    return _grant(grown[2] + ((first - grown[0]) << 8), first, access)
        word = self._tlb[vmid].get(first)
        if word is None:
            word = self._fill(vmid, first)
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
        tlb = self._tlb[vmid]
        vals = list(map(tlb.get, range(first, last + 1)))
        if None in vals:
            for i in [i for i, v in enumerate(vals) if v is None]:
                vals[i] = self._fill(vmid, first + i)
                if vals[i] < 0:  # faults are not cached: stop at the first rather than walk every hole
                    return False
        return vals == list(range(word, word + (len(vals) << 8), 1 << 8))

    def _linear_units(self, vmid: int, a: np.ndarray, size: int, access: str) -> np.ndarray | None:
        """Fast path for the common access: aligned lanes within a few MiB that translate linearly (every
        page touched maps to VRAM at the same VA->PA offset and grants `access`): the element index of
        each lane in VRAM viewed as `size`-byte units (`[lanes, 4]` dwords for 16 bytes); None to take the
        general path (which also reports faults)."""
        unit = min(size, 8) if size != 16 else 4
        lo, hi = int(a.min()), int(a.max()) + size
        if hi - lo > (4 << 20) or (a & _U64(unit - 1)).any():
            return None
        linear = self._linear_offset(vmid, lo, hi, access)
        if linear is None or linear[1]:
            return None
        base = linear[0]  # PA - VA for every lane
        if base + lo < 0 or base + hi > self.phys.vram_size:
            return None
        idx = (a.astype(np.int64) + base) >> (unit.bit_length() - 1)
        return idx[:, None] + np.arange(4) if size == 16 else idx

    def linear_span(self, vmid: int, va: int, nbytes: int, access: str) -> np.ndarray | None:
        """The memory behind [va, va + nbytes) as one writable uint8 view, when the range translates
        linearly (see _linear_offset) into one physical buffer: a coalesced access then copies a slice
        instead of translating lanes. None otherwise; nothing is reported, so the caller takes the
        general path, which raises the fault if there is one."""
        _check_vmid(vmid)
        linear = self._linear_offset(vmid, va, va + nbytes, access)
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
        word = self._tlb[vmid][first]
        room = max(0, (limit >> gmc.PAGE_SHIFT) - (last - first + 1))
        up = self._follow(vmid, last + 1, word + ((last + 1 - first) << 8), 1, room)
        down = self._follow(vmid, first - 1, word - (1 << 8), -1, min(room - up, first))
        lo, hi = (first - down) << gmc.PAGE_SHIFT, (last + 1 + up) << gmc.PAGE_SHIFT
        span = self.linear_span(vmid, lo, hi - lo, access)  # None if the range runs into another buffer
        return (lo, span) if span is not None else (va, self.linear_span(vmid, va, nbytes, access))

    def _follow(self, vmid: int, page: int, word: int, step: int, most: int) -> int:
        """How many pages from `page` on (by `step`, at most `most`) translate to word, word + step page, ..."""
        n, chunk = 0, 16
        while n < most:
            k = min(chunk, most - n)
            pages = range(page + step * n, page + step * (n + k), step)
            vals = [self._tlb[vmid].get(p) for p in pages]
            for i, v in enumerate(vals):
                if v is None:
                    v = -1 if pages[i] < 0 else self._fill(vmid, pages[i])
                if v != word + ((step * (n + i)) << 8):
                    return n + i
            n += k
            chunk = min(chunk * 2, 4096)
        return n

    def _dense_pages(self, vmid: int, vpn: np.ndarray, m: int):
        """Fast path for the usual access pattern (lanes clustered in a few pages): index a page range
        directly instead of sorting; translates only the pages some lane uses. None if too sparse."""
        lo = int(vpn.min())
        span = int(vpn.max()) - lo + 1
        if span > max(4096, 2 * m):
            return None
        inv = (vpn - _U64(lo)).astype(np.intp)
        used = np.zeros(span, dtype=bool)
        used[inv] = True
        live = np.flatnonzero(used)
        vals = np.zeros(span, dtype=np.int64)  # unused pages: a harmless VRAM page 0 entry, never referenced
        vals[live] = self._page_values(vmid, live.astype(np.uint64) + _U64(lo))
        return np.arange(lo, lo + span, dtype=np.uint64), inv, vals, used

    # ---- resolving lanes ----------------------------------------------------------------------------------
    def _resolve(self, vmid: int, addrs: np.ndarray, size: int, access: str) -> _Resolved:
        """Translate and check every lane's bytes; raises HardwareFault for the lowest faulting lane."""
        _check_vmid(vmid)
        top = addrs >> _U64(gmc.VA_BITS - 1)
        canon = (top == 0) | (top == (1 << (64 - gmc.VA_BITS + 1)) - 1)
        all_canon = bool(canon.all())
        a48 = addrs & _U64(gmc.VA_MASK)
        first_vpn = a48 >> _U64(gmc.PAGE_SHIFT)
        if not all_canon:
            first_vpn = np.where(canon, first_vpn, _U64(_BAD_VPN))
        last_vpn, cross, crossing = first_vpn, None, False
        if size > 1:
            last_vpn = (a48 + _U64(size - 1)) >> _U64(gmc.PAGE_SHIFT)
            cross = last_vpn != first_vpn
            crossing = bool(cross.any())
        if crossing:  # a lane may not run from the low half into the hole, nor off the top
            half = _U64(gmc.VA_BITS - 1 - gmc.PAGE_SHIFT)
            last_ok = canon & ((last_vpn >> half) == (first_vpn >> half))
            last_vpn = np.where(last_ok, last_vpn, _U64(_BAD_VPN))
            cross = last_vpn != first_vpn
        m = addrs.size
        dense = None if crossing or not all_canon else self._dense_pages(vmid, first_vpn, m)
        if dense is not None:
            pages, inv, vals, used = dense
        else:
            pages, inv = unique_inverse(np.concatenate((first_vpn, last_vpn[cross])) if crossing else first_vpn)
            vals, used = self._page_values(vmid, pages), None
        prt = (vals >= 0) & ((vals & _PRT) != 0)
        region, base, backed = self.phys.locate_pages(vals >> 8, (vals & _SYS) != 0)
        need = _NEED[access]
        bad = (vals < 0) | (~prt & (((vals & need) != need) | ~backed))
        if used is not None:
            bad &= used
        first = inv[:m]
        second = first
        if crossing:
            second = first.copy()
            second[cross] = inv[m:]
        if bad.any():
            self._raise(vmid, addrs, size, access, pages, vals, bad, first, second)
        any_prt = bool(prt.any())
        if any_prt:
            region[prt], base[prt] = 0, 0
        return _Resolved(vals, region, base, prt if any_prt else None, first, second,
                         (a48 & _U64(gmc.PAGE_SIZE - 1)).astype(np.int64), crossing, not region.any())

    def _raise(self, vmid, addrs, size, access, pages, vals, bad, first, second) -> None:
        """Raise the HardwareFault of the lowest lane that touches a bad page."""
        lane = int(np.argmax(bad[first] | bad[second]))
        p = int(first[lane]) if bad[first[lane]] else int(second[lane])
        va = int(addrs[lane])
        if p != first[lane]:
            va = ((va + size - 1) & ~(gmc.PAGE_SIZE - 1)) & ((1 << 64) - 1)
        v = int(vals[p])
        if v < 0:
            why = self._walk(vmid, int(pages[p]))
            reason = why if isinstance(why, str) else "translation failed"
        elif v & _NEED[access] != _NEED[access]:
            grants = "".join(c for c, b in (("R", _R), ("W", _W), ("X", _X)) if v & b) or "nothing"
            reason = f"{access} not permitted by the PTE (it grants {grants})"
        else:
            where = "system" if v & _SYS else "VRAM"
            reason = f"PTE points at unbacked {where} PA {(v >> 8) << gmc.PAGE_SHIFT:#x}"
        raise HardwareFault(kind="page_fault", address=va, access=access, vmid=vmid, message=reason)

    def _lane_locations(self, res: _Resolved) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Per lane (first page): region, byte offset in the region buffer, live (not a PRT hole)."""
        live = None if res.prt is None else ~res.prt[res.first]
        return res.region[res.first], res.base[res.first] + res.inpage, live

    def _byte_locations(self, res: _Resolved, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Per lane and byte, shape (m, size): region, byte offset, live."""
        at = res.inpage[:, None] + np.arange(size)
        page = np.where(at >= gmc.PAGE_SIZE, res.second[:, None], res.first[:, None])
        live = None if res.prt is None else ~res.prt[page]
        return res.region[page], res.base[page] + (at & (gmc.PAGE_SIZE - 1)), live

    def _read_units(self, region: np.ndarray, idx: np.ndarray, dtype: str, one_region: bool) -> np.ndarray:
        """Elements of `dtype` at element indices `idx` of each region's buffer."""
        if one_region:
            return self.phys.typed_vram(dtype)[idx]
        out = np.zeros(idx.shape, dtype=dtype)
        region = np.broadcast_to(region.reshape(region.shape + (1,) * (idx.ndim - region.ndim)), idx.shape)
        bufs = self.phys.region_buffers()
        for r in np.unique(region).tolist():
            sel = region == r
            out[sel] = bufs[r].view(dtype)[idx[sel]]
        return out

    def _write_units(self, region: np.ndarray, idx: np.ndarray, vals: np.ndarray, dtype: str,
                     one_region: bool) -> None:
        """Store elements (1-D, distinct targets) into each region's buffer."""
        if one_region:
            self.phys.typed_vram(dtype)[idx] = vals
            return
        bufs = self.phys.region_buffers()
        for r in np.unique(region).tolist():
            sel = region == r
            bufs[r].view(dtype)[idx[sel]] = vals[sel]

    def _store(self, region: np.ndarray, idx: np.ndarray, vals: np.ndarray, dtype: str, one_region: bool) -> None:
        """Store 1-D lane-ordered elements; of several stores to one element the last one wins."""
        keys = idx if one_region else idx * (int(region.max()) + 1) + region
        keep = last_wins(keys)
        if keep is not None:
            region, idx, vals = region[keep], idx[keep], vals[keep]
        self._write_units(region, idx, vals, dtype, one_region)

    # ---- vectorized access ----------------------------------------------------------------------------
    def gather(self, vmid: int, addrs, size: int, mask=None) -> np.ndarray:
        """Load `size` bytes per lane: uint8/16/32/64 shaped like `addrs`, plus a trailing 4 (dwords) for 16."""
        dtype = _LANE_DTYPES[size]
        shape = np.shape(addrs) + ((4,) if size == 16 else ())
        addrs = _as_addrs(addrs)
        lanes = _active(mask, addrs.size)
        a = addrs if lanes is None else addrs[lanes]
        if a.size == 0:
            return np.zeros(shape, dtype=dtype)
        idx = self._linear_units(vmid, a, size, "read")
        if idx is not None:
            vals = self.phys.typed_vram(f"<u{min(size, 8) if size != 16 else 4}")[idx]
        else:
            vals = self._load(self._resolve(vmid, a, size, "read"), a, size)
        if lanes is not None:
            out = np.zeros((addrs.size, 4) if size == 16 else addrs.size, dtype=dtype)
            out[lanes] = vals
            vals = out
        return vals.reshape(shape)

    def _load(self, res: _Resolved, a: np.ndarray, size: int) -> np.ndarray:
        """Load the lanes of a resolved access (PRT lanes read zero)."""
        unit = min(size, 8) if size != 16 else 4
        if not res.crossing and not (a & _U64(unit - 1)).any():
            region, off, live = self._lane_locations(res)
            idx = off >> (unit.bit_length() - 1)
            if size == 16:
                idx = idx[:, None] + np.arange(4)
            vals = self._read_units(region, idx, f"<u{unit}", res.one_region)
            if live is not None:
                vals[~live] = 0
            return vals
        region, off, live = self._byte_locations(res, size)
        b = self._read_units(region, off, "<u1", res.one_region)
        if live is not None:
            b[~live] = 0
        v = np.ascontiguousarray(b).view(_LANE_DTYPES[size])
        return v if size == 16 else v.reshape(-1)

    def scatter(self, vmid: int, addrs, values, size: int, mask=None) -> None:
        """Store `size` bytes per active lane; for overlapping stores the highest lane wins, byte by byte."""
        vals = _as_values(values, size, np.shape(addrs))
        addrs = _as_addrs(addrs)
        lanes = _active(mask, addrs.size)
        if lanes is not None:
            addrs, vals = addrs[lanes], vals[lanes]
        if addrs.size == 0:
            return
        if addrs.size < 2 or bool((addrs[1:] > addrs[:-1]).all()):  # ascending: no two lanes collide
            idx = self._linear_units(vmid, addrs, size, "write")
            if idx is not None:
                self.phys.typed_vram(f"<u{min(size, 8) if size != 16 else 4}")[idx] = vals
                return
        res = self._resolve(vmid, addrs, size, "write")
        unit = min(size, 8) if size != 16 else 4
        if not res.crossing and not (addrs & _U64(unit - 1)).any():
            region, off, live = self._lane_locations(res)
            idx = off >> (unit.bit_length() - 1)
            if size == 16:  # four dword stores per lane, in lane order
                idx = (idx[:, None] + np.arange(4)).reshape(-1)
                region, live = np.repeat(region, 4), None if live is None else np.repeat(live, 4)
                vals = vals.reshape(-1)
            dtype = f"<u{unit}"
        else:
            region, idx, live = (x.reshape(-1) if x is not None else None for x in self._byte_locations(res, size))
            vals = np.ascontiguousarray(vals).view(np.uint8).reshape(-1)
            dtype = "<u1"
        if live is not None:
            region, idx, vals = region[live], idx[live], vals[live]
        if idx.size:
            self._store(region, idx, vals, dtype, res.one_region)

    def atomic(self, vmid: int, op: str, addrs, src, cmp=None, size: int = 4, mask=None,
               return_old: bool = True) -> np.ndarray | None:
        """Atomic read-modify-write per active lane, in lane order; returns the old values (0 for inactive)."""
        if op not in atomics.OPS:
            raise ValueError(f"unknown atomic op {op!r}; expected one of {sorted(atomics.OPS)}")
        if size not in (4, 8):
            raise ValueError(f"atomic size must be 4 or 8, not {size}")
        if op == "cmpswap" and cmp is None:
            raise ValueError("cmpswap needs cmp")
        shape = np.shape(addrs)
        src = _as_values(src, size, shape)
        cmp = None if cmp is None else _as_values(cmp, size, shape)
        addrs = _as_addrs(addrs)
        lanes = _active(mask, addrs.size)
        if lanes is None:
            lanes = np.arange(addrs.size)
        out = np.zeros(addrs.size, dtype=f"<u{size}")
        if lanes.size:
            out[lanes] = self._atomic_lanes(vmid, op, addrs[lanes], src[lanes],
                                            None if cmp is None else cmp[lanes], size)
        return out.reshape(shape) if return_old else None

    def _atomic_lanes(self, vmid: int, op: str, a: np.ndarray, src: np.ndarray, cmp: np.ndarray | None,
                      size: int) -> np.ndarray:
        """Atomics of the active lanes; returns their old values."""
        misaligned = (a & _U64(size - 1)) != 0
        if misaligned.any():
            lane = int(np.argmax(misaligned))
            raise HardwareFault(kind="memory_violation", address=int(a[lane]), access="atomic", vmid=vmid,
                           message=f"misaligned {size}-byte atomic")
        res = self._resolve(vmid, a, size, "atomic")
        region, off, live = self._lane_locations(res)
        old = np.zeros(a.size, dtype=f"<u{size}")
        sel = np.arange(a.size) if live is None else np.flatnonzero(live)
        region, idx = region[sel], off[sel] >> (size.bit_length() - 1)
        keys = idx if res.one_region else idx * (int(region.max(initial=0)) + 1) + region
        dtype, one = f"<u{size}", res.one_region

        def load(ls: np.ndarray) -> np.ndarray:
            return self._read_units(region[ls], idx[ls], dtype, one)

        def store(ls: np.ndarray, v: np.ndarray) -> None:
            self._write_units(region[ls], idx[ls], v, dtype, one)

        if sel.size:
            old[sel] = atomics.run(op, keys, src[sel], None if cmp is None else cmp[sel], load, store)
        return old

    # ---- scalar access (command processors, SDMA) ---------------------------------------------------------
    def translate(self, vmid: int, va: int, access: str = "read") -> Translation:
        """Translate one address (through the TLB); raises HardwareFault like a lane access would."""
        res = self._resolve(vmid, np.array([va & ((1 << 64) - 1)], dtype=_U64), 1, access)
        v = int(res.vals[res.first[0]])
        pa = ((v >> 8) << gmc.PAGE_SHIFT) | (va & (gmc.PAGE_SIZE - 1))
        return Translation(pa, bool(v & _SYS), bool(v & _PRT))

    def _cached_page_span(self, vmid: int, va: int, nbytes: int, access: str) -> np.ndarray | None:
        """The memory behind a small access inside one page whose translation is in the TLB and grants
        `access`, found in plain Python: instruction fetch, SMEM, and the command processor's reads and
        writes of rings, packets and signals (VRAM or system memory) do many of these. None to take the
        general path (which walks the tables and reports faults)."""
        if not 0 <= vmid < gmc.NUM_VMIDS or not 0 <= va < (1 << (gmc.VA_BITS - 1)):
            return None
        inpage = va & (gmc.PAGE_SIZE - 1)
        if inpage + nbytes > gmc.PAGE_SIZE:
            return None
        v = self._tlb[vmid].get(va >> gmc.PAGE_SHIFT)
        need = _NEED[access]
        if v is None or v & _PRT or v & need != need:
            return None
        pa = ((v >> 8) << gmc.PAGE_SHIFT) + inpage
        if v & _SYS:
            return self.phys.span(pa, nbytes, True)
        if pa + nbytes > self.phys.vram_size:
            return None
        return self.phys.region_buffers()[0][pa:pa + nbytes]

    def _pieces(self, vmid: int, va: int, nbytes: int, access: str) -> list[tuple[int, int, int, int] | None]:
        """[region, offset, length, position] per page of [va, va + nbytes) (None for a PRT hole)."""
        va &= (1 << 64) - 1
        npages = (((va & (gmc.PAGE_SIZE - 1)) + nbytes - 1) >> gmc.PAGE_SHIFT) + 1
        starts = (_U64(va & ~(gmc.PAGE_SIZE - 1)) + np.arange(npages, dtype=_U64) * _U64(gmc.PAGE_SIZE))
        starts[0] = va
        res = self._resolve(vmid, starts, 1, access)
        region, off, live = self._lane_locations(res)
        pos = (starts - _U64(va)).astype(np.int64)
        length = np.diff(np.append(pos, nbytes))
        pieces: list = []
        for i in range(npages):
            if live is not None and not live[i]:
                pieces.append(None)
            elif pieces and pieces[-1] and pieces[-1][0] == region[i] and pieces[-1][1] + pieces[-1][2] == off[i]:
                r, o, n, p = pieces[-1]  # physically contiguous with the previous page: one copy
                pieces[-1] = (r, o, n + int(length[i]), p)
            else:
                pieces.append((int(region[i]), int(off[i]), int(length[i]), int(pos[i])))
        return pieces

    def read(self, vmid: int, va: int, nbytes: int, access: str = "read") -> bytes:
        """Read `nbytes` of virtual memory page by page (access "execute" for instruction fetch)."""
        if nbytes <= 0:
            return b""
        fast = self._cached_page_span(vmid, va, nbytes, access)
        if fast is not None:
            return fast.tobytes()
        out = bytearray(nbytes)
        bufs = self.phys.region_buffers()
        for piece in self._pieces(vmid, va, nbytes, access):
            if piece is not None:
                r, o, n, p = piece
                out[p:p + n] = bufs[r][o:o + n].tobytes()
        return bytes(out)

    def write(self, vmid: int, va: int, data) -> None:
        """Write bytes-like `data` to virtual memory; every page is checked before any byte is written."""
        src = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
        if src.size == 0:
            return
        fast = self._cached_page_span(vmid, va, src.size, "write")
        if fast is not None:
            fast[:] = src
            return
        bufs = self.phys.region_buffers()
        for piece in self._pieces(vmid, va, src.size, "write"):
            if piece is not None:
                r, o, n, p = piece
                bufs[r][o:o + n] = src[p:p + n]


def _grant(word: int, first: int, access: str) -> tuple[int, bool] | None:
    """(PA - VA, SYSTEM bit) of a linear run whose page `first` has translation `word`, if it grants
    `access` and is no PRT hole."""
    need = _NEED[access]
    if word & _PRT or word & need != need:
        return None
    return ((word >> 8) - first) << gmc.PAGE_SHIFT, bool(word & _SYS)


def _leaf(word: int, vpn: int, level: gmc.Level) -> Leaf | str:
    """The leaf for `vpn` from a PTE (or PDE_PTE) word found at `level`."""
    if not word & gmc.PTE_VALID:
        if word & gmc.PTE_PRT:
            return Leaf(0, vpn, 0, _PRT)
        return "PTE not valid" if level == gmc.Level.PTB else f"PDE not valid at {level.name} (huge-page entry)"
    bits = _R * bool(word & gmc.PTE_READABLE) | _W * bool(word & gmc.PTE_WRITEABLE) | \
        _X * bool(word & gmc.PTE_EXECUTABLE) | _SYS * bool(word & gmc.PTE_SYSTEM)
    entry_log2 = gmc.level_shift(level) - gmc.PAGE_SHIFT
    entry_va = vpn >> entry_log2 << entry_log2
    entry_pa = (word & gmc.PTE_ADDR_MASK) >> gmc.PAGE_SHIFT
    log2 = max(entry_log2, gmc.pte_fragment(word))
    leaf_va = vpn >> log2 << log2
    if entry_va - leaf_va > entry_pa:  # a fragment reaching below PA 0 cannot be contiguous: ignore it
        log2, leaf_va = entry_log2, entry_va
    return Leaf(log2, leaf_va, entry_pa - (entry_va - leaf_va), bits)


def _canonical(va: int) -> bool:
    """True if `va` is a sign-extended 48-bit address."""
    top = (va & ((1 << 64) - 1)) >> (gmc.VA_BITS - 1)
    return top == 0 or top == (1 << (64 - gmc.VA_BITS + 1)) - 1


def _check_vmid(vmid: int) -> int:
    """Validate a VMID (0..15)."""
    if not 0 <= vmid < gmc.NUM_VMIDS:
        raise ValueError(f"VMID {vmid} out of range 0..{gmc.NUM_VMIDS - 1}")
    return vmid
