"""PM4 sequences that program the gfx11 performance counters and thread trace, as rocprof's aqlprofile and
tinygrad's ops_amd program them: shared by the runtime (runtime.profile) and the device tests.

Counters: GRBM_GFX_INDEX broadcast, CP_PERFMON_CNTL DISABLE_AND_RESET, SQ_PERFCOUNTER_CTRL (CS_EN) and CTRL2,
the select registers (SQ counter k through SQ_PERFCOUNTER{2k}_SELECT), COMPUTE_PERFCOUNT_ENABLE, then
START_COUNTING. Reading: STOP_COUNTING with PERFMON_SAMPLE_ENABLE, then per SQ instance (SE, SA, WGP selected
in GRBM_GFX_INDEX) a COPY_DATA of SQ_PERFCOUNTERk_LO into memory, and a 64-bit COPY_DATA per GRBM counter.
Thread trace (per SE, through GRBM_GFX_INDEX): BUF0_SIZE/BASE, MASK (compute waves, the traced SIMD), TOKEN_MASK,
CTRL MODE ON; COMPUTE_THREAD_TRACE_ENABLE on the queue. Stop: THREAD_TRACE_FINISH, wait for STATUS.FINISH_PENDING
and BUSY to clear, MODE OFF, COPY_DATA of SQ_THREAD_TRACE_WPTR per SE.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from dataclasses import dataclass

from simgpu.hw import perfmon as pm
from simgpu.hw import pm4 as hw

SE_COUNT, SA_PER_SE, WGP_PER_SA = 6, 2, 4  # gfx1100: the SQ counter instances a read visits
SQ_INSTANCES = SE_COUNT * SA_PER_SE * WGP_PER_SA


@dataclass(frozen=True)
class Sample:
    """Where a counter's values land in the result buffer: `count` values of `size` bytes from `offset`."""

    name: str
    block: str
    index: int  # counter number within its block
    offset: int
    count: int
    size: int


def pmc_schedule(names: list[str]) -> list[Sample]:
    """Counter slots for `names` (SQ: one 32-bit value per instance; GRBM: one 64-bit value)."""
    out, used, offset = [], {"SQ": 0, "GRBM": 0}, 0
    for name in names:
        c = pm.COUNTERS.get(name)
        if c is None:
            raise ValueError(f"counter {name!r} is not modelled; known: {', '.join(pm.COUNTERS)}")
        limit = pm.SQ_COUNTERS if c.block == "SQ" else pm.GRBM_COUNTERS
        if used[c.block] >= limit:
            raise ValueError(f"more than {limit} {c.block} counters in one pass")
        count, size = (SQ_INSTANCES, 4) if c.block == "SQ" else (1, 8)
        out.append(Sample(name, c.block, used[c.block], offset, count, size))
        used[c.block] += 1
        offset += count * size
    return out


def _uconfig(reg: int, value: int) -> list[int]:
    return hw.set_uconfig_reg(reg, value)


def pmc_start(schedule: list[Sample]) -> list[int]:
    """Reset the counters, select the schedule's events and start counting."""
    out = _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)
    out += _uconfig(pm.CP_PERFMON_CNTL, pm.PERFMON_CNTL.pack(perfmon_state=pm.PerfmonState.DISABLE_AND_RESET))
    out += _uconfig(pm.SQ_PERFCOUNTER_CTRL, pm.PERFCOUNTER_CTRL.pack(cs_en=1, ps_en=1, gs_en=1, hs_en=1))
    out += _uconfig(pm.SQ_PERFCOUNTER_CTRL2, pm.PERFCOUNTER_CTRL2.pack(force_en=1, vmid_en=0xFFFF))
    for s in schedule:
        sel = pm.COUNTERS[s.name].select
        if s.block == "SQ":
            out += _uconfig(pm.sq_select(s.index), pm.SQ_SELECT.pack(perf_sel=sel))
        else:
            out += _uconfig(pm.GRBM_PERFCOUNTER0_SELECT + s.index, pm.GRBM_SELECT.pack(perf_sel=sel))
    out += hw.set_sh_reg(pm.COMPUTE_PERFCOUNT_ENABLE, 1)
    out += _uconfig(pm.CP_PERFMON_CNTL, pm.PERFMON_CNTL.pack(perfmon_state=pm.PerfmonState.START_COUNTING))
    return out


def pmc_read(schedule: list[Sample], dst: int) -> list[int]:
    """Stop and sample the counters, then copy every instance's value to `dst` (laid out as the schedule says)."""
    out = _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)
    out += _uconfig(pm.CP_PERFMON_CNTL, pm.PERFMON_CNTL.pack(perfmon_state=pm.PerfmonState.STOP_COUNTING,
                                                             perfmon_sample_enable=1))
    for s in schedule:
        if s.block == "GRBM":
            out += hw.copy_data(hw.CopySrc.PERFCOUNTERS, pm.GRBM_PERFCOUNTER_LO[s.index], hw.CopyDst.TC_L2,
                                dst + s.offset, wide=True)
            continue
        at = dst + s.offset
        for se in range(SE_COUNT):
            for sa in range(SA_PER_SE):
                for wgp in range(WGP_PER_SA):
                    out += _uconfig(pm.GRBM_GFX_INDEX, pm.gfx_index(se, sa, wgp))
                    out += hw.copy_data(hw.CopySrc.PERFCOUNTERS, pm.sq_counter_lo(s.index), hw.CopyDst.TC_L2, at)
                    at += 4
    out += _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)
    return out


