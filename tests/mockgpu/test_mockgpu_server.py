"""The simgpu server (mockgpu/server.py) driven over its socket by a raw client written here: requests and the
server's questions about client memory, malformed messages, bad pointers, garbage in a ring, a client that dies
in the middle of a wait. Nothing a client sends takes the server down or leaves anything of the client behind."""

import ctypes
import errno
import io
import os
import socket
import struct
import threading
import time

import pytest

from mockgpu import MockOS, protocol
from mockgpu.server import Server
from runtime.os import TOPOLOGY
from runtime.uapi import kfd as F
from simgpu.mem import shared

RW = 3


class RawClient:
    """One connection; `memory` is what it answers the server's MEM_READ / MEM_WRITE with (address -> bytes)."""

    def __init__(self, path: str, pid: int = 4242):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(path)
        self.memory: dict[int, bytearray] = {}
        self.handles: dict[int, int] = {}  # "fd" we pretend to have -> server handle
        assert self.call(protocol.HELLO, (pid,))[0] == 0

    def call(self, kind, args=(), payload=b""):
        protocol.send(self.sock, kind, args, payload)
        while True:
            k, a, data, fd = protocol.recv(self.sock)
            if k == protocol.REPLY:
                return a[0], data, fd
            self._answer(k, a, data)

    def _answer(self, k, a, data):
        if k == protocol.MEM_READ:
            base = next((b for b, v in self.memory.items() if b <= a[0] and a[0] + a[1] <= b + len(v)), None)
            if base is None:
                protocol.send(self.sock, protocol.REPLY, (-errno.EFAULT,))
            else:
                protocol.send(self.sock, protocol.REPLY, (0,), bytes(self.memory[base][a[0] - base:a[0] - base + a[1]]))
        elif k == protocol.MEM_WRITE:
            base = next((b for b, v in self.memory.items() if b <= a[0] and a[0] + len(data) <= b + len(v)), None)
            if base is not None:
                self.memory[base][a[0] - base:a[0] - base + len(data)] = data
            protocol.send(self.sock, protocol.REPLY, (0 if base is not None else -errno.EFAULT,))
        elif k == protocol.FD_HANDLE:
            protocol.send(self.sock, protocol.REPLY, (self.handles.get(a[0], -errno.EBADF),))
        else:
            protocol.send(self.sock, protocol.REPLY, (-errno.EINVAL,))

    def open(self, path: str, fake_fd: int) -> tuple[int, int]:
        handle, _, fd = self.call(protocol.OPEN, (os.O_RDWR,), path.encode())
        self.handles[fake_fd] = handle
        return handle, fd

    def ioctl(self, handle: int, request: int, args):
        r, data, _ = self.call(protocol.IOCTL, (handle, request), bytes(args))
        if r < 0:
            raise OSError(-r, os.strerror(-r))
        return type(args).from_buffer_copy(data) if data else args


@pytest.fixture
def server(tmp_path):
    path = str(tmp_path / "server.sock")
    srv = Server(path, lambda memory: (m := MockOS(devices=1, vram_size=1 << 28, user=memory, place=False), m,
                                       lambda: None), log=io.StringIO())
    stop = threading.Event()
    thread = threading.Thread(target=srv.serve, args=(stop.is_set,), daemon=True)
    thread.start()
    clients: list[RawClient] = []

    def connect(pid: int = 4242) -> RawClient:
        clients.append(c := RawClient(path, pid))
        return c
    yield srv, path, connect
    for c in clients:
        c.sock.close()
    stop.set()
    thread.join(10)
    assert not thread.is_alive() and not srv.sessions  # every client's machine is gone with its connections


def _wait_until(cond, seconds: float = 10) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.005)
    return cond()


def _machine(c: RawClient):
    """/dev/kfd and the first render node opened, its VM acquired; (kfd handle, device memory fd, gpu_id)."""
    kfd, memfd = c.open("/dev/kfd", 10)
    drm, _ = c.open("/dev/dri/renderD128", 11)
    gid = int(MockOS(devices=1, vram_size=1 << 28, user=False).read_text(f"{TOPOLOGY}/nodes/1/gpu_id"))
    c.ioctl(kfd, F.AMDKFD_IOC_ACQUIRE_VM, F.kfd_ioctl_acquire_vm_args(drm_fd=11, gpu_id=gid))
    return kfd, memfd, gid


