"""Hardware queues as the runtime drives them: rings in mapped memory, doorbells through the OS seam.

Each queue keeps a timeline: every submission gets the next value, and the queue's `completed()`
says how far the GPU got (PM4: a 64-bit fence RELEASE_MEM writes, SDMA: a 32-bit FENCE, AQL: the
amd_queue_t read_dispatch_id the CP reports). Completions also raise an interrupt for the device's
completion event, which is what WAIT_EVENTS sleeps on.
"""

from __future__ import annotations

import struct

from runtime.uapi import kfd
from simgpu.hw import aql, sdma
from simgpu.hw import pm4 as hw

RING_SIZE = 1 << 16


class HWQueue:
    """A user-mode queue: ring, read/write pointers, doorbell, fence."""

    fmt = ""
    queue_type = 0
    FENCE = "<Q"  # the fence at ptrs + 16: 64-bit (PM4 RELEASE_MEM DATA64); SDMA FENCE writes 32 bits

    def __init__(self, dev, event_id: int):
        self.dev, self.event_id = dev, event_id
        self.ring = dev.alloc_system(RING_SIZE, name="queue ring")
        self.ptrs = dev.alloc_system(4096, name="queue pointers")  # rptr report, wptr, fence (and amd_queue_t for AQL)
        self.submitted = 0  # timeline value of the last submission
        self.wptr = 0  # in the format's unit
        self._create()

    # ---- driver ------------------------------------------------------------------------------------
    def _addresses(self) -> tuple[int, int]:
        return self.ptrs.va, self.ptrs.va + 8

    def _create(self) -> None:
        # The driver makes the queue (amdkfd's CREATE_QUEUE, or the AM backend's MQD/HQD programming): its id, the
        # doorbell's mapping and byte offset in it.
        rptr, wptr = self._addresses()
        self.queue_id, self.doorbell, self.doorbell_offset = self.dev.create_hw_queue(self, RING_SIZE, rptr, wptr)

    def destroy(self) -> None:
        """Remove the queue from the GPU (DESTROY_QUEUE, or the AM backend's dequeue)."""
        self.dev.destroy_hw_queue(self)

    def recreate(self) -> None:
        """After a fault: destroy the hung queue and start a fresh one; pending work counts as done."""
        self.destroy()
        self.ring.view[:] = b"\0" * len(self.ring.view)
        self.ptrs.view[:] = b"\0" * len(self.ptrs.view)
        self.wptr = 0
        self._create()
        self._set_completed(self.submitted)

    # ---- ring ------------------------------------------------------------------------------------
    def _write_ring(self, data: bytes) -> None:
        unit = {"pm4": 4, "sdma": 1, "aql": 64}[self.fmt]
        if len(data) > RING_SIZE - (self.wptr - self._rptr()) * unit:
            self.dev.wait_idle()
        pos = (self.wptr * unit) % RING_SIZE
        first = min(len(data), RING_SIZE - pos)
        self.ring.view[pos:pos + first] = data[:first]
        if first < len(data):
            self.ring.view[:len(data) - first] = data[first:]
        self.wptr += len(data) // unit

    def _rptr(self) -> int:
        return struct.unpack_from("<Q", self.ptrs.view, 0)[0]

    def _ring_doorbell(self) -> None:
        struct.pack_into("<Q", self.ptrs.view, 8, self.wptr)
        with self.dev.abort_on_interrupt():  # a simulated GPU runs the work during the doorbell write
            self.dev.os.mmio_write(self.doorbell, self.doorbell_offset, self.wptr, 8)

    def completed(self) -> int:
        """The last timeline value the GPU finished."""
        return struct.unpack_from(self.FENCE, self.ptrs.view, 16)[0]

    def _set_completed(self, value: int) -> None:
        struct.pack_into(self.FENCE, self.ptrs.view, 16, value)


