"""Long dispatches show progress on a terminal (issue 12, item 14): a tqdm bar with workgroups done of all
and wave-instructions/s, off when stderr is not a terminal (pipes, logs, pytest's capture) or
SIMGPU_PROGRESS=0."""

import io
import sys

import runtime
from mockgpu import MockOS, progress
from tests.runtime.test_runtime_memory import _asm_kernel

# Each wave counts s2 down from 25,000: about 75,000 wave-instructions per workgroup of one wave, so the
# engine reports (every 65,536) during the dispatch, not only at its end.
LOOP = """
s_mov_b32 s2, 25000
s_sub_u32 s2, s2, 1
s_cmp_lg_u32 s2, 0
s_cbranch_scc1 -3
s_endpgm
"""


def test_progress_is_off_without_a_terminal_or_when_asked(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not progress.enabled()
    monkeypatch.setattr(sys, "stderr", type("Tty", (io.StringIO,), {"isatty": lambda self: True})())
    assert progress.enabled()
    monkeypatch.setenv("SIMGPU_PROGRESS", "0")
    assert not progress.enabled()


def test_a_long_dispatch_draws_workgroups_done_and_its_rate():
    mock = MockOS(devices=1, vram_size=1 << 28)
    out = io.StringIO()
    gpu = mock.gpus[0]
    gpu.engine.progress_hooks[:] = [progress.DispatchProgress(gpu.name, file=out, delay=0)]
    # The interpreter: tqdm redraws at most every 0.1 s, and the JIT tier runs this loop in about a
    # millisecond, between one draw and the next (its reports are tests/simgpu/shader/test_jit_budget.py's).
    gpu.engine.jit = None
    dev = runtime.Device(os=mock)
    _asm_kernel(dev, LOOP)(None, grid=4, block=32)
    text = out.getvalue()
    assert "gpu0 dispatch" in text and "/4 [" in text and "wg" in text and "M wave-inst/s" in text
    assert "4/4" in text  # the last report is the finished dispatch


def test_a_dispatch_shorter_than_the_delay_draws_nothing():
    mock = MockOS(devices=1, vram_size=1 << 28)
    out = io.StringIO()
    gpu = mock.gpus[0]
    gpu.engine.progress_hooks[:] = [progress.DispatchProgress(gpu.name, file=out, delay=3600)]
    gpu.engine.jit = None
    _asm_kernel(runtime.Device(os=mock), LOOP)(None, grid=4, block=32)
    assert out.getvalue() == ""
