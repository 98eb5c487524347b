"""The DRM AMDGPU_INFO ioctl on the render node: request number, `struct drm_amdgpu_info` and the
result structs of the queries the runtime makes.

Written from linux include/uapi/drm/amdgpu_drm.h (and drm.h for the DRM ioctl encoding). Result
structs grow at their end over kernel versions; the kernel copies min(return_size, its size) bytes,
so an older or newer layout stays compatible. Sizes are checked in tests/runtime/test_runtime_uapi.py.
"""

from __future__ import annotations

import ctypes

from runtime.uapi.kfd import IOC_WRITE, KernelStruct, ioc, make_struct

u32, u64 = ctypes.c_uint32, ctypes.c_uint64

DRM_IOCTL_BASE = ord("d")
DRM_COMMAND_BASE = 0x40  # driver-specific ioctls are DRM_COMMAND_BASE + n
DRM_COMMAND_END = 0xA0
DRM_AMDGPU_INFO = 0x05

# ---- query ids (drm_amdgpu_info.query) -------------------------------------------------------------
AMDGPU_INFO_ACCEL_WORKING = 0x00
AMDGPU_INFO_HW_IP_INFO = 0x02
AMDGPU_INFO_HW_IP_COUNT = 0x03
AMDGPU_INFO_TIMESTAMP = 0x05
AMDGPU_INFO_FW_VERSION = 0x0E
AMDGPU_INFO_VRAM_USAGE = 0x10
AMDGPU_INFO_GTT_USAGE = 0x11
AMDGPU_INFO_VRAM_GTT = 0x14
AMDGPU_INFO_DEV_INFO = 0x16
AMDGPU_INFO_MEMORY = 0x19

# firmware types (drm_amdgpu_query_fw.fw_type)
AMDGPU_INFO_FW_GFX_ME = 0x04
AMDGPU_INFO_FW_GFX_PFP = 0x05
AMDGPU_INFO_FW_GFX_RLC = 0x07
AMDGPU_INFO_FW_GFX_MEC = 0x08
AMDGPU_INFO_FW_SDMA = 0x0B
AMDGPU_INFO_FW_MES = 0x1A

# hardware IP blocks (query_hw_ip.type)
AMDGPU_HW_IP_GFX = 0
AMDGPU_HW_IP_COMPUTE = 1
AMDGPU_HW_IP_DMA = 2
AMDGPU_HW_IP_NUM = 10
AMDGPU_HW_IP_INSTANCE_MAX_COUNT = 1

AMDGPU_FAMILY_GC_11_0_0 = 145  # Navi 31/32/33
AMDGPU_VRAM_TYPE_GDDR6 = 9


class _QueryHwIp(ctypes.Structure):
    _fields_ = [("type", u32), ("ip_instance", u32)]


drm_amdgpu_query_fw = make_struct("drm_amdgpu_query_fw", [
    ("fw_type", u32), ("ip_instance", u32), ("index", u32), ("_pad", u32)])


class _ReadMmrReg(ctypes.Structure):
    _fields_ = [("dword_offset", u32), ("count", u32), ("instance", u32), ("flags", u32)]


class _InfoUnion(ctypes.Union):
    _fields_ = [("query_hw_ip", _QueryHwIp), ("read_mmr_reg", _ReadMmrReg), ("query_fw", drm_amdgpu_query_fw)]


class drm_amdgpu_info(KernelStruct):  # noqa: N801 - the kernel's name
    """Input of DRM_IOCTL_AMDGPU_INFO: where to write the answer, its size, the query and its argument."""

    _anonymous_ = ("u",)
    _fields_ = [("return_pointer", u64), ("return_size", u32), ("query", u32), ("u", _InfoUnion)]


drm_amdgpu_info_vram_gtt = make_struct("drm_amdgpu_info_vram_gtt", [
    ("vram_size", u64), ("vram_cpu_accessible_size", u64), ("gtt_size", u64)])
drm_amdgpu_heap_info = make_struct("drm_amdgpu_heap_info", [
    ("total_heap_size", u64), ("usable_heap_size", u64), ("heap_usage", u64), ("max_allocation", u64)])
