"""The performance counters the CP programs (PMC): select registers, CP_PERFMON_CNTL's state machine, the per-WGP
SQ counters and the GRBM counters, as registers a PM4 stream writes and reads (simgpu.hw.perfmon).

Counting happens while PERFMON_STATE is START_COUNTING: dispatches then hand their per-wave counts here
(simgpu.profile.observer), added to the counter instance of the WGP each wave ran on (simgpu.profile.placement).
Reads return the values latched by the last sample (CP_PERFMON_CNTL with PERFMON_SAMPLE_ENABLE, a
PERFCOUNTER_SAMPLE event, or the move to STOP_COUNTING); DISABLE_AND_RESET clears everything. A read with
GRBM_GFX_INDEX broadcasting over an SE, SA or instance returns the sum over them (a convenience of the model:
hardware reads one instance). SQ counters are 32 bits wide, as on gfx11 (there is no SQ_PERFCOUNTERn_HI).

gfx9 (gfx942, simgpu.hw.perfmon_gfx9): one SQ instance per SE of XCC 0 (simgpu.profile.placement.place_gfx9), 16
counters selected at consecutive SQ_PERFCOUNTERk_SELECT and read as 64 bits at SQ_PERFCOUNTERk_LO / _HI; a dispatch
counts when SQ_PERFCOUNTER_CTRL's CS_EN and its VMID's VMID_MASK bit are set.
"""

from __future__ import annotations

import numpy as np

from simgpu.hw import perfmon as pm
from simgpu.hw import perfmon_gfx9 as pm9
from simgpu.profile.placement import INSTANCES, SA_PER_SE, SE_GFX9, SHADER_ENGINES, WGP_PER_SA

SQ_NAMES = tuple(name for name, c in pm.COUNTERS.items() if c.block == "SQ")
SQ_INDEX = {name: i for i, name in enumerate(SQ_NAMES)}