class PM4Queue(HWQueue):
    """A compute queue fed PM4 packets."""

    fmt, queue_type = "pm4", kfd.KFD_IOC_QUEUE_TYPE_COMPUTE

    def submit(self, packets: list[int]) -> int:
        """Append packets plus a fence release with interrupt; ring the doorbell; the timeline value."""
        self.submitted += 1
        release = hw.release_mem(self.ptrs.va + 16, self.submitted, data_sel=hw.DataSel.DATA64,
                                 int_sel=hw.IntSel.INT_AFTER_WRITE, ctx_id=self.event_id)
        self._write_ring(struct.pack(f"<{len(packets) + len(release)}I", *packets, *release))
        self._ring_doorbell()
        return self.submitted


class SDMAQueue(HWQueue):
    """An SDMA queue (copies)."""

    fmt, queue_type = "sdma", kfd.KFD_IOC_QUEUE_TYPE_SDMA

    FENCE = "<I"
    STAMPS = 32  # offset in `ptrs` of the last submission's start/end timestamps (traces/export.py reads them)

    def submit(self, packets: list[int]) -> int:
        """Append packets between two TIMESTAMPs, plus FENCE and TRAP; ring the doorbell; the timeline value."""
        self.submitted += 1
        head = sdma.timestamp(self.ptrs.va + self.STAMPS)
        tail = (sdma.timestamp(self.ptrs.va + self.STAMPS + 8)
                + sdma.fence(self.ptrs.va + 16, self.submitted, major=self.dev.sdma_major) + sdma.trap(self.event_id))
        words = head + list(packets) + tail
        self._write_ring(struct.pack(f"<{len(words)}I", *words))
        self._ring_doorbell()
        return self.submitted


class SDMAXGMIQueue(SDMAQueue):
    """An SDMA queue on one of the GPU's XGMI engines (KFD_IOC_QUEUE_TYPE_SDMA_XGMI): copies to a peer of its hive."""

    queue_type = kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI


class AQLQueue(HWQueue):
    """A compute queue fed AQL packets; amd_queue_t lives at the start of `ptrs`."""

    fmt, queue_type = "aql", kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL

    def _addresses(self) -> tuple[int, int]:
        self.ptrs.view[:aql.QUEUE_SIZE] = aql.make_queue(self.ring.va, RING_SIZE // aql.PACKET_SIZE)
        return self.ptrs.va + aql.QUEUE_READ_DISPATCH_ID, self.ptrs.va + aql.QUEUE_WRITE_DISPATCH_ID

    def _rptr(self) -> int:
        return struct.unpack_from("<Q", self.ptrs.view, aql.QUEUE_READ_DISPATCH_ID)[0]

    def _ring_doorbell(self) -> None:
        struct.pack_into("<Q", self.ptrs.view, aql.QUEUE_WRITE_DISPATCH_ID, self.wptr)
        self.dev.os.mmio_write(self.doorbell, self.doorbell_offset, self.wptr, 8)

    def submit(self, packet: bytes) -> int:
        """Publish one 64-byte packet (header last, as HSA requires) and ring the doorbell."""
        self.submitted += 1
        pos = (self.wptr * aql.PACKET_SIZE) % RING_SIZE
        invalid = struct.pack("<H", aql.PacketType.INVALID)
        self._write_ring(invalid + packet[2:])
        self.ring.view[pos:pos + 2] = packet[:2]
        self._ring_doorbell()
        return self.submitted

    def submit_batch(self, packets: list[bytes]) -> int:
        """Publish several packets and ring the doorbell once (runtime.graph); the last one's timeline value. Each
        header goes in after its body, in order, so the CP never reads a half-written packet."""
        first = self.wptr
        invalid = struct.pack("<H", aql.PacketType.INVALID)
        self._write_ring(b"".join(invalid + p[2:] for p in packets))
        for i, p in enumerate(packets):
            pos = ((first + i) * aql.PACKET_SIZE) % RING_SIZE
            self.ring.view[pos:pos + 2] = p[:2]
        self.submitted += len(packets)
        self._ring_doorbell()
        return self.submitted

    def completed(self) -> int:
        done = self._rptr() - self._base
        return self._done_offset + done

    def _create(self) -> None:
        super()._create()
        self._base, self._done_offset = 0, getattr(self, "_done_offset", 0)

    def _set_completed(self, value: int) -> None:
        self._done_offset, self._base = value, self._rptr()
