"""MockOS driven the way clients we did not write drive amdkfd (tinygrad's KFD interface, libhsakmt): ioctl pointer
arguments in the caller's real memory, USERPTR over real pages, CPU address = GPU address through MAP_FIXED, a
doorbell rung by a plain store, peer VRAM, and WAIT_EVENTS that really waits for another thread's store."""

import ctypes
import errno
import struct
import subprocess
import sys
import threading
import time

import pytest

from mockgpu import MockOS
from runtime.os import MAP_ANONYMOUS, MAP_FIXED, MAP_NORESERVE, MAP_PRIVATE, MAP_SHARED, PROT_NONE, TOPOLOGY
from runtime.uapi import amdgpu_drm as D
from runtime.uapi import kfd as F
from simgpu.hw import pm4, sdma
from simgpu.mem import shared

RW = 3
VMID = 8


def call(m, fd, req, args):
    """fcntl.ioctl-style: the argument is a ctypes struct the driver updates in place."""
    buf = bytearray(bytes(args))
    m.ioctl(fd, req, buf)
    ctypes.memmove(ctypes.addressof(args), bytes(buf), len(buf))
    return args


def errno_of(m, fd, req, args) -> int:
    with pytest.raises(OSError) as e:
        call(m, fd, req, args)
    return e.value.errno


class Client:
    """A process's amdkfd context on a MockOS, with every pointer argument in real ctypes memory."""

    def __init__(self, devices: int = 1):
        self.m = MockOS(devices=devices, vram_size=1 << 30)
        self.kfd = self.m.open("/dev/kfd")
        self.gpus = []
        for node in range(1, devices + 1):
            gid = int(self.m.read_text(f"{TOPOLOGY}/nodes/{node}/gpu_id"))
            drm = self.m.open(f"/dev/dri/renderD{127 + node}")
            call(self.m, self.kfd, F.AMDKFD_IOC_ACQUIRE_VM, F.kfd_ioctl_acquire_vm_args(drm_fd=drm, gpu_id=gid))
            self.gpus.append((gid, drm))

    def reserve(self, size: int) -> int:
        """A CPU address range of this process, reserved as tinygrad does (PROT_NONE, no memory behind it)."""
        return shared.mmap(None, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)

    def alloc(self, size: int, flags: int, gpu: int = 0, va: int | None = None, userptr: int = 0):
        gid, _ = self.gpus[gpu]
        va = self.reserve(size) if va is None else va
        return call(self.m, self.kfd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, F.kfd_ioctl_alloc_memory_of_gpu_args(
            va_addr=va, size=size, gpu_id=gid, flags=flags | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, mmap_offset=userptr))

    def map(self, mem, gpus=(0,)):
        ids = (ctypes.c_uint32 * len(gpus))(*(self.gpus[g][0] for g in gpus))  # a pointer into our own heap
        a = call(self.m, self.kfd, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU, F.kfd_ioctl_map_memory_to_gpu_args(
            handle=mem.handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=len(gpus)))
        assert a.n_success == len(gpus)

    def cpu_map(self, mem, gpu: int = 0) -> int:
        """mmap the buffer at its GPU VA with MAP_FIXED, as tinygrad does; the address must come back."""
        m = self.m.mmap(self.gpus[gpu][1], mem.size, RW, MAP_SHARED | MAP_FIXED, mem.mmap_offset, mem.va_addr)
        assert m.addr == mem.va_addr
        return m.addr

    def gpu(self, gpu: int = 0):
        return self.m.simulator(self.gpus[gpu][0])


