"""The JIT tier keeps the engine's budget slices (simgpu.shader.engine.TICK): over native code the
watchdog fires at the interpreter's instruction, the owner's deadline stops the dispatch, progress hooks
hear of it every slice, Ctrl-C (KeyboardInterrupt, from a hook or a signal) stops it and the next
dispatch runs clean; a profiler observer or a sanitizer sends the dispatch to the interpreter."""

from __future__ import annotations

import time

import numpy as np
import pytest

from simgpu.shader.engine import TICK
from simgpu.shader.jit import jit_tier
from simgpu.testbed import Testbed
from tests.support import tiers

# Every lane counts to s6's trip count, then stores its sum: about 4 wave-instructions per trip.
LOOP = """
    s_load_b64 s[4:5], s[0:1], 0x0
    s_load_b32 s6, s[0:1], 0x8
    s_waitcnt lgkmcnt(0)
    v_mov_b32 v1, 0
loop:
    v_add_nc_u32 v1, v1, v0
    s_add_u32 s6, s6, -1
    s_cmp_lg_u32 s6, 0
    s_cbranch_scc1 loop
    v_lshlrev_b32 v2, 2, v0
    global_store_b32 v2, v1, s[4:5]
    s_endpgm
"""


def _loop(tb, trips: int):
    out = tb.alloc(4 * 256)
    return tb.load_asm(LOOP, args=2, vgprs=8), [out, trips]


@pytest.mark.parametrize("groups", [1, 2])
def test_the_watchdog_fires_at_the_interpreters_instruction_past_many_slices(groups):
    # slices of native code before the limit; one wave (kept to the instruction) and several (rolled back)
    watchdog = 2 * TICK + 17
    pair = tiers.pair(watchdog=watchdog)
    faults = []
    for tb in pair:
        k, args = _loop(tb, 1 << 30)
        faults.append(tiers.launch(tb, k, args, (groups,), (32,)))
    assert faults[0] is not None and faults[0][0] == "watchdog"
    assert faults[0] == faults[1]
    tiers.assert_same(*pair)
    stats = pair[1].engine.jit.stats
    if groups == 1:  # a lone wave keeps what it ran natively; the interpreter finds the last few
        assert stats.native_instructions > TICK and stats.budget_rollbacks == 0
    else:  # the limit fell inside a round of several waves: the interpreter ran it again from its start
        assert stats.budget_rollbacks == 1


def test_progress_hooks_hear_of_native_code_every_slice():
    pair = tiers.pair()
    reports = []
    for tb in pair:
        seen = []
        tb.engine.progress_hooks.append(seen.append)
        k, args = _loop(tb, 25_000)  # 2 waves x 4 x 25,000: about 3 slices
        assert tiers.launch(tb, k, args, (1,), (64,)) is None
        reports.append(seen)
    tiers.assert_same(*pair)
    interp, jit = reports
    assert jit[-1].finished and jit[-1].wave_instructions == interp[-1].wave_instructions
    during = [p.wave_instructions for p in jit if not p.finished]
    assert len(during) >= 2  # one report per slice, as in the interpreter
    assert during == sorted(during) and during[-1] < jit[-1].wave_instructions


def test_the_deadline_stops_native_code():
    tb = tiers.testbed("jit", watchdog=1 << 50)  # the deadline comes first
    k, args = _loop(tb, 1 << 30)
    tb.engine.deadline = (time.monotonic() + 0.2, "watchdog", "wall-clock limit")
    t0 = time.monotonic()
    fault = tiers.launch(tb, k, args, (2,), (32,))
    assert fault is not None and fault[0] == "watchdog" and "wall-clock limit" in fault[1]
    assert time.monotonic() - t0 < 10
    assert tb.engine.jit.stats.budget_rollbacks == 0  # stopped in native code, at a tick


def test_ctrl_c_in_native_code_stops_the_dispatch_and_the_next_one_runs_clean():
    tb = tiers.testbed("jit")
    k, args = _loop(tb, 1 << 30)

    def interrupt(p):
        if p.wave_instructions > 3 * TICK and not p.finished:
            raise KeyboardInterrupt

    tb.engine.progress_hooks.append(interrupt)
    with pytest.raises(KeyboardInterrupt):
        tb.launch(k, args, (2,), (32,))
    tb.engine.progress_hooks.clear()
    k2, args2 = _loop(tb, 3)
    tb.launch(k2, args2, (1,), (32,))
    lanes = np.arange(32, dtype=np.uint32)
    assert np.array_equal(np.frombuffer(tb.read(args2[0], 4 * 32), np.uint32), 3 * lanes)


class _Watcher:
    """A profiler observer that counts what it is shown."""

    def __init__(self):
        self.shown = 0

    def batch_start(self, ex):
        pass

    def batch_end(self, ex):
        pass

    def before(self, ex, w, *pc_inst):
        self.shown += len(w)

    def after(self, *args):
        pass


@pytest.mark.parametrize("watch", ["observer", "sanitizer"])
def test_an_observer_or_a_sanitizer_runs_the_dispatch_in_the_interpreter(watch):
    tb = Testbed(vram_size=1 << 28, sanitize="memcheck" if watch == "sanitizer" else "")
    tb.engine.jit = jit_tier("eager")
    watcher = tb.engine.observer = _Watcher() if watch == "observer" else None
    k, args = _loop(tb, 1000)
    tb.launch(k, args, (2,), (32,))
    assert tb.engine.jit.stats.native_instructions == 0 and tb.engine.jit.stats.rounds == 0
    if watcher is not None:
        assert watcher.shown == tb.engine.counters.wave_instructions
    tb.engine.observer = tb.engine.sanitizer = None  # then the JIT tier runs it
    tb.launch(k, args, (2,), (32,))
    assert tb.engine.jit.stats.native_instructions > 2 * 4 * 1000
