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
# gfx9 (gc_9_4_3_offset.h: regCOMPUTE_PGM_RSRC3 is 0x0e2d from GC base 0x2000) has COMPUTE_PGM_RSRC3 five dwords
# past gfx10+'s; every other COMPUTE_* register above is at the same address on both.
COMPUTE_PGM_RSRC3_GFX9 = 0x2E2D


def compute_pgm_rsrc3(family: str = "gfx11") -> int:
    """COMPUTE_PGM_RSRC3's address in an ISA family."""
    return COMPUTE_PGM_RSRC3_GFX9 if family == "gfx9" else COMPUTE_PGM_RSRC3


# ---- register fields ---------------------------------------------------------------------------------
# COMPUTE_PGM_RSRC1/2/3 (GFX10-GFX11), named as LLVM's kernel descriptor names them (AMDGPUUsage): the CP
# loads these registers from the descriptor's compute_pgm_rsrc words. Granulated counts are "blocks - 1".
PGM_RSRC1 = Layout(
    granulated_workitem_vgpr_count=Field(0, 6),
    # Reserved on gfx10+ (every wave has 106 SGPRs), yet clang-19 fills it for gfx11 (and llvm-objdump 19 then
    # refuses to print the descriptor); the hardware ignores it.
    granulated_wavefront_sgpr_count=Field(6, 4),
    priority=Field(10, 2), float_round_mode_32=Field(12, 2), float_round_mode_16_64=Field(14, 2),
    float_denorm_mode_32=Field(16, 2), float_denorm_mode_16_64=Field(18, 2), priv=Field(20),
    enable_dx10_clamp=Field(21), debug_mode=Field(22), enable_ieee_mode=Field(23), bulky=Field(24), cdbg_user=Field(25),
    fp16_ovfl=Field(26), workgroup_processor_mode=Field(29), mem_ordered=Field(30), fwd_progress=Field(31))
PGM_RSRC2 = Layout(
    enable_private_segment=Field(0),  # SCRATCH_EN
    user_sgpr_count=Field(1, 5), enable_trap_handler=Field(6), enable_sgpr_workgroup_id_x=Field(7),
    enable_sgpr_workgroup_id_y=Field(8), enable_sgpr_workgroup_id_z=Field(9), enable_sgpr_workgroup_info=Field(10),
    enable_vgpr_workitem_id=Field(11, 2),  # 0: X, 1: X and Y, 2: X, Y and Z
    enable_exception_address_watch=Field(13), enable_exception_memory=Field(14),
    granulated_lds_size=Field(15, 9),  # LDS_SIZE in LDS_GRANULE units: 0 in a descriptor, the CP programs it
    enable_exception_ieee_754_fp_invalid_operation=Field(24), enable_exception_fp_denormal_source=Field(25),
    enable_exception_ieee_754_fp_division_by_zero=Field(26), enable_exception_ieee_754_fp_overflow=Field(27),
    enable_exception_ieee_754_fp_underflow=Field(28), enable_exception_ieee_754_fp_inexact=Field(29),
    enable_exception_int_divide_by_zero=Field(30))
PGM_RSRC3 = Layout(shared_vgpr_count=Field(0, 4), inst_pref_size=Field(4, 6), trap_on_start=Field(10),
                   trap_on_end=Field(11), image_op=Field(31))
# COMPUTE_PGM_RSRC3 of gfx90a and gfx942 (AMDGPUUsage): where the AccVGPRs start in the unified VGPR file, in units
# of 4 VGPRs less one, and TG_SPLIT.
PGM_RSRC3_GFX90A = Layout(accum_offset=Field(0, 6), tg_split=Field(16))
LDS_GRANULE = 512  # bytes per LDS_SIZE unit on gfx11 (128 dwords)


def lds_size(rsrc2: int) -> int:
    """LDS bytes per workgroup that a COMPUTE_PGM_RSRC2 value allocates."""
    return PGM_RSRC2.granulated_lds_size.get(rsrc2) * LDS_GRANULE


