"""PM4 sequences that program gfx942's performance counters as tinygrad's ops_amd does for gfx9: GRBM_GFX_INDEX
broadcast, CP_PERFMON_CNTL DISABLE_AND_RESET, SQ_PERFCOUNTER_CTRL (CS_EN and the other stages, VMID_MASK 0xFFFF),
SQ counter k selected at SQ_PERFCOUNTERk_SELECT (with every SIMD, SQC bank and client), SQ_PERFCOUNTER_MASK,
COMPUTE_PERFCOUNT_ENABLE, START_COUNTING. Reading: START_COUNTING with PERFMON_SAMPLE_ENABLE, then per XCC (behind a
PRED_EXEC) and per SE a COPY_DATA of SQ_PERFCOUNTERk_LO and _HI; GRBM counters once per XCC.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from dataclasses import dataclass

from simgpu.hw import perfmon as pm
from simgpu.hw import perfmon_gfx9 as pm9
from simgpu.hw import pm4 as hw

XCCS, SE_PER_XCC = 8, 4


@dataclass(frozen=True)
class Sample:
    """Where a counter's 64-bit values land: XCC-major, then SE (SQ) or one per XCC (GRBM), from `offset`."""

    name: str
    block: str
    index: int
    offset: int
    count: int


def pmc_schedule(names: list[str]) -> list[Sample]:
    out, used, offset = [], {"SQ": 0, "GRBM": 0}, 0
    for name in names:
        block = "GRBM" if name.startswith("GRBM_") else "SQ"
        if block == "SQ" and name not in pm9.COUNTERS:
            raise ValueError(f"gfx942 counter {name!r} is not modelled; known: {', '.join(pm9.COUNTERS)}")
        limit = pm9.SQ_COUNTERS if block == "SQ" else pm.GRBM_COUNTERS
        if used[block] >= limit:
            raise ValueError(f"more than {limit} {block} counters in one pass")
        count = XCCS * (SE_PER_XCC if block == "SQ" else 1)
        out.append(Sample(name, block, used[block], offset, count))
        used[block] += 1
        offset += 8 * count
    return out


def _uconfig(reg: int, value: int) -> list[int]:
    return hw.set_uconfig_reg(reg, value)


def _perfmon(state: int, sample: bool = False) -> list[int]:
    return _uconfig(pm.CP_PERFMON_CNTL, pm.PERFMON_CNTL.pack(perfmon_state=state, perfmon_sample_enable=sample))


def pmc_start(schedule: list[Sample], grbm_selects: dict[str, int]) -> list[int]:
    """Reset, select the schedule's events (`grbm_selects`: the GRBM counters' select values) and start counting."""
    out = _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST) + _perfmon(pm.PerfmonState.DISABLE_AND_RESET)
    out += _uconfig(pm9.SQ_PERFCOUNTER_CTRL, pm9.PERFCOUNTER_CTRL.pack(cs_en=1, ps_en=1, gs_en=1, hs_en=1,
                                                                       vmid_mask=0xFFFF))
    for s in schedule:
        if s.block == "SQ":
            out += _uconfig(pm9.sq_select(s.index), pm9.SQ_SELECT.pack(perf_sel=pm9.COUNTERS[s.name].select,
                                                                       simd_mask=0xF, sqc_bank_mask=0xF,
                                                                       sqc_client_mask=0xF))
        else:
            out += _uconfig(pm.GRBM_PERFCOUNTER0_SELECT + s.index, pm.GRBM_SELECT.pack(perf_sel=grbm_selects[s.name]))
    out += _uconfig(pm9.SQ_PERFCOUNTER_MASK, 0xFFFFFFFF)
    out += hw.set_sh_reg(pm.COMPUTE_PERFCOUNT_ENABLE, 1)
    return out + _perfmon(pm.PerfmonState.START_COUNTING)


def pmc_read(schedule: list[Sample], dst: int) -> list[int]:
    """Latch the counts and copy every instance's 64-bit value to dst (Sample offsets)."""
    out = _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST) + _perfmon(pm.PerfmonState.START_COUNTING, True)
    for s in schedule:
        lo = pm9.sq_counter_lo(s.index) if s.block == "SQ" else pm.GRBM_PERFCOUNTER_LO[s.index]
        for xcc in range(XCCS):
            body: list[int] = []
            for se in range(SE_PER_XCC if s.block == "SQ" else 1):
                va = dst + s.offset + 8 * (xcc * (s.count // XCCS) + se)
                if s.block == "SQ":
                    body += _uconfig(pm.GRBM_GFX_INDEX, pm.gfx_index(se=se))
                body += hw.copy_data(hw.CopySrc.PERFCOUNTERS, lo, hw.CopyDst.TC_L2, va)
                body += hw.copy_data(hw.CopySrc.PERFCOUNTERS, lo + 1, hw.CopyDst.TC_L2, va + 4)
            out += hw.pred_exec(len(body), 1 << xcc) + body
    out += _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)
    return out + _perfmon(pm.PerfmonState.START_COUNTING)
