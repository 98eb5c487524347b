"""`simgpu demo`: two LLVM-IR kernels run end to end on the simulated gfx1100 through
runtime -> amdkfd (mockgpu.MockOS) -> simgpu, checked against numpy."""

from __future__ import annotations

import time

import numpy as np


def run(queue: str = "pm4", out=print, compiled: bool = True, driver: str = "kfd") -> bool:
    """Build, run and check both kernels (and, with `compiled`, the compiler's examples on the same device);
    print the table; True when every check passes. `driver` "am": the runtime drives the PCI function itself."""
    import runtime
    from compiler.samples import MATMUL, SAXPY
    from wiring.os_select import mock_os, traced
    out(f"simgpu demo: running on the SIMULATED gfx1100 (mockgpu.MockOS, queue={queue}"
        f"{', driver=am' if driver == 'am' else ''}), not on hardware")
    mock = mock_os(devices=1, vram_size=1 << 30)
    dev = runtime.Device("AMD:0", queue=queue, os=traced(mock), driver=driver)
    counters = mock.simulator(dev.gpu_id).engine.counters  # the simulator's own count, not the runtime's
    rows, ok = [], True
    rng = np.random.default_rng(1234)
    n = 1 << 16
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    saxpy = dev.load(SAXPY.code_object())["saxpy"]
    bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(y.nbytes).copyin(y)
    rows.append(_run(counters, "saxpy", saxpy, (by, bx, np.float32(2.0)), (n // 256, 1, 1), (256, 1, 1),
                     lambda: np.array_equal(by.copyout(np.empty_like(y)), np.float32(2.0) * x + y)))
    m = 256
    a, b = rng.standard_normal((m, m)).astype(np.float32), rng.standard_normal((m, m)).astype(np.float32)
    matmul = dev.load(MATMUL.code_object())["matmul"]
    ba, bb, bc = dev.alloc(a.nbytes).copyin(a), dev.alloc(b.nbytes).copyin(b), dev.alloc(a.nbytes)
    rows.append(_run(counters, "matmul 256x256", matmul, (bc, ba, bb, m), (m, 1, 1), (m, 1, 1),
                     lambda: np.allclose(bc.copyout(np.empty_like(a)), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)))
    out(f"{'kernel':<16}{'grid x block':>22}{'wave-instr':>12}{'lane-ops':>14}{'GPU time':>12}{'host time':>11}  check")
    for name, shape, wi, lo, gpu_t, host_t, good in rows:
        ok &= good
        out(f"{name:<16}{shape:>22}{wi:>12}{lo:>14}{gpu_t * 1e6:>10.2f}us{host_t:>10.2f}s  {'ok' if good else 'FAIL'}")
    out("GPU time is the simulator's virtual clock (deterministic); host time is wall time.")
    if not compiled:
        return ok
    out("The compiler (compiler.Tensor -> kernel IR -> z3-proven indices -> LLVM -> gfx1100), on the same GPU:")
    from compiler import device as compiler_device
    from compiler.examples import demo as compiled_demo
    compiler_device.attach("AMD:0", compiler_device.DeviceAdapter("AMD:0", rt=dev))
    ok &= compiled_demo(out)
    return ok


def _run(counters, name, kernel, args, grid, block, check):
    before = counters.snapshot()
    t0 = time.perf_counter()
    gpu_t = kernel(*args, grid=grid, block=block)
    host_t = time.perf_counter() - t0
    after = counters.snapshot()
    shape = f"{'x'.join(map(str, grid))} x {'x'.join(map(str, block))}"
    return (name, shape, after["wave_instructions"] - before["wave_instructions"],
            after["lane_ops"] - before["lane_ops"], gpu_t, host_t, bool(check()))
