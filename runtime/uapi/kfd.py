"""amdkfd ioctl ABI: request numbers, argument structs and flag constants.

Written from linux include/uapi/linux/kfd_ioctl.h (KFD ioctl version 1.17). Only what the runtime and
the mock driver use is defined; every struct's size is checked against the header in
tests/runtime/test_runtime_uapi.py.
"""

from __future__ import annotations

import ctypes

u32, u64, s32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32

KFD_IOCTL_MAJOR_VERSION = 1
KFD_IOCTL_MINOR_VERSION = 17

# ---- linux/ioctl.h encoding ----------------------------------------------------------------------------
_IOC_NONE, _IOC_WRITE, _IOC_READ = 0, 1, 2


def _ioc(direction: int, kind: int, nr: int, size: int) -> int:
    return (direction << 30) | (size << 16) | (kind << 8) | nr


def ioc_nr(request: int) -> int:
    """The command number of an ioctl request."""
    return request & 0xFF


def ioc_size(request: int) -> int:
    """The argument size an ioctl request encodes."""
    return (request >> 16) & 0x3FFF


def ioc_type(request: int) -> int:
    """The ioctl type byte ('K' for amdkfd)."""
    return (request >> 8) & 0xFF


AMDKFD_IOCTL_BASE = ord("K")


def _iow(nr, t):
    return _ioc(_IOC_WRITE, AMDKFD_IOCTL_BASE, nr, ctypes.sizeof(t))


def _ior(nr, t):
    return _ioc(_IOC_READ, AMDKFD_IOCTL_BASE, nr, ctypes.sizeof(t))


def _iowr(nr, t):
    return _ioc(_IOC_READ | _IOC_WRITE, AMDKFD_IOCTL_BASE, nr, ctypes.sizeof(t))


class _S(ctypes.Structure):
    """Base: a kernel struct with helpers to move it in and out of a bytearray."""

    def pack(self) -> bytearray:
        """The struct's bytes as a mutable buffer (what ioctl() takes)."""
        return bytearray(bytes(self))

    @classmethod
    def unpack(cls, buf) -> _S:
        """Parse from a bytes-like of at least sizeof(cls)."""
        return cls.from_buffer_copy(bytes(buf[:ctypes.sizeof(cls)]))

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n, *_ in self._fields_ if not n.startswith("pad"))
        return f"{type(self).__name__}({fields})"


def _struct(name: str, fields: list) -> type:
    return type(name, (_S,), {"_fields_": fields})


# Public names for the other ABI modules (runtime.uapi.amdgpu_drm).
KernelStruct, make_struct, ioc = _S, _struct, _ioc
IOC_WRITE, IOC_READ = _IOC_WRITE, _IOC_READ


kfd_ioctl_get_version_args = _struct("kfd_ioctl_get_version_args", [("major_version", u32), ("minor_version", u32)])

KFD_IOC_QUEUE_TYPE_COMPUTE = 0
KFD_IOC_QUEUE_TYPE_SDMA = 1
KFD_IOC_QUEUE_TYPE_COMPUTE_AQL = 2
KFD_IOC_QUEUE_TYPE_SDMA_XGMI = 3
KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID = 4
KFD_MAX_QUEUE_PERCENTAGE = 100
KFD_MAX_QUEUE_PRIORITY = 15

kfd_ioctl_create_queue_args = _struct("kfd_ioctl_create_queue_args", [
    ("ring_base_address", u64), ("write_pointer_address", u64), ("read_pointer_address", u64),
    ("doorbell_offset", u64), ("ring_size", u32), ("gpu_id", u32), ("queue_type", u32),
    ("queue_percentage", u32), ("queue_priority", u32), ("queue_id", u32), ("eop_buffer_address", u64),
    ("eop_buffer_size", u64), ("ctx_save_restore_address", u64), ("ctx_save_restore_size", u32),
    ("ctl_stack_size", u32), ("sdma_engine_id", u32), ("pad", u32)])
