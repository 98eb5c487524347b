"""One client process of the simgpu server (mockgpu/server.py): its machine and the worker thread that serves it.

A session is a client process (the pid the socket's peer credentials give: mockgpu.server binds every connection
to one): one MockOS -- an amdkfd process, its GPUs, VRAM, queues and events -- and the connections of its threads.
Its worker thread is the only one that touches the machine: it answers the session's requests, acts on the
doorbells the client stores into the shared doorbell pages, re-runs queues that wait on memory, and parks the
session's WAIT_EVENTS. Sessions share nothing, so a client's results never depend on another's timing, and one
client's hung kernel or stalled request holds up only its own session.

When the client dies (the server watches its pid) or closes its last connection, the session ends: a dispatch
still running stops at the shader engine's next TICK (ClientGone, raised from a progress hook: not the watchdog,
which the client may have turned off), its connections close and its machine, with all its memory, is dropped.
"""

from __future__ import annotations

import ctypes
import errno
import gc
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

from mockgpu import protocol
from mockgpu.devmem import DOORBELL_PAGE
from mockgpu.hostprofile import HostProfile, ioctl_name
from mockgpu.memory import KfdError
from mockgpu.protocol import ProtocolError
from mockgpu.session_turn import Turns, blocked
from mockgpu.statuspage import StatusPage
from runtime.os import MAP_FIXED, MAP_SHARED, PROT_READ, PROT_WRITE, Mapping
from runtime.uapi import kfd
from simgpu.mem import shared

RECORDING_RETRY = 1e-3  # seconds between re-runs of waiting queues while recording
DRIVER_VA = 0xFFFF_8000_0000_0000  # the driver's own mappings: kernel-half addresses no client pointer can hold


class ClientGone(BaseException):
    """The session's client died: raised from the engine's progress hook at its next TICK, it unwinds a running
    dispatch and the worker (a BaseException: no `except Exception` of the simulator turns it into a queue error)."""


_CALLBACKS = {protocol.MEM_READ: "callback MEM_READ", protocol.MEM_WRITE: "callback MEM_WRITE",
              protocol.SHARE: "callback SHARE", protocol.FD_HANDLE: "callback FD_HANDLE"}
_REQUESTS = {protocol.OPEN: "OPEN", protocol.CLOSE: "CLOSE", protocol.MMAP: "MMAP", protocol.MAPPED: "MAPPED",
             protocol.MUNMAP: "MUNMAP", protocol.SPIN: "SPIN"}


