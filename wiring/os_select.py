"""The process's OS, as the runtime asks for it through the `simgpu.os` entry point (runtime.os.select_os).

MOCKGPU=1 -> mockgpu.MockOS (the simulated gfx1100), else HostOS when /dev/kfd exists, else the runtime's
clear error saying to set MOCKGPU=1: a benchmark never runs on the simulator by accident. SIMGPU_TRACE=path
wraps the choice in traces.RecordingOS. mockgpu and traces are imported only when asked for, so the
hardware path never loads the simulator.
"""

from __future__ import annotations

import os
import sys

from runtime.os import OS, host_os, mockgpu_requested
from simgpu import settings


def select_os() -> OS:
    """A new OS for this process: MockOS under MOCKGPU=1, else HostOS (or RuntimeError), traced if asked."""
    if mockgpu_requested():
        return traced(mock_os())
    return traced(host_os())


def mock_os(**kw) -> OS:
    """A new mockgpu.MockOS (keyword arguments as MockOS takes them), its counters reported to `simgpu stats`."""
    from mockgpu import MockOS  # only here: the hardware path never imports the simulator
    from wiring.stats import watch
    mock = MockOS(**kw)
    watch(mock)
    return mock


def traced(os_: OS) -> OS:
    """`os_` wrapped in traces.RecordingOS when SIMGPU_TRACE=path is set (else `os_` itself), for any
    program that builds its own OS, like `simgpu demo`. Under pytest-xdist each worker records to its own
    file: `path` with the worker's id before the suffix (run.trace -> run.gw0.trace)."""
    path = settings.get("SIMGPU_TRACE")
    if path:
        from traces.record import RecordingOS  # only when asked: record every call (docs/traces.md)
        return RecordingOS(os_, trace_path(path), close_at_exit=True)
    return os_


def trace_path(path: str) -> str:
    """Where this process records SIMGPU_TRACE=path: `path` itself, or per pytest-xdist worker."""
    # Only the worker process itself: programs a test starts inherit PYTEST_XDIST_WORKER but record to `path`.
    worker = os.environ.get("PYTEST_XDIST_WORKER") if "xdist" in sys.modules else None
    if not worker:
        return path
    root, ext = os.path.splitext(path)
    return f"{root}.{worker}{ext or '.trace'}"
