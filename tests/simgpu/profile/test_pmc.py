"""Performance counters programmed through their gfx11 registers (simgpu.hw.perfmon_pm4, as rocprof does): counts of
kernels with known behaviour equal analytic values, and over the corpus the counters read back equal the shader
engine's own statistics."""

import struct

import numpy as np
import pytest

from compiler.samples import corpus
from simgpu.gpu import GPU
from simgpu.hw import perfmon_pm4 as pp
from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from tests.support.gpu_harness import VM, Ring, aql_launch, asm_kernel, pm4_launch

KERNELS = {k.name: k for k in corpus()}


def counted(vm: VM, ring: Ring, launch, names: list[str], launch_ring: Ring | None = None) -> dict[str, np.ndarray]:
    """Counters around one launch (on `launch_ring`, else `ring`, which programs the counters): SQ counters per
    instance (SE, SA, WGP order), GRBM counters as one value."""
    sched = pp.pmc_schedule(names)
    out = vm.alloc(8192)
    if launch_ring is None:
        ring.submit(pp.pmc_start(sched), launch, pp.pmc_read(sched, out))
    else:
        ring.submit(pp.pmc_start(sched))
        launch_ring.submit(launch)
        ring.submit(pp.pmc_read(sched, out))
    assert ring.q.error is None and (launch_ring or ring).q.error is None
    raw = vm.read(out, 8192)
    return {s.name: np.frombuffer(raw, "<u4", s.count, s.offset).astype(np.int64) if s.block == "SQ"
            else np.array([struct.unpack_from("<Q", raw, s.offset)[0]]) for s in sched}


MIX = """
s_mov_b32 s4, 0
s_cmp_eq_u32 s4, 1
s_cbranch_scc1 0
v_mov_b32_e32 v1, 1.0
v_add_f32_e32 v1, v1, v1
v_add_f32_e32 v1, v1, v1
s_endpgm
"""


def test_counters_of_a_known_instruction_mix_are_analytic():
    gpu = GPU()
    vm = VM(gpu)
    ring = Ring(vm, "pm4", size=1 << 16)
    k = asm_kernel(vm, MIX)
    c = counted(vm, ring, pm4_launch(vm, k, [0], (4,), (64,)),
                ["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_BRANCH", "SQ_BUSY_CYCLES", "SQ_WAVE_CYCLES",
                 "SQ_INSTS_VALU_ACTIVE_LANES", "SQ_WAVE32_INSTS", "GRBM_COUNT", "GRBM_GUI_ACTIVE"])
    waves = 4 * 2  # 4 workgroups of 64 work-items, wave32
    assert c["SQ_WAVES"].sum() == waves
    assert c["SQ_INSTS_VALU"].sum() == 3 * waves
    assert c["SQ_INSTS_SALU"].sum() == 2 * waves
    assert c["SQ_INSTS_BRANCH"].sum() == 1 * waves
    assert c["SQ_BUSY_CYCLES"].sum() == 7 * waves  # one core cycle per wave-instruction (docs/device.md)
    # All eight waves issue together: each of the 7 steps costs 8 cycles, and every wave lives through all of them.
    assert c["SQ_WAVE_CYCLES"].sum() == waves * 7 * waves
    assert c["SQ_INSTS_VALU_ACTIVE_LANES"].sum() == 3 * waves * 32
    assert c["SQ_WAVE32_INSTS"].sum() == 7 * waves
    # Workgroup g runs on SE g % 6, SA 0, WGP 0: instances 0, 8, 16, 24 (SE-major), two waves each.
    assert np.flatnonzero(c["SQ_WAVES"]).tolist() == [0, 8, 16, 24] and set(c["SQ_WAVES"][[0, 8, 16, 24]]) == {2}
    assert c["GRBM_COUNT"][0] == c["GRBM_GUI_ACTIVE"][0] > c["SQ_BUSY_CYCLES"].sum()