class RemoteMemory:
    """The client's own memory, through its interposer (the foreign backend of mockgpu.usermem): only while the
    session handles one of its requests, on the connection that sent it. With `log`, what was read and written is
    kept for a trace (take_log), so that a replay can answer the same pointer arguments."""

    def __init__(self, log: bool = False, profile: HostProfile | None = None):
        self.sock: socket.socket | None = None
        self.log, self.profile = log, profile
        self.reads: list[tuple[int, bytes]] = []
        self.writes: list[tuple[int, bytes]] = []
        self.shares: list[tuple[int, object]] = []
        self.attached: tuple[int, bytes] = (0, b"")  # (address, bytes) the request brought along (protocol.ATTACHED)

    def take_log(self) -> tuple[list, list, list]:
        """The (address, bytes) read and written and the (address, pages) shared (USERPTR) since the last call."""
        out = (self.reads, self.writes, self.shares)
        self.reads, self.writes, self.shares = [], [], []
        return out

    def _call(self, kind: int, args, payload: bytes = b"") -> tuple[list[int], bytes, int | None]:
        if self.sock is None:
            raise KfdError(errno.EFAULT, "no client request in progress")
        try:
            with self.profile.trip(_CALLBACKS[kind]) if self.profile else nullcontext():
                protocol.send(self.sock, kind, args, payload)
                reply, rargs, data, fd = protocol.recv(self.sock)
        except ProtocolError as e:
            raise KfdError(errno.EFAULT, f"client memory: {e}") from None
        if reply != protocol.REPLY or rargs[0] < 0:
            if fd is not None:
                os.close(fd)
            raise KfdError(errno.EFAULT, f"bad user address {args[0]:#x}")
        return rargs, data, fd

    def attach(self, addr: int, data: bytes) -> None:
        """The caller's memory at `addr` as it was when it sent the request (the request's a2, a3): reads inside it
        are answered from it, without a MEM_READ round trip, until the request is answered."""
        self.attached = (addr, data)

    def begin(self, sock: socket.socket, args, attached: bytes) -> None:
        """A request of the client on `sock` is being handled: its memory is reachable through `sock` and the block
        the request brought along (IOCTL's a2 and its last a3 bytes)."""
        self.sock = sock
        self.attach(protocol.unsigned(args[2]), attached)

    def end(self) -> None:
        """The request is answered: the client's memory is out of reach again."""
        self.sock = None
        self.attached = (0, b"")

    def read(self, addr: int, n: int) -> bytes:
        """copy_from_user: from what the request brought along, else asked for in pieces of at most one message."""
        base, block = self.attached
        if block and base <= addr and addr + n <= base + len(block):
            data = block[addr - base:addr - base + n]
            if self.log:
                self.reads.append((addr, data))
            return data
        out = bytearray()
        for pos in range(0, n, protocol.MAX_PAYLOAD):
            k = min(protocol.MAX_PAYLOAD, n - pos)
            _, data, fd = self._call(protocol.MEM_READ, (addr + pos, k))
            if fd is not None:
                os.close(fd)
            if len(data) != k:
                raise KfdError(errno.EFAULT, f"bad user address {addr + pos:#x}")
            out += data
        if self.log:
            self.reads.append((addr, bytes(out)))
        return bytes(out)

    def write(self, addr: int, data: bytes) -> None:
        """copy_to_user in pieces of at most one message (and into what the request brought along, where it
        overlaps: a later read in the same request sees the store, as it would in the client's memory)."""
        for pos in range(0, len(data), protocol.MAX_PAYLOAD):
            _, _, fd = self._call(protocol.MEM_WRITE, (addr + pos,), bytes(data[pos:pos + protocol.MAX_PAYLOAD]))
            if fd is not None:
                os.close(fd)
        base, block = self.attached
        lo, hi = max(addr, base), min(addr + len(data), base + len(block))
        if lo < hi:
            patched = bytearray(block)
            patched[lo - base:hi - base] = data[lo - addr:hi - addr]
            self.attached = (base, bytes(patched))
        if self.log:
            self.writes.append((addr, bytes(data)))

    def fd_handle(self, fd: int) -> int:
        """The server handle of the client's file descriptor `fd` (EBADF if it is not a device file)."""
        try:
            args, _, rfd = self._call(protocol.FD_HANDLE, (fd,))
        except KfdError:
            raise KfdError(errno.EBADF, f"fd {fd} is not an open device file of the client") from None
        if rfd is not None:
            os.close(rfd)
        return args[0]

    def share(self, addr: int, size: int):
        """USERPTR: the client moves the pages into a memfd at the same address and sends it; mapped here."""
        _, _, fd = self._call(protocol.SHARE, (addr, size))
        if fd is None:
            raise KfdError(errno.EFAULT, f"userptr {addr:#x}: the client sent no memory")
        try:
            if os.fstat(fd).st_size < size:  # a file shorter than the range: touching its end would be SIGBUS here
                raise KfdError(errno.EFAULT, f"userptr {addr:#x}: the client sent {os.fstat(fd).st_size} bytes")
            pages = shared.view(shared.mmap(None, size, PROT_READ | PROT_WRITE, shared.MAP_SHARED, fd), size)
        except OSError as e:
            raise KfdError(errno.EFAULT, f"userptr {addr:#x}: the client's memory cannot be mapped: {e}") from None
        finally:
            os.close(fd)
        if self.log:
            self.shares.append((addr, pages))
        return pages


@dataclass
class Parked:
    """A WAIT_EVENTS that waits for an event or its deadline."""

    sock: socket.socket
    args: list[int]
    payload: bytes
    events: list[int]
    wait_all: bool
    deadline: float


