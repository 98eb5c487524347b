"""The JIT tier's life cycle: SIMGPU_JIT modes, compiling when hot (LLVM in a background thread), the
memory and disk caches keyed by the code's bytes, a kernel whose code changed, compiled code outliving
or not its region."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from simgpu.shader.jit import build, jit_mode, jit_tier, policy, worker
from simgpu.shader.jit import costs as hc
from simgpu.shader.state import DONE
from simgpu.shader.tier_exec import TierExec
from simgpu.testbed import VMID, Testbed

LOOP = """
    s_load_b64 s[4:5], s[0:1], 0x0
    v_mov_b32 v1, 0
    s_mov_b32 s6, {n}
loop:
    v_add_nc_u32 v1, v1, v0
    s_add_u32 s6, s6, -1
    s_cmp_lg_u32 s6, 0
    s_cbranch_scc1 loop
    v_lshlrev_b32 v2, 2, v0
    s_waitcnt lgkmcnt(0)
    global_store_b32 v2, v1, s[4:5]
    s_endpgm
"""


def _want(n: int) -> np.ndarray:
    """What LOOP leaves: both workgroups store lane * n to the first 32 words."""
    return np.concatenate([np.arange(32) * n, np.zeros(32)]).astype(np.uint32)


def _run(tb: Testbed, n: int = 50, text: str = LOOP):
    k = tb.load_asm(text.format(n=n), args=1, vgprs=8)
    out = tb.alloc(4 * 64)
    tb.launch(k, [out], (2,), (32,))
    return tb.download(out, np.uint32, 64)


def test_modes_from_the_environment(monkeypatch):
    for value, want in (("0", "off"), ("off", "off"), ("eager", "eager"), ("1", "hot"), ("", "hot")):
        monkeypatch.setenv("SIMGPU_JIT", value)
        assert jit_mode() == want
    monkeypatch.setenv("SIMGPU_JIT", "0")
    assert Testbed(vram_size=1 << 26).engine.jit is None


def _compile_pending(tb: Testbed):
    """The background compile the tier has going for some kernel, or None."""
    return next((k.future for k in tb.engine.jit.kernels.values() if k.future is not None), None)


def test_a_kernel_is_compiled_once_hot_and_results_do_not_change(monkeypatch, tmp_path):
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("SIMGPU_JIT_HOT", "1")  # 1 ms of interpreter time
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("hot")
    want = _want(2000)
    k = tb.load_asm(LOOP.format(n=2000), args=1, vgprs=8)  # one code address: one kernel for the tier
    out = tb.alloc(4 * 64)

    def run():
        tb.launch(k, [out], (2,), (32,))
        return tb.download(out, np.uint32, 64)
    for _ in range(200):
        assert np.array_equal(run(), want)
        pending = _compile_pending(tb)
        if pending is not None:
            pending.result(timeout=120)  # the background compile (slow on a busy CI)
            break
    assert np.array_equal(run(), want)
    stats = tb.engine.jit.stats
    assert stats.compiles == 1 and stats.native_instructions > 0 and not stats.failures


def _hot_loop(n: int):
    """LOOP(n) on a Testbed with the hot JIT tier: (the kernel's tier state, tier stats, run(): one launch whose
    result is checked against numpy's)."""
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("hot")
    k = tb.load_asm(LOOP.format(n=n), args=1, vgprs=8)
    out = tb.alloc(4 * 64)

    def run():
        tb.launch(k, [out], (2,), (32,))
        assert np.array_equal(tb.download(out, np.uint32, 64), _want(n))
    return tb.engine.jit.kernel((VMID, k.code_address)), tb.engine.jit.stats, run


def _run_until_compiling(state, run, other_than=None):
    """Launch until the kernel has a compile under way (not `other_than`); that compile's future."""
    for _ in range(200):
        run()
        if state.future is not None and state.future is not other_than:
            return state.future
    raise AssertionError("the kernel never got hot")


STRAIGHT = """
    s_load_b64 s[4:5], s[0:1], 0x0
    v_mov_b32 v1, 0
""" + "    v_add_nc_u32 v1, v1, v0\n" * 60 + """
    v_lshlrev_b32 v2, 2, v0
    s_waitcnt lgkmcnt(0)
    global_store_b32 v2, v1, s[4:5]
    s_endpgm
"""


def test_a_kernel_of_one_short_batch_gets_hot(monkeypatch, tmp_path):
    """A kernel without branches runs a dispatch of one workgroup in one batch of a step or two: its interpreter
    time is counted when the dispatch ends, so it gets hot like any other. (Counted only every 32 steps and at a
    batch's start, it was not counted at all: an MLP training step's weight updates were never compiled.)"""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("SIMGPU_JIT_HOT", "1")
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("hot")
    k = tb.load_asm(STRAIGHT, args=1, vgprs=8)
    out = tb.alloc(4 * 64)
    state = tb.engine.jit.kernel((VMID, k.code_address))
    launches = 0
    while state.future is None and state.compiled is None and launches < 3:
        tb.launch(k, [out], (1,), (32,))  # one workgroup: one batch, checked only at its start
        assert np.array_equal(tb.download(out, np.uint32, 64), _want(60))
        launches += 1
    assert state.future is not None or state.compiled is not None, f"not hot after {launches} launches"
    # (counted only at the batch's start, from the dispatch's start, it took 22 launches of 1-2 ms: what the
    # batch's setup took, not its instructions)


def test_a_dropped_compile_is_cancelled_and_the_kernel_compiles_again_once_hot(monkeypatch, tmp_path):
    """drop_queued_compiles (what tests/conftest.py does after each test) cancels a compile still queued behind
    another; the kernel keeps running in the interpreter with the same results, and is compiled when hot again."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("SIMGPU_JIT_HOT", "1")
    build.drop_queued_compiles()
    build._POOL = build._pool("simgpu-jit")
    gate = threading.Event()
    blocker = build._POOL.submit(gate.wait, 120)  # the JIT thread is busy: the next compile waits in the queue
    state, stats, run = _hot_loop(1998)
    queued = _run_until_compiling(state, run)
    assert not queued.done()
    build.drop_queued_compiles()
    gate.set()
    blocker.result(timeout=120)
    assert queued.cancelled()
    _run_until_compiling(state, run, other_than=queued).result(timeout=120)
    run()
    assert state.compiled is not None and stats.compiles == 1


def test_a_hot_kernel_is_translated_and_compiled_in_the_worker_process(monkeypatch, tmp_path):
    """The launching thread only walks the kernel's code; translation to IR and LLVM run in the JIT's worker
    process (jit.remote: the launching process runs no translation Python, which would hold the GIL its launch
    needs), a background thread of this process waits for the reply, and a launch loads the code; no launch waits
    for a compile."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("SIMGPU_JIT_HOT", "1")
    translated_here, asked = [], []
    build._COMPILED.clear()  # nothing from the memory cache: this region goes through LLVM
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("hot")
    k = tb.load_asm(LOOP.format(n=1999), args=1, vgprs=8)
    real_translate, real_ask = build._translate, worker.translate

    def translate_spy(src):
        if src.base == k.code_address:  # (compiles of earlier tests' kernels may still be running)
            translated_here.append(threading.current_thread().name)
        return real_translate(src)

    def ask_spy(message, cancelled=None):
        reply = real_ask(message, cancelled)
        if message["source"]["base"] == k.code_address:
            asked.append((threading.current_thread() is threading.main_thread(), worker._WORKER.proc.pid))
        return reply
    monkeypatch.setattr(build, "_translate", translate_spy)
    monkeypatch.setattr(worker, "translate", ask_spy)
    out = tb.alloc(4 * 64)
    state = tb.engine.jit.kernel((VMID, k.code_address))
    for _ in range(200):
        tb.launch(k, [out], (2,), (32,))
        if state.future is not None or state.compiled is not None:
            if state.future is not None:
                state.future.result(timeout=120)
            break
    assert translated_here == []
    assert len(asked) == 1 and asked[0][0] is False and asked[0][1] != os.getpid()
    tb.launch(k, [out], (2,), (32,))
    assert np.array_equal(tb.download(out, np.uint32, 64), _want(1999))
    assert state.compiled is not None and tb.engine.jit.stats.native_instructions > 0


def test_a_compile_under_way_is_ended_when_dropped_and_the_kernel_compiles_again(monkeypatch, tmp_path):
    """drop_queued_compiles ends the worker process in the middle of LLVM's work: the kernel's compile ends in
    CompileDropped, not a failure, and the next time the kernel is hot a new worker compiles it."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("SIMGPU_JIT_HOT", "1")
    build._COMPILED.clear()
    state, stats, run = _hot_loop(1997)
    in_llvm, release = threading.Event(), threading.Event()
    real_read = worker._read

    def slow_read(stream):  # the request is in the worker; its reply is read once the test has dropped it
        if worker._WORKER is not None and worker._WORKER.started:  # (else: the worker says it is ready)
            in_llvm.set()
            release.wait(60)
        return real_read(stream)
    monkeypatch.setattr(worker, "_read", slow_read)
    first = _run_until_compiling(state, run)
    assert in_llvm.wait(60) and worker.busy()
    monkeypatch.setattr(worker, "_read", real_read)
    build.drop_queued_compiles()
    release.set()
    with pytest.raises(worker.CompileDropped):
        first.result(timeout=120)
    run()
    assert state.failed is None and not stats.failures
    for _ in range(200):  # hot again: a new compile, which a launch takes up once it is done (it may be done
        if state.compiled is not None:  # before this loop looks: a fast machine or a disk cache hit)
            break
        if state.future is not None and state.future is not first:
            state.future.result(timeout=120)
        run()
    run()
    assert state.compiled is not None


# (a worker's start measured too: else the rule counts SPAWN_GUESS, 0.45 s, whenever no worker runs -- when an earlier
# test of the process stopped it -- and the "beside" case below needed a launch longer than that)
MEASURED = hc.HostCosts(translate=1e-6, llvm=1e-5, start=0.0, compiles=1, starts=1, spawn=1e-3, spawns=1)


@pytest.mark.parametrize("background, groups, free, payoff, long, costs, beside", [
    ("now", 2, False, 4, 1e9, None, True), ("after", 256, True, 0, 0, MEASURED, False),  # the environment decides
    ("auto", 256, True, 0, 1e9, MEASURED, True),  # a CPU free, large batches, the launch long enough: beside it
    ("auto", 256, False, 0, 1e9, MEASURED, False),  # no CPU free
    ("auto", 2, True, 0, 1e9, MEASURED, False),  # a batch of 2 waves: its interpretation holds the GIL all the time
    ("auto", 256, True, 1e9, 1e9, MEASURED, False),  # the launch is too short for the compile to pay
    ("auto", 256, True, 0, 1e9, None, False),  # this host has never measured a compile
    ("auto", 256, True, 0.001, 1e9, hc.HostCosts(1.0, 1.0, 1.0, 1, 1), False),  # this host compiles slowly
    ("auto", 2, False, 1e9, 0, None, True),  # none of that holds, but the dispatch has run long (a hang, say)
    # run long, but no CPU free for the worker and its compile would take longer than the dispatch has run
    ("auto", 2, False, 1e9, 0, hc.HostCosts(1.0, 1.0, 1.0, 1, 1), False)])
def test_a_hot_kernel_is_compiled_beside_its_launch_only_when_that_pays(monkeypatch, tmp_path, background, groups,
                                                                         free, payoff, long, costs, beside):
    """A kernel that gets hot is compiled beside its launch (in the background, while the dispatch goes on)
    or once a launch of it ends (CompilePolicy.end; from its second launch on), so the launch runs as the interpreter
    alone would. The compile's
    costs are the host's, measured (costs.py): none measured yet, or a compile too slow for what the launch
    has ahead, and it waits for the launch's end."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    monkeypatch.setenv("SIMGPU_JIT_HOT", "1")
    monkeypatch.setenv("SIMGPU_JIT_BACKGROUND", background)
    monkeypatch.setattr(policy, "core_free", lambda: free)
    monkeypatch.setattr(policy, "PAYOFF", payoff)
    monkeypatch.setattr(policy, "LONG_DISPATCH", long)
    monkeypatch.setattr(policy.hc, "current", lambda: costs)
    submitted = []  # whether the dispatch still had waves running when its compile started
    real = policy.CompilePolicy._compile
    monkeypatch.setattr(policy.CompilePolicy, "_compile", lambda self, sync, source=None: (
        submitted.append(bool((self.ex.st.status != DONE).any())), real(self, sync, source))[1])
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("hot")
    trips = 20000 if groups == 2 else 1000
    k = tb.load_asm(LOOP.format(n=trips), args=1, vgprs=8)
    out = tb.alloc(4 * 64)
    tb.launch(k, [out], (groups,), (32,))  # hot within the dispatch
    state = tb.engine.jit.kernel((VMID, k.code_address))
    if beside:
        assert submitted == [True] and not state.deferred
    else:  # after a launch ends, from the kernel's second launch on (one launch is no sign of another)
        assert submitted == [] and state.deferred and state.future is None
        tb.launch(k, [out], (groups,), (32,))
        assert submitted == [False] and not state.deferred and state.future is not None
        assert tb.engine.jit.stats.native_instructions == 0
    if state.future is not None:
        state.future.result(timeout=120)
    tb.launch(k, [out], (groups,), (32,))
    assert tb.engine.jit.stats.native_instructions > 0
    assert np.array_equal(tb.download(out, np.uint32, 64), _want(trips))


def _drain_background_compiles() -> None:
    """Wait for hot compiles an earlier test of this process started: they read $SIMGPU_JIT_CACHE when they
    run, and would write into a directory a test counts the files of."""
    if build._POOL is not None:
        build._POOL.submit(lambda: None).result()  # one worker: runs after everything queued before it


def test_the_disk_cache_serves_a_fresh_process_and_new_code_is_compiled(monkeypatch, tmp_path):
    _drain_background_compiles()
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("eager")
    _run(tb)
    assert tb.engine.jit.stats.compiles == 1 and tb.engine.jit.stats.disk_hits == 0
    assert len(list(tmp_path.glob("*.msgpack"))) == 1
    build._COMPILED.clear()  # as if a new process: only the disk cache knows the kernel
    tb2 = Testbed(vram_size=1 << 26)
    tb2.engine.jit = jit_tier("eager")
    _run(tb2)
    assert tb2.engine.jit.stats.disk_hits == 1
    _run(tb2, 51)  # other code bytes: another region
    assert tb2.engine.jit.stats.compiles == 2 and len(list(tmp_path.glob("*.msgpack"))) == 2


def test_the_tier_is_handed_a_dispatch_with_every_member_tier_exec_names(monkeypatch):
    """JitTier.begin gets the engine's Exec, which has all TierExec names (the tier uses nothing else of it)."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    tb = Testbed(vram_size=1 << 26)
    tier = tb.engine.jit = jit_tier("eager")
    seen, begin = [], tier.begin
    tier.begin = lambda ex: (seen.append(ex), begin(ex))[1]
    assert np.array_equal(_run(tb, 5), _want(5))
    assert len(seen) == 1 and isinstance(seen[0], TierExec) and tier.stats.native_instructions > 0


def test_code_rewritten_in_place_is_not_run_from_the_old_compile(monkeypatch):
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("eager")
    k = tb.load_asm(LOOP.format(n=10), args=1, vgprs=8)
    out = tb.alloc(4 * 64)
    tb.launch(k, [out], (2,), (32,))
    first = tb.download(out, np.uint32, 64)
    patched = tb.load_asm(LOOP.format(n=20), args=1, vgprs=8)  # same layout, another loop count
    tb.write(k.code_address, tb.read(patched.code_address, 64))
    tb.launch(k, [out], (2,), (32,))
    assert np.array_equal(tb.download(out, np.uint32, 64), first * 2)


def test_compiled_code_is_freed_with_its_region(monkeypatch, rounds=3):
    """Each region owns its execution engine (and the engine its target machine): dropping regions and
    compiling more must not touch freed LLVM objects."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    for i in range(rounds):
        build._COMPILED.clear()
        tb = Testbed(vram_size=1 << 26)
        tb.engine.jit = jit_tier("eager")
        _run(tb, 30 + i)
        del tb
        gc.collect()
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("eager")
    assert np.array_equal(_run(tb, 7), _want(7))


def test_a_process_exits_without_running_the_compiles_still_queued():
    """Queued background compiles are dropped at exit (Python joins pool threads first): 40 half-second jobs
    queued behind one would hold the process 20 s; only the job under way finishes."""
    script = ("import time\nfrom simgpu.shader.jit import build\npool = build._pool('t')\n"
              "for _ in range(41):\n    pool.submit(time.sleep, 0.5)\n")
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert time.monotonic() - start < 10


def test_a_kernel_larger_than_the_limit_stays_in_the_interpreter(monkeypatch):
    """LLVM's time grows faster than the code (and llvmlite's one lock holds the process's other LLVM calls
    meanwhile): a kernel of more than MAX_REGION_INSNS reachable instructions is never compiled."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    monkeypatch.setattr(build, "MAX_REGION_INSNS", 5)  # LOOP has 12
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = jit_tier("eager")
    assert np.array_equal(_run(tb, 30), _want(30))
    assert tb.engine.jit.stats.native_instructions == 0 and tb.engine.jit.stats.compiles == 0
    monkeypatch.setattr(build, "MAX_REGION_INSNS", 2000)
    tb2 = Testbed(vram_size=1 << 26)
    tb2.engine.jit = jit_tier("eager")
    assert np.array_equal(_run(tb2, 30), _want(30))
    assert tb2.engine.jit.stats.native_instructions > 0
