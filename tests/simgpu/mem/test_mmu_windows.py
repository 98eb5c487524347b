"""MMU.linear_window (the JIT tier's memory windows) and MMU.invalidated_since (when they expire)."""

from __future__ import annotations

import numpy as np

from simgpu.testbed import VMID, Testbed


def test_a_window_grows_to_the_whole_linear_buffer_and_stops_at_its_guard_pages():
    tb = Testbed(vram_size=1 << 28)
    a = tb.alloc(5 << 20)  # 5 MiB, then an unmapped guard page
    tb.write(a + 4096 * 7 + 3, b"\x2a")
    va, view = tb.mmu.linear_window(VMID, a + 4096 * 7, 64, "read")
    assert va == a and view.size == 5 << 20
    assert view[4096 * 7 + 3] == 0x2A  # the window is the buffer's memory itself
    small = tb.alloc(100)
    va, view = tb.mmu.linear_window(VMID, small + 8, 4, "read")
    assert (va, view.size) == (small, 4096)


def test_no_window_over_unmapped_or_forbidden_memory():
    tb = Testbed(vram_size=1 << 28)
    a = tb.alloc(4096)
    assert tb.mmu.linear_window(VMID, a + 4096, 4, "read") is None  # the guard page
    assert tb.mmu.linear_window(VMID, a + 4090, 16, "read") is None  # runs into it
    code = tb.alloc(4096, executable=True)
    assert tb.mmu.linear_window(VMID, code, 4, "execute") is not None


def test_invalidated_since_lists_the_changes_in_order():
    tb = Testbed(vram_size=1 << 28)
    mmu = tb.mmu
    g = mmu.generation
    assert mmu.invalidated_since(g) == []
    mmu.invalidate(VMID, (0x1000, 0x3000))
    mmu.invalidate(None, None)
    assert mmu.invalidated_since(g) == [(VMID, (0x1000, 0x3000)), (None, None)]
    for _ in range(100):
        mmu.invalidate(VMID, (0, 4096))
    assert mmu.invalidated_since(g) is None  # further back than it remembers
    assert len(mmu.invalidated_since(mmu.generation - 3)) == 3


def test_windows_outside_an_invalidated_range_survive_between_dispatches():
    """The JIT tier keeps a buffer's window across launches when only another buffer was remapped."""
    from simgpu.shader.jit import jit_tier
    tb = Testbed(vram_size=1 << 28)
    tier = tb.engine.jit = jit_tier("eager")
    a = tb.alloc(1 << 20)
    windows = tier.windows
    windows.for_dispatch(tb.mmu, VMID)
    windows.add(tb.mmu, VMID, a, a + 64)
    assert len(windows.views) == 1
    tb.alloc(4096)  # maps and invalidates another range
    windows.for_dispatch(tb.mmu, VMID)
    assert len(windows.views) == 1
    tb.mmu.invalidate(VMID, (a + 4096, a + 8192))
    windows.for_dispatch(tb.mmu, VMID)
    assert len(windows.views) == 0
    assert np.all(windows.table == 0)


def test_a_window_asked_for_reading_and_then_writing_is_one_row_allowing_both():
    """A buffer a kernel reads and a later one writes keeps one row (a step's buffers then fit the table, which
    keeps them across launches instead of starting empty every step)."""
    from simgpu.mem.windows import WIN_READ, WIN_WRITE, TierWindows
    tb = Testbed(vram_size=1 << 28)
    a = tb.alloc(1 << 16)
    windows = TierWindows()
    windows.for_dispatch(tb.mmu, VMID)
    assert windows.add(tb.mmu, VMID, a + 64, a + 128)
    assert windows.add(tb.mmu, VMID, a, a + 4, "write")
    assert len(windows.views) == 1
    assert windows.table[0].tolist()[:2] == [a, a + (1 << 16)] and windows.table[0, 3] == WIN_READ | WIN_WRITE
    assert windows.covered(a, a + 16, WIN_WRITE) and windows.covered(a, a + 16, WIN_READ)


def test_a_system_buffer_added_or_removed_retires_every_window():
    from simgpu.mem.windows import TierWindows
    tb = Testbed(vram_size=1 << 28)
    a = tb.alloc(1 << 16)
    windows = TierWindows()
    windows.for_dispatch(tb.mmu, VMID)
    windows.add(tb.mmu, VMID, a, a + 64)
    windows.for_dispatch(tb.mmu, VMID)
    assert len(windows.views) == 1
    tb.phys.add_system(1 << 40, np.zeros(4096, np.uint8))
    windows.for_dispatch(tb.mmu, VMID)
    assert len(windows.views) == 0
    windows.add(tb.mmu, VMID, a, a + 64)
    tb.phys.remove_system(1 << 40)
    windows.for_dispatch(tb.mmu, VMID)
    assert len(windows.views) == 0


class _TwoViews:
    """A memory whose pages at VAs 0x10000.. and 0x90000.. are one buffer (an alias), 0x50000.. another."""

    def __init__(self):
        self.buf, self.other = np.zeros(1 << 16, np.uint8), np.zeros(1 << 16, np.uint8)

    def linear_window(self, vmid, va, nbytes, access):
        base = va & ~0xFFFF
        return base, (self.other if base == 0x50000 else self.buf)

    def invalidated_since(self, generation):
        return []


def test_windows_reaching_one_memory_through_two_vas_are_aliased_until_one_goes():
    """TierWindows.aliased (a fused batch compares VAs: it holds only while equal memory means equal VA), kept as
    rows are added one at a time and as a dispatch's translation changes retire them."""
    from simgpu.mem.windows import TierWindows
    mem, windows = _TwoViews(), TierWindows()
    windows.for_dispatch(mem, VMID)
    assert windows.add(mem, VMID, 0x10000, 0x10040) and windows.add(mem, VMID, 0x50000, 0x50040)
    assert not windows.aliased()
    assert windows.add(mem, VMID, 0x10100, 0x10200, "write") and not windows.aliased()  # the same VAs: one row
    assert windows.add(mem, VMID, 0x90000, 0x90004) and windows.aliased()
    mem.invalidated_since = lambda generation: [(VMID, (0x90000, 0x90004))]
    windows.for_dispatch(mem, VMID)
    assert len(windows.views) == 2 and not windows.aliased()
    windows.add(mem, VMID, 0x90000, 0x90004)
    mem.invalidated_since = lambda generation: [(VMID, (0x50000, 0x50004))]
    windows.for_dispatch(mem, VMID)
    assert len(windows.views) == 2 and windows.aliased()  # the alias's two rows stay
    mem.invalidated_since = lambda generation: [(None, None)]
    windows.for_dispatch(mem, VMID)
    assert not windows.views and not windows.aliased()
