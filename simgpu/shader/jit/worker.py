"""LLVM's part of background compiles, in a process of its own.

A background compile used to run LLVM on a thread of the simulating process. llvmlite makes every call into LLVM
of a process take turns under one lock, and a compile cannot be stopped once LLVM has it: a kernel compiled for a
test that had ended (or a program that moved on) held the lock for seconds, and the next eager compile or load
waited behind it (a cold test suite's first corpus test waited 28 s). Here the compile runs in a worker process:
the simulating process's LLVM is free for eager compiles and loads, and `stop()` ends a compile nobody needs by
ending the process (the next background compile starts another).

A request is a module text (compile_object: the worker answers with the object file and its CPU seconds; it
compiles exactly as compile.object_code does in-process, compile.emit, so its objects are the ones an eager compile
makes) or a kernel's code to translate as well (translate: jit.remote, which also runs the disk cache there), with
the JIT CPU and optimisation settings of the moment. The messages are msgpack maps behind a 4-byte length, on the
worker's stdin and stdout; a reply is checked before use (a malformed one is a CompileFailed). The worker's first
message says it is ready (its imports done): stop() spares a worker that is still starting.

serve() is the worker's side (remote.serve starts it with the translation handler). The worker starts with
`python -c` rather than `-m`: `-m` imports the package simgpu.shader.jit (which imports this module through tier)
before it runs this module again as __main__, and runpy warns about the double import on the program's stderr.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import msgpack

from simgpu import settings
from simgpu.shader.jit import compile as jc

_HEADER = struct.Struct("<I")
COMMAND = [sys.executable, "-c", "from simgpu.shader.jit.remote import serve; serve()"]
MAX_MESSAGE = 1 << 30  # an object file or module text beyond this is not one of ours
_DROPPED = object()  # _Worker._exchange: the request was cancelled before it was sent


class CompileDropped(Exception):
    """The worker was stopped (stop()) while it compiled: nobody needs that code; the kernel compiles again when
    it is hot again."""


class CompileFailed(RuntimeError):
    """LLVM in the worker rejected the module (its message), or the worker died."""


def _write(stream, message: dict) -> None:
    data = msgpack.packb(message, use_bin_type=True)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read(stream) -> dict | None:
    """The next message, or None at the end of the stream."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (n,) = _HEADER.unpack(head)
    if n > MAX_MESSAGE:
        raise CompileFailed(f"JIT worker message of {n} bytes")
    data = stream.read(n)
    if len(data) < n:
        return None
    message = msgpack.unpackb(data, raw=False)
    if not isinstance(message, dict):
        raise CompileFailed("JIT worker message is not a map")
    return message