def fired(events: dict, p: Parked) -> bool:
    """Whether a parked WAIT_EVENTS can be answered: its events fired (all, or any of them with wait_all unset or an
    exception among them), or one of them does not exist (the ioctl answers EINVAL)."""
    if any(e not in events for e in p.events):
        return True
    hits = [events[e].signaled for e in p.events]
    exceptions = any(e.signaled and e.type in (kfd.KFD_IOC_EVENT_MEMORY, kfd.KFD_IOC_EVENT_HW_EXCEPTION)
                     for e in (events[i] for i in p.events))
    return all(hits) if p.wait_all and not exceptions else any(hits)


def _look(sock, args, payload) -> None:
    """SPIN: a thread of the client spins on the GPU's memory and has stored a doorbell the worker has not acted
    on: the turn this message makes looks at the doorbells (no reply). (The doorbell watch takes SPINs itself when
    it runs: mockgpu/csrc/doorbellwait.c.)"""


class Session:
    """One client process: its machine (`os`, possibly a recorder around `mock`), its connections, its worker."""

    def __init__(self, pid: int, machine: tuple, memory: RemoteMemory, log, recording: bool = False,
                 ended: Callable[[Session], None] | None = None, profile: HostProfile | None = None):
        self.pid, self.memory, self.log, self.recording = pid, memory, log, recording
        self.profile = profile  # simgpu run --profile-host: count round trips, cProfile the worker
        self.os, self.mock, self.finish = machine
        self.ended = ended or (lambda s: None)
        self.conns: set[socket.socket] = set()
        self.parked: list[Parked] = []
        self.mappings: dict[int, Mapping] = {}  # client address -> mapping
        self.kfd: int | None = None  # the driver's own /dev/kfd file (doorbell pages)
        self.doorbell_pages: dict[int, Mapping] = {}  # GPU index -> the driver's mapping
        self.views: dict[int, Mapping] = {}  # buffer handle -> the driver's mapping (recording)
        self.next_va = DRIVER_VA
        # Recording diffs every tracked page at each point the GPU may run: retry waiting queues less often.
        self.retry_interval = RECORDING_RETRY if recording else 0.0
        self._last_retry = 0.0
        self.last_activity = 0.0
        self.dead = threading.Event()  # the client is gone: stop whatever runs, end
        self._lock = threading.Lock()  # the inbox and `closing`, between the server's thread and the worker
        self._inbox: list[socket.socket] = []
        self.closing = False  # the worker is ending: a new connection of this pid needs a new session
        self._wake_r, self._wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.wake_fd = self._wake_r  # (readable when the server's thread has something for the worker)
        self.conns_version = 0  # bumped whenever `conns` changes (the loop's descriptors are made again then)
        self.status = StatusPage.of(pid, self.mock)  # what a client spinning on the GPU reads
        for g in self.mock.gpus:
            g.engine.progress_hooks.append(self._alive)
        self.thread = threading.Thread(target=self._run, name=f"simgpu-session-{pid}", daemon=True)

    # ---- for the server's thread ------------------------------------------------------------------------
    def add(self, sock: socket.socket) -> bool:
        """Hand a connection of this client to the worker; False if the session is already ending."""
        with self._lock:
            if self.closing:
                return False
            self._inbox.append(sock)
        self._wake()
        return True

    def kill(self) -> None:
        """The client died (or the server stops): end the session now, stopping a dispatch at its next TICK and
        any wait for the client (its connections are shut down under the worker)."""
        self.dead.set()
        with self._lock:
            socks = list(self.conns) + list(self._inbox)
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._wake()

    def status_fd(self) -> int | None:
        """A descriptor of the session's status page to send with a HELLO reply (the caller closes it), or None if
        the session is ending (its page is closed, or about to be)."""
        with self._lock:
            return None if self.closing else os.dup(self.status.fd)

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"!")
        except OSError:  # the pipe is full (the worker has been told already) or closed (it ended)
            pass

    # ---- the worker ---------------------------------------------------------------------------------------
    def _alive(self, progress) -> None:
        """A progress hook of every GPU of the session: a dead client's dispatch stops here, at the next TICK."""
        if self.dead.is_set():
            raise ClientGone(f"pid {self.pid} is gone")

    def _run(self) -> None:
        try:
            with self.profile.thread() if self.profile else nullcontext():
                self._serve()
        except ClientGone:
            pass
        except Exception as e:  # noqa: BLE001 - a simulator bug ends this session, never the server
            print(f"simgpu server: pid {self.pid}: session failed: {type(e).__name__}: {e}", file=self.log)
        finally:
            self._end()

    def _take_inbox(self) -> bool:
        """New connections in; False when the session has none left and is to end."""
        with self._lock:
            if self._inbox:
                self.conns.update(self._inbox)
                self._inbox.clear()
                self.conns_version += 1
            if not self.conns or self.dead.is_set():
                self.closing = True
                return False
        return True

    def _serve(self) -> None:
        turns = Turns(self)  # (mockgpu/session_turn.py: the loop's state and its turn)
        while self._take_inbox():
            turns.turn()

    def take(self, ready: list) -> bool:
        """The descriptors found readable: the server's wake-up drained, a request served, a connection that
        hung up dropped; True if a client's connection was among them."""
        moved = False
        parked = {p.sock for p in self.parked}
        for sock in ready:
            if sock == self._wake_r:
                while self._drain():
                    pass
                continue
            moved = True
            if sock in parked:  # a client in a wait sends nothing: it went away (or broke the protocol)
                self._drop(sock)
            elif sock in self.conns:
                self._serve_one(sock)
        return moved

    def _drain(self) -> bool:
        try:
            return bool(os.read(self._wake_r, 4096))
        except BlockingIOError:
            return False

    def _end(self) -> None:
        """Close everything of the client and drop its machine (all its memory goes with the last reference)."""
        with self._lock:
            self.closing = True
            socks = list(self.conns) + self._inbox
            self.conns.clear()
            self._inbox.clear()
        for sock in socks:
            sock.close()
        self.parked.clear()
        self.memory.sock = None
        try:
            self.finish()
        except Exception as e:  # noqa: BLE001
            print(f"simgpu server: pid {self.pid}: finishing failed: {e}", file=self.log)
        machine = weakref.ref(self.mock)
        self.os = self.mock = self.finish = None
        self.mappings.clear()
        self.doorbell_pages.clear()
        self.views.clear()
        os.close(self._wake_r)
        os.close(self._wake_w)
        self.status.close()
        if machine() is not None:  # held by a reference cycle: its memory goes now, not at some later full collection
            gc.collect()  # (only then: a full collection in a large process, a test worker's, takes seconds)
        self.ended(self)

    def _drop(self, sock: socket.socket) -> None:
        self.conns.discard(sock)
        self.conns_version += 1
        self.parked = [p for p in self.parked if p.sock is not sock]
        sock.close()

    def advance(self, waiter=None) -> bool:
        """Run the session's GPUs (`waiter`: the doorbell watch, which compares the doorbells in C); answer the
        parked waits that can be answered. True if the GPUs moved or a parked wait was answered."""
        moved = False
        now = time.monotonic()
        try:
            moved |= self.ring_doorbells(waiter)
            if now - self._last_retry >= self.retry_interval and blocked(self.mock.gpus):
                moved |= bool(self.os.progress(poll_all=False))
                self._last_retry = now
        except Exception as e:  # noqa: BLE001 - a simulator bug must not take the session down
            moved = True  # (what ran before the failure may have written signals: wake the spinning client)
            print(f"simgpu server: pid {self.pid}: progress failed: {type(e).__name__}: {e}", file=self.log)
        for p in list(self.parked):
            expired = now >= p.deadline
            if expired or fired(self.mock.process.events, p):
                self.parked.remove(p)
                moved = True
                try:
                    self._ioctl(p.sock, p.args, p.payload, expired=expired)
                except Exception as e:  # noqa: BLE001 - the client went away, or worse: drop only it
                    if not isinstance(e, ProtocolError):
                        print(f"simgpu server: dropping a client after {type(e).__name__}: {e}", file=self.log)
                    self._drop(p.sock)
        return moved

    # ---- the machine --------------------------------------------------------------------------------------
    def driver_map(self, fd: int, length: int, offset: int) -> Mapping:
        """A mapping of the driver's own, through the OS (so a recorder sees and records it)."""
        addr, self.next_va = self.next_va, self.next_va + ((length + 0xFFFF) & ~0xFFFF) + 0x10000
        return self.os.mmap(fd, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, offset, addr)

    def ring_doorbells(self, waiter=None) -> bool:
        """Doorbells the client stored into the shared pages become doorbell writes through the OS (MockOS runs
        the queue; a recorder records an mmio record, which a replay performs the same way). `waiter` (the doorbell
        watch) finds them in C, every GPU's at once, else each GPU's pending_doorbells in numpy when its turn comes:
        the same doorbells in the same order (a store that comes while an earlier GPU's queue runs is found by the
        next turn, at once: the watch sees it differ)."""
        gpus = self.mock.gpus
        pending = waiter.pending() if waiter is not None else \
            ((i, slot, value) for i, gpu in enumerate(gpus) for slot, value in gpu.pending_doorbells())
        rang = False
        for i, slot, value in pending:
            if i not in self.doorbell_pages:
                if self.kfd is None:
                    self.kfd = self.os.open("/dev/kfd")
                self.doorbell_pages[i] = self.driver_map(self.kfd, DOORBELL_PAGE, self.mock.devmem.doorbell_offset(i))
            self.status.busy()
            self.os.mmio_write(self.doorbell_pages[i], slot * 8, value, 8)
            rang = True
        return rang

    # ---- requests -----------------------------------------------------------------------------------------
    def _serve_one(self, sock: socket.socket) -> None:
        try:
            kind, args, payload, fd = protocol.recv(sock)
            if fd is not None:
                os.close(fd)  # clients never send descriptors
            handler = {protocol.OPEN: self._open, protocol.CLOSE: self._close, protocol.IOCTL: self._ioctl,
                       protocol.MMAP: self._mmap, protocol.MAPPED: self._mapped,
                       protocol.MUNMAP: self._munmap, protocol.SPIN: _look}.get(kind)
            if handler is None:
                raise ProtocolError(f"unknown request {kind}" if kind != protocol.HELLO else "HELLO twice")
            if self.profile is None:
                handler(sock, args, payload)
                return
            name = f"IOCTL {ioctl_name(args[1] & 0xFFFFFFFF)}" if kind == protocol.IOCTL else _REQUESTS[kind]
            with self.profile.trip(name):
                handler(sock, args, payload)
        except ProtocolError:
            self._drop(sock)
        except Exception as e:  # noqa: BLE001 - whatever a client sends, the server stays up
            print(f"simgpu server: pid {self.pid}: dropping a connection after {type(e).__name__}: {e}",
                  file=self.log)
            self._drop(sock)

    @staticmethod
    def _reply(sock: socket.socket, result: int, payload: bytes = b"", fd: int | None = None) -> None:
        protocol.send(sock, protocol.REPLY, (result,), payload, fd)

    def _open(self, sock, args, payload) -> None:
        try:
            fd = self.os.open(payload.decode(), args[0])
        except (OSError, UnicodeDecodeError, ValueError) as e:  # (ValueError: a path with a NUL in it)
            self._reply(sock, -(getattr(e, "errno", None) or errno.ENOENT))
            return
        self._reply(sock, fd, fd=self.mock.devmem.fd)

    def _close(self, sock, args, payload) -> None:
        try:
            self.os.close(args[0])
            self._reply(sock, 0)
        except OSError as e:
            self._reply(sock, -(e.errno or errno.EBADF))

    def _ioctl(self, sock, args, payload, may_park: bool = True, expired: bool = False) -> None:
        """An ioctl; `expired`: a parked WAIT_EVENTS whose timeout passed (it answers TIMEOUT, waiting no more)."""
        handle, request = args[0], args[1] & 0xFFFFFFFF
        size, attached = kfd.ioc_size(request), protocol.unsigned(args[3])
        if len(payload) != size + attached:
            self._reply(sock, -errno.EFAULT)
            return
        if request == kfd.AMDKFD_IOC_WAIT_EVENTS and may_park and not expired:
            parked = self._park(sock, args, payload)
            if parked is not None:
                self.parked.append(parked)
                return
        buf = bytearray(payload[:size])
        self.memory.begin(sock, args, payload[size:])
        try:
            if request == kfd.AMDKFD_IOC_ACQUIRE_VM:  # the client's render-node fd, as this machine knows it
                a = kfd.kfd_ioctl_acquire_vm_args.from_buffer(buf)
                a.drm_fd = self.memory.fd_handle(a.drm_fd) & 0xFFFFFFFF
                del a
            # The driver's own wait would sleep again for the timeout while any thread exists (the other
            # sessions' workers): a wait that expired here is answered as expired.
            self.mock.process.expired = expired
            result = self.os.ioctl(handle, request, buf)
        except (OSError, KfdError) as e:
            self._reply(sock, -(e.errno or errno.EIO))
            return
        finally:
            self.memory.end()
            self.mock.process.expired = False
        if self.recording:
            record_views(self, request, buf)
        self._reply(sock, result or 0, bytes(buf))

    def _park(self, sock, args, payload) -> Parked | None:
        """A WAIT_EVENTS that the GPUs cannot satisfy now, with a timeout: park it (None: answer it now)."""
        a = kfd.kfd_ioctl_wait_events_args.unpack(payload)
        if not a.timeout or not 0 < a.num_events <= kfd.KFD_SIGNAL_EVENT_LIMIT:
            return None
        size = ctypes.sizeof(kfd.kfd_event_data)
        self.memory.begin(sock, args, payload[kfd.ioc_size(args[1] & 0xFFFFFFFF):])
        try:
            raw = self.mock.user.read(a.events_ptr, size * a.num_events)  # (access_ok first, as the ioctl does)
        except KfdError:
            return None  # the ioctl itself answers EFAULT
        finally:
            self.memory.end()
        ids = [kfd.kfd_event_data.unpack(raw[i * size:(i + 1) * size]).event_id for i in range(a.num_events)]
        self.os.progress(poll_all=True)
        deadline = time.monotonic() + (a.timeout / 1000 if a.timeout < 0xFFFFFFFF else 1e9)
        p = Parked(sock, args, payload, ids, bool(a.wait_for_all), deadline)
        return None if fired(self.mock.process.events, p) else p

    def _mmap(self, sock, args, payload) -> None:
        handle, _, length, _, _, offset = (protocol.unsigned(a) for a in args[:6])
        try:
            self.mock.check_mmap(handle, length, offset)
            self._reply(sock, 0)
        except OSError as e:
            self._reply(sock, -(e.errno or errno.EINVAL))

    def _mapped(self, sock, args, payload) -> None:
        handle, addr, length, prot, flags, offset = (protocol.unsigned(a) for a in args[:6])
        try:
            self.mappings[addr] = self.os.mmap(handle, length, prot, flags | MAP_FIXED, offset, addr)
            self._reply(sock, 0)
        except OSError as e:
            self._reply(sock, -(e.errno or errno.EINVAL))

    def _munmap(self, sock, args, payload) -> None:
        addr, length = protocol.unsigned(args[0]), protocol.unsigned(args[1])
        for start in [a for a, m in self.mappings.items() if a < addr + length and addr < a + m.length]:
            self.os.munmap(self.mappings.pop(start))
        self._reply(sock, 0)


def record_views(s: Session, request: int, buf: bytearray) -> None:
    """Recording: every CPU-mappable buffer gets a mapping of the driver's own, so the trace holds the client's
    stores into it even when the client maps it behind the interposer's back (ctypes' libc mmap)."""
    if request == kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU:
        a = kfd.kfd_ioctl_alloc_memory_of_gpu_args.unpack(buf)
        al = s.mock.process.allocs.get(a.handle)
        node = s.mock.nodes[al.node] if al is not None else None
        if al is not None and al.kind in ("vram", "gtt") and node.drm_fd is not None:
            s.views[a.handle] = s.driver_map(node.drm_fd, al.size, al.mmap_offset)
    elif request == kfd.AMDKFD_IOC_FREE_MEMORY_OF_GPU:
        view = s.views.pop(kfd.kfd_ioctl_free_memory_of_gpu_args.unpack(buf).handle, None)
        if view is not None:
            s.os.munmap(view)