drm_amdgpu_memory_info = make_struct("drm_amdgpu_memory_info", [
    ("vram", drm_amdgpu_heap_info), ("cpu_accessible_vram", drm_amdgpu_heap_info), ("gtt", drm_amdgpu_heap_info)])
drm_amdgpu_info_firmware = make_struct("drm_amdgpu_info_firmware", [("ver", u32), ("feature", u32)])
drm_amdgpu_info_hw_ip = make_struct("drm_amdgpu_info_hw_ip", [
    ("hw_ip_version_major", u32), ("hw_ip_version_minor", u32), ("capabilities_flags", u64),
    ("ib_start_alignment", u32), ("ib_size_alignment", u32), ("available_rings", u32),
    ("ip_discovery_version", u32), ("userq_num_slots", u32)])

_U32x16 = u32 * 16  # __u32 [4][4], flattened: [se % 4][sh + (se / 4) * 2] as amdgpu fills it
drm_amdgpu_info_device = make_struct("drm_amdgpu_info_device", [
    ("device_id", u32), ("chip_rev", u32), ("external_rev", u32), ("pci_rev", u32), ("family", u32),
    ("num_shader_engines", u32), ("num_shader_arrays_per_engine", u32),
    ("gpu_counter_freq", u32),  # KHz
    ("max_engine_clock", u64), ("max_memory_clock", u64),  # KHz
    ("cu_active_number", u32), ("cu_ao_mask", u32), ("cu_bitmap", _U32x16),
    ("enabled_rb_pipes_mask", u32), ("num_rb_pipes", u32), ("num_hw_gfx_contexts", u32), ("pcie_gen", u32),
    ("ids_flags", u64), ("virtual_address_offset", u64), ("virtual_address_max", u64),
    ("virtual_address_alignment", u32), ("pte_fragment_size", u32), ("gart_page_size", u32), ("ce_ram_size", u32),
    ("vram_type", u32), ("vram_bit_width", u32), ("vce_harvest_config", u32), ("gc_double_offchip_lds_buf", u32),
    ("prim_buf_gpu_addr", u64), ("pos_buf_gpu_addr", u64), ("cntl_sb_buf_gpu_addr", u64),
    ("param_buf_gpu_addr", u64), ("prim_buf_size", u32), ("pos_buf_size", u32), ("cntl_sb_buf_size", u32),
    ("param_buf_size", u32), ("wave_front_size", u32), ("num_shader_visible_vgprs", u32), ("num_cu_per_sh", u32),
    ("num_tcc_blocks", u32), ("gs_vgt_table_depth", u32), ("gs_prim_buffer_depth", u32),
    ("max_gs_waves_per_vgt", u32), ("pcie_num_lanes", u32), ("cu_ao_bitmap", _U32x16),
    ("high_va_offset", u64), ("high_va_max", u64), ("pa_sc_tile_steering_override", u32),
    ("tcc_disabled_mask", u64), ("min_engine_clock", u64), ("min_memory_clock", u64),
    # gfx11+ only: cache sizes in KiB, MALL (infinity cache) in bytes
    ("tcp_cache_size", u32), ("num_sqc_per_wgp", u32), ("sqc_data_cache_size", u32), ("sqc_inst_cache_size", u32),
    ("gl1c_cache_size", u32), ("gl2c_cache_size", u32), ("mall_size", u64), ("enabled_rb_pipes_mask_hi", u32),
    ("shadow_size", u32), ("shadow_alignment", u32), ("csa_size", u32), ("csa_alignment", u32),
    ("userq_ip_mask", u32), ("pad", u32)])


def _drm_iow(nr: int, t) -> int:
    return ioc(IOC_WRITE, DRM_IOCTL_BASE, nr, ctypes.sizeof(t))


# The answer goes to return_pointer, so the argument struct is only copied in (_IOW).
DRM_IOCTL_AMDGPU_INFO = _drm_iow(DRM_COMMAND_BASE + DRM_AMDGPU_INFO, drm_amdgpu_info)
