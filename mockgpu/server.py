"""The simgpu server: the process-level device behind `simgpu run`.

Programs run with the interposer (mockgpu/csrc/preload.c) preloaded; it sends their /dev/kfd and render-node calls
here over a unix socket (mockgpu/protocol.py). Each client process is a session with its own simulated machine
(a MockOS: one amdkfd process, the GPUs it sees), created when the process first connects and dropped, with all
its queues, events and memory, when its last connection closes -- a client that dies mid-run leaves nothing
behind. Memory is shared: the device-memory file is the fd the client gets for /dev/kfd and each render node.

The server runs the GPUs while clients run (`Server.serve`): between requests it acts on doorbells the clients
store into the shared doorbell pages and re-runs queues that wait on memory, polling briefly while anything is
active and backing off to a few milliseconds when all is idle. A WAIT_EVENTS with a timeout really waits: the
server parks it, keeps the GPUs going, and answers when one of its events fires or the timeout passes.

Everything a client sends is checked: a malformed message closes that connection, a bad ioctl argument is the
errno the kernel would give, a bad pointer is EFAULT (the interposer reads the client's memory with
process_vm_readv), garbage in a ring is a queue error. No client input can raise out of `serve`.
"""

from __future__ import annotations

import ctypes
import errno
import gc
import os
import select
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mockgpu import protocol
from mockgpu.devmem import DOORBELL_PAGE
from mockgpu.memory import KfdError
from mockgpu.protocol import ProtocolError
from runtime.os import MAP_FIXED, MAP_SHARED, PROT_READ, PROT_WRITE, Mapping
from runtime.uapi import kfd
from simgpu.mem import shared

ACTIVE_POLL = 50e-6  # seconds between GPU checks while queues are busy or waiting
IDLE_POLL = 2e-3  # ... at most, once everything has been idle for a while
ACTIVE_WINDOW = 0.05  # seconds after the last activity during which the server keeps polling fast
RECORDING_RETRY = 1e-3  # seconds between re-runs of waiting queues while recording


class RemoteMemory:
    """The client's own memory, through its interposer (the foreign backend of mockgpu.usermem): only while the
    server handles one of its requests, on the connection that sent it. With `log`, what was read and written is
    kept for a trace (take_log), so that a replay can answer the same pointer arguments."""

    def __init__(self, log: bool = False):
        self.sock: socket.socket | None = None
        self.log = log
        self.reads: list[tuple[int, bytes]] = []
        self.writes: list[tuple[int, bytes]] = []
        self.shares: list[tuple[int, object]] = []

    def take_log(self) -> tuple[list, list, list]:
        """The (address, bytes) read and written and the (address, pages) shared (USERPTR) since the last call."""
        out = (self.reads, self.writes, self.shares)
        self.reads, self.writes, self.shares = [], [], []
        return out

    def _call(self, kind: int, args, payload: bytes = b"") -> tuple[list[int], bytes, int | None]:
        if self.sock is None:
            raise KfdError(errno.EFAULT, "no client request in progress")
        try:
            protocol.send(self.sock, kind, args, payload)
            reply, rargs, data, fd = protocol.recv(self.sock)
        except ProtocolError as e:
            raise KfdError(errno.EFAULT, f"client memory: {e}") from None
        if reply != protocol.REPLY or rargs[0] < 0:
            if fd is not None:
                os.close(fd)
            raise KfdError(errno.EFAULT, f"bad user address {args[0]:#x}")
        return rargs, data, fd

    def read(self, addr: int, n: int) -> bytes:
        """copy_from_user in pieces of at most one message."""
        out = bytearray()
        for pos in range(0, n, protocol.MAX_PAYLOAD):
            k = min(protocol.MAX_PAYLOAD, n - pos)
            _, data, _ = self._call(protocol.MEM_READ, (addr + pos, k))
            if len(data) != k:
                raise KfdError(errno.EFAULT, f"bad user address {addr + pos:#x}")
            out += data
        if self.log:
            self.reads.append((addr, bytes(out)))
        return bytes(out)

    def write(self, addr: int, data: bytes) -> None:
        """copy_to_user in pieces of at most one message."""
        for pos in range(0, len(data), protocol.MAX_PAYLOAD):
            self._call(protocol.MEM_WRITE, (addr + pos,), bytes(data[pos:pos + protocol.MAX_PAYLOAD]))
        if self.log:
            self.writes.append((addr, bytes(data)))

    def fd_handle(self, fd: int) -> int:
        """The server handle of the client's file descriptor `fd` (EBADF if it is not a device file)."""
        try:
            args, _, _ = self._call(protocol.FD_HANDLE, (fd,))
        except KfdError:
            raise KfdError(errno.EBADF, f"fd {fd} is not an open device file of the client") from None
        return args[0]

    def share(self, addr: int, size: int):
        """USERPTR: the client moves the pages into a memfd at the same address and sends it; mapped here."""
        _, _, fd = self._call(protocol.SHARE, (addr, size))
        if fd is None:
            raise KfdError(errno.EFAULT, f"userptr {addr:#x}: the client sent no memory")
        try:
            pages = shared.view(shared.mmap(None, size, PROT_READ | PROT_WRITE, shared.MAP_SHARED, fd), size)
        finally:
            os.close(fd)
        if self.log:
            self.shares.append((addr, pages))
        return pages


