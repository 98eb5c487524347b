"""Shader-engine throughput on LLVM-compiled kernels: wave-instructions/s, lane-ops/s, and the ratio
to numpy doing the same work, for an elementwise f32 kernel over 4M elements, a reduction, a
256x256x256 f32 matmul, and a single-wave loop (the kernels of compiler.samples); in the interpreter and
in the JIT tier, side by side.

    python -m bench.bench_shader

Each kernel runs once to warm the TLB, the decode cache and (JIT) compiled code, then the best of five
launches is reported (this VM's speed drifts by tens of percent from minute to minute; numpy's own
times show it).
Times are this process's CPU time (time.process_time): the simulator is single-threaded, so on an
idle machine that equals wall time, and on a shared one it does not count other processes' work.
"""

from __future__ import annotations

import time

import numpy as np

from bench import best_time
from compiler.samples import AXPB, MATMUL, ROWSUM, SPIN
from compiler.samples.workloads import lcg
from simgpu.shader.jit import jit_tier
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


# (what the report calls it, the sample, numpy doing the same work on the sample's inputs)
BENCHES = [
    ("elementwise f32, 4M", AXPB, lambda a: a[1] * np.float32(3) + a[2]),
    ("reduction 4M (64/item)", ROWSUM, lambda a: a[1].reshape(-1, 64).sum(axis=1)),
    ("matmul 256^3 f32", MATMUL, lambda a: a[1] @ a[2]),
    ("single wave, 20k-iteration loop", SPIN, lambda a: lcg(int(a[1]))),
]


def _kernels(tb: Testbed) -> list[tuple[str, float, int, int, float, bool]]:
    """(name, seconds, wave-instructions, lane-ops, numpy seconds, result ok) of each kernel on `tb`."""
    rng = np.random.default_rng(0)
    rows = []
    for label, sample, numpy_work in BENCHES:
        args = sample.inputs(rng)
        vas = [tb.upload(a) if isinstance(a, np.ndarray) else a for a in args]
        kernel = tb.load(sample.code_object())[sample.name]
        dt, wi, lo = _timed(tb, kernel, vas, sample.grid, sample.block)
        after = [tb.download(va, a.dtype, a.size) if isinstance(a, np.ndarray) else a
                 for va, a in zip(vas, args, strict=True)]
        rows.append((label, dt, wi, lo, _numpy_time(lambda a=args, f=numpy_work: f(a)),
                     sample.mismatch(args, after) is None))
    return rows


def main() -> None:
    results = {}
    for tier in ("interpreter", "jit"):
        tb = Testbed(vram_size=2 << 30)
        tb.engine.jit = jit_tier("eager") if tier == "jit" else None
        results[tier] = _kernels(tb)
    print(f"{'kernel':32s} {'tier':11s} {'time':>9s} {'M wave-inst/s':>14s} {'M lane-ops/s':>13s}"
          f" {'x numpy':>9s}  {'JIT speed-up':>12s}")
    for i, (name, *_rest) in enumerate(results["interpreter"]):
        for tier in ("interpreter", "jit"):
            _, dt, wi, lo, np_dt, ok = results[tier][i]
            speedup = f"x{results['interpreter'][i][1] / dt:10.1f}" if tier == "jit" else ""
            print(f"{name if tier == 'interpreter' else '':32s} {tier:11s} {dt * 1e3:7.1f} ms {wi / dt / 1e6:14.2f}"
                  f" {lo / dt / 1e6:13.1f} {dt / np_dt:9.0f}  {speedup:>12s}  {'ok' if ok else 'MISMATCH'}")


if __name__ == "__main__":
    main()