def sqtt_start(buffers: list[tuple[int, int]], simd: int = 0, wgp: int = 0, sa: int = 0, itrace_se_mask: int = 1,
               token_exclude: int = 0) -> list[int]:
    """Start thread traces: SE i writes into buffers[i] = (VA, size), both 4 KiB aligned; SEs in
    `itrace_se_mask` also trace the instructions of the selected SIMD."""
    itrace_off = sum(1 << b for b in (pm.TokenExclude.VMEMEXEC, pm.TokenExclude.ALUEXEC, pm.TokenExclude.VALUINST,
                                      pm.TokenExclude.IMMEDIATE, pm.TokenExclude.INST))
    include = sum(1 << b for b in (pm.RegInclude.SQDEC, pm.RegInclude.SHDEC, pm.RegInclude.GFXUDEC,
                                   pm.RegInclude.COMP, pm.RegInclude.CONTEXT))
    out: list[int] = []
    for se, (va, size) in enumerate(buffers):
        if va % pm.TT_BUFFER_ALIGN or size % pm.TT_BUFFER_ALIGN:
            raise ValueError("thread-trace buffers are 4 KiB aligned and a multiple of 4 KiB long")
        page = va // pm.TT_BUFFER_ALIGN
        exclude = token_exclude | (0 if itrace_se_mask >> se & 1 else itrace_off)
        out += _uconfig(pm.GRBM_GFX_INDEX, pm.gfx_index(se=se, sa=0))
        out += _uconfig(pm.SQ_THREAD_TRACE_BUF0_SIZE, pm.TT_BUF0_SIZE.pack(base_hi=page >> 32,
                                                                            size=size // pm.TT_BUFFER_ALIGN))
        out += _uconfig(pm.SQ_THREAD_TRACE_BUF0_BASE, page & 0xFFFFFFFF)
        out += _uconfig(pm.SQ_THREAD_TRACE_MASK, pm.TT_MASK.pack(wtype_include=pm.WTYPE_INCLUDE_CS, simd_sel=simd,
                                                                 wgp_sel=wgp, sa_sel=sa))
        out += _uconfig(pm.SQ_THREAD_TRACE_TOKEN_MASK, pm.TT_TOKEN_MASK.pack(
            reg_include=include, token_exclude=exclude, bop_events_token_include=1))
        out += _uconfig(pm.SQ_THREAD_TRACE_CTRL, _trace_ctrl(pm.TraceMode.ON))
    out += _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)
    out += hw.set_sh_reg(pm.COMPUTE_THREAD_TRACE_ENABLE, 1)
    return out


def _trace_ctrl(mode: int) -> int:
    return pm.TT_CTRL.pack(mode=mode, draw_event_en=1, spi_stall_en=1, sq_stall_en=1, reg_at_hwm=2, hiwater=1,
                           util_timer=1, rt_freq=2)


def sqtt_stop(ses: int, wptrs: int) -> list[int]:
    """Finish the traces of SEs 0..ses-1 and copy each SE's SQ_THREAD_TRACE_WPTR to wptrs + 4 * se."""
    out = hw.set_sh_reg(pm.COMPUTE_THREAD_TRACE_ENABLE, 0)
    out += hw.event_write(hw.Event.THREAD_TRACE_FINISH)
    for se in range(ses):
        out += _uconfig(pm.GRBM_GFX_INDEX, pm.gfx_index(se=se, sa=0))
        out += hw.wait_reg_mem(pm.SQ_THREAD_TRACE_STATUS, 0, pm.TT_STATUS.finish_pending.bits(0xFFF), memory=False)
        out += _uconfig(pm.SQ_THREAD_TRACE_CTRL, _trace_ctrl(pm.TraceMode.OFF))
        out += hw.wait_reg_mem(pm.SQ_THREAD_TRACE_STATUS, 0, pm.TT_STATUS.busy.bits(), memory=False)
        out += hw.copy_data(hw.CopySrc.PERFCOUNTERS, pm.SQ_THREAD_TRACE_WPTR, hw.CopyDst.TC_L2, wptrs + 4 * se)
    out += _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)
    return out


def sqtt_userdata(*dwords: int) -> list[int]:
    """User data in the trace (RGP markers): pairs of dwords written to SQ_THREAD_TRACE_USERDATA_2/3."""
    out: list[int] = []
    for i in range(0, len(dwords), 2):
        out += hw.set_uconfig_reg(pm.SQ_THREAD_TRACE_USERDATA_0 + 2, *dwords[i:i + 2])
    return out


def trace_bytes(wptr: int, buffer_va: int) -> int:
    """Bytes a trace buffer holds, from the SQ_THREAD_TRACE_WPTR value read after the trace (gfx11.0 counts the
    buffer's address in)."""
    offset = pm.TT_WPTR.offset.get(wptr)
    return (offset - (buffer_va // pm.TT_WPTR_UNIT) % (1 << 29)) * pm.TT_WPTR_UNIT
