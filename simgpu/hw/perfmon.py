"""gfx11 performance-monitor registers: the counter select/control/result registers rocprof programs, the
thread-trace (SQTT) registers, GRBM_GFX_INDEX, and the counters the simulator models.

Register addresses are absolute dword addresses from amdgpu's gc_11_0_0_offset.h (BASE_IDX 1 is GC segment
0xA000: regSQ_PERFCOUNTER0_SELECT 0x39c0 there is dword 0xD9C0 here) with fields from gc_11_0_0_sh_mask.h.
On gfx11 the SQ counters live in each WGP: the 16 SQ_PERFCOUNTERn_SELECT registers drive 8 32-bit counters,
counter k selected by SQ_PERFCOUNTER{2k}_SELECT and read at SQ_PERFCOUNTERk_LO (there is no _HI), one set per
(SE, SA, WGP) instance that GRBM_GFX_INDEX selects (rocprofiler's aqlprofile gfx11 block table pairs them
the same way). Counter names and select values are rocprofiler-sdk's public gfx11 counter definitions
(counter_defs.yaml). Every register written with SET_UCONFIG_REG (UCONFIG space, >= 0xC000) or WRITE_DATA.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from simgpu.hw.bits import Field, Layout

# ---- instance selection -----------------------------------------------------------------------------------
GRBM_GFX_INDEX = 0xC200
GFX_INDEX = Layout(instance_index=Field(0, 8), sa_index=Field(8, 8), se_index=Field(16, 8),
                   sa_broadcast_writes=Field(29), instance_broadcast_writes=Field(30), se_broadcast_writes=Field(31))
GFX_INDEX_BROADCAST = GFX_INDEX.pack(sa_broadcast_writes=1, instance_broadcast_writes=1, se_broadcast_writes=1)


def gfx_index(se: int | None = None, sa: int | None = None, instance: int | None = None) -> int:
    """GRBM_GFX_INDEX selecting one SE / SA / instance (a WGP for the SQ), broadcast where None."""
    return GFX_INDEX.pack(se_index=se or 0, sa_index=sa or 0, instance_index=instance or 0,
                          se_broadcast_writes=se is None, sa_broadcast_writes=sa is None,
                          instance_broadcast_writes=instance is None)


# ---- counter control ----------------------------------------------------------------------------------------
CP_PERFMON_CNTL = 0xD808
PERFMON_CNTL = Layout(perfmon_state=Field(0, 4), spm_perfmon_state=Field(4, 4), perfmon_enable_mode=Field(8, 2),
                      perfmon_sample_enable=Field(10))


class PerfmonState(IntEnum):
    """CP_PERFMON_CNTL.PERFMON_STATE (CP_PERFMON_STATE)."""

    DISABLE_AND_RESET = 0
    START_COUNTING = 1
    STOP_COUNTING = 2


SQ_PERFCOUNTER_CTRL = 0xD9E0  # which shader stages count (CS_EN for compute)
PERFCOUNTER_CTRL = Layout(ps_en=Field(0), gs_en=Field(2), hs_en=Field(4), cs_en=Field(6))
SQ_PERFCOUNTER_CTRL2 = 0xD9E2
PERFCOUNTER_CTRL2 = Layout(force_en=Field(0), vmid_en=Field(1, 16))
COMPUTE_PERFCOUNT_ENABLE = 0x2E0B  # SH register: this queue's dispatches count

SQ_SELECTS = 16
SQ_COUNTERS = 8  # counter k: SQ_PERFCOUNTER{2k}_SELECT, read at SQ_PERFCOUNTERk_LO
SQ_PERFCOUNTER0_SELECT = 0xD9C0
SQ_PERFCOUNTER0_LO = 0xD1C0  # SQ_PERFCOUNTERk_LO = SQ_PERFCOUNTER0_LO + 2k
SQ_SELECT = Layout(perf_sel=Field(0, 9), spm_mode=Field(20, 4), perf_mode=Field(28, 4))

GRBM_COUNTERS = 2
GRBM_PERFCOUNTER0_SELECT = 0xD840  # GRBM_PERFCOUNTER1_SELECT = 0xD841
GRBM_PERFCOUNTER_LO = (0xD040, 0xD043)  # each 64-bit: _HI at _LO + 1
GRBM_SELECT = Layout(perf_sel=Field(0, 6))


def sq_select(k: int) -> int:
    """SQ_PERFCOUNTER{2k}_SELECT: the select register of SQ counter k."""
    return SQ_PERFCOUNTER0_SELECT + 2 * k


def sq_counter_lo(k: int) -> int:
    """SQ_PERFCOUNTERk_LO: where SQ counter k is read."""
    return SQ_PERFCOUNTER0_LO + 2 * k


# ---- the modelled counters --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Counter:
    """A hardware counter: its block, its select value and what the simulator counts for it."""

    name: str
    block: str  # "SQ" (per WGP instance, 32-bit) or "GRBM" (device-wide, 64-bit)
    select: int
    meaning: str
    extension: bool = False  # a simulator extension: no public gfx11 select exists for it


COUNTERS = {c.name: c for c in (
    Counter("SQ_BUSY_CYCLES", "SQ", 3, "core cycles the instance's waves spent issuing (1 per wave-instruction)"),
    Counter("SQ_WAVES", "SQ", 4, "waves launched"),
    Counter("SQ_WAVE_CYCLES", "SQ", 24, "wave lifetimes summed, in core cycles of the virtual clock"),
    Counter("SQ_INSTS_FLAT", "SQ", 56, "FLAT-encoded instructions (flat_, global_, scratch_)"),
    Counter("SQ_INSTS_LDS", "SQ", 57, "LDS (DS) instructions"),
    Counter("SQ_INSTS_SALU", "SQ", 58, "scalar ALU instructions (not branches, messages or waits)"),
    Counter("SQ_INSTS_SMEM", "SQ", 59, "scalar memory instructions"),
    Counter("SQ_INSTS_VALU", "SQ", 62, "vector ALU instructions (WMMA included)"),
    Counter("SQ_INSTS_TEX_LOAD", "SQ", 66, "buffer/image loads"),
    Counter("SQ_INSTS_TEX_STORE", "SQ", 67, "buffer/image stores and atomics"),
    Counter("SQ_INSTS_WAVE32", "SQ", 70, "wave32 FLAT, LDS, VALU and TEX instructions"),
    Counter("SQ_INSTS_WAVE32_LDS", "SQ", 72, "wave32 LDS instructions"),
    Counter("SQ_INSTS_WAVE32_VALU", "SQ", 73, "wave32 VALU instructions"),
    Counter("SQ_WAVE32_INSTS", "SQ", 82, "instructions of wave32 waves"),
    Counter("SQ_WAVE64_INSTS", "SQ", 83, "instructions of wave64 waves"),
    Counter("SQC_LDS_BANK_CONFLICT", "SQ", 256, "cycles LDS stalled on bank conflicts (64 banks of 4 bytes)"),
    Counter("SQC_LDS_IDX_ACTIVE", "SQ", 261, "cycles LDS was busy with indexed (DS) operations"),
    Counter("SQ_INSTS_BRANCH", "SQ", 0x1F0, "branch instructions (s_branch, s_cbranch_*, s_setpc/swappc/call)",
            extension=True),
    Counter("SQ_INSTS_VALU_ACTIVE_LANES", "SQ", 0x1F1, "active lanes (EXEC bits) of VALU instructions summed",
            extension=True),
    Counter("GRBM_COUNT", "GRBM", 0, "core cycles of the virtual clock while counting"),
    Counter("GRBM_GUI_ACTIVE", "GRBM", 2, "core cycles the GPU was busy (the virtual clock only moves with work)"),
)}
BY_SELECT = {(c.block, c.select): c for c in COUNTERS.values()}

# ---- thread trace (SQTT) -----------------------------------------------------------------------------------
SQ_THREAD_TRACE_USERDATA_0 = 0xC340  # .._7 at +7; each write is a user-data token in the trace
SQ_THREAD_TRACE_USERDATA_COUNT = 8
SQ_THREAD_TRACE_BUF0_BASE = 0xD9E8  # address bits [43:12]
SQ_THREAD_TRACE_BUF0_SIZE = 0xD9E9
TT_BUF0_SIZE = Layout(base_hi=Field(0, 4), size=Field(8, 22))  # base bits [47:44]; size in 4 KiB units
SQ_THREAD_TRACE_BUF1_BASE = 0xD9EA
SQ_THREAD_TRACE_BUF1_SIZE = 0xD9EB
SQ_THREAD_TRACE_CTRL = 0xD9EC
TT_CTRL = Layout(mode=Field(0, 2), all_vmid=Field(2), gl1_perf_en=Field(3), interrupt_en=Field(4),
                 double_buffer=Field(5), hiwater=Field(6, 3), reg_at_hwm=Field(9, 2), spi_stall_en=Field(11),
                 sq_stall_en=Field(12), util_timer=Field(13), wavestart_mode=Field(14, 2), rt_freq=Field(16, 2),
                 sync_count_markers=Field(18), sync_count_draws=Field(19), lowater_offset=Field(20, 3),
                 auto_flush_padding_dis=Field(28), auto_flush_mode=Field(29), draw_event_en=Field(31))
SQ_THREAD_TRACE_MASK = 0xD9ED
TT_MASK = Layout(simd_sel=Field(0, 2), wgp_sel=Field(4, 4), sa_sel=Field(9), wtype_include=Field(10, 7),
                 exclude_nondetail_shaderdata=Field(17))
WTYPE_INCLUDE_CS = 1 << 6  # SQ_TT_WTYPE_INCLUDE_CS_BIT
SQ_THREAD_TRACE_TOKEN_MASK = 0xD9EE
TT_TOKEN_MASK = Layout(token_exclude=Field(0, 11), ttrace_exec=Field(11), bop_events_token_include=Field(12),
                       reg_include=Field(16, 8), inst_exclude=Field(24, 2), reg_exclude=Field(26, 3),
                       reg_detail_all=Field(31))
SQ_THREAD_TRACE_WPTR = 0xD9EF
TT_WPTR = Layout(offset=Field(0, 29), buffer_id=Field(31))  # offset: (buffer address + bytes) / 32 on gfx11.0
SQ_THREAD_TRACE_STATUS = 0xD9F4
TT_STATUS = Layout(finish_pending=Field(0, 12), finish_done=Field(12, 12), write_error=Field(24), busy=Field(25),
                   owner_vmid=Field(28, 4))
SQ_THREAD_TRACE_STATUS2 = 0xD9F5
TT_STATUS2 = Layout(buf0_full=Field(0), buf1_full=Field(1), packet_lost_buf_no_lockdown=Field(4),
                    buf_issue_status=Field(8, 5), buf_issue=Field(13), write_buf_full=Field(14))
SQ_THREAD_TRACE_DROPPED_CNTR = 0xD9FA
COMPUTE_THREAD_TRACE_ENABLE = 0x2E1E  # SH register: this queue's dispatches are traced
TT_BUFFER_ALIGN = 4096
TT_WPTR_UNIT = 32  # bytes per SQ_THREAD_TRACE_WPTR unit


class TraceMode(IntEnum):
    """SQ_THREAD_TRACE_CTRL.MODE (SQ_TT_MODE)."""

    OFF = 0
    ON = 1
    GLOBAL = 2
    DETAIL = 3


class TokenExclude(IntEnum):
    """Bits of SQ_THREAD_TRACE_TOKEN_MASK.TOKEN_EXCLUDE (SQ_TT_TOKEN_EXCLUDE_*_SHIFT)."""

    VMEMEXEC = 0
    ALUEXEC = 1
    VALUINST = 2
    WAVERDY = 3
    WAVESTARTEND = 4
    IMMEDIATE = 5
    REG = 6
    EVENT = 7
    INST = 8
    UTILCTR = 9
    WAVEALLOC = 10


class RegInclude(IntEnum):
    """Bits of SQ_THREAD_TRACE_TOKEN_MASK.REG_INCLUDE (SQ_TT_TOKEN_MASK_*_SHIFT)."""

    SQDEC = 0
    SHDEC = 1
    GFXUDEC = 2
    COMP = 3
    CONTEXT = 4
    CONFIG = 5
    ALL = 6


NAMES = {v: k for k, v in globals().items() if k.isupper() and isinstance(v, int) and 0xC000 <= v < 0x10000
         and k.startswith(("GRBM_", "CP_PERFMON", "SQ_THREAD_TRACE", "SQ_PERFCOUNTER_CTRL"))}
NAMES.update({sq_select(k) // 1 + j: f"SQ_PERFCOUNTER{2 * k + j}_SELECT" for k in range(SQ_COUNTERS) for j in (0, 1)})
NAMES.update({sq_counter_lo(k): f"SQ_PERFCOUNTER{k}_LO" for k in range(SQ_COUNTERS)})
NAMES.update({GRBM_PERFCOUNTER0_SELECT + i: f"GRBM_PERFCOUNTER{i}_SELECT" for i in range(GRBM_COUNTERS)})
NAMES.update({lo + j: f"GRBM_PERFCOUNTER{i}_{'HI' if j else 'LO'}" for i, lo in enumerate(GRBM_PERFCOUNTER_LO)
              for j in (0, 1)})
NAMES.update({SQ_THREAD_TRACE_USERDATA_0 + i: f"SQ_THREAD_TRACE_USERDATA_{i}"
              for i in range(SQ_THREAD_TRACE_USERDATA_COUNT)})