def test_pointer_arguments_in_real_memory():
    c = Client()
    gid, drm = c.gpus[0]
    ap = (F.kfd_process_device_apertures * 1)()
    call(c.m, c.kfd, F.AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, F.kfd_ioctl_get_process_apertures_new_args(
        kfd_process_device_apertures_ptr=ctypes.addressof(ap), num_of_nodes=1))
    assert ap[0].gpu_id == gid and ap[0].gpuvm_limit > ap[0].gpuvm_base
    info = D.drm_amdgpu_info_device()
    c.m.ioctl(drm, D.DRM_IOCTL_AMDGPU_INFO, bytearray(bytes(D.drm_amdgpu_info(
        return_pointer=ctypes.addressof(info), return_size=ctypes.sizeof(info), query=D.AMDGPU_INFO_DEV_INFO))))
    assert info.device_id == 0x744C
    mem = c.alloc(1 << 16, F.KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
    c.map(mem)
    ev = call(c.m, c.kfd, F.AMDKFD_IOC_CREATE_EVENT, F.kfd_ioctl_create_event_args(event_type=0, auto_reset=1))
    call(c.m, c.kfd, F.AMDKFD_IOC_SET_EVENT, F.kfd_ioctl_set_event_args(event_id=ev.event_id))
    arr = (F.kfd_event_data * 1)(F.kfd_event_data(event_id=ev.event_id))
    w = call(c.m, c.kfd, F.AMDKFD_IOC_WAIT_EVENTS, F.kfd_ioctl_wait_events_args(
        events_ptr=ctypes.addressof(arr), num_events=1, timeout=0))
    assert w.wait_result == F.KFD_IOC_WAIT_RESULT_COMPLETE
    # pointers the caller does not own are EFAULT, not a crash: unmapped, and a reserved PROT_NONE range
    for bad in (0x10, c.reserve(4096)):
        assert errno_of(c.m, c.kfd, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU, F.kfd_ioctl_map_memory_to_gpu_args(
            handle=mem.handle, device_ids_array_ptr=bad, n_devices=1)) == errno.EFAULT
        assert errno_of(c.m, c.kfd, F.AMDKFD_IOC_WAIT_EVENTS, F.kfd_ioctl_wait_events_args(
            events_ptr=bad, num_events=1)) == errno.EFAULT


def test_userptr_pages_are_shared_by_the_cpu_and_the_gpu():
    c = Client()
    size = 3 * 4096
    host = shared.mmap(None, size, RW, MAP_SHARED | MAP_ANONYMOUS)  # tinygrad's host buffers
    ctypes.memmove(host + 4096, b"before", 6)
    mem = c.alloc(size, F.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, userptr=host)
    c.map(mem)
    mmu = c.gpu().mmu
    assert mmu.read(VMID, mem.va_addr + 4096, 6) == b"before"  # the contents were kept
    ctypes.memmove(host + 8, b"cpu", 3)
    assert mmu.read(VMID, mem.va_addr + 8, 3) == b"cpu"  # a later CPU store, seen by the GPU
    mmu.write(VMID, mem.va_addr + 16, b"gpu")
    assert ctypes.string_at(host + 16, 3) == b"gpu"  # and the other way
    assert errno_of(c.m, c.kfd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, F.kfd_ioctl_alloc_memory_of_gpu_args(
        va_addr=c.reserve(4096), size=4096, gpu_id=c.gpus[0][0], flags=F.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR,
        mmap_offset=c.reserve(4096))) == errno.EFAULT  # PROT_NONE pages are not the caller's memory


def test_a_userptr_at_a_freed_userptrs_address_shares_the_new_pages():
    """tinygrad frees a host buffer (USERPTR), unmaps its pages and maps fresh ones at the same address for the
    next: the GPU must see the new pages, not the freed buffer's (issue 26 item 4: test_hcq's
    small_copies_from_host_buf_transfer copied 255, the last byte of the previous test's host buffer)."""
    c = Client()
    host = shared.mmap(None, 4096, RW, MAP_SHARED | MAP_ANONYMOUS)
    ctypes.memset(host, 255, 4096)
    old = c.alloc(4096, F.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, userptr=host)
    c.map(old)
    assert c.gpu().mmu.read(VMID, old.va_addr, 1) == b"\xff"
    call(c.m, c.kfd, F.AMDKFD_IOC_FREE_MEMORY_OF_GPU, F.kfd_ioctl_free_memory_of_gpu_args(handle=old.handle))
    assert shared.mmap(host, 4096, RW, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED) == host  # fresh (zero) pages
    new = c.alloc(4096, F.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, va=old.va_addr, userptr=host)
    c.map(new)
    ctypes.memset(host, 7, 1)
    assert c.gpu().mmu.read(VMID, new.va_addr, 2) == b"\x07\x00"


@pytest.mark.parametrize("kind", [F.KFD_IOC_ALLOC_MEM_FLAGS_VRAM, F.KFD_IOC_ALLOC_MEM_FLAGS_GTT])
def test_cpu_address_equals_gpu_address(kind):
    c = Client()
    mem = c.alloc(1 << 16, kind)
    c.map(mem)
    addr = c.cpu_map(mem)
    ctypes.memmove(addr + 100, b"plain store", 11)
    assert c.gpu().mmu.read(VMID, mem.va_addr + 100, 11) == b"plain store"
    c.gpu().mmu.write(VMID, mem.va_addr + 200, b"from the GPU")
    assert ctypes.string_at(addr + 200, 12) == b"from the GPU"


def test_a_doorbell_rung_by_a_plain_store_runs_the_queue():
    c = Client()
    ring = c.alloc(1 << 12, F.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
    ptrs = c.alloc(1 << 12, F.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
    for mem in (ring, ptrs):
        c.map(mem)
        c.cpu_map(mem)
    q = call(c.m, c.kfd, F.AMDKFD_IOC_CREATE_QUEUE, F.kfd_ioctl_create_queue_args(
        ring_base_address=ring.va_addr, ring_size=1 << 12, gpu_id=c.gpus[0][0], queue_type=F.KFD_IOC_QUEUE_TYPE_SDMA,
        queue_percentage=100, read_pointer_address=ptrs.va_addr, write_pointer_address=ptrs.va_addr + 8))
    words = sdma.fence(ptrs.va_addr + 64, 0xC0FFEE)
    ctypes.memmove(ring.va_addr, struct.pack(f"<{len(words)}I", *words), 4 * len(words))
    # the doorbell page as tinygrad maps it: a plain mmap of the /dev/kfd file at the page's offset
    page = q.doorbell_offset & ~0x1FFF
    bell = shared.mmap(None, 0x2000, RW, MAP_SHARED, c.m.devmem.fd, page)
    ctypes.c_uint64.from_address(bell + (q.doorbell_offset & 0x1FFF)).value = 4 * len(words)  # wptr stays 0
    assert c.m.progress()  # what the server's watcher (and every WAIT_EVENTS) does
    assert ctypes.c_uint32.from_address(ptrs.va_addr + 64).value == 0xC0FFEE


def test_peer_vram_is_mapped_through_the_owners_bar():
    c = Client(devices=2)
    mem = c.alloc(1 << 16, F.KFD_IOC_ALLOC_MEM_FLAGS_VRAM, gpu=0)
    c.map(mem, gpus=(0, 1))  # amdkfd maps one GPU's VRAM into another's VM (PCIe P2P / XGMI)
    c.gpu(0).mmu.write(VMID, mem.va_addr + 8, b"owner")
    assert c.gpu(1).mmu.read(VMID, mem.va_addr + 8, 5) == b"owner"
    c.gpu(1).mmu.write(VMID, mem.va_addr + 32, b"peer")
    assert c.gpu(0).mmu.read(VMID, mem.va_addr + 32, 4) == b"peer"
    ids = (ctypes.c_uint32 * 1)(c.gpus[1][0])
    call(c.m, c.kfd, F.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, F.kfd_ioctl_unmap_memory_from_gpu_args(
        handle=mem.handle, device_ids_array_ptr=ctypes.addressof(ids), n_devices=1))
    assert isinstance(c.gpu(1).mmu.walk(VMID, mem.va_addr), str)  # gone from the peer, still on the owner
    assert c.gpu(0).mmu.read(VMID, mem.va_addr + 8, 5) == b"owner"


def _blocked_queue(c: Client):
    """A PM4 queue waiting (WAIT_REG_MEM) on a CPU-written signal, then signalling the completion event."""
    ring = c.alloc(1 << 12, F.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
    ptrs = c.alloc(1 << 12, F.KFD_IOC_ALLOC_MEM_FLAGS_GTT)
    for mem in (ring, ptrs):
        c.map(mem)
        c.cpu_map(mem)
    ev = call(c.m, c.kfd, F.AMDKFD_IOC_CREATE_EVENT, F.kfd_ioctl_create_event_args(event_type=0, auto_reset=1))
    signal = ptrs.va_addr + 256
    words = pm4.wait_reg_mem(signal, 1, func=pm4.Compare.GE) + pm4.release_mem(
        ptrs.va_addr + 512, 7, data_sel=pm4.DataSel.DATA32, int_sel=pm4.IntSel.INT_AFTER_WRITE, ctx_id=ev.event_id)
    ctypes.memmove(ring.va_addr, struct.pack(f"<{len(words)}I", *words), 4 * len(words))
    q = call(c.m, c.kfd, F.AMDKFD_IOC_CREATE_QUEUE, F.kfd_ioctl_create_queue_args(
        ring_base_address=ring.va_addr, ring_size=1 << 12, gpu_id=c.gpus[0][0], queue_type=F.KFD_IOC_QUEUE_TYPE_COMPUTE,
        queue_percentage=100, read_pointer_address=ptrs.va_addr, write_pointer_address=ptrs.va_addr + 8))
    bell = c.m.mmap(c.kfd, 0x2000, RW, MAP_SHARED, q.doorbell_offset & ~0x1FFF)
    c.m.mmio_write(bell, q.doorbell_offset & 0x1FFF, len(words), 8)
    events = (F.kfd_event_data * 1)(F.kfd_event_data(event_id=ev.event_id))
    return signal, ptrs.va_addr + 512, events


def test_wait_events_waits_for_a_store_by_another_thread():
    c = Client()
    signal, done, events = _blocked_queue(c)
    setter = threading.Timer(0.05, lambda: setattr(ctypes.c_uint32.from_address(signal), "value", 1))
    t0 = time.monotonic()
    setter.start()
    w = call(c.m, c.kfd, F.AMDKFD_IOC_WAIT_EVENTS, F.kfd_ioctl_wait_events_args(
        events_ptr=ctypes.addressof(events), num_events=1, timeout=10_000))
    elapsed = time.monotonic() - t0
    setter.join()
    assert w.wait_result == F.KFD_IOC_WAIT_RESULT_COMPLETE and ctypes.c_uint32.from_address(done).value == 7
    assert 0.04 < elapsed < 5  # it waited for the store, and not for its whole timeout


def test_wait_events_times_out_after_its_timeout_while_another_thread_could_store():
    c = Client()
    _, done, events = _blocked_queue(c)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # another thread exists, but never stores
    other.start()
    try:
        t0 = time.monotonic()
        w = call(c.m, c.kfd, F.AMDKFD_IOC_WAIT_EVENTS, F.kfd_ioctl_wait_events_args(
            events_ptr=ctypes.addressof(events), num_events=1, timeout=100))
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        other.join()
    assert w.wait_result == F.KFD_IOC_WAIT_RESULT_TIMEOUT and elapsed >= 0.1
    assert ctypes.c_uint32.from_address(done).value == 0


_JIT_THREAD_WAIT = """
import threading, time
from simgpu.shader.jit import build
from tests.mockgpu.test_mockgpu_clients import F, Client, _blocked_queue, call
import ctypes
build.submit(None, None).exception()  # a compile of nothing fails at once; the JIT's pool thread stays, idle
assert [t.name for t in threading.enumerate()] == ["MainThread", "simgpu-jit_0"], threading.enumerate()
c = Client()
_, done, events = _blocked_queue(c)
t0 = time.monotonic()
w = call(c.m, c.kfd, F.AMDKFD_IOC_WAIT_EVENTS, F.kfd_ioctl_wait_events_args(
    events_ptr=ctypes.addressof(events), num_events=1, timeout=10_000))
print(w.wait_result == F.KFD_IOC_WAIT_RESULT_TIMEOUT, ctypes.c_uint32.from_address(done).value, time.monotonic() - t0)
"""


def test_wait_events_does_not_sleep_for_the_jits_idle_compile_thread():
    """The JIT's background compile thread stays after a compile, idle: it stores to no memory, so a wait nothing
    else can satisfy answers TIMEOUT at once (it slept its whole timeout while the thread lived). In a process of
    its own: a test process may hold other threads (in-process servers of earlier tests) that could store."""
    out = subprocess.run([sys.executable, "-c", _JIT_THREAD_WAIT], capture_output=True, text=True, check=True,
                         timeout=120).stdout.split()
    assert out[:2] == ["True", "0"] and float(out[2]) < 5, out
