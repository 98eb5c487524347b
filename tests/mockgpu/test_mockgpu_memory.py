"""The mock driver's per-GPU VM: mapped() answers exactly what the page tables say, for every page."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockgpu.memory import PAGE, VM, Allocation
from runtime.uapi import kfd
from simgpu.fault import HardwareFault
from simgpu.gpu import GPU

BASE = 0x1000_0000
VMID = 8
RW = kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | kfd.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
EXECUTABLE = kfd.KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE


def _vm_with(ranges: list[tuple[int, int]], unmapped: set[int] = frozenset()) -> VM:
    """A VM with allocations of (first page, pages) at BASE; those whose index is in `unmapped` are unmapped
    again after mapping."""
    vm = VM(GPU(1 << 30), VMID)
    allocs = []
    for i, (first, pages) in enumerate(ranges):
        a = Allocation(i + 1, 0, "vram", BASE + first * PAGE, pages * PAGE, RW, pa=(16 << 20) + first * PAGE)
        vm.map(a, a.pa, False)
        allocs.append(a)
    for i in unmapped:
        vm.unmap(allocs[i])
    return vm


def _walk(vm: VM, va: int, nbytes: int) -> bool:
    """The oracle: a page-table walk for every page of the range."""
    pages = range(va // PAGE, (va + max(nbytes, 1) - 1) // PAGE + 1)
    return all(not isinstance(vm.gpu.mmu.walk(vm.vmid, p * PAGE), str) for p in pages)


def test_a_hole_between_two_large_buffers_is_seen():
    # 600 + 1 unmapped + 600 pages: a check of every 512th page missed the hole at page 600.
    vm = _vm_with([(0, 600), (601, 600)])
    assert vm.mapped(BASE, 600 * PAGE) and vm.mapped(BASE + 601 * PAGE, 600 * PAGE)
    assert not vm.mapped(BASE, 1201 * PAGE) and not _walk(vm, BASE, 1201 * PAGE)
    assert not vm.mapped(BASE + 599 * PAGE, 2 * PAGE)


def test_adjacent_buffers_map_one_range_and_unmapping_splits_it():
    vm = _vm_with([(0, 4), (4, 4), (8, 4)], unmapped={1})
    assert vm.mapped(BASE, 4 * PAGE) and not vm.mapped(BASE, 5 * PAGE)
    vm2 = _vm_with([(0, 4), (4, 4), (8, 4)])
    assert vm2.mapped(BASE, 12 * PAGE) and not vm2.mapped(BASE, 12 * PAGE + 1)
    assert not vm2.mapped(BASE - 1, 2) and vm2.mapped(BASE + 12 * PAGE - 1)


@st.composite
def layouts(draw):
    ranges, page = [], 0
    for _ in range(draw(st.integers(0, 6))):
        page += draw(st.integers(0, 3))
        pages = draw(st.sampled_from([1, 2, 5, 511, 513, 1024]))
        ranges.append((page, pages))
        page += pages
    unmapped = draw(st.sets(st.integers(0, max(len(ranges) - 1, 0)), max_size=2)) if ranges else set()
    return ranges, unmapped, page


@settings(max_examples=60, deadline=None)
@given(layout=layouts(), data=st.data())
def test_mapped_agrees_with_a_walk_of_every_page(layout, data):
    ranges, unmapped, top = layout
    vm = _vm_with(ranges, unmapped)
    for _ in range(8):
        va = BASE - PAGE + data.draw(st.integers(0, (top + 2) * PAGE))
        nbytes = data.draw(st.integers(0, (top + 2) * PAGE))
        assert vm.mapped(va, nbytes) == _walk(vm, va, nbytes), (va, nbytes)


@pytest.mark.parametrize("flags, write, execute", [(kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM, False, False), (RW, True, False),
                                                   (RW | EXECUTABLE, True, True),
                                                   (kfd.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | EXECUTABLE, False, True)])
def test_page_permissions_follow_the_kfd_flags(flags, write, execute):
    vm = VM(GPU(1 << 30), VMID)
    vm.map(Allocation(1, 0, "vram", BASE, PAGE, flags, pa=16 << 20), 16 << 20, False)
    mmu = vm.gpu.mmu
    assert mmu.read(VMID, BASE, 4) == bytes(4)  # every mapping is readable
    for allowed, access in ((write, lambda: mmu.write(VMID, BASE, b"abcd")),
                            (execute, lambda: mmu.read(VMID, BASE, 4, access="execute"))):
        if allowed:
            access()
        else:
            with pytest.raises(HardwareFault, match="not permitted by the PTE"):
                access()
