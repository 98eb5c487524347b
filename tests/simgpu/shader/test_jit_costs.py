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


def test_the_compile_cost_takes_from_the_launch_only_the_take_up(monkeypatch):
    """A background compile runs in the worker (jit.remote): the launching thread loses only the take-up, the same
    in a process's first (jit.elfload loads without llvmlite: no LLVM start to pay); the code is ready after the
    worker's start (unless it runs), its translation and LLVM, and the take-up."""
    c = hc.HostCosts(translate=1e-4, llvm=1e-3, start=0.2, compiles=1, starts=1, take=1e-5, takes=1)
    monkeypatch.setattr(policy.worker, "running", lambda: False)
    taken, ready = policy.compile_cost(c, 100)
    assert (taken, ready) == pytest.approx((0.001, policy.SPAWN_GUESS + 0.11 + 0.001))  # (no worker start measured)
    c.spawn, c.spawns = 0.5, 1
    assert policy.compile_cost(c, 100)[1] == pytest.approx(0.5 + 0.11 + 0.001)
    monkeypatch.setattr(policy.worker, "running", lambda: True)
    taken, ready = policy.compile_cost(c, 100)
    assert (taken, ready) == pytest.approx((0.001, 0.111))
    unmeasured = hc.HostCosts(translate=1e-4, llvm=1e-3, start=0.2, compiles=1, starts=1)  # no take-up yet: a guess
    assert policy.take_cost(unmeasured, 100) == pytest.approx(100 * policy.TAKE_GUESS)


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