class PerfCounters:
    """CP_PERFMON_CNTL, SQ/GRBM selects, and the counts behind SQ_PERFCOUNTERk_LO / GRBM_PERFCOUNTERi_LO/HI."""

    def __init__(self, gpu):
        self.gpu = gpu
        self.gfx9 = gpu.chip.family == "gfx9"
        self.state = pm.PerfmonState.DISABLE_AND_RESET
        self.live = np.zeros((len(SQ_NAMES), SE_GFX9 if self.gfx9 else INSTANCES), np.int64)
        self.latched = self.live.copy()
        self.grbm_cycles = 0  # counted core cycles of finished counting spans
        self.started_at: int | None = None  # clock cycles when counting (re)started
        self.grbm_latched = 0

    # ---- control ----------------------------------------------------------------------------------
    def counting(self, q) -> bool:
        """Whether a dispatch from queue `q` counts now: START_COUNTING, SQ_PERFCOUNTER_CTRL.CS_EN, and (PM4 queues)
        that queue's COMPUTE_PERFCOUNT_ENABLE (AQL dispatches count: the packet processor sets it)."""
        if self.state != pm.PerfmonState.START_COUNTING:
            return False
        ctrl = self.gpu.regs.get(pm.SQ_PERFCOUNTER_CTRL, 0)
        if not pm.PERFCOUNTER_CTRL.cs_en.get(ctrl):
            return False
        if self.gfx9 and not pm9.PERFCOUNTER_CTRL.vmid_mask.get(ctrl) >> q.vmid & 1:
            return False
        return q.fmt == "aql" or bool(q.regs.get(pm.COMPUTE_PERFCOUNT_ENABLE, 0) & 1)

    def write_control(self, value: int) -> None:
        """CP_PERFMON_CNTL: move the state machine; PERFMON_SAMPLE_ENABLE latches the counts."""
        state = pm.PERFMON_CNTL.perfmon_state.get(value)
        if state == pm.PerfmonState.DISABLE_AND_RESET:
            self.live[:] = 0
            self.latched[:] = 0
            self.grbm_cycles = self.grbm_latched = 0
            self.started_at = None
        elif state == pm.PerfmonState.START_COUNTING:
            self.start()
        elif state == pm.PerfmonState.STOP_COUNTING:
            self.stop()
        if state in (pm.PerfmonState.DISABLE_AND_RESET, pm.PerfmonState.START_COUNTING,
                     pm.PerfmonState.STOP_COUNTING):
            self.state = pm.PerfmonState(state)
        if pm.PERFMON_CNTL.perfmon_sample_enable.get(value):
            self.sample()

    def start(self) -> None:
        if self.started_at is None:
            self.started_at = self.gpu.clock.cycles
        self.state = pm.PerfmonState.START_COUNTING

    def stop(self) -> None:
        if self.started_at is not None:
            self.grbm_cycles += self.gpu.clock.cycles - self.started_at
            self.started_at = None
        self.state = pm.PerfmonState.STOP_COUNTING
        self.sample()

    def sample(self) -> None:
        """Latch the live counts into the readable registers."""
        self.latched = self.live.copy()
        running = 0 if self.started_at is None else self.gpu.clock.cycles - self.started_at
        self.grbm_latched = self.grbm_cycles + running

    def add(self, name: str, instances: np.ndarray, values: np.ndarray) -> None:
        """Count `values` (per wave) into the instances the waves ran on."""
        np.add.at(self.live[SQ_INDEX[name]], instances, values)

    # ---- reads --------------------------------------------------------------------------------------
    def read(self, reg: int) -> int | None:
        """The value of a counter result register, or None if `reg` is not one."""
        rel = reg - pm.SQ_PERFCOUNTER0_LO
        if self.gfx9 and 0 <= rel < 2 * pm9.SQ_COUNTERS:
            return (self._sq_gfx9(rel // 2) >> (32 * (rel % 2))) & 0xFFFFFFFF
        if 0 <= rel < 2 * pm.SQ_COUNTERS and rel % 2 == 0:
            return self._sq(rel // 2) & 0xFFFFFFFF
        for i, lo in enumerate(pm.GRBM_PERFCOUNTER_LO):
            if reg in (lo, lo + 1):
                value = self._grbm(i)
                return (value >> 32 if reg == lo + 1 else value) & 0xFFFFFFFF
        return None

    def _sq(self, k: int) -> int:
        sel = pm.SQ_SELECT.perf_sel.get(self.gpu.regs.get(pm.sq_select(k), 0))
        counter = pm.BY_SELECT.get(("SQ", sel))
        if counter is None:
            return 0  # an event the model does not count
        per = self.latched[SQ_INDEX[counter.name]].reshape(SHADER_ENGINES, SA_PER_SE, WGP_PER_SA)
        idx = pm.GFX_INDEX.unpack(self.gpu.regs.get(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST))
        se = slice(None) if idx["se_broadcast_writes"] else idx["se_index"]
        sa = slice(None) if idx["sa_broadcast_writes"] else idx["sa_index"]
        wgp = slice(None) if idx["instance_broadcast_writes"] else idx["instance_index"]
        try:
            return int(per[se, sa, wgp].sum())
        except IndexError:
            return 0  # an SE/SA/WGP the part does not have

    def _sq_gfx9(self, k: int) -> int:
        """gfx9's SQ counter k of the SE GRBM_GFX_INDEX selects (the sum over XCC 0's SEs when it broadcasts)."""
        counter = pm9.BY_SELECT.get(pm9.SQ_SELECT.perf_sel.get(self.gpu.regs.get(pm9.sq_select(k), 0)))
        if counter is None:
            return 0  # an event the model does not count
        per = self.latched[SQ_INDEX[counter.model]]
        idx = pm.GFX_INDEX.unpack(self.gpu.regs.get(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST))
        if idx["se_broadcast_writes"]:
            return int(per.sum())
        return int(per[idx["se_index"]]) if idx["se_index"] < len(per) else 0

    def _grbm(self, i: int) -> int:
        sel = pm.GRBM_SELECT.perf_sel.get(self.gpu.regs.get(pm.GRBM_PERFCOUNTER0_SELECT + i, 0))
        return self.grbm_latched if ("GRBM", sel) in pm.BY_SELECT else 0