def test_requests_and_questions_about_client_memory(server):
    srv, path, connect = server
    c = connect()
    kfd, memfd, gid = _machine(c)
    v = c.ioctl(kfd, F.AMDKFD_IOC_GET_VERSION, F.kfd_ioctl_get_version_args())
    assert (v.major_version, v.minor_version) >= (1, 14)
    flags = F.KFD_IOC_ALLOC_MEM_FLAGS_GTT | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
    a = c.ioctl(kfd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, F.kfd_ioctl_alloc_memory_of_gpu_args(
        va_addr=1 << 30, size=4096, gpu_id=gid, flags=flags))
    c.memory[0x5000] = bytearray(struct.pack("<I", gid))
    m = c.ioctl(kfd, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU, F.kfd_ioctl_map_memory_to_gpu_args(
        handle=a.handle, device_ids_array_ptr=0x5000, n_devices=1))
    assert m.n_success == 1
    # the fd the client got is the device memory: its plain mmap at the buffer's mmap_offset is the buffer
    view = shared.view(shared.mmap(None, 4096, RW, shared.MAP_SHARED, memfd, a.mmap_offset), 4096)
    view[:4] = list(b"sees")
    assert srv.sessions[4242].mock.simulator(gid).mmu.read(8, 1 << 30, 4) == b"sees"
    with pytest.raises(OSError) as e:  # a pointer the client does not own
        c.ioctl(kfd, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU, F.kfd_ioctl_map_memory_to_gpu_args(
            handle=a.handle, device_ids_array_ptr=0x9000, n_devices=1))
    assert e.value.errno == errno.EFAULT
    r, _, _ = c.call(protocol.IOCTL, (kfd, F.AMDKFD_IOC_GET_VERSION), b"\0" * 3)  # not _IOC_SIZE bytes
    assert r == -errno.EFAULT
    assert c.call(protocol.OPEN, (0,), b"/dev/nonexistent")[0] == -errno.ENOENT
    assert c.call(protocol.OPEN, (0,), b"\xff\xfe")[0] == -errno.ENOENT
    os.close(memfd)


@pytest.mark.parametrize("garbage", [b"abc", struct.pack("<8q", 999, 0, 0, 0, 0, 0, 0, 0),
                                     struct.pack("<8q", protocol.IOCTL, 0, 0, 0, 0, 0, 0, 0)])
def test_malformed_messages_drop_only_that_client(server, garbage):
    srv, path, connect = server
    bad = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    bad.connect(path)
    if garbage[:8] != b"abc"[:8] and struct.unpack_from("<q", garbage)[0] == protocol.IOCTL:
        protocol.send(bad, protocol.HELLO, (77,))
        protocol.recv(bad)
        garbage = struct.pack("<8q", 999, 0, 0, 0, 0, 0, 0, 0)  # unknown request after HELLO
    bad.send(garbage)
    assert bad.recv(64) == b""  # the server hung up on it
    assert _wait_until(lambda: 77 not in srv.sessions)
    good = connect(78)
    kfd, memfd, _ = _machine(good)
    assert good.ioctl(kfd, F.AMDKFD_IOC_GET_VERSION, F.kfd_ioctl_get_version_args()).major_version == 1
    os.close(memfd)


