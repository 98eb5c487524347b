"""Range access: one address or one byte range of virtual memory at a time, for the command processors
(rings, packets, signals), SDMA, instruction fetch and SMEM.

Every page of a range is translated and checked (simgpu.mem.resolve) before any byte moves, so a faulting
access changes no memory; PRT holes read zero and drop writes. A small access inside one page whose
translation is cached is found in plain Python, without numpy: these accessors run many such calls (a
launch's ten PM4 packets, its rptr reports and RELEASE_MEM writes), so the memory of such a page is remembered
too, as a memoryview, for as long as the UTCL2 holds the same translation word for it and the system buffers are
the same (_page_view): the next access of that page reads or writes the view at once.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from simgpu.hw import gmc
from simgpu.mem.physical import PhysicalMemory
from simgpu.mem.resolve import LaneResolver
from simgpu.mem.walker import NEED, PRT, SYS

_U64 = np.uint64
_DWORDS = [f"<{n}I" for n in range(17)]  # struct formats of a packet's dwords
_PAGE_VIEWS = 4096  # pages remembered (_page_view); emptied when full, deterministically


class Translation(NamedTuple):
    """Where one virtual address lands."""

    pa: int
    system: bool  # system aperture (else VRAM)
    prt: bool  # PRT hole: reads zero, writes dropped


class RangeAccess:
    """translate / read / write for 16 VMIDs over one PhysicalMemory."""

    def __init__(self, phys: PhysicalMemory, resolver: LaneResolver):
        self.phys, self.resolver = phys, resolver
        self._tlb = resolver.tlb.pages  # per VMID, cleared in place by invalidations
        # (vmid, page, access) -> (translation word, the page's memory): see _page_view
        self._views: dict[tuple[int, int, str], tuple[int, memoryview]] = {}
        self._views_version = phys.system_version
        hooks = getattr(phys, "system_removed_hooks", None)
        if hooks is not None:  # a removed system buffer's pages are forgotten at once, not at the next access
            hooks.append(self._views.clear)

    def translate(self, vmid: int, va: int, access: str = "read") -> Translation:
        """Translate one address (through the UTCL2); raises HardwareFault like a lane access would."""
        va &= (1 << 64) - 1
        if self._page_view(vmid, va, access) is not None:
            # Cached, granting `access`, backed and not a PRT hole: what resolve would find, without numpy (every
            # SDMA copy and fill classifies its two ends' links here, two translations per packet).
            v = self._tlb[vmid][va >> gmc.PAGE_SHIFT]
            return Translation(((v >> 8) << gmc.PAGE_SHIFT) | (va & (gmc.PAGE_SIZE - 1)), bool(v & SYS), False)
        res = self.resolver.resolve(vmid, np.array([va & ((1 << 64) - 1)], dtype=_U64), 1, access)
        v = int(res.vals[res.first[0]])
        pa = ((v >> 8) << gmc.PAGE_SHIFT) | (va & (gmc.PAGE_SIZE - 1))
        return Translation(pa, bool(v & SYS), bool(v & PRT))

    def read(self, vmid: int, va: int, nbytes: int, access: str = "read") -> bytes:
        """Read `nbytes` of virtual memory page by page (access "execute" for instruction fetch)."""
        if nbytes <= 0:
            return b""
        inpage = va & (gmc.PAGE_SIZE - 1)
        if inpage + nbytes <= gmc.PAGE_SIZE:
            page = self._page_view(vmid, va, access)
            if page is not None:
                return page[inpage:inpage + nbytes].tobytes()
        fast = self._cached_page_span(vmid, va, nbytes, access)
        if fast is not None:
            return fast.tobytes()
        out = bytearray(nbytes)
        into = np.frombuffer(out, np.uint8)
        for p, n, view in self._spans(vmid, va, nbytes, access):
            if view is not None:
                into[p:p + n] = view
        return bytes(out)

    def page_view(self, vmid: int, va: int, access: str = "read") -> memoryview | None:
        """The memory of the page holding `va` (live: writes show) if its translation is cached and grants `access`,
        else None (then read or write, which translate and fault). Valid until the VMID's next invalidation."""
        return self._page_view(vmid, va & ((1 << 64) - 1), access)

    def page_ends(self, vmid: int, dst: int, src: int, nbytes: int) -> tuple | None:
        """For a transfer of `nbytes` (at least one) that stays within one page at each end, when both pages'
        translations are cached and grant the access (writing `dst`, reading `src`): (dst's Translation, src's,
        dst's page memory, src's), what translate and read / write would find, from two page looks instead of four
        (SDMA's small copies: test_hcq's one-byte rounds); else None (then translate, read and write, which fault)."""
        if (dst & (gmc.PAGE_SIZE - 1)) + nbytes > gmc.PAGE_SIZE or (src & (gmc.PAGE_SIZE - 1)) + nbytes > gmc.PAGE_SIZE:
            return None
        dst &= (1 << 64) - 1
        src &= (1 << 64) - 1
        dview = self._page_view(vmid, dst, "write")
        if dview is None:
            return None
        sview = self._page_view(vmid, src, "read")
        if sview is None:
            return None
        tlb = self._tlb[vmid]
        dv, sv = tlb[dst >> gmc.PAGE_SHIFT], tlb[src >> gmc.PAGE_SHIFT]
        return (Translation(((dv >> 8) << gmc.PAGE_SHIFT) | (dst & (gmc.PAGE_SIZE - 1)), bool(dv & SYS), False),
                Translation(((sv >> 8) << gmc.PAGE_SHIFT) | (src & (gmc.PAGE_SIZE - 1)), bool(sv & SYS), False),
                dview, sview)

    def dwords(self, vmid: int, va: int, n: int) -> list[int]:
        """read(vmid, va, 4 * n) as n little-endian dwords: a packet's words, unpacked from the page's memory
        without a copy when they sit in one remembered page (the command processors' fetch, once a packet)."""
        inpage = va & (gmc.PAGE_SIZE - 1)
        if inpage + 4 * n <= gmc.PAGE_SIZE:
            page = self._page_view(vmid, va, "read")
            if page is not None:
                return list(struct.unpack_from(_DWORDS[n] if n < len(_DWORDS) else f"<{n}I", page, inpage))
        return list(struct.unpack(f"<{n}I", self.read(vmid, va, 4 * n)))

    def write(self, vmid: int, va: int, data) -> None:
        """Write bytes-like `data` to virtual memory; every page is checked before any byte is written."""
        raw = memoryview(data).cast("B")
        nbytes = raw.nbytes
        if nbytes == 0:
            return
        inpage = va & (gmc.PAGE_SIZE - 1)
        if inpage + nbytes <= gmc.PAGE_SIZE:
            page = self._page_view(vmid, va, "write")
            if page is not None:
                page[inpage:inpage + nbytes] = raw
                return
        src = np.frombuffer(raw, dtype=np.uint8)
        fast = self._cached_page_span(vmid, va, src.size, "write")
        if fast is not None:
            fast[:] = src
            return
        for p, n, view in self._spans(vmid, va, src.size, "write"):
            if view is not None:
                view[:] = src[p:p + n]

    def copy(self, vmid: int, dst: int, src: int, nbytes: int) -> None:
        """write(dst, read(src, nbytes)): every source page is checked, then every destination page, before any
        byte moves; but memory to memory, without the bytes in between (SDMA's large copies, a MiB at a time)."""
        if nbytes <= gmc.PAGE_SIZE:
            self.write(vmid, dst, self.read(vmid, src, nbytes))
            return
        srcs = self._pieces(vmid, src, nbytes, "read")
        dsts = self._pieces(vmid, dst, nbytes, "write")
        if _may_overlap(srcs, dsts):  # the source is read whole before the first write, as it was
            self.write(vmid, dst, self.read(vmid, src, nbytes))
            return
        bufs = self.phys.region_buffers()
        si = 0
        for dr, do, dn, dp in dsts:
            pos, end = dp, dp + dn
            while pos < end:
                sr, so, sn, sp = srcs[si]
                if sp + sn <= pos:
                    si += 1
                    continue
                take = min(end, sp + sn) - pos
                if dr >= 0:  # (a PRT hole drops its writes; one in the source reads zero)
                    part = bufs[dr][do + pos - dp:do + pos - dp + take]
                    part[:] = 0 if sr < 0 else bufs[sr][so + pos - sp:so + pos - sp + take]
                pos += take

    def _page_view(self, vmid: int, va: int, access: str) -> memoryview | None:
        """The memory of the page holding `va` when an earlier access found it through _cached_page_span and
        the UTCL2 still holds the translation word it was found by (an invalidation drops the word, and a
        refill with the same word means the same memory, access bits and PRT bit); None to look again."""
        if self._views_version != self.phys.system_version:  # a system buffer came or went: views may be stale
            self._views.clear()
            self._views_version = self.phys.system_version
        page = va >> gmc.PAGE_SHIFT
        hit = self._views.get((vmid, page, access))
        if hit is None:
            return self._remember(vmid, page, access)
        word, view = hit
        if self._tlb[vmid].get(page) != word:
            del self._views[(vmid, page, access)]
            return self._remember(vmid, page, access)
        return view

    def _remember(self, vmid: int, page: int, access: str) -> memoryview | None:
        """The page's memory by _cached_page_span (a cached translation granting `access`), kept for _page_view."""
        span = self._cached_page_span(vmid, page << gmc.PAGE_SHIFT, gmc.PAGE_SIZE, access)
        if span is None:
            return None
        if len(self._views) >= _PAGE_VIEWS:
            self._views.clear()
        view = memoryview(span)
        self._views[(vmid, page, access)] = (self._tlb[vmid][page], view)
        return view

    def _cached_page_span(self, vmid: int, va: int, nbytes: int, access: str) -> np.ndarray | None:
        """The memory behind a small access inside one page whose translation is cached and grants
        `access`; None to take the general path (which walks the tables and reports faults)."""
        if not 0 <= vmid < gmc.NUM_VMIDS or not 0 <= va < (1 << (gmc.VA_BITS - 1)):
            return None
        inpage = va & (gmc.PAGE_SIZE - 1)
        if inpage + nbytes > gmc.PAGE_SIZE:
            return None
        v = self._tlb[vmid].get(va >> gmc.PAGE_SHIFT)
        need = NEED[access]
        if v is None or v & PRT or v & need != need:
            return None
        pa = ((v >> 8) << gmc.PAGE_SHIFT) + inpage
        if v & SYS:
            return self.phys.span(pa, nbytes, True)
        if pa + nbytes > self.phys.vram_size:
            return None
        return self.phys.region_buffers()[0][pa:pa + nbytes]

    def _spans(self, vmid: int, va: int, nbytes: int, access: str) -> list[tuple[int, int, np.ndarray | None]]:
        """(position, length, memory) pieces covering [va, va + nbytes) in order, physically contiguous pages
        joined; the memory is None for a PRT hole. Every page is checked first (HardwareFault)."""
        bufs = self.phys.region_buffers()
        return [(p, n, None if r < 0 else bufs[r][o:o + n]) for r, o, n, p in self._pieces(vmid, va, nbytes, access)]

    def _pieces(self, vmid: int, va: int, nbytes: int, access: str) -> list[tuple[int, int, int, int]]:
        """[region, offset, length, position] per page of [va, va + nbytes) (region -1 for a PRT hole)."""
        va &= (1 << 64) - 1
        npages = (((va & (gmc.PAGE_SIZE - 1)) + nbytes - 1) >> gmc.PAGE_SHIFT) + 1
        starts = (_U64(va & ~(gmc.PAGE_SIZE - 1)) + np.arange(npages, dtype=_U64) * _U64(gmc.PAGE_SIZE))
        starts[0] = va
        res = self.resolver.resolve(vmid, starts, 1, access)
        region, off, live = res.lane_locations()
        pos = (starts - _U64(va)).astype(np.int64)
        length = np.diff(np.append(pos, nbytes))
        pieces: list = []
        for i in range(npages):
            if live is not None and not live[i]:
                pieces.append((-1, 0, int(length[i]), int(pos[i])))
            elif pieces and pieces[-1][0] == region[i] and pieces[-1][1] + pieces[-1][2] == off[i]:
                r, o, n, p = pieces[-1]  # physically contiguous with the previous page: one copy
                pieces[-1] = (r, o, n + int(length[i]), p)
            else:
                pieces.append((int(region[i]), int(off[i]), int(length[i]), int(pos[i])))
        return pieces


def _may_overlap(a: list[tuple[int, int, int, int]], b: list[tuple[int, int, int, int]]) -> bool:
    """Whether pieces of `a` and `b` (_pieces) may share bytes: their extents in some region intersect."""
    def extents(pieces):
        ext: dict[int, tuple[int, int]] = {}
        for r, o, n, _ in pieces:
            if r >= 0:
                lo, hi = ext.get(r, (o, o + n))
                ext[r] = (min(lo, o), max(hi, o + n))
        return ext
    ea, eb = extents(a), extents(b)
    return any(r in eb and lo < eb[r][1] and eb[r][0] < hi for r, (lo, hi) in ea.items())
