"""A kernel that never ends (issue 12, item 1): the wall-clock watchdog and the wait's timeout stop it, Ctrl-C
abandons it, and each time the error says where every wave is (PC, instruction, EXEC, what it waits for),
the queue is reset and the device stays usable: the next launch does not resume the spinning kernel."""

import signal
import time

import numpy as np
import pytest

import runtime
from mockgpu import MockOS
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


def test_the_wall_clock_watchdog_stops_a_kernel_at_its_doorbell():
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28, wall_watchdog=0.5, watchdog=NO_BUDGET))
    t0 = time.monotonic()
    with pytest.raises(runtime.GPUFault) as e:
        _asm_kernel(dev, SPIN)(None, grid=2, block=64)
    assert time.monotonic() - t0 < 20 and e.value.kind == "watchdog" and e.value.device_usable
    report = e.value.report
    assert "ran longer than the 0.5 s wall-clock watchdog (SIMGPU_WATCHDOG_S)" in report
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
        signal.setitimer(signal.ITIMER_REAL, 0.5)
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