kfd_ioctl_destroy_queue_args = _struct("kfd_ioctl_destroy_queue_args", [("queue_id", u32), ("pad", u32)])
kfd_ioctl_update_queue_args = _struct("kfd_ioctl_update_queue_args", [
    ("ring_base_address", u64), ("queue_id", u32), ("ring_size", u32), ("queue_percentage", u32),
    ("queue_priority", u32)])

KFD_IOC_CACHE_POLICY_COHERENT = 0
KFD_IOC_CACHE_POLICY_NONCOHERENT = 1
kfd_ioctl_set_memory_policy_args = _struct("kfd_ioctl_set_memory_policy_args", [
    ("alternate_aperture_base", u64), ("alternate_aperture_size", u64), ("gpu_id", u32),
    ("default_policy", u32), ("alternate_policy", u32), ("pad", u32)])
kfd_ioctl_get_clock_counters_args = _struct("kfd_ioctl_get_clock_counters_args", [
    ("gpu_clock_counter", u64), ("cpu_clock_counter", u64), ("system_clock_counter", u64),
    ("system_clock_freq", u64), ("gpu_id", u32), ("pad", u32)])
kfd_process_device_apertures = _struct("kfd_process_device_apertures", [
    ("lds_base", u64), ("lds_limit", u64), ("scratch_base", u64), ("scratch_limit", u64), ("gpuvm_base", u64),
    ("gpuvm_limit", u64), ("gpu_id", u32), ("pad", u32)])
kfd_ioctl_get_process_apertures_new_args = _struct("kfd_ioctl_get_process_apertures_new_args", [
    ("kfd_process_device_apertures_ptr", u64), ("num_of_nodes", u32), ("pad", u32)])

# Event types (HSA_EVENTTYPE) and wait results.
KFD_IOC_EVENT_SIGNAL = 0
KFD_IOC_EVENT_NODECHANGE = 1
KFD_IOC_EVENT_DEVICESTATECHANGE = 2
KFD_IOC_EVENT_HW_EXCEPTION = 3
KFD_IOC_EVENT_SYSTEM_EVENT = 4
KFD_IOC_EVENT_DEBUG_EVENT = 5
KFD_IOC_EVENT_PROFILE_EVENT = 6
KFD_IOC_EVENT_QUEUE_EVENT = 7
KFD_IOC_EVENT_MEMORY = 8
KFD_IOC_WAIT_RESULT_COMPLETE = 0
KFD_IOC_WAIT_RESULT_TIMEOUT = 1
KFD_EVENT_TIMEOUT_IMMEDIATE, KFD_EVENT_TIMEOUT_INFINITE = 0, 0xFFFFFFFF  # WAIT_EVENTS timeouts (ms)
KFD_IOC_WAIT_RESULT_FAIL = 2
KFD_SIGNAL_EVENT_LIMIT = 4096
KFD_HW_EXCEPTION_WHOLE_GPU_RESET = 0
KFD_HW_EXCEPTION_PER_ENGINE_RESET = 1
KFD_HW_EXCEPTION_GPU_HANG = 0
KFD_HW_EXCEPTION_ECC = 1

kfd_ioctl_create_event_args = _struct("kfd_ioctl_create_event_args", [
    ("event_page_offset", u64), ("event_trigger_data", u32), ("event_type", u32), ("auto_reset", u32),
    ("node_id", u32), ("event_id", u32), ("event_slot_index", u32)])
kfd_ioctl_destroy_event_args = _struct("kfd_ioctl_destroy_event_args", [("event_id", u32), ("pad", u32)])
kfd_ioctl_set_event_args = _struct("kfd_ioctl_set_event_args", [("event_id", u32), ("pad", u32)])
kfd_ioctl_reset_event_args = _struct("kfd_ioctl_reset_event_args", [("event_id", u32), ("pad", u32)])
kfd_memory_exception_failure = _struct("kfd_memory_exception_failure", [
    ("NotPresent", u32), ("ReadOnly", u32), ("NoExecute", u32), ("imprecise", u32)])
