"""The process's amdkfd context, shared by every Device on one OS object.

amdkfd keeps one kfd_process per process (tied to its address space, not to a file): /dev/kfd is opened once
(libhsakmt's hsaKmtOpenKFD), each GPU's VM is acquired once through one render-node file (a second file gets
EBUSY, and amdkfd holds on to the first for the life of the process), the event page is set once (a second
one is EINVAL) and the runtime is enabled once. So Devices do not own these: they share a `KfdContext`,
which lives as long as the OS object, as the kernel's lives as long as the process.
"""

from __future__ import annotations

import struct
import weakref

from runtime.memory import PAGE, va_space
from runtime.os import MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, MAP_SHARED, OS, PROT_READ, PROT_WRITE
from runtime.uapi import kfd

EVENT_PAGE_SIZE = kfd.KFD_SIGNAL_EVENT_LIMIT * 8  # one 64-bit slot per signal event


class KfdContext:
    """/dev/kfd, the render node of each GPU (its VM acquired), the signal event page, the VA space."""

    def __init__(self, os_: OS):
        self.os = os_
        self.va_space = va_space(os_)
        self.kfd_fd = os_.open("/dev/kfd")
        v = self.ioctl(kfd.AMDKFD_IOC_GET_VERSION, kfd.kfd_ioctl_get_version_args())
        self.version = (v.major_version, v.minor_version)
        self.render_fds: dict[int, int] = {}  # gpu_id -> render node fd whose VM is acquired
        self.event_page_va = self.event_page_handle = 0
        self.event_page = None  # the CPU mapping of the event page
        self._event_page_gpus: list[int] = []
        self._event_page_set = False  # handed to amdkfd (with the first signal event)
        self._args = os_.mmap(-1, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS)  # device-id arrays
        if self.version >= (1, 14):
            self.ioctl(kfd.AMDKFD_IOC_RUNTIME_ENABLE, kfd.kfd_ioctl_runtime_enable_args(mode_mask=1))

    def ioctl(self, request: int, args):
        """An amdkfd ioctl with a ctypes argument struct; returns the updated struct."""
        buf = args.pack()
        self.os.ioctl(self.kfd_fd, request, buf)
        return type(args).unpack(buf)

    def render_fd(self, gpu_id: int, minor: int) -> int:
        """The render node of GPU `gpu_id`, opened and its VM acquired the first time it is asked for."""
        fd = self.render_fds.get(gpu_id)
        if fd is None:
            fd = self.os.open(f"/dev/dri/renderD{minor}")
            self.ioctl(kfd.AMDKFD_IOC_ACQUIRE_VM, kfd.kfd_ioctl_acquire_vm_args(drm_fd=fd, gpu_id=gpu_id))
            self.render_fds[gpu_id] = fd
        return fd

    def event_page_on(self, gpu_id: int) -> int:
        """The handle of the process's event page, allocated on the first GPU that asks and mapped on every
        GPU that does (their CPs write completion signals' mailboxes there). Its VA: event_page_va."""
        if not self.event_page_handle:
            self.event_page_va, self._event_page_reservation = self.va_space.reserve(EVENT_PAGE_SIZE)
            flags = kfd.KFD_IOC_ALLOC_MEM_FLAGS_GTT | kfd.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | \
                kfd.KFD_IOC_ALLOC_MEM_FLAGS_COHERENT | kfd.KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED
            a = self.ioctl(kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, kfd.kfd_ioctl_alloc_memory_of_gpu_args(
                va_addr=self.event_page_va, size=EVENT_PAGE_SIZE, gpu_id=gpu_id, flags=flags))
            self.event_page_handle = a.handle
            self.event_page = self.os.mmap(self.render_fds[gpu_id], EVENT_PAGE_SIZE, PROT_READ | PROT_WRITE,
                                           MAP_SHARED | MAP_FIXED, a.mmap_offset, self.event_page_va)
        if gpu_id not in self._event_page_gpus:
            struct.pack_into("<I", self._args.view, 0, gpu_id)
            self.ioctl(kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU, kfd.kfd_ioctl_map_memory_to_gpu_args(
                handle=self.event_page_handle, device_ids_array_ptr=self._args.addr, n_devices=1))
            self._event_page_gpus.append(gpu_id)
        return self.event_page_handle


    def create_event(self, event_type: int, node_id: int) -> int:
        """CREATE_EVENT (auto-reset); the first signal event of the process hands amdkfd the event page."""
        page = 0
        if event_type == kfd.KFD_IOC_EVENT_SIGNAL and not self._event_page_set:
            page = self.event_page_handle
        a = self.ioctl(kfd.AMDKFD_IOC_CREATE_EVENT, kfd.kfd_ioctl_create_event_args(
            event_type=event_type, auto_reset=1, node_id=node_id, event_page_offset=page))
        self._event_page_set |= bool(page)
        return a.event_id

    def destroy_event(self, event_id: int) -> None:
        """DESTROY_EVENT."""
        self.ioctl(kfd.AMDKFD_IOC_DESTROY_EVENT, kfd.kfd_ioctl_destroy_event_args(event_id=event_id))


_CONTEXTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def kfd_context(os_: OS) -> KfdContext:
    """The KfdContext of the process `os_` drives (created by the first Device on it)."""
    ctx = _CONTEXTS.get(os_)
    if ctx is None:
        ctx = _CONTEXTS[os_] = KfdContext(os_)
    return ctx

