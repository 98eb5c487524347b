"""The SQ thread trace (SQTT) of one shader engine: its SQ_THREAD_TRACE_* registers and the token stream it writes
into its buffer in GPU memory (simgpu.hw.sqtt).

Tracing is on while SQ_THREAD_TRACE_CTRL.MODE is ON (a THREAD_TRACE_START event turns it on as well,
THREAD_TRACE_STOP off). A new trace starts with a LAYOUT_HEADER (layout 3, RDNA3) and is timed by the virtual
clock: token times are core cycles since the device was created. Waves of compute dispatches from queues with
COMPUTE_THREAD_TRACE_ENABLE (AQL dispatches: always) write WAVESTART/WAVEEND; the SIMD that
SQ_THREAD_TRACE_MASK selects (SA_SEL, WGP_SEL, SIMD_SEL) also writes a token per instruction. Writes to
SQ_THREAD_TRACE_USERDATA_* and the traced queue's COMPUTE_* registers become REG tokens, EVENT_WRITEs EVENT
tokens, as TOKEN_MASK allows. The stream reaches memory at the end of each dispatch and at THREAD_TRACE_FINISH /
STOP, padded with NOPs to 32 bytes; SQ_THREAD_TRACE_WPTR then reads (buffer address + bytes written) / 32, as
gfx11.0 reports it. A full buffer stops the stream (STATUS2.BUF0_FULL; DROPPED_CNTR counts lost tokens).
"""

from __future__ import annotations

from simgpu.hw import perfmon as pm
from simgpu.hw import sqtt
from simgpu.profile.placement import SIMD_PER_WGP
from simgpu.profile.trace_buffer import TraceBuffer

WAVE_SLOTS = 32  # the WAVESTART token's wave field: 5 bits


