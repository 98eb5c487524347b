"""simgpu.mem: simulated physical memory (VRAM, system aperture) and the GPUVM MMU.

`PhysicalMemory` owns the bytes, `MMU` translates per-VMID virtual addresses through real gfx11 page
tables (format in simgpu.hw.gmc) and gives the shader engine vectorized gather/scatter/atomics and the
command processors byte-range reads and writes; it is a composition of one object per job (walker,
UTCL2, linear windows, lane and range access: see simgpu.mem.mmu). `PageTableBuilder` writes page tables
for the mock driver and tests.

May import: simgpu.hw, simgpu.fault.
"""

from simgpu.mem.mmu import MMU, Leaf, Translation
from simgpu.mem.pagetable import PageTableBuilder, bump_allocator
from simgpu.mem.physical import DEFAULT_VRAM_SIZE, PhysicalAddressError, PhysicalMemory

__all__ = ["DEFAULT_VRAM_SIZE", "MMU", "Leaf", "PageTableBuilder", "PhysicalAddressError", "PhysicalMemory",
           "Translation", "bump_allocator"]
