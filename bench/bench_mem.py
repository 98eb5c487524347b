"""MMU lane throughput: gather and scatter of 1M random 4-byte addresses in a 256 MiB mapped range
(lanes/s), with the range mapped by 2 MiB huge pages and by 4 KiB pages, plus atomics, and the per-call cost
of one wave's gather and of a command processor's 8-byte read.

    python -m bench.bench_mem
"""

from __future__ import annotations

import time

import numpy as np

from bench import best_time
from simgpu.mem import MMU, PageTableBuilder, PhysicalMemory, bump_allocator

VMID = 8
VA = 0x7F00_0000_0000
SIZE = 256 << 20
LANES = 1 << 20


def _setup(fragments: bool) -> MMU:
    phys = PhysicalMemory()
    pt = PageTableBuilder(phys, bump_allocator(0, 64 << 20))
    pt.map(VA, SIZE, 1 << 30, fragments=fragments)
    mmu = MMU(phys)
    mmu.set_root(VMID, pt.root_pde)
    return mmu


def _rate(fn) -> float:
    """Best lanes/s over three runs."""
    return LANES / best_time(fn)


def main() -> None:
    rng = np.random.default_rng(0)
    addrs = (VA + rng.integers(0, SIZE // 4, LANES) * 4).astype(np.uint64)
    values = rng.integers(0, 2**32, LANES, dtype=np.uint32)
    counters = (VA + rng.integers(0, 1024, LANES) * 4).astype(np.uint64)
    for fragments, label in ((True, "2 MiB huge pages"), (False, "4 KiB pages")):
        mmu = _setup(fragments)
        t0 = time.perf_counter()
        mmu.gather(VMID, addrs, 4)
        cold = LANES / (time.perf_counter() - t0)
        print(f"mem [{label}]: gather cold TLB  {cold / 1e6:7.2f} M lanes/s ({mmu.walks} walks)")
        print(f"mem [{label}]: gather warm TLB  {_rate(lambda m=mmu: m.gather(VMID, addrs, 4)) / 1e6:7.2f} M lanes/s")
        print(f"mem [{label}]: scatter          "
              f"{_rate(lambda m=mmu: m.scatter(VMID, addrs, values, 4)) / 1e6:7.2f} M lanes/s")
        print(f"mem [{label}]: atomic add, 1024 hot words "
              f"{_rate(lambda m=mmu: m.atomic(VMID, 'add', counters, values)) / 1e6:7.2f} M lanes/s")
    mmu = _setup(True)
    wave = addrs[:32]
    t0 = time.perf_counter()
    for _ in range(2000):
        mmu.gather(VMID, wave, 4)
    print(f"mem: gather of one 32-lane wave   {2000 / (time.perf_counter() - t0) / 1e3:7.1f} K calls/s")
    mmu.read(VMID, VA + 64, 8)
    t0 = time.perf_counter()
    for _ in range(20000):
        mmu.read(VMID, VA + 64, 8)  # the command processor's packet and signal reads: one cached page
    print(f"mem: read of 8 bytes (CP)         {20000 / (time.perf_counter() - t0) / 1e6:7.2f} M calls/s")


if __name__ == "__main__":
    main()