class _Worker:
    """One worker process and the lock that gives it one request at a time."""

    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parents[3])  # the directory simgpu is imported from
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH")))))
        self.proc = subprocess.Popen(COMMAND, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        self.pid = os.getpid()  # a forked child must not share this process's pipes
        # at exit, before Python joins the background thread waiting here: no exit waits for a compile
        try:
            threading._register_atexit(self.stop)
        except RuntimeError:  # the interpreter is already shutting down: nothing to wait for then
            pass
        self.lock = threading.Lock()
        self.stopped = False
        self.started = False  # it said it is ready (its imports done)

    def ask(self, message: dict, cancelled=None) -> dict:
        """Send one request (with the JIT's CPU and optimisation settings of the moment) and read its reply: a map
        without an "error" (CompileFailed otherwise; CompileDropped when stop() ended it, or when `cancelled()`
        says so once the worker has started)."""
        with self.lock:
            if self.stopped:
                raise CompileDropped("the JIT worker was stopped")
            reply = self._exchange(message, cancelled)
            if self.stopped:
                self._close()
        if reply is _DROPPED:
            raise CompileDropped("dropped while the JIT worker started")
        if reply is None:
            if self.stopped:
                raise CompileDropped("the JIT worker was stopped during the compile")
            raise CompileFailed(f"the JIT worker ended (exit status {self.proc.poll()})")
        if "error" in reply:
            raise CompileFailed(f"JIT worker: {reply['error']}")
        return reply

    def _exchange(self, message: dict, cancelled):
        """The worker's reply to `message` (None: it ended; _DROPPED: cancelled), its readiness read first."""
        try:
            if not self.started:  # (its imports: stop() spares a worker still starting, needed by the next compile)
                if _read(self.proc.stdout) is None:
                    return None
                self.started = True
            if cancelled is not None and cancelled():
                return _DROPPED
            _write(self.proc.stdin, {**message, "cpu": settings.get("SIMGPU_JIT_CPU"),
                                     "opt": list(settings.get("SIMGPU_JIT_OPT"))})
            return _read(self.proc.stdout)
        except (BrokenPipeError, OSError, ValueError) as e:
            return None if self.stopped else {"error": f"{type(e).__name__}: {e}"}
        except Exception as e:  # noqa: BLE001 - msgpack's errors on bytes that are not ours
            return {"error": f"unreadable reply: {type(e).__name__}: {e}"}

    def stop(self) -> None:
        """End the process now, whatever it is doing (a request waiting on it gets CompileDropped)."""
        self.stopped = True
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.lock.acquire(blocking=False):  # else a request is reading: it closes them once it has its end
            try:
                self._close()
            finally:
                self.lock.release()

    def _close(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass


_WORKER: _Worker | None = None
_START = threading.Lock()


def _current() -> _Worker:
    """The worker process, started on first use (and again after stop(), a fork or its death)."""
    global _WORKER
    with _START:
        if _WORKER is None or _WORKER.stopped or _WORKER.pid != os.getpid() or _WORKER.proc.poll() is not None:
            _WORKER = _Worker()
        return _WORKER


def compile_object(ir: str) -> tuple[bytes, float]:
    """(object file of module text `ir`, the worker's CPU seconds for it), made in the worker process (started on
    first use). Raises CompileDropped when stop() ended the compile, CompileFailed when LLVM rejected it."""
    reply = _current().ask({"ir": ir})
    obj, seconds = reply.get("object"), reply.get("seconds")
    if not isinstance(obj, bytes) or not isinstance(seconds, float):
        raise CompileFailed("JIT worker reply without an object file")
    return obj, seconds


def translate(message: dict, cancelled=None) -> dict:
    """The worker's reply to a translation request (jit.remote.request; remote.built_from checks it); `cancelled()`
    is asked once the worker has started (CompileDropped if it says so)."""
    return _current().ask(message, cancelled)


def running() -> bool:
    """Whether this process has a worker started (a compile then pays no process start)."""
    w = _WORKER
    return w is not None and not w.stopped and w.pid == os.getpid() and w.proc.poll() is None


def busy() -> bool:
    """Whether a compile is under way in the worker (not: it is still starting)."""
    w = _WORKER
    return w is not None and w.started and w.lock.locked()


def stop(only_if_busy: bool = True) -> bool:
    """End the worker (only when it is compiling, by default: an idle or starting worker costs nothing more and
    saves the next compile its start, ~0.45 CPU-s; a request waiting for its start is dropped by the caller's
    `cancelled`); whether it was ended."""
    global _WORKER
    with _START:
        w = _WORKER
        if w is None or w.pid != os.getpid() or (only_if_busy and not (w.started and w.lock.locked())):
            return False
        _WORKER = None
    w.stop()
    return True


def serve(translate_request=None) -> None:
    """The worker's loop: compile each request, answer with the object or the error (`translate_request`: the
    handler of translation requests, jit.remote's). A parent that stopped the worker (or exited) while it compiled
    closed the reply pipe: the worker ends quietly then."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies on the reply stream
    if not _answer(stdout, {"ready": True}):  # (its imports are done: the parent may stop it from now on)
        return
    while (request := _read(stdin)) is not None:
        # the parent's settings for this compile (read when used, so they may have changed since the start)
        os.environ["SIMGPU_JIT_CPU"] = request.get("cpu", "")
        os.environ["SIMGPU_JIT_OPT"] = ",".join(str(int(v)) for v in request.get("opt", (-1, 2)))
        t0 = time.process_time()
        try:
            if "source" in request and translate_request is not None:
                reply = translate_request(request)
            else:
                reply = {"object": jc.emit(request["ir"])}
                reply["seconds"] = time.process_time() - t0
        except Exception as e:  # noqa: BLE001 - the parent reports it; the worker serves the next request
            reply = {"error": f"{type(e).__name__}: {e}"}
        if not _answer(stdout, reply):
            return


def _answer(stdout, message: dict) -> bool:
    """Write a message to the parent; False when nobody reads any more (the worker then ends quietly)."""
    try:
        _write(stdout, message)
    except BrokenPipeError:
        # point the descriptor at /dev/null so the exit's flush of the unsent bytes is silent
        os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        return False
    return True


if __name__ == "__main__":
    serve()