DRIVER_VA = 0xFFFF_8000_0000_0000  # the driver's own mappings: kernel-half addresses no client pointer can hold


@dataclass
class Session:
    """One client process: its machine (`os`, possibly a recorder around `mock`) and what it has open."""

    pid: int
    os: object
    mock: object  # the MockOS
    memory: RemoteMemory
    finish: Callable[[], None]
    recording: bool = False
    conns: set = field(default_factory=set)
    mappings: dict[int, Mapping] = field(default_factory=dict)  # client address -> mapping
    kfd: int | None = None  # the driver's own /dev/kfd file (doorbell pages)
    doorbell_pages: dict[int, Mapping] = field(default_factory=dict)  # GPU index -> the driver's mapping
    views: dict[int, Mapping] = field(default_factory=dict)  # buffer handle -> the driver's mapping (recording)
    next_va: int = DRIVER_VA

    def driver_map(self, fd: int, length: int, offset: int) -> Mapping:
        """A mapping of the driver's own, through the OS (so a recorder sees and records it)."""
        addr, self.next_va = self.next_va, self.next_va + ((length + 0xFFFF) & ~0xFFFF) + 0x10000
        return self.os.mmap(fd, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, offset, addr)

    def ring_doorbells(self) -> bool:
        """Doorbells the client stored into the shared pages become doorbell writes through the OS (MockOS runs
        the queue; a recorder records an mmio record, which a replay performs the same way)."""
        rang = False
        for i, gpu in enumerate(self.mock.gpus):
            pending = gpu.pending_doorbells()
            if not pending:
                continue
            if i not in self.doorbell_pages:
                if self.kfd is None:
                    self.kfd = self.os.open("/dev/kfd")
                self.doorbell_pages[i] = self.driver_map(self.kfd, DOORBELL_PAGE, self.mock.devmem.doorbell_offset(i))
            for slot, value in pending:
                self.os.mmio_write(self.doorbell_pages[i], slot * 8, value, 8)
            rang = True
        return rang

    def after_ioctl(self, request: int, buf: bytearray) -> None:
        """Recording: every CPU-mappable buffer gets a mapping of the driver's own, so the trace holds the client's
        stores into it even when the client maps it behind the interposer's back (ctypes' libc mmap)."""
        if request == kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU:
            a = kfd.kfd_ioctl_alloc_memory_of_gpu_args.unpack(buf)
            al = self.mock.process.allocs.get(a.handle)
            node = self.mock.nodes[al.node] if al is not None else None
            if al is not None and al.kind in ("vram", "gtt") and node.drm_fd is not None:
                self.views[a.handle] = self.driver_map(node.drm_fd, al.size, al.mmap_offset)
        elif request == kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU:
            view = self.views.pop(kfd.kfd_ioctl_free_memory_of_gpu_args.unpack(buf).handle, None)
            if view is not None:
                self.os.munmap(view)


@dataclass
class Parked:
    """A WAIT_EVENTS that waits for an event or its deadline."""

    sock: socket.socket
    session: Session
    args: list[int]
    payload: bytes
    events: list[int]
    wait_all: bool
    deadline: float


