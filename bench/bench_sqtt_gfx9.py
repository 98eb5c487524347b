"""What gfx942's thread trace costs: clang-19's collatz (tests/data/opencl/corpus_gfx942.so), 16 workgroups of 128
work-items, launched on a PM4 queue with and without the trace tinygrad programs (simgpu.hw.sqtt_gfx9_pm4) before
it; process CPU time of the launch, best of two, three interleaved rounds.

    python -m bench.bench_sqtt_gfx9
"""

from __future__ import annotations

import time

import numpy as np

from simgpu.gpu import GPU
from simgpu.hw import sqtt_gfx9_pm4 as pp
from tests import DATA
from tests.support.gpu_harness import VM, Ring, pm4_launch


def _launch(trace: bool) -> tuple[float, int]:
    gpu = GPU(vram_size=1 << 28, arch="gfx942")
    vm = VM(gpu)
    pm4 = Ring(vm, "pm4", size=1 << 16)
    k = vm.load((DATA / "opencl" / "corpus_gfx942.so").read_bytes())["collatz"]
    start = np.random.default_rng(3).integers(1, 3000, 2048).astype(np.uint32)
    vas = [vm.upload(np.zeros(2048, np.int32)), vm.upload(start)]
    bufs, wptrs = [vm.alloc(1 << 22) for _ in range(4)], vm.alloc(64)
    if trace:
        pm4.submit(pp.sqtt_start([(b, 1 << 22) for b in bufs]))
    launch = pm4_launch(vm, k, vas, (16,), (128,))
    t = time.process_time()
    pm4.submit(launch)
    dt = time.process_time() - t
    if trace:
        pm4.submit(pp.sqtt_stop(4, wptrs))
    return dt, gpu.engine.counters.wave_instructions


def main() -> None:
    for r in range(3):
        off, n = min(_launch(False) for _ in range(2))
        on, _ = min(_launch(True) for _ in range(2))
        print(f"round {r}: untraced {off:.3f}s traced {on:.3f}s ratio {on / off:.2f} ({n} wave-instructions)")


if __name__ == "__main__":
    main()