def with_lds_size(rsrc2: int, nbytes: int) -> int:
    """A COMPUTE_PGM_RSRC2 value whose LDS_SIZE covers `nbytes` of LDS per workgroup (what the CP programs)."""
    return PGM_RSRC2.granulated_lds_size.put(rsrc2, -(-nbytes // LDS_GRANULE))


DISPATCH_INITIATOR = Layout(compute_shader_en=Field(0), partial_tg_en=Field(1), force_start_at_000=Field(2),
                            use_thread_dimensions=Field(5), order_mode=Field(6), cs_w32_en=Field(15))
NUM_THREAD = Layout(num_thread_full=Field(0, 16), num_thread_partial=Field(16, 16))  # COMPUTE_NUM_THREAD_X/Y/Z
TMPRING_SIZE = Layout(waves=Field(0, 12), wavesize=Field(12, 15))
TMPRING_SIZE_GFX12 = Layout(waves=Field(0, 12), wavesize=Field(12, 18))  # gc_12_0_0: WAVESIZE is bits 12-29
TMPRING_WAVESIZE_UNIT = 256  # bytes per WAVESIZE unit on gfx11 (and gfx12)
# gfx9 (gfx942): WAVESIZE is bits 12-24 in units of 256 dwords (gc_9_4_3; LLVM's getMaxWaveScratchSize: "13-bit field
# in units of 256-dword" before gfx11)
TMPRING_SIZE_GFX9 = Layout(waves=Field(0, 12), wavesize=Field(12, 13))
_TMPRING = {"gfx9": (TMPRING_SIZE_GFX9, 1024), "gfx12": (TMPRING_SIZE_GFX12, TMPRING_WAVESIZE_UNIT)}


def tmpring_layout(family: str = "gfx11") -> tuple[Layout, int]:
    """COMPUTE_TMPRING_SIZE's layout in an ISA family and the bytes of one WAVESIZE unit."""
    return _TMPRING.get(family, (TMPRING_SIZE, TMPRING_WAVESIZE_UNIT))
ADDRESS_SHIFT = 8  # COMPUTE_PGM_LO/HI and COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI hold an address >> 8


def dispatch_initiator(wave32: bool = True) -> int:
    """COMPUTE_DISPATCH_INITIATOR as a compute queue launches a kernel (wave32 or wave64)."""
    return DISPATCH_INITIATOR.pack(compute_shader_en=1, force_start_at_000=1, order_mode=1, cs_w32_en=wave32)


def tmpring_size(waves: int, wave_bytes: int, family: str = "gfx11") -> int:
    """COMPUTE_TMPRING_SIZE for `waves` waves of `wave_bytes` scratch bytes each (in an ISA family's layout)."""
    layout, unit = tmpring_layout(family)
    return layout.pack(waves=waves, wavesize=-(-wave_bytes // unit))


def address_regs(address: int) -> tuple[int, int]:
    """The LO and HI register values of a 256-byte aligned address (COMPUTE_PGM_*, COMPUTE_DISPATCH_SCRATCH_BASE_*)."""
    return lo32(address >> ADDRESS_SHIFT), hi32(address >> ADDRESS_SHIFT)


def address_of(lo: int, hi: int) -> int:
    """The address a LO/HI register pair holds (64 bits)."""
    return (((hi << 32) | lo) << ADDRESS_SHIFT) & ((1 << 64) - 1)


# NBIO 4.3 (Navi 31) host data path flush, as dword register offsets (base segment 2 = 0xD20, + 0x106/0x107):
# amdgpu and tinygrad flush the HDP before a kernel with a WAIT_REG_MEM that writes REQ and waits for DONE. NBIO 7.9
# (gfx942) has the same offsets in segment 2, and tinygrad's gfx9 path (its Vega offsets) puts that segment at 0xD20
# too, so it flushes through the same two addresses.
BIF_BX_PF0_GPU_HDP_FLUSH_REQ = 0xE26
BIF_BX_PF0_GPU_HDP_FLUSH_DONE = 0xE27

NAMES = {v: k for k, v in globals().items() if k.startswith(("COMPUTE_", "BIF_")) and isinstance(v, int)}
NAMES.update({COMPUTE_USER_DATA_0 + i: f"COMPUTE_USER_DATA_{i}" for i in range(NUM_USER_DATA)})


def name(reg: int) -> str:
    """The register's name, or its address in hex."""
    return NAMES.get(reg, f"reg {reg:#x}")
