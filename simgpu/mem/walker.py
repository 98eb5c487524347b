"""The GPUVM page-table walker: per-VMID VM contexts and walks of real gfx11 PDE/PTE words.

Each of the 16 VMIDs has a root (PDB2) physical address, as the driver programs it in
VM_CONTEXTn_PAGE_TABLE_BASE_ADDR, and optionally the page range the context covers
(VM_CONTEXTn_PAGE_TABLE_START/END_ADDR). A walk reads PDE/PTE words (simgpu.hw.gmc) from simulated
memory: PDB2 -> PDB1 -> PDB0 -> PTB, stopping early at a PDE_PTE (huge page) entry. The leaf's fragment
field widens the translation to 2^(12 + fragment) bytes: PA(va) = entry PA + (va - entry VA) for every
page of the fragment (amdgpu guarantees the block is physically contiguous; the walker trusts it like the
hardware L1 does). A VMID in gfx9's translate-further mode (VM_CONTEXTn_CNTL depth 2, block size 9)
reads a PDB0 entry as a PTE: a 2 MiB leaf unless its TF bit sends the walk on into a PTB. VAs are 48-bit; the upper
half is addressed by sign-extended canonical addresses
(0xFFFF8000_00000000 and up); anything else faults. VMID 0 may also have a system aperture that reaches
VRAM physically.

The walker caches nothing (simgpu.mem.utcl2 does) and never raises for a bad address: a walk returns the
leaf or the reason it faults, in the words HardwareFault reports.

A leaf's `bits` are the translation word's flag bits below, shared by the translation caches, the windows
and lane access: a cached translation is (physical page number << 8) | bits, -1 when it faults.
"""

from __future__ import annotations

from typing import NamedTuple

from simgpu.hw import gmc
from simgpu.mem.physical import PhysicalAddressError, PhysicalMemory

R, W, X, SYS, PRT = 1, 2, 4, 8, 16  # readable, writeable, executable, system aperture, PRT hole
NEED = {"read": R, "write": W, "execute": X, "atomic": R | W}
BAD_VPN = 1 << (gmc.VA_BITS - gmc.PAGE_SHIFT)  # stands for any page outside the 48-bit VA space
_OUTSIDE = "address outside the canonical 48-bit GPU VA space"


class Leaf(NamedTuple):
    """A walked leaf entry widened to its fragment: 2^log2 pages from va_page map to pa_page on."""

    log2: int
    va_page: int
    pa_page: int
    bits: int


