"""SDMA v6 (gfx11 system DMA) packets: opcodes, field layouts and builders; SDMA 4.4's differences (gfx942).

Facts from amdgpu's sdma_v6_0_0_pkt_open.h and sdma_v6_0.c. Every packet starts with a header dword:
[7:0] OP, [15:8] SUB_OP, [31:16] op-specific bits. Counts are "minus one" encoded (COPY_LINEAR count =
bytes - 1, WRITE count = dwords - 1, CONST_FILL count = bytes - 1; sub-window pitches and rectangle
sizes too). SDMA ring pointers are byte offsets. Builders return lists of dwords; the fields they pack
are Layouts (simgpu.hw.bits) that the simulator's SDMA engine (simgpu.cp.sdma) reads back.

SDMA 4.4 (MI300's engines: amdgpu's sdma_v4_4_2.c builds its packets from vega10_sdma_pkt_open.h) has the same
opcodes, lengths and body layouts for every packet this model runs (NOP, COPY_LINEAR and its sub-window form,
WRITE_UNTILED, INDIRECT, FENCE, TRAP, POLL_REGMEM, ATOMIC, CONST_FILL, TIMESTAMP), except four fields, declared
below with a _V4 suffix: COPY_LINEAR's and CONST_FILL's byte counts are 22 bits wide (4 MiB a packet, where v6 has
30 bits), FENCE's header has no cache fields (v6's MTYPE, GCC, SYS, SNP, GPA, L2/LLC policy and CPV in bits 16-28
are reserved), and a sub-window's z and depth are 11 bits wide (v6: 13).

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from enum import IntEnum

from simgpu.hw.bits import Field, Layout, hi32, lo32, u64


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

# ---- header dwords: OP and SUB_OP, then each op's own bits ----------------------------------------------
HEADER = Layout(op=Field(0, 8), sub_op=Field(8, 8))
NOP_HEADER = Layout(count=Field(16, 14))  # dwords that follow the header
COPY_HEADER = Layout(broadcast=Field(27))
SUB_WIND_HEADER = Layout(element_size=Field(29, 3))  # log2 of the element's bytes
CONST_FILL_HEADER = Layout(fillsize=Field(30, 2))  # 0: byte, 2: dword
FENCE_HEADER = Layout(mtype=Field(16, 3))
POLL_HEADER = Layout(hdp_flush=Field(26), func=Field(28, 3), mem_poll=Field(31))
ATOMIC_HEADER = Layout(loop=Field(16), operation=Field(25, 7))  # operation: a TC_OP (simgpu.hw.pm4.TcOp)
INDIRECT_HEADER = Layout(vmid=Field(16, 4))

# ---- body fields ------------------------------------------------------------------------------------------
COPY_LINEAR_COUNT = Field(0, 30)  # bytes - 1
WRITE_COUNT = Field(0, 20)  # dwords - 1
CONST_FILL_COUNT = Field(0, 30)  # bytes - 1
INDIRECT_SIZE = Field(0, 20)  # dwords
TRAP_INT_CONTEXT = Field(0, 28)
POLL_REG_ADDR = Field(2, 18)  # POLL_REGMEM of a register: its dword address, in bytes
POLL_DW5 = Layout(interval=Field(0, 16), retry_count=Field(16, 12))
LOOP_INTERVAL = Field(0, 13)
SUB_WIND_XY = Layout(x=Field(0, 14), y=Field(16, 14))  # a start point; the rectangle's size - 1
SUB_WIND_Z_PITCH = Layout(z=Field(0, 13), pitch=Field(13, 19))  # pitch - 1, in elements
SUB_WIND_SLICE_PITCH = Field(0, 28)  # slice pitch - 1, in elements
SUB_WIND_RECT_Z = Field(0, 13)  # depth - 1
GCR_BASE_HI = Layout(base_hi=Field(0, 16), gcr_control_lo=Field(16, 16))
GCR_LIMIT_LO = Layout(gcr_control_hi=Field(0, 3), limit_lo=Field(7, 25))
GCR_LIMIT_HI = Layout(limit_hi=Field(0, 16), vmid=Field(24, 4))

# ---- SDMA 4.4's narrower fields (module docstring) -------------------------------------------------------
COPY_LINEAR_COUNT_V4 = Field(0, 22)  # bytes - 1
CONST_FILL_COUNT_V4 = Field(0, 22)  # bytes - 1
SUB_WIND_Z_V4 = Field(0, 11)  # z of a surface's start (its dword also holds the pitch) and the rectangle's depth - 1
FENCE_HEADER_RESERVED_V4 = 0xFFFF0000
SDMA_MAJOR = {"gfx9": 4, "gfx10": 5, "gfx11": 6, "gfx12": 7}  # every chip of an ISA family has that SDMA generation


def max_linear_bytes(major: int = 6) -> int:
    """The most bytes one COPY_LINEAR or CONST_FILL of an SDMA generation moves."""
    return (COPY_LINEAR_COUNT_V4 if major == 4 else COPY_LINEAR_COUNT).mask + 1


def header(op: int, sub_op: int = 0, extra: int = 0) -> int:
    """A header dword: op, sub_op and the op-specific high bits (an op's header layout, packed)."""
    return HEADER.pack(op=op, sub_op=sub_op) | (extra & 0xFFFF0000)


def parse_header(h: int) -> tuple[int, int]:
    """(op, sub_op) of a header dword."""
    return HEADER.op.get(h), HEADER.sub_op.get(h)


def nop(extra_dwords: int = 0) -> list[int]:
    """A NOP that also skips `extra_dwords` following dwords."""
    return [header(Op.NOP, 0, NOP_HEADER.pack(count=extra_dwords))] + [0] * extra_dwords


def copy_linear(dst: int, src: int, nbytes: int, major: int = 6) -> list[int]:
    """Copy nbytes (1 .. 2^30; on SDMA 4, 1 .. 2^22) from VA src to VA dst."""
    if not 1 <= nbytes <= max_linear_bytes(major):
        raise ValueError(f"COPY_LINEAR moves 1..{max_linear_bytes(major)} bytes on SDMA {major}, not {nbytes}")
    return [header(Op.COPY, SUBOP_COPY_LINEAR), COPY_LINEAR_COUNT.bits(nbytes - 1), 0,
            lo32(src), hi32(src), lo32(dst), hi32(dst)]


def _sub_window_surface(addr: int, xyz: tuple[int, int, int], pitch: int, slice_pitch: int) -> list[int]:
    x, y, z = xyz
    return [lo32(addr), hi32(addr), SUB_WIND_XY.pack(x=x, y=y), SUB_WIND_Z_PITCH.pack(z=z, pitch=pitch - 1),
            SUB_WIND_SLICE_PITCH.bits(slice_pitch - 1)]


def copy_linear_sub_window(dst: int, src: int, element_log2: int, rect: tuple[int, int, int],
                           src_xyz: tuple[int, int, int] = (0, 0, 0), src_pitch: int = 1, src_slice_pitch: int = 1,
                           dst_xyz: tuple[int, int, int] = (0, 0, 0), dst_pitch: int = 1,
                           dst_slice_pitch: int = 1) -> list[int]:
    """Copy a rect (x, y, z elements of 2^element_log2 bytes) between two linear 3-D surfaces.

    Pitches are in elements (row pitch) and elements (slice pitch), as in the packet."""
    rx, ry, rz = rect
    return [header(Op.COPY, SUBOP_COPY_LINEAR_SUB_WIND, SUB_WIND_HEADER.pack(element_size=element_log2)),
            *_sub_window_surface(src, src_xyz, src_pitch, src_slice_pitch),
            *_sub_window_surface(dst, dst_xyz, dst_pitch, dst_slice_pitch),
            SUB_WIND_XY.pack(x=rx - 1, y=ry - 1), SUB_WIND_RECT_Z.bits(rz - 1)]


def sub_window_surface(p: list[int], at: int) -> tuple[int, tuple[int, int, int], int, int]:
    """(address, (x, y, z), row pitch, slice pitch) of the surface whose 5 dwords start at p[at]."""
    xy, zp = SUB_WIND_XY.unpack(p[at + 2]), SUB_WIND_Z_PITCH.unpack(p[at + 3])
    return (u64(p[at], p[at + 1]), (xy["x"], xy["y"], zp["z"]), zp["pitch"] + 1,
            SUB_WIND_SLICE_PITCH.get(p[at + 4]) + 1)


def write_untiled(dst: int, *data: int) -> list[int]:
    """Write dwords to VA dst (dword aligned)."""
    if not data:
        raise ValueError("WRITE_UNTILED needs at least one dword")
    return [header(Op.WRITE, SUBOP_WRITE_LINEAR), lo32(dst) & ~3, hi32(dst), WRITE_COUNT.bits(len(data) - 1),
            *(lo32(d) for d in data)]


def const_fill(dst: int, value: int, nbytes: int, dword: bool = True) -> list[int]:
    """Fill nbytes at dst with the dword `value` (or its low byte when dword is False)."""
    return [header(Op.CONST_FILL, 0, CONST_FILL_HEADER.pack(fillsize=2 if dword else 0)), lo32(dst), hi32(dst),
            lo32(value), CONST_FILL_COUNT.bits(nbytes - 1)]


def fence(addr: int, value: int, mtype: int = 3, major: int = 6) -> list[int]:
    """Write a 32-bit fence value to VA addr once all prior packets completed (SDMA 4's header has no cache fields:
    no MTYPE there)."""
    extra = 0 if major == 4 else FENCE_HEADER.pack(mtype=mtype)
    return [header(Op.FENCE, 0, extra), lo32(addr) & ~3, hi32(addr), lo32(value)]


def trap(int_context: int = 0) -> list[int]:
    """Raise an interrupt carrying int_context (28 bits)."""
    return [header(Op.TRAP), TRAP_INT_CONTEXT.bits(int_context)]


def poll_regmem(addr: int, ref: int, mask: int = 0xFFFFFFFF, func: int = 3, memory: bool = True,
                hdp_flush: bool = False, interval: int = 10, retry_count: int = 0xFFF) -> list[int]:
    """Wait until (dword at addr & mask) FUNC ref (functions as PM4 WAIT_REG_MEM); addr VA or register."""
    extra = POLL_HEADER.pack(func=func, mem_poll=memory, hdp_flush=hdp_flush)
    a = (addr & ~3) if memory else POLL_REG_ADDR.bits(addr)
    return [header(Op.POLL_REGMEM, 0, extra), lo32(a), hi32(a), lo32(ref), lo32(mask),
            POLL_DW5.pack(interval=interval, retry_count=retry_count)]


def timestamp(addr: int, global_counter: bool = True) -> list[int]:
    """Write the 64-bit timestamp (100 MHz) to VA addr."""
    sub = SUBOP_TIMESTAMP_GET_GLOBAL if global_counter else SUBOP_TIMESTAMP_GET
    return [header(Op.TIMESTAMP, sub), lo32(addr), hi32(addr)]


def atomic(addr: int, op: int, src: int = 0, cmp: int = 0, loop: bool = False, loop_interval: int = 128) -> list[int]:
    """Atomic op (a TC_OP code, see simgpu.hw.pm4.TcOp) on VA addr."""
    return [header(Op.ATOMIC, 0, ATOMIC_HEADER.pack(loop=loop, operation=op)), lo32(addr), hi32(addr),
            lo32(src), hi32(src), lo32(cmp), hi32(cmp), LOOP_INTERVAL.bits(loop_interval)]


def gcr_req(base: int = 0, limit: int = 0, gcr_control: int = 0, vmid: int = 0) -> list[int]:
    """Cache control request over [base, limit] (addresses in 128-byte units)."""
    return [header(Op.GCR_REQ), base & 0xFFFFFF80, GCR_BASE_HI.pack(base_hi=base >> 32, gcr_control_lo=gcr_control),
            (limit & 0xFFFFFF80) | GCR_LIMIT_LO.gcr_control_hi.bits(gcr_control >> 16),
            GCR_LIMIT_HI.pack(limit_hi=limit >> 32, vmid=vmid)]


def indirect_buffer(addr: int, size_dw: int, vmid: int = 0, csa: int = 0) -> list[int]:
    """Run an indirect buffer of size_dw dwords at VA addr (32-byte aligned)."""
    return [header(Op.INDIRECT, 0, INDIRECT_HEADER.pack(vmid=vmid)), lo32(addr) & ~0x1F, hi32(addr),
            INDIRECT_SIZE.bits(size_dw), lo32(csa), hi32(csa)]
