"""The thread trace the device writes (programmed through SQ_THREAD_TRACE_* as tinygrad and Mesa program it) is
parsed by a decoder this project did not write, tinygrad's (renderer/amd/sqtt.py from PyPI), and the instruction
sequence tinygrad recovers for the traced wave equals the one the simulator executed. Our own reader
(simgpu.hw.sqtt.decode) agrees with tinygrad's token for token."""

import numpy as np
import pytest

from compiler.samples import corpus
from compiler.samples.workloads import MATMUL
from simgpu.gpu import GPU
from simgpu.hw import perfmon_pm4 as pp
from simgpu.hw import sqtt
from tests.support.gpu_harness import VM, Recorder, Ring, aql_launch

KERNELS = {k.name: k for k in [*corpus(), MATMUL]}
BUFFER = 1 << 20


def tinygrad_sqtt():
    try:
        from tinygrad.renderer.amd import sqtt as tg
    except ImportError as e:  # the [test] extra installs it; say why when it is missing
        pytest.skip(f"tinygrad is not installed ({e}); pip install -e '.[test]'")
    return tg


def traced_run(name: str):
    """Run a kernel under the thread trace: (SE 0's trace bytes, code object, load base, executed PCs of wave 0)."""
    k = KERNELS[name]
    gpu = GPU()
    vm = VM(gpu)
    pm4, aql = Ring(vm, "pm4", size=1 << 16), Ring(vm, "aql", size=1 << 16)
    co = k.code_object()
    loaded = vm.load(co)[name]
    args = k.inputs(np.random.default_rng(0))
    vas = [vm.upload(a) if isinstance(a, np.ndarray) else a for a in args]
    bufs = [vm.alloc(BUFFER) for _ in range(pp.SE_COUNT)]
    wptrs = vm.alloc(64)
    pm4.submit(pp.sqtt_start([(b, BUFFER) for b in bufs]), pp.sqtt_userdata(0x1234, 0x5678))
    aql.submit(aql_launch(vm, loaded, vas, k.grid, k.block))
    pm4.submit(pp.sqtt_stop(pp.SE_COUNT, wptrs))
    assert pm4.q.error is None and aql.q.error is None
    data = [vm.read(b, pp.trace_bytes(w, b)) for b, w in zip(bufs, vm.u32(wptrs, pp.SE_COUNT), strict=True)]
    # The same launch again, recording what wave 0 executes (an observer attached by hand).
    rec = Recorder(unseen=("s_delay_alu",))
    gpu.engine.observer = rec
    aql.submit(aql_launch(vm, loaded, vas, k.grid, k.block))
    gpu.engine.observer = None
    return data, co, loaded.base, rec.pcs


@pytest.mark.parametrize("name", ["divergent_loop", "divergent_branch", "fadd_float32", "matmul"])
def test_tinygrad_recovers_the_executed_instruction_sequence(name):
    tg = tinygrad_sqtt()
    data, co, base, executed = traced_run(name)
    # Wave 0 of workgroup 0 starts first on the traced SIMD (SE 0, SA 0, WGP 0, SIMD 0): wave slot 0.
    mapped = [info.pc for _, info in tg.map_insts(data[0], co, "gfx1100") if info is not None and info.wave == 0]
    assert len(mapped) > 5
    assert mapped == [pc - base for pc in executed]


def test_our_reader_agrees_with_tinygrads_token_for_token():
    tg = tinygrad_sqtt()
    data, *_ = traced_run("divergent_loop")
    for stream in data:
        ours = [(p.name, p.time) for p in sqtt.decode(stream)]
        theirs = [(type(p).__name__, p._time) for p in tg.decode(stream) if type(p).__name__ != "NOP"]
        assert ours == theirs
        assert {"LAYOUT_HEADER", "REG", "EVENT"} <= {n for n, _ in ours}
    assert {"WAVESTART", "WAVEEND", "INST", "VALUINST", "IMMEDIATE"} <= {p.name for p in sqtt.decode(data[0])}


def test_trace_timestamps_are_the_virtual_clock_and_runs_are_identical():
    first, second = traced_run("divergent_branch"), traced_run("divergent_branch")
    assert first[0] == second[0]  # byte for byte
    packets = sqtt.decode(first[0][0])
    times = [p.time for p in packets]
    assert times == sorted(times) and times[-1] > 0


def test_a_full_buffer_stops_the_trace_and_says_so():
    k = KERNELS["matmul"]
    gpu = GPU()
    vm = VM(gpu)
    pm4, aql = Ring(vm, "pm4", size=1 << 16), Ring(vm, "aql", size=1 << 16)
    loaded = vm.load(k.code_object())[k.name]
    args = k.inputs(np.random.default_rng(0))
    vas = [vm.upload(a) if isinstance(a, np.ndarray) else a for a in args]
    buf, wptrs = vm.alloc(4096), vm.alloc(64)
    pm4.submit(pp.sqtt_start([(buf, 4096)]))
    aql.submit(aql_launch(vm, loaded, vas, k.grid, k.block))
    pm4.submit(pp.sqtt_stop(1, wptrs))
    assert pp.trace_bytes(vm.u32(wptrs)[0], buf) <= 4096
    assert gpu.perfmon.traces[0].full and gpu.perfmon.traces[0].dropped > 0
    sqtt.decode(vm.read(buf, 4096))  # what was written is still a valid stream
