"""runtime.Device.profile and SIMGPU_PROFILE: counters per kernel through the driver seam (PM4 and AQL queues give
the same counts), the summary table, and the Perfetto export of a profiled matmul (valid Chrome trace JSON with a
track per wave)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import runtime
from compiler.samples import corpus
from compiler.samples.workloads import MATMUL
from mockgpu import MockOS
from runtime.profile_export import perfetto
from tests import DATA

KERNELS = {k.name: k for k in corpus()}


def launcher(dev, k):
    kern = dev.load(k.code_object())[k.name]
    args = k.inputs(np.random.default_rng(0))
    bufs = [dev.alloc(a.nbytes).copyin(a) if isinstance(a, np.ndarray) else a for a in args]
    return lambda: kern(*bufs, grid=k.grid, block=k.block)


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_device_profile_counts_every_modelled_counter(queue):
    with runtime.Device(queue=queue) as dev:
        prof = dev.profile(launcher(dev, KERNELS["divergent_loop"]))
    (rec,) = prof.kernels
    assert set(rec.counters) == set(runtime.profile.ALL_COUNTERS)
    assert rec.counters["SQ_WAVES"] == 8 and rec.counters["SQ_INSTS_BRANCH"] > 0
    assert rec.end > rec.start
    table = prof.table()
    assert "divergent_loop" in table and "VALU%" in table


def test_pm4_and_aql_count_the_same():
    counts = {}
    for queue in ("pm4", "aql"):
        with runtime.Device(queue=queue) as dev:
            fn = launcher(dev, KERNELS["lds_reduce"])
            rec = dev.profile(fn, counters=runtime.profile.DEFAULT_COUNTERS).kernels[0]
        counts[queue] = {k: v for k, v in rec.counters.items() if not k.startswith("GRBM")}
    assert counts["pm4"] == counts["aql"] and counts["pm4"]["SQ_INSTS_LDS"] > 0


def test_perfetto_export_of_a_profiled_matmul_has_a_track_per_wave():
    with runtime.Device() as dev:
        prof = dev.profile(launcher(dev, MATMUL), counters=["SQ_WAVES", "SQ_INSTS_VALU"], sqtt=True)
    doc = json.loads(json.dumps(perfetto(prof.kernels)))  # valid JSON, round trip
    events = doc["traceEvents"]
    for e in events:
        assert e["ph"] in ("X", "C", "M") and isinstance(e["pid"], int)
        if e["ph"] == "X":
            assert e["dur"] > 0 and e["ts"] >= 0
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert [e["name"] for e in kernels] == ["matmul"] and kernels[0]["args"]["SQ_WAVES"] == 2048
    wave_tracks = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name" and "wave" in e["args"]["name"]]
    assert len(wave_tracks) >= 2048 // 6  # every wave of SE 0 at least
    insts = [e for e in events if e.get("cat") == "instruction"]
    assert any(e["name"].startswith("v_") for e in insts) and any(e["name"].startswith("s_cbranch") for e in insts)
    assert any(e["ph"] == "C" and e["name"] == "SQ_INSTS_VALU" for e in events)


def test_simgpu_profile_environment_prints_the_summary(tmp_path):
    script = tmp_path / "app.py"
    script.write_text(
        "import numpy as np, runtime\n"
        "from compiler.samples import corpus\n"
        "k = {s.name: s for s in corpus()}['fadd_float32']\n"
        "dev = runtime.Device()\n"
        "kern = dev.load(k.code_object())[k.name]\n"
        "args = [dev.alloc(a.nbytes).copyin(a) for a in k.inputs(np.random.default_rng(0))]\n"
        "kern(*args, grid=k.grid, block=k.block)\n")
    out = tmp_path / "p.json"
    env = dict(os.environ, MOCKGPU="1", SIMGPU_PROFILE="1", SIMGPU_SQTT="1", SIMGPU_PROFILE_OUT=str(out),
               PYTHONPATH=os.getcwd())
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "fadd_float32" in r.stdout and "SQ_WAVES" not in r.stdout and "waves" in r.stdout
    assert json.loads(out.read_text())["traceEvents"]


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_a_gfx942_counts_through_gfx9s_registers(queue):
    """On gfx942 the profiler programs gfx9's counters (simgpu.hw.perfmon_gfx9_pm4): every counter gfx942 has a select
    for, equal to the engine's statistics for clang-19's gfx942 saxpy; gfx9's thread trace is not collected here."""
    with runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 28, arch="gfx942")) as dev:
        kern = dev.load((DATA / "opencl" / "corpus_gfx942.so").read_bytes())["saxpy"]
        y, x = dev.alloc(4096).copyin(np.zeros(1024, np.float32)), dev.alloc(4096).copyin(np.ones(1024, np.float32))
        engine = dev.os.nodes[0].gpu.engine
        before = engine.counters.wave_instructions
        prof = dev.profile(lambda: kern(y, x, 0x40200000, 1000, grid=(4,), block=(256,)))
        (rec,) = prof.kernels
        assert set(rec.counters) == set(runtime.profile.GFX9_COUNTERS)
        assert rec.counters["SQ_WAVES"] == 16  # 4 workgroups of 4 wave64s
        passes = len(runtime.profile.passes(runtime.profile.GFX9_COUNTERS))
        assert rec.counters["SQ_BUSY_CYCLES"] * passes == engine.counters.wave_instructions - before
        with pytest.raises(ValueError, match="gfx9's format"):
            dev.profile(lambda: None, sqtt=True)
