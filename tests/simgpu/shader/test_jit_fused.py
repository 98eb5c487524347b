"""The fused launch (simgpu/shader/jit/fused.py): a kernel without loops, whose code is all
native but for stores, runs each batch as one native call, every wave from its start to its end. It must
end exactly as the interpreter does (tests/support/tiers.py), with registers kept ("jit") and without
("jit-lean", from one workgroup's template): when waves would see each other's stores in another order,
when a store faults, when the watchdog's limit falls inside the batch; the batch is then undone and runs
in rounds. Each test also checks that the path it means to test was taken."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from simgpu.shader.dispatch import Dispatch
from simgpu.shader.engine import MAX_BATCH_WAVES, TICK
from simgpu.testbed import VMID
from tests import DATA
from tests.support import tiers

LEAN_AND_KEPT = pytest.mark.parametrize("tier", ["jit-lean", "jit"])

# Each item adds 1 to its word and stores it `shift` bytes further on (64 items per workgroup).
SHIFTED = """
    s_load_b64 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_lshl_b32 s6, s2, 8
    v_lshlrev_b32 v1, 2, v0
    v_add_nc_u32 v1, s6, v1
    global_load_b32 v2, v1, s[4:5]
    s_waitcnt vmcnt(0)
    v_add_nc_u32 v2, 1, v2
    global_store_b32 v1, v2, s[4:5] offset:{shift}
    s_endpgm
"""


def _pair(tier: str, watchdog: int = 50_000_000):
    return tiers.testbed("interpreter", watchdog=watchdog), tiers.testbed(tier, watchdog=watchdog)


def _shifted(tier: str, shift: int, groups: int = 4, launches: int = 1):
    pair = _pair(tier)
    outs = []
    for tb in pair:
        buf = tb.upload(np.arange(64 * groups + 64, dtype=np.uint32) * 3)
        k = tb.load_asm(SHIFTED.format(shift=shift), args=1, vgprs=8)
        for _ in range(launches):
            assert tiers.launch(tb, k, [buf], (groups,), (64,)) is None
        outs.append(tb.download(buf, np.uint32, 64 * groups + 64))
    tiers.assert_same(*pair)
    return outs[0], pair[1].engine.jit


@LEAN_AND_KEPT
def test_a_kernel_without_loops_runs_its_batches_fused(tier):
    got, jit = _shifted(tier, shift=0)
    assert np.array_equal(got[:256], np.arange(256, dtype=np.uint32) * 3 + 1)
    assert jit.stats.fused_batches == 1 and jit.stats.fused_aborts == 0 and jit.stats.rounds == 0


@LEAN_AND_KEPT
def test_a_wave_reading_what_an_earlier_wave_stored_sends_the_kernel_to_rounds(tier):
    # wave k loads the words wave k - 1 stores (128 bytes on): the interpreter loads them all before any
    # store, a fused batch would let wave k - 1 store first
    got, jit = _shifted(tier, shift=128, launches=2)
    first = np.arange(320, dtype=np.uint32) * 3
    once = first.copy()
    once[32:288] = first[:256] + 1
    twice = once.copy()
    twice[32:288] = once[:256] + 1
    assert np.array_equal(got, twice)
    assert jit.stats.fused_aborts == 1 and jit.stats.fused_batches == 0  # the second launch did not try
    assert jit.stats.rounds > 0


# s[4:5] the buffer, s[8:9] the same but 64 GiB further (unmapped) for workgroup {bad}; v1 the item's word
BAD_GROUP = """
    s_load_b64 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_cmp_eq_u32 s2, {bad}
    s_cselect_b32 s10, 16, 0
    s_add_u32 s8, s4, 0
    s_addc_u32 s9, s5, s10
    s_lshl_b32 s6, s2, 8
    v_lshlrev_b32 v1, 2, v0
    v_add_nc_u32 v1, s6, v1
