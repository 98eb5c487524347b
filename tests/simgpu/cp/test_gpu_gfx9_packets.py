"""gfx942's own packet forms: the gfx9 PM4 packets (ACQUIRE_MEM, RELEASE_MEM's cache actions, COMPUTE_PGM_RSRC3's
address) and SDMA 4.4's narrower fields, each checked against words written here from the linux headers' bit
positions (soc15d.h, kfd_pm4_headers_ai.h, gc_9_4_3_offset.h, vega10_sdma_pkt_open.h; not from our builders), run
on a gfx942 device, and the other family's form refused by name."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu.cp.queue import QueueState
from simgpu.gpu import GPU
from simgpu.hw import pm4 as hw
from simgpu.hw import pm4_gfx9, regs, sdma
from tests.support.gpu_harness import VM, Ring


@pytest.fixture
def vm942():
    return VM(GPU(vram_size=256 << 20, arch="gfx942"))


@pytest.fixture
def vm1100():
    return VM(GPU(vram_size=256 << 20))


def _type3(opcode: int, body_dwords: int) -> int:
    """soc15d.h's PACKET3_COMPUTE(op, n): type 3 in [31:30], COUNT = body dwords - 1 in [29:16], IT_OPCODE in
    [15:8], SHADER_TYPE (compute) in [1]."""
    return (3 << 30) | ((body_dwords - 1) << 16) | (opcode << 8) | (1 << 1)


# ---- PM4: ACQUIRE_MEM ------------------------------------------------------------------------------------------
def test_acquire_mem_gfx9_form_is_soc15ds_six_dwords_and_runs_on_gfx942(vm942):
    # CP_COHER_CNTL: SH_ICACHE_ACTION_ENA [29], SH_KCACHE_ACTION_ENA [27], TC_ACTION_ENA [23], TCL1_ACTION_ENA [22],
    # TC_WB_ACTION_ENA [18] (what gfx_v9_0_emit_mem_sync programs); then COHER_SIZE, COHER_SIZE_HI [23:0],
    # COHER_BASE_LO, COHER_BASE_HI [23:0], POLL_INTERVAL [15:0].
    coher = (1 << 29) | (1 << 27) | (1 << 23) | (1 << 22) | (1 << 18)
    want = [_type3(0x58, 6), coher, 0xFFFFFFFF, 0xFFFFFF, 0x1000, 0x12, 0x0A]
    assert pm4_gfx9.acquire_mem(base=0x12_0000_1000, size=(1 << 56) - 1) == want
    r = Ring(vm942, "pm4")
    r.submit(want)
    assert r.q.state == QueueState.IDLE, vm942.gpu.describe()


def test_acquire_mem_gfx11_form_is_refused_on_gfx942(vm942):
    r = Ring(vm942, "pm4")
    r.submit(hw.acquire_mem(gcr=hw.GCR_INVALIDATE_ALL))
    assert r.q.state == QueueState.ERROR and "gfx10+'s form (GCR_CNTL last)" in r.q.error.why


def test_acquire_mem_gfx9_form_is_refused_on_gfx1100(vm1100):
    r = Ring(vm1100, "pm4")
    r.submit(pm4_gfx9.acquire_mem())
    assert r.q.state == QueueState.ERROR and "gfx9's form (CP_COHER_CNTL" in r.q.error.why


def test_acquire_mem_reserved_coher_cntl_bits_are_refused_on_gfx942(vm942):
    r = Ring(vm942, "pm4")
    r.submit(pm4_gfx9.acquire_mem(coher_cntl=1 << 0))  # bit 0 is CB0_DEST_BASE's region: no compute action
    assert r.q.state == QueueState.ERROR and "CP_COHER_CNTL bits 0x00000001 are reserved on gfx9" in r.q.error.why


# ---- PM4: RELEASE_MEM -----------------------------------------------------------------------------------------
def test_release_mem_gfx9_cache_actions_as_tinygrad_sends_them(vm942):
    # event dword: EVENT_TYPE CACHE_FLUSH_AND_INV_TS_EVENT (0x14) [5:0], EVENT_INDEX end of pipe (5) [11:8],
    # EOP_TC_WB_ACTION_EN [15], EOP_TC_NC_ACTION_EN [19]; data dword: DATA_SEL [31:29] = 1 (32-bit low),
    # INT_SEL [26:24] = 0; address lo/hi, data lo/hi, INT_CTXID.
    out = vm942.alloc(64)
    event = 0x14 | (5 << 8) | (1 << 15) | (1 << 19)
    want = [_type3(0x49, 7), event, 1 << 29, out & 0xFFFFFFFF, out >> 32, 0xCAFE, 0, 0]
    actions = pm4_gfx9.RELEASE_EVENT_CNTL.pack(tc_wb_action_ena=1, tc_nc_action_ena=1)
    assert pm4_gfx9.release_mem(out, 0xCAFE, actions=actions) == want
    r = Ring(vm942, "pm4")
    r.submit(want)
    assert r.q.state == QueueState.IDLE and vm942.u32(out, 1) == [0xCAFE]


def test_release_mem_gfx11_gcr_bits_are_refused_on_gfx942_by_name(vm942):
    # tinygrad's gfx11 cache flush: GLV_INV [14], GL1_INV [15], GL2_INV [20], GLM_WB [12], GLM_INV [13], GL2_WB [21],
    # SEQ [22] (nvd.h); gfx9 reserves 14 and 22.
    out = vm942.alloc(64)
    gcr = 0
    for flag in ("GLV_INV", "GL1_INV", "GL2_INV", "GLM_WB", "GLM_INV", "GL2_WB", "SEQ"):
        gcr |= getattr(hw, f"RELEASE_MEM_GCR_{flag}")
    r = Ring(vm942, "pm4")
    r.submit(hw.release_mem(out, 1, gcr=gcr))
    why = r.q.error.why if r.q.error else ""
    assert r.q.state == QueueState.ERROR and "bits 14, 22 are reserved on gfx9" in why
    assert "GLV_INV (bit 14), SEQ (bit 22) are gfx10+'s GCR_CNTL" in why and vm942.u32(out, 1) == [0]


# ---- PM4: registers and the dispatch initiator ---------------------------------------------------------------
def test_compute_pgm_rsrc3_is_gc_9_4_3s_address():
    # gc_9_4_3_offset.h: regCOMPUTE_PGM_RSRC3 0x0e2d (BASE_IDX 0, GC segment 0 at 0x2000); gc_11_0_0: 0x1bc8 + 0x1260
    assert regs.compute_pgm_rsrc3("gfx9") == 0x2000 + 0x0E2D
    assert regs.compute_pgm_rsrc3("gfx11") == regs.compute_pgm_rsrc3("gfx12") == 0x1260 + 0x1BC8


def test_gfx11s_compute_pgm_rsrc3_address_is_refused_on_gfx942(vm942):
    r = Ring(vm942, "pm4")
    r.submit(hw.set_sh_reg(0x2E28, 0x3F))
    assert r.q.state == QueueState.ERROR and "gfx10+'s COMPUTE_PGM_RSRC3" in r.q.error.why and "0x2e2d" in r.q.error.why
    r2 = Ring(vm942, "pm4")
    r2.submit(hw.set_sh_reg(0x2E2D, 0x3F))
    assert r2.q.state == QueueState.IDLE and r2.q.regs[0x2E2D] == 0x3F


def test_a_wave32_dispatch_initiator_is_refused_on_gfx942(vm942):
    r = Ring(vm942, "pm4")
    r.submit(hw.dispatch_direct(1, initiator=regs.dispatch_initiator(wave32=True)))
    assert r.q.state == QueueState.ERROR and "CS_W32_EN is gfx10+'s" in r.q.error.why


# ---- SDMA 4.4 --------------------------------------------------------------------------------------------------
def test_sdma44_copy_linear_is_vega10s_layout_with_a_22_bit_count(vm942):
    # vega10_sdma_pkt_open.h: header OP [7:0] = 1 (COPY), SUB_OP [15:8] = 0 (LINEAR); COUNT [21:0] = bytes - 1;
    # PARAMETER (swaps) 0; SRC_ADDR lo/hi; DST_ADDR lo/hi.
    n = 4 << 20  # the most one packet moves
    src, dst = vm942.alloc(n), vm942.alloc(n)
    data = np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8).tobytes()
    vm942.write(src, data)
    want = [0x00000001, n - 1, 0, src & 0xFFFFFFFF, src >> 32, dst & 0xFFFFFFFF, dst >> 32]
    assert sdma.copy_linear(dst, src, n, major=4) == want
    r = Ring(vm942, "sdma")
    r.submit(want)
    assert r.q.state == QueueState.IDLE and vm942.read(dst, n) == data
    with pytest.raises(ValueError, match="1..4194304 bytes on SDMA 4"):
        sdma.copy_linear(dst, src, n + 1, major=4)


def test_sdma44_refuses_a_count_past_22_bits(vm942):
    src, dst = vm942.alloc(4096), vm942.alloc(4096)
    r = Ring(vm942, "sdma")
    r.submit([0x00000001, 1 << 22, 0, src & 0xFFFFFFFF, src >> 32, dst & 0xFFFFFFFF, dst >> 32])
    assert r.q.state == QueueState.ERROR and "SDMA 4.4's 22-bit field" in r.q.error.why
    r2 = Ring(vm942, "sdma")
    r2.submit(sdma.const_fill(dst, 0, 8 << 20))
    assert r2.q.state == QueueState.ERROR and "CONST_FILL count 0x7fffff does not fit" in r2.q.error.why


def test_sdma44_fence_has_no_mtype_and_refuses_v6s(vm942):
    # vega10: FENCE header is OP [7:0] = 5 and SUB_OP only; ADDR lo/hi; DATA. sdma_v6_0_0: MTYPE [18:16] and more.
    out = vm942.alloc(64)
    r = Ring(vm942, "sdma")
    r.submit([0x00000005, out & 0xFFFFFFFF, out >> 32, 0xF00D])
    assert r.q.state == QueueState.IDLE and vm942.u32(out, 1) == [0xF00D]
    assert sdma.fence(out, 0xF00D, mtype=0) == [0x00000005, out & 0xFFFFFFFF, out >> 32, 0xF00D]
    assert sdma.fence(out, 0xF00D, major=4) == [0x00000005, out & 0xFFFFFFFF, out >> 32, 0xF00D]  # the runtime's
    r2 = Ring(vm942, "sdma")
    r2.submit(sdma.fence(out + 4, 1))  # v6's MTYPE 3
    assert r2.q.state == QueueState.ERROR and "SDMA 5+'s cache fields (MTYPE 3" in r2.q.error.why


def test_sdma44_poll_regmem_trap_and_timestamp_keep_v6s_layout(vm942):
    # vega10: POLL_REGMEM header OP 8, FUNC [30:28], MEM_POLL [31]; DW5 INTERVAL [15:0], RETRY_COUNT [27:16];
    # TRAP OP 6 with INT_CONTEXT [27:0]; TIMESTAMP OP 13, SUB_OP 2 (GET_GLOBAL), address lo/hi.
    flag, stamp = vm942.alloc(64), vm942.alloc(64)
    poll = [0xD0000008, flag & 0xFFFFFFFF, flag >> 32, 1, 0xFFFFFFFF, (0xFFF << 16) | 4]
    assert sdma.poll_regmem(flag, 1, func=5, interval=4) == poll
    trap, ts = [0x00000006, 7], [0x0000020D, stamp & 0xFFFFFFFF, stamp >> 32]
    assert sdma.trap(7) == trap and sdma.timestamp(stamp) == ts
    r = Ring(vm942, "sdma")
    r.submit(poll, ts, trap)
    assert r.q.state == QueueState.BLOCKED and vm942.u64(stamp) == 0
    vm942.write(flag, struct.pack("<I", 1))
    vm942.gpu.run_until_idle()
    assert r.q.state == QueueState.IDLE and vm942.u64(stamp) > 0


# kfd_pm4_headers_ai.h's pm4_mec_release_mem ordinal 2, field by field (lo, width), plus soc15d.h's EOP_EXEC [28]:
# every other bit is reserved on gfx9.
_RELEASE_EVENT_FIELDS = [(0, 6), (8, 4), (12, 1), (13, 1), (15, 1), (16, 1), (17, 1), (19, 1), (20, 1), (21, 1),
                         (25, 2), (28, 1), (29, 1)]
_RELEASE_DEFINED = sum(((1 << w) - 1) << lo for lo, w in _RELEASE_EVENT_FIELDS)
# soc15d.h's PACKET3_ACQUIRE_MEM_CP_COHER_CNTL_* bits and ENGINE_SEL [31]
_COHER_DEFINED = sum(1 << b for b in (3, 4, 5, 15, 18, 22, 23, 25, 26, 27, 28, 29, 30, 31))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_gfx9_release_mem_event_dword_is_refused_exactly_when_a_reserved_bit_is_set(dw0):
    assert (pm4_gfx9.release_mem_reserved(dw0) is None) == (dw0 & ~_RELEASE_DEFINED == 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([None, *(b for b in range(32) if not _COHER_DEFINED >> b & 1)]),
       st.integers(0, 2**56 - 1), st.integers(0, 2**56 - 1))
def test_gfx9_acquire_mem_runs_exactly_when_coher_cntl_has_no_reserved_bit(actions, reserved, base, size):
    coher = (actions & _COHER_DEFINED) | (0 if reserved is None else 1 << reserved)
    vm = VM(GPU(vram_size=64 << 20, arch="gfx942"))
    r = Ring(vm, "pm4")
    words = pm4_gfx9.acquire_mem(base, size, coher)
    assert words[1:] == [coher, size & 0xFFFFFFFF, size >> 32, base & 0xFFFFFFFF, base >> 32, 0x0A]
    r.submit(words)
    assert (r.q.state == QueueState.IDLE) == (coher & ~_COHER_DEFINED == 0), r.q.error
