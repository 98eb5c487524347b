"""Programs we did not write, run under `simgpu run`: the interposer and C test programs built with the system C
compiler (skipped, saying why, when there is none), and a helper that runs a command on the process-level device."""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

C_DIR = Path(__file__).resolve().parents[1] / "wiring" / "c"


def preload_or_skip() -> Path:
    """The interposer of `simgpu run`, built if needed."""
    from mockgpu.native import BuildError, build_preload
    try:
        return build_preload()
    except BuildError as e:
        pytest.skip(f"simgpu run needs its interposer: {e}")


def c_program_or_skip(name: str) -> Path:
    """tests/wiring/c/<name>.c built against <linux/kfd_ioctl.h> (Debian: linux-libc-dev)."""
    from mockgpu.native import BuildError, build
    if not Path("/usr/include/linux/kfd_ioctl.h").exists():
        pytest.skip("needs <linux/kfd_ioctl.h> (Debian/Ubuntu: linux-libc-dev)")
    try:
        return build(C_DIR / f"{name}.c", name, ["-idirafter", str(C_DIR / "include")])
    except BuildError as e:
        pytest.skip(f"cannot build {name}.c: {e}")


def simgpu_run(cmd: list[str], *options: str, env: dict | None = None, timeout: float = 600,
               cwd=None, outer: list[str] | None = None) -> subprocess.CompletedProcess:
    """`simgpu run OPTIONS -- CMD` in a fresh process (under `simgpu OUTER... --` when given); its CompletedProcess
    (text output captured)."""
    preload_or_skip()
    full = dict(os.environ, **(env or {}))
    full.pop("MOCKGPU", None)
    argv = [sys.executable, "-m", "wiring.cli", "run", *options, "--", *cmd]
    if outer is not None:
        argv = [sys.executable, "-m", "wiring.cli", *outer, "--", *argv]
    return subprocess.run(argv, env=full, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@functools.cache
def tinygrad_cachedb() -> str:
    """One tinygrad compile cache (its CACHEDB, an SQLite file) for every tinygrad client this test process starts.
    tinygrad keys a compiled kernel by its compiler, the target processor included, and the kernel's source, so a
    later run on the same architecture loads the code objects an earlier one compiled (the KFD and AM runs, and the
    AM transports, compile the same kernels: about 1 CPU-s of a checks run and 2.5 of test_tiny's) and a run on
    another architecture compiles its own. What these tests check of simgpu -- the device loading and running those
    code objects -- is the same either way; the first run in a process compiles as before."""
    directory = tempfile.mkdtemp(prefix="simgpu-tinygrad-cache-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return str(Path(directory) / "cache.db")


def libllvm19() -> Path | None:
    """Debian's libLLVM 19 (package libllvm19, which llvm-19 depends on), for tinygrad's LLVM_PATH."""
    import glob
    found = sorted(glob.glob("/usr/lib/*-linux-gnu/libLLVM.so.19*")) + glob.glob("/usr/lib/llvm-19/lib/libLLVM.so")
    return Path(found[0]) if found else None


def tinygrad_client() -> tuple[object, Path]:
    """(tinygrad, libLLVM 19) for a test that runs tinygrad as a client, or skip saying what is missing."""
    import pytest
    try:
        import tinygrad
    except ImportError as e:
        pytest.skip(f"tinygrad is not installed ({e}): pip install -e '.[test]' (make test installs it)")
    lib = libllvm19()
    if lib is None:
        pytest.skip("tinygrad's LLVM path needs libLLVM 19 (Debian: llvm-19, tools/install-oracles.sh installs it)")
    return tinygrad, lib


def json_checks(r: subprocess.CompletedProcess, last: str) -> dict:
    """The JSON objects a checks script printed (one per line, keyed by their "check"), once it exited 0 having
    printed check `last`; else an assertion with its output."""
    checks = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            checks[d.pop("check")] = d
    assert r.returncode == 0 and last in checks, f"exit {r.returncode}\n{r.stdout}\n{r.stderr[-4000:]}"
    return checks


def assert_am_page_fault(checks: dict) -> None:
    """The "fault" check of an AM client script (a store 1 TiB past a buffer): tinygrad's IH handler printed (on
    stdout) the fault status register it read, an unmapped page written, and the faulting page."""
    f = checks["fault"]
    assert f["error"], "the out-of-bounds store did not fault"
    m = re.search(r"GCVM_L2_PROTECTION_FAULT_STATUS: (\{.*?\}) (0x[0-9a-f]+)", checks["stdout"])
    assert m, checks["stdout"][-2000:]
    assert "'mapping_error': 1" in m.group(1) and "'rw': 1" in m.group(1)  # an unmapped page, written
    assert int(m.group(2), 16) == (f["base"] + (1 << 40)) & ~0xFFF  # the page of the store, 1 TiB past the buffer
