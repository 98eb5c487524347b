"""The AM backend's memory management: its VRAM allocator (property-tested), and its page tables, which the
simulated GPU's walker (simgpu.mem.MMU, the device's own reading of the gfx11 PDE/PTE format) must translate."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mockgpu import MockOS
from runtime.am.pci import PCIFunction
from runtime.am.vram import PAGE, PageTables, VRAMAllocator, Window


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 64), st.sampled_from([PAGE, 1 << 16, 1 << 21]), st.booleans()),
                max_size=40))
def test_allocations_never_overlap_and_freeing_restores_the_range(ops):
    a = VRAMAllocator(1 << 20, 64 << 20)
    live: list[tuple[int, int]] = []
    for pages, align, free_one in ops:
        if free_one and live:
            pa, size = live.pop(0)
            a.release(pa, size)
            continue
        try:
            pa = a.alloc(pages * PAGE, align)
        except MemoryError:
            continue
        assert pa % align == 0 and 1 << 20 <= pa and pa + pages * PAGE <= 64 << 20
        assert all(pa + pages * PAGE <= q or q + n <= pa for q, n in live)
        live.append((pa, pages * PAGE))
    for pa, size in live:
        a.release(pa, size)
    assert a.free == [(1 << 20, 64 << 20)] and a.used == 0


def test_the_gpu_walks_the_page_tables_the_backend_writes():
    m = MockOS(devices=1, vram_size=1 << 30)
    pci = PCIFunction(m, "0000:03:00.0")
    window = Window(pci, 16 << 20, 4 << 20)
    tables = PageTables(window)
    va, pa = 0x1000_0020_0000 - 3 * PAGE, 300 << 20  # crosses a PTB (2 MiB) boundary
    tables.map(va, pa, 8 * PAGE)
    mmu = m.simulator("0000:03:00.0").mmu
    mmu.set_context(9, tables.root_pde, 0, (1 << 36) - 1)
    for i in range(8):
        assert mmu.translate(9, va + i * PAGE + 12).pa == pa + i * PAGE + 12
    tables.unmap(va + 2 * PAGE, PAGE)
    mmu.invalidate(9)
    assert mmu.walk(9, va + 2 * PAGE) == "PTE not valid"
    assert np.count_nonzero(window.words) > 0
