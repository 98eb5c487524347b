"""GMC v11 (gfx11) GPUVM page-table format: PTE and PDE words, levels and VA geometry.

Facts from amdgpu (drivers/gpu/drm/amd/amdgpu/amdgpu_vm.h, amdgpu_vm_pt.c, gmc_v11_0.c):

PTE (64 bits): 0 valid, 1 system, 2 snooped, 3 TMZ, 4 executable, 5 readable, 6 writeable,
11:7 fragment, 47:12 physical page address, 50:48 MTYPE (NV10 position), 51 PRT ("T"),
53:52 software, 55 LOG, 56 TF (translate further), 58 NOALLOC.
PDE (64 bits): 0 valid, 1 system, 2 coherent, 47:6 physical address of the next PD/PT,
54 PDE_PTE ("P": this PDE is a huge-page PTE, the low bits then read as PTE flags), 63:59 BFS.

gfx11 uses a 48-bit VA, 4 KiB pages and four levels of 9 bits (amdgpu_vm_adjust_size(adev, 256 TiB,
9, 3, 48): three directory levels below the root, block size 9): PDB2 -> PDB1 -> PDB0 -> PTB.
Vega10 and later accept huge pages at any directory level (a PDE with PDE_PTE set; amdgpu writes them
when a fragment covers a whole directory entry, e.g. 2 MiB at PDB0, 1 GiB at PDB1) and fragments up to
2^31 pages. Cleared directory entries are written as PDE_PTE with VALID clear.

This module is shared: the mock kernel driver writes page tables with it, the MMU reads them.
May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

# ---- geometry -------------------------------------------------------------------------------------
PAGE_SHIFT = 12
PAGE_SIZE = 1 << PAGE_SHIFT
VA_BITS = 48
VA_MASK = (1 << VA_BITS) - 1
BLOCK_BITS = 9  # amdgpu vm block_size: 512 entries per PD/PT
ENTRIES_PER_TABLE = 1 << BLOCK_BITS
ENTRY_SIZE = 8
TABLE_SIZE = ENTRIES_PER_TABLE * ENTRY_SIZE  # 4 KiB, one GPU page per PD/PT
NUM_VMIDS = 16


class Level(IntEnum):
    """Page-table levels, root first (amdgpu enum amdgpu_vm_level)."""

    PDB2 = 0
    PDB1 = 1
    PDB0 = 2
    PTB = 3


def level_shift(level: Level) -> int:
    """Address bit where this level's index starts (PTB 12, PDB0 21, PDB1 30, PDB2 39)."""
    return PAGE_SHIFT + BLOCK_BITS * (Level.PTB - level)


def level_index(va: int, level: Level) -> int:
    """Index of the entry for `va` in a table of this level."""
    return (va >> level_shift(level)) & (ENTRIES_PER_TABLE - 1)


# ---- PTE bits ---------------------------------------------------------------------------------------
PTE_VALID = 1 << 0
PTE_SYSTEM = 1 << 1
PTE_SNOOPED = 1 << 2
PTE_TMZ = 1 << 3
PTE_EXECUTABLE = 1 << 4
PTE_READABLE = 1 << 5
PTE_WRITEABLE = 1 << 6
PTE_FRAG_SHIFT = 7
PTE_FRAG_MASK = 0x1F << PTE_FRAG_SHIFT
PTE_ADDR_MASK = 0x0000_FFFF_FFFF_F000  # bits 47:12
PTE_MTYPE_SHIFT = 48  # AMDGPU_PTE_MTYPE_NV10
PTE_MTYPE_MASK = 0x7 << PTE_MTYPE_SHIFT
PTE_PRT = 1 << 51
PTE_LOG = 1 << 55
PTE_TF = 1 << 56
PTE_NOALLOC = 1 << 58

# ---- PDE bits ---------------------------------------------------------------------------------------
PDE_VALID = PTE_VALID
PDE_SYSTEM = PTE_SYSTEM
PDE_COHERENT = 1 << 2
PDE_ADDR_MASK = 0x0000_FFFF_FFFF_FFC0  # bits 47:6
PDE_PTE = 1 << 54
PDE_BFS_SHIFT = 59
PDE_BFS_MASK = 0x1F << PDE_BFS_SHIFT


class MType(IntEnum):
    """Memory type field (enum MTYPE of the gfx10/11 register headers)."""

    NC = 0
    WC = 1
    CC = 2
    UC = 3


