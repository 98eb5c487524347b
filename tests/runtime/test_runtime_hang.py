"""A kernel that never ends (issue 12, item 1): the deterministic wave-instruction budget (the default limit), an
opt-in wall-clock watchdog and the wait's timeout stop it, Ctrl-C abandons it, and each time the error says which
limit fired, which kernel it was and where every wave is (PC, instruction, EXEC, what it waits for), the queue is
reset and the device stays usable: the next launch does not resume the spinning kernel. No default limit depends
on host time (issue 26, item 1): a long correct dispatch on a loaded machine is not reset."""

import signal
import time
import types

import numpy as np
import pytest

import runtime
import simgpu.gpu
import simgpu.shader.engine
from mockgpu import MockOS
from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from simgpu.shader.engine import DEFAULT_WATCHDOG
from tests.runtime.test_runtime_memory import STORE, _asm_kernel

SPIN = "s_branch -1\ns_endpgm"  # one wave per workgroup jumps to itself forever
# The deterministic instruction budget (50M wave-instructions by default) out of the way of the wall-clock
# limits and Ctrl-C these tests are about: compiled by the JIT tier, a spinning wave runs through 50M in a
# fraction of a second (tests/simgpu/shader/test_jit_budget.py has the budget's own tests).
NO_BUDGET = 1 << 50
BARRIER_HANG = """
v_cmp_eq_u32_e32 vcc_lo, 0, v0
s_cbranch_vccnz 1
s_barrier
s_branch -1
s_endpgm
"""


def _ok(dev) -> None:
    buf = dev.alloc(4).copyin(np.zeros(1, np.uint32))
    _asm_kernel(dev, STORE)(buf, grid=1, block=32, timeout_ms=60_000)
    assert buf.copyout(np.empty(1, np.uint32))[0] == 42


# One wave counts s10 down from 300,000 (900,000 wave-instructions, several of the engine's ticks), then stores 42.
LONG = """
s_load_b64 s[4:5], s[0:1], 0x0
s_mov_b32 s10, 300000
s_sub_u32 s10, s10, 1
s_cmp_lg_u32 s10, 0
s_cbranch_scc1 65533
s_waitcnt lgkmcnt(0)
v_mov_b32 v1, 0
v_mov_b32 v2, 42
global_store_b32 v1, v2, s[4:5]
s_endpgm
"""