"""


@LEAN_AND_KEPT
def test_a_store_that_faults_in_a_fused_batch_leaves_memory_as_the_interpreter_does(tier):
    # workgroup 3 stores 64 GiB past the buffer: the interpreter faults before any wave stores; the fused
    # batch had stored groups 0-2, and puts their words back
    body = BAD_GROUP.format(bad=3) + """
    v_add_nc_u32 v2, 7, v0
    global_store_b32 v1, v2, s[8:9]
    s_endpgm
    """
    pair = _pair(tier)
    faults = []
    for tb in pair:
        buf = tb.upload(np.full(256, 5, np.uint32))
        k = tb.load_asm(body, args=1, vgprs=8)
        faults.append(tiers.launch(tb, k, [buf], (4,), (64,)))
        assert np.array_equal(tb.download(buf, np.uint32, 256), np.full(256, 5, np.uint32))
    assert faults[0] is not None and faults[0] == faults[1]
    tiers.assert_same(*pair)
    assert pair[1].engine.jit.stats.fused_aborts == 1


@LEAN_AND_KEPT
def test_the_watchdog_inside_a_fused_batch_fires_at_the_interpreters_instruction(tier):
    pair = _pair(tier, watchdog=61)  # 8 waves of 10 instructions: the limit is in the seventh wave
    faults = []
    for tb in pair:
        buf = tb.upload(np.zeros(320, np.uint32))
        k = tb.load_asm(SHIFTED.format(shift=0), args=1, vgprs=8)
        faults.append(tiers.launch(tb, k, [buf], (4,), (64,)))
    assert faults[0] is not None and faults[0][0] == "watchdog" and faults[0] == faults[1]
    tiers.assert_same(*pair)
    assert pair[1].engine.jit.stats.fused_aborts == 1


@LEAN_AND_KEPT
def test_clang_saxpy_fuses_every_batch_and_progress_hooks_hear_of_it(tier):
    n = 2 * MAX_BATCH_WAVES * 32  # two batches of waves, each more than a TICK of wave-instructions
    rng = np.random.default_rng(3)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    pair, heard = _pair(tier), []
    for tb in pair:
        reports = []
        tb.engine.progress_hooks.append(reports.append)
        k = tb.load((DATA / "opencl" / "corpus.so").read_bytes())["saxpy"]
        vx, vy = tb.upload(x), tb.upload(y)
        tb.launch(k, [vy, vx, np.float32(2.5).view(np.uint32).item(), n], (n // 256,), (256,))
        heard.append(reports)
    tiers.assert_same(*pair)
    jit = pair[1].engine.jit
    assert jit.stats.fused_batches == 2 and jit.stats.fused_aborts == 0
    interpreted, fused = heard
    assert interpreted[-1] == fused[-1] and fused[-1].finished
    # a tick comes between waves once less than a wave's worth of the slice is left: never a TICK apart
    steps = np.diff([0] + [p.wave_instructions for p in fused])
    assert len(fused) > 2 and all(0 < s <= TICK for s in steps[:-1]), steps


def test_many_launches_each_with_new_buffers_keep_fusing():
    # every launch brings its own kernarg segment, a window each: the table must not fill up for good
    tb = tiers.testbed("jit-lean")
    k = tb.load_asm(SHIFTED.format(shift=0), args=1, vgprs=8)
    for _ in range(100):
        buf = tb.upload(np.zeros(320, np.uint32))
        tb.launch(k, [buf], (4,), (64,))
    assert tb.engine.jit.stats.fused_batches == 100 and tb.engine.jit.stats.fused_aborts == 0


# Item i (of `items`, or in reverse) loads word i + load / 4 and stores it + 1 at word i + store / 4,
# both past a 1 KiB margin: any overlap between waves' loads and stores, either direction.
OVERLAP = """
    s_load_b64 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_lshl_b32 s6, s2, 6
    v_add_nc_u32 v1, s6, v0
    {reverse}
    v_lshlrev_b32 v1, 2, v1
    v_add_nc_u32 v3, {load}, v1
    v_add_nc_u32 v4, {store}, v1
    global_load_b32 v2, v3, s[4:5]
    s_waitcnt vmcnt(0)
    v_add_nc_u32 v2, 1, v2
    global_store_b32 v4, v2, s[4:5]
    s_endpgm
"""


@settings(max_examples=40, deadline=None)
@given(load=st.integers(-256, 256), store=st.integers(-256, 256), reverse=st.booleans(),
       groups=st.integers(1, 4), tier=st.sampled_from(["jit-lean", "jit"]))
def test_fused_batches_end_as_the_interpreter_for_any_overlap(load, store, reverse, groups, tier):
    items = 64 * groups
    body = OVERLAP.format(load=1024 + 4 * load, store=1024 + 4 * store,
                          reverse=f"v_sub_nc_u32 v1, {items - 1}, v1" if reverse else "")
    pair = _pair(tier)
    for tb in pair:
        buf = tb.upload(np.arange(items + 640, dtype=np.uint32) * 5)
        k = tb.load_asm(body, args=1, vgprs=8)
        assert tiers.launch(tb, k, [buf], (groups,), (64,)) is None
    tiers.assert_same(*pair)
    stats = pair[1].engine.jit.stats
    assert stats.fused_batches + stats.fused_aborts == 1


def test_a_fused_launch_is_deterministic():
    runs = []
    for _ in range(2):
        tb = tiers.testbed("jit-lean")
        buf = tb.upload(np.arange(320, dtype=np.uint32))
        k = tb.load_asm(SHIFTED.format(shift=0), args=1, vgprs=8)
        tb.launch(k, [buf], (4,), (64,))
        runs.append((tb.phys.vram[:tb._next_pa].tobytes(), tb.engine.counters.snapshot(), tb.engine.clock.cycles))
    assert runs[0] == runs[1]


# Each item of a 2D grid of 8x8 workgroups stores x id + 1000 * y id + 10^6 * group x + 10^7 * group y.
GRID2D = """
    s_load_b64 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    s_mul_i32 s6, s3, {ngx}
    s_add_u32 s6, s6, s2
    s_lshl_b32 s6, s6, 6
    v_and_b32 v1, 0x3ff, v0
    v_bfe_u32 v2, v0, 10, 10
    v_lshl_add_u32 v3, v2, 3, v1
    v_add_nc_u32 v3, s6, v3
    v_lshlrev_b32 v3, 2, v3
    s_mul_i32 s7, s3, 10000000
    s_mul_i32 s8, s2, 1000000
    s_add_u32 s7, s7, s8
    v_mad_u32_u24 v4, v2, 1000, v1
    v_add_nc_u32 v4, s7, v4
    global_store_b32 v3, v4, s[4:5]
    s_endpgm
