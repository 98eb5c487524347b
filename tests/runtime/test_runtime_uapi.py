"""The amdkfd ABI structs match linux include/uapi/linux/kfd_ioctl.h (sizes and request numbers)."""

import ctypes

from runtime.uapi import amdgpu_drm as drm
from runtime.uapi import kfd

# struct sizes from linux include/uapi/linux/kfd_ioctl.h (KFD ioctl 1.17, x86-64)
HEADER_SIZES = {
    "kfd_ioctl_get_version_args": 8, "kfd_ioctl_create_queue_args": 96, "kfd_ioctl_destroy_queue_args": 8,
    "kfd_ioctl_update_queue_args": 24, "kfd_ioctl_set_memory_policy_args": 32,
    "kfd_ioctl_get_clock_counters_args": 40, "kfd_process_device_apertures": 56,
    "kfd_ioctl_get_process_apertures_new_args": 16, "kfd_ioctl_create_event_args": 32,
    "kfd_ioctl_destroy_event_args": 8, "kfd_ioctl_set_event_args": 8, "kfd_ioctl_reset_event_args": 8,
    "kfd_memory_exception_failure": 16, "kfd_hsa_memory_exception_data": 32, "kfd_hsa_hw_exception_data": 16,
    "kfd_event_data": 48, "kfd_ioctl_wait_events_args": 24, "kfd_ioctl_set_scratch_backing_va_args": 16,
    "kfd_ioctl_acquire_vm_args": 8, "kfd_ioctl_alloc_memory_of_gpu_args": 40,
    "kfd_ioctl_free_memory_of_gpu_args": 8, "kfd_ioctl_map_memory_to_gpu_args": 24,
    "kfd_ioctl_unmap_memory_from_gpu_args": 24, "kfd_ioctl_set_xnack_mode_args": 4,
    "kfd_ioctl_get_available_memory_args": 16, "kfd_ioctl_runtime_enable_args": 16,
}
# _IOWR('K', nr, struct) etc. as the header defines them
HEADER_REQUESTS = {
    "AMDKFD_IOC_GET_VERSION": 0x80084B01, "AMDKFD_IOC_CREATE_QUEUE": 0xC0604B02,
    "AMDKFD_IOC_DESTROY_QUEUE": 0xC0084B03, "AMDKFD_IOC_ACQUIRE_VM": 0x40084B15,
    "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU": 0xC0284B16, "AMDKFD_IOC_FREE_MEMORY_OF_GPU": 0x40084B17,
    "AMDKFD_IOC_MAP_MEMORY_TO_GPU": 0xC0184B18, "AMDKFD_IOC_RUNTIME_ENABLE": 0xC0104B25,
    "AMDKFD_IOC_WAIT_EVENTS": 0xC0184B0C, "AMDKFD_IOC_SET_XNACK_MODE": 0xC0044B21,
}


def test_struct_sizes_match_the_header():
    for name, size in HEADER_SIZES.items():
        assert ctypes.sizeof(getattr(kfd, name)) == size, name


def test_request_numbers_match_the_header():
    for name, value in HEADER_REQUESTS.items():
        assert getattr(kfd, name) == value, name


# struct sizes from linux include/uapi/drm/amdgpu_drm.h (x86-64; result structs as of the userq additions)
DRM_SIZES = {
    "drm_amdgpu_info": 32, "drm_amdgpu_query_fw": 16, "drm_amdgpu_info_vram_gtt": 24, "drm_amdgpu_heap_info": 32,
    "drm_amdgpu_memory_info": 96, "drm_amdgpu_info_firmware": 8, "drm_amdgpu_info_hw_ip": 40,
    "drm_amdgpu_info_device": 448,
}
# field offsets that catch a missed member or a wrong alignment hole (pa_sc_tile_steering_override is followed by
# 4 bytes of padding before the __u64 tcc_disabled_mask)
DEVICE_OFFSETS = {"gpu_counter_freq": 28, "max_engine_clock": 32, "cu_bitmap": 56, "ids_flags": 136,
                  "wave_front_size": 240, "cu_ao_bitmap": 272, "pa_sc_tile_steering_override": 352,
                  "tcc_disabled_mask": 360, "tcp_cache_size": 384, "mall_size": 408, "userq_ip_mask": 436}


def test_drm_amdgpu_structs_match_the_header():
    for name, size in DRM_SIZES.items():
        assert ctypes.sizeof(getattr(drm, name)) == size, name
    for name, off in DEVICE_OFFSETS.items():
        assert getattr(drm.drm_amdgpu_info_device, name).offset == off, name
    assert drm.drm_amdgpu_info.query_hw_ip.offset == 16 and drm.drm_amdgpu_info.query_fw.offset == 16


def test_drm_amdgpu_info_request_number():
    # DRM_IOW(DRM_COMMAND_BASE + DRM_AMDGPU_INFO, struct drm_amdgpu_info) with DRM_IOCTL_BASE 'd'
    assert drm.DRM_IOCTL_AMDGPU_INFO == 0x40206445
