"""Record the runtime's test workloads and the demo's kernels, replay each on a fresh MockOS: no
divergence. Workloads: corpus kernels of every kind over PM4 and AQL, a two-device copy,
the demo's saxpy and matmul."""

import io

import numpy as np
import pytest

import runtime
from compiler.samples import MATMUL, corpus
from mockgpu import MockOS
from tests.runtime.test_runtime_kernels import check, run_corpus
from tests.traces.test_traces import replay_bytes
from traces.record import RecordingOS

KINDS = {"divergent_loop", "lds_reduce", "global_atomics", "private_array", "hidden_args", "ballot_readfirstlane",
         "fma_float32", "sdiv_i32"}
assert KINDS <= {k.name for k in corpus()}


def _record(work, devices: int = 1) -> bytes:
    f = io.BytesIO()
    rec = RecordingOS(MockOS(devices=devices, vram_size=1 << 30), f)
    work(rec)
    rec.finish()
    return f.getvalue()


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_corpus_workload_replays_without_divergence(queue):
    def work(os_):
        dev = runtime.Device("AMD:0", queue=queue, os=os_)
        for name in sorted(KINDS):
            args, after, _ = run_corpus(dev, name)
            check(name, args, after)
        dev.close()
    assert replay_bytes(_record(work)) is None


def test_two_device_copy_replays_without_divergence():
    def work(os_):
        a, b = runtime.Device("AMD:0", os=os_), runtime.Device("AMD:1", os=os_)
        data = np.arange(1 << 16, dtype=np.uint32)
        src, dst = a.alloc(data.nbytes).copyin(data), b.alloc(data.nbytes)
        src.copy_to(dst)
        assert np.array_equal(dst.copyout(np.empty_like(data)), data)
        a.close()
        b.close()
    assert replay_bytes(_record(work, devices=2)) is None


def test_demo_matmul_replays_without_divergence():
    def work(os_):
        dev = runtime.Device("AMD:0", os=os_)
        m = 64
        rng = np.random.default_rng(3)
        a, b = rng.random((m, m), np.float32), rng.random((m, m), np.float32)
        k = dev.load(MATMUL.code_object())["matmul"]
        ba, bb, bc = dev.alloc(a.nbytes).copyin(a), dev.alloc(b.nbytes).copyin(b), dev.alloc(a.nbytes)
        k(bc, ba, bb, m, grid=(m, 1, 1), block=(m, 1, 1))
        assert np.allclose(bc.copyout(np.empty_like(a)), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
        dev.close()
    assert replay_bytes(_record(work)) is None


def test_simgpu_demo_recorded_with_simgpu_trace_replays(tmp_path):
    import os
    import subprocess
    import sys
    path = tmp_path / "demo.trace"
    env = dict(os.environ, SIMGPU_TRACE=str(path))
    run = subprocess.run([sys.executable, "-m", "wiring.cli", "demo", "--kernels-only"], env=env, capture_output=True,
                         text=True)
    assert run.returncode == 0 and "FAIL" not in run.stdout, run.stdout + run.stderr
    env.pop("SIMGPU_TRACE")
    rep = subprocess.run([sys.executable, "-m", "wiring.cli", "trace", "replay", str(path)], env=env,
                         capture_output=True, text=True)
    assert rep.returncode == 0 and "no divergence" in rep.stdout, rep.stdout + rep.stderr
