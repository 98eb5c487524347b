"""MockOS driven directly: valid and invalid amdkfd ioctls give the kernel's errnos, never a Python
exception from inside the driver; hypothesis fuzzes argument buffers."""

import ctypes
import errno
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockgpu import MockOS
from runtime.os import MAP_ANONYMOUS, MAP_PRIVATE, MAP_SHARED, TOPOLOGY
from runtime.uapi import kfd

F = kfd


def call(m, fd, req, args):
    buf = args.pack()
    m.ioctl(fd, req, buf)
    return type(args).unpack(buf)


def errno_of(m, fd, req, args) -> int:
    with pytest.raises(OSError) as e:
        call(m, fd, req, args)
    return e.value.errno


@pytest.fixture
def drv():
    m = MockOS(devices=2, vram_size=1 << 30)
    fd = m.open("/dev/kfd")
    drm = m.open("/dev/dri/renderD128")
    gid = int(m.read_text(f"{TOPOLOGY}/nodes/1/gpu_id"))
    call(m, fd, F.AMDKFD_IOC_ACQUIRE_VM, F.kfd_ioctl_acquire_vm_args(drm_fd=drm, gpu_id=gid))
    host = m.mmap(-1, 1 << 16, 3, MAP_PRIVATE | MAP_ANONYMOUS)
    return m, fd, drm, gid, host


RW_VRAM = F.KFD_IOC_ALLOC_MEM_FLAGS_VRAM | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE


def alloc(m, fd, gid, va=0x10000000, size=1 << 16, flags=RW_VRAM):
    return call(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU,
                F.kfd_ioctl_alloc_memory_of_gpu_args(va_addr=va, size=size, gpu_id=gid, flags=flags))


def map_(m, fd, host, handle, ids, unmap=False):
    struct.pack_into(f"<{len(ids)}I", host.view, 0, *ids)
    cls = F.kfd_ioctl_unmap_memory_from_gpu_args if unmap else F.kfd_ioctl_map_memory_to_gpu_args
    req = F.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU if unmap else F.AMDKFD_IOC_MAP_MEMORY_TO_GPU
    return call(m, fd, req, cls(handle=handle, device_ids_array_ptr=host.addr, n_devices=len(ids)))


def test_version_topology_and_apertures(drv):
    m, fd, _, gid, host = drv
    v = call(m, fd, F.AMDKFD_IOC_GET_VERSION, F.kfd_ioctl_get_version_args())
    assert (v.major_version, v.minor_version) >= (1, 14)
    assert m.listdir(f"{TOPOLOGY}/nodes") == ["0", "1", "2"]
    props = m.read_text(f"{TOPOLOGY}/nodes/1/properties")
    assert "gfx_target_version 110000" in props and "wave_front_size 32" in props
    assert m.exists(f"{TOPOLOGY}/nodes/2/mem_banks/0/properties") and m.exists("/dev/dri/renderD129")
    n = call(m, fd, F.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, F.kfd_ioctl_get_process_apertures_new_args())
    assert n.num_of_nodes == 2
    call(m, fd, F.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, F.kfd_ioctl_get_process_apertures_new_args(
        kfd_process_device_apertures_ptr=host.addr, num_of_nodes=2))
    ap = F.kfd_process_device_apertures.unpack(host.view)
    assert ap.gpu_id == gid and ap.gpuvm_limit > ap.gpuvm_base
    assert errno_of(m, fd, F.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, F.kfd_ioctl_get_process_apertures_new_args(
        kfd_process_device_apertures_ptr=0x1234, num_of_nodes=2)) == errno.EFAULT


