"""tinygrad 0.14's CPU device as an oracle for the compiler's frontend: a script runs in a subprocess (DEV=CPU,
clang from LLVM 19 on PATH, so tinygrad's device choice stays its own) with arrays in and out through .npz files;
and a context manager that makes our default device the simulated GPU or the CPU device.

Given run_dir(tmp_path_factory), the pytest-xdist workers of one run share each result: the first worker to ask
runs tinygrad (holding a lock), the others read its file (the run's own temporary directory, so nothing outlives
the run or comes from another)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import pytest

LLVM_BIN = "/usr/lib/llvm-19/bin"

# the script's prelude: `inp` holds the arrays given, whatever the script puts in `out` comes back
_PRELUDE = """
import json, sys
import numpy as np
inp = dict(np.load(sys.argv[1]))
out = {}
"""
_EPILOGUE = """
np.savez(sys.argv[2], **{k: np.asarray(v) for k, v in out.items()})
"""


def run(script: str, inputs: dict[str, np.ndarray], timeout: float = 600,
        shared: pathlib.Path | None = None) -> dict[str, np.ndarray]:
    """Run script under tinygrad's CPU device with `inp` = inputs; returns its `out` (skips without tinygrad or
    clang). shared: the run's directory (run_dir) where its workers share results."""
    pytest.importorskip("tinygrad")
    if not pathlib.Path(LLVM_BIN, "clang").exists():
        pytest.skip("tinygrad's CPU device needs clang (LLVM 19)")
    if shared is None:
        return _run(script, inputs, timeout)
    h = hashlib.sha256(script.encode())
    for k in sorted(inputs):
        a = np.asarray(inputs[k])
        h.update(f"{k}|{a.dtype.str}|{a.shape}|".encode() + a.tobytes())
    result = shared / f"tinygrad-{h.hexdigest()[:24]}.npz"
    with open(result.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not result.exists():
            out = _run(script, inputs, timeout)
            np.savez(result.with_suffix(".tmp.npz"), **out)
            os.replace(result.with_suffix(".tmp.npz"), result)
        with np.load(result) as f:
            return dict(f)


def run_dir(tmp_path_factory) -> pathlib.Path:
    """The temporary directory of this pytest run, the same for all its xdist workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _run(script: str, inputs: dict[str, np.ndarray], timeout: float) -> dict[str, np.ndarray]:
    env = dict(os.environ, DEV="CPU", PATH=f"{LLVM_BIN}:{os.environ.get('PATH', '')}")
    env.pop("MOCKGPU", None)
    with tempfile.TemporaryDirectory() as d:
        src, dst = pathlib.Path(d, "in.npz"), pathlib.Path(d, "out.npz")
        np.savez(src, **inputs)
        proc = subprocess.run([sys.executable, "-c", _PRELUDE + script + _EPILOGUE, str(src), str(dst)],
                              capture_output=True, text=True, env=env, timeout=timeout)
        assert proc.returncode == 0, f"tinygrad failed:\n{proc.stderr[-4000:]}"
        with np.load(dst) as f:
            return dict(f)


@contextlib.contextmanager
def on_device(kind: str):
    """Make kind ('AMD': the simulated GPU with its default backend; 'CPU': the CPU device, x86 backend) the
    default device inside the block."""
    from compiler import backend as backends
    from compiler import device as devices
    old = devices.DEFAULT
    devices.DEFAULT = kind
    try:
        with backends.using("x86") if kind == "CPU" else contextlib.nullcontext():
            yield
    finally:
        devices.DEFAULT = old
