"""gfx9's SQ thread trace (gfx942, CDNA3): its SQ_THREAD_TRACE_* registers and the token stream it writes.

gfx9 programs and writes its trace differently from gfx11 (simgpu.hw.sqtt). Registers (gc_9_4_3_offset.h, BASE_IDX 1
= dword 0xA000, UCONFIG space; fields from gc_9_4_3_sh_mask.h): BASE/BASE2 hold the buffer address in 4 KiB units,
SIZE its length in 4 KiB units, MASK which CU (CU_SEL) and SIMDs (SIMD_EN) of the SE write instruction tokens,
TOKEN_MASK one enable bit per token type (TOKEN_MASK) and register classes (REG_MASK), MODE the trace state (MODE,
MASK_CS: compute waves), CTRL.RESET_BUFFER the write pointer's reset; WPTR reads the bytes written / 32 from the
buffer's start, STATUS has BUSY and FULL.

The stream is a sequence of 16-bit words; a token's low 4 bits are its type (the TOKEN_MASK bit that enables it) and
its size is fixed by the type (the SQ_THREAD_TRACE_WORD_* layouts). Time: a MISC token's TIME_DELTA advances the trace
clock by that many ticks of 4 core cycles (no other token here carries time: their 1-bit TIME_DELTA stays 0); a
TIMESTAMP token carries the 48-bit cycle counter. A trace starts with a TIMESTAMP (the clock's anchor); a gap longer
than a MISC token spans is a TIMESTAMP of the next token's time, which stands one tick before it, then a one-tick MISC
(TIMESTAMPs followed by one-tick MISCs as in the gfx950 traces tinygrad publishes; tinygrad's CDNA decoder places a
later TIMESTAMP one tick before its value). The INST token's type numbers are the
instruction classes the decoders of the format name (tinygrad's InstOpCDNA).

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from simgpu.hw.bits import Field, Layout

# ---- registers ----------------------------------------------------------------------------------------------
SQ_THREAD_TRACE_BASE = 0xC330  # buffer address bits [43:12]
SQ_THREAD_TRACE_SIZE = 0xC331
TT_SIZE = Layout(size=Field(0, 22))  # in 4 KiB units
SQ_THREAD_TRACE_MASK = 0xC332
TT_MASK = Layout(cu_sel=Field(0, 5), sh_sel=Field(5), reg_stall_en=Field(7), simd_en=Field(8, 4),
                 vm_id_mask=Field(12, 2), spi_stall_en=Field(14), sq_stall_en=Field(15))
SQ_THREAD_TRACE_TOKEN_MASK = 0xC333
TT_TOKEN_MASK = Layout(token_mask=Field(0, 16), reg_mask=Field(16, 8), reg_drop_on_stall=Field(24))
SQ_THREAD_TRACE_PERF_MASK = 0xC334
SQ_THREAD_TRACE_CTRL = 0xC335
TT_CTRL = Layout(reset_buffer=Field(31))
SQ_THREAD_TRACE_MODE = 0xC336
TT_MODE = Layout(mask_ps=Field(0, 3), mask_vs=Field(3, 3), mask_gs=Field(6, 3), mask_es=Field(9, 3),
                 mask_hs=Field(12, 3), mask_ls=Field(15, 3), mask_cs=Field(18, 3), mode=Field(21, 2),
                 capture_mode=Field(23, 2), autoflush_en=Field(25), tc_perf_en=Field(26), issue_mask=Field(27, 2),
                 test_mode=Field(29), interrupt_en=Field(30), wrap=Field(31))
SQ_THREAD_TRACE_BASE2 = 0xC337
TT_BASE2 = Layout(addr_hi=Field(0, 4))  # buffer address bits [47:44]
SQ_THREAD_TRACE_TOKEN_MASK2 = 0xC338  # INST_MASK: which instruction classes write INST tokens
SQ_THREAD_TRACE_WPTR = 0xC339
TT_WPTR = Layout(wptr=Field(0, 30), read_offset=Field(30, 2))  # wptr: bytes written / 32, from the buffer's start
SQ_THREAD_TRACE_STATUS = 0xC33A
TT_STATUS = Layout(finish_pending=Field(0, 10), finish_done=Field(16, 10), utc_error=Field(28), new_buf=Field(29),
                   busy=Field(30), full=Field(31))
SQ_THREAD_TRACE_HIWATER = 0xC33B
SQ_THREAD_TRACE_CNTR = 0xC33C
SQ_THREAD_TRACE_USERDATA_0 = 0xC340  # .._3 at +3: each write is a REG token in the trace
SQ_THREAD_TRACE_USERDATA_COUNT = 4
REGISTERS = frozenset(range(SQ_THREAD_TRACE_BASE, SQ_THREAD_TRACE_CNTR + 1))
USERDATA = frozenset(range(SQ_THREAD_TRACE_USERDATA_0, SQ_THREAD_TRACE_USERDATA_0 + SQ_THREAD_TRACE_USERDATA_COUNT))
BUFFER_ALIGN = 4096
WPTR_UNIT = 32
TICK_CYCLES = 4  # core cycles per trace-clock tick


# ---- tokens -------------------------------------------------------------------------------------------------
class Tok(IntEnum):
    """Token types (a token's low 4 bits; TOKEN_MASK bit n enables type n)."""

    MISC = 0
    TIMESTAMP = 1
    REG = 2
    WAVE_START = 3
    WAVE_ALLOC = 4
    REG_CS = 5
    WAVE_END = 6
    EVENT = 7
    EVENT_CS = 8
    EVENT_GFX1 = 9
    INST = 10
    INST_PC = 11
    USERDATA = 12
    ISSUE = 13
    PERF = 14
    REG_CS_PRIV = 15


class InstType(IntEnum):
    """The INST token's INST_TYPE: the class of the instruction a traced wave issued."""

    SMEM_RD = 0
    SALU_32 = 1
    VMEM_RD = 2  # buffer loads
    VMEM_WR = 3  # buffer stores and atomics
    FLAT_WR = 4  # flat/global/scratch stores and atomics
    VALU_32 = 5
    LDS = 6
    PC = 7
    JUMP = 12  # branch taken
    NEXT = 13  # branch not taken
    FLAT_RD = 14  # flat/global/scratch loads
    OTHER_MSG = 15  # s_sendmsg, s_endpgm
    SMEM_WR = 16
    SALU_64 = 17
    VALU_64 = 18  # 64-bit VALU (f64, 64-bit integer and shift)
    VALU_MAI = 28  # MFMA / SMFMAC


_WAVE = dict(sh=Field(5), cu=Field(6, 4), wave=Field(10, 4), simd=Field(14, 2))
BITS = {Tok.MISC: 16, Tok.TIMESTAMP: 64, Tok.REG: 64, Tok.WAVE_START: 32, Tok.WAVE_ALLOC: 16, Tok.REG_CS: 48,
        Tok.WAVE_END: 16, Tok.EVENT: 16, Tok.EVENT_CS: 16, Tok.EVENT_GFX1: 16, Tok.INST: 16, Tok.INST_PC: 64,
        Tok.USERDATA: 48, Tok.ISSUE: 32, Tok.PERF: 64, Tok.REG_CS_PRIV: 48}
LAYOUTS = {
    Tok.MISC: Layout(time_delta=Field(4, 8), sh=Field(12), misc_type=Field(13, 3)),
    Tok.TIMESTAMP: Layout(time=Field(16, 48)),
    Tok.REG: Layout(pipe=Field(5, 2), me=Field(7, 2), dropped=Field(9), reg_type=Field(10, 3), priv=Field(14),
                    op=Field(15), addr=Field(16, 16), data=Field(32, 32)),
    Tok.WAVE_START: Layout(**_WAVE, dispatcher=Field(16, 5), count=Field(22, 7), tg_id=Field(29, 3)),
    Tok.WAVE_ALLOC: Layout(**_WAVE),
    Tok.REG_CS: Layout(pipe=Field(5, 2), me=Field(7, 2), addr=Field(9, 7), data=Field(16, 32)),
    Tok.WAVE_END: Layout(**_WAVE),
    Tok.EVENT: Layout(sh=Field(5), stage=Field(6, 3), event_type=Field(10, 6)),
    Tok.EVENT_CS: Layout(sh=Field(5), stage=Field(6, 3), event_type=Field(10, 6)),
    Tok.EVENT_GFX1: Layout(sh=Field(5), stage=Field(6, 3), event_type=Field(10, 6)),
    Tok.INST: Layout(wave=Field(5, 4), simd=Field(9, 2), inst_type=Field(11, 5)),
    Tok.INST_PC: Layout(wave=Field(5, 4), simd=Field(9, 2), trap_error=Field(15), pc=Field(16, 40)),
    Tok.USERDATA: Layout(priv=Field(5), cu=Field(6, 4), wave=Field(10, 4), simd=Field(14, 2), data=Field(16, 32)),
    Tok.ISSUE: Layout(simd=Field(5, 2), **{f"inst{i}": Field(8 + 2 * i, 2) for i in range(10)}),
    Tok.PERF: Layout(sh=Field(5), cu=Field(6, 4), cntr_bank=Field(10, 2), cntr0=Field(12, 13), cntr1=Field(25, 13),
                     cntr2=Field(38, 13), cntr3=Field(51, 13)),
    Tok.REG_CS_PRIV: Layout(pipe=Field(5, 2), me=Field(7, 2), addr=Field(9, 7), data=Field(16, 32)),
}
MISC_TIME = 0  # MISC_TOKEN_TYPE of a token that only advances the clock
MAX_TICKS = (1 << 8) - 1  # one MISC token's TIME_DELTA


class TraceWriter:
    """Packs tokens into the 16-bit word stream, with MISC / TIMESTAMP tokens so each token lands at its tick."""

    def __init__(self, start: int):
        self.data = bytearray()
        self.start = start  # the cycle counter at the anchor TIMESTAMP
        self.tick = 0  # trace clock (ticks since `start`) after the last token
        self.tokens = 0
        self._put(Tok.TIMESTAMP, time=start)

    def _put(self, tok: Tok, **fields: int) -> None:
        self.data += (tok | LAYOUTS[tok].pack(**fields)).to_bytes(BITS[tok] // 8, "little")
        self.tokens += 1

    def emit(self, tok: Tok, time: int, **fields: int) -> None:
        """Append a token at core cycle `time` (never before the last token's tick)."""
        tick = max((time - self.start) // TICK_CYCLES, self.tick)
        gap = tick - self.tick
        if gap > MAX_TICKS:
            self._put(Tok.TIMESTAMP, time=self.start + tick * TICK_CYCLES)
            gap = 1
        if gap:
            self._put(Tok.MISC, time_delta=gap, misc_type=MISC_TIME)
        self.tick = tick
        self._put(tok, **fields)

    def pad(self, align: int, lookahead: int = 8) -> None:
        """Zero words (MISC tokens that advance nothing) to the next multiple of `align` bytes, at least
        `lookahead` bytes of them (a reader holds 64 bits of the stream ahead of a token before decoding it)."""
        target = len(self.data) + lookahead
        self.data += bytes(target + -target % align - len(self.data))


@dataclass
class Packet:
    """A decoded token: its type, the trace time (cycles since the anchor TIMESTAMP), its fields."""

    tok: Tok
    time: int
    fields: dict


def decode(data: bytes) -> list[Packet]:
    """Every token of a gfx9 trace stream but the zero padding. Raises ValueError on a stream that does not start
    with its anchor TIMESTAMP or ends inside a token."""
    out: list[Packet] = []
    pos, time, anchor = 0, 0, None
    while pos + 2 <= len(data):
        tok = Tok(data[pos] & 0xF)
        size = BITS[tok] // 8
        if pos + size > len(data):
            raise ValueError(f"gfx9 thread trace ends inside a {tok.name} token at byte {pos}")
        value = int.from_bytes(data[pos:pos + size], "little")
        pos += size
        fields = LAYOUTS[tok].unpack(value)
        if anchor is None and tok != Tok.TIMESTAMP:
            raise ValueError(f"not a gfx9 thread trace: it starts with {tok.name}, not its anchor TIMESTAMP")
        if tok == Tok.TIMESTAMP:
            if anchor is None:
                anchor = fields["time"]
            else:
                time = fields["time"] - anchor - TICK_CYCLES  # it stands one tick before the token it times
        elif tok == Tok.MISC:
            if value == 0:
                continue  # padding
            time += fields["time_delta"] * TICK_CYCLES
        out.append(Packet(tok, time, fields))
    return out