def test_alloc_map_mmap_and_page_tables(drv):
    m, fd, drm, gid, host = drv
    a = alloc(m, fd, gid)
    map_(m, fd, host, a.handle, [gid])
    mp = m.mmap(drm, 1 << 16, 3, MAP_SHARED, a.mmap_offset)
    mp.view[:4] = b"\x01\x02\x03\x04"
    gpu = m.simulator(gid)
    assert gpu.mmu.read(8, 0x10000000, 4) == b"\x01\x02\x03\x04"  # zero-copy: the GPU sees the CPU store
    map_(m, fd, host, a.handle, [gid], unmap=True)
    assert isinstance(gpu.mmu.walk(8, 0x10000000), str)  # PTE cleared
    call(m, fd, F.AMDKFD_IOC_FREE_MEMORY_OF_GPU, F.kfd_ioctl_free_memory_of_gpu_args(handle=a.handle))


def test_memory_errnos(drv):
    m, fd, drm, gid, host = drv
    V = F.KFD_IOC_ALLOC_MEM_FLAGS_VRAM
    args = F.kfd_ioctl_alloc_memory_of_gpu_args
    assert errno_of(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(va_addr=1 << 28, size=0, gpu_id=gid, flags=V)) \
        == errno.EINVAL
    assert errno_of(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(va_addr=1 << 28, size=4096, gpu_id=1, flags=V)) \
        == errno.EINVAL
    assert errno_of(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(va_addr=1 << 28, size=4096, gpu_id=gid,
                                                                  flags=V | 2)) == errno.EINVAL
    assert errno_of(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(va_addr=1 << 28, size=1 << 34, gpu_id=gid,
                                                                  flags=V)) == errno.ENOMEM
    for huge in (1 << 40, (1 << 64) - 4096):  # more than the device has: ENOMEM, as amdkfd's memory limit says
        for kind in (V, F.KFD_IOC_ALLOC_MEM_FLAGS_GTT):
            assert errno_of(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(va_addr=1 << 28, size=huge, gpu_id=gid,
                                                                          flags=kind)) == errno.ENOMEM
    assert errno_of(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(
        va_addr=1 << 28, size=4096, gpu_id=gid, flags=F.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, mmap_offset=0x5000)) \
        == errno.EFAULT
    other = int(m.read_text(f"{TOPOLOGY}/nodes/2/gpu_id"))  # VM of the second GPU never acquired
    assert errno_of(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(va_addr=1 << 28, size=4096, gpu_id=other,
                                                                  flags=V)) == errno.EINVAL
    a = alloc(m, fd, gid)
    assert errno_of(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(va_addr=0x10000000, size=4096, gpu_id=gid,
                                                                  flags=V)) == errno.EINVAL  # overlap
    with pytest.raises(OSError) as e:
        map_(m, fd, host, a.handle, [gid], unmap=True)  # not mapped
    assert e.value.errno == errno.EINVAL
    bad_ptr = F.kfd_ioctl_map_memory_to_gpu_args(handle=a.handle, device_ids_array_ptr=0x10, n_devices=1)
    assert errno_of(m, fd, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU, bad_ptr) == errno.EFAULT
    free = F.kfd_ioctl_free_memory_of_gpu_args(handle=a.handle)
    call(m, fd, F.AMDKFD_IOC_FREE_MEMORY_OF_GPU, free)
    assert errno_of(m, fd, F.AMDKFD_IOC_FREE_MEMORY_OF_GPU, free) == errno.EINVAL  # double free
    with pytest.raises(OSError) as e:
        m.mmap(drm, 4096, 3, MAP_SHARED, a.mmap_offset)  # freed buffer
    assert e.value.errno == errno.EINVAL
    # amdkfd rounds a size that is not page-aligned up to whole pages
    odd = call(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(va_addr=1 << 30, size=0x100, gpu_id=gid, flags=V))
    assert m.process.allocs[odd.handle].size == 4096
    # USERPTR over host memory works
    u = call(m, fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, args(
        va_addr=0x20000000, size=4096, gpu_id=gid,
        flags=F.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
        mmap_offset=host.addr + 4096))
    map_(m, fd, host, u.handle, [gid])
    host.view[4096:4100] = b"abcd"
    assert m.simulator(gid).mmu.read(8, 0x20000000, 4) == b"abcd"  # the GPU reads the host pages


