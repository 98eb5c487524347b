"""What profiling costs on the simulated device: the same launches with profiling off, with the performance counters
counting (SIMGPU_PROFILE's counter set), and with the thread trace on as well (SIMGPU_SQTT). Off, the engine runs
exactly as without the profiler (no observer is attached); on, it must stay within 2x.

    python -m bench.bench_profile

Best of three launch-and-wait calls, process CPU time, per kernel; wave-instructions/s and the ratios to "off"
measured in the same run.
"""

from __future__ import annotations

import time

import numpy as np


def _best(fn, n: int = 3) -> float:
    fn()
    best = float("inf")
    for _ in range(n):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    import runtime
    from compiler.samples.workloads import MATMUL, SPIN
    from mockgpu import MockOS
    from runtime.profile import DEFAULT_COUNTERS, Profiler
    dev = runtime.Device("AMD:0", os=MockOS(devices=1, vram_size=1 << 30))
    for k in (MATMUL, SPIN):
        kern = dev.load(k.code_object())[k.name]
        bufs = [dev.alloc(a.nbytes).copyin(a) if isinstance(a, np.ndarray) else a
                for a in k.inputs(np.random.default_rng(0))]
        engine = dev.os.nodes[0].gpu.engine

        def launch(kern=kern, bufs=bufs, k=k):
            kern(*bufs, grid=k.grid, block=k.block)
        before = engine.counters.wave_instructions
        launch()
        wave_insts = engine.counters.wave_instructions - before
        times = {}
        for mode in ("off", "counters", "counters+sqtt"):
            prof = None if mode == "off" else Profiler(dev, DEFAULT_COUNTERS, sqtt=mode.endswith("sqtt"),
                                                      sqtt_bytes=64 << 20)
            dev.profiler = prof
            times[mode] = _best(launch)
            dev.profiler = None
            if prof is not None:
                prof.free()
        line = ", ".join(f"{m} {t * 1e3:8.1f} ms ({wave_insts / t / 1e6:5.2f}M wave-inst/s, {t / times['off']:4.2f}x)"
                         for m, t in times.items())
        print(f"profiling {k.name:8s} ({wave_insts} wave-instructions): {line}")


if __name__ == "__main__":
    main()
