"""AQL (HSA Architected Queuing Language) packets and the AMD signal and queue descriptors.

Layouts from ROCm's hsa.h (hsa_kernel_dispatch_packet_t, hsa_barrier_and/or_packet_t, packet header
bits), hsa_ext_amd.h / amd_hsa_queue.h (amd_aql_pm4_ib_packet_t, amd_queue_t) and amd_hsa_signal.h
(amd_signal_t). Every packet is 64 bytes; the 16-bit header is written last by the producer.
Header: [7:0] type, [8] barrier, [10:9] acquire fence scope, [12:11] release fence scope.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

import struct
from enum import IntEnum

from simgpu.hw.bits import Field, Layout, Record

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


HEADER = Layout(type=Field(0, 8), barrier=Field(8), acquire_fence_scope=Field(9, 2), release_fence_scope=Field(11, 2))
SETUP = Layout(dimensions=Field(0, 2))  # kernel dispatch setup
AMD_AQL_FORMAT_PM4_IB = 1  # ven_hdr of the AMD vendor-specific packet


def make_header(ptype: int, barrier: bool = True, acquire: int = FenceScope.SYSTEM,
                release: int = FenceScope.SYSTEM) -> int:
    """A packet header word."""
    return HEADER.pack(type=ptype, barrier=barrier, acquire_fence_scope=acquire, release_fence_scope=release)


def parse_header(h: int) -> tuple[int, bool, int, int]:
    """(type, barrier, acquire scope, release scope) of a header word."""
    f = HEADER.unpack(h)
    return f["type"], bool(f["barrier"]), f["acquire_fence_scope"], f["release_fence_scope"]


class KernelDispatchPacket(Record):
    """hsa_kernel_dispatch_packet_t."""

    LAYOUT = (("header", "H"), ("setup", "H", 1), ("workgroup_size", "3H", (1, 1, 1)), (None, "H"),
              ("grid_size", "3I", (1, 1, 1)), ("private_segment_size", "I"), ("group_segment_size", "I"),
              ("kernel_object", "Q"), ("kernarg_address", "Q"), (None, "Q"), ("completion_signal", "Q"))


BARRIER_DEP_SIGNALS = 5


class BarrierPacket(Record):
    """hsa_barrier_and_packet_t / hsa_barrier_or_packet_t (same layout)."""

    LAYOUT = (("header", "H"), (None, "H"), (None, "I"), ("dep_signals", f"{BARRIER_DEP_SIGNALS}Q"), (None, "Q"),
              ("completion_signal", "Q"))


VENDOR_DW_CNT_REMAIN = 0xA


class VendorPM4IBPacket(Record):
    """amd_aql_pm4_ib_packet_t: run a PM4 indirect buffer (ib_jump_cmd, a PM4 INDIRECT_BUFFER) from an AQL queue."""

    LAYOUT = (("header", "H"), ("ven_hdr", "H", AMD_AQL_FORMAT_PM4_IB), ("ib_jump_cmd", "4I"),
              ("dw_cnt_remain", "I", VENDOR_DW_CNT_REMAIN), (None, "8I"), ("completion_signal", "Q"))


assert KernelDispatchPacket.SIZE == BarrierPacket.SIZE == VendorPM4IBPacket.SIZE == PACKET_SIZE


# ---- amd_signal_t (64 bytes, 64-byte aligned) ------------------------------------------------------------
class SignalKind(IntEnum):
    """amd_signal_kind_t."""

    INVALID = 0
    USER = 1
    DOORBELL = -1
    LEGACY_DOORBELL = -2


class Signal(Record):
    """amd_signal_t."""

    LAYOUT = (("kind", "q", SignalKind.USER), ("value", "q"), ("event_mailbox_ptr", "Q"), ("event_id", "I"),
              (None, "I"), ("start_ts", "Q"), ("end_ts", "Q"), ("queue_ptr", "Q"), (None, "8x"))


SIGNAL_SIZE = Signal.SIZE
SIGNAL_KIND = Signal.offset("kind")
SIGNAL_VALUE = Signal.offset("value")
SIGNAL_EVENT_MAILBOX_PTR = Signal.offset("event_mailbox_ptr")
SIGNAL_EVENT_ID = Signal.offset("event_id")
SIGNAL_START_TS = Signal.offset("start_ts")
SIGNAL_END_TS = Signal.offset("end_ts")
SIGNAL_QUEUE_PTR = Signal.offset("queue_ptr")
assert SIGNAL_SIZE == 64


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
