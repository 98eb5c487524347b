"""Hardware queues (compute HQDs and SDMA queues), their state, error reports and memory helpers.

A queue is created by the device's owner (the mock driver) with what amdgpu programs into the MQD:
ring base and size, rptr report address, wptr poll address, doorbell, VMID and format. Ring pointers
are monotonic 64-bit counters in the format's unit (PM4: dwords, AQL: 64-byte packets, SDMA: bytes);
the ring offset is the pointer modulo the ring size. Every address a queue uses is a GPU virtual address
in the queue's VMID, translated by the MMU.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import StrEnum

from simgpu.fault import HardwareFault

UNIT_BYTES = {"pm4": 4, "aql": 64, "sdma": 1}
_DWORDS = [f"<{n}I" for n in range(17)]  # struct formats of a packet's first dwords (made once, not per packet)


class QueueState(StrEnum):
    """What a queue is doing."""

    IDLE = "idle"  # rptr == wptr (or waiting for the producer to write a packet)
    BLOCKED = "blocked"  # a wait (WAIT_REG_MEM, POLL_REGMEM, barrier, atomic loop) is not satisfied yet
    ERROR = "error"  # hung on a bad packet or a fault; see Queue.error
    DISABLED = "disabled"  # destroyed


class PacketError(Exception):
    """A malformed or unsupported packet: the queue stops with this reason."""

    def __init__(self, why: str, fault: HardwareFault | None = None):
        super().__init__(why)
        self.why, self.fault = why, fault


@dataclass
class QueueError:
    """Why a queue hung: where (rptr, or IB address and offset), the packet's words, the reason."""

    queue: str
    rptr: int
    packet: list[int]
    why: str
    where: str = ""
    fault: HardwareFault | None = None

    def __str__(self) -> str:
        words = " ".join(f"{w:08x}" for w in self.packet[:16]) + (" ..." if len(self.packet) > 16 else "")
        loc = f" ({self.where})" if self.where else ""
        return f"queue {self.queue} hung at rptr {self.rptr}{loc}: {self.why} [packet: {words}]"


@dataclass
class Frame:
    """A stream of dwords being executed: the ring (wrapping, end = wptr) or an indirect buffer."""

    base: int  # VA
    size_dw: int  # ring size (the ring wraps) or IB length
    pos: int = 0  # dword position (monotonic for the ring)
    end: int = 0
    ring: bool = False

    def address(self, pos: int) -> int:
        """VA of the dword at position pos."""
        return self.base + 4 * (pos % self.size_dw if self.ring else pos)

    def describe(self) -> str:
        return "ring" if self.ring else f"IB at {self.base:#x} dword {self.pos} of {self.size_dw}"

    def where(self, pos: int) -> str:
        """Where the packet at dword position `pos` sits: its byte offset in the ring, or its place in the IB."""
        return f"ring offset {4 * (pos % self.size_dw):#x}" if self.ring else \
            f"IB at {self.base:#x} dword {pos} of {self.size_dw}"


@dataclass
class Queue:
    """One hardware queue (HQD or SDMA RLC queue) as its MQD describes it."""

    name: str
    fmt: str  # "pm4", "aql" or "sdma"
    ring_base: int
    ring_size: int  # bytes
    vmid: int
    doorbell: int | None = None
    rptr_addr: int = 0  # where the CP reports its read pointer (0: nowhere)
    wptr_addr: int = 0  # where poll() reads the write pointer (0: doorbell only)
    engine: int = 0  # SDMA engine / compute pipe, informational
    rptr: int = 0
    wptr: int = 0
    state: QueueState = QueueState.IDLE
    waiting: str = ""  # what a blocked (or producer-waiting) queue waits for
    error: QueueError | None = None
    regs: dict[int, int] = field(default_factory=dict)  # SH registers (per HQD)
    stack: list[Frame] = field(default_factory=list)  # PM4 ring + IBs, or SDMA ring + IB
    ib_stack: list[Frame] = field(default_factory=list)  # AQL: PM4 IB of a vendor packet in progress
    packets: int = 0  # packets completed
    dispatches: int = 0
    atomic_return: int = 0  # last ATOMIC_MEM return value (COPY_DATA src ATOMIC_RETURN)
    local_ts_offset: int = 0  # SDMA TIMESTAMP_SET
    trace: list[tuple[str, int]] = field(default_factory=list)  # thread-trace/perf events (name, timestamp)
    current: tuple | None = None  # (frame, position, packet dwords read so far): for error reports
    written_by: tuple | None = None  # (frame, position) of the blocked write-then-wait packet that already wrote

    @property
    def unit(self) -> int:
        """Bytes per rptr/wptr unit."""
        return UNIT_BYTES[self.fmt]

    @property
    def ring_units(self) -> int:
        return self.ring_size // self.unit

    def describe(self) -> str:
        """One line (two for errors) of queue state."""
        s = (f"{self.name}: {self.fmt} vmid {self.vmid} doorbell {self.doorbell} ring {self.ring_base:#x}+"
             f"{self.ring_size:#x} rptr {self.rptr} wptr {self.wptr} {self.state.value}, {self.packets} packets")
        if self.dispatches:
            s += f", {self.dispatches} dispatches"
        if self.state == QueueState.BLOCKED or (self.waiting and self.state == QueueState.IDLE):
            s += f"\n    waiting: {self.waiting}"
        if self.error is not None:
            s += f"\n    {self.error}"
        return s