def _queue_with(c: RawClient, kfd: int, memfd: int, gid: int, words: list[int]):
    """A PM4 queue whose ring holds `words`, its doorbell rung by a plain store; the hw-exception event."""
    flags = F.KFD_IOC_ALLOC_MEM_FLAGS_GTT | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
    a = c.ioctl(kfd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, F.kfd_ioctl_alloc_memory_of_gpu_args(
        va_addr=1 << 30, size=1 << 13, gpu_id=gid, flags=flags))
    c.memory[0x5000] = bytearray(struct.pack("<I", gid))
    c.ioctl(kfd, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU, F.kfd_ioctl_map_memory_to_gpu_args(
        handle=a.handle, device_ids_array_ptr=0x5000, n_devices=1))
    ring = shared.view(shared.mmap(None, 1 << 13, RW, shared.MAP_SHARED, memfd, a.mmap_offset), 1 << 13)
    ring[:4 * len(words)] = list(struct.pack(f"<{len(words)}I", *words))
    q = c.ioctl(kfd, F.AMDKFD_IOC_CREATE_QUEUE, F.kfd_ioctl_create_queue_args(
        ring_base_address=1 << 30, ring_size=4096, gpu_id=gid, queue_type=F.KFD_IOC_QUEUE_TYPE_COMPUTE,
        queue_percentage=100, read_pointer_address=(1 << 30) + 4096, write_pointer_address=(1 << 30) + 4104))
    hw = c.ioctl(kfd, F.AMDKFD_IOC_CREATE_EVENT, F.kfd_ioctl_create_event_args(
        event_type=F.KFD_IOC_EVENT_HW_EXCEPTION))
    bell = shared.view(shared.mmap(None, 8192, RW, shared.MAP_SHARED, memfd, q.doorbell_offset & ~0x1FFF), 8192)
    bell.view("<u8")[(q.doorbell_offset & 0x1FFF) // 8] = len(words)  # a plain store: no driver call
    return hw.event_id


def test_garbage_in_a_ring_is_a_queue_error_reported_as_a_hw_exception(server):
    srv, path, connect = server
    c = connect()
    kfd, memfd, gid = _machine(c)
    event = _queue_with(c, kfd, memfd, gid, [0xDEADBEEF, 0xFFFFFFFF, 0x12345678])
    c.memory[0x6000] = bytearray(bytes(F.kfd_event_data(event_id=event)))
    w = c.ioctl(kfd, F.AMDKFD_IOC_WAIT_EVENTS, F.kfd_ioctl_wait_events_args(
        events_ptr=0x6000, num_events=1, timeout=10_000))
    assert w.wait_result == F.KFD_IOC_WAIT_RESULT_COMPLETE
    data = F.kfd_event_data.from_buffer_copy(bytes(c.memory[0x6000]))
    assert data.u.hw_exception_data.gpu_id == gid  # what the driver wrote back into the client's memory
    q = srv.sessions[4242].mock.simulator(gid).queues[0]
    assert q.state == "error"
    # the reset says why in the server's log too
    assert f"simgpu server: pid 4242: gpu0 (gpu_id {gid}): queue {q.name} reset: {q.error.why}" in srv.log.getvalue()
    os.close(memfd)


def test_a_client_that_dies_in_a_wait_leaves_nothing_behind(server):
    srv, path, connect = server
    c = connect()
    kfd, memfd, gid = _machine(c)
    _queue_with(c, kfd, memfd, gid, [0xC0001000, 0])  # a queue with work the client never finishes waiting for
    ev = c.ioctl(kfd, F.AMDKFD_IOC_CREATE_EVENT, F.kfd_ioctl_create_event_args(event_type=0, auto_reset=1))
    c.memory[0x6000] = bytearray(bytes(F.kfd_event_data(event_id=ev.event_id)))
    protocol.send(c.sock, protocol.IOCTL, (kfd, F.AMDKFD_IOC_WAIT_EVENTS), bytes(F.kfd_ioctl_wait_events_args(
        events_ptr=0x6000, num_events=1, timeout=60_000)))
    k, a, _, _ = protocol.recv(c.sock)  # the server reads the event array, then parks the wait
    assert k == protocol.MEM_READ
    c._answer(k, a, b"")
    assert _wait_until(lambda: srv.parked)
    c.sock.close()  # the client dies
    assert _wait_until(lambda: not srv.sessions and not srv.parked and not srv.conns)  # its machine went too
    os.close(memfd)


def test_a_wait_with_a_timeout_really_waits(server):
    srv, path, connect = server
    c = connect()
    kfd, memfd, _ = _machine(c)
    ev = c.ioctl(kfd, F.AMDKFD_IOC_CREATE_EVENT, F.kfd_ioctl_create_event_args(event_type=0, auto_reset=1))
    c.memory[0x6000] = bytearray(bytes(F.kfd_event_data(event_id=ev.event_id)))
    t0 = time.monotonic()
    w = c.ioctl(kfd, F.AMDKFD_IOC_WAIT_EVENTS, F.kfd_ioctl_wait_events_args(events_ptr=0x6000, num_events=1,
                                                                          timeout=200))
    assert w.wait_result == F.KFD_IOC_WAIT_RESULT_TIMEOUT and time.monotonic() - t0 >= 0.2
    os.close(memfd)


def test_a_queue_waiting_on_memory_moves_when_the_client_stores_there(server):
    from simgpu.hw import pm4
    srv, path, connect = server
    c = connect()
    kfd, memfd, gid = _machine(c)
    signal = (1 << 30) + 6000
    words = pm4.wait_reg_mem(signal, 1, func=pm4.Compare.EQ) + pm4.write_data(signal + 4, 0x600D)
    _queue_with(c, kfd, memfd, gid, words)
    mmu = srv.sessions[4242].mock.simulator(gid).mmu
    time.sleep(0.05)
    assert mmu.read(8, signal + 4, 4) == b"\0\0\0\0"  # blocked
    page = shared.view(shared.mmap(None, 8192, RW, shared.MAP_SHARED, memfd,
                                   srv.sessions[4242].mock.process.allocs[next(iter(
                                       srv.sessions[4242].mock.process.allocs))].mmap_offset), 8192)
    ctypes.c_uint32.from_buffer(page, 6000).value = 1  # the CPU sets the signal; no driver call follows
    assert _wait_until(lambda: mmu.read(8, signal + 4, 4) == struct.pack("<I", 0x600D))
    os.close(memfd)
