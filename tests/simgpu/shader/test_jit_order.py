"""The JIT tier keeps the interpreter's order where waves can see each other: kernels written to race
(waves reading what other waves store, at different PCs, in loops with different trip counts), to
diverge around barriers, to fault in one wave while others pass the same instruction, and to run out
of the watchdog's budget inside a round. Both tiers must end alike, bit for bit
(tests/support/tiers.py); the tier must also have rolled waves back at least once where the kernel
was built to make it (rounds.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support import tiers


def _run(body: str, args_of, grid, block, vgprs: int = 16, lds: int = 0, watchdog: int = 50_000_000):
    pair = tiers.pair(watchdog=watchdog)
    results = []
    for tb in pair:
        args = args_of(tb)
        k = tb.load_asm(body, args=len(args), vgprs=vgprs, lds=lds)
        results.append(tiers.launch(tb, k, args, grid, block))
    assert results[0] == results[1], results
    tiers.assert_same(*pair)
    return results[1], pair[1].engine.jit.stats


def _buffer(tb, words: int = 4096):
    return tb.upload(np.arange(words, dtype=np.uint32) * 7 + 3)


# Odd workgroups store at once; even ones first spin (a loop whose trip count depends on the workgroup),
# then read what the odd ones stored and store it elsewhere: in the interpreter the odd waves' store
# (a lower PC) runs before the even waves leave their loop, so the reads see it.
RACE = """
    s_load_b64 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    s_and_b32 s6, s2, 1
    s_cmp_eq_u32 s6, 0
    s_cbranch_scc1 even
    v_add_nc_u32 v2, s2, v0
    global_store_b32 v1, v2, s[4:5]
    s_branch done
even:
    s_lshl_b32 s7, s2, 2
    s_add_u32 s7, s7, 3
spin:
    global_load_b32 v3, v1, s[4:5]
    v_add_nc_u32 v4, v3, v4
    s_add_u32 s7, s7, -1
    s_cmp_lg_u32 s7, 0
    s_cbranch_scc1 spin
    global_store_b32 v1, v4, s[4:5] offset:1024
done:
    s_endpgm
"""


def test_racing_waves_see_the_interpreters_order():
    _, stats = _run(RACE, lambda tb: [_buffer(tb)], (8,), (32,))
    assert stats.native_instructions > 0 and stats.reruns > 0


# Each wave loops (trip count from its lane data) storing its running sum every iteration; a wave
# that finishes early runs into a load of the location other waves keep storing to.
LOOP_STORES = """
    s_load_b64 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    s_and_b32 s6, s2, 7
    s_add_u32 s6, s6, 1
    v_mov_b32 v2, 0
again:
    v_add_nc_u32 v2, v2, s6
    global_store_b32 v1, v2, s[4:5]
    global_load_b32 v5, v1, s[4:5] offset:128
    v_add_nc_u32 v2, v2, v5
    s_add_u32 s6, s6, -1
    s_cmp_lg_u32 s6, 0
    s_cbranch_scc1 again
    global_load_b32 v6, v1, s[4:5]
    global_store_b32 v1, v6, s[4:5] offset:256
    s_endpgm
"""


def test_loops_with_stores_and_different_trip_counts():
    _, stats = _run(LOOP_STORES, lambda tb: [_buffer(tb)], (6,), (32,))
    assert stats.reruns > 0


# Waves of a workgroup branch apart around LDS writes and barriers.
LDS = """
    v_lshlrev_b32 v1, 2, v0
    v_and_b32 v2, 1, v0
    v_cmp_eq_u32 vcc_lo, 0, v2
    s_and_saveexec_b32 s6, vcc_lo
    ds_store_b32 v1, v0
    s_or_b32 exec_lo, exec_lo, s6
    s_barrier
    v_xor_b32 v3, 4, v1
    ds_load_b32 v4, v3
    v_add_nc_u32 v4, v4, v0
    ds_store_b32 v1, v4 offset:512
    s_barrier
    ds_load_b32 v5, v3 offset:512
    s_load_b64 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    global_store_b32 v1, v5, s[4:5]
    s_endpgm
"""


def test_lds_and_barriers_with_divergent_lanes():
    _run(LDS, lambda tb: [tb.alloc(4096)], (2,), (128,), lds=1024)


# Wave 3 of each workgroup reads an unmapped address at the third load; the others pass it.
FAULT = """
    s_load_b64 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    global_load_b32 v2, v1, s[4:5]
    v_add_nc_u32 v3, 0x100000, v1
    v_cmp_gt_u32 vcc_lo, 96, v0
    v_cndmask_b32 v3, v3, v1, vcc_lo
    global_load_b32 v4, v1, s[4:5] offset:4
    global_load_b32 v5, v3, s[4:5]
    v_add_nc_u32 v6, v5, v4
    global_store_b32 v1, v6, s[4:5] offset:2048
    s_endpgm
"""


def test_a_fault_in_one_wave_is_reported_like_the_interpreter():
    fault, stats = _run(FAULT, lambda tb: [_buffer(tb, 1024)], (2,), (128,))
    assert fault is not None and fault[0] == "page_fault"
    assert stats.reruns > 0  # the waves that ran past the faulting load were rolled back to it


SPIN = """
    s_mov_b32 s6, 0
loop:
    s_add_u32 s6, s6, 1
    v_add_nc_u32 v1, s6, v0
    s_cmp_lg_u32 s6, 0x7fffffff
    s_cbranch_scc1 loop
    s_endpgm
"""


@pytest.mark.parametrize("groups", [1, 3])
def test_the_watchdog_fires_at_the_same_instruction(groups):
    fault, stats = _run(SPIN, lambda tb: [], (groups,), (64,), watchdog=30_001)
    assert fault is not None and fault[0] == "watchdog"
    assert stats.budget_rollbacks == 1
