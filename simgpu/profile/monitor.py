"""The device's performance monitor: the registers of the counters (simgpu.profile.counters) and of the shader
engines' thread traces as the command processor reads and writes them, the events that start, stop and sample
them, and the observer a dispatch gets while they are on. gfx1100/gfx1201: six SEs' gfx11 traces
(simgpu.profile.thread_trace); gfx9 (gfx942): the four SEs of the XCC whose CP runs the queue (XCC 0: PRED_EXEC
selects XCC 0's packets), gfx9's traces (simgpu.profile.thread_trace_gfx9).
"""

from __future__ import annotations

from simgpu.hw import perfmon as pm
from simgpu.hw import perfmon_gfx9 as pm9
from simgpu.hw import regs
from simgpu.hw import sqtt_gfx9 as tt9
from simgpu.profile.counters import PerfCounters
from simgpu.profile.observer import Observer
from simgpu.profile.placement import SHADER_ENGINES
from simgpu.profile.thread_trace import EngineTrace
from simgpu.profile.thread_trace_gfx9 import TraceGfx9

_TT_REGS = frozenset(range(pm.SQ_THREAD_TRACE_BUF0_BASE, pm.SQ_THREAD_TRACE_DROPPED_CNTR + 1))
_USERDATA = frozenset(range(pm.SQ_THREAD_TRACE_USERDATA_0,
                            pm.SQ_THREAD_TRACE_USERDATA_0 + pm.SQ_THREAD_TRACE_USERDATA_COUNT))
_RESULTS = frozenset([pm.sq_counter_lo(k) for k in range(pm.SQ_COUNTERS)]
                     + [lo + j for lo in pm.GRBM_PERFCOUNTER_LO for j in (0, 1)])
REG_EXCLUDE_USER_DATA = 1  # SQ_THREAD_TRACE_TOKEN_MASK.REG_EXCLUDE bit 0 (SQ_TT_REG_EXCLUDE_USER_DATA)
SE_PER_XCC_GFX9 = 4
MEC_ME = 1  # the ME number of the compute micro engine (the REG tokens' ME_ID)


