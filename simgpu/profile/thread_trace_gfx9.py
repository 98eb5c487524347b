"""The SQ thread trace of one gfx9 shader engine (gfx942): its SQ_THREAD_TRACE_* registers and the token stream it
writes into its buffer (simgpu.hw.sqtt_gfx9).

Tracing is on while SQ_THREAD_TRACE_MODE.MODE is not 0; compute waves are traced when MODE.MASK_CS is set. A new
trace starts with the anchor TIMESTAMP and is timed by the virtual clock. Waves placed on this SE write WAVE_START /
WAVE_END (the CU, SIMD and wave slot they run in); the CU that MASK.CU_SEL names also writes an INST token per
instruction its waves issue on the SIMDs MASK.SIMD_EN enables, after an ISSUE token with the issuing slot's state
ISSUED (s_waitcnt, s_nop and the other immediate instructions write neither; s_endpgm writes OTHER_MSG before
WAVE_END). Writes to SQ_THREAD_TRACE_USERDATA_* are REG
tokens, a queue's SET_SH_REG writes of COMPUTE_* registers REG_CS tokens, and the COMPUTE_* registers the packet
processor itself programs for an AQL dispatch REG_CS_PRIV tokens (NUM_THREAD_X/Y/Z, PGM_LO/HI, PGM_RSRC3, RSRC1,
RSRC2, the user SGPRs' USER_DATA_*, DISPATCH_INITIATOR last: the order gfx950 traces show), as TOKEN_MASK allows.
The stream reaches memory at the end of each dispatch and when MODE returns to 0, padded with zero words to 32
bytes; WPTR then reads the bytes written / 32. A full buffer stops the stream (STATUS.FULL).
"""

from __future__ import annotations

from simgpu.hw import regs
from simgpu.hw import sqtt_gfx9 as tt
from simgpu.hw.sqtt_gfx9 import Tok
from simgpu.profile.trace_buffer import TraceBuffer
from simgpu.shader.setup import user_sgprs

WAVE_SLOTS = 16  # the wave fields: 4 bits
USERDATA_REG_TYPE = 3  # REG_TYPE of the USERDATA writes' REG tokens (as gfx950 traces show them)
COMPUTE_REG_BASE, COMPUTE_REGS = 0x2E00, 0x80  # REG_CS's 7-bit address counts from COMPUTE_DISPATCH_INITIATOR
CS_MASK_ON = 1  # MODE.MASK_CS bit 0: compute waves are traced
ISSUE_SLOTS = 10  # an ISSUE token's INST0..INST9: the 2-bit issue state of wave slots 0..9 of its SIMD
ISSUED = 2  # the state gfx950 traces pair one for one with INST tokens (the slot issued an instruction)


