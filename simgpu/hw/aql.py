"""AQL (HSA Architected Queuing Language) packets and the AMD signal and queue descriptors.

Layouts from ROCm's hsa.h (hsa_kernel_dispatch_packet_t, hsa_barrier_and/or_packet_t, packet header
bits), hsa_ext_amd.h / amd_hsa_queue.h (amd_aql_pm4_ib_packet_t, amd_queue_t) and amd_hsa_signal.h
(amd_signal_t). Every packet is 64 bytes; the 16-bit header is written last by the producer.
Header: [7:0] type, [8] barrier, [10:9] acquire fence scope, [12:11] release fence scope.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

PACKET_SIZE = 64


class PacketType(IntEnum):
    """hsa_packet_type_t."""

    VENDOR_SPECIFIC = 0
    INVALID = 1
    KERNEL_DISPATCH = 2
    BARRIER_AND = 3
    AGENT_DISPATCH = 4
    BARRIER_OR = 5


class FenceScope(IntEnum):
    """hsa_fence_scope_t (3 is reserved)."""

    NONE = 0
    AGENT = 1
    SYSTEM = 2


HEADER_TYPE_SHIFT = 0
HEADER_BARRIER = 1 << 8
HEADER_ACQUIRE_SHIFT = 9
HEADER_RELEASE_SHIFT = 11
SETUP_DIMENSIONS_MASK = 3
AMD_AQL_FORMAT_PM4_IB = 1  # ven_hdr of the AMD vendor-specific packet


def make_header(ptype: int, barrier: bool = True, acquire: int = FenceScope.SYSTEM,
                release: int = FenceScope.SYSTEM) -> int:
    """A packet header word."""
    return (ptype & 0xFF) | (HEADER_BARRIER if barrier else 0) | ((acquire & 3) << HEADER_ACQUIRE_SHIFT) | \
        ((release & 3) << HEADER_RELEASE_SHIFT)


def parse_header(h: int) -> tuple[int, bool, int, int]:
    """(type, barrier, acquire scope, release scope) of a header word."""
    return h & 0xFF, bool(h & HEADER_BARRIER), (h >> HEADER_ACQUIRE_SHIFT) & 3, (h >> HEADER_RELEASE_SHIFT) & 3


# hsa_kernel_dispatch_packet_t: header, setup, workgroup_size_x/y/z, reserved0, grid_size_x/y/z,
# private_segment_size, group_segment_size, kernel_object, kernarg_address, reserved2, completion_signal.
KERNEL_DISPATCH = struct.Struct("<HHHHHHIIIIIQQQQ")
# hsa_barrier_and_packet_t / hsa_barrier_or_packet_t: header, reserved0, reserved1, dep_signal[5], reserved2,
# completion_signal.
BARRIER = struct.Struct("<HHI5QQQ")
BARRIER_DEP_SIGNALS = 5
# amd_aql_pm4_ib_packet_t: header, ven_hdr, ib_jump_cmd[4] (a PM4 INDIRECT_BUFFER packet), dw_cnt_remain,
# reserved[8], completion_signal.
VENDOR_PM4_IB = struct.Struct("<HH4II8IQ")
VENDOR_DW_CNT_REMAIN = 0xA
assert KERNEL_DISPATCH.size == BARRIER.size == VENDOR_PM4_IB.size == PACKET_SIZE


@dataclass
class KernelDispatchPacket:
    """hsa_kernel_dispatch_packet_t."""

    header: int = 0
    setup: int = 1
    workgroup_size: tuple[int, int, int] = (1, 1, 1)
    grid_size: tuple[int, int, int] = (1, 1, 1)
    private_segment_size: int = 0
    group_segment_size: int = 0
    kernel_object: int = 0
    kernarg_address: int = 0
    completion_signal: int = 0

    def pack(self) -> bytes:
        """The 64 packet bytes."""
        return KERNEL_DISPATCH.pack(self.header, self.setup, *self.workgroup_size, 0, *self.grid_size,
                                    self.private_segment_size, self.group_segment_size, self.kernel_object,
                                    self.kernarg_address, 0, self.completion_signal)

    @classmethod
    def unpack(cls, data: bytes) -> KernelDispatchPacket:
        """Parse 64 packet bytes."""
        f = KERNEL_DISPATCH.unpack(data[:PACKET_SIZE])
        return cls(f[0], f[1], tuple(f[2:5]), tuple(f[6:9]), f[9], f[10], f[11], f[12], f[14])


@dataclass
class BarrierPacket:
    """hsa_barrier_and_packet_t / hsa_barrier_or_packet_t (same layout)."""

    header: int = 0
    dep_signals: tuple[int, ...] = (0,) * BARRIER_DEP_SIGNALS
    completion_signal: int = 0

    def pack(self) -> bytes:
        """The 64 packet bytes."""
        deps = tuple(self.dep_signals) + (0,) * (BARRIER_DEP_SIGNALS - len(self.dep_signals))
        return BARRIER.pack(self.header, 0, 0, *deps[:BARRIER_DEP_SIGNALS], 0, self.completion_signal)

    @classmethod
    def unpack(cls, data: bytes) -> BarrierPacket:
        """Parse 64 packet bytes."""
        f = BARRIER.unpack(data[:PACKET_SIZE])
        return cls(f[0], tuple(f[3:8]), f[9])


@dataclass
class VendorPM4IBPacket:
    """amd_aql_pm4_ib_packet_t: run a PM4 indirect buffer from an AQL queue."""

    header: int = 0
    ib_jump_cmd: tuple[int, int, int, int] = (0, 0, 0, 0)
    completion_signal: int = 0
    ven_hdr: int = AMD_AQL_FORMAT_PM4_IB
    dw_cnt_remain: int = VENDOR_DW_CNT_REMAIN

    def pack(self) -> bytes:
        """The 64 packet bytes."""
        return VENDOR_PM4_IB.pack(self.header, self.ven_hdr, *self.ib_jump_cmd, self.dw_cnt_remain, *([0] * 8),
                                  self.completion_signal)

    @classmethod
    def unpack(cls, data: bytes) -> VendorPM4IBPacket:
        """Parse 64 packet bytes."""
        f = VENDOR_PM4_IB.unpack(data[:PACKET_SIZE])
        return cls(f[0], tuple(f[2:6]), f[15], f[1], f[6])


# ---- amd_signal_t (64 bytes, 64-byte aligned) ------------------------------------------------------------
class SignalKind(IntEnum):
    """amd_signal_kind_t."""

    INVALID = 0
    USER = 1
    DOORBELL = -1
    LEGACY_DOORBELL = -2


SIGNAL_SIZE = 64
# kind, value, event_mailbox_ptr, event_id, reserved1, start_ts, end_ts, queue_ptr, reserved3[2]
SIGNAL = struct.Struct("<qqQIIQQQ8x")
SIGNAL_KIND = 0
SIGNAL_VALUE = 8
SIGNAL_EVENT_MAILBOX_PTR = 16
SIGNAL_EVENT_ID = 24
SIGNAL_START_TS = 32
SIGNAL_END_TS = 40
SIGNAL_QUEUE_PTR = 48
assert SIGNAL.size == SIGNAL_SIZE


@dataclass
class Signal:
    """amd_signal_t."""

    kind: int = SignalKind.USER
    value: int = 0
    event_mailbox_ptr: int = 0
    event_id: int = 0
    start_ts: int = 0
    end_ts: int = 0
    queue_ptr: int = 0

    def pack(self) -> bytes:
        """The 64 signal bytes."""
        return SIGNAL.pack(self.kind, self.value, self.event_mailbox_ptr, self.event_id, 0, self.start_ts,
                           self.end_ts, self.queue_ptr)

    @classmethod
    def unpack(cls, data: bytes) -> Signal:
        """Parse 64 signal bytes."""
        f = SIGNAL.unpack(data[:SIGNAL_SIZE])
        return cls(f[0], f[1], f[2], f[3], f[5], f[6], f[7])


# ---- amd_queue_t (256 bytes, 256-byte aligned): the fields the packet processor uses ---------------------
QUEUE_SIZE = 256
QUEUE_HSA_TYPE = 0  # hsa_queue_t.type (u32)
QUEUE_HSA_FEATURES = 4
QUEUE_HSA_BASE_ADDRESS = 8  # u64
QUEUE_HSA_DOORBELL_SIGNAL = 16  # u64 handle
QUEUE_HSA_SIZE = 24  # u32, packets
QUEUE_HSA_ID = 32  # u64
QUEUE_WRITE_DISPATCH_ID = 56  # u64
QUEUE_GROUP_SEGMENT_APERTURE_BASE_HI = 64
QUEUE_PRIVATE_SEGMENT_APERTURE_BASE_HI = 68
QUEUE_MAX_CU_ID = 72
QUEUE_MAX_WAVE_ID = 76
QUEUE_READ_DISPATCH_ID = 128  # u64: the CP's rptr report address points here
QUEUE_READ_DISPATCH_ID_FIELD_BASE_BYTE_OFFSET = 136  # u32: lets the CP find amd_queue_t from the rptr address
QUEUE_COMPUTE_TMPRING_SIZE = 140  # u32
QUEUE_SCRATCH_RESOURCE_DESCRIPTOR = 144  # u32[4]
QUEUE_SCRATCH_BACKING_MEMORY_LOCATION = 160  # u64
QUEUE_SCRATCH_BACKING_MEMORY_BYTE_SIZE = 168  # u64
QUEUE_SCRATCH_WAVE64_LANE_BYTE_SIZE = 176  # u32
QUEUE_PROPERTIES = 180  # u32
QUEUE_INACTIVE_SIGNAL = 192  # u64


def make_queue(base_address: int, size_packets: int, queue_id: int = 0, tmpring_size: int = 0,
               scratch_base: int = 0, scratch_size: int = 0, wave64_lane_bytes: int = 0) -> bytes:
    """An amd_queue_t image with the fields the packet processor and the runtime read."""
    buf = bytearray(QUEUE_SIZE)
    struct.pack_into("<IIQQIIQ", buf, 0, 0, 1, base_address, 0, size_packets, 0, queue_id)  # type MULTI, features
    struct.pack_into("<I", buf, QUEUE_READ_DISPATCH_ID_FIELD_BASE_BYTE_OFFSET, QUEUE_READ_DISPATCH_ID)
    struct.pack_into("<I", buf, QUEUE_COMPUTE_TMPRING_SIZE, tmpring_size)
    struct.pack_into("<QQI", buf, QUEUE_SCRATCH_BACKING_MEMORY_LOCATION, scratch_base, scratch_size,
                     wave64_lane_bytes)
    return bytes(buf)
