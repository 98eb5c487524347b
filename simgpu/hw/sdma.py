"""SDMA v6 (gfx11 system DMA) packets: opcodes, field layouts and builders.

Facts from amdgpu's sdma_v6_0_0_pkt_open.h and sdma_v6_0.c. Every packet starts with a header dword:
[7:0] OP, [15:8] SUB_OP, [31:16] op-specific bits. Counts are "minus one" encoded (COPY_LINEAR count =
bytes - 1, WRITE count = dwords - 1, CONST_FILL count = bytes - 1; sub-window pitches and rectangle
sizes too). SDMA ring pointers are byte offsets. Builders return lists of dwords.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from enum import IntEnum


class Op(IntEnum):
    """SDMA_OP_* opcodes."""

    NOP = 0
    COPY = 1
    WRITE = 2
    INDIRECT = 4
    FENCE = 5
    TRAP = 6
    SEM = 7
    POLL_REGMEM = 8
    COND_EXE = 9
    ATOMIC = 10
    CONST_FILL = 11
    PTEPDE = 12
    TIMESTAMP = 13
    SRBM_WRITE = 14
    PRE_EXE = 15
    GPUVM_INV = 16
    GCR_REQ = 17


SUBOP_COPY_LINEAR = 0
SUBOP_COPY_LINEAR_SUB_WIND = 4
SUBOP_WRITE_LINEAR = 0
SUBOP_TIMESTAMP_SET = 0
SUBOP_TIMESTAMP_GET = 1
SUBOP_TIMESTAMP_GET_GLOBAL = 2

# Packet lengths in dwords (WRITE_UNTILED: 4 + count + 1; NOP: 1 + header count).
LENGTH = {(Op.COPY, SUBOP_COPY_LINEAR): 7, (Op.COPY, SUBOP_COPY_LINEAR_SUB_WIND): 13, (Op.INDIRECT, 0): 6,
          (Op.FENCE, 0): 4, (Op.TRAP, 0): 2, (Op.POLL_REGMEM, 0): 6, (Op.ATOMIC, 0): 8, (Op.CONST_FILL, 0): 5,
          (Op.TIMESTAMP, SUBOP_TIMESTAMP_SET): 3, (Op.TIMESTAMP, SUBOP_TIMESTAMP_GET): 3,
          (Op.TIMESTAMP, SUBOP_TIMESTAMP_GET_GLOBAL): 3, (Op.GCR_REQ, 0): 5}

COPY_LINEAR_COUNT_MASK = 0x3FFFFFFF
WRITE_COUNT_MASK = 0xFFFFF
CONST_FILL_COUNT_MASK = 0x3FFFFFFF
INDIRECT_SIZE_MASK = 0xFFFFF
NOP_COUNT_SHIFT, NOP_COUNT_MASK = 16, 0x3FFF
INDIRECT_VMID_SHIFT = 16
FENCE_MTYPE_SHIFT = 16
TRAP_INT_CONTEXT_MASK = 0x0FFFFFFF
POLL_HDP_FLUSH = 1 << 26
POLL_FUNC_SHIFT = 28
POLL_MEM = 1 << 31
ATOMIC_LOOP = 1 << 16
ATOMIC_OP_SHIFT = 25
CONST_FILL_SIZE_SHIFT = 30  # FILLSIZE: 0 = byte, 2 = dword
SUB_WIND_ELEMENT_SHIFT = 29
SUB_WIND_XY_MASK = 0x3FFF
SUB_WIND_Z_MASK = 0x1FFF
SUB_WIND_PITCH_SHIFT, SUB_WIND_PITCH_MASK = 13, 0x7FFFF
SUB_WIND_SLICE_MASK = 0x0FFFFFFF
GCR_VMID_SHIFT = 24


def _lo(v: int) -> int:
    return v & 0xFFFFFFFF


def _hi(v: int) -> int:
    return (v >> 32) & 0xFFFFFFFF


def header(op: int, sub_op: int = 0, extra: int = 0) -> int:
    """A header dword: op, sub_op and the op-specific high bits (already shifted into place)."""
    return (op & 0xFF) | ((sub_op & 0xFF) << 8) | (extra & 0xFFFF0000)


def parse_header(h: int) -> tuple[int, int]:
    """(op, sub_op) of a header dword."""
    return h & 0xFF, (h >> 8) & 0xFF


def nop(extra_dwords: int = 0) -> list[int]:
    """A NOP that also skips `extra_dwords` following dwords."""
    return [header(Op.NOP, 0, (extra_dwords & NOP_COUNT_MASK) << NOP_COUNT_SHIFT)] + [0] * extra_dwords


def copy_linear(dst: int, src: int, nbytes: int) -> list[int]:
    """Copy nbytes (1 .. 2^30) from VA src to VA dst."""
    return [header(Op.COPY, SUBOP_COPY_LINEAR), (nbytes - 1) & COPY_LINEAR_COUNT_MASK, 0,
            _lo(src), _hi(src), _lo(dst), _hi(dst)]


def copy_linear_sub_window(dst: int, src: int, element_log2: int, rect: tuple[int, int, int],
                           src_xyz: tuple[int, int, int] = (0, 0, 0), src_pitch: int = 1, src_slice_pitch: int = 1,
                           dst_xyz: tuple[int, int, int] = (0, 0, 0), dst_pitch: int = 1,
                           dst_slice_pitch: int = 1) -> list[int]:
    """Copy a rect (x, y, z elements of 2^element_log2 bytes) between two linear 3-D surfaces.

    Pitches are in elements (row pitch) and elements (slice pitch), as in the packet."""
    sx, sy, sz = src_xyz
    dx, dy, dz = dst_xyz
    rx, ry, rz = rect
    return [header(Op.COPY, SUBOP_COPY_LINEAR_SUB_WIND, (element_log2 & 7) << SUB_WIND_ELEMENT_SHIFT),
            _lo(src), _hi(src),
            (sx & SUB_WIND_XY_MASK) | ((sy & SUB_WIND_XY_MASK) << 16),
            (sz & SUB_WIND_Z_MASK) | (((src_pitch - 1) & SUB_WIND_PITCH_MASK) << SUB_WIND_PITCH_SHIFT),
            (src_slice_pitch - 1) & SUB_WIND_SLICE_MASK,
            _lo(dst), _hi(dst),
            (dx & SUB_WIND_XY_MASK) | ((dy & SUB_WIND_XY_MASK) << 16),
            (dz & SUB_WIND_Z_MASK) | (((dst_pitch - 1) & SUB_WIND_PITCH_MASK) << SUB_WIND_PITCH_SHIFT),
            (dst_slice_pitch - 1) & SUB_WIND_SLICE_MASK,
            ((rx - 1) & SUB_WIND_XY_MASK) | (((ry - 1) & SUB_WIND_XY_MASK) << 16),
            (rz - 1) & SUB_WIND_Z_MASK]


def write_untiled(dst: int, *data: int) -> list[int]:
    """Write dwords to VA dst (dword aligned)."""
    if not data:
        raise ValueError("WRITE_UNTILED needs at least one dword")
    return [header(Op.WRITE, SUBOP_WRITE_LINEAR), _lo(dst) & ~3, _hi(dst), (len(data) - 1) & WRITE_COUNT_MASK,
            *(_lo(d) for d in data)]


def const_fill(dst: int, value: int, nbytes: int, dword: bool = True) -> list[int]:
    """Fill nbytes at dst with the dword `value` (or its low byte when dword is False)."""
    size = 2 if dword else 0
    return [header(Op.CONST_FILL, 0, size << CONST_FILL_SIZE_SHIFT), _lo(dst), _hi(dst), _lo(value),
            (nbytes - 1) & CONST_FILL_COUNT_MASK]


def fence(addr: int, value: int, mtype: int = 3) -> list[int]:
    """Write a 32-bit fence value to VA addr once all prior packets completed."""
    return [header(Op.FENCE, 0, (mtype & 7) << FENCE_MTYPE_SHIFT), _lo(addr) & ~3, _hi(addr), _lo(value)]


def trap(int_context: int = 0) -> list[int]:
    """Raise an interrupt carrying int_context (28 bits)."""
    return [header(Op.TRAP), int_context & TRAP_INT_CONTEXT_MASK]


def poll_regmem(addr: int, ref: int, mask: int = 0xFFFFFFFF, func: int = 3, memory: bool = True,
                hdp_flush: bool = False, interval: int = 10, retry_count: int = 0xFFF) -> list[int]:
    """Wait until (dword at addr & mask) FUNC ref (functions as PM4 WAIT_REG_MEM); addr VA or register."""
    extra = ((func & 7) << POLL_FUNC_SHIFT) | (POLL_MEM if memory else 0) | (POLL_HDP_FLUSH if hdp_flush else 0)
    a = (addr & ~3) if memory else (addr << 2)
    return [header(Op.POLL_REGMEM, 0, extra), _lo(a), _hi(a), _lo(ref), _lo(mask),
            (interval & 0xFFFF) | ((retry_count & 0xFFF) << 16)]


def timestamp(addr: int, global_counter: bool = True) -> list[int]:
    """Write the 64-bit timestamp (100 MHz) to VA addr."""
    sub = SUBOP_TIMESTAMP_GET_GLOBAL if global_counter else SUBOP_TIMESTAMP_GET
    return [header(Op.TIMESTAMP, sub), _lo(addr), _hi(addr)]


def atomic(addr: int, op: int, src: int = 0, cmp: int = 0, loop: bool = False, loop_interval: int = 128) -> list[int]:
    """Atomic op (a TC_OP code, see simgpu.hw.pm4.TcOp) on VA addr."""
    extra = (ATOMIC_LOOP if loop else 0) | ((op & 0x7F) << ATOMIC_OP_SHIFT)
    return [header(Op.ATOMIC, 0, extra), _lo(addr), _hi(addr), _lo(src), _hi(src), _lo(cmp), _hi(cmp),
            loop_interval & 0x1FFF]


def gcr_req(base: int = 0, limit: int = 0, gcr_control: int = 0, vmid: int = 0) -> list[int]:
    """Cache control request over [base, limit] (addresses in 128-byte units)."""
    return [header(Op.GCR_REQ), base & 0xFFFFFF80, ((base >> 32) & 0xFFFF) | ((gcr_control & 0xFFFF) << 16),
            (limit & 0xFFFFFF80) | ((gcr_control >> 16) & 7),
            ((limit >> 32) & 0xFFFF) | ((vmid & 0xF) << GCR_VMID_SHIFT)]


def indirect_buffer(addr: int, size_dw: int, vmid: int = 0, csa: int = 0) -> list[int]:
    """Run an indirect buffer of size_dw dwords at VA addr (32-byte aligned)."""
    return [header(Op.INDIRECT, 0, (vmid & 0xF) << INDIRECT_VMID_SHIFT), _lo(addr) & ~0x1F, _hi(addr),
            size_dw & INDIRECT_SIZE_MASK, _lo(csa), _hi(csa)]
