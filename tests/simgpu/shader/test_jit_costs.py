"""The payoff rule's compile costs are this host's, measured (simgpu/shader/jit/costs.py): a process's compiles
record them, a fresh process finds them in the disk cache, they are kept per CPU compiled for, and a host that
has measured nothing compiles nothing beside a launch (tests/simgpu/shader/test_jit_tier.py checks the rule's
decisions)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from simgpu.shader.jit import build, policy
from simgpu.shader.jit import costs as hc

ROOT = Path(__file__).resolve().parents[3]

# A fresh process compiles one kernel at its first dispatch, then prints what it (and the disk) knows.
COMPILE = """
import json
from simgpu.shader.jit import costs, jit_tier
from simgpu.testbed import Testbed
tb = Testbed(vram_size=1 << 24)
tb.engine.jit = jit_tier("eager")
k = tb.load_asm('''
    v_mov_b32 v1, 0
    s_mov_b32 s4, 100
loop:
    v_add_nc_u32 v1, v1, v0
    s_add_u32 s4, s4, -1
    s_cmp_lg_u32 s4, 0
    s_cbranch_scc1 loop
    s_endpgm
''', args=0, vgprs=8)
before = costs.current()
tb.launch(k, [], (1,), (32,))
print(json.dumps([before is None, tb.engine.jit.stats.compiles, costs.current().__dict__]))
"""
READ = "import json\nfrom simgpu.shader.jit import costs\nc = costs.current()\nprint(json.dumps(c and c.__dict__))"


def _run(script: str, cache: Path, cpu: str = "") -> object:
    env = {**os.environ, "SIMGPU_JIT_CACHE": str(cache), "SIMGPU_JIT_CPU": cpu, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
                         timeout=120)
    return json.loads(out.stdout.splitlines()[-1])


def test_a_compile_measures_the_host_and_a_fresh_process_finds_it(tmp_path):
    fresh, compiles, measured = _run(COMPILE, tmp_path)
    assert fresh and compiles == 1  # nothing known before: the rule would have compiled after the launch
    assert measured["compiles"] == 1 and measured["starts"] == 1
    assert measured["takes"] == 1 and measured["take"] > 0 and "prepare" not in measured
    assert measured["translate"] > 0 and measured["llvm"] > 0 and measured["start"] > 0
    # the start (imports, LLVM) dwarfs a 6-instruction kernel's translation
    assert measured["start"] > 6 * measured["translate"]
    assert _run(READ, tmp_path) == measured
    assert _run(READ, tmp_path, cpu="haswell") is None  # costs of code for another CPU: not measured yet


def test_figures_are_a_running_average_kept_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    hc.forget()
    try:
        assert hc.current() is None
        hc.record(100, translate=0.01, llvm=None, start=None)  # a disk hit: no LLVM, no start measured
        assert hc.current() is None
        hc.record(100, translate=0.01, llvm=0.1, start=0.2)
        first = hc.current()
        assert (first.translate, first.llvm, first.start) == pytest.approx((1e-4, 1e-3, 0.2))
        hc.record(100, translate=0.02, llvm=0.2, start=None)
        got = hc.current()
        w = hc.WEIGHT
        assert got.translate == pytest.approx((1 - w) * 1e-4 + w * 2e-4)
        assert got.llvm == pytest.approx((1 - w) * 1e-3 + w * 2e-3)
        assert got.start == pytest.approx(0.2) and got.compiles == 2 and got.starts == 1
        hc.forget()  # as a fresh process: the disk's figures
        assert hc.current() == got
    finally:
        hc.forget()


def test_the_compile_cost_takes_from_the_launch_the_take_up_and_the_workers_contention(monkeypatch):
    """A background compile runs in the worker (jit.remote): the launching thread loses the take-up, the same in a
    process's first (jit.elfload loads without llvmlite: no LLVM start to pay), and CONTENTION of the worker's CPU
    beside it on a free CPU (all of it with no CPU free: the worker then shares the launch's CPUs); the code is ready
    after the worker's start (unless it runs), its translation and LLVM, and the take-up."""
    c = hc.HostCosts(translate=1e-4, llvm=1e-3, start=0.2, compiles=1, starts=1, take=1e-5, takes=1)
    monkeypatch.setattr(policy.worker, "running", lambda: False)
    worker_cpu = policy.SPAWN_GUESS + 0.11  # (no worker start measured)
    taken, ready = policy.compile_cost(c, 100)
    assert (taken, ready) == pytest.approx((0.001 + policy.CONTENTION * worker_cpu, worker_cpu + 0.001))
    assert policy.compile_cost(c, 100, free=False)[0] == pytest.approx(0.001 + worker_cpu)
    c.spawn, c.spawns = 0.5, 1
    assert policy.compile_cost(c, 100)[1] == pytest.approx(0.5 + 0.11 + 0.001)
    monkeypatch.setattr(policy.worker, "running", lambda: True)
    taken, ready = policy.compile_cost(c, 100)
    assert (taken, ready) == pytest.approx((0.001 + policy.CONTENTION * 0.11, 0.111))
    unmeasured = hc.HostCosts(translate=1e-4, llvm=1e-3, start=0.2, compiles=1, starts=1)  # no take-up yet: a guess
    assert policy.take_cost(unmeasured, 100) == pytest.approx(100 * policy.TAKE_GUESS)


class _Dispatch:
    """What the payoff rule reads of a dispatch (TierExec): `total` workgroups of 8 waves of 32 lanes, `batch` of them
    a batch, `before` of them run."""

    def __init__(self, total: int, batch: int, before: int):
        self.batch_count, self.waves_per_group, self.lanes, self.groups_before = batch, 8, 32, before
        self.total = total

    def group_count(self) -> int:
        return self.total


# bench_jit's host matmul as a quiet host measured it: 66 reachable instructions, LLVM 3.6 ms each, the worker's start
MATMUL_HOST = hc.HostCosts(translate=1.3e-4, llvm=3.6e-3, start=0.05, compiles=2, starts=2, spawn=0.49, spawns=1,
                           take=1.2e-5, takes=2)


@pytest.mark.parametrize("case, running, one_batch, now, stale, beside", [
    ("batches, a launch too short for the code to arrive: after it, though it has run LONG_DISPATCH", False, False,
     0.305, False, False),
    ("batches, the worker running and the compile quick: beside it", True, False, 0.305, False, True),
    ("the batch under way three times as long as the last, but shorter than the worker's part: after it", False,
     False, 0.36, True, False),
    ("the batch under way far longer than the last and the dispatch longer than the worker's part: beside it", False,
     False, 0.80, True, True),
    ("one batch, shorter than the worker's part (0.74 s): after it", False, True, 0.305, True, False),
    ("one batch, longer than the worker's part: beside it", False, True, 0.80, True, True)])
def test_a_long_dispatch_compiles_beside_itself_only_once_the_code_could_arrive(case, running, one_batch, now, stale,
                                                                                beside, monkeypatch):
    """Issue 29: a dispatch that had run LONG_DISPATCH compiled beside itself whenever a CPU was free, and a 0.6 s
    matmul launch (one batch) then paid the worker's contention for code that arrived after it. Now the payoff rule
    decides where the dispatch's batches tell what is ahead; a dispatch without (one batch, or a batch that runs far
    longer than the last: a hang, say) compiles beside itself once it has also run as long as the worker's part."""
    monkeypatch.setenv("SIMGPU_JIT_BACKGROUND", "auto")
    monkeypatch.setattr(policy, "core_free", lambda: True)
    monkeypatch.setattr(policy.hc, "current", lambda: MATMUL_HOST)
    monkeypatch.setattr(policy.worker, "running", lambda: running)
    if running:
        monkeypatch.setattr(policy.hc, "current", lambda: hc.HostCosts(**{**MATMUL_HOST.__dict__, "llvm": 1e-4}))
    # 1024 workgroups in batches of 32 (8192 lanes), 20 ms each: 15 batches ended, the 16th started at 0.30 s
    ex = _Dispatch(1024, 1024 if one_batch else 32, 0 if one_batch else 15 * 32)
    p = policy.CompilePolicy("hot", ex, None, None)
    p.dispatch_started = 0.0
    p.batch_starts = [0.0] if one_batch else [0.02 * k for k in range(16)]
    p._walked = types.SimpleNamespace(found=dict.fromkeys(range(66)))
    assert p._measured(now) is not stale
    assert p._pays_now(now) is beside, case


def test_take_ups_are_a_running_average_too(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))
    hc.forget()
    try:
        hc.record(100, translate=0.01, llvm=0.1, start=0.2)
        hc.record_take(100, take=0.002)
        hc.record_take(100, take=0.004)
        got = hc.current()
        assert got.takes == 2
        assert got.take == pytest.approx((1 - hc.WEIGHT) * 2e-5 + hc.WEIGHT * 4e-5)
        hc.forget()
        assert hc.current() == got
    finally:
        hc.forget()


def test_a_translate_module_another_thread_is_still_importing_is_not_loaded(monkeypatch):
    """The JIT's thread imports jit.translate at a process's first compile while the launching thread asks whether
    the translators are loaded: sys.modules holds the module, partly initialised, from the start of its import (a
    suite run failed with "partially initialized module ... has no attribute 'translators_loaded'")."""
    monkeypatch.setitem(sys.modules, build.TRANSLATE, types.ModuleType(build.TRANSLATE))
    assert build.translators_loaded() is False