class PageWalker:
    """The VM contexts of 16 VMIDs (roots, ranges, VMID 0's system aperture) and their page-table walks."""

    def __init__(self, phys: PhysicalMemory, fmt: gmc.PteFormat = gmc.GFX11_FORMAT):
        self.phys = phys
        self._roots: list[tuple[int, bool] | None] = [None] * gmc.NUM_VMIDS
        # Per VMID, the page range its VM context covers (VM_CONTEXTn_PAGE_TABLE_START/END_ADDR): pages outside it
        # fault. None (what a driver that sets only roots gets) covers everything.
        self._ranges: list[tuple[int, int] | None] = [None] * gmc.NUM_VMIDS
        # VMID 0's system aperture (MC_VM_SYSTEM_APERTURE_LOW/HIGH_ADDR): addresses in [low, high] reach VRAM
        # physically at address - fb_base + fb_offset (the MC's frame-buffer aperture).
        self.system_aperture: tuple[int, int, int] | None = None  # (low, high, PA - address), bytes
        # Per VMID, gfx9's translate-further walk (VM_CONTEXTn_CNTL depth 2, block size 9): a PDB0 entry is a PTE,
        # a 2 MiB page unless its TF bit (AMDGPU_PTE_TF) sends the walk on into a PTB.
        self._further = [False] * gmc.NUM_VMIDS
        self.walks = 0  # page-table walks so far
        self.format = fmt  # the PTE/PDE flag positions of the GPU's generation (gmc.pte_format of its family)

    # ---- the VM context registers --------------------------------------------------------------------
    def set_root(self, vmid: int, pa: int | None) -> None:
        """Set the VMID's root page directory (PDB2) physical address; PDE flag bits (SYSTEM) are honoured."""
        check_vmid(vmid)
        self._roots[vmid] = None if pa is None else (pa & gmc.PDE_ADDR_MASK, bool(pa & gmc.PDE_SYSTEM))

    def set_range(self, vmid: int, first_page: int | None, last_page: int | None) -> None:
        """The page numbers [first_page, last_page] the VMID's context translates (None: all)."""
        self._ranges[check_vmid(vmid)] = None if first_page is None else (first_page, last_page)

    def set_translate_further(self, vmid: int, on: bool) -> None:
        """Whether the VMID's PDB0 entries are PTEs that translate further with PTE_TF (gfx9's 3-level mode)."""
        self._further[check_vmid(vmid)] = on

    def set_system_aperture(self, low: int | None, high: int, fb_base: int, fb_offset: int) -> None:
        """VMID 0's system aperture: [low, high] (bytes) maps to VRAM at address - fb_base + fb_offset; None: off."""
        self.system_aperture = None if low is None or high < low else (low, high, fb_offset - fb_base)

    # ---- walking --------------------------------------------------------------------------------------
    def walk(self, vmid: int, va: int) -> Leaf | str:
        """Walk the page tables for `va`: the leaf, or why the address faults."""
        check_vmid(vmid)
        return self.walk_page(vmid, (va & gmc.VA_MASK) >> gmc.PAGE_SHIFT if canonical(va) else BAD_VPN)

    def walk_page(self, vmid: int, vpn: int) -> Leaf | str:
        """Walk for virtual page `vpn` (BAD_VPN for an address outside the VA space)."""
        root = self._roots[vmid]
        if vpn >= BAD_VPN:
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
        # The walker indexes the tables by the page's offset from the context's START_ADDR (amdgpu starts its VMs
        # at 0; tinygrad's AM driver starts VMID 0 at 0x2000_0000_0000).
        first = rng[0] if rng is not None else 0
        leaf = self._descend(root, vpn - first, self._further[vmid])
        if not first or isinstance(leaf, str):
            return leaf
        if first % (1 << leaf.log2):  # a run not aligned in VA once rebased: keep only this page
            leaf = Leaf(0, vpn - first, leaf.pa_page + (vpn - first - leaf.va_page), leaf.bits)
        return leaf._replace(va_page=leaf.va_page + first)

    def _descend(self, root: tuple[int, bool], vpn: int, further: bool = False) -> Leaf | str:
        """The leaf for page `vpn` (relative to the context's start) from the root table down; `further`: PDB0
        entries are PTEs that reach a PTB only with PTE_TF (gfx9's translate-further walk)."""
        table, table_sys = root
        va = vpn << gmc.PAGE_SHIFT
        for level in gmc.Level:
            entry_pa = table + gmc.level_index(va, level) * gmc.ENTRY_SIZE
            try:
                word = self.phys.read_u64(entry_pa, table_sys)
            except PhysicalAddressError:
                return f"{level.name} table entry at unbacked {'system' if table_sys else 'VRAM'} PA {entry_pa:#x}"
            if further and level == gmc.Level.PDB0 and not word & gmc.PTE_TF:
                return _leaf(word, vpn, level, self.format.prt)
            if level == gmc.Level.PTB or (word & self.format.huge and not (further and level == gmc.Level.PDB0)):
                return _leaf(word, vpn, level, self.format.prt)
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
        return Leaf(0, vpn, pa >> gmc.PAGE_SHIFT, R | W | X)


def _leaf(word: int, vpn: int, level: gmc.Level, prt: int = gmc.PTE_PRT) -> Leaf | str:
    """The leaf for `vpn` from a PTE (or PDE_PTE) word found at `level`; `prt` is the format's PRT bit."""
    if not word & gmc.PTE_VALID:
        if word & prt:
            return Leaf(0, vpn, 0, PRT)
        return "PTE not valid" if level == gmc.Level.PTB else f"PDE not valid at {level.name} (huge-page entry)"
    bits = R * bool(word & gmc.PTE_READABLE) | W * bool(word & gmc.PTE_WRITEABLE) | \
        X * bool(word & gmc.PTE_EXECUTABLE) | SYS * bool(word & gmc.PTE_SYSTEM)
    entry_log2 = gmc.level_shift(level) - gmc.PAGE_SHIFT
    entry_va = vpn >> entry_log2 << entry_log2
    entry_pa = (word & gmc.PTE_ADDR_MASK) >> gmc.PAGE_SHIFT
    log2 = max(entry_log2, gmc.pte_fragment(word))
    leaf_va = vpn >> log2 << log2
    if entry_va - leaf_va > entry_pa:  # a fragment reaching below PA 0 cannot be contiguous: ignore it
        log2, leaf_va = entry_log2, entry_va
    return Leaf(log2, leaf_va, entry_pa - (entry_va - leaf_va), bits)


def canonical(va: int) -> bool:
    """True if `va` is a sign-extended 48-bit address."""
    top = (va & ((1 << 64) - 1)) >> (gmc.VA_BITS - 1)
    return top == 0 or top == (1 << (64 - gmc.VA_BITS + 1)) - 1


def check_vmid(vmid: int) -> int:
    """Validate a VMID (0..15)."""
    if not 0 <= vmid < gmc.NUM_VMIDS:
        raise ValueError(f"VMID {vmid} out of range 0..{gmc.NUM_VMIDS - 1}")
    return vmid
