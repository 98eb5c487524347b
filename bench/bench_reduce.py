"""Large reductions on the simulated gfx1100: a 2^22-element float32 sum() runs in two stages (256 partial sums in
parallel, then their sum; compiler.lazy.SPLIT_MIN), where one loop over every element ran past the watchdog.

    python -m bench.bench_reduce

Prints, per reduction, the kernels of its schedule, the warm wall time (best of 3 after the calls that compile
and cache the kernels, until the time stops falling: bench.settle; schedule, launches, copy-out) and the error
against NumPy's float64 result. Warm means the simulator's shader JIT has compiled the kernels too: max() was once
reported at 0.72 s against sum's 0.21 s after a single warm-up call, while the shader JIT was still compiling
max's kernel (a NaN-propagating max is three instructions per element, sum's add one, so its interpretation is
slower and its compile longer); settled, the two take the same time. Goal (issue
28.4): under 0.5 s warm for the 2^22-element sum.
"""

from __future__ import annotations

import os
import time

import numpy as np

from bench import settle, shader_jit_busy

os.environ.setdefault("MOCKGPU", "1")


def reduction(n: int, name: str = "sum", repeats: int = 3) -> dict:
    """Kernels, best warm seconds and the largest relative error of x.<name>() for n float32 elements."""
    from compiler import Tensor, device
    from compiler.schedule import schedule
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    t = Tensor(x).realize()
    kernels = [i.ast.arg or "kernel" for i in schedule([getattr(t, name)().lazydata.base]) if i.kind == "kernel"]
    dev = device.get("AMD")
    gpu = dev.rt.os.simulator(dev.rt.gpu_id)
    warm = settle(lambda: getattr(t, name)().numpy(), busy=lambda: shader_jit_busy(gpu))  # compile and cache
    best, cpu, got = float("inf"), float("inf"), None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        got = getattr(t, name)().numpy()
        best, cpu = min(best, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    ref = getattr(np, name)(x.astype(np.float64))
    return {"kernels": len(kernels), "wall": best, "cpu": cpu, "err": abs(float(got) - ref) / max(abs(ref), 1.0),
            "warm": warm}


def main() -> None:
    """Print the table."""
    print(f"large reductions on the simulated gfx1100 (warm: best of 3); load average {os.getloadavg()[0]:.2f}")
    print(f"  {'reduction':<22}{'kernels':>8}{'wall':>10}{'CPU':>10}{'rel err':>10}{'warm-up calls':>15}")
    for n, name in ((1 << 22, "sum"), (1 << 22, "max"), (1 << 20, "sum")):
        r = reduction(n, name)
        label = f"{name}() of 2^{n.bit_length() - 1}"
        print(f"  {label:<22}{r['kernels']:>8}{r['wall']:>9.3f}s{r['cpu']:>9.3f}s{r['err']:>10.1e}{r['warm']:>15}")


if __name__ == "__main__":
    main()