def test_fd_errors(drv):
    m, fd, drm, gid, host = drv
    v = F.kfd_ioctl_get_version_args()
    assert errno_of(m, 9999, F.AMDKFD_IOC_GET_VERSION, v) in (errno.EBADF,)
    assert errno_of(m, drm, F.AMDKFD_IOC_GET_VERSION, v) == errno.ENOTTY  # a KFD ioctl on the render node
    assert errno_of(m, fd, 0xC0086401, v) == errno.ENOTTY  # not an amdkfd request
    assert errno_of(m, fd, (3 << 30) | (8 << 16) | (ord("K") << 8) | 0x0D, v) == errno.EINVAL  # DBG_REGISTER
    with pytest.raises(OSError) as e:
        m.ioctl(fd, F.AMDKFD_IOC_GET_VERSION, bytearray(2))
    assert e.value.errno == errno.EFAULT
    m.close(fd)
    assert errno_of(m, fd, F.AMDKFD_IOC_GET_VERSION, v) == errno.EBADF
    with pytest.raises(OSError) as e:
        m.close(fd)
    assert e.value.errno == errno.EBADF
    with pytest.raises(OSError) as e:
        m.open("/dev/nope")
    assert e.value.errno == errno.ENOENT
    acq = F.kfd_ioctl_acquire_vm_args(drm_fd=12345, gpu_id=gid)
    assert errno_of(m, m.open("/dev/kfd"), F.AMDKFD_IOC_ACQUIRE_VM, acq) == errno.EINVAL


