"""tinygrad 0.14's CPU device as an oracle: a script runs in ONE subprocess (DEV=CPU, clang from LLVM 19 on PATH,
so tinygrad's device selection stays its own) and prints JSON (NaN and infinities as Python's json writes them)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

LLVM_BIN = "/usr/lib/llvm-19/bin"


def run_tinygrad(script: str, timeout: int = 300):
    """The JSON the script prints on stdout; the calling test skips when tinygrad or clang is missing."""
    pytest.importorskip("tinygrad")
    if not pathlib.Path(LLVM_BIN, "clang").exists():
        pytest.skip("tinygrad's CPU device needs clang (LLVM 19)")
    env = dict(os.environ, DEV="CPU", PATH=f"{LLVM_BIN}:{os.environ.get('PATH', '')}")
    env.pop("MOCKGPU", None)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)
