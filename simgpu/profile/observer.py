"""The shader engine's observer while counters count or the thread trace traces: it sees every instruction a
batch of waves issues (simgpu.shader.engine runs the interpreter one instruction at a time while an observer
is attached) and keeps per-wave counts, which go to the per-WGP counter instances when the batch ends, and
writes the trace tokens of waves on traced SIMDs. Nothing here runs when profiling is off.
"""

from __future__ import annotations

import numpy as np

from simgpu.clock import CYCLES_PER_WAVE_INSTRUCTION
from simgpu.hw.sqtt import InstOp
from simgpu.hw.sqtt_gfx9 import InstType
from simgpu.profile import lds_banks
from simgpu.profile.classify import CATEGORIES, Kind, classify
from simgpu.profile.classify_gfx9 import inst_type
from simgpu.profile.placement import instance, place, place_gfx9
from simgpu.shader.state import EXEC_LO, wsel

_INSTRUCTION_TOKENS = ("INST", "VALUINST", "IMMEDIATE")
# Per-wave count columns: the SQ_INSTS_* categories, then these.
ISSUED, LANES, LDS_ACTIVE, LDS_CONFLICT = range(len(CATEGORIES), len(CATEGORIES) + 4)
COLUMNS = LDS_CONFLICT + 1


class Observer:
    """One dispatch's view: counts (if `counting`) and tokens for the SEs in `traces` (SE -> EngineTrace)."""

    def __init__(self, counters, counting: bool, traces: dict):
        self.counters, self.counting, self.traces = counters, counting, traces
        self.kinds: dict[tuple[str, str], Kind] = {}
        self.kind_at: dict[int, Kind] = {}  # by PC, for this dispatch (its code does not change under it)
        self.tokens: dict[tuple, tuple | None] = {}  # (SE, slot, token, op) -> instruction_token
        # gfx9's traces (simgpu.profile.thread_trace_gfx9) see waves on gfx942's SEs and CUs and write CDNA's INST
        self.cdna = any(getattr(t, "cdna", False) for t in traces.values())
        self.gfx9 = counters.gfx9
        self.inst_types: dict[int, InstType | None] = {}  # by PC

    # ---- batches ------------------------------------------------------------------------------------
    def batch_start(self, ex) -> None:
        st = ex.st
        self.start = ex.engine.clock.cycles
        self.se, self.sa, self.wgp, self.simd = place(st.group + ex.groups_before, st.wave_in_group)
        # where the thread trace sees each wave: (SE, SA, WGP, SIMD), or gfx9's (SE of XCC 0, SH, CU, SIMD)
        gfx9 = place_gfx9(st.group + ex.groups_before, st.wave_in_group) if self.gfx9 else None
        self.tse, self.tsa, self.twgp, self.tsimd = gfx9 if self.cdna else (self.se, self.sa, self.wgp, self.simd)
        # the SQ counter instance: gfx11's WGP, gfx9's SE
        self.instance = gfx9[0] if self.gfx9 else instance(self.se, self.sa, self.wgp)
        self.counts = np.zeros((st.n, COLUMNS), np.int64)
        self.end = np.full(st.n, -1, np.int64)
        self.slot = np.full(st.n, -1, np.int64)  # wave slot on a traced SE (-1: none)
        self.itrace = np.zeros(st.n, bool)  # its instructions are traced
        for se, tt in self.traces.items():
            itrace = tt.traces_instructions()
            unit = None if self.cdna or not itrace else tt.traced_unit()
            waves = np.flatnonzero(self.tse == se)
            # gfx9's WAVE_START counts the wave's work-items (its lanes EXEC enables at launch)
            items = st.exec_lanes(waves).sum(axis=1).tolist() if self.cdna and len(waves) else []
            for n, i in enumerate(waves.tolist()):
                where = (int(self.tsa[i]), int(self.twgp[i]), int(self.tsimd[i]))
                self.slot[i] = tt.wave_start(self.start, *where, items[n]) if self.cdna else \
                    tt.wave_start(self.start, *where)
                self.itrace[i] = self.slot[i] >= 0 and (tt.traced(*where) if self.cdna else where == unit) \
                    and itrace
        self.any_itrace = bool(self.itrace.any())
        # A lone wave's counts and trace set-up as Python values: the per-instruction path then does no numpy
        # indexing (folded into `counts` at the batch's end).
        self.lone = [0] * COLUMNS if st.n == 1 else None
        self.lone_traced = self.traces.get(int(self.tse[0])) if st.n == 1 and self.itrace[0] else None

    def batch_end(self, ex) -> None:
        """Fold the batch's per-wave counts into the counter instances; end waves a fault left running."""
        if self.lone is not None:
            self.counts[0] += np.array(self.lone, np.int64)
        now = ex.engine.clock.cycles
        for i in np.flatnonzero((self.end < 0) & (self.slot >= 0)).tolist():
            self._trace_end(i, now)
        if not self.counting:
            return
        end = np.where(self.end < 0, now, self.end)
        inst = self.instance
        c, add = self.counts, self.counters.add
        wave32 = ex.lanes == 32
        for k, name in enumerate(CATEGORIES):
            add(name, inst, c[:, k])
        add("SQ_WAVES", inst, np.ones(len(c), np.int64))
        add("SQ_BUSY_CYCLES", inst, c[:, ISSUED] * CYCLES_PER_WAVE_INSTRUCTION)
        add("SQ_WAVE_CYCLES", inst, end - self.start)
        add("SQ_INSTS_VALU_ACTIVE_LANES", inst, c[:, LANES])
        add("SQC_LDS_IDX_ACTIVE", inst, c[:, LDS_ACTIVE])
        add("SQC_LDS_BANK_CONFLICT", inst, c[:, LDS_CONFLICT])
        vector = sum(c[:, CATEGORIES.index(n)] for n in ("SQ_INSTS_VALU", "SQ_INSTS_LDS", "SQ_INSTS_FLAT",
                                                           "SQ_INSTS_TEX_LOAD", "SQ_INSTS_TEX_STORE"))
        add("SQ_INSTS_WAVE32" if wave32 else "SQ_WAVE64_INSTS", inst, vector if wave32 else c[:, ISSUED])
        if wave32:
            add("SQ_WAVE32_INSTS", inst, c[:, ISSUED])
            add("SQ_INSTS_WAVE32_VALU", inst, c[:, CATEGORIES.index("SQ_INSTS_VALU")])
            add("SQ_INSTS_WAVE32_LDS", inst, c[:, CATEGORIES.index("SQ_INSTS_LDS")])

    # ---- instructions ----------------------------------------------------------------------------------
    def before(self, ex, w: np.ndarray, pc: int, inst) -> Kind:
        """Count an instruction the waves `w` are about to issue at `pc` (EXEC and LDS addresses as they issue
        it)."""
        kind = self.kind_at.get(pc)
        if kind is None:
            kind = self.kinds.get((inst.encoding, inst.mnemonic))
            if kind is None:
                kind = self.kinds[(inst.encoding, inst.mnemonic)] = classify(inst)
            self.kind_at[pc] = kind
        if not self.counting:
            return kind
        c = self.counts
        if self.lone is not None:
            lone = self.lone
            lone[ISSUED] += 1
            if kind.category >= 0:
                lone[kind.category] += 1
            if kind.valu:
                sg = ex.st.sgpr
                lane_bits = int(sg[0, EXEC_LO]).bit_count()
                lone[LANES] += lane_bits + (int(sg[0, EXEC_LO + 1]).bit_count() if ex.lanes == 64 else 0)
        elif len(w) == 1:
            i = w.item(0)
            c[i, ISSUED] += 1
            if kind.category >= 0:
                c[i, kind.category] += 1
            if kind.valu:
                sg = ex.st.sgpr
                lanes = int(sg[i, EXEC_LO]).bit_count()
                c[i, LANES] += lanes + (int(sg[i, EXEC_LO + 1]).bit_count() if ex.lanes == 64 else 0)
        else:
            ix = wsel(w)
            c[ix, ISSUED] += 1
            if kind.category >= 0:
                c[ix, kind.category] += 1
            if kind.valu:
                c[ix, LANES] += ex.st.exec_lanes(w).sum(axis=1)
        if kind.lds:
            active, conflict = lds_banks.cycles(ex, w, inst)
            c[w, LDS_ACTIVE] += active
            c[w, LDS_CONFLICT] += conflict
        return kind

    def after(self, ex, w: np.ndarray, pc: int, inst, kind: Kind, time: int) -> None:
        """Trace tokens of the instruction the waves `w` issued at `time`; wave ends."""
        if kind.end:
            self.end[w] = ex.engine.clock.cycles
            if self.traces:
                for i in w[self.slot[w] >= 0].tolist():
                    if self.cdna and self.itrace[i]:
                        self._trace_inst_cdna(ex, i, pc, inst, time)  # s_endpgm's OTHER_MSG, then WAVE_END
                    self._trace_end(i, time)
        elif self.lone_traced is not None:
            self._trace_inst(ex, 0, pc, inst, kind, time)
        elif self.any_itrace and self.lone is None:
            for i in (w[self.itrace[w]].tolist() if len(w) > 1 else w.tolist() if self.itrace[w.item(0)] else ()):
                self._trace_inst(ex, i, pc, inst, kind, time)

    def _trace_inst(self, ex, i: int, pc: int, inst, kind: Kind, time: int) -> None:
        if self.cdna:
            self._trace_inst_cdna(ex, i, pc, inst, time)
            return
        if kind.token not in _INSTRUCTION_TOKENS:
            return
        op = kind.op
        if kind.branch and inst.mnemonic.startswith("s_cbranch") and int(ex.st.pc[i]) == pc + inst.size:
            op = InstOp.JUMP_NO  # not taken
        se, slot = int(self.tse[i]), int(self.slot[i])
        key = (se, slot, kind.token, op)
        token = self.tokens.get(key, False)
        if token is False:
            tt = self.traces[se]
            token = self.tokens[key] = tt.instruction_token(kind.token, wave=slot, op=int(op)) \
                if kind.token == "INST" else tt.instruction_token(kind.token, wave=slot)
        if token is not None:
            self.traces[se].emit_static(token, time)

    def _trace_inst_cdna(self, ex, i: int, pc: int, inst, time: int) -> None:
        """gfx9's INST token: the instruction's class; a branch is JUMP when taken, NEXT when not."""
        if pc in self.inst_types:
            itype = self.inst_types[pc]
        else:
            itype = self.inst_types[pc] = inst_type(inst)
        if itype is None:
            return
        if itype == InstType.JUMP and inst.encoding == "SOPP" and int(ex.st.pc[i]) == pc + inst.size:
            itype = InstType.NEXT
        self.traces[int(self.tse[i])].inst(time, int(self.slot[i]), int(self.tsimd[i]), int(itype))

    def _trace_end(self, i: int, time: int) -> None:
        tt = self.traces[int(self.tse[i])]
        tt.wave_end(time, int(self.tsa[i]), int(self.twgp[i]), int(self.tsimd[i]), int(self.slot[i]))
        self.slot[i] = -1