class _LoadedHost:
    """time.monotonic of a very loaded machine: a minute of host time passes between any two looks at the clock."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 60.0
        return self.now


def test_no_default_limit_depends_on_host_time(monkeypatch):
    monkeypatch.delenv("SIMGPU_WATCHDOG_S", raising=False)
    monkeypatch.delenv("MOCKGPU_WATCHDOG", raising=False)
    os_ = MockOS(devices=1, vram_size=1 << 28)
    gpu = os_.gpus[0]
    assert gpu.wall_watchdog is None and gpu.engine.watchdog == DEFAULT_WATCHDOG >= 1 << 32
    dev = runtime.Device(os=os_)
    k = _asm_kernel(dev, LONG)
    clock = _LoadedHost()  # the engine and the GPU see minutes pass at every tick of the long dispatch
    monkeypatch.setattr(simgpu.shader.engine, "time", types.SimpleNamespace(monotonic=clock.monotonic))
    monkeypatch.setattr(simgpu.gpu, "time", types.SimpleNamespace(monotonic=clock.monotonic))
    buf = dev.alloc(4).copyin(np.zeros(1, np.uint32))
    k(buf, grid=1, block=32)  # used to be reset by the default 30 s wall-clock watchdog
    assert buf.copyout(np.empty(1, np.uint32))[0] == 42


def test_the_default_limit_is_the_wave_instruction_budget_and_its_fault_says_how_to_raise_it(monkeypatch):
    monkeypatch.delenv("SIMGPU_WATCHDOG_S", raising=False)
    monkeypatch.setenv("MOCKGPU_WATCHDOG", "100000")
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28))
    with pytest.raises(runtime.GPUFault) as e:
        _asm_kernel(dev, SPIN)(None, grid=1, block=32)
    first = e.value.report.splitlines()[0]
    assert e.value.kind == "watchdog" and "hardware exception: GPU hang, per-engine reset: GPU fault (watchdog): " \
        "wave-instruction budget of 100000 exceeded" in first
    assert "MOCKGPU_WATCHDOG=<wave-instructions> or MockOS(watchdog=...) raises the budget" in first
    assert "kernel k," in first  # the kernel's symbol name, from the code object
    _ok(dev)


def test_a_wall_clock_limit_only_when_simgpu_watchdog_s_is_set_and_its_fault_says_so(monkeypatch):
    monkeypatch.setenv("SIMGPU_WATCHDOG_S", "0.5")
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28, watchdog=NO_BUDGET))
    assert dev.os.gpus[0].wall_watchdog == 0.5
    with pytest.raises(runtime.GPUFault) as e:
        _asm_kernel(dev, SPIN)(None, grid=1, block=32)
    assert e.value.kind == "watchdog" and "ran longer than the 0.5 s wall-clock watchdog set by SIMGPU_WATCHDOG_S " \
        "(opt-in, host time" in e.value.report.splitlines()[0]
    _ok(dev)
    monkeypatch.setenv("SIMGPU_WATCHDOG_S", "half a second")
    with pytest.raises(ValueError, match="SIMGPU_WATCHDOG_S='half a second': give seconds"):
        MockOS(devices=1, vram_size=1 << 28)


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_the_timeout_ms_of_a_launch_bounds_the_call(queue):
    # The doorbell runs the dispatch (no lazy doorbells, no wall-clock watchdog, no budget in reach): the
    # launch's wait timeout must hold there too. It used to return only when a 30 s watchdog fired.
    dev = runtime.Device(queue=queue, os=MockOS(devices=1, vram_size=1 << 28, wall_watchdog=0, watchdog=NO_BUDGET))
    # (0.5 s, not 2 s: the spin is CPU the suite pays, and 0.5 s is as far from the 30 s watchdog; the bound keeps
    # the 5 s it had, a loaded machine's slack)
    t0 = time.monotonic()
    with pytest.raises(runtime.GPUTimeout) as e:
        _asm_kernel(dev, SPIN)(None, grid=1, block=32, timeout_ms=500)
    assert time.monotonic() - t0 < 5
    assert e.value.kind == "timeout" and "still running after the caller's 0.5 s wait timeout, kernel k," in \
        e.value.report.splitlines()[0]
    _ok(dev)


def test_the_wall_clock_watchdog_stops_a_kernel_at_its_doorbell():
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28, wall_watchdog=0.5, watchdog=NO_BUDGET))
    t0 = time.monotonic()
    with pytest.raises(runtime.GPUFault) as e:
        _asm_kernel(dev, SPIN)(None, grid=2, block=64)
    assert time.monotonic() - t0 < 20 and e.value.kind == "watchdog" and e.value.device_usable
    report = e.value.report
    assert "ran longer than the 0.5 s wall-clock watchdog set by MockOS(wall_watchdog=...)" in report
    assert "waves:" in report and "waves 0-3 (4): pc 0x" in report and "[s_branch 65535] exec 0xffffffff, running" \
        in report
    _ok(dev)


def test_the_waits_timeout_stops_a_kernel_the_gpu_runs_inside_the_wait():
    # Lazy doorbells: the GPU works when the runtime waits, as when hardware had not got to the work yet.
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28, lazy_doorbells=True, wall_watchdog=120,
                                   watchdog=NO_BUDGET))
    launch = _asm_kernel(dev, SPIN)(None, grid=1, block=32, wait=False)
    t0 = time.monotonic()
    with pytest.raises(runtime.GPUTimeout) as e:
        launch.wait(timeout_ms=300)
    assert time.monotonic() - t0 < 20
    assert isinstance(e.value, TimeoutError) and isinstance(e.value, runtime.GPUFault) and e.value.kind == "timeout"
    assert "still running after the caller's 0.3 s wait timeout" in e.value.report and "[s_branch 65535]" in \
        e.value.report
    _ok(dev)


def test_a_hang_at_a_barrier_says_which_waves_wait_there():
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28, wall_watchdog=0.5, watchdog=NO_BUDGET))
    with pytest.raises(runtime.GPUFault) as e:
        _asm_kernel(dev, BARRIER_HANG)(None, grid=1, block=64)
    report = e.value.report
    assert "wave 1: pc 0x" in report and "[s_barrier] exec 0xffffffff, waits at s_barrier for the rest of its " \
        "workgroup" in report and "wave 0: pc 0x" in report and "running" in report
    _ok(dev)


def test_ctrl_c_abandons_the_kernel_and_the_next_launch_runs_clean():
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28, wall_watchdog=120, watchdog=NO_BUDGET))
    spin = _asm_kernel(dev, SPIN)

    def interrupt(signum, frame):  # what Ctrl-C does: KeyboardInterrupt wherever the main thread is
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        # every 0.5 s until one reaches the launch: Python drops an exception raised inside a garbage collector's
        # callback (hypothesis has one) as unraisable, and the suite saw one go that way
        signal.setitimer(signal.ITIMER_REAL, 0.5, 0.5)
        with pytest.raises(KeyboardInterrupt):
            spin(None, grid=1, block=32)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    t0 = time.monotonic()
    _ok(dev)  # used to resume the spinning kernel at the next doorbell
    assert time.monotonic() - t0 < 20
    fault = dev.aborted_by(dev.compute.submitted - 1)
    assert fault is not None and "interrupted by KeyboardInterrupt" in str(fault)


class _Unannotated(MockOS):
    """A driver that never hears the runtime's notes: like a client we did not write (tinygrad under simgpu run),
    which loads code objects itself."""

    def annotate(self, note: dict) -> None:
        pass


def _named_kernel(dev, body: str, name: str):
    meta = {".args": [{".name": "p", ".offset": 0, ".size": 8, ".value_kind": "global_buffer"}]}
    co = write_code_object([(name, assemble(body), make_descriptor(8, kernarg_size=8), meta)])
    return dev.load(co)[name]


@pytest.mark.parametrize("driver", [MockOS, _Unannotated])
def test_page_fault_and_watchdog_faults_name_the_kernel(driver):
    dev = runtime.Device(os=driver(devices=1, vram_size=1 << 28, watchdog=100_000))
    with pytest.raises(runtime.GPUFault) as e:
        _named_kernel(dev, STORE, "store_forty_two")(None, grid=1, block=32)
    first = e.value.report.splitlines()[0]
    assert e.value.kind == "page_fault" and "memory exception at VA 0x0 (page not present): GPU fault (page_fault)" \
        in first and ", kernel store_forty_two," in first and "kernel at 0x" not in e.value.report
    with pytest.raises(runtime.GPUFault) as e:
        _named_kernel(dev, SPIN, "spin_forever")(None, grid=1, block=32)
    first = e.value.report.splitlines()[0]
    assert e.value.kind == "watchdog" and ", kernel spin_forever," in first
    _ok(dev)