kfd_hsa_memory_exception_data = _struct("kfd_hsa_memory_exception_data", [
    ("failure", kfd_memory_exception_failure), ("va", u64), ("gpu_id", u32), ("pad", u32)])
kfd_hsa_hw_exception_data = _struct("kfd_hsa_hw_exception_data", [
    ("reset_type", u32), ("reset_cause", u32), ("memory_lost", u32), ("gpu_id", u32)])


class _EventDataUnion(ctypes.Union):
    _fields_ = [("memory_exception_data", kfd_hsa_memory_exception_data),
                ("hw_exception_data", kfd_hsa_hw_exception_data)]


kfd_event_data = _struct("kfd_event_data", [
    ("u", _EventDataUnion), ("kfd_event_data_ext", u64), ("event_id", u32), ("pad", u32)])
kfd_ioctl_wait_events_args = _struct("kfd_ioctl_wait_events_args", [
    ("events_ptr", u64), ("num_events", u32), ("wait_for_all", u32), ("timeout", u32), ("wait_result", u32)])
kfd_ioctl_set_scratch_backing_va_args = _struct("kfd_ioctl_set_scratch_backing_va_args", [
    ("va_addr", u64), ("gpu_id", u32), ("pad", u32)])
kfd_ioctl_acquire_vm_args = _struct("kfd_ioctl_acquire_vm_args", [("drm_fd", u32), ("gpu_id", u32)])

# Allocation flags: memory types, then attributes.
KFD_IOC_ALLOC_MEM_FLAGS_VRAM = 1 << 0
KFD_IOC_ALLOC_MEM_FLAGS_GTT = 1 << 1
KFD_IOC_ALLOC_MEM_FLAGS_USERPTR = 1 << 2
KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL = 1 << 3
KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP = 1 << 4
KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE = 1 << 31
KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE = 1 << 30
KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC = 1 << 29
KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE = 1 << 28
KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM = 1 << 27
KFD_IOC_ALLOC_MEM_FLAGS_COHERENT = 1 << 26
KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED = 1 << 25
KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT = 1 << 24
KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS = 1 << 23
ALLOC_MEM_TYPE_MASK = 0x1F

kfd_ioctl_alloc_memory_of_gpu_args = _struct("kfd_ioctl_alloc_memory_of_gpu_args", [
    ("va_addr", u64), ("size", u64), ("handle", u64), ("mmap_offset", u64), ("gpu_id", u32), ("flags", u32)])
kfd_ioctl_free_memory_of_gpu_args = _struct("kfd_ioctl_free_memory_of_gpu_args", [("handle", u64)])
kfd_ioctl_map_memory_to_gpu_args = _struct("kfd_ioctl_map_memory_to_gpu_args", [
    ("handle", u64), ("device_ids_array_ptr", u64), ("n_devices", u32), ("n_success", u32)])
kfd_ioctl_unmap_memory_from_gpu_args = _struct("kfd_ioctl_unmap_memory_from_gpu_args", [
    ("handle", u64), ("device_ids_array_ptr", u64), ("n_devices", u32), ("n_success", u32)])
kfd_ioctl_set_xnack_mode_args = _struct("kfd_ioctl_set_xnack_mode_args", [("xnack_enabled", s32)])
kfd_ioctl_get_available_memory_args = _struct("kfd_ioctl_get_available_memory_args", [
    ("available", u64), ("gpu_id", u32), ("pad", u32)])
kfd_ioctl_runtime_enable_args = _struct("kfd_ioctl_runtime_enable_args", [
    ("r_debug", u64), ("mode_mask", u32), ("capabilities_mask", u32)])
KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK = 1
KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK = 2