def lds_kernel(vm: VM, stride: int):
    """One wave32 loading LDS at byte address lane * stride."""
    body = f"""
v_mul_u32_u24_e32 v1, {stride}, v0
ds_load_b32 v2, v1
s_waitcnt lgkmcnt(0)
s_endpgm
"""
    kd = make_descriptor(8, kernarg_size=8, group_segment_size=16384)
    meta = {".args": [{".name": "a0", ".offset": 0, ".size": 8, ".value_kind": "by_value"}]}
    return vm.load(write_code_object([("k", assemble(body), kd, meta)]))["k"]


@pytest.mark.parametrize(("stride", "conflict"), [
    (4, 0),     # lane i reads dword i: 32 different banks
    (16, 1),    # dword 4i: lanes i and i + 16 share bank 4i % 64 at two addresses -> one extra cycle
    (64, 7),    # dword 16i: banks 0, 16, 32, 48 serve 8 addresses each -> 7 extra cycles
    (256, 31),  # dword 64i: every lane in bank 0 at its own address -> 31 extra cycles
    (0, 0),     # every lane reads dword 0: a broadcast, one cycle
])
def test_lds_bank_conflicts_follow_the_address_pattern(stride, conflict):
    gpu = GPU()
    vm = VM(gpu)
    ring = Ring(vm, "aql", size=1 << 16)
    pm4 = Ring(vm, "pm4", size=1 << 16)
    k = lds_kernel(vm, stride)
    sched = pp.pmc_schedule(["SQC_LDS_BANK_CONFLICT", "SQC_LDS_IDX_ACTIVE", "SQ_INSTS_LDS"])
    out = vm.alloc(4096)
    pm4.submit(pp.pmc_start(sched))
    ring.submit(aql_launch(vm, k, [0], (1,), (32,)))
    pm4.submit(pp.pmc_read(sched, out))
    raw = vm.read(out, 4096)
    got = {s.name: int(np.frombuffer(raw, "<u4", s.count, s.offset).sum()) for s in sched}
    assert got == {"SQC_LDS_BANK_CONFLICT": conflict, "SQC_LDS_IDX_ACTIVE": conflict + 1, "SQ_INSTS_LDS": 1}


PASS = ["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_LDS", "SQ_INSTS_FLAT", "SQ_INSTS_SMEM", "SQ_BUSY_CYCLES",
        "SQ_INSTS_VALU_ACTIVE_LANES", "SQ_INSTS_BRANCH"]


def engine_view(per_opcode: dict) -> dict[str, int]:
    """The shader engine's own per-opcode statistics, summed as the counters define them."""
    def total(*prefixes):
        return sum(n for m, n in per_opcode.items() if m.startswith(prefixes))
    return {"SQ_INSTS_VALU": total("v_"), "SQ_INSTS_LDS": total("ds_"),
            "SQ_INSTS_FLAT": total("global_", "flat_", "scratch_"), "SQ_INSTS_SMEM": total("s_load", "s_buffer_load"),
            "SQ_INSTS_BRANCH": total("s_branch", "s_cbranch_")}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_counters_read_through_registers_equal_the_engines_statistics(name):
    k = KERNELS[name]
    gpu = GPU()
    vm = VM(gpu)
    ring, aql = Ring(vm, "pm4", size=1 << 16), Ring(vm, "aql", size=1 << 16)
    loaded = vm.load(k.code_object())[name]
    args = k.inputs(np.random.default_rng(0))
    vas = [vm.upload(a) if isinstance(a, np.ndarray) else a for a in args]
    launch = aql_launch(vm, loaded, vas, k.grid, k.block)  # (AQL: the group segment size comes from the packet)
    c = {n: int(v.sum()) for n, v in counted(vm, ring, launch, PASS, aql).items()}
    stats = gpu.engine.counters
    assert c["SQ_BUSY_CYCLES"] == stats.wave_instructions
    assert c["SQ_INSTS_VALU_ACTIVE_LANES"] == stats.lane_ops
    block = int(np.prod(k.block))
    assert c["SQ_WAVES"] == int(np.prod(k.grid)) * -(-block // 32)
    assert {n: c[n] for n in engine_view({})} == engine_view(stats.per_opcode)
    after = [vm.download(va, a.dtype, a.size) if isinstance(a, np.ndarray) else a
             for va, a in zip(vas, args, strict=True)]
    assert k.mismatch(args, after) is None  # counting does not change what the kernel computes
