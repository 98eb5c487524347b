"""Interrupts: what the device's engines tell its owner (the driver), one typed record each.

The sources are the interrupt clients of gfx11 that a compute driver listens to: the CP (RELEASE_MEM
end-of-pipe interrupts of PM4 queues, AQL completion signals that have an event mailbox, and the error
that stops a queue), the SDMA engines (TRAP packets) and the SQ (a wave's s_sendmsg MSG_INTERRUPT). An
engine builds an `Interrupt`; `simgpu.GPU.interrupt` stamps it (sequence number, timestamp), keeps it in
a bounded log and hands it to every hook in `GPU.interrupt_hooks`, in the order the interrupts happen.
The payload is what amdkfd's interrupt handler reads: the context id it matches its events with, and,
for a queue error, the `QueueError` (with the device-side `simgpu.fault.HardwareFault` when a fault stopped
the queue).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # simgpu.shader raises interrupts too and must not import the command processors
    from simgpu.cp.queue import QueueError
    from simgpu.fault import HardwareFault


class Source(StrEnum):
    """The interrupt client that raised it."""

    CP = "cp"  # the compute command processor (MEC): PM4 and AQL queues
    SDMA = "sdma"  # an SDMA engine
    SQ = "sq"  # the shader sequencer: a wave's s_sendmsg


class Kind(StrEnum):
    """What happened."""

    END_OF_PIPE = "end_of_pipe"  # RELEASE_MEM with INT_SEL: context_id = INT_CTXID, data = the value written
    SIGNAL = "signal"  # AQL completion signal with a mailbox: context_id = its event id, data = its new value
    SDMA_TRAP = "sdma_trap"  # SDMA TRAP: context_id = INT_CONTEXT
    SENDMSG = "sendmsg"  # s_sendmsg MSG_INTERRUPT: context_id = the wave's M0
    QUEUE_ERROR = "queue_error"  # the queue stopped: error says where and why


@dataclass(slots=True)  # (one per SDMA TRAP and end-of-pipe: no instance dict to make)
class Interrupt:
    """One interrupt from queue `queue`: its source, kind and payload."""

    source: Source
    kind: Kind
    queue: str
    context_id: int = 0  # what the driver matches its events with (see Kind)
    data: int | None = None  # END_OF_PIPE: the value RELEASE_MEM wrote; SIGNAL: the signal's value after it
    signal: int = 0  # SIGNAL: the completion signal's address
    error: QueueError | None = None  # QUEUE_ERROR: the queue's error report
    seq: int = 0  # order of delivery on its device (set by GPU.interrupt)
    timestamp: int = 0  # the device's 100 MHz timestamp when it was raised (set by GPU.interrupt)

    @property
    def fault(self) -> HardwareFault | None:
        """The device-side fault that stopped the queue (QUEUE_ERROR caused by a fault), else None."""
        return self.error.fault if self.error is not None else None
