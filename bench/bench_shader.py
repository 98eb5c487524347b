"""Shader-engine throughput on LLVM-compiled kernels: wave-instructions/s, lane-ops/s, and the ratio
to numpy doing the same work, for an elementwise f32 kernel over 4M elements, a reduction, a
256x256x256 f32 matmul, and a single-wave loop (the kernels of compiler.samples).

    python -m bench.bench_shader

Each kernel runs once to warm the TLB and decode cache, then the best of five launches is reported
(this VM's speed drifts by tens of percent from minute to minute; numpy's own times show it).
Times are this process's CPU time (time.process_time): the simulator is single-threaded, so on an
idle machine that equals wall time, and on a shared one it does not count other processes' work.
"""

from __future__ import annotations

import time

import numpy as np

from bench import best_time
from compiler.samples import AXPB, MATMUL, ROWSUM, SPIN
from compiler.samples.workloads import lcg
from simgpu.testbed import Testbed


def _timed(tb: Testbed, kernel, args, grid, block, repeats: int = 5) -> tuple[float, int, int]:
    """Best of `repeats` warm launches: (seconds, wave-instructions, lane-ops) of one launch."""
    tb.launch(kernel, args, grid, block)  # warm: TLB, decode cache
    c = tb.engine.counters
    best = None
    for _ in range(repeats):
        w0, l0 = c.wave_instructions, c.lane_ops
        t0 = time.process_time()
        tb.launch(kernel, args, grid, block)
        dt = time.process_time() - t0
        if best is None or dt < best[0]:
            best = (dt, c.wave_instructions - w0, c.lane_ops - l0)
    return best


def _numpy_time(fn) -> float:
    """Best wall time of five warm runs (numpy's BLAS may use several threads)."""
    return best_time(fn, reps=5, warm=True)


def _report(name: str, dt: float, wi: int, lo: int, np_dt: float, ok: bool) -> None:
    print(f"{name:28s} {dt:7.3f} s  {wi / dt / 1e6:7.2f} M wave-inst/s  {lo / dt / 1e6:8.1f} M lane-ops/s  "
          f"numpy {np_dt * 1e3:8.2f} ms (x{dt / np_dt:8.0f} slower)  {'ok' if ok else 'MISMATCH'}")


# (what the report calls it, the sample, numpy doing the same work on the sample's inputs)
BENCHES = [
    ("elementwise f32, 4M", AXPB, lambda a: a[1] * np.float32(3) + a[2]),
    ("reduction 4M (64/item)", ROWSUM, lambda a: a[1].reshape(-1, 64).sum(axis=1)),
    ("matmul 256^3 f32", MATMUL, lambda a: a[1] @ a[2]),
    ("single wave, 20k-iteration loop", SPIN, lambda a: lcg(int(a[1]))),
]


def main() -> None:
    rng = np.random.default_rng(0)
    tb = Testbed(vram_size=2 << 30)
    for label, sample, numpy_work in BENCHES:
        args = sample.inputs(rng)
        vas = [tb.upload(a) if isinstance(a, np.ndarray) else a for a in args]
        kernel = tb.load(sample.code_object())[sample.name]
        dt, wi, lo = _timed(tb, kernel, vas, sample.grid, sample.block)
        after = [tb.download(va, a.dtype, a.size) if isinstance(a, np.ndarray) else a
                 for va, a in zip(vas, args, strict=True)]
        _report(label, dt, wi, lo, _numpy_time(lambda a=args, f=numpy_work: f(a)), sample.mismatch(args, after) is None)


if __name__ == "__main__":
    main()