def test_queues_events_and_doorbells(drv):
    m, fd, drm, gid, host = drv
    a = alloc(m, fd, gid, flags=F.KFD_IOC_ALLOC_MEM_FLAGS_GTT | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE)
    map_(m, fd, host, a.handle, [gid])
    cq = F.kfd_ioctl_create_queue_args(ring_base_address=0x10000000, ring_size=4096, gpu_id=gid,
                                       queue_type=F.KFD_IOC_QUEUE_TYPE_SDMA, queue_percentage=100,
                                       read_pointer_address=0x10008000, write_pointer_address=0x10008008)
    q = call(m, fd, F.AMDKFD_IOC_CREATE_QUEUE, cq)
    for field, value in (("ring_size", 1000), ("queue_type", 9), ("queue_priority", 16),
                         ("read_pointer_address", 0x30000000), ("ring_base_address", 0x10000010)):
        bad = F.kfd_ioctl_create_queue_args.unpack(cq.pack())
        setattr(bad, field, value)
        # an unknown queue type is the kernel's ENOTSUPP (524), as amdkfd's set_queue_properties_from_user returns it
        want = 524 if field == "queue_type" else errno.EINVAL
        assert errno_of(m, fd, F.AMDKFD_IOC_CREATE_QUEUE, bad) == want, field
    ev = call(m, fd, F.AMDKFD_IOC_CREATE_EVENT, F.kfd_ioctl_create_event_args(event_type=0, auto_reset=1))
    # Ring the doorbell with an SDMA TRAP carrying the event id: WAIT_EVENTS completes.
    from simgpu.hw import sdma
    mp = m.mmap(drm, 1 << 16, 3, MAP_SHARED, a.mmap_offset)
    words = sdma.trap(ev.event_id)
    struct.pack_into(f"<{len(words)}I", mp.view, 0, *words)
    db = m.mmap(fd, 8192, 3, MAP_SHARED, q.doorbell_offset & ~0x1FFF)
    m.mmio_write(db, q.doorbell_offset & 0x1FFF, 4 * len(words), 8)
    evd = F.kfd_event_data(event_id=ev.event_id)
    host.view[:48] = bytes(evd)
    w = F.kfd_ioctl_wait_events_args(events_ptr=host.addr, num_events=1, timeout=10)
    assert call(m, fd, F.AMDKFD_IOC_WAIT_EVENTS, w).wait_result == F.KFD_IOC_WAIT_RESULT_COMPLETE
    assert call(m, fd, F.AMDKFD_IOC_WAIT_EVENTS, w).wait_result == F.KFD_IOC_WAIT_RESULT_TIMEOUT  # auto-reset
    call(m, fd, F.AMDKFD_IOC_SET_EVENT, F.kfd_ioctl_set_event_args(event_id=ev.event_id))
    assert call(m, fd, F.AMDKFD_IOC_WAIT_EVENTS, w).wait_result == F.KFD_IOC_WAIT_RESULT_COMPLETE
    for req, cls in ((F.AMDKFD_IOC_SET_EVENT, F.kfd_ioctl_set_event_args),
                     (F.AMDKFD_IOC_RESET_EVENT, F.kfd_ioctl_reset_event_args),
                     (F.AMDKFD_IOC_DESTROY_EVENT, F.kfd_ioctl_destroy_event_args)):
        assert errno_of(m, fd, req, cls(event_id=777)) == errno.EINVAL
    host.view[:48] = bytes(F.kfd_event_data(event_id=777))
    assert errno_of(m, fd, F.AMDKFD_IOC_WAIT_EVENTS, w) == errno.EINVAL
    w.events_ptr = 0x42
    assert errno_of(m, fd, F.AMDKFD_IOC_WAIT_EVENTS, w) == errno.EFAULT
    # UPDATE_QUEUE re-points the idle queue at another ring; its pointers keep counting.
    up = F.kfd_ioctl_update_queue_args(queue_id=q.queue_id, ring_base_address=0x10002000, ring_size=4096,
                                       queue_percentage=100)
    call(m, fd, F.AMDKFD_IOC_UPDATE_QUEUE, up)
    first = 4 * len(words)
    struct.pack_into(f"<{len(words)}I", mp.view, 0x2000 + first, *words)
    m.mmio_write(db, q.doorbell_offset & 0x1FFF, 2 * first, 8)
    w.events_ptr, host.view[:48] = host.addr, bytes(evd)
    assert call(m, fd, F.AMDKFD_IOC_WAIT_EVENTS, w).wait_result == F.KFD_IOC_WAIT_RESULT_COMPLETE
    assert m.simulator(gid).queues[0].ring_base == 0x10002000 and m.simulator(gid).queues[0].rptr == 2 * first
    up.ring_size = 1000
    assert errno_of(m, fd, F.AMDKFD_IOC_UPDATE_QUEUE, up) == errno.EINVAL
    d = F.kfd_ioctl_destroy_queue_args(queue_id=q.queue_id)
    call(m, fd, F.AMDKFD_IOC_DESTROY_QUEUE, d)
    assert errno_of(m, fd, F.AMDKFD_IOC_DESTROY_QUEUE, d) == errno.EINVAL
    assert errno_of(m, fd, F.AMDKFD_IOC_UPDATE_QUEUE, F.kfd_ioctl_update_queue_args(queue_id=q.queue_id)) \
        == errno.EINVAL


def test_misc_ioctls(drv):
    m, fd, _, gid, _ = drv
    c = call(m, fd, F.AMDKFD_IOC_GET_CLOCK_COUNTERS, F.kfd_ioctl_get_clock_counters_args(gpu_id=gid))
    assert c.system_clock_freq == 1_000_000_000
    assert call(m, fd, F.AMDKFD_IOC_AVAILABLE_MEMORY, F.kfd_ioctl_get_available_memory_args(gpu_id=gid)).available
    assert errno_of(m, fd, F.AMDKFD_IOC_AVAILABLE_MEMORY, F.kfd_ioctl_get_available_memory_args(gpu_id=3)) \
        == errno.EINVAL
    assert errno_of(m, fd, F.AMDKFD_IOC_SET_XNACK_MODE, F.kfd_ioctl_set_xnack_mode_args(xnack_enabled=1)) \
        == errno.EPERM
    assert call(m, fd, F.AMDKFD_IOC_SET_XNACK_MODE, F.kfd_ioctl_set_xnack_mode_args(xnack_enabled=-1)) \
        .xnack_enabled == 0
    call(m, fd, F.AMDKFD_IOC_RUNTIME_ENABLE, F.kfd_ioctl_runtime_enable_args(mode_mask=1))
    assert errno_of(m, fd, F.AMDKFD_IOC_RUNTIME_ENABLE, F.kfd_ioctl_runtime_enable_args(mode_mask=1)) == errno.EBUSY
    assert errno_of(m, fd, F.AMDKFD_IOC_SET_MEMORY_POLICY, F.kfd_ioctl_set_memory_policy_args(
        gpu_id=gid, default_policy=5)) == errno.EINVAL
    call(m, fd, F.AMDKFD_IOC_SET_SCRATCH_BACKING_VA, F.kfd_ioctl_set_scratch_backing_va_args(gpu_id=gid))


