"""gfx9's performance-counter registers (gfx942) where they differ from gfx11's (simgpu.hw.perfmon), and the gfx942
counters the simulator models.

gc_9_4_3_offset.h / _sh_mask.h: the SQ has 16 counters, one per SE (GRBM_GFX_INDEX's SE_INDEX picks the SE; there is
no per-WGP instance), counter k selected by SQ_PERFCOUNTERk_SELECT (consecutive, not gfx11's even-numbered ones) and
read as 64 bits at SQ_PERFCOUNTERk_LO / _HI. SQ_PERFCOUNTER_CTRL keeps gfx11's stage bits (CS_EN) and adds
VMID_MASK [31:16]: a dispatch counts when its VMID's bit is set. CP_PERFMON_CNTL, GRBM_GFX_INDEX (SH_INDEX where gfx11
has SA_INDEX) and the GRBM counters are at gfx11's addresses with gfx11's layouts. Select values are rocprofiler's
public gfx942 counter definitions.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from dataclasses import dataclass

from simgpu.hw.bits import Field, Layout

SQ_COUNTERS = 16
SQ_PERFCOUNTER0_SELECT = 0xD9C0  # SQ_PERFCOUNTERk_SELECT = + k
SQ_PERFCOUNTER0_LO = 0xD1C0  # SQ_PERFCOUNTERk_LO = + 2k, _HI = + 2k + 1
SQ_PERFCOUNTER_CTRL = 0xD9E0
PERFCOUNTER_CTRL = Layout(ps_en=Field(0), vs_en=Field(1), gs_en=Field(2), es_en=Field(3), hs_en=Field(4),
                          ls_en=Field(5), cs_en=Field(6), cntr_rate=Field(8, 5), disable_flush=Field(13),
                          vmid_mask=Field(16, 16))
SQ_PERFCOUNTER_MASK = 0xD9E1
SQ_SELECT = Layout(perf_sel=Field(0, 9), sqc_bank_mask=Field(12, 4), sqc_client_mask=Field(16, 4),
                   spm_mode=Field(20, 4), simd_mask=Field(24, 4), perf_mode=Field(28, 4))


def sq_select(k: int) -> int:
    return SQ_PERFCOUNTER0_SELECT + k


def sq_counter_lo(k: int) -> int:
    return SQ_PERFCOUNTER0_LO + 2 * k


@dataclass(frozen=True)
class Counter:
    """A gfx942 SQ counter: its select value and the model's count it reads (simgpu.hw.perfmon's counter name)."""

    name: str
    select: int
    model: str


COUNTERS = {c.name: c for c in (
    Counter("SQ_BUSY_CYCLES", 3, "SQ_BUSY_CYCLES"),
    Counter("SQ_WAVES", 4, "SQ_WAVES"),
    Counter("SQ_INSTS_VALU", 26, "SQ_INSTS_VALU"),
    Counter("SQ_INSTS_SALU", 60, "SQ_INSTS_SALU"),
    Counter("SQ_INSTS_SMEM", 61, "SQ_INSTS_SMEM"),
    Counter("SQ_INSTS_FLAT", 62, "SQ_INSTS_FLAT"),
    Counter("SQ_INSTS_LDS", 65, "SQ_INSTS_LDS"),
    Counter("SQ_INSTS_BRANCH", 69, "SQ_INSTS_BRANCH"),
    Counter("SQ_WAVE_CYCLES", 79, "SQ_WAVE_CYCLES"),
    Counter("SQ_LDS_BANK_CONFLICT", 126, "SQC_LDS_BANK_CONFLICT"),
    Counter("SQ_LDS_IDX_ACTIVE", 131, "SQC_LDS_IDX_ACTIVE"),
)}
BY_SELECT = {c.select: c for c in COUNTERS.values()}
REGISTERS = frozenset([sq_counter_lo(k) + j for k in range(SQ_COUNTERS) for j in (0, 1)])
