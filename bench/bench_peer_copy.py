"""A copy between two GPUs through the runtime: two gfx942s of one XGMI hive (straight into the peer's VRAM on an
SDMA_XGMI queue) against two gfx1100s (PCIe: a bounce buffer in system memory, one SDMA copy on each GPU).

    python -m bench.bench_peer_copy

Virtual time: what each GPU's clock advanced during the copy (the cost model: XGMI 64 GB/s, PCIe 31.5 GB/s);
host time: wall seconds a copy, best of three.
"""

from __future__ import annotations

import numpy as np

from bench import best_time

NBYTES = 16 << 20


def main() -> None:
    import runtime
    from mockgpu import MockOS
    x = np.arange(NBYTES // 4, dtype=np.float32)
    for arch in ("gfx942", "gfx1100"):
        mock = MockOS(devices=2, vram_size=1 << 30, arch=arch)
        a, b = runtime.Device("AMD:0", os=mock), runtime.Device("AMD:1", os=mock)
        src, dst = a.alloc(x.nbytes).copyin(x), b.alloc(x.nbytes)
        ga, gb = mock.simulator(a.gpu_id).clock, mock.simulator(b.gpu_id).clock
        a.copy_between(dst, src, x.nbytes)  # warm: the peer mapping and the XGMI queue are made once
        before = ga.cycles, gb.cycles
        a.copy_between(dst, src, x.nbytes)
        us = [(c.cycles - c0) / c.core_mhz for c, c0 in zip((ga, gb), before, strict=True)]
        host = best_time(lambda a=a, dst=dst, src=src: a.copy_between(dst, src, x.nbytes))
        assert np.array_equal(dst.copyout(np.empty_like(x)), x)
        print(f"{arch}: {NBYTES >> 20} MiB GPU0 -> GPU1: virtual {us[0]:7.1f} us on GPU0, {us[1]:7.1f} us on GPU1; "
              f"host {host * 1e3:6.1f} ms")
        a.close()
        b.close()


if __name__ == "__main__":
    main()
