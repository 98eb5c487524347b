"""Resolving lanes: the translation and check of every lane's bytes before a lane access touches memory.

Addresses may have any shape (e.g. [waves, lanes]); lane order is their flat C order. Each unique page is
translated once per call (through the UTCL2); every lane is checked before anything is written, so a
faulting call changes no memory. The first faulting lane (lowest index) is reported. Accesses may be
unaligned and may cross a page (both pages are translated).

Permissions: read needs READABLE, write WRITEABLE, execute EXECUTABLE, atomic READABLE and WRITEABLE. The
SYSTEM bit selects the system aperture instead of VRAM. A PTE with PRT set and VALID clear (a partially
resident texture hole, as amdgpu writes it) does not fault: its lanes are marked, and the accessor reads
zeros for them and drops their writes and atomics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simgpu.fault import HardwareFault
from simgpu.hw import gmc
from simgpu.mem.lanes import unique_inverse
from simgpu.mem.physical import PhysicalMemory
from simgpu.mem.utcl2 import UTCL2
from simgpu.mem.walker import BAD_VPN, NEED, PRT, SYS, R, W, X, check_vmid

_U64 = np.uint64


@dataclass
class Resolved:
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

    def lane_locations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Per lane (first page): region, byte offset in the region buffer, live (not a PRT hole)."""
        live = None if self.prt is None else ~self.prt[self.first]
        return self.region[self.first], self.base[self.first] + self.inpage, live

    def byte_locations(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Per lane and byte, shape (m, size): region, byte offset, live."""
        at = self.inpage[:, None] + np.arange(size)
        page = np.where(at >= gmc.PAGE_SIZE, self.second[:, None], self.first[:, None])
        live = None if self.prt is None else ~self.prt[page]
        return self.region[page], self.base[page] + (at & (gmc.PAGE_SIZE - 1)), live


class LaneResolver:
    """Translates and checks lane addresses of 16 VMIDs through one UTCL2 onto one PhysicalMemory."""

    def __init__(self, phys: PhysicalMemory, tlb: UTCL2):
        self.phys, self.tlb = phys, tlb

    def resolve(self, vmid: int, addrs: np.ndarray, size: int, access: str) -> Resolved:
        """Translate and check every lane's bytes (1-D uint64 addresses); raises HardwareFault for the lowest
        faulting lane."""
        check_vmid(vmid)
        top = addrs >> _U64(gmc.VA_BITS - 1)
        canon = (top == 0) | (top == (1 << (64 - gmc.VA_BITS + 1)) - 1)
        all_canon = bool(canon.all())
        a48 = addrs & _U64(gmc.VA_MASK)
        first_vpn = a48 >> _U64(gmc.PAGE_SHIFT)
        if not all_canon:
            first_vpn = np.where(canon, first_vpn, _U64(BAD_VPN))
        last_vpn, cross, crossing = first_vpn, None, False
        if size > 1:
            last_vpn = (a48 + _U64(size - 1)) >> _U64(gmc.PAGE_SHIFT)
            cross = last_vpn != first_vpn
            crossing = bool(cross.any())
        if crossing:  # a lane may not run from the low half into the hole, nor off the top
            half = _U64(gmc.VA_BITS - 1 - gmc.PAGE_SHIFT)
            last_ok = canon & ((last_vpn >> half) == (first_vpn >> half))
            last_vpn = np.where(last_ok, last_vpn, _U64(BAD_VPN))
            cross = last_vpn != first_vpn
        m = addrs.size
        dense = None if crossing or not all_canon else self._dense_pages(vmid, first_vpn, m)
        if dense is not None:
            pages, inv, vals, used = dense
        else:
            pages, inv = unique_inverse(np.concatenate((first_vpn, last_vpn[cross])) if crossing else first_vpn)
            vals, used = self.tlb.page_values(vmid, pages), None
        prt = (vals >= 0) & ((vals & PRT) != 0)
        region, base, backed = self.phys.locate_pages(vals >> 8, (vals & SYS) != 0)
        need = NEED[access]
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
        return Resolved(vals, region, base, prt if any_prt else None, first, second,
                        (a48 & _U64(gmc.PAGE_SIZE - 1)).astype(np.int64), crossing, not region.any())

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
        vals[live] = self.tlb.page_values(vmid, live.astype(np.uint64) + _U64(lo))
        return np.arange(lo, lo + span, dtype=np.uint64), inv, vals, used

    def _raise(self, vmid, addrs, size, access, pages, vals, bad, first, second) -> None:
        """Raise the HardwareFault of the lowest lane that touches a bad page."""
        lane = int(np.argmax(bad[first] | bad[second]))
        p = int(first[lane]) if bad[first[lane]] else int(second[lane])
        va = int(addrs[lane])
        if p != first[lane]:
            va = ((va + size - 1) & ~(gmc.PAGE_SIZE - 1)) & ((1 << 64) - 1)
        v = int(vals[p])
        if v < 0:
            why = self.tlb.walker.walk_page(vmid, int(pages[p]))
            reason = why if isinstance(why, str) else "translation failed"
        elif v & NEED[access] != NEED[access]:
            grants = "".join(c for c, b in (("R", R), ("W", W), ("X", X)) if v & b) or "nothing"
            reason = f"{access} not permitted by the PTE (it grants {grants})"
        else:
            where = "system" if v & SYS else "VRAM"
            reason = f"PTE points at unbacked {where} PA {(v >> 8) << gmc.PAGE_SHIFT:#x}"
        raise HardwareFault(kind="page_fault", address=va, access=access, vmid=vmid, message=reason)
