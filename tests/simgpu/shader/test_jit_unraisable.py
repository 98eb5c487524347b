"""Unraisable exceptions from ctypes callbacks go to the run on the callback's thread, whatever other threads'
native calls begin and end meanwhile (`simgpu run` serves each client on a thread of its own)."""

from __future__ import annotations

import ctypes
import sys
import threading

from simgpu.shader.jit.unraisable import kept_by

CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int)


def _raise_in_callback(tag: str) -> None:
    """An exception inside a ctypes callback: it cannot cross C, so Python reports it as unraisable."""
    def body() -> int:
        raise RuntimeError(tag)
    CALLBACK(body)()


def test_each_thread_keeps_its_own_callbacks_exceptions_and_the_hook_is_restored():
    original = sys.unraisablehook
    kept = {"a": [], "b": []}
    a_inside, b_inside, a_left = threading.Event(), threading.Event(), threading.Event()

    def run_a():
        with kept_by(lambda info: kept["a"].append(str(info.exc_value))):
            a_inside.set()
            b_inside.wait()
            _raise_in_callback("a1")
        a_left.set()

    def run_b():
        a_inside.wait()
        with kept_by(lambda info: kept["b"].append(str(info.exc_value))):
            b_inside.set()
            _raise_in_callback("b1")
            a_left.wait()  # the other run has left native code: this one's exceptions are still its own
            _raise_in_callback("b2")

    threads = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert kept == {"a": ["a1"], "b": ["b1", "b2"]}
    assert sys.unraisablehook is original


def test_outside_every_run_the_process_hook_sees_the_exception():
    seen = []
    original = sys.unraisablehook
    sys.unraisablehook = lambda info: seen.append(str(info.exc_value))
    try:
        with kept_by(lambda info: None):
            pass
        _raise_in_callback("outside")
    finally:
        sys.unraisablehook = original
    assert seen == ["outside"]
