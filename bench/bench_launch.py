"""Runtime round trips on the simulated device: launch-and-wait of a small kernel over PM4 and AQL
queues, and small host-to-device copies. These bound how fast a test suite of many small kernels
runs under MOCKGPU=1.

    python -m bench.bench_launch

Best of three batches of 200 operations, wall time (the runtime and the device share one thread).
"""

from __future__ import annotations

import numpy as np

from bench import best_time


def _best(fn) -> float:
    """Seconds per call: the best of three timed batches of 200 calls, after a warm-up call."""
    return best_time(fn, count=200, warm=True)


def main() -> None:
    import runtime
    from compiler.samples import SAXPY
    from mockgpu import MockOS
    code = SAXPY.code_object()
    x = np.ones(256, np.float32)
    for queue in ("pm4", "aql"):
        dev = runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 28))
        saxpy = dev.load(code)["saxpy"]
        bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(x.nbytes).copyin(x)

        def launch(k=saxpy, y=by, xb=bx):
            k(y, xb, np.float32(2.0), grid=(1, 1, 1), block=(256, 1, 1))
        dt = _best(launch)
        print(f"launch+wait, 256-item saxpy ({queue}): {dt * 1e3:6.2f} ms  ({1 / dt:6.0f} launches/s)")
        if queue == "aql":
            dt = _best(lambda y=by: y.copyin(x))
            print(f"copy in, 1 KiB (SDMA):              {dt * 1e3:6.2f} ms  ({1 / dt:6.0f} copies/s)")


if __name__ == "__main__":
    main()