class EngineTrace(TraceBuffer):
    """SQ_THREAD_TRACE_* state and the token stream of one SE."""

    WAVE_SLOTS = WAVE_SLOTS
    WPTR_UNIT = pm.TT_WPTR_UNIT

    # ---- registers ------------------------------------------------------------------------------------
    def write(self, reg: int, value: int, vmid: int) -> None:
        old = self.regs.get(reg, 0)
        self.regs[reg] = value
        if reg in (pm.SQ_THREAD_TRACE_BUF0_BASE, pm.SQ_THREAD_TRACE_BUF0_SIZE):
            self.vmid = vmid
        if reg == pm.SQ_THREAD_TRACE_CTRL:
            on, was = pm.TT_CTRL.mode.get(value) != pm.TraceMode.OFF, pm.TT_CTRL.mode.get(old) != pm.TraceMode.OFF
            if on and not was:
                self.start(vmid)
            elif was and not on:
                self.finish()

    def read(self, reg: int) -> int:
        if reg == pm.SQ_THREAD_TRACE_WPTR:
            return pm.TT_WPTR.pack(offset=(self.base() + self.flushed) // pm.TT_WPTR_UNIT)
        if reg == pm.SQ_THREAD_TRACE_STATUS:
            return pm.TT_STATUS.pack(finish_done=1 if self.writer is None and self.flushed else 0,
                                     owner_vmid=self.vmid)
        if reg == pm.SQ_THREAD_TRACE_STATUS2:
            return pm.TT_STATUS2.pack(buf0_full=self.full)
        if reg == pm.SQ_THREAD_TRACE_DROPPED_CNTR:
            return self.dropped & 0xFFFFFFFF
        return self.regs.get(reg, 0)

    def base(self) -> int:
        hi = pm.TT_BUF0_SIZE.base_hi.get(self.regs.get(pm.SQ_THREAD_TRACE_BUF0_SIZE, 0))
        return ((hi << 32) | self.regs.get(pm.SQ_THREAD_TRACE_BUF0_BASE, 0)) * pm.TT_BUFFER_ALIGN

    def size(self) -> int:
        return pm.TT_BUF0_SIZE.size.get(self.regs.get(pm.SQ_THREAD_TRACE_BUF0_SIZE, 0)) * pm.TT_BUFFER_ALIGN

    # ---- start / stop -----------------------------------------------------------------------------------
    def start(self, vmid: int) -> None:
        """Begin a trace at the buffer's start: LAYOUT_HEADER, then tokens on the virtual clock."""
        self.begin(vmid, sqtt.TraceWriter())
        self.writer.emit("LAYOUT_HEADER", layout=sqtt.LAYOUT_RDNA3, simd=self.mask("simd_sel"))

    # ---- what gets traced -------------------------------------------------------------------------------
    def mask(self, name: str) -> int:
        return pm.TT_MASK.fields[name].get(self.regs.get(pm.SQ_THREAD_TRACE_MASK, 0))

    def excluded(self, token_bit: int) -> bool:
        mask = self.regs.get(pm.SQ_THREAD_TRACE_TOKEN_MASK, 0)
        return bool(pm.TT_TOKEN_MASK.token_exclude.get(mask) >> token_bit & 1)

    def wants(self, token_bit: int) -> bool:
        """Whether TOKEN_MASK lets this kind of token through (per-instruction check: one lookup)."""
        return not self._exclude >> token_bit & 1

    def traces_instructions(self) -> bool:
        """Whether the traced SIMD writes instruction tokens (some of INST / VALUINST / IMMEDIATE not excluded);
        latches TOKEN_MASK for `wants` (a dispatch does not change it)."""
        self._exclude = pm.TT_TOKEN_MASK.token_exclude.get(self.regs.get(pm.SQ_THREAD_TRACE_TOKEN_MASK, 0))
        self._static: dict = {}  # instruction_token's cache, for this TOKEN_MASK
        return any(self.wants(b) for b in (pm.TokenExclude.INST, pm.TokenExclude.VALUINST,
                                           pm.TokenExclude.IMMEDIATE))

    def traces_compute(self) -> bool:
        return bool(self.mask("wtype_include") & pm.WTYPE_INCLUDE_CS)

    def traced_unit(self) -> tuple[int, int, int]:
        """(sa, wgp, simd) whose instructions are traced."""
        return self.mask("sa_sel"), self.mask("wgp_sel"), self.mask("simd_sel") % SIMD_PER_WGP

    def instruction_token(self, name: str, **fields: int) -> tuple[int, int, object] | None:
        """(packed fields with code, nibbles, delta field) of a per-instruction token TOKEN_MASK lets through
        (None when it excludes it), for `emit_static`; cached per token and field values."""
        key = (name, *fields.items())
        cached = self._static.get(key)
        if cached is None:
            tok = sqtt.TOKENS[name]
            bit = {"INST": pm.TokenExclude.INST, "VALUINST": pm.TokenExclude.VALUINST,
                   "IMMEDIATE": pm.TokenExclude.IMMEDIATE}[name]
            cached = self._static[key] = (tok.code | tok.fields.pack(delta=0, **fields), tok.nibbles, tok.delta) \
                if self.wants(bit) else False
        return cached or None

    def emit_static(self, token: tuple[int, int, object], time: int) -> None:
        """Append a token from `instruction_token` at `time`."""
        if self.writer is not None and not self.full:
            self.writer.emit_static(token[0], token[1], token[2], time)
        elif self.writer is not None:
            self.dropped += 1

    def wave_start(self, time: int, sa: int, wgp: int, simd: int) -> int:
        """A wave starts on (sa, wgp, simd): its wave slot (-1: no slot free, not traced)."""
        slot = self.take_slot((sa, wgp, simd))
        if slot >= 0 and not self.excluded(pm.TokenExclude.WAVESTARTEND):
            self.emit("WAVESTART", time, wave=slot, simd=simd, wgp=wgp, sa=sa)
        return slot

    def wave_end(self, time: int, sa: int, wgp: int, simd: int, slot: int) -> None:
        self.free_slot((sa, wgp, simd), slot)
        if not self.excluded(pm.TokenExclude.WAVESTARTEND):
            self.emit("WAVEEND", time, wave=slot, simd=simd, wgp=wgp, sa=sa)
