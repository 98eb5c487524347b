"""Bad user pointers in every ioctl that takes one (issue 27, item 6): the errno each gives, through any OS -- MockOS
in-process, or HostOS through the interposer under `simgpu run` (run as a script there: it prints the errnos as one
JSON object). amdkfd's copy_from_user / copy_to_user refuse each of these with EFAULT (access_ok or a fault)."""

from __future__ import annotations

import ctypes
import errno
import json

from runtime.os import TOPOLOGY, HostOS
from runtime.uapi import amdgpu_drm as D
from runtime.uapi import kfd as F

# A pointer of 2^63 and more (EIO under `simgpu run` before), the top page, the kernel half where the server keeps
# mappings of its own, an unmapped low page, a range that runs off the end of user space, address 0.
BAD = {"2^63": 1 << 63, "top": (1 << 64) - 4096, "kernel": 0xFFFF_8000_0000_0000, "low": 0x1000,
       "end": (1 << 47) - 2, "null": 0}
GTT_W = F.KFD_IOC_ALLOC_MEM_FLAGS_GTT | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE


def _errno(os_, fd: int, request: int, args) -> int:
    try:
        os_.ioctl(fd, request, bytearray(bytes(args)))
    except OSError as e:
        return e.errno
    return 0


def errnos(os_) -> dict[str, int]:
    """`ioctl name/bad address` -> the errno it gave (0: it succeeded)."""
    kfd, drm = os_.open("/dev/kfd"), os_.open("/dev/dri/renderD128")
    gid = int(os_.read_text(f"{TOPOLOGY}/nodes/1/gpu_id"))
    os_.ioctl(kfd, F.AMDKFD_IOC_ACQUIRE_VM, bytearray(bytes(F.kfd_ioctl_acquire_vm_args(drm_fd=drm, gpu_id=gid))))
    buf = bytearray(bytes(F.kfd_ioctl_alloc_memory_of_gpu_args(va_addr=1 << 30, size=4096, gpu_id=gid, flags=GTT_W)))
    os_.ioctl(kfd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, buf)
    handle = F.kfd_ioctl_alloc_memory_of_gpu_args.from_buffer(buf).handle
    ev = bytearray(bytes(F.kfd_ioctl_create_event_args(event_type=F.KFD_IOC_EVENT_SIGNAL, auto_reset=1)))
    os_.ioctl(kfd, F.AMDKFD_IOC_CREATE_EVENT, ev)
    out = {}
    for name, addr in BAD.items():
        cases = {
            "map": (kfd, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU, F.kfd_ioctl_map_memory_to_gpu_args(
                handle=handle, device_ids_array_ptr=addr, n_devices=1)),
            "unmap": (kfd, F.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, F.kfd_ioctl_unmap_memory_from_gpu_args(
                handle=handle, device_ids_array_ptr=addr, n_devices=1)),
            "wait_events": (kfd, F.AMDKFD_IOC_WAIT_EVENTS, F.kfd_ioctl_wait_events_args(
                events_ptr=addr, num_events=1, timeout=0)),
            "apertures": (kfd, F.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, F.kfd_ioctl_get_process_apertures_new_args(
                kfd_process_device_apertures_ptr=addr, num_of_nodes=1)),
            "userptr": (kfd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, F.kfd_ioctl_alloc_memory_of_gpu_args(
                va_addr=1 << 32, size=4096, gpu_id=gid, mmap_offset=addr & ~0xFFF,
                flags=F.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE)),
            "amdgpu_info": (drm, D.DRM_IOCTL_AMDGPU_INFO, D.drm_amdgpu_info(
                return_pointer=addr, return_size=ctypes.sizeof(D.drm_amdgpu_info_device),
                query=D.AMDGPU_INFO_DEV_INFO)),
        }
        for what, (fd, request, args) in cases.items():
            out[f"{what}/{name}"] = _errno(os_, fd, request, args)
    return out


def expected() -> dict[str, int]:
    """What amdkfd gives: EFAULT for every case (a null return_pointer is AMDGPU_INFO's EINVAL, checked first)."""
    return {f"{what}/{name}": errno.EINVAL if (what, name) == ("amdgpu_info", "null") else errno.EFAULT
            for name in BAD for what in ("map", "unmap", "wait_events", "apertures", "userptr", "amdgpu_info")}


if __name__ == "__main__":
    print(json.dumps(errnos(HostOS())), flush=True)
