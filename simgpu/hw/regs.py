"""gfx11 (GC 11.0.0) register addresses a compute queue programs, as absolute dword addresses.

From amdgpu's gc_11_0_0_offset.h (GC register base 0x1260 for base index 0; regCOMPUTE_DISPATCH_INITIATOR
is 0x1ba0 there, i.e. dword 0x2E00, byte 0xB800 as mesa's sid.h names it R_00B800) and nvd.h's packet
ranges. SET_SH_REG takes `reg - SH_REG_START`, SET_UCONFIG_REG `reg - UCONFIG_REG_START`.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw.bits import Field, Layout, hi32, lo32

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
COMPUTE_NUM_THREAD_X = 0x2E07  # NUM_THREAD layout
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
COMPUTE_TMPRING_SIZE = 0x2E18  # TMPRING_SIZE layout
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


# ---- register fields ---------------------------------------------------------------------------------
DISPATCH_INITIATOR = Layout(compute_shader_en=Field(0), partial_tg_en=Field(1), force_start_at_000=Field(2),
                            use_thread_dimensions=Field(5), order_mode=Field(6), cs_w32_en=Field(15))
NUM_THREAD = Layout(num_thread_full=Field(0, 16), num_thread_partial=Field(16, 16))  # COMPUTE_NUM_THREAD_X/Y/Z
TMPRING_SIZE = Layout(waves=Field(0, 12), wavesize=Field(12, 15))
TMPRING_WAVESIZE_UNIT = 256  # bytes per WAVESIZE unit on gfx11
ADDRESS_SHIFT = 8  # COMPUTE_PGM_LO/HI and COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI hold an address >> 8


def dispatch_initiator(wave32: bool = True) -> int:
    """COMPUTE_DISPATCH_INITIATOR as a compute queue launches a kernel (wave32 or wave64)."""
    return DISPATCH_INITIATOR.pack(compute_shader_en=1, force_start_at_000=1, order_mode=1, cs_w32_en=wave32)


def tmpring_size(waves: int, wave_bytes: int) -> int:
    """COMPUTE_TMPRING_SIZE for `waves` waves of `wave_bytes` scratch bytes each."""
    return TMPRING_SIZE.pack(waves=waves, wavesize=-(-wave_bytes // TMPRING_WAVESIZE_UNIT))


def address_regs(address: int) -> tuple[int, int]:
    """The LO and HI register values of a 256-byte aligned address (COMPUTE_PGM_*, COMPUTE_DISPATCH_SCRATCH_BASE_*)."""
    return lo32(address >> ADDRESS_SHIFT), hi32(address >> ADDRESS_SHIFT)


def address_of(lo: int, hi: int) -> int:
    """The address a LO/HI register pair holds (64 bits)."""
    return (((hi << 32) | lo) << ADDRESS_SHIFT) & ((1 << 64) - 1)


NAMES = {v: k for k, v in globals().items() if k.startswith("COMPUTE_") and isinstance(v, int)}
NAMES.update({COMPUTE_USER_DATA_0 + i: f"COMPUTE_USER_DATA_{i}" for i in range(NUM_USER_DATA)})


def name(reg: int) -> str:
    """The register's name, or its address in hex."""
    return NAMES.get(reg, f"reg {reg:#x}")
