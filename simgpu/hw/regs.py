"""gfx11 (GC 11.0.0) register addresses a compute queue programs, as absolute dword addresses.

From amdgpu's gc_11_0_0_offset.h (GC register base 0x1260 for base index 0; regCOMPUTE_DISPATCH_INITIATOR
is 0x1ba0 there, i.e. dword 0x2E00, byte 0xB800 as mesa's sid.h names it R_00B800) and nvd.h's packet
ranges. SET_SH_REG takes `reg - SH_REG_START`, SET_UCONFIG_REG `reg - UCONFIG_REG_START`.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

SH_REG_START = 0x2C00
SH_REG_END = 0x3000
# nvd.h says 0xC400 for the end; gfx11's UCONFIG space (GRBM_GFX_INDEX, CP_* counters, ...) reaches
# further, so the simulator accepts the whole 0xC000..0x10000 aperture.
UCONFIG_REG_START = 0xC000
UCONFIG_REG_END = 0x10000

COMPUTE_DISPATCH_INITIATOR = 0x2E00
COMPUTE_DIM_X = 0x2E01
COMPUTE_DIM_Y = 0x2E02
COMPUTE_DIM_Z = 0x2E03
COMPUTE_START_X = 0x2E04
COMPUTE_START_Y = 0x2E05
COMPUTE_START_Z = 0x2E06
COMPUTE_NUM_THREAD_X = 0x2E07  # [15:0] NUM_THREAD_FULL, [31:16] NUM_THREAD_PARTIAL
COMPUTE_NUM_THREAD_Y = 0x2E08
COMPUTE_NUM_THREAD_Z = 0x2E09
COMPUTE_PIPELINESTAT_ENABLE = 0x2E0A
COMPUTE_PERFCOUNT_ENABLE = 0x2E0B
COMPUTE_PGM_LO = 0x2E0C  # code address >> 8
COMPUTE_PGM_HI = 0x2E0D
COMPUTE_DISPATCH_PKT_ADDR_LO = 0x2E0E
COMPUTE_DISPATCH_PKT_ADDR_HI = 0x2E0F
COMPUTE_DISPATCH_SCRATCH_BASE_LO = 0x2E10  # scratch address >> 8
COMPUTE_DISPATCH_SCRATCH_BASE_HI = 0x2E11
COMPUTE_PGM_RSRC1 = 0x2E12
COMPUTE_PGM_RSRC2 = 0x2E13
COMPUTE_VMID = 0x2E14
COMPUTE_RESOURCE_LIMITS = 0x2E15
COMPUTE_STATIC_THREAD_MGMT_SE0 = 0x2E16
COMPUTE_STATIC_THREAD_MGMT_SE1 = 0x2E17
COMPUTE_TMPRING_SIZE = 0x2E18  # [11:0] WAVES, [26:12] WAVESIZE (gfx11: 256-byte units per wave)
COMPUTE_STATIC_THREAD_MGMT_SE2 = 0x2E19
COMPUTE_STATIC_THREAD_MGMT_SE3 = 0x2E1A
COMPUTE_RESTART_X = 0x2E1B
COMPUTE_RESTART_Y = 0x2E1C
COMPUTE_RESTART_Z = 0x2E1D
COMPUTE_THREAD_TRACE_ENABLE = 0x2E1E
COMPUTE_MISC_RESERVED = 0x2E1F
COMPUTE_DISPATCH_ID = 0x2E20
COMPUTE_THREADGROUP_ID = 0x2E21
COMPUTE_REQ_CTRL = 0x2E22
COMPUTE_USER_ACCUM_0 = 0x2E24
COMPUTE_PGM_RSRC3 = 0x2E28
COMPUTE_DDID_INDEX = 0x2E29
COMPUTE_SHADER_CHKSUM = 0x2E2A
COMPUTE_STATIC_THREAD_MGMT_SE4 = 0x2E2B
COMPUTE_DISPATCH_INTERLEAVE = 0x2E2F
COMPUTE_USER_DATA_0 = 0x2E40
NUM_USER_DATA = 16


def compute_user_data(i: int) -> int:
    """COMPUTE_USER_DATA_i (0..15)."""
    if not 0 <= i < NUM_USER_DATA:
        raise ValueError(f"COMPUTE_USER_DATA_{i} does not exist")
    return COMPUTE_USER_DATA_0 + i


TMPRING_WAVESIZE_UNIT = 256  # bytes per WAVESIZE unit on gfx11
LDS_SIZE_UNIT = 512  # COMPUTE_PGM_RSRC2.LDS_SIZE granule on gfx11 (128 dwords)


def tmpring_size(waves: int, wave_bytes: int) -> int:
    """COMPUTE_TMPRING_SIZE for `waves` waves of `wave_bytes` scratch bytes each."""
    return (waves & 0xFFF) | (((-(-wave_bytes // TMPRING_WAVESIZE_UNIT)) & 0x7FFF) << 12)


# NBIO 4.3 (Navi 31) host data path flush, as dword register offsets (base segment 2 = 0xD20, + 0x106/0x107):
# amdgpu and tinygrad flush the HDP before a kernel with a WAIT_REG_MEM that writes REQ and waits for DONE.
BIF_BX_PF0_GPU_HDP_FLUSH_REQ = 0xE26
BIF_BX_PF0_GPU_HDP_FLUSH_DONE = 0xE27

NAMES = {v: k for k, v in globals().items() if k.startswith(("COMPUTE_", "BIF_")) and isinstance(v, int)}
NAMES.update({COMPUTE_USER_DATA_0 + i: f"COMPUTE_USER_DATA_{i}" for i in range(NUM_USER_DATA)})


def name(reg: int) -> str:
    """The register's name, or its address in hex."""
    return NAMES.get(reg, f"reg {reg:#x}")
