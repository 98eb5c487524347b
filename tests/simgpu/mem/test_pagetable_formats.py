"""Page tables in each generation's flag positions: what the mock kernel driver writes for a chip is what amdgpu
writes for that GC, and the chip's walker reads it.

The expected bits are amdgpu_vm.h's definitions, written out here rather than taken from simgpu.hw.gmc:
  gfx9    AMDGPU_PTE_MTYPE_VG10(a)  = a << 57 (2 bits), AMDGPU_PDE_PTE = 1 << 54, AMDGPU_PTE_PRT = 1 << 51
  gfx11   AMDGPU_PTE_MTYPE_NV10(a)  = a << 48 (3 bits), AMDGPU_PDE_PTE = 1 << 54, AMDGPU_PTE_PRT = 1 << 51
  gfx12   AMDGPU_PTE_MTYPE_GFX12(a) = a << 54 (2 bits), AMDGPU_PDE_PTE_GFX12 = 1 << 63, AMDGPU_PTE_PRT_GFX12 = 1 << 56
"""

import pytest

from mockgpu.memory import PAGE, VM, Allocation
from runtime.uapi import kfd
from simgpu.gpu import GPU
from simgpu.hw import gmc
from simgpu.mem import PageTableBuilder
from simgpu.mem.physical import PhysicalMemory
from simgpu.mem.walker import Leaf, PageWalker

HUGE = {"gfx9": 1 << 54, "gfx11": 1 << 54, "gfx12": 1 << 63}
PRT = {"gfx9": 1 << 51, "gfx11": 1 << 51, "gfx12": 1 << 56}
MTYPE_SHIFT = {"gfx9": 57, "gfx11": 48, "gfx12": 54}
ARCH_FAMILY = {"gfx942": "gfx9", "gfx1100": "gfx11", "gfx1201": "gfx12"}
UC = 3  # MTYPE_UC in every generation's enum
VA, PA, MIB2 = 0x4000_0000, 0x80_0000, 2 << 20


@pytest.mark.parametrize("family", sorted(HUGE))
def test_builder_writes_the_generation_s_bits(family):
    phys = PhysicalMemory(64 << 20)
    pool = iter(range(32 << 20, 64 << 20, PAGE))
    pt = PageTableBuilder(phys, lambda: next(pool), fmt=gmc.pte_format(family))
    pt.map(VA, MIB2, PA, mtype=UC)  # one 2 MiB huge page at PDB0
    pt.map(VA + MIB2, PAGE, PA + MIB2, mtype=UC)  # one 4 KiB page: a PTB below PDB0
    level, word = pt.entry(VA)
    assert level == gmc.Level.PDB0 and word & HUGE[family]
    assert (word >> MTYPE_SHIFT[family]) & 3 == UC and not word & PRT[family]
    if family != "gfx12":
        assert not word & HUGE["gfx12"]  # bit 63 means nothing before gfx12
    level, word = pt.entry(VA + MIB2)
    assert level == gmc.Level.PTB and not word & HUGE["gfx12"] and (word >> MTYPE_SHIFT[family]) & 3 == UC


@pytest.mark.parametrize("arch", sorted(ARCH_FAMILY))
def test_the_mock_driver_writes_the_chip_s_format_and_its_gpu_walks_it(arch):
    family = ARCH_FAMILY[arch]
    vm = VM(GPU(1 << 30, arch=arch), 8)
    flags = kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | kfd.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
    a = Allocation(1, 0, "vram", VA, 2 * MIB2, flags, pa=PA)
    vm.map(a, a.pa, False)
    level, word = vm.tables.entry(VA)
    assert level == gmc.Level.PDB0 and word & HUGE[family]
    leaf = vm.gpu.mmu.walk(8, VA + MIB2 + 0x1234)
    assert isinstance(leaf, Leaf) and leaf.log2 == 10 and leaf.pa_page == PA >> 12  # one 4 MiB fragment
    vm.unmap(a)
    level, word = vm.tables.entry(VA)
    assert word == HUGE[family]  # cleared: a huge-page PTE with VALID clear (amdgpu_vm_pt_clear)
    assert isinstance(vm.gpu.mmu.walk(8, VA), str)


def test_gfx9_translate_further_walks_pdb0_ptes_into_a_ptb_only_with_pte_tf():
    """gfx9's 3-level mode (VM_CONTEXTn_CNTL depth 2, block size 9, what tinygrad's AM driver programs): a PDB0 entry
    is a PTE -- a 2 MiB page unless AMDGPU_PTE_TF (bit 56) sends the walk into a PTB; PDB1 entries carry
    AMDGPU_PDE_BFS(9) (bits 63:59). Bits written out from amdgpu_vm.h."""
    tf, bfs9, valid, rwx = 1 << 56, 9 << 59, 1, 0x70  # readable, writeable, executable
    phys = PhysicalMemory(64 << 20)
    gpu_tables = [0x10_0000 + i * PAGE for i in range(4)]  # PDB2, PDB1, PDB0, PTB
    pdb2, pdb1, pdb0, ptb = gpu_tables

    def put(table: int, index: int, word: int) -> None:
        phys.write(table + 8 * index, word.to_bytes(8, "little"))

    put(pdb2, 0, pdb1 | valid)
    put(pdb1, 1, pdb0 | valid | bfs9)  # VA 1 GiB..2 GiB
    put(pdb0, 0, ptb | valid | tf)  # VA 1 GiB + [0, 2 MiB): translate further into the PTB
    put(ptb, 3, 0x30_0000 | valid | rwx)
    put(pdb0, 1, 0x40_0000 | valid | rwx)  # VA 1 GiB + [2, 4) MiB: a 2 MiB page, no PDE_PTE bit needed
    walker = PageWalker(phys, gmc.pte_format("gfx9"))
    walker.set_root(0, pdb2 | valid)
    walker.set_translate_further(0, True)
    leaf = walker.walk(0, (1 << 30) + 3 * PAGE + 0x10)
    assert isinstance(leaf, Leaf) and leaf.log2 == 0 and leaf.pa_page == 0x30_0000 >> 12
    leaf = walker.walk(0, (1 << 30) + MIB2 + 0x1234)
    assert isinstance(leaf, Leaf) and leaf.log2 == 9 and leaf.pa_page == 0x40_0000 >> 12
    walker.set_translate_further(0, False)  # the same PDB0 entry read as gfx11 reads it: a pointer to a table
    assert isinstance(walker.walk(0, (1 << 30) + MIB2), str)  # (to "PA 0x400000", whose entries are zeros)
