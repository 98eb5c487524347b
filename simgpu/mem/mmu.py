"""The GPUVM MMU: the memory system one GPU's engines see, composed of one object per hardware job.

    PageWalker    (walker.py)        the VM contexts (roots, ranges, VMID 0's system aperture) and walks of
                                     real gfx11 PDE/PTE words: a leaf widened to its fragment, or a fault reason
    UTCL2         (utcl2.py)         the translation cache: per-page and per-fragment translations, their
                                     invalidation, and the record of what changed since a generation
    LinearWindows (windows.py)       verified linear page runs: spans for coalesced access, and the windows
                                     native code may read and write directly (TierMemory: the JIT's interface)
    LaneResolver  (resolve.py)       translation and check of every lane's bytes before anything moves
    LaneAccess    (lane_access.py)   gather / scatter / atomic of many lanes (the shader engine's VMEM)
    RangeAccess   (range_access.py)  translate / read / write / copy of one address or byte range (CP, SDMA, fetch)

The MMU owns the parts, programs them (set_root, set_context, set_system_aperture, invalidate: what the
driver's register writes and TLB flushes do) and hands out the parts' own bound methods as its access
methods, so an engine's call reaches the code that does the work with no layer in between.

Like the hardware, the MMU never notices page-table writes: after changing tables (or the root), the driver
must call `invalidate(vmid, va_range)`, or stale translations persist. Faults are HardwareFault (page_fault with
the walker's reason, memory_violation for a misaligned atomic), raised before any byte is written.
"""

from __future__ import annotations

from simgpu.hw import gmc
from simgpu.mem.lane_access import LaneAccess
from simgpu.mem.physical import PhysicalMemory
from simgpu.mem.range_access import RangeAccess, Translation
from simgpu.mem.resolve import LaneResolver
from simgpu.mem.utcl2 import TLB_CAPACITY, UTCL2
from simgpu.mem.walker import Leaf, PageWalker
from simgpu.mem.windows import LinearWindows

__all__ = ["MMU", "TLB_CAPACITY", "Leaf", "Translation"]


class MMU:
    """GPUVM address translation and access for 16 VMIDs over one PhysicalMemory."""

    def __init__(self, phys: PhysicalMemory, pte_format: gmc.PteFormat = gmc.GFX11_FORMAT):
        self.phys = phys
        self.walker = PageWalker(phys, pte_format)
        self.tlb = UTCL2(self.walker)
        self.windows = LinearWindows(phys, self.tlb)
        resolver = LaneResolver(phys, self.tlb)
        self.lanes = LaneAccess(phys, resolver, self.windows)
        self.ranges = RangeAccess(phys, resolver)
        # The access methods are the parts' bound methods (see the module docstring).
        self.gather, self.scatter, self.atomic = self.lanes.gather, self.lanes.scatter, self.lanes.atomic
        self.translate, self.read, self.write = self.ranges.translate, self.ranges.read, self.ranges.write
        self.copy, self.dwords, self.page_view = self.ranges.copy, self.ranges.dwords, self.ranges.page_view
        self.page_ends = self.ranges.page_ends
        self.linear_span, self.linear_window = self.windows.linear_span, self.windows.linear_window
        self.invalidated_since = self.tlb.invalidated_since
        self.walk = self.walker.walk

    @property
    def walks(self) -> int:
        """Page-table walks so far (misses no cached fragment covered, and fault reports)."""
        return self.walker.walks

    @property
    def generation(self) -> int:
        """Bumped by every root change, invalidate and TLB eviction (see invalidated_since)."""
        return self.tlb.generation

    @property
    def system_aperture(self) -> tuple[int, int, int] | None:
        """VMID 0's system aperture (low, high, PA - address) in bytes, or None."""
        return self.walker.system_aperture

    @system_aperture.setter
    def system_aperture(self, value: tuple[int, int, int] | None) -> None:
        self.walker.system_aperture = value

    # ---- what the driver programs ---------------------------------------------------------------------
    def set_root(self, vmid: int, pa: int | None) -> None:
        """Set the VMID's root page directory (PDB2) physical address; PDE flag bits (SYSTEM) are honoured.
        Cached translations stay until invalidated, as on the hardware."""
        self.walker.set_root(vmid, pa)
        self.tlb.changed(vmid, None)

    def set_context(self, vmid: int, root: int | None, first_page: int | None = None,
                    last_page: int | None = None, translate_further: bool = False) -> None:
        """Program a VM context: its root (as set_root), the page numbers [first_page, last_page] it translates
        (None: all) and whether its PDB0 entries translate further (gfx9); drops the VMID's cached translations."""
        self.set_root(vmid, root)
        self.walker.set_range(vmid, first_page, last_page)
        self.walker.set_translate_further(vmid, translate_further)
        self.invalidate(vmid)

    def set_system_aperture(self, low: int | None, high: int = 0, fb_base: int = 0, fb_offset: int = 0) -> None:
        """VMID 0's system aperture: [low, high] (bytes) maps to VRAM at address - fb_base + fb_offset; None: off."""
        self.walker.set_system_aperture(low, high, fb_base, fb_offset)
        self.invalidate(0)

    def invalidate(self, vmid: int | None = None, va_range: tuple[int, int] | None = None) -> None:
        """Drop cached translations of one VMID (or all) for [start, end) (or everything), and the VMID's
        verified linear runs."""
        self.tlb.invalidate(vmid, va_range)
        self.windows.forget(vmid)
