"""The AM backend against KFD on the simulated device, in the same run: bring-up (a Device from a fresh machine:
for AM the whole PSP/SMU/GMC/IH/MEC/SDMA sequence through MMIO), and launch-and-wait of a small kernel (AM waits by
polling the fence and the IH ring through register reads; KFD by WAIT_EVENTS).

    python -m bench.bench_am

Bring-up: best of three; launches: best of three batches of 200, wall time.
"""

from __future__ import annotations

import time

import numpy as np

from bench import best_time


def _bring_up(driver: str) -> float:
    import runtime
    from mockgpu import MockOS
    best = float("inf")
    for _ in range(3):
        m = MockOS(devices=1, vram_size=1 << 30)
        t = time.perf_counter()
        runtime.Device("AMD:0", os=m, driver=driver)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    import runtime
    from compiler.samples import SAXPY
    from mockgpu import MockOS
    code = SAXPY.code_object()
    x = np.ones(256, np.float32)
    launch: dict[str, float] = {}
    for driver in ("kfd", "am"):
        print(f"Device bring-up ({driver}):            {_bring_up(driver) * 1e3:7.2f} ms")
        dev = runtime.Device("AMD:0", os=MockOS(devices=1, vram_size=1 << 30), driver=driver)
        saxpy = dev.load(code)["saxpy"]
        bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(x.nbytes).copyin(x)

        def go(k=saxpy, y=by, xb=bx):
            k(y, xb, np.float32(2.0), grid=(1, 1, 1), block=(256, 1, 1))
        launch[driver] = best_time(go, count=200, warm=True)
        print(f"launch+wait, 256-item saxpy ({driver}):  {launch[driver] * 1e3:7.3f} ms")
    print(f"AM / KFD launch+wait time: {launch['am'] / launch['kfd']:.2f}x")


if __name__ == "__main__":
    main()
