"""The test/test_tiny.py that tinygrad's PyPI sdist ships, run by pytest under `simgpu run` against the tinygrad
installed from PyPI (the same version): over KFD (DEV=KFD+AMD:LLVM) and over AM (`simgpu run --am`,
DEV=PCI+AMD:LLVM). The whole file must pass, as it does on a real GPU; the program's environment is the user's own
(no PYTHONPATH of simgpu's). Skipped, saying why, when the sdist cannot be fetched (tests.support.sdist), or without
tinygrad, libLLVM 19 or a C compiler. Slow: each run is a pytest of tinygrad's in a fresh process (about a minute)."""

import os
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tests.support import sdist
from tests.support.clients import libllvm19, simgpu_run, tinygrad_cachedb

pytestmark = pytest.mark.slow
CLANG_DIR = Path("/usr/lib/llvm-19/bin")  # Debian's clang-19 as `clang`, the name tinygrad runs


@pytest.fixture(scope="module")
def test_tiny(tmp_path_factory):
    try:
        installed = metadata.version("tinygrad")
    except metadata.PackageNotFoundError:
        pytest.skip("tinygrad is not installed: pip install -e '.[test]'")
    if installed != sdist.VERSION:
        pytest.skip(f"tinygrad {installed} is installed; the sdist's test is {sdist.VERSION}'s")
    try:
        return sdist.test_tiny(tmp_path_factory.mktemp("sdist"))
    except sdist.FetchError as e:
        pytest.skip(f"tinygrad's sdist cannot be fetched: {e}")


@pytest.mark.parametrize(("options", "dev"), [((), "KFD+AMD:LLVM"), (("--am",), "PCI+AMD:LLVM")], ids=["kfd", "am"])
def test_the_sdists_test_tiny_passes(test_tiny, options, dev):
    lib = libllvm19()
    if lib is None:
        pytest.skip("tinygrad's LLVM path needs libLLVM 19 (Debian: llvm-19)")
    if not (CLANG_DIR / "clang").exists():
        pytest.skip(f"tinygrad's CPU device (some of test_tiny's tensors) compiles with {CLANG_DIR}/clang (clang-19)")
    env = {"DEV": dev, "LLVM_PATH": str(lib), "CACHEDB": tinygrad_cachedb(),
           "PATH": os.pathsep.join([str(CLANG_DIR), os.environ.get("PATH", "")])}
    r = simgpu_run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                    "--rootdir", str(test_tiny.parent), str(test_tiny)], *options, env=env, cwd=test_tiny.parent,
                   timeout=1200)
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    assert r.returncode == 0 and re.search(r"\d+ passed", summary) and "failed" not in summary, \
        f"exit {r.returncode}\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}"
