"""`Dispatch`: everything the shader engine needs to launch a grid, however it was submitted.

The command processor builds one from COMPUTE_* registers (PM4) or from an AQL kernel-dispatch
packet; tests build one directly. Field names follow the kernel descriptor and the HSA packet.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# kernel_code_properties bits (AMDGPUUsage, "Kernel Descriptor").
KCP_PRIVATE_SEGMENT_BUFFER = 1 << 0
KCP_DISPATCH_PTR = 1 << 1
KCP_QUEUE_PTR = 1 << 2
KCP_KERNARG_SEGMENT_PTR = 1 << 3
KCP_DISPATCH_ID = 1 << 4
KCP_FLAT_SCRATCH_INIT = 1 << 5
KCP_PRIVATE_SEGMENT_SIZE = 1 << 6
KCP_WAVEFRONT_SIZE32 = 1 << 10


@dataclass
class Dispatch:
    """One kernel launch: code, descriptor fields, user SGPR inputs, grid shape, segments."""

    code_address: int  # virtual address of the first instruction
    rsrc1: int
    rsrc2: int
    rsrc3: int = 0
    kernel_code_properties: int = KCP_KERNARG_SEGMENT_PTR | KCP_WAVEFRONT_SIZE32
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

    @property
    def wave32(self) -> bool:
        return bool(self.kernel_code_properties & KCP_WAVEFRONT_SIZE32)

    @property
    def wave_size(self) -> int:
        return 32 if self.wave32 else 64

    @property
    def user_sgpr_count(self) -> int:
        return (self.rsrc2 >> 1) & 0x1F

    @property
    def vgpr_count(self) -> int:
        """VGPRs allocated per wave: rsrc1 granule (8 for wave32, 4 for wave64 on gfx11)."""
        granule = 8 if self.wave32 else 4
        return min(256, ((self.rsrc1 & 0x3F) + 1) * granule)

    @property
    def workgroups(self) -> tuple[int, int, int]:
        """Workgroups in each dimension (partial workgroups at the edges count)."""
        return tuple(-(-g // w) for g, w in zip(self.grid, self.workgroup, strict=True))
