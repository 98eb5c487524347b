"""The simgpu server (mockgpu/server.py) driven over its socket by a raw client written here: requests and the
server's questions about client memory, malformed messages, bad pointers, garbage in a ring, a client that dies
in the middle of a wait. Nothing a client sends takes the server down or leaves anything of the client behind."""

import ctypes
import errno
import io
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

import pytest

from mockgpu import MockOS, protocol
from mockgpu.server import Server
from runtime.os import TOPOLOGY
from runtime.uapi import kfd as F
from simgpu.mem import shared
from tests.mockgpu import isolation_client

RW = 3
PID = os.getpid()  # the raw clients are this process: the server binds each connection to its peer's pid


class RawClient:
    """One connection; `memory` is what it answers the server's MEM_READ / MEM_WRITE with (address -> bytes)."""

    def __init__(self, path: str, pid: int = PID):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(path)
        self.sock.settimeout(60)  # a server that does not answer in a minute is down: fail, do not hang
        self.memory: dict[int, bytearray] = {}
        self.handles: dict[int, int] = {}  # "fd" we pretend to have -> server handle
        r, _, self.status_fd = self.call(protocol.HELLO, (pid,))  # (the session's status page: mockgpu.statuspage)
        assert r == 0

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


def _serving(tmp_path, log=None, **mock_kw):
    """A server in a thread of this process, its machines MockOS(devices=1, 256 MiB, **mock_kw); it logs to `log`."""
    path = str(tmp_path / "server.sock")
    kw = {"devices": 1, "vram_size": 1 << 28, **mock_kw}
    srv = Server(path, lambda memory, pid: (m := MockOS(user=memory, place=False, **kw), m, lambda: None),
                 log=log or io.StringIO())
    stop = threading.Event()
    thread = threading.Thread(target=srv.serve, args=(stop.is_set,), daemon=True)
    thread.start()
    clients: list[RawClient] = []

    def connect(pid: int = PID) -> RawClient:
        clients.append(c := RawClient(path, pid))
        return c
    yield srv, path, connect
    for c in clients:
        c.sock.close()
    stop.set()
    thread.join(10)
    assert not thread.is_alive() and not srv.sessions  # every client's machine is gone with its connections


@pytest.fixture
def server(tmp_path):
    yield from _serving(tmp_path)


@pytest.fixture
def hang_server(tmp_path, monkeypatch):
    """A server whose GPUs let a hung kernel run for ever: no wall-clock watchdog, no instruction budget."""
    monkeypatch.setenv("SIMGPU_WATCHDOG_S", "0")
    yield from _serving(tmp_path, watchdog=1 << 50)