AMDKFD_IOC_GET_VERSION = _ior(0x01, kfd_ioctl_get_version_args)
AMDKFD_IOC_CREATE_QUEUE = _iowr(0x02, kfd_ioctl_create_queue_args)
AMDKFD_IOC_DESTROY_QUEUE = _iowr(0x03, kfd_ioctl_destroy_queue_args)
AMDKFD_IOC_SET_MEMORY_POLICY = _iow(0x04, kfd_ioctl_set_memory_policy_args)
AMDKFD_IOC_GET_CLOCK_COUNTERS = _iowr(0x05, kfd_ioctl_get_clock_counters_args)
AMDKFD_IOC_UPDATE_QUEUE = _iow(0x07, kfd_ioctl_update_queue_args)
AMDKFD_IOC_CREATE_EVENT = _iowr(0x08, kfd_ioctl_create_event_args)
AMDKFD_IOC_DESTROY_EVENT = _iow(0x09, kfd_ioctl_destroy_event_args)
AMDKFD_IOC_SET_EVENT = _iow(0x0A, kfd_ioctl_set_event_args)
AMDKFD_IOC_RESET_EVENT = _iow(0x0B, kfd_ioctl_reset_event_args)
AMDKFD_IOC_WAIT_EVENTS = _iowr(0x0C, kfd_ioctl_wait_events_args)
AMDKFD_IOC_SET_SCRATCH_BACKING_VA = _iowr(0x11, kfd_ioctl_set_scratch_backing_va_args)
AMDKFD_IOC_GET_PROCESS_APERTURES_NEW = _iowr(0x14, kfd_ioctl_get_process_apertures_new_args)
AMDKFD_IOC_ACQUIRE_VM = _iow(0x15, kfd_ioctl_acquire_vm_args)
AMDKFD_IOC_ALLOC_MEMORY_OF_GPU = _iowr(0x16, kfd_ioctl_alloc_memory_of_gpu_args)
AMDKFD_IOC_FREE_MEMORY_OF_GPU = _iow(0x17, kfd_ioctl_free_memory_of_gpu_args)
AMDKFD_IOC_MAP_MEMORY_TO_GPU = _iowr(0x18, kfd_ioctl_map_memory_to_gpu_args)
AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU = _iowr(0x19, kfd_ioctl_unmap_memory_from_gpu_args)
AMDKFD_IOC_SET_XNACK_MODE = _iowr(0x21, kfd_ioctl_set_xnack_mode_args)
AMDKFD_IOC_AVAILABLE_MEMORY = _iowr(0x23, kfd_ioctl_get_available_memory_args)
AMDKFD_IOC_RUNTIME_ENABLE = _iowr(0x25, kfd_ioctl_runtime_enable_args)
AMDKFD_COMMAND_START = 0x01
AMDKFD_COMMAND_END = 0x28  # one past the last command number (AMDKFD_IOC_CREATE_PROCESS is 0x27)

# mmap offsets on /dev/kfd (drivers/gpu/drm/amd/amdkfd/kfd_priv.h): type in bits 63:62, gpu_id in 61:46.
KFD_MMAP_TYPE_SHIFT = 62
KFD_MMAP_TYPE_MASK = 3 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_TYPE_DOORBELL = 3 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_TYPE_EVENTS = 2 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_TYPE_RESERVED_MEM = 1 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_TYPE_MMIO = 0 << KFD_MMAP_TYPE_SHIFT
KFD_MMAP_GPU_ID_SHIFT = 46
KFD_MMAP_GPU_ID_MASK = 0xFFFF << KFD_MMAP_GPU_ID_SHIFT

# The topology's io_links/N/properties "type" (kfd_crat.h CRAT_IOLINK_TYPE_*, ROCt's HSA_IOLINKTYPE_*) and "flags"
# (CRAT_IOLINK_FLAGS_*), as sysfs prints them.
CRAT_IOLINK_TYPE_PCIEXPRESS, CRAT_IOLINK_TYPE_XGMI = 2, 11
CRAT_IOLINK_FLAGS_ENABLED, CRAT_IOLINK_FLAGS_NON_COHERENT = 1 << 0, 1 << 1
CRAT_IOLINK_FLAGS_NO_ATOMICS_32_BIT, CRAT_IOLINK_FLAGS_NO_ATOMICS_64_BIT = 1 << 2, 1 << 3

COMMANDS = {v: k for k, v in globals().items() if k.startswith("AMDKFD_IOC_")}
