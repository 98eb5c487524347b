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

from simgpu.hw.bits import Field, Layout

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


# ---- PTE and PDE fields -------------------------------------------------------------------------------
PTE_FIELDS = Layout(valid=Field(0), system=Field(1), snooped=Field(2), tmz=Field(3), executable=Field(4),
                    readable=Field(5), writeable=Field(6), fragment=Field(7, 5), mtype=Field(48, 3),  # NV10 MTYPE
                    prt=Field(51), log=Field(55), tf=Field(56), noalloc=Field(58))
PTE_ADDR_MASK = 0x0000_FFFF_FFFF_F000  # bits 47:12
PDE_FIELDS = Layout(valid=Field(0), system=Field(1), coherent=Field(2), pte=Field(54), bfs=Field(59, 5))
PDE_ADDR_MASK = 0x0000_FFFF_FFFF_FFC0  # bits 47:6
_PTE_FLAGS = ("valid", "system", "snooped", "tmz", "executable", "readable", "writeable", "prt")

# Single bits as masks, for the MMU's page walk.
PTE_VALID = PTE_FIELDS.valid.bits()
PTE_SYSTEM = PTE_FIELDS.system.bits()
PTE_SNOOPED = PTE_FIELDS.snooped.bits()
PTE_TMZ = PTE_FIELDS.tmz.bits()
PTE_EXECUTABLE = PTE_FIELDS.executable.bits()
PTE_READABLE = PTE_FIELDS.readable.bits()
PTE_WRITEABLE = PTE_FIELDS.writeable.bits()
PTE_FRAG_MASK = PTE_FIELDS.fragment.bits(-1)
PTE_PRT = PTE_FIELDS.prt.bits()
PTE_TF = PTE_FIELDS.tf.bits()
PDE_VALID = PDE_FIELDS.valid.bits()
PDE_SYSTEM = PDE_FIELDS.system.bits()
PDE_PTE = PDE_FIELDS.pte.bits()


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
        return encode_pte(self.address, fragment=self.fragment, mtype=self.mtype,
                          **{name: getattr(self, name) for name in _PTE_FLAGS})

    @classmethod
    def decode(cls, word: int) -> PTE:
        """Decode a 64-bit PTE word (reserved and software bits are dropped)."""
        f = PTE_FIELDS.unpack(word)
        return cls(address=word & PTE_ADDR_MASK, fragment=f["fragment"], mtype=f["mtype"],
                   **{name: bool(f[name]) for name in _PTE_FLAGS})


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
        f = PDE_FIELDS.unpack(word)
        return cls(address=word & PDE_ADDR_MASK, valid=bool(f["valid"]), system=bool(f["system"]),
                   coherent=bool(f["coherent"]), bfs=f["bfs"])


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
    return address | PTE_FIELDS.pack(valid=valid, system=system, snooped=snooped, tmz=tmz, executable=executable,
                                     readable=readable, writeable=writeable, fragment=fragment, mtype=mtype, prt=prt)


def encode_pde(address: int, *, valid: bool = True, system: bool = False, coherent: bool = False,
               bfs: int = 0) -> int:
    """A PDE word pointing at the next-level table at physical `address` (64-byte aligned)."""
    if address & ~PDE_ADDR_MASK:
        raise ValueError(f"PDE address {address:#x} is not a 64-byte aligned 48-bit address")
    if not 0 <= bfs <= 0x1F:
        raise ValueError(f"PDE block fragment size {bfs} out of range 0..31")
    return address | PDE_FIELDS.pack(valid=valid, system=system, coherent=coherent, bfs=bfs)


def encode_huge_pde(address: int, **pte_flags) -> int:
    """A directory entry that is itself a PTE (PDE_PTE set): a huge page; flags as for encode_pte."""
    return encode_pte(address, **pte_flags) | PDE_PTE


def is_huge(word: int) -> bool:
    """True if this directory entry is a huge-page PTE (PDE_PTE set)."""
    return bool(word & PDE_PTE)


# ---- per-generation flag positions (amdgpu_vm.h) ------------------------------------------------------------------
# The geometry, the address bits and bits 0-11 are the same from Vega10 to gfx12; the flags above bit 47 moved.
# gfx9 (AMDGPU_PTE_MTYPE_VG10) keeps MTYPE at 58:57, gfx10/11 (AMDGPU_PTE_MTYPE_NV10) at 50:48; both mark a huge-page
# directory entry with bit 54 (AMDGPU_PDE_PTE) and PRT with bit 51. gfx12 moves MTYPE to 55:54
# (AMDGPU_PTE_MTYPE_GFX12), PRT to 56 (AMDGPU_PTE_PRT_GFX12) and the huge-page mark to bit 63 (AMDGPU_PDE_PTE_GFX12,
# which a PTE also carries as AMDGPU_PTE_IS_PTE): bit 54, the older PDE_PTE, is part of gfx12's MTYPE.
PDE_PTE_GFX12 = 1 << 63
PTE_PRT_GFX12 = 1 << 56


@dataclass(frozen=True)
class PteFormat:
    """The PDE/PTE flag positions that differ between GPU generations: what a driver writes and the walk reads."""

    name: str
    huge: int  # a directory entry with this bit is a huge-page PTE (amdgpu's PDE_PTE flag)
    prt: int
    mtype: Field

    def pte(self, address: int, *, mtype: int = MType.NC, prt: bool = False, **flags) -> int:
        """A PTE word in this format (flags as for encode_pte)."""
        if not 0 <= mtype < 1 << self.mtype.width:
            raise ValueError(f"PTE mtype {mtype} out of range for {self.name}'s {self.mtype.width}-bit field")
        return encode_pte(address, **flags) | self.mtype.bits(mtype) | (self.prt if prt else 0)


GFX9_FORMAT = PteFormat("gfx9", PDE_PTE, PTE_PRT, Field(57, 2))
GFX11_FORMAT = PteFormat("gfx11", PDE_PTE, PTE_PRT, PTE_FIELDS.mtype)
GFX12_FORMAT = PteFormat("gfx12", PDE_PTE_GFX12, PTE_PRT_GFX12, Field(54, 2))
_FORMATS = {"gfx9": GFX9_FORMAT, "gfx11": GFX11_FORMAT, "gfx12": GFX12_FORMAT}


def pte_format(family: str) -> PteFormat:
    """The page-table format of an ISA family (a Chip's `family`: "gfx9", "gfx11", "gfx12")."""
    return _FORMATS[family]


def pte_fragment(word: int) -> int:
    """The fragment field of a PTE word."""
    return PTE_FIELDS.fragment.get(word)