class PerfMonitor:
    """PMC and SQTT of one GPU."""

    def __init__(self, gpu):
        self.gpu = gpu
        self.gfx9 = gpu.chip.family == "gfx9"
        self.counters = PerfCounters(gpu)
        if self.gfx9:
            self.traces = [TraceGfx9(gpu, se) for se in range(SE_PER_XCC_GFX9)]
            self.tt_regs, self.userdata = tt9.REGISTERS, tt9.USERDATA
        else:
            self.traces = [EngineTrace(gpu, se) for se in range(SHADER_ENGINES)]
            self.tt_regs, self.userdata = _TT_REGS, _USERDATA
        results = _RESULTS | pm9.REGISTERS if self.gfx9 else _RESULTS
        self.registers = self.tt_regs | self.userdata | results | {pm.CP_PERFMON_CNTL}
        # Profiles the dispatches the program does not (simgpu.profile.dispatches.DispatchProfiler; None: off).
        self.dispatches = None

    @property
    def tracing(self) -> bool:
        """Whether any SE is tracing."""
        return any(t.on for t in self.traces)

    def _selected(self) -> list[EngineTrace]:
        idx = pm.GFX_INDEX.unpack(self.gpu.regs.get(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST))
        if idx["se_broadcast_writes"]:
            return self.traces
        return [self.traces[idx["se_index"]]] if idx["se_index"] < len(self.traces) else []

    # ---- registers (the CP's reads and writes of device registers it owns) ----------------------------------
    def read(self, q, reg: int) -> int:
        """A register read by the CP (COPY_DATA, WAIT_REG_MEM)."""
        value = self.counters.read(reg)
        if value is not None:
            return value
        if reg in self.tt_regs:
            se = self._selected()
            return se[0].read(reg) if se else 0
        return self.gpu.regs.get(reg, 0)

    def write(self, q, reg: int, value: int) -> None:
        """A register write by the CP (SET_UCONFIG_REG, WRITE_DATA, COPY_DATA)."""
        if reg == pm.CP_PERFMON_CNTL:
            self.counters.write_control(value)
        elif reg in self.tt_regs:
            for t in self._selected():
                t.write(reg, value, q.vmid)
        elif reg in self.userdata and self.gfx9:
            for t in self.traces:
                t.user_data(self.gpu.clock.cycles, reg, value, MEC_ME, q.engine % 4)
        elif reg in self.userdata:
            self._reg_token(reg, value, user_data=True)

    def sh_written(self, q, reg: int, value: int) -> None:
        """An SH register write on queue `q` while some SE traces: a REG (gfx9: REG_CS) token if the token mask
        asks for them."""
        if self.gfx9:
            for t in self.traces:
                t.sh_written(self.gpu.clock.cycles, reg, value, MEC_ME, q.engine % 4)
        elif q.regs.get(pm.COMPUTE_THREAD_TRACE_ENABLE, 0) & 1 or reg == pm.COMPUTE_THREAD_TRACE_ENABLE:
            self._reg_token(reg, value, user_data=False)

    def _reg_token(self, reg: int, value: int, user_data: bool) -> None:
        now = self.gpu.clock.cycles
        for t in self.traces:
            if not t.on or t.excluded(pm.TokenExclude.REG):
                continue
            mask = t.regs.get(pm.SQ_THREAD_TRACE_TOKEN_MASK, 0)
            if user_data and pm.TT_TOKEN_MASK.reg_exclude.get(mask) & REG_EXCLUDE_USER_DATA:
                continue
            include = pm.TT_TOKEN_MASK.reg_include.get(mask)
            if not user_data and not include & ((1 << pm.RegInclude.SHDEC) | (1 << pm.RegInclude.COMP)
                                                | (1 << pm.RegInclude.ALL)):
                continue
            t.emit("REG", now, subop=reg & 0xFFFF, val32=value & 0xFFFFFFFF)

    # ---- events -----------------------------------------------------------------------------------------
    def event(self, q, name: str, event: int) -> None:
        """An EVENT_WRITE: every event is an EVENT token while tracing; the thread-trace and counter events act."""
        now = self.gpu.clock.cycles
        for t in self.traces:
            if t.on and not self.gfx9 and not t.excluded(pm.TokenExclude.EVENT):
                t.emit("EVENT", now, event=event)
        if name == "THREAD_TRACE_START":
            for t in self.traces:
                if t.size() and not t.on:
                    t.start(q.vmid)
        elif name in ("THREAD_TRACE_STOP", "THREAD_TRACE_FINISH"):
            for t in self.traces:
                t.finish()
        elif name == "PERFCOUNTER_START":
            self.counters.start()
        elif name == "PERFCOUNTER_STOP":
            self.counters.stop()
        elif name == "PERFCOUNTER_SAMPLE":
            self.counters.sample()

    # ---- dispatches ---------------------------------------------------------------------------------------
    def begin(self, q, d=None) -> Observer | None:
        """The observer of dispatch `d` from queue `q` (None when nothing counts or traces it): the program's own
        counters and traces, else the host's dispatch profiler's if one is attached (`dispatches`)."""
        counting = self.counters.counting(q)
        traced = q.fmt == "aql" or self.gfx9 or bool(q.regs.get(regs.COMPUTE_THREAD_TRACE_ENABLE, 0) & 1)
        traces = {t.se: t for t in self.traces if traced and t.on and t.traces_compute()}
        if self.gfx9 and q.fmt == "aql" and d is not None:
            for t in self.traces:
                t.aql_dispatch(self.gpu.clock.cycles, d, MEC_ME, q.engine % 4)
        if counting or traces:
            obs = Observer(self.counters, counting, traces)
        elif self.dispatches is not None and d is not None:
            obs = self.dispatches.begin(q, d)
        else:
            return None
        self.gpu.engine.observer = obs
        return obs

    def end(self, obs: Observer | None) -> None:
        """The dispatch ended (or faulted): detach its observer, write the traces out."""
        if obs is None:
            return
        self.gpu.engine.observer = None
        for t in obs.traces.values():
            t.flush()
        if self.dispatches is not None:
            self.dispatches.end(obs)
