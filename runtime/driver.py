"""The driver protocol: what runtime.Device asks of the kernel-mode driver, or of itself acting as one.

A Device is the runtime above a driver (Buffers, copies, launches, waits, fault reports, profiling, the HCQ queues
of runtime.queues); the driver is what differs between the two ways to reach an AMD GPU:

- runtime.kfd_driver.KFDDriver: amdkfd's ioctls on /dev/kfd and the DRM render node (what ROCm's libhsakmt does);
- runtime.am.driver.AMDriver: the runtime itself drives the PCI function through its BARs (AM, no kernel driver).

Each method is named after the kernel interface's own operation (amdkfd's CREATE_QUEUE, ALLOC_MEMORY_OF_GPU,
WAIT_EVENTS, ...); an AM driver does the same thing with registers. A driver is built with the Device it serves
(`driver = Driver(dev)`: it reads dev.os, dev.name, dev.index, dev.va_space) and sets the attributes below in
open(), query_info() and create_events(), which Device.__init__ calls in that order.
"""

from __future__ import annotations

from typing import Any, Protocol

from runtime.fault import GPUFault
from runtime.os import DeviceReport, Mapping


class Driver(Protocol):
    """What a driver provides (module docstring)."""

    name: str  # "kfd" | "am": Device(driver=name)
    gpu_id: Any  # what the OS seam's device_report, sanitize and annotate name the GPU by
    node_id: int
    properties: dict  # the KFD topology node's properties (AM: the same keys from the discovery table)
    arch: str  # "gfx1100"
    system_memory: bool  # whether the GPU maps host memory (GTT); without, every buffer is VRAM
    counter_hz: int  # the GPU timestamp counter's frequency (after query_info)
    dev_info: Any  # AMDGPU_INFO_DEV_INFO, None without a render node (after query_info)
    hw_ip: dict  # AMDGPU_INFO_HW_IP_INFO by engine (after query_info)
    firmware: dict  # firmware versions by name (after query_info)
    completion_event: int  # the event id the queues' completion interrupts carry (after create_events)
    event_page_va: int  # signal event e's mailbox is at event_page_va + 8 * e (after create_events)

    def open(self) -> None:
        """Find GPU number dev.index and open it (amdkfd context and render node; AM: PCI function and bring-up)."""

    def query_info(self) -> None:
        """Clocks, engines and firmware versions (AMDGPU_INFO; AM: the SMU)."""

    def create_events(self) -> None:
        """The events a wait sleeps on: completion, memory and hardware exceptions (CREATE_EVENT)."""

    def destroy_events(self) -> None:
        """DESTROY_EVENT for create_events' events."""

    def alloc_memory(self, va: int, size: int, host: bool, executable: bool, uncached: bool,
                     peers: tuple) -> tuple[int, bool]:
        """ALLOC_MEMORY_OF_GPU at `va` and MAP_MEMORY_TO_GPU on this GPU and `peers`: (handle, whether the memory is
        host memory). OSError with ENOMEM when the device has not that much."""

    def map_cpu(self, handle: int, va: int, size: int) -> Mapping:
        """The CPU mapping of an allocation, placed at its GPU VA (mmap of the render node; AM: BAR0)."""

    def free_memory(self, handle: int, va: int, size: int) -> None:
        """FREE_MEMORY_OF_GPU (unmapped from the GPU first)."""

    def memory_info(self) -> dict:
        """VRAM and GTT sizes and use in bytes (AMDGPU_INFO_VRAM_GTT and AMDGPU_INFO_MEMORY)."""

    def drm_info(self, query: int, result_type, **arg):
        """DRM_IOCTL_AMDGPU_INFO (RuntimeError without a render node)."""

    def create_queue(self, q, ring_size: int, rptr: int, wptr: int) -> tuple[int, Mapping, int]:
        """CREATE_QUEUE for a runtime.queues queue: (queue id, doorbell page mapping, byte offset of its doorbell)."""

    def destroy_queue(self, q) -> None:
        """DESTROY_QUEUE (restarting a queue after a fault is destroy_queue, then create_queue)."""

    def wait_event(self, timeout_ms: int, done) -> tuple[Any, bool]:
        """WAIT_EVENTS: sleep until an event fires, `done()` holds or `timeout_ms` passed (0: only take what fired);
        (the fault event that fired or None, whether the timeout expired)."""

    def fault(self, event, report: DeviceReport, notes: list[str], usable: bool) -> GPUFault:
        """The GPUFault of a fault event wait_event returned, with the driver's report and the runtime's notes."""

    def close(self) -> None:
        """Unmap what open() mapped (the process's amdkfd context, or the booted device, stays)."""
