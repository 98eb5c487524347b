"""The simgpu server: the process-level device behind `simgpu run`.

Programs run with the interposer (mockgpu/csrc/preload.c) preloaded; it sends their /dev/kfd and render-node calls
here over a unix socket (mockgpu/protocol.py). Each client process is a session (mockgpu/session.py) with its own
simulated machine and its own worker thread, created when the process first connects and dropped, with all its
queues, events and memory, when it dies or closes its last connection. Memory is shared: the device-memory file is
the fd the client gets for /dev/kfd and each render node.

Trust: no client is believed. A connection is bound to the process at its other end by the socket's peer
credentials (SO_PEERCRED): the pid in its HELLO must be that process's, and its uid the server's own; a mismatch
is refused (EPERM) and the connection closed. So a client reaches only its own session: it cannot name another
process's machine, memory or queues. Sessions share nothing and run in their own threads, so one client's endless
kernel or stalled request does not hold up another client, and a client's results do not depend on another's
timing. The server watches each client's pid (a pidfd): when the process dies, its dispatch stops at once (at the
shader engine's next TICK, whatever the watchdog) and its machine is freed.

Everything a client sends is checked: a malformed message closes that connection, a bad ioctl argument is the
errno the kernel would give, a bad pointer is EFAULT (the interposer reads the client's memory with
process_vm_readv), garbage in a ring is a queue error. No client input can raise out of `serve`.
"""

from __future__ import annotations

import errno
import os
import socket
import struct
import sys
import threading
from collections.abc import Callable

from mockgpu import protocol
from mockgpu.hostprofile import HostProfile
from mockgpu.protocol import ProtocolError
from mockgpu.session import RemoteMemory, Session
from mockgpu.session_turn import readable

