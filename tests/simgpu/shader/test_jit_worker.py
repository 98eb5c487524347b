"""The JIT's worker process (simgpu.shader.jit.worker): the object files it makes are the bytes LLVM makes in
this process, LLVM's errors come back as CompileFailed with LLVM's message, the JIT CPU setting of the request
is the one used, and a reply stream that is not ours is refused."""

from __future__ import annotations

import io
import struct
import threading

import pytest

from simgpu.shader.jit import compile as jc
from simgpu.shader.jit import worker

IR = """
define i32 @round(i32 %x) {
  %y = mul i32 %x, 7
  %z = add i32 %y, 3
  ret i32 %z
}
"""


def test_the_worker_makes_the_bytes_llvm_makes_here():
    obj, seconds = worker.compile_object(IR)
    assert obj == jc.emit(IR) and obj[:4] == b"\x7fELF"
    assert seconds >= 0.0


def test_the_requested_cpu_is_the_one_compiled_for(monkeypatch):
    monkeypatch.setenv("SIMGPU_JIT_CPU", "x86-64")
    obj, _ = worker.compile_object(IR)
    assert obj == jc.emit(IR)


def test_llvm_errors_come_back_with_llvms_message():
    with pytest.raises(worker.CompileFailed, match="expected"):
        worker.compile_object("define i32 @round( {")
    assert worker.compile_object(IR)[0] == jc.emit(IR)  # the worker serves the next request


def test_a_reply_stream_that_is_not_ours_is_refused():
    assert worker._read(io.BytesIO(b"\x01\x02")) is None  # cut short: the worker ended
    with pytest.raises(worker.CompileFailed, match="bytes"):
        worker._read(io.BytesIO(struct.pack("<I", worker.MAX_MESSAGE + 1)))
    with pytest.raises(worker.CompileFailed, match="not a map"):
        worker._read(io.BytesIO(struct.pack("<I", 1) + b"\x07"))


def test_stop_ends_only_a_busy_worker():
    worker.compile_object(IR)
    assert worker.stop() is False  # idle: kept for the next compile
    assert worker.stop(only_if_busy=False) is True
    assert worker.compile_object(IR)[0] == jc.emit(IR)  # a new one starts on demand


def test_the_requested_optimisation_is_the_one_used(monkeypatch):
    monkeypatch.setenv("SIMGPU_JIT_OPT", "2,2")
    obj, _ = worker.compile_object(IR)
    assert obj == jc.emit(IR)


def test_a_worker_whose_parent_stopped_reading_ends_silently():
    """A parent that stops the worker mid-compile closes the reply pipe first: the worker ends with status 0 and
    writes nothing on the program's stderr (no traceback, no runpy warning about how it was started)."""
    import os
    import subprocess
    from pathlib import Path

    root = str(Path(worker.__file__).resolve().parents[3])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH")))))
    proc = subprocess.Popen(worker.COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)
    proc.stdout.close()  # the reader is gone before the reply is written
    worker._write(proc.stdin, {"ir": IR, "cpu": "", "opt": [-1, 2]})
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""


def test_a_starting_worker_is_spared_by_a_drop_and_the_request_waiting_for_it_is_dropped():
    """stop() ends a worker that compiles, not one still starting (its ~0.45 CPU-s of imports serve the next
    compile); a request waiting for that start is dropped by its `cancelled` instead, once the worker is ready."""
    worker.stop(only_if_busy=False)
    cancel = threading.Event()
    got = []
    w = worker._current()
    t = threading.Thread(target=lambda: got.append(_outcome(lambda: w.ask({"ir": IR}, cancel.is_set))))
    t.start()
    cancel.set()
    assert worker.stop() is False or w.started  # (a fast start may be over already: then it compiles, and ends)
    t.join(120)
    if not w.stopped:
        assert got == ["CompileDropped"] and worker._WORKER is w
        assert worker.compile_object(IR)[0] == jc.emit(IR) and worker._WORKER is w  # the same process serves
    else:
        assert got == ["CompileDropped"]


def _outcome(fn) -> str:
    try:
        fn()
    except worker.CompileDropped:
        return "CompileDropped"
    return "done"
