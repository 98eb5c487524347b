"""The translation cache (gfx11's UTCL2, the GPUVM TLB): per-VMID page and fragment translations, and
the record of invalidations that lets views of translations (the JIT tier's windows) outlive them.

Translations are cached per VMID, per page (the translation word, simgpu.mem.walker) and per fragment or
huge-page leaf, so one walk covers a whole fragment. Like the hardware, the cache never notices
page-table writes: after changing tables (or the root), the driver must invalidate, otherwise stale
translations persist for the pages and fragments already cached (until evicted: the page cache is
emptied when it reaches TLB_CAPACITY entries). Faults are never cached.

Every root change, invalidation and eviction bumps `generation` and is remembered (the last
_CHANGES_KEPT of them), so a holder of translated views can ask what changed since it made them.
"""

from __future__ import annotations

from itertools import repeat

import numpy as np

from simgpu.hw import gmc
from simgpu.mem.walker import Leaf, PageWalker, check_vmid

# Per-page entries kept per VMID before the page cache is emptied (fragment/huge-page leaves stay):
# bounds host memory like a finite hardware TLB, deterministically.
TLB_CAPACITY = 1 << 20
_CHANGES_KEPT = 64  # translation changes remembered for invalidated_since


class UTCL2:
    """Cached translations of 16 VMIDs over one PageWalker, and their invalidation record."""

    def __init__(self, walker: PageWalker):
        self.walker = walker
        # Per VMID: page -> translation word. The dicts are cleared in place, never replaced, so the lane and
        # range accessors may hold them.
        self.pages: list[dict[int, int]] = [{} for _ in range(gmc.NUM_VMIDS)]
        self._leaves: list[dict[tuple[int, int], Leaf]] = [{} for _ in range(gmc.NUM_VMIDS)]
        self._leaf_log2s: list[set[int]] = [set() for _ in range(gmc.NUM_VMIDS)]
        self.generation = 0  # bumped by every root change, invalidate and TLB flush (see invalidated_since)
        self._changes: list[tuple[int, int | None, tuple[int, int] | None]] = []  # (generation, vmid, range)

    # ---- lookups ----------------------------------------------------------------------------------------
    def fill(self, vmid: int, vpn: int) -> int:
        """Translate one page on a miss (cached leaf, else a walk); -1 if it faults."""
        leaf = self._leaf(vmid, vpn)
        return -1 if leaf is None else self._cache_page(vmid, vpn, leaf)

    def _cache_page(self, vmid: int, vpn: int, leaf: Leaf) -> int:
        """Cache and return the translation word of `vpn` by its leaf."""
        value = ((leaf.pa_page + vpn - leaf.va_page) << 8) | leaf.bits
        self._room(vmid, 1)[vpn] = value
        return value

    def page_values(self, vmid: int, pages: np.ndarray) -> np.ndarray:
        """Translation words of unique pages: lookups, walks only for misses. The misses one fragment or huge-page
        leaf covers are translated together, from one leaf lookup (a 200 MB copy misses 48,829 pages: 100 leaves)."""
        keys = pages.tolist()
        tlb = self.pages[vmid]
        vals = np.fromiter(map(tlb.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
        miss = np.flatnonzero(vals < 0)
        vpns = pages[miss]
        j = 0
        while j < len(miss):
            vpn = int(vpns[j])
            leaf = self._leaf(vmid, vpn)
            if leaf is None or not leaf.log2:
                vals[miss[j]] = -1 if leaf is None else self._cache_page(vmid, vpn, leaf)
                j += 1
                continue
            ahead = vpns[j:j + (1 << leaf.log2)]  # unique pages: at most the leaf's pages can fall inside it
            inside = (ahead >= leaf.va_page) & (ahead < leaf.va_page + (1 << leaf.log2))
            k = len(ahead) if inside.all() else int(np.argmin(inside))  # the run of misses inside the leaf
            run = ahead[:k].astype(np.int64)
            words = ((run + (leaf.pa_page - leaf.va_page)) << 8) | leaf.bits
            vals[miss[j:j + k]] = words
            self._room(vmid, k).update(zip(run.tolist(), words.tolist(), strict=True))
            j += k
        return vals

    def _leaf(self, vmid: int, vpn: int) -> Leaf | None:
        """The leaf translating `vpn`: a cached fragment or huge-page leaf, else a walk (cached if wider than a
        page); None if the walk faults."""
        for log2 in self._leaf_log2s[vmid]:
            leaf = self._leaves[vmid].get((log2, vpn >> log2))
            if leaf is not None:
                return leaf
        leaf = self.walker.walk_page(vmid, vpn)
        if isinstance(leaf, str):
            return None
        if leaf.log2:
            self._leaves[vmid][(leaf.log2, vpn >> leaf.log2)] = leaf
            self._leaf_log2s[vmid].add(leaf.log2)
        return leaf

    def _room(self, vmid: int, n: int) -> dict[int, int]:
        """The VMID's page cache, emptied first if `n` more entries would take it past TLB_CAPACITY."""
        tlb = self.pages[vmid]
        if len(tlb) + n > TLB_CAPACITY:
            tlb.clear()
            self.changed(vmid, None)
        return tlb

    # ---- invalidation -----------------------------------------------------------------------------------
    def invalidate(self, vmid: int | None = None, va_range: tuple[int, int] | None = None) -> None:
        """Drop cached translations of one VMID (or all) for [start, end) (or everything)."""
        self.changed(vmid, va_range)
        for v in range(gmc.NUM_VMIDS) if vmid is None else (check_vmid(vmid),):
            if va_range is None:
                self.pages[v].clear()
                self._leaves[v].clear()
                self._leaf_log2s[v].clear()
            else:
                self._drop(v, (va_range[0] & gmc.VA_MASK) >> gmc.PAGE_SHIFT,
                           ((va_range[1] - 1) & gmc.VA_MASK) >> gmc.PAGE_SHIFT)

    def _drop(self, vmid: int, lo: int, hi: int) -> None:
        """Drop the pages lo..hi and every leaf that overlaps them."""
        tlb = self.pages[vmid]
        if hi - lo < len(tlb):
            for p in range(lo, hi + 1):
                tlb.pop(p, None)
        else:
            for p in [p for p in tlb if lo <= p <= hi]:
                del tlb[p]
        leaves = self._leaves[vmid]
        for key in [k for k, lf in leaves.items() if lf.va_page <= hi and lf.va_page + (1 << lf.log2) > lo]:
            del leaves[key]

    def changed(self, vmid: int | None, va_range: tuple[int, int] | None) -> None:
        """Record that the translations of `vmid` (None: all) in `va_range` (None: all) changed."""
        self.generation += 1
        self._changes.append((self.generation, vmid, va_range))
        del self._changes[:-_CHANGES_KEPT]

    def invalidated_since(self, generation: int) -> list[tuple[int | None, tuple[int, int] | None]] | None:
        """The (VMID or None for all, VA range or None for all) whose translations changed after
        `generation`, oldest first; None when that is further back than the cache remembers. Views of
        translations (the JIT tier's memory windows) outside these ranges are still valid."""
        if generation == self.generation:
            return []
        if not self._changes or self._changes[0][0] > generation + 1:
            return None
        return [(v, r) for g, v, r in self._changes if g > generation]