WATCH_POLL = 0.01  # seconds between checks of `done` (the program's exit) while nothing else happens
# ... while a pidfd of the program announces its exit (serve's `program`): a backstop only. The 10 ms turns of
# this thread cost ~1 CPU s per 100 s on a loaded host and took the GIL from the session workers 100 times a second
PROGRAM_WATCH_POLL = 1.0
_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def peer_credentials(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end of a unix socket, as the kernel recorded it at connect()."""
    pid, uid, _ = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    return pid, uid


def _pidfd(pid: int) -> int | None:
    """A pidfd of the client (readable once it exits), or None where the kernel has none (Linux < 5.3)."""
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None


def _welcome(sock: socket.socket, page: int | None) -> None:
    """HELLO's answer: 0, and the session's status page (a descriptor of the server's own, closed here once sent)."""
    try:
        protocol.send(sock, protocol.REPLY, (0,), fd=page)
    finally:
        if page is not None:
            os.close(page)


class Server:
    """Listens on `path`; `make_machine(memory, pid)` gives a new session's (os, mock, finish)."""

    def __init__(self, path: str, make_machine: Callable, log=None, record: bool = False,
                 profile: HostProfile | None = None):
        self.path, self.make_machine, self.log, self.record = path, make_machine, log or sys.stderr, record
        self.profile = profile  # simgpu run --profile-host (mockgpu.hostprofile)
        self.uid = os.geteuid()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        # The socket appears at `path` only once it listens: a program `simgpu run` started early waits for the file
        # and connects at once (between bind and listen its connect would be refused). Renaming a bound socket keeps
        # it bound (a connect finds it by its inode).
        binding = f"{path}.binding"
        self.listener.bind(binding)
        os.chmod(binding, 0o600)  # only this user may connect (the peer credentials are checked as well)
        self.listener.listen(64)
        os.rename(binding, path)
        self.unbound: set[socket.socket] = set()  # accepted, no HELLO yet
        self.sessions: dict[int, Session] = {}  # pid -> its session (while its worker runs)
        self._lock = threading.Lock()
        self._pidfds: dict[int, Session] = {}  # a pidfd -> the session of its process
        self._ended_r, self._ended_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)  # workers say they ended

    # ---- the loop -------------------------------------------------------------------------------------
    def serve(self, done: Callable[[], bool], program: int | None = None) -> None:
        """Serve until `done()` is true and no client is connected; each session's GPUs run in its worker.
        `program`: the pid whose exit makes `done()` true (the program `simgpu run` started): its pidfd wakes
        this thread when it exits, so `done` is asked every PROGRAM_WATCH_POLL instead of every WATCH_POLL."""
        watch = _pidfd(program) if program is not None else None
        try:
            if self.profile is not None:
                with self.profile.thread():
                    self._loop(done, watch)
            else:
                self._loop(done, watch)
        finally:
            if watch is not None:
                os.close(watch)
        self.close()

    def _loop(self, done: Callable[[], bool], watch: int | None) -> None:
        while not (done() and not self.sessions and not self.unbound):
            # (the program's pidfd stays readable once it has exited: then `done` is asked every WATCH_POLL)
            exited = watch is None or done()
            ready = readable([self.listener, self._ended_r, *self.unbound, *self._pidfds,
                              *(() if exited else (watch,))], WATCH_POLL if exited else PROGRAM_WATCH_POLL)
            for r in ready:
                if r == watch:
                    continue  # the program exited: `done` says so at the top of the loop
                if r is self.listener:
                    self._accept()
                elif r == self._ended_r:
                    self._reap()
                elif r in self.unbound:
                    self._hello(r)
                elif r in self._pidfds:  # the client process exited: its session ends now
                    self._unwatch(r).kill()

    def close(self) -> None:
        """End every session and stop listening."""
        for sock in list(self.unbound):
            sock.close()
        self.unbound.clear()
        with self._lock:
            sessions = list(self.sessions.values())
        for s in sessions:
            s.kill()
        for s in sessions:
            s.thread.join(10)
        self._reap()
        for fd in list(self._pidfds):
            self._unwatch(fd)
        self.listener.close()
        if os.path.exists(self.path):
            os.unlink(self.path)
        os.close(self._ended_r)
        os.close(self._ended_w)

    # ---- connections ----------------------------------------------------------------------------------
    def _accept(self) -> None:
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return
        self.unbound.add(sock)

    def _hello(self, sock: socket.socket) -> None:
        """The first message of a connection: HELLO with the pid of the process at the other end."""
        self.unbound.discard(sock)
        try:
            kind, args, _, fd = protocol.recv(sock)
            if fd is not None:
                os.close(fd)
            pid, uid = peer_credentials(sock)
            if kind != protocol.HELLO:
                raise ProtocolError(f"request {kind} before HELLO")
            if args[0] != pid or uid != self.uid:
                print(f"simgpu server: refused a connection that says it is pid {args[0]}: its peer is pid {pid}, "
                      f"uid {uid}", file=self.log)
                protocol.send(sock, protocol.REPLY, (-errno.EPERM,))
                raise ProtocolError("credentials do not match")
            self._bind(sock, pid)
        except ProtocolError:
            sock.close()
        except Exception as e:  # noqa: BLE001 - whatever a client sends, the server stays up
            print(f"simgpu server: refusing a connection after {type(e).__name__}: {e}", file=self.log)
            sock.close()

    def _bind(self, sock: socket.socket, pid: int) -> None:
        """Answer the HELLO with the session's status page (mockgpu.statuspage) and give the connection to its
        process's session, made (with its machine) if it has none running. (A session that began to end between
        the two has sent its page, now closed: that client's spinning threads are not slept until its next
        connection brings the new session's.)"""
        with self._lock:
            s = self.sessions.get(pid)
        page = s.status_fd() if s is not None else None
        if page is not None:
            _welcome(sock, page)
            if s.add(sock):
                return
        memory = RemoteMemory(log=self.record, profile=self.profile)
        s = Session(pid, self.make_machine(memory, pid), memory, self.log, recording=self.record, ended=self._ended,
                    profile=self.profile)
        with self._lock:
            self.sessions[pid] = s  # (a session of this pid that is ending leaves on its own: _ended)
        # Every queue reset (a fault, a limit, a wait that timed out) says which and why in the server's log too.
        s.mock.process.reset_hooks.append(lambda line: print(f"simgpu server: pid {pid}: {line}", file=self.log,
                                                             flush=True))
        if page is None:
            _welcome(sock, s.status_fd())
        s.add(sock)
        fd = _pidfd(pid)
        if fd is not None:
            self._pidfds[fd] = s
        s.thread.start()

    def _ended(self, s: Session) -> None:
        """A worker's last act (in its thread): the session leaves the table; the loop reaps it."""
        with self._lock:
            if self.sessions.get(s.pid) is s:
                del self.sessions[s.pid]
        try:
            os.write(self._ended_w, b"!")
        except OSError:
            pass

    def _reap(self) -> None:
        """Forget the pidfds of sessions that ended."""
        try:
            while os.read(self._ended_r, 4096):
                pass
        except (BlockingIOError, OSError):
            pass
        for fd, s in list(self._pidfds.items()):
            if s.mock is None:
                self._unwatch(fd)

    def _unwatch(self, fd: int) -> Session:
        s = self._pidfds.pop(fd)
        os.close(fd)
        return s