"""


def _grid2d_kernel(tb, wave32: bool):
    kd = make_descriptor(8, kernarg_size=8, workgroup_ids="xy", workitem_id_dims=2, wave32=wave32)
    meta = {".args": [{".name": "out", ".offset": 0, ".size": 8, ".value_kind": "by_value"}]}
    return tb.load(write_code_object([("k", assemble(GRID2D.format(ngx=3)), kd, meta)]))["k"]


@LEAN_AND_KEPT
@pytest.mark.parametrize("wave32", [True, False])
def test_workgroup_ids_in_x_and_y_come_from_the_template_in_wave32_and_wave64(tier, wave32):
    pair = _pair(tier)
    for tb in pair:
        out = tb.alloc(4 * 64 * 6)
        tb.launch(_grid2d_kernel(tb, wave32), [out], (3, 2), (8, 8))
    tiers.assert_same(*pair)
    got = pair[1].download(out, np.uint32, 64 * 6).reshape(2, 3, 8, 8)
    gy, gx, y, x = np.indices((2, 3, 8, 8))
    assert np.array_equal(got, x + 1000 * y + 1000000 * gx + 10000000 * gy)
    assert pair[1].engine.jit.stats.fused_batches == 1


def test_a_grid_ending_inside_a_workgroup_fuses_from_each_waves_own_registers():
    # 100 items of 64-item groups: the second group's last wave starts with no lanes, its first one with a
    # partial EXEC - not one template for every group, so each wave starts from the batch's own state
    pair = _pair("jit-lean")
    for tb in pair:
        buf = tb.upload(np.zeros(128, np.uint32))
        k = tb.load_asm(SHIFTED.format(shift=0), args=1, vgprs=8)
        kernarg = tb.alloc(256)
        tb.write(kernarg, np.array([buf], np.uint64).tobytes())
        desc = k.kernel.descriptor
        tb.engine.run(Dispatch(code_address=k.code_address, descriptor=desc, grid=(100, 1, 1), workgroup=(64, 1, 1),
                               kernarg_address=kernarg, group_segment_size=0, private_segment_size=0, vmid=VMID))
        got = tb.download(buf, np.uint32, 128)
        assert np.array_equal(got[:100], np.ones(100, np.uint32)) and not got[100:].any()
    tiers.assert_same(*pair)
    assert pair[1].engine.jit.stats.fused_batches == 1


@LEAN_AND_KEPT
@pytest.mark.parametrize("form", ["b8", "b16", "d16_hi_b8", "d16_hi_b16"])
def test_byte_and_short_stores_fuse_and_are_undone_exactly(tier, form):
    # every item stores a dword, then a byte or a short (its register's low or high half); workgroup 3's
    # dword goes 64 GiB past the buffer. The interpreter faults at the dword store before anything is
    # written; a fused batch had stored groups 0-2's dwords and bytes, and its undo log puts back every byte
    size = 1 if form.endswith("b8") else 2
    body = BAD_GROUP + f"""
    v_mul_u32_u24 v2, 0x10203, v0
    v_add_nc_u32 v2, 0x77665544, v2
    global_store_b32 v1, v2, s[8:9]
    s_lshl_b32 s7, s2, {6 + size - 1}
    v_mul_u32_u24 v3, {size}, v0
    v_add_nc_u32 v3, s7, v3
    v_add_nc_u32 v3, 3, v3
    global_store_{form} v3, v2, s[4:5] offset:1024
    s_endpgm
    """
    for bad in (3, 99):  # (99: no group faults, the batch fuses)
        pair = _pair(tier)
        faults = []
        for tb in pair:
            buf = tb.upload(np.arange(640, dtype=np.uint32) * 0x01010101)
            k = tb.load_asm(body.format(bad=bad), args=1, vgprs=8)
            faults.append(tiers.launch(tb, k, [buf], (4,), (64,)))
        assert faults[0] == faults[1] and (faults[0] is None) == (bad == 99)
        tiers.assert_same(*pair)
        stats = pair[1].engine.jit.stats
        assert (stats.fused_batches, stats.fused_aborts) == ((1, 0) if bad == 99 else (0, 1))
