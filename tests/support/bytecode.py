"""pytest plugin: when the environment turned bytecode writing off, the suite's processes share one bytecode cache.

With PYTHONDONTWRITEBYTECODE set (as in some sandboxes and CI images), every Python process a run starts compiled
the project's modules from source again: each xdist worker, each `simgpu run` server and client, the demo, example
and trace programs, each JIT worker (about 0.2 CPU-s a process that imports simgpu, compiler, runtime and mockgpu;
a run starts over a hundred), and each worker rewrote every test module. Here the session points
PYTHONPYCACHEPREFIX at a directory of its own (removed at the end), so every process after the first reads what
another compiled, and nothing is written beside the sources, which is what the setting asks for. Nothing changes
when bytecode is written anyway (the usual case) or when the user chose a prefix of their own.
"""

import os
import shutil
import sys
import tempfile

import pytest

_made: list[str] = []


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """In the process that starts the run (not in xdist workers, which inherit its environment)."""
    if hasattr(config, "workerinput") or not sys.flags.dont_write_bytecode:
        return
    if os.environ.get("PYTHONPYCACHEPREFIX") or sys.pycache_prefix:
        return
    prefix = tempfile.mkdtemp(prefix="simgpu-pytest-pyc-")
    _made.append(prefix)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # this process too: the test modules it collects and imports without xdist
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


def pytest_unconfigure(config: pytest.Config) -> None:
    while _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)