KNOWN = [F.AMDKFD_IOC_CREATE_QUEUE, F.AMDKFD_IOC_DESTROY_QUEUE, F.AMDKFD_IOC_UPDATE_QUEUE,
         F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, F.AMDKFD_IOC_FREE_MEMORY_OF_GPU, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU,
         F.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, F.AMDKFD_IOC_CREATE_EVENT, F.AMDKFD_IOC_WAIT_EVENTS,
         F.AMDKFD_IOC_SET_EVENT, F.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, F.AMDKFD_IOC_ACQUIRE_VM,
         F.AMDKFD_IOC_SET_XNACK_MODE, F.AMDKFD_IOC_GET_CLOCK_COUNTERS, F.AMDKFD_IOC_RUNTIME_ENABLE]
_FUZZ = MockOS(devices=1, vram_size=1 << 28, user=False)  # random pointers must not reach our memory
_FUZZ_FD = _FUZZ.open("/dev/kfd")


@settings(max_examples=300, deadline=None)
@given(req=st.one_of(st.sampled_from(KNOWN), st.integers(0, (1 << 32) - 1)), data=st.binary(max_size=128),
       fd=st.sampled_from([_FUZZ_FD, _FUZZ_FD, 5]))
def test_fuzzed_ioctls_only_raise_oserror_with_kernel_errnos(req, data, fd):
    buf = bytearray(data)
    try:
        _FUZZ.ioctl(fd, req, buf)
    except OSError as e:
        assert e.errno in (errno.EINVAL, errno.EFAULT, errno.ENOMEM, errno.EBADF, errno.ENOENT, errno.ENOTTY,
                           errno.EBUSY, errno.EPERM, errno.ENOSPC), e
    assert ctypes.sizeof(F.kfd_ioctl_create_queue_args) == 96


def test_bad_user_pointers_are_efault_in_every_ioctl_that_takes_one():
    """Issue 27, item 6: a pointer of 2^63 and more, the kernel half, a range past the end of user space (access_ok)
    and unmapped ones are EFAULT, as amdkfd's copy_from_user / copy_to_user give (tests/wiring/test_run.py: the same
    under `simgpu run`)."""
    from tests.mockgpu.pointer_checks import errnos, expected
    assert errnos(MockOS(devices=1, vram_size=1 << 28)) == expected()


@pytest.mark.parametrize("flags", [RW_VRAM, F.KFD_IOC_ALLOC_MEM_FLAGS_GTT | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE],
                         ids=["vram", "gtt"])
