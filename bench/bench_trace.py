"""Recording overhead: the same runtime workload (copies in and out through SDMA + saxpy dispatches) on
MockOS, unrecorded and through traces.RecordingOS writing a trace file; prints the time ratio (target <= 2x)
and the trace size.

    python -m bench.bench_trace
"""

from __future__ import annotations

import os
import tempfile

import numpy as np

from bench import best_time

N = 1 << 18  # floats per buffer (1 MiB)
ROUNDS = 4


def _workload(os_, code: bytes) -> None:
    import runtime
    dev = runtime.Device("AMD:0", os=os_)
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    k = dev.load(code)["saxpy"]
    bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(y.nbytes).copyin(y)
    out = np.empty_like(y)
    for _ in range(ROUNDS):
        k(by, bx, np.float32(0.5), grid=(N // 256, 1, 1), block=(256, 1, 1))
        by.copyout(out)
        bx.copyin(out)
    dev.close()


def main() -> None:
    """Print unrecorded and recorded seconds, their ratio and the trace size."""
    from compiler.samples import SAXPY
    from mockgpu import MockOS
    from traces.record import RecordingOS
    code = SAXPY.code_object()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.trace")

        def recorded():
            rec = RecordingOS(MockOS(devices=1, vram_size=1 << 30), path)
            _workload(rec, code)
            rec.finish()
        plain = best_time(lambda: _workload(MockOS(devices=1, vram_size=1 << 30), code))
        traced = best_time(recorded)
        size = os.path.getsize(path)
    print(f"trace recording: workload {ROUNDS} x (saxpy of {N} floats + 1 MiB copy out + 1 MiB copy in)")
    print(f"  unrecorded {plain:.3f} s, recorded {traced:.3f} s, ratio {traced / plain:.2f}x (target <= 2x), "
          f"trace {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
