"""The process's events: AMDKFD_IOC_CREATE_EVENT, DESTROY_EVENT, SET_EVENT, RESET_EVENT and WAIT_EVENTS
(kfd_events.c in the kernel), and amdkfd's interrupt handler, which signals them: a completion signals the signal
event its context id names, a queue error every memory exception (page faults) or hardware exception event."""

from __future__ import annotations

import ctypes
import errno
from collections.abc import Callable
from dataclasses import dataclass

from mockgpu.kfd_node import Node
from mockgpu.memory import Allocation, KfdError, WouldBlock
from mockgpu.usermem import UserMemory
from runtime.uapi import kfd
from simgpu.fault import HardwareFault
from simgpu.interrupt import Interrupt, Kind

FIRST_NONSIGNAL_EVENT_ID = kfd.KFD_SIGNAL_EVENT_LIMIT


@dataclass
class MockEvent:
    """A KFD event."""

    event_id: int
    type: int
    auto_reset: bool
    signaled: bool = False
    data: bytes = b""  # kfd_event_data union bytes for memory / hw exception events


class KfdEvents:
    """The events of one kfd_process, by event id (module docstring). `progress` runs the process's GPUs (a
    wait runs every queue that can move first); `reset_hooks` are told one line per queue reset."""

    def __init__(self, user: UserMemory, allocs: dict[int, Allocation], progress: Callable[..., bool],
                 reset_hooks: list[Callable[[str], None]]):
        self.user, self.allocs, self.progress, self.reset_hooks = user, allocs, progress, reset_hooks
        self.events: dict[int, MockEvent] = {}
        self.event_page: Allocation | None = None
        self.expired = False  # set by the caller of wait_events once a WouldBlock wait passed its deadline

    def create_event(self, a) -> None:
        if a.event_type > kfd.KFD_IOC_EVENT_MEMORY:
            raise KfdError(errno.EINVAL, f"unknown event type {a.event_type}")
        if a.event_page_offset:  # amdkfd takes the event page from the first call that names one, only once
            if self.event_page is not None:
                raise KfdError(errno.EINVAL, "the event page is already set for this process")
            page = self.allocs.get(a.event_page_offset)
            if page is None or page.kind != "gtt":
                raise KfdError(errno.EINVAL, "event page handle is not a system-memory buffer object")
            self.event_page = page
        if a.event_type in (kfd.KFD_IOC_EVENT_SIGNAL, kfd.KFD_IOC_EVENT_DEBUG_EVENT):
            # Slot 0 is reserved (amdkfd ignores CP interrupts without a context id through it); without an
            # event page of its own the process gets amdkfd's page of 256 slots.
            slots = min(self.event_page.size // 8, kfd.KFD_SIGNAL_EVENT_LIMIT) if self.event_page else 256
            eid = next((i for i in range(1, slots) if i not in self.events), None)
            if eid is None:
                raise KfdError(errno.ENOSPC, "out of signal event slots")
            a.event_page_offset = kfd.KFD_MMAP_TYPE_EVENTS
            a.event_trigger_data, a.event_slot_index = eid, eid
        else:
            eid = next(i for i in range(FIRST_NONSIGNAL_EVENT_ID, FIRST_NONSIGNAL_EVENT_ID + len(self.events) + 1)
                       if i not in self.events)
            a.event_trigger_data = eid
        self.events[eid] = MockEvent(eid, a.event_type, bool(a.auto_reset))
        a.event_id = eid

    def event(self, eid: int) -> MockEvent:
        ev = self.events.get(eid)
        if ev is None:
            raise KfdError(errno.EINVAL, f"no event {eid}")
        return ev

    def destroy_event(self, a) -> None:
        self.event(a.event_id)
        del self.events[a.event_id]

    def set_event(self, a) -> None:
        ev = self.event(a.event_id)
        if ev.type not in (kfd.KFD_IOC_EVENT_SIGNAL, kfd.KFD_IOC_EVENT_DEBUG_EVENT):
            raise KfdError(errno.EINVAL, "only signal events can be set from the CPU")
        ev.signaled = True

    def reset_event(self, a) -> None:
        self.event(a.event_id).signaled = False

    def wait_events(self, a) -> None:
        if a.num_events == 0 or a.num_events > kfd.KFD_SIGNAL_EVENT_LIMIT:
            raise KfdError(errno.EINVAL, f"bad event count {a.num_events}")
        size = ctypes.sizeof(kfd.kfd_event_data)
        arr = bytearray(self.user.read(a.events_ptr, size * a.num_events))
        datas = [kfd.kfd_event_data.from_buffer(arr, i * size) for i in range(a.num_events)]
        events = [self.event(d.event_id) for d in datas]

        def done() -> bool:
            return all(e.signaled for e in events) if a.wait_for_all else any(e.signaled for e in events)

        if not done():
            # Run every queue that can move; a dispatch still running when a finite timeout expires is stopped
            # (a `timeout` queue error).
            seconds = a.timeout / 1000 if 0 < a.timeout < kfd.KFD_EVENT_TIMEOUT_INFINITE else None
            self.progress(seconds=seconds)
        if not done():
            if a.timeout and not self.expired:
                raise WouldBlock(a.timeout)  # the caller waits for progress (or the timeout) and asks again
            a.wait_result = kfd.KFD_IOC_WAIT_RESULT_TIMEOUT
            return
        for d, e in zip(datas, events, strict=True):
            if e.signaled and e.data:
                ctypes.memmove(ctypes.addressof(d.u), e.data, len(e.data))
            if e.signaled and e.auto_reset:
                e.signaled = False
        self.user.write(a.events_ptr, bytes(arr))
        a.wait_result = kfd.KFD_IOC_WAIT_RESULT_COMPLETE

    # ---- interrupts from the simulated GPUs --------------------------------------------------------
    def on_interrupt(self, n: Node, intr: Interrupt) -> None:
        """amdkfd's interrupt handler: a completion signals the event its context id names; a queue error
        becomes a memory exception (page faults) or a hardware exception event."""
        if intr.kind == Kind.QUEUE_ERROR:
            self._exception(n, intr.fault)
            if intr.error is not None:
                why = str(intr.fault) if intr.fault is not None else intr.error.why
                for hook in self.reset_hooks:
                    hook(f"{n.gpu.name} (gpu_id {n.gpu_id}): queue {intr.queue} reset: {why}")
            return
        e = self.events.get(intr.context_id)
        if e is not None and e.type in (kfd.KFD_IOC_EVENT_SIGNAL, kfd.KFD_IOC_EVENT_DEBUG_EVENT):
            e.signaled = True

    def _exception(self, n: Node, fault: HardwareFault | None) -> None:
        if fault is not None and fault.kind == "page_fault":
            data = kfd.kfd_hsa_memory_exception_data(va=fault.address or 0, gpu_id=n.gpu_id)
            data.failure.NotPresent = 1
            etype = kfd.KFD_IOC_EVENT_MEMORY
        else:
            data = kfd.kfd_hsa_hw_exception_data(reset_type=kfd.KFD_HW_EXCEPTION_PER_ENGINE_RESET,
                                                 reset_cause=kfd.KFD_HW_EXCEPTION_GPU_HANG, gpu_id=n.gpu_id)
            etype = kfd.KFD_IOC_EVENT_HW_EXCEPTION
        for e in self.events.values():
            if e.type == etype:
                e.signaled, e.data = True, bytes(data)
