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
from simgpu.mem.walker import Leaf

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