class Server:
    """Listens on `path`; `make_machine(memory)` gives a new session's (os, mock, finish)."""

    def __init__(self, path: str, make_machine: Callable, log=None, record: bool = False):
        self.path, self.make_machine, self.log, self.record = path, make_machine, log or sys.stderr, record
        # Recording diffs every tracked page at each point the GPU may run: retry waiting queues less often.
        self.retry_interval = RECORDING_RETRY if record else 0.0
        self._last_retry = 0.0
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        self.listener.bind(path)
        self.listener.listen(64)
        self.conns: dict[socket.socket, Session | None] = {}
        self.sessions: dict[int, Session] = {}
        self.parked: list[Parked] = []
        self.last_activity = 0.0

    # ---- the loop -------------------------------------------------------------------------------------
    def serve(self, done: Callable[[], bool]) -> None:
        """Serve until `done()` is true and no client is connected; the GPUs run in between."""
        pause = ACTIVE_POLL
        while not (done() and not self.conns):
            ready, _, _ = select.select([self.listener, *self.conns], [], [], pause)
            moved = False
            parked = {p.sock for p in self.parked}
            for sock in ready:
                moved = True
                if sock is self.listener:
                    self._accept()
                elif sock in parked:  # a client in a wait sends nothing: it went away (or broke the protocol)
                    self._drop(sock)
                elif sock in self.conns:
                    self._serve_one(sock)
            moved |= self._advance()
            now = time.monotonic()
            if moved:
                self.last_activity = now
            busy = self.parked or now - self.last_activity < ACTIVE_WINDOW or self._blocked()
            pause = ACTIVE_POLL if busy else min(pause * 2, IDLE_POLL)
        self.close()

    def close(self) -> None:
        """Drop every session and stop listening."""
        for sock in list(self.conns):
            self._drop(sock)
        self.listener.close()
        if os.path.exists(self.path):
            os.unlink(self.path)

    def _blocked(self) -> bool:
        return any(self._waiting(s) for s in self.sessions.values())

    @staticmethod
    def _waiting(s: Session) -> bool:
        return any(q.state == "blocked" for g in s.mock.gpus for q in g.queues)

    def _advance(self) -> bool:
        """Run the GPUs of every session; answer the parked waits that can be answered."""
        moved = False
        now = time.monotonic()
        retry = now - self._last_retry >= self.retry_interval
        for s in list(self.sessions.values()):
            try:
                moved |= s.ring_doorbells()
                if retry and self._waiting(s):
                    moved |= bool(s.os.progress(poll_all=False))
                    self._last_retry = now
            except Exception as e:  # noqa: BLE001 - a simulator bug must not take the server down
                print(f"simgpu server: pid {s.pid}: progress failed: {type(e).__name__}: {e}", file=self.log)
        for p in list(self.parked):
            if now >= p.deadline or self._fired(p):
                self.parked.remove(p)
                moved = True
                try:
                    self._ioctl(p.sock, p.session, p.args, p.payload, may_park=False)
                except Exception as e:  # noqa: BLE001 - the client went away, or worse: drop only it
                    if not isinstance(e, ProtocolError):
                        print(f"simgpu server: dropping a client after {type(e).__name__}: {e}", file=self.log)
                    self._drop(p.sock)
        return moved

    # ---- connections ----------------------------------------------------------------------------------
    def _accept(self) -> None:
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return
        self.conns[sock] = None

    def _drop(self, sock: socket.socket) -> None:
        session = self.conns.pop(sock, None)
        self.parked = [p for p in self.parked if p.sock is not sock]
        sock.close()
        if session is not None:
            session.conns.discard(sock)
            if not session.conns:  # the process is gone (or closed every connection): nothing of it stays
                del self.sessions[session.pid]
                try:
                    session.finish()
                except Exception as e:  # noqa: BLE001
                    print(f"simgpu server: pid {session.pid}: finishing failed: {e}", file=self.log)
                gc.collect()

    def _serve_one(self, sock: socket.socket) -> None:
        try:
            kind, args, payload, fd = protocol.recv(sock)
            if fd is not None:
                os.close(fd)  # clients never send descriptors
            self._request(sock, kind, args, payload)
        except ProtocolError:
            self._drop(sock)
        except Exception as e:  # noqa: BLE001 - whatever a client sends, the server stays up
            print(f"simgpu server: dropping a client after {type(e).__name__}: {e}", file=self.log)
            self._drop(sock)

    def _reply(self, sock: socket.socket, result: int, payload: bytes = b"", fd: int | None = None) -> None:
        protocol.send(sock, protocol.REPLY, (result,), payload, fd)

    def _request(self, sock: socket.socket, kind: int, args: list[int], payload: bytes) -> None:
        session = self.conns.get(sock)
        if kind == protocol.HELLO:
            pid = args[0]
            if session is not None or pid <= 0:
                raise ProtocolError("HELLO twice or without a pid")
            session = self.sessions.get(pid) or self._new_session(pid)
            session.conns.add(sock)
            self.conns[sock] = session
            self._reply(sock, 0)
            return
        if session is None:
            raise ProtocolError("request before HELLO")
        handler = {protocol.OPEN: self._open, protocol.CLOSE: self._close, protocol.IOCTL: self._ioctl,
                   protocol.MMAP: self._mmap, protocol.MAPPED: self._mapped, protocol.MUNMAP: self._munmap}.get(kind)
        if handler is None:
            raise ProtocolError(f"unknown request {kind}")
        handler(sock, session, args, payload)

    def _new_session(self, pid: int) -> Session:
        memory = RemoteMemory(log=self.record)
        os_, mock, finish = self.make_machine(memory)
        self.sessions[pid] = s = Session(pid, os_, mock, memory, finish, recording=self.record)
        # Every queue reset (a fault, a limit, a wait that timed out) says which and why in the server's log too.
        mock.process.reset_hooks.append(lambda line: print(f"simgpu server: pid {pid}: {line}", file=self.log,
                                                           flush=True))
        return s

    # ---- requests -------------------------------------------------------------------------------------
    def _open(self, sock, s: Session, args, payload) -> None:
        try:
            fd = s.os.open(payload.decode(), args[0])
        except (OSError, UnicodeDecodeError) as e:
            self._reply(sock, -(getattr(e, "errno", None) or errno.ENOENT))
            return
        self._reply(sock, fd, fd=s.mock.devmem.fd)

    def _close(self, sock, s: Session, args, payload) -> None:
        try:
            s.os.close(args[0])
            self._reply(sock, 0)
        except OSError as e:
            self._reply(sock, -e.errno)

    def _ioctl(self, sock, s: Session, args, payload, may_park: bool = True) -> None:
        handle, request = args[0], args[1] & 0xFFFFFFFF
        if len(payload) != kfd.ioc_size(request):
            self._reply(sock, -errno.EFAULT)
            return
        if request == kfd.AMDKFD_IOC_WAIT_EVENTS and may_park:
            parked = self._park(sock, s, args, payload)
            if parked is not None:
                self.parked.append(parked)
                return
        buf = bytearray(payload)
        s.memory.sock = sock
        try:
            if request == kfd.AMDKFD_IOC_ACQUIRE_VM:  # the client's render-node fd, as this machine knows it
                a = kfd.kfd_ioctl_acquire_vm_args.from_buffer(buf)
                a.drm_fd = s.memory.fd_handle(a.drm_fd)
                del a
            result = s.os.ioctl(handle, request, buf)
        except (OSError, KfdError) as e:
            self._reply(sock, -(e.errno or errno.EIO))
            return
        finally:
            s.memory.sock = None
        if s.recording:
            s.after_ioctl(request, buf)
        self._reply(sock, result or 0, bytes(buf))

    def _park(self, sock, s: Session, args, payload) -> Parked | None:
        """A WAIT_EVENTS that the GPUs cannot satisfy now, with a timeout: park it (None: answer it now)."""
        a = kfd.kfd_ioctl_wait_events_args.unpack(payload)
        if not a.timeout or not 0 < a.num_events <= kfd.KFD_SIGNAL_EVENT_LIMIT:
            return None
        size = ctypes.sizeof(kfd.kfd_event_data)
        s.memory.sock = sock
        try:
            raw = s.memory.read(a.events_ptr, size * a.num_events)
        except KfdError:
            return None  # the ioctl itself answers EFAULT
        finally:
            s.memory.sock = None
        ids = [kfd.kfd_event_data.unpack(raw[i * size:(i + 1) * size]).event_id for i in range(a.num_events)]
        s.os.progress(poll_all=True)
        deadline = time.monotonic() + (a.timeout / 1000 if a.timeout < 0xFFFFFFFF else 1e9)
        p = Parked(sock, s, args, payload, ids, bool(a.wait_for_all), deadline)
        return None if self._fired(p) else p

    @staticmethod
    def _fired(p: Parked) -> bool:
        events = p.session.mock.process.events
        if any(e not in events for e in p.events):
            return True  # the ioctl answers EINVAL
        hits = [events[e].signaled for e in p.events]
        exceptions = any(e.signaled and e.type in (kfd.KFD_IOC_EVENT_MEMORY, kfd.KFD_IOC_EVENT_HW_EXCEPTION)
                         for e in (events[i] for i in p.events))
        return all(hits) if p.wait_all and not exceptions else any(hits)

    def _mmap(self, sock, s: Session, args, payload) -> None:
        handle, _, length, _, _, offset = args[:6]
        try:
            s.mock.check_mmap(handle, length, offset)
            self._reply(sock, 0)
        except OSError as e:
            self._reply(sock, -(e.errno or errno.EINVAL))

    def _mapped(self, sock, s: Session, args, payload) -> None:
        handle, addr, length, prot, flags, offset = args[:6]
        try:
            s.mappings[addr] = s.os.mmap(handle, length, prot, flags | MAP_FIXED, offset, addr)
            self._reply(sock, 0)
        except OSError as e:
            self._reply(sock, -(e.errno or errno.EINVAL))

    def _munmap(self, sock, s: Session, args, payload) -> None:
        addr, length = args[:2]
        for start in [a for a, m in s.mappings.items() if a < addr + length and addr < a + m.length]:
            s.os.munmap(s.mappings.pop(start))
        self._reply(sock, 0)