def _interposed(path: str, tmp_path, *args: str) -> subprocess.Popen:
    """tests/mockgpu/isolation_client.py ARGS under the interposer, a client of the server at `path`."""
    from tests.support.clients import preload_or_skip
    from wiring.run import write_sysfs
    preload = preload_or_skip()
    write_sysfs(tmp_path / "sysfs", MockOS(devices=1, vram_size=1 << 28, user=False, place=False).sysfs)
    env = dict(os.environ, SIMGPU_SERVER=path, SIMGPU_SYSFS=str(tmp_path / "sysfs"), LD_PRELOAD=str(preload))
    env.pop("MOCKGPU", None)
    return subprocess.Popen([sys.executable, isolation_client.__file__, *args], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


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


def test_the_socket_appears_only_once_it_listens(tmp_path, monkeypatch):
    """`simgpu run` starts its program before its server listens; the interposer connects as soon as the socket's file
    exists. So the file must not exist while the socket is bound but not yet listening (CI saw /dev/kfd fail with
    EIO: a connect refused in that window)."""
    path = str(tmp_path / "server.sock")
    seen = []
    listen = socket.socket.listen

    def watched(sock, *a):
        seen.append(os.path.exists(path))
        return listen(sock, *a)
    monkeypatch.setattr(socket.socket, "listen", watched)
    srv = Server(path, lambda memory, pid: None, log=io.StringIO())
    try:
        assert seen == [False] and os.path.exists(path) and os.stat(path).st_mode & 0o777 == 0o600
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        probe.connect(path)  # the renamed file still names the listening socket
        probe.close()
    finally:
        srv.close()
    assert not os.path.exists(path) and os.listdir(tmp_path) == []


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
    assert srv.sessions[PID].mock.simulator(gid).mmu.read(8, 1 << 30, 4) == b"sees"
    with pytest.raises(OSError) as e:  # a pointer the client does not own
        c.ioctl(kfd, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU, F.kfd_ioctl_map_memory_to_gpu_args(
            handle=a.handle, device_ids_array_ptr=0x9000, n_devices=1))
    assert e.value.errno == errno.EFAULT
    r, _, _ = c.call(protocol.IOCTL, (kfd, F.AMDKFD_IOC_GET_VERSION), b"\0" * 3)  # not _IOC_SIZE bytes
    assert r == -errno.EFAULT
    assert c.call(protocol.OPEN, (0,), b"/dev/nonexistent")[0] == -errno.ENOENT
    assert c.call(protocol.OPEN, (0,), b"\xff\xfe")[0] == -errno.ENOENT
    os.close(memfd)


def test_an_ioctl_brings_the_array_it_points_to(server):
    """IOCTL's a2, a3 (mockgpu.protocol.ATTACHED): the caller's memory read with the argument answers the driver's
    copy_from_user inside it without a MEM_READ; a read outside it is still asked for; a payload that is not the
    argument plus a3 bytes is EFAULT."""
    srv, path, connect = server
    c = connect()
    kfd, memfd, gid = _machine(c)
    flags = F.KFD_IOC_ALLOC_MEM_FLAGS_GTT | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
    a = c.ioctl(kfd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, F.kfd_ioctl_alloc_memory_of_gpu_args(
        va_addr=1 << 30, size=4096, gpu_id=gid, flags=flags))
    ids = struct.pack("<I", gid)
    asked = []
    answer = c._answer
    c._answer = lambda k, a_, data: (asked.append(k), answer(k, a_, data))
    args = bytes(F.kfd_ioctl_map_memory_to_gpu_args(handle=a.handle, device_ids_array_ptr=0x5000, n_devices=1))
    r, data, _ = c.call(protocol.IOCTL, (kfd, F.AMDKFD_IOC_MAP_MEMORY_TO_GPU, 0x5000, 4), args + ids)
    assert r == 0 and F.kfd_ioctl_map_memory_to_gpu_args.from_buffer_copy(data).n_success == 1 and not asked
    assert srv.sessions[PID].mock.process.allocs[a.handle].mapped_on == {0}
    # a block elsewhere: the driver asks for the array (and the client has none there: EFAULT)
    args = bytes(F.kfd_ioctl_unmap_memory_from_gpu_args(handle=a.handle, device_ids_array_ptr=0x5000, n_devices=1))
    r, _, _ = c.call(protocol.IOCTL, (kfd, F.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, 0x7000, 4), args + ids)
    assert r == -errno.EFAULT and asked == [protocol.MEM_READ]
    r, _, _ = c.call(protocol.IOCTL, (kfd, F.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, 0x5000, 8), args + ids)
    assert r == -errno.EFAULT and asked == [protocol.MEM_READ]  # 4 bytes where a3 says 8: refused unread
    r, _, _ = c.call(protocol.IOCTL, (kfd, F.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, 0x5000, 4), args + ids)
    assert r == 0 and asked == [protocol.MEM_READ]
    os.close(memfd)


def test_a_store_into_the_attached_block_is_read_back():
    """RemoteMemory: what the driver stores into the caller's memory during a request is what it reads there
    afterwards, inside the block the request brought along too."""
    from mockgpu.session import RemoteMemory
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    mem = RemoteMemory()
    mem.sock = a
    mem.attach(0x1000, b"abcdefgh")
    assert mem.read(0x1002, 4) == b"cdef"  # from the block: nothing asked of the client

    def client():  # answers the one MEM_WRITE
        k, args, data, _ = protocol.recv(b)
        assert k == protocol.MEM_WRITE and args[0] == 0x0FFE and data == b"XYZW"
        protocol.send(b, protocol.REPLY, (0,))
    t = threading.Thread(target=client)
    t.start()
    mem.write(0x0FFE, b"XYZW")  # two bytes before the block, two inside it
    t.join()
    assert mem.read(0x1000, 8) == b"ZWcdefgh"
    a.close()
    b.close()


@pytest.mark.parametrize("garbage", [b"abc", struct.pack("<8q", 999, 0, 0, 0, 0, 0, 0, 0),
                                     struct.pack("<8q", protocol.HELLO, PID, 0, 0, 0, 0, 0, 0)],
                         ids=["short", "unknown-message", "hello"])  # (not the pid: each xdist worker has its own)
def test_malformed_messages_drop_only_that_connection(server, garbage):
    srv, path, connect = server
    good = connect()
    kfd, memfd, _ = _machine(good)
    for hello_first in (False, True):
        bad = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        bad.connect(path)
        if hello_first:
            protocol.send(bad, protocol.HELLO, (PID,))
            assert protocol.recv(bad)[1][0] == 0
        bad.send(garbage)
        if not hello_first and garbage[:8] == struct.pack("<q", protocol.HELLO):
            assert protocol.recv(bad)[1][0] == 0  # (a proper HELLO)
            continue
        assert bad.recv(64) == b""  # the server hung up on it
        assert good.ioctl(kfd, F.AMDKFD_IOC_GET_VERSION, F.kfd_ioctl_get_version_args()).major_version == 1
    assert srv.sessions[PID].mock is not None  # the session lives on with its other connection
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
    q = srv.sessions[PID].mock.simulator(gid).queues[0]
    assert q.state == "error"
    # the reset says why in the server's log too
    assert f"simgpu server: pid {PID}: gpu0 (gpu_id {gid}): queue {q.name} reset: {q.error.why}" in srv.log.getvalue()
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
    session = srv.sessions[PID]
    assert _wait_until(lambda: session.parked)
    c.sock.close()  # the client dies
    assert _wait_until(lambda: not srv.sessions and not session.parked and session.mock is None)  # its machine went
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
    mmu = srv.sessions[PID].mock.simulator(gid).mmu
    time.sleep(0.05)
    assert mmu.read(8, signal + 4, 4) == b"\0\0\0\0"  # blocked
    page = shared.view(shared.mmap(None, 8192, RW, shared.MAP_SHARED, memfd,
                                   srv.sessions[PID].mock.process.allocs[next(iter(
                                       srv.sessions[PID].mock.process.allocs))].mmap_offset), 8192)
    ctypes.c_uint32.from_buffer(page, 6000).value = 1  # the CPU sets the signal; no driver call follows
    assert _wait_until(lambda: mmu.read(8, signal + 4, 4) == struct.pack("<I", 0x600D))
    os.close(memfd)


def _thread_cpu(tid: int) -> float:
    """CPU seconds of one thread of this process (utime + stime from /proc)."""
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_queue_waiting_on_memory_leaves_the_worker_mostly_asleep(server):
    """While a queue waits on memory the worker looks at it in Python every 1/20 of the time it has waited (up to
    2 ms: mockgpu.session.look_again), sleeping outside Python in between; it looked every 50 us before, ~40 us of
    Python each, which kept it on a core for the whole wait (test_hcq's test_wait_late_set: 500 ms). The store
    that ends the wait is still seen."""
    from simgpu.hw import pm4
    srv, path, connect = server
    c = connect()
    kfd, memfd, gid = _machine(c)
    signal = (1 << 30) + 6000
    _queue_with(c, kfd, memfd, gid, pm4.wait_reg_mem(signal, 1, func=pm4.Compare.EQ) + pm4.write_data(signal + 4, 7))
    session = srv.sessions[PID]
    mmu = session.mock.simulator(gid).mmu
    time.sleep(0.05)
    before, t0 = _thread_cpu(session.thread.native_id), time.monotonic()
    time.sleep(0.5)
    used, waited = _thread_cpu(session.thread.native_id) - before, time.monotonic() - t0
    assert mmu.read(8, signal + 4, 4) == b"\0\0\0\0"  # still blocked
    assert used < 0.15 * waited, f"the worker used {used:.2f} CPU s of a {waited:.2f} s wait"
    mmu.write(8, signal, struct.pack("<I", 1))  # what a CPU store into the signal's page does
    assert _wait_until(lambda: mmu.read(8, signal + 4, 4) == struct.pack("<I", 7))
    os.close(memfd)


_VICTIM = """
import os, sys
sys.path.insert(0, sys.argv[2])
from tests.mockgpu.test_mockgpu_server import RawClient
c = RawClient(sys.argv[1], os.getpid())
c.open("/dev/kfd", 10)
print("ready", flush=True)
sys.stdin.read()
"""


def test_a_connection_that_claims_another_processes_pid_is_refused(server, tmp_path):
    """Issue 27, item 2: the server took the HELLO's pid on trust, so a raw client that sent a victim's pid joined
    the victim's session (its device-memory fd, its buffers, its queues). Each connection is bound to its peer's
    credentials (SO_PEERCRED): the claim is refused with EPERM and the connection closed."""
    srv, path, connect = server
    root = str(isolation_client.__file__).rsplit("/tests/", 1)[0]
    victim = subprocess.Popen([sys.executable, "-c", _VICTIM, path, root], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert victim.stdout.readline().strip() == "ready"
        assert victim.pid in srv.sessions
        spoof = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        spoof.connect(path)
        protocol.send(spoof, protocol.HELLO, (victim.pid,))
        kind, args, _, fd = protocol.recv(spoof)
        assert (kind, args[0], fd) == (protocol.REPLY, -errno.EPERM, None)
        assert spoof.recv(64) == b""  # and hung up: nothing else can be asked on it
        assert PID not in srv.sessions and len(srv.sessions[victim.pid].conns) == 1  # the victim's own, alone
        mine = connect()  # the truth is welcome
        assert mine.call(protocol.OPEN, (os.O_RDWR,), b"/dev/kfd")[0] >= 0 and PID in srv.sessions
    finally:
        victim.kill()
        victim.wait()


def test_a_killed_clients_dispatch_stops_at_once_and_its_machine_is_freed(hang_server, tmp_path):
    """Issue 27, item 5: a SIGKILLed client's kernel ran on in the server until the watchdog (for ever without
    one). The server watches each client's pid: the dispatch stops at the engine's next TICK and the session's
    machine, with all its memory, is dropped."""
    srv, path, _ = hang_server
    spinner = _interposed(path, tmp_path, "spin")
    try:
        assert spinner.stdout.readline().strip() == "spinning"
        session = srv.sessions[spinner.pid]
        counters = session.mock.gpus[0].engine.counters
        assert _wait_until(lambda: counters.dispatches == 1)  # the kernel that never ends is running
        machine, worker = weakref.ref(session.mock), session.thread
        del session
    finally:
        spinner.kill()
        spinner.wait()
    t0 = time.monotonic()
    assert _wait_until(lambda: spinner.pid not in srv.sessions and not worker.is_alive(), 30)
    assert _wait_until(lambda: machine() is None)
    # One TICK of the engine: a tenth of a second interpreted on an idle machine, seconds on one loaded many times
    # over (the bound); without the abort it ran until the watchdog, for ever here.
    assert time.monotonic() - t0 < 10


@pytest.mark.skipif(os.geteuid() != 0, reason="running a client as another user needs root")
def test_a_connection_from_another_user_is_refused():
    """Issue 27, item 2, the uid half: a process of another user is refused even with its own, true pid (here the
    socket is opened to everyone to reach that check: `simgpu run`'s is the user's alone, mode 0600)."""
    where = Path(tempfile.mkdtemp())
    where.chmod(0o711)
    try:
        served = _serving(where)
        srv, path, _ = next(served)
        os.chmod(path, 0o666)
        r, w = os.pipe()
        child = os.fork()
        if child == 0:  # nobody, with its own pid: only socket calls here, then out
            try:
                os.setgid(65534)
                os.setuid(65534)
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.connect(path)
                protocol.send(s, protocol.HELLO, (os.getpid(),))
                os.write(w, struct.pack("<q", protocol.recv(s)[1][0]))
            finally:
                os._exit(0)
        os.close(w)
        answer = os.read(r, 8)
        os.waitpid(child, 0)
        os.close(r)
        assert struct.unpack("<q", answer)[0] == -errno.EPERM and not srv.sessions
        next(served, None)
    finally:
        shutil.rmtree(where, ignore_errors=True)


def test_a_flood_of_connections_does_not_take_the_server_down(server):
    """A client that opens connections by the thousand (never saying HELLO) pushed the server's descriptors past
    select()'s 1024: the loop raised out of `serve`. It waits with poll(); the flood costs only descriptors."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if min(soft, hard) < 2600:
        pytest.skip(f"needs 2600 descriptors (RLIMIT_NOFILE is {soft})")
    srv, path, connect = server
    flood = []
    for _ in range(1100):
        flood.append(s := socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET))
        # connect() waits while the listen backlog is full: at most a minute (a server that stopped accepting)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 60, 0))
        s.connect(path)
    try:
        c = connect()  # its descriptors in the server are numbered over 1024
        kfd, memfd, _ = _machine(c)
        assert c.ioctl(kfd, F.AMDKFD_IOC_GET_VERSION, F.kfd_ioctl_get_version_args()).major_version == 1
        os.close(memfd)
    finally:
        for s in flood:
            s.close()