@dataclass(frozen=True)
class PTE:
    """A decoded page-table entry (also the PTE view of a PDE_PTE huge-page directory entry)."""

    address: int = 0  # physical address, 4 KiB aligned (bits 47:12)
    valid: bool = False
    system: bool = False
    snooped: bool = False
    tmz: bool = False
    executable: bool = False
    readable: bool = False
    writeable: bool = False
    fragment: int = 0  # the entry belongs to a 2^(12 + fragment) byte contiguous, aligned block
    mtype: int = MType.NC
    prt: bool = False

    def encode(self) -> int:
        """The 64-bit PTE word."""
        return encode_pte(self.address, valid=self.valid, system=self.system, snooped=self.snooped,
                          tmz=self.tmz, executable=self.executable, readable=self.readable,
                          writeable=self.writeable, fragment=self.fragment, mtype=self.mtype, prt=self.prt)

    @classmethod
    def decode(cls, word: int) -> PTE:
        """Decode a 64-bit PTE word (reserved and software bits are dropped)."""
        return cls(address=word & PTE_ADDR_MASK, valid=bool(word & PTE_VALID), system=bool(word & PTE_SYSTEM),
                   snooped=bool(word & PTE_SNOOPED), tmz=bool(word & PTE_TMZ),
                   executable=bool(word & PTE_EXECUTABLE), readable=bool(word & PTE_READABLE),
                   writeable=bool(word & PTE_WRITEABLE), fragment=pte_fragment(word),
                   mtype=(word & PTE_MTYPE_MASK) >> PTE_MTYPE_SHIFT, prt=bool(word & PTE_PRT))


@dataclass(frozen=True)
class PDE:
    """A decoded page-directory entry that points at the next level (PDE_PTE clear)."""

    address: int = 0  # physical address of the next PD/PT (bits 47:6)
    valid: bool = False
    system: bool = False
    coherent: bool = False
    bfs: int = 0  # block fragment size (only used with translate_further, which gfx11 does not enable)

    def encode(self) -> int:
        """The 64-bit PDE word."""
        return encode_pde(self.address, valid=self.valid, system=self.system, coherent=self.coherent, bfs=self.bfs)

    @classmethod
    def decode(cls, word: int) -> PDE:
        """Decode a 64-bit PDE word."""
        return cls(address=word & PDE_ADDR_MASK, valid=bool(word & PDE_VALID), system=bool(word & PDE_SYSTEM),
                   coherent=bool(word & PDE_COHERENT), bfs=(word & PDE_BFS_MASK) >> PDE_BFS_SHIFT)


def encode_pte(address: int, *, valid: bool = True, system: bool = False, snooped: bool = False,
               tmz: bool = False, executable: bool = False, readable: bool = True, writeable: bool = True,
               fragment: int = 0, mtype: int = MType.NC, prt: bool = False) -> int:
    """A PTE word mapping the 4 KiB aligned physical `address`."""
    if address & ~PTE_ADDR_MASK:
        raise ValueError(f"PTE address {address:#x} is not a 4 KiB aligned 48-bit address")
    if not 0 <= fragment <= 0x1F:
        raise ValueError(f"PTE fragment {fragment} out of range 0..31")
    if not 0 <= mtype <= 7:
        raise ValueError(f"PTE mtype {mtype} out of range 0..7")
    word = address | (fragment << PTE_FRAG_SHIFT) | (mtype << PTE_MTYPE_SHIFT)
    for flag, bit in ((valid, PTE_VALID), (system, PTE_SYSTEM), (snooped, PTE_SNOOPED), (tmz, PTE_TMZ),
                      (executable, PTE_EXECUTABLE), (readable, PTE_READABLE), (writeable, PTE_WRITEABLE),
                      (prt, PTE_PRT)):
        if flag:
            word |= bit
    return word


def encode_pde(address: int, *, valid: bool = True, system: bool = False, coherent: bool = False,
               bfs: int = 0) -> int:
    """A PDE word pointing at the next-level table at physical `address` (64-byte aligned)."""
    if address & ~PDE_ADDR_MASK:
        raise ValueError(f"PDE address {address:#x} is not a 64-byte aligned 48-bit address")
    if not 0 <= bfs <= 0x1F:
        raise ValueError(f"PDE block fragment size {bfs} out of range 0..31")
    word = address | (bfs << PDE_BFS_SHIFT)
    if valid:
        word |= PDE_VALID
    if system:
        word |= PDE_SYSTEM
    if coherent:
        word |= PDE_COHERENT
    return word


def encode_huge_pde(address: int, **pte_flags) -> int:
    """A directory entry that is itself a PTE (PDE_PTE set): a huge page; flags as for encode_pte."""
    return encode_pte(address, **pte_flags) | PDE_PTE


def is_huge(word: int) -> bool:
    """True if this directory entry is a huge-page PTE (PDE_PTE set)."""
    return bool(word & PDE_PTE)


def pte_fragment(word: int) -> int:
    """The fragment field of a PTE word."""
    return (word & PTE_FRAG_MASK) >> PTE_FRAG_SHIFT
