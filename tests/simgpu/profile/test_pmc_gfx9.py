"""gfx942's performance counters programmed as tinygrad's ops_amd programs gfx9's (simgpu.hw.perfmon_gfx9_pm4: 16
SQ counters at consecutive selects, 64-bit LO/HI per SE, SQ_PERFCOUNTER_CTRL's VMID_MASK, reads per XCC behind
PRED_EXEC): over clang-19's gfx942 OpenCL corpus the counts read back equal the shader engine's own statistics."""

import struct

import numpy as np
import pytest

from simgpu.hw import perfmon_gfx9 as pm9
from simgpu.hw import perfmon_gfx9_pm4 as pp
from tests.simgpu.profile.test_pmc import engine_view
from tests.simgpu.profile.test_sqtt_gfx9 import CASES, corpus_bench, launch_on

GRBM = {"GRBM_COUNT": 0, "GRBM_GUI_ACTIVE": 2}  # rocprofiler's gfx942 GRBM selects
PASS = ["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_LDS", "SQ_INSTS_FLAT", "SQ_INSTS_SMEM", "SQ_BUSY_CYCLES",
        "SQ_INSTS_BRANCH", "SQ_INSTS_SALU", "SQ_WAVE_CYCLES", "GRBM_COUNT", "GRBM_GUI_ACTIVE"]


def counted(name: str, queue: str, names=PASS, vmid_mask: int | None = None):
    """Counters around one launch of a corpus kernel on a gfx942: (per counter its values per XCC and SE, GPU)."""
    make, grid, block = CASES[name]
    gpu, vm, ring, aql, k, vas = corpus_bench(name, make)
    sched = pp.pmc_schedule(names)
    out = vm.alloc(1 << 16)
    ring.submit(pp.pmc_start(sched, GRBM))
    if vmid_mask is not None:
        ring.submit(pp._uconfig(pm9.SQ_PERFCOUNTER_CTRL, pm9.PERFCOUNTER_CTRL.pack(cs_en=1, vmid_mask=vmid_mask)))
    launch_on(queue, ring, aql, vm, k, vas, grid, block)
    ring.submit(pp.pmc_read(sched, out))
    assert ring.q.error is None and aql.q.error is None
    raw = vm.read(out, 1 << 16)
    return {s.name: np.array(struct.unpack_from(f"<{s.count}Q", raw, s.offset)) for s in sched}, gpu, grid, block


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("name", list(CASES))
def test_counters_equal_the_engines_statistics(name, queue):
    c, gpu, grid, block = counted(name, queue)
    stats = gpu.engine.counters
    total = {n: int(v.sum()) for n, v in c.items()}
    assert total["SQ_WAVES"] == int(np.prod(grid)) * -(-int(np.prod(block)) // 64)  # wave64
    assert total["SQ_BUSY_CYCLES"] == stats.wave_instructions
    assert {n: total[n] for n in engine_view({})} == engine_view(stats.per_opcode)
    assert total["SQ_INSTS_SALU"] > 0 and total["SQ_WAVE_CYCLES"] > 0
    # PRED_EXEC runs XCC 0's reads only (the XCC whose CP runs the queue); its SEs hold every wave
    assert not c["SQ_WAVES"][4:].any() and not c["GRBM_COUNT"][1:].any()
    assert c["GRBM_COUNT"][0] == c["GRBM_GUI_ACTIVE"][0] > 0


def test_workgroups_go_round_robin_over_xcc_0s_ses():
    c, *_ = counted("group_sum", "pm4", ["SQ_WAVES"])  # 2 workgroups of 4 waves
    assert c["SQ_WAVES"][:4].tolist() == [4, 4, 0, 0]


def test_a_dispatch_whose_vmid_is_masked_out_does_not_count():
    c, *_ = counted("saxpy", "pm4", ["SQ_WAVES"], vmid_mask=0xFFFF & ~(1 << 1))  # the harness's VM is VMID 1
    assert not c["SQ_WAVES"].any()


def test_an_unknown_counter_is_refused_by_name():
    with pytest.raises(ValueError, match="not modelled"):
        pp.pmc_schedule(["TCC_HIT"])