def test_a_large_buffer_maps_as_2mib_fragments_after_a_small_one(drv, flags):
    """Issue 29: physical pages placed at the VA's alignment (up to 2 MiB, as amdgpu's VRAM manager gives large
    buffers 2 MiB blocks), so MAP_MEMORY_TO_GPU writes one entry per 2 MiB, not one per 4 KiB page (25,000 PTE
    writes, a third of a second, for one tinygrad test). The walk is the oracle: every page of the buffer still
    translates to its own byte of the buffer, and a CPU store through the render node is what the GPU reads."""
    m, fd, drm, gid, host = drv
    small = alloc(m, fd, gid, va=0x10000000, size=1 << 12, flags=flags)  # first fit would now start off-alignment
    big = alloc(m, fd, gid, va=0x10200000, size=4 << 20, flags=flags)
    for a in (small, big):
        map_(m, fd, host, a.handle, [gid])
    gpu = m.simulator(gid)
    leaves = [gpu.mmu.walk(8, 0x10200000 + off) for off in range(0, 4 << 20, 1 << 12)]
    assert all(leaf.log2 >= 9 for leaf in leaves)  # 2 MiB fragments (or larger)
    bases = {leaf.pa_page - (leaf.va_page - 0x10200) for leaf in leaves}  # one contiguous physical range
    assert len(bases) == 1
    mp = m.mmap(drm, 4 << 20, 3, MAP_SHARED, big.mmap_offset)
    mp.view[(3 << 20) + 12:(3 << 20) + 16] = b"frag"
    assert gpu.mmu.read(8, 0x10200000 + (3 << 20) + 12, 4) == b"frag"
    assert gpu.mmu.walk(8, 0x10000000).log2 == 0  # the small buffer keeps its single page



@pytest.mark.parametrize("flags", [RW_VRAM, F.KFD_IOC_ALLOC_MEM_FLAGS_GTT | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE],
                         ids=["vram", "gtt"])
def test_a_large_buffer_at_a_page_aligned_va_maps_as_large_fragments(drv, flags):
    """A buffer whose VA is only page-aligned (tinygrad maps a buffer where its own mmap landed) is placed at the
    same offset within 2 MiB as its VA, so it maps as growing fragments up to the first 2 MiB boundary, 2 MiB
    pages after it and shrinking ones to its end -- not a PTE per page (48,829 page-table writes for one 200 MB
    buffer of tinygrad's test_hcq). The walk is the oracle: each page translates to its own byte of the buffer
    (one physical base for all), and a CPU store through the render node is what the GPU reads there."""
    m, fd, drm, gid, host = drv
    va, size = 0x10203000, (6 << 20) + 0x5000
    big = alloc(m, fd, gid, va=va, size=size, flags=flags)
    map_(m, fd, host, big.handle, [gid])
    gpu = m.simulator(gid)
    leaves = [gpu.mmu.walk(8, va + off) for off in range(0, size, 1 << 12)]
    assert len({leaf.pa_page - leaf.va_page for leaf in leaves}) == 1  # one contiguous physical range
    middle = [leaf for leaf in leaves if 0x10400000 <= leaf.va_page << 12 < 0x10800000]
    assert len(middle) == 1024 and all(leaf.log2 >= 9 for leaf in middle)  # 2 MiB pages between the boundaries
    assert leaves[-1].log2 >= 2  # the tail past the last boundary: a large fragment (0x5000 bytes: 4 + 1 pages)
    mp = m.mmap(drm, size, 3, MAP_SHARED, big.mmap_offset)
    mp.view[size - 8:size - 4] = b"frag"
    assert gpu.mmu.read(8, va + size - 8, 4) == b"frag"


def test_fragment_alignment_never_turns_free_room_into_enomem():
    """Exactly 2 MiB free, starting off-alignment: a 2 MiB buffer at a 2 MiB-aligned VA still fits there
    (page-aligned, small fragments), and where it fits aligned it is placed aligned."""
    from mockgpu.kfd_memory import _place
    from mockgpu.memory import RangeAllocator
    assert _place(RangeAllocator(0x1000, 0x201000), 2 << 20, 0x40000000) == 0x1000
    assert _place(RangeAllocator(0x1000, 0x401000), 2 << 20, 0x40000000) == 0x200000
    assert _place(RangeAllocator(0x1000, 0x401000), 2 << 20, 0x40001000) == 0x1000  # the VA's offset in 2 MiB
    assert _place(RangeAllocator(0x1000, 0x401000), 2 << 20, 0x40043000) == 0x43000
    assert _place(RangeAllocator(0x1000, 0x201000), 2 << 20, 0x40043000) == 0x1000  # only page-aligned fits