class TraceGfx9(TraceBuffer):
    """SQ_THREAD_TRACE_* state and the token stream of one gfx9 SE."""

    cdna = True
    WAVE_SLOTS = WAVE_SLOTS
    WPTR_UNIT = tt.WPTR_UNIT

    # ---- registers ------------------------------------------------------------------------------------
    def write(self, reg: int, value: int, vmid: int) -> None:
        old = self.regs.get(reg, 0)
        self.regs[reg] = value
        if reg in (tt.SQ_THREAD_TRACE_BASE, tt.SQ_THREAD_TRACE_SIZE):
            self.vmid = vmid
        if reg == tt.SQ_THREAD_TRACE_CTRL and tt.TT_CTRL.reset_buffer.get(value):
            self.flushed, self.full, self.dropped = 0, False, 0
        if reg == tt.SQ_THREAD_TRACE_MODE:
            on, was = tt.TT_MODE.mode.get(value) != 0, tt.TT_MODE.mode.get(old) != 0
            if on and not was:
                self.start(vmid)
            elif was and not on:
                self.finish()

    def read(self, reg: int) -> int:
        if reg == tt.SQ_THREAD_TRACE_WPTR:
            return tt.TT_WPTR.pack(wptr=self.flushed // tt.WPTR_UNIT)
        if reg == tt.SQ_THREAD_TRACE_STATUS:
            return tt.TT_STATUS.pack(busy=self.on, full=self.full)
        if reg == tt.SQ_THREAD_TRACE_CNTR:
            return self.dropped & 0xFFFFFFFF
        return self.regs.get(reg, 0)

    def base(self) -> int:
        hi = tt.TT_BASE2.addr_hi.get(self.regs.get(tt.SQ_THREAD_TRACE_BASE2, 0))
        return ((hi << 32) | self.regs.get(tt.SQ_THREAD_TRACE_BASE, 0)) * tt.BUFFER_ALIGN

    def size(self) -> int:
        return tt.TT_SIZE.size.get(self.regs.get(tt.SQ_THREAD_TRACE_SIZE, 0)) * tt.BUFFER_ALIGN

    # ---- start / stop -----------------------------------------------------------------------------------
    def start(self, vmid: int) -> None:
        """Begin a trace at the buffer's start: the anchor TIMESTAMP, then tokens on the virtual clock."""
        self.begin(vmid, tt.TraceWriter(self.gpu.clock.cycles))

    def cut(self, data: bytes, limit: int) -> bytes:
        return _whole_tokens(data, limit)

    # ---- what gets traced -------------------------------------------------------------------------------
    def enabled(self, tok: Tok) -> bool:
        return bool(tt.TT_TOKEN_MASK.token_mask.get(self.regs.get(tt.SQ_THREAD_TRACE_TOKEN_MASK, 0)) >> tok & 1)

    def mask(self, name: str) -> int:
        return tt.TT_MASK.fields[name].get(self.regs.get(tt.SQ_THREAD_TRACE_MASK, 0))

    def traces_compute(self) -> bool:
        return bool(tt.TT_MODE.mask_cs.get(self.regs.get(tt.SQ_THREAD_TRACE_MODE, 0)) & CS_MASK_ON)

    def traces_instructions(self) -> bool:
        """Whether the selected CU writes INST or ISSUE tokens (latched for the dispatch)."""
        self._inst, self._issue = self.enabled(Tok.INST), self.enabled(Tok.ISSUE)
        self._simds = self.mask("simd_en")
        return self._inst or self._issue

    def traced(self, sh: int, cu: int, simd: int) -> bool:
        """Whether a wave on (sh, cu, simd) writes INST tokens."""
        return cu == self.mask("cu_sel") and sh == self.mask("sh_sel") and bool(self._simds >> simd & 1)

    def inst(self, time: int, slot: int, simd: int, inst_type: int) -> None:
        """The ISSUE and INST tokens of an instruction a traced wave issued."""
        if self.writer is None or self.full:
            return
        if self._issue and slot < ISSUE_SLOTS:
            self.writer.emit(Tok.ISSUE, time, simd=simd, **{f"inst{slot}": ISSUED})
        if self._inst:
            self.writer.emit(Tok.INST, time, wave=slot, simd=simd, inst_type=inst_type)

    def wave_start(self, time: int, sh: int, cu: int, simd: int, items: int = 0) -> int:
        """A wave of `items` work-items starts on (sh, cu, simd): its wave slot (-1: no slot free, not traced)."""
        slot = self.take_slot((sh, cu, simd))
        if slot >= 0 and self.enabled(Tok.WAVE_START):
            self.emit(Tok.WAVE_START, time, sh=sh, cu=cu, wave=slot, simd=simd, count=items)
        return slot

    def wave_end(self, time: int, sh: int, cu: int, simd: int, slot: int) -> None:
        self.free_slot((sh, cu, simd), slot)
        if self.enabled(Tok.WAVE_END):
            self.emit(Tok.WAVE_END, time, sh=sh, cu=cu, wave=slot, simd=simd)

    # ---- the command processor's tokens -------------------------------------------------------------------
    def user_data(self, time: int, reg: int, value: int, me: int, pipe: int) -> None:
        """A write of SQ_THREAD_TRACE_USERDATA_*: a REG token (a register write, REG_OP 1)."""
        reg_mask = tt.TT_TOKEN_MASK.reg_mask.get(self.regs.get(tt.SQ_THREAD_TRACE_TOKEN_MASK, 0))
        if self.on and self.enabled(Tok.REG) and reg_mask >> USERDATA_REG_TYPE & 1:
            self.emit(Tok.REG, time, me=me, pipe=pipe, reg_type=USERDATA_REG_TYPE, op=1, addr=reg & 0xFFFF,
                      data=value)

    def aql_dispatch(self, time: int, d, me: int, pipe: int) -> None:
        """The packet processor's own COMPUTE_* writes for AQL dispatch `d`: REG_CS_PRIV tokens."""
        if self.on and self.enabled(Tok.REG_CS_PRIV):
            for reg, value in aql_registers(d):
                self.emit(Tok.REG_CS_PRIV, time, me=me, pipe=pipe, addr=reg - COMPUTE_REG_BASE, data=value)

    def sh_written(self, time: int, reg: int, value: int, me: int, pipe: int) -> None:
        """A queue's SET_SH_REG of a COMPUTE_* register: a REG_CS token."""
        if self.on and self.enabled(Tok.REG_CS) and COMPUTE_REG_BASE <= reg < COMPUTE_REG_BASE + COMPUTE_REGS:
            self.emit(Tok.REG_CS, time, me=me, pipe=pipe, addr=reg - COMPUTE_REG_BASE, data=value)


def _whole_tokens(data: bytes, limit: int) -> bytes:
    """The tokens of `data` (which starts at a token) that fit in `limit` bytes, zero words after them to `limit`:
    a full buffer ends at a token's end, never inside one."""
    pos = 0
    while pos < limit and pos + tt.BITS[Tok(data[pos] & 0xF)] // 8 <= limit:
        pos += tt.BITS[Tok(data[pos] & 0xF)] // 8
    return data[:pos] + bytes(limit - pos)


def aql_registers(d) -> list[tuple[int, int]]:
    """(register, value) of the COMPUTE_* registers the packet processor writes to launch AQL dispatch `d`."""
    kd = d.descriptor
    out = [(regs.COMPUTE_NUM_THREAD_X + i, n) for i, n in enumerate(d.workgroup)]
    out += list(zip((regs.COMPUTE_PGM_LO, regs.COMPUTE_PGM_HI), regs.address_regs(d.code_address), strict=True))
    out += [(regs.compute_pgm_rsrc3("gfx9"), kd.compute_pgm_rsrc3), (regs.COMPUTE_PGM_RSRC1, kd.compute_pgm_rsrc1),
            (regs.COMPUTE_PGM_RSRC2, kd.compute_pgm_rsrc2)]
    out += [(regs.COMPUTE_USER_DATA_0 + i, v) for i, v in enumerate(user_sgprs(d))]
    return out + [(regs.COMPUTE_DISPATCH_INITIATOR, regs.DISPATCH_INITIATOR.pack(
        compute_shader_en=1, force_start_at_000=1, use_thread_dimensions=1))]
