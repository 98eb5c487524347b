"""The /dev/kfd ioctls of the mock driver, with amdkfd's argument validation and errnos.

One `KfdProcess` is the emulated process's kfd_process: its per-GPU VMs (after ACQUIRE_VM) and the process-wide
ioctls (version, apertures, runtime, policies, clock counters), composed with the ioctl groups amdkfd itself keeps
apart: the buffer objects (mockgpu.kfd_memory: ALLOC/FREE/MAP/UNMAP_MEMORY_*, AVAILABLE_MEMORY), the queues
(mockgpu.kfd_queues: CREATE/DESTROY/UPDATE_QUEUE) and the events with the interrupts that signal them
(mockgpu.kfd_events: CREATE/DESTROY/SET/RESET/WAIT_EVENTS). Handlers take the argument struct (a ctypes view of the
caller's buffer) and raise KfdError(errno) like the kernel returns -errno.
"""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable

from mockgpu.devmem import DeviceMemory
from mockgpu.kfd_events import KfdEvents, MockEvent
from mockgpu.kfd_memory import KfdMemory
from mockgpu.kfd_node import (
    GPUVM_BASE,
    GPUVM_LIMIT,
    LDS_APERTURE,
    SCRATCH_APERTURE,
    VMID,
    Node,
    node_of,
    vm_node_of,
)
from mockgpu.kfd_queues import MockQueue, ProcessQueueManager
from mockgpu.memory import VM, Allocation, KfdError
from mockgpu.usermem import UserMemory
from runtime.uapi import kfd


class KfdProcess:
    """The emulated process's amdkfd state over the machine's GPUs."""

    def __init__(self, nodes: list[Node], user: UserMemory, devmem: DeviceMemory):
        self.nodes, self.user, self.devmem = nodes, user, devmem
        self.runtime_enabled = False
        self.reset_hooks: list[Callable[[str], None]] = []  # told one line per queue reset: which queue and why
        self.queue_manager = ProcessQueueManager(nodes, devmem)
        self.memory = KfdMemory(nodes, user, devmem, self.queue_manager.queues)
        self.event_manager = KfdEvents(user, self.memory.allocs, self.progress, self.reset_hooks)
        for n in nodes:
            n.gpu.interrupt_hooks.append(functools.partial(self.event_manager.on_interrupt, n))

    # ---- what the process holds: buffer objects, queues, events ---------------------------------------------
    @property
    def allocs(self) -> dict[int, Allocation]:
        return self.memory.allocs

    @property
    def queues(self) -> dict[int, MockQueue]:
        return self.queue_manager.queues

    @property
    def events(self) -> dict[int, MockEvent]:
        return self.event_manager.events

    @property
    def expired(self) -> bool:
        """Set by the caller of WAIT_EVENTS once a WouldBlock wait passed its deadline."""
        return self.event_manager.expired

    @expired.setter
    def expired(self, value: bool) -> None:
        self.event_manager.expired = value

    # ---- simple ioctls ------------------------------------------------------------------------------------
    def get_version(self, a) -> None:
        a.major_version, a.minor_version = kfd.KFD_IOCTL_MAJOR_VERSION, kfd.KFD_IOCTL_MINOR_VERSION

    def get_process_apertures_new(self, a) -> None:
        if a.num_of_nodes == 0:
            a.num_of_nodes = len(self.nodes)
            return
        count = min(a.num_of_nodes, len(self.nodes))
        out = b""
        for n in self.nodes[:count]:
            ap = kfd.kfd_process_device_apertures(
                lds_base=LDS_APERTURE, lds_limit=LDS_APERTURE | 0xFFFFFFFF, scratch_base=SCRATCH_APERTURE,
                scratch_limit=SCRATCH_APERTURE | 0xFFFFFFFF, gpuvm_base=GPUVM_BASE, gpuvm_limit=GPUVM_LIMIT,
                gpu_id=n.gpu_id)
            out += bytes(ap)
        self.user.write(a.kfd_process_device_apertures_ptr, out)
        a.num_of_nodes = count

    def acquire_vm(self, a, files: dict) -> None:
        f = files.get(a.drm_fd)
        if f is None or f.kind != "render":
            raise KfdError(errno.EINVAL, f"drm_fd {a.drm_fd} is not an open render node")
        n = node_of(self.nodes, a.gpu_id)
        if f.node is not n:
            raise KfdError(errno.EINVAL, f"drm_fd {a.drm_fd} belongs to another GPU")
        if n.vm is not None:
            if n.drm_fd != a.drm_fd:
                raise KfdError(errno.EBUSY, "VM already acquired through another render node file")
            return
        n.vm, n.drm_fd = VM(n.gpu, VMID), a.drm_fd

    def runtime_enable(self, a) -> None:
        enable = bool(a.mode_mask & kfd.KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK)
        if enable and self.runtime_enabled:
            raise KfdError(errno.EBUSY, "runtime already enabled")
        self.runtime_enabled = enable

    def set_memory_policy(self, a) -> None:
        node_of(self.nodes, a.gpu_id)
        if a.default_policy > 1 or a.alternate_policy > 1:
            raise KfdError(errno.EINVAL, "cache policy must be COHERENT or NONCOHERENT")

    def set_xnack_mode(self, a) -> None:
        if a.xnack_enabled >= 0:
            if a.xnack_enabled:
                archs = ", ".join(sorted({n.gpu.arch for n in self.nodes}))
                raise KfdError(errno.EPERM, f"{archs} does not support XNACK")
            for n in self.nodes:
                n.xnack = 0
        a.xnack_enabled = 0

    def set_scratch_backing_va(self, a) -> None:
        vm_node_of(self.nodes, a.gpu_id)  # with a hardware scheduler (MES) nothing else is programmed

    def get_clock_counters(self, a) -> None:
        n = node_of(self.nodes, a.gpu_id)
        ts = n.gpu.clock.timestamp()
        # No wall clock: the CPU counters follow the GPU's virtual clock (10 ns per 100 MHz tick).
        a.gpu_clock_counter, a.cpu_clock_counter, a.system_clock_counter = ts, ts * 10, ts * 10
        a.system_clock_freq = 1_000_000_000

    def progress(self, poll_all: bool = True, seconds: float | None = None) -> bool:
        """Run every queue of every GPU that can move: doorbells stored straight into a doorbell page, queues that
        wait (on memory that may have changed) and, with `poll_all`, every queue whose wptr moved in memory;
        True if anything moved. A dispatch running longer than `seconds` is stopped (a `timeout` fault)."""
        moved = False
        for n in self.nodes:
            before = n.gpu.clock.cycles
            with n.gpu.time_limit(seconds):  # the caller's limit holds for doorbell work too (nested: outer wins)
                moved |= n.gpu.scan_doorbells()
                if poll_all:
                    n.gpu.run_until_idle()
                else:
                    while n.gpu.retry_blocked():
                        pass
            moved |= n.gpu.clock.cycles != before
        return moved
