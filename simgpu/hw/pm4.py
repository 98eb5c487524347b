"""PM4 type-3 packets for gfx11 compute queues (MEC): header, opcodes, field layouts and builders.

Facts from amdgpu (drivers/gpu/drm/amd/amdgpu/nvd.h, soc15d.h, gfx_v11_0.c) and ROCr's PM4 MEC
packet structures (PM4_MEC_*): a type-3 header is [31:30] = 3, [29:16] COUNT = body dwords - 1,
[15:8] IT_OPCODE, [1] SHADER_TYPE (1 = compute), [0] PREDICATE. A type-2 packet (0x80000000) is a
one-dword filler. Each control dword is a `Layout` (simgpu.hw.bits): the builders here pack it, the
simulator's command processor (simgpu.cp.pm4) and the trace decoder read it back from the same
declaration. Builders return lists of dwords (header included), what the runtime writes into a ring.
gfx9's own ACQUIRE_MEM and RELEASE_MEM forms (gfx942) are in simgpu.hw.pm4_gfx9.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from enum import IntEnum

from simgpu.hw import regs
from simgpu.hw.bits import Field, Layout, hi32, lo32

HEADER = Layout(predicate=Field(0), shader_type=Field(1), opcode=Field(8, 8), count=Field(16, 14), type=Field(30, 2))
PACKET_TYPE2 = HEADER.pack(type=2)
MAX_BODY_DWORDS = HEADER.count.mask + 1


class Op(IntEnum):
    """IT_OPCODE values (nvd.h)."""

    NOP = 0x10
    SET_BASE = 0x11
    DISPATCH_DIRECT = 0x15
    DISPATCH_INDIRECT = 0x16
    ATOMIC_MEM = 0x1E
    PRED_EXEC = 0x23
    WRITE_DATA = 0x37
    WAIT_REG_MEM = 0x3C
    INDIRECT_BUFFER = 0x3F
    COPY_DATA = 0x40
    EVENT_WRITE = 0x46
    RELEASE_MEM = 0x49
    DMA_DATA = 0x50
    ACQUIRE_MEM = 0x58
    SET_SH_REG = 0x76
    SET_UCONFIG_REG = 0x79


def header(op: int, body_dwords: int, compute: bool = True, predicate: bool = False) -> int:
    """A type-3 header for a packet with `body_dwords` dwords after the header."""
    if not 1 <= body_dwords <= MAX_BODY_DWORDS:
        raise ValueError(f"a type-3 packet carries 1..{MAX_BODY_DWORDS} body dwords, not {body_dwords}")
    return HEADER.pack(type=3, count=body_dwords - 1, opcode=op, shader_type=compute, predicate=predicate)


def parse_header(h: int) -> tuple[int, int, int]:
    """(packet type, opcode, body dwords) of a header dword (opcode/count are only meaningful for type 3)."""
    return HEADER.type.get(h), HEADER.opcode.get(h), HEADER.count.get(h) + 1


def packet(op: int, *body: int) -> list[int]:
    """Header plus body dwords (each masked to 32 bits)."""
    return [header(op, len(body)), *(lo32(int(b)) for b in body)]


# ---- NOP ------------------------------------------------------------------------------------------------
def nop(body_dwords: int = 1) -> list[int]:
    """A NOP that skips `body_dwords` dwords (padding)."""
    return packet(Op.NOP, *([0] * body_dwords))


# ---- SET_SH_REG / SET_UCONFIG_REG: body[0] [15:0] REG_OFFSET from the range's start, then the values ---------
REG_OFFSET = Field(0, 16)
REG_ADDR = Field(0, 18)  # a register's dword address where a packet names one (COPY_DATA, WRITE_DATA, WAIT_REG_MEM)


def set_sh_reg(reg: int, *values: int) -> list[int]:
    """Write consecutive SH registers starting at absolute dword address `reg` (e.g. regs.COMPUTE_PGM_LO)."""
    if not regs.SH_REG_START <= reg < regs.SH_REG_END:
        raise ValueError(f"register {reg:#x} is not an SH register")
    return packet(Op.SET_SH_REG, REG_OFFSET.bits(reg - regs.SH_REG_START), *values)


def set_uconfig_reg(reg: int, *values: int) -> list[int]:
    """Write consecutive UCONFIG registers starting at absolute dword address `reg`."""
    if not regs.UCONFIG_REG_START <= reg < regs.UCONFIG_REG_END:
        raise ValueError(f"register {reg:#x} is not a UCONFIG register")
    return packet(Op.SET_UCONFIG_REG, REG_OFFSET.bits(reg - regs.UCONFIG_REG_START), *values)


# ---- WRITE_DATA: control, address lo, address hi, data... -------------------------------------------------
WRITE_DATA_CONTROL = Layout(dst_sel=Field(8, 4), wr_one_addr=Field(16), wr_confirm=Field(20), cache_policy=Field(25, 2))


class WriteDst(IntEnum):
    """WRITE_DATA DST_SEL (MEC)."""

    REGISTER = 0
    MEMORY_SYNC = 1  # "memory (sync - via GRBM)"
    TC_L2 = 2
    GDS = 3
    MEMORY = 5



def write_data(addr: int, *data: int, dst: int = WriteDst.MEMORY, one_addr: bool = False,
               confirm: bool = True) -> list[int]:
    """Write dwords to memory (addr = VA, dword aligned) or to registers (addr = dword register address)."""
    control = WRITE_DATA_CONTROL.pack(dst_sel=dst, wr_one_addr=one_addr, wr_confirm=confirm)
    return packet(Op.WRITE_DATA, control, lo32(addr), hi32(addr), *data)


# ---- COPY_DATA: control, source lo, source hi, destination lo, destination hi -------------------------------
COPY_DATA_CONTROL = Layout(src_sel=Field(0, 4), dst_sel=Field(8, 4), count_sel=Field(16), wr_confirm=Field(20))


class CopySrc(IntEnum):
    """COPY_DATA SRC_SEL (MEC_COPY_DATA_src_sel_enum)."""

    REGISTER = 0
    MEMORY = 1  # tc_l2_obsolete
    TC_L2 = 2
    GDS = 3
    PERFCOUNTERS = 4
    IMMEDIATE = 5
    ATOMIC_RETURN = 6
    GPU_CLOCK = 9  # 64-bit GPU clock counter (the 100 MHz timestamp)
    SYSTEM_CLOCK = 10


class CopyDst(IntEnum):
    """COPY_DATA DST_SEL (MEC_COPY_DATA_dst_sel_enum)."""

    REGISTER = 0
    TC_L2 = 2
    GDS = 3
    PERFCOUNTERS = 4
    MEMORY = 5  # tc_l2_obsolete



def copy_data(src_sel: int, src: int, dst_sel: int, dst: int, wide: bool = False, confirm: bool = True) -> list[int]:
    """COPY_DATA: src is a register, a VA or an immediate value; dst a register or a VA."""
    control = COPY_DATA_CONTROL.pack(src_sel=src_sel, dst_sel=dst_sel, count_sel=wide, wr_confirm=confirm)
    return packet(Op.COPY_DATA, control, lo32(src), hi32(src), lo32(dst), hi32(dst))


# ---- WAIT_REG_MEM: control, address lo, address hi, reference, mask, poll interval ---------------------------
WAIT_REG_MEM_CONTROL = Layout(function=Field(0, 3), mem_space=Field(4, 2), operation=Field(6, 2),
                              engine_sel=Field(8, 2))
POLL_INTERVAL = Field(0, 16)


class Compare(IntEnum):
    """WAIT_REG_MEM / POLL_REGMEM compare functions: (value & mask) FUNC reference."""

    ALWAYS = 0
    LT = 1
    LE = 2
    EQ = 3
    NE = 4
    GE = 5
    GT = 6


def compare(func: int, value: int, ref: int) -> bool:
    """Evaluate a WAIT_REG_MEM compare function on already-masked values (7 is reserved: False)."""
    return (True, value < ref, value <= ref, value == ref, value != ref, value >= ref, value > ref, False)[func & 7]


class MemSpace(IntEnum):
    """WAIT_REG_MEM MEM_SPACE."""

    REGISTER = 0
    MEMORY = 1


WAIT_REG_MEM_WRITE_WAIT = 1  # OPERATION WR_WAIT_WR_REG: write REFERENCE to register ADDR_LO, then wait on ADDR_HI


def wait_reg_mem(addr: int, ref: int, mask: int = 0xFFFFFFFF, func: int = Compare.EQ, memory: bool = True,
                 poll_interval: int = 4) -> list[int]:
    """Wait until (dword at addr & mask) FUNC ref; addr is a VA (memory) or a register address."""
    control = WAIT_REG_MEM_CONTROL.pack(function=func, mem_space=MemSpace.MEMORY if memory else MemSpace.REGISTER)
    return packet(Op.WAIT_REG_MEM, control, lo32(addr), hi32(addr), ref, mask, POLL_INTERVAL.bits(poll_interval))


# ---- RELEASE_MEM (gfx10+, 7 body dwords) -----------------------------------------------------------------
# body[0]: EVENT_CNTL plus [22:12] GCR_CNTL (RELEASE_MEM_GCR_* flags), [26:25] CACHE_POLICY, [28] EXECUTE;
# body[1]: RELEASE_MEM_DATA_CNTL; body[2:4] address; body[4:6] data; body[6] INT_CTXID
EVENT_CNTL = Layout(event_type=Field(0, 6), event_index=Field(8, 4))  # also EVENT_WRITE's body[0]
RELEASE_MEM_DATA_CNTL = Layout(dst_sel=Field(16, 2), int_sel=Field(24, 3), data_sel=Field(29, 3))
EVENT_INDEX_END_OF_PIPE = 5


class DataSel(IntEnum):
    """RELEASE_MEM DATA_SEL."""

    NONE = 0
    DATA32 = 1
    DATA64 = 2
    GPU_CLOCK = 3  # 64-bit GPU counter (timestamp)
    SYSTEM_CLOCK = 4


class IntSel(IntEnum):
    """RELEASE_MEM INT_SEL."""

    NONE = 0
    INT_ONLY = 1
    INT_AFTER_WRITE = 2  # "send interrupt when write is confirmed"


RELEASE_MEM_GCR_SEQ = 1 << 22
RELEASE_MEM_GCR_GL2_WB = 1 << 21
RELEASE_MEM_GCR_GL2_INV = 1 << 20
RELEASE_MEM_GCR_GLM_WB = 1 << 12
RELEASE_MEM_GCR_GLM_INV = 1 << 13
RELEASE_MEM_GCR_GLV_INV = 1 << 14
RELEASE_MEM_GCR_GL1_INV = 1 << 15


def release_mem(addr: int = 0, data: int = 0, data_sel: int = DataSel.DATA32, int_sel: int = IntSel.NONE,
                event: int | None = None, ctx_id: int = 0, gcr: int = 0) -> list[int]:
    """End-of-pipe release: wait for prior work, optionally write data/timestamp, optionally interrupt."""
    event = Event.CACHE_FLUSH_AND_INV_TS_EVENT if event is None else event
    dw0 = EVENT_CNTL.pack(event_type=event, event_index=EVENT_INDEX_END_OF_PIPE) | gcr
    dw1 = RELEASE_MEM_DATA_CNTL.pack(data_sel=data_sel, int_sel=int_sel)
    return packet(Op.RELEASE_MEM, dw0, dw1, lo32(addr), hi32(addr), lo32(data), hi32(data), ctx_id)


# ---- ACQUIRE_MEM (gfx10+, 7 body dwords): COHER_CNTL, SIZE, SIZE_HI, BASE, BASE_HI, POLL_INTERVAL, GCR_CNTL --
ACQUIRE_HI = Field(0, 24)  # SIZE_HI and BASE_HI: bits 55:32 of the range


# GCR_CNTL (ACQUIRE_MEM's last body dword, gfx10+): which caches to write back or invalidate, from amdgpu's
# gfx_v11_0.c (PACKET3_ACQUIRE_MEM_GCR_CNTL_*).
ACQUIRE_GCR = Layout(gli_inv=Field(0, 2), glm_wb=Field(4), glm_inv=Field(5), glk_wb=Field(6), glk_inv=Field(7),
                     glv_inv=Field(8), gl1_inv=Field(9), gl2_inv=Field(14), gl2_wb=Field(15))
# What one dispatch must see of another's writes: the shader caches invalidated, L2 written back and invalidated.
GCR_INVALIDATE_ALL = ACQUIRE_GCR.pack(gli_inv=1, glm_wb=1, glm_inv=1, glk_wb=1, glk_inv=1, glv_inv=1, gl1_inv=1,
                                      gl2_inv=1, gl2_wb=1)


def acquire_mem(base: int = 0, size: int = (1 << 64) - 1, gcr: int = 0, poll_interval: int = 0x0A) -> list[int]:
    """Cache acquire over [base, base + size) (the range is in 256-byte units, as amdgpu programs it)."""
    return packet(Op.ACQUIRE_MEM, 0, lo32(size), ACQUIRE_HI.bits(size >> 32), lo32(base), ACQUIRE_HI.bits(base >> 32),
                  poll_interval, gcr)


# ---- EVENT_WRITE: EVENT_CNTL (+ address for sampling events) -------------------------------------------------
class Event(IntEnum):
    """VGT_EVENT_TYPE values a compute queue uses."""

    CACHE_FLUSH_TS = 0x04
    CACHE_FLUSH = 0x06
    CS_PARTIAL_FLUSH = 0x07
    CACHE_FLUSH_AND_INV_TS_EVENT = 0x14
    CACHE_FLUSH_AND_INV_EVENT = 0x16
    PERFCOUNTER_START = 0x17
    PERFCOUNTER_STOP = 0x18
    PIPELINESTAT_START = 0x19
    PIPELINESTAT_STOP = 0x1A
    PERFCOUNTER_SAMPLE = 0x1B
    SAMPLE_PIPELINESTAT = 0x1E
    SQ_NON_EVENT = 0x26
    BOTTOM_OF_PIPE_TS = 0x28
    CS_DONE = 0x2F
    THREAD_TRACE_START = 0x33
    THREAD_TRACE_STOP = 0x34
    THREAD_TRACE_MARKER = 0x35
    THREAD_TRACE_FINISH = 0x37


EVENT_INDEX_CS_PARTIAL_FLUSH = 4  # "*S_PARTIAL_FLUSH"
EVENT_INDEX_SAMPLE = 2  # SAMPLE_PIPELINESTAT carries an address


def event_write(event: int, index: int | None = None, addr: int | None = None) -> list[int]:
    """EVENT_WRITE of `event` (index defaults to 4 for CS_PARTIAL_FLUSH, else 0); addr for sampling events."""
    if index is None:
        index = EVENT_INDEX_CS_PARTIAL_FLUSH if event == Event.CS_PARTIAL_FLUSH else 0
    dw = EVENT_CNTL.pack(event_type=event, event_index=index)
    return packet(Op.EVENT_WRITE, dw) if addr is None else packet(Op.EVENT_WRITE, dw, lo32(addr), hi32(addr))


# ---- DISPATCH_DIRECT / DISPATCH_INDIRECT ---------------------------------------------------------------
DEFAULT_INITIATOR = regs.dispatch_initiator(wave32=True)  # COMPUTE_DISPATCH_INITIATOR, regs.DISPATCH_INITIATOR


def dispatch_direct(x: int, y: int = 1, z: int = 1, initiator: int = DEFAULT_INITIATOR) -> list[int]:
    """Launch the kernel programmed in the COMPUTE_* registers over x*y*z workgroups."""
    return packet(Op.DISPATCH_DIRECT, x, y, z, initiator)


def dispatch_indirect(addr: int, initiator: int = DEFAULT_INITIATOR) -> list[int]:
    """Launch with the three workgroup counts read from memory at addr (MEC form: address in the packet)."""
    return packet(Op.DISPATCH_INDIRECT, lo32(addr), hi32(addr), initiator)


# ---- INDIRECT_BUFFER: base lo (dword aligned), base hi, control ---------------------------------------------
IB_BASE_HI = Field(0, 16)
IB_CONTROL = Layout(ib_size=Field(0, 20), chain=Field(20), valid=Field(23), vmid=Field(24, 4))


def indirect_buffer(addr: int, size_dw: int, chain: bool = False, vmid: int = 0) -> list[int]:
    """Call (or, chained, jump to) an indirect buffer of `size_dw` dwords at VA addr (dword aligned)."""
    control = IB_CONTROL.pack(ib_size=size_dw, chain=chain, valid=1, vmid=vmid)
    return packet(Op.INDIRECT_BUFFER, lo32(addr) & ~3, IB_BASE_HI.bits(hi32(addr)), control)


# ---- PRED_EXEC: EXEC_COUNT dwords that follow run only on the devices DEVICE_SELECT names -----------------
PRED_EXEC_CNTL = Layout(exec_count=Field(0, 14), device_select=Field(24, 8))


def pred_exec(exec_count: int, device_select: int = 1) -> list[int]:
    """Execute the next `exec_count` dwords only on the devices selected by the mask."""
    return packet(Op.PRED_EXEC, PRED_EXEC_CNTL.pack(exec_count=exec_count, device_select=device_select))


# ---- DMA_DATA: control, src lo/data, src hi, dst lo, dst hi, command --------------------------------------
DMA_DATA_CONTROL = Layout(engine_sel=Field(0), src_cache_policy=Field(13, 2), dst_sel=Field(20, 2),
                          dst_cache_policy=Field(25, 2), src_sel=Field(29, 2), cp_sync=Field(31))
# SAS/DAS: source/destination is a register; SAIC/DAIC: its address does not increment.
DMA_DATA_COMMAND = Layout(byte_count=Field(0, 26), sas=Field(26), das=Field(27), saic=Field(28), daic=Field(29),
                          raw_wait=Field(30), dis_wc=Field(31))


class DmaSrc(IntEnum):
    """DMA_DATA SRC_SEL."""

    ADDR = 0
    GDS = 1
    DATA = 2
    ADDR_L2 = 3


class DmaDst(IntEnum):
    """DMA_DATA DST_SEL."""

    ADDR = 0
    GDS = 1
    ADDR_L2 = 3



def dma_data(dst: int, src: int, byte_count: int, src_sel: int = DmaSrc.ADDR_L2, dst_sel: int = DmaDst.ADDR_L2,
             sync: bool = True, command: int = 0) -> list[int]:
    """Copy byte_count bytes from src to dst (VAs), or fill with the dword `src` when src_sel is DATA;
    `command` adds DMA_DATA_COMMAND flags (e.g. DMA_DATA_COMMAND.daic.bits())."""
    control = DMA_DATA_CONTROL.pack(src_sel=src_sel, dst_sel=dst_sel, cp_sync=sync)
    return packet(Op.DMA_DATA, control, lo32(src), hi32(src), lo32(dst), hi32(dst),
                  DMA_DATA_COMMAND.pack(byte_count=byte_count) | command)


# ---- ATOMIC_MEM: control, addr lo/hi, src lo/hi, cmp lo/hi, loop interval --------------------------------
class TcOp(IntEnum):
    """TC_OP atomic opcodes (the _RTN_ forms return the old value); shared with SDMA ATOMIC."""

    SWAP_RTN_32 = 0x07
    CMPSWAP_RTN_32 = 0x08
    ADD_RTN_32 = 0x0F
    SUB_RTN_32 = 0x10
    SMIN_RTN_32 = 0x11
    UMIN_RTN_32 = 0x12
    SMAX_RTN_32 = 0x13
    UMAX_RTN_32 = 0x14
    AND_RTN_32 = 0x15
    OR_RTN_32 = 0x16
    XOR_RTN_32 = 0x17
    INC_RTN_32 = 0x18
    DEC_RTN_32 = 0x19
    SWAP_RTN_64 = 0x27
    CMPSWAP_RTN_64 = 0x28
    ADD_RTN_64 = 0x2F
    SUB_RTN_64 = 0x30
    SMIN_RTN_64 = 0x31
    UMIN_RTN_64 = 0x32
    SMAX_RTN_64 = 0x33
    UMAX_RTN_64 = 0x34
    AND_RTN_64 = 0x35
    OR_RTN_64 = 0x36
    XOR_RTN_64 = 0x37
    INC_RTN_64 = 0x38
    DEC_RTN_64 = 0x39
    SWAP_32 = 0x47
    CMPSWAP_32 = 0x48
    ADD_32 = 0x4F
    SUB_32 = 0x50
    SMIN_32 = 0x51
    UMIN_32 = 0x52
    SMAX_32 = 0x53
    UMAX_32 = 0x54
    AND_32 = 0x55
    OR_32 = 0x56
    XOR_32 = 0x57
    INC_32 = 0x58
    DEC_32 = 0x59
    SWAP_64 = 0x67
    CMPSWAP_64 = 0x68
    ADD_64 = 0x6F
    SUB_64 = 0x70
    SMIN_64 = 0x71
    UMIN_64 = 0x72
    SMAX_64 = 0x73
    UMAX_64 = 0x74
    AND_64 = 0x75
    OR_64 = 0x76
    XOR_64 = 0x77
    INC_64 = 0x78
    DEC_64 = 0x79


def tc_op_info(op: int) -> tuple[str, int] | None:
    """(simgpu.mem atomic op name, size in bytes) of a TC_OP atomic, or None if it is not an integer atomic."""
    try:
        name = TcOp(op).name
    except ValueError:
        return None
    base = name.split("_")[0].lower()
    return base, 8 if name.endswith("64") else 4


class AtomicCommand(IntEnum):
    """ATOMIC_MEM COMMAND."""

    SINGLE_PASS = 0
    LOOP_UNTIL_COMPARE = 1  # cmpswap retried until it succeeds
    WAIT_FOR_CONFIRM = 2
    SEND_AND_CONTINUE = 3


ATOMIC_MEM_CONTROL = Layout(atomic=Field(0, 7), command=Field(8, 4))
LOOP_INTERVAL = Field(0, 13)


def atomic_mem(addr: int, op: int, src: int = 0, cmp: int = 0, command: int = AtomicCommand.SINGLE_PASS,
               loop_interval: int = 128) -> list[int]:
    """An atomic read-modify-write on memory (addr naturally aligned)."""
    return packet(Op.ATOMIC_MEM, ATOMIC_MEM_CONTROL.pack(atomic=op, command=command), lo32(addr), hi32(addr),
                  lo32(src), hi32(src), lo32(cmp), hi32(cmp), LOOP_INTERVAL.bits(loop_interval))