def check_ring(fmt: str, ring_base: int, ring_size: int) -> None:
    """Validate a ring's geometry (raises ValueError)."""
    if fmt not in UNIT_BYTES:
        raise ValueError(f"unknown queue format {fmt!r}; expected pm4, aql or sdma")
    if ring_size < 256 or ring_size & (ring_size - 1):
        raise ValueError(f"ring size {ring_size:#x} must be a power of two of at least 256 bytes")
    if ring_base % 256:
        raise ValueError(f"ring base {ring_base:#x} must be 256-byte aligned")


# ---- memory access through the queue's VMID ---------------------------------------------------------------
def read_dwords(mmu, vmid: int, va: int, n: int) -> list[int]:
    """n little-endian dwords at VA."""
    if n <= 0:
        return []
    return mmu.dwords(vmid, va, n)  # (a packet's few dwords: numpy costs more)


def observed_u32(gpu, kind: str, vmid: int, va: int) -> int:
    """The dword at VA where the GPU observes a producer (a wait's memory), handed to the GPU's observer (set only
    while recording or replaying: simgpu.gpu.GPU.observer); callers test `gpu.observer` first and keep their fast
    read when it is None."""
    return int.from_bytes(gpu.observer(kind, vmid, va, gpu.mmu.read(vmid, va, 4)), "little")


def read_u32(mmu, vmid: int, va: int) -> int:
    return int.from_bytes(mmu.read(vmid, va, 4), "little")


def read_u64(mmu, vmid: int, va: int) -> int:
    return int.from_bytes(mmu.read(vmid, va, 8), "little")


def write_u32(mmu, vmid: int, va: int, value: int) -> None:
    mmu.write(vmid, va, struct.pack("<I", value & 0xFFFFFFFF))


def write_u64(mmu, vmid: int, va: int, value: int) -> None:
    mmu.write(vmid, va, struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF))


def canonical(va: int) -> int:
    """A 48-bit GPU VA sign-extended to 64 bits (packets carry 48-bit address fields)."""
    va &= (1 << 48) - 1
    return va | (0xFFFF << 48) if va >> 47 else va


def packet_va(lo: int, hi: int) -> int:
    """canonical(u64(lo, hi)) in one call: the VA of a packet's address field (SDMA's copies, fences and polls)."""
    va = (lo | hi << 32) & 0xFFFF_FFFF_FFFF
    return va | 0xFFFF_0000_0000_0000 if va >> 47 else va


def read_frame(mmu, vmid: int, frame: Frame, pos: int, n: int) -> list[int]:
    """n dwords of a frame from position pos (ring reads wrap)."""
    if not frame.ring:
        return read_dwords(mmu, vmid, frame.address(pos), n)
    out: list[int] = []
    while n > 0:
        off = pos % frame.size_dw
        take = min(n, frame.size_dw - off)
        out += read_dwords(mmu, vmid, frame.base + 4 * off, take)
        pos, n = pos + take, n - take
    return out


def window_dwords(mmu, vmid: int, va: int, n: int, window: list) -> list[int] | None:
    """`n` dwords at `va` (all within its page) from `window` ([page, memory, MMU generation], kept by the caller for
    one execute call): the MMU's page_view of the page, live memory (a packet sees what the packets before it
    wrote), taken again when the page or the MMU's generation (its next invalidation or eviction) changed. None
    where the MMU gives no view of the page (its translation not cached yet): the caller reads through the MMU,
    which translates and faults."""
    if window[0] != va >> 12 or window[2] != mmu.generation:
        window[:] = va >> 12, mmu.page_view(vmid, va, "read"), mmu.generation
    if window[1] is None:
        window[0] = None  # (look again next time: the caller's read may leave the translation cached)
        return None
    return list(struct.unpack_from(_DWORDS[n] if n < 17 else f"<{n}I", window[1], va & 4095))
