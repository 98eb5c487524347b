"""`Dispatch`: everything the shader engine needs to launch a grid, however it was submitted.

The command processor builds one from COMPUTE_* registers (PM4) or from an AQL kernel-dispatch
packet; tests build one directly. The kernel's register counts, enabled inputs and float modes are
its `KernelDescriptor` (for PM4, the one the COMPUTE_PGM_RSRC* registers and the initiator's wave size
describe); the other field names follow the HSA packet.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simgpu.hw.regs import PGM_RSRC3_GFX90A
from simgpu.isa.arch import get_arch
from simgpu.isa.kdescriptor import KernelDescriptor

# gfx90a and gfx942 (family gfx9 here) have one VGPR file of 512 registers per lane, shared by the ArchVGPRs (v0...)
# and the AccVGPRs (a0...): GRANULATED_WORKITEM_VGPR_COUNT counts both in blocks of 8, and the AccVGPRs start at
# ACCUM_OFFSET (COMPUTE_PGM_RSRC3; AMDGPUUsage, "Kernel Descriptor").
UNIFIED_VGPR_GRANULE, UNIFIED_VGPRS = 8, 512


@dataclass
class Dispatch:
    """One kernel launch: code, descriptor, user SGPR inputs, grid shape, segments."""

    code_address: int  # virtual address of the first instruction
    descriptor: KernelDescriptor
    grid: tuple[int, int, int] = (1, 1, 1)  # work-items in each dimension (HSA grid_size)
    workgroup: tuple[int, int, int] = (32, 1, 1)  # work-items per workgroup
    kernarg_address: int = 0
    dispatch_ptr: int = 0  # address of the AQL packet (or an equivalent the CP wrote)
    queue_ptr: int = 0  # address of amd_queue_t
    dispatch_id: int = 0
    group_segment_size: int = 0  # LDS bytes per workgroup (static + dynamic)
    private_segment_size: int = 0  # scratch bytes per work-item
    vmid: int = 0
    user_sgprs: list[int] | None = None  # PM4 path: COMPUTE_USER_DATA_* values, used as-is
    grid_offset: tuple[int, int, int] = (0, 0, 0)  # COMPUTE_START_X/Y/Z, in workgroups
    extra: dict = field(default_factory=dict)
    queue: str = ""  # the queue that launched it (named in the interrupts its waves raise)
    arch: str = "gfx1100"  # the architecture whose machine code the engine decodes (the device's, simgpu.isa.arch)

    @property
    def wave_size(self) -> int:
        """32 or 64 lanes per wave."""
        return self.descriptor.wavefront_size

    @property
    def unified_vgprs(self) -> bool:
        """Whether the architecture has the unified ArchVGPR/AccVGPR file (gfx942)."""
        return get_arch(self.arch).family == "gfx9"

    @property
    def vgpr_count(self) -> int:
        """VGPRs allocated per wave (at most the 256 a wave can address); on gfx942 the whole unified file the
        descriptor allocates, AccVGPRs included (up to 512)."""
        if self.unified_vgprs:
            return min(UNIFIED_VGPRS, (self.descriptor.granulated_workitem_vgpr_count + 1) * UNIFIED_VGPR_GRANULE)
        return min(256, self.descriptor.vgpr_count)

    @property
    def accum_offset(self) -> int:
        """Where AccVGPR a0 is in the wave's VGPR file (gfx942's ACCUM_OFFSET; elsewhere past the file: no AGPRs)."""
        if self.unified_vgprs:
            return (PGM_RSRC3_GFX90A.accum_offset.get(self.descriptor.compute_pgm_rsrc3) + 1) * 4
        return self.vgpr_count

    @property
    def workgroups(self) -> tuple[int, int, int]:
        """Workgroups in each dimension (partial workgroups at the edges count)."""
        return tuple(-(-g // w) for g, w in zip(self.grid, self.workgroup, strict=True))
