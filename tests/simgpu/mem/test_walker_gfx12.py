"""The page walk in gfx12's PDE/PTE form, from amdgpu_vm.h's definitions written out here: a directory entry with
bit 63 (AMDGPU_PDE_PTE_GFX12) is a huge-page PTE; bits 55:54 are the MTYPE (AMDGPU_PTE_MTYPE_GFX12), so bit 54 --
gfx11's AMDGPU_PDE_PTE -- must not end the walk; PRT is bit 56 (AMDGPU_PTE_PRT_GFX12)."""

from simgpu.hw import gmc
from simgpu.mem.physical import PhysicalMemory
from simgpu.mem.walker import PRT, Leaf, PageWalker, R, W

VALID, READ, WRITE = 1 << 0, 1 << 5, 1 << 6
PDE_PTE_GFX12, MTYPE_UC_GFX12, PRT_GFX12 = 1 << 63, 3 << 54, 1 << 56
ROOT, PDB1, PDB0, PTB = 0x1000, 0x2000, 0x3000, 0x4000  # one table per level, VA 0 upward


def _walker() -> PageWalker:
    phys = PhysicalMemory(16 << 20)
    w = PageWalker(phys)
    w.format = gmc.GFX12_FORMAT
    w.set_root(0, ROOT | VALID)
    for table, child in ((ROOT, PDB1), (PDB1, PDB0)):
        phys.write_u64(table, child | VALID | MTYPE_UC_GFX12)  # tinygrad puts its MTYPE on uncached PDEs too
    phys.write_u64(PDB0, PTB | VALID | MTYPE_UC_GFX12)  # entry 0: a table (bit 54 set, bit 63 clear)
    phys.write_u64(PDB0 + 8, 0x40_0000 | VALID | READ | WRITE | PDE_PTE_GFX12)  # entry 1: a 2 MiB page at 4 MiB
    phys.write_u64(PTB + 8 * 3, 0x9000 | VALID | READ | MTYPE_UC_GFX12)  # VA page 3 -> PA 0x9000, read-only
    phys.write_u64(PTB + 8 * 4, PRT_GFX12)  # VA page 4: a PRT hole
    return w


def test_bit_54_is_mtype_not_a_huge_page_and_the_walk_reaches_the_ptb():
    assert _walker().walk(0, 0x3000) == Leaf(0, 3, 9, R)


def test_bit_63_makes_a_pdb0_entry_a_2mib_page():
    leaf = _walker().walk(0, 0x20_0000 + 0x1234)
    assert (leaf.log2, leaf.va_page, leaf.pa_page, leaf.bits) == (9, 0x200, 0x400, R | W)


def test_prt_is_bit_56():
    assert _walker().walk(0, 0x4000).bits == PRT


def test_the_same_tables_read_as_gfx11_end_at_the_mtype_bit():
    w = _walker()
    w.format = gmc.GFX11_FORMAT  # bit 54 is gfx11's PDE_PTE: the root's entry reads as a huge page
    leaf = w.walk(0, 0x3000)
    assert isinstance(leaf, Leaf) and leaf.log2 == 27 and leaf.pa_page == PDB1 >> 12
