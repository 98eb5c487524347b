"""What a compile costs on this host, measured: the payoff rule's side of a compile (policy.CompilePolicy._pays_now).

A background compile runs in the JIT's worker process (jit.remote: translation and LLVM), so native code is ready
only once the worker has translated and compiled it (and started, for a process's first compile); the launching
process then loads it, on its launching thread: that take-up is all a compile beside a launch takes from it (and
a CPU, which the payoff rule asks to be free). The figures vary between hosts by several times (a laptop, a loaded
CI runner, AVX2 or AVX-512 code: the corpus's median cold compile took 67 ms on one machine and 286 ms on
another), so the rule uses what compiles on this host took, not constants:

- `translate`: CPU seconds of translation per reachable instruction (the worker's, or an eager compile's);
- `llvm`: CPU seconds of LLVM per reachable instruction;
- `start`: a process's first compile's extra in-process (an eager compile): the translators' imports, llvmlite's
  and LLVM's start; `spawn`: the worker process's start (Python's, its imports, the translators' registration);
- `take`: CPU seconds per reachable instruction of a take-up on the launching thread (the region rebuilt from the
  worker's classes, the object loaded by jit.elfload): what a compile beside a launch takes from it. A process's
  first take-up costs no more than a later one: the loader needs no llvmlite (whose import and LLVM's start, 22-42
  ms, a first take-up paid until version 3 of these figures).

Each compile adds its figures (an exponential average, so the latest count most: the machine's load
changes) and they are kept in the JIT's disk cache directory (`host/costs.msgpack`, a simgpu.diskcache entry
under a key naming this CPU and SIMGPU_JIT_CPU), so a fresh process knows its host. Before any compile on a
host has been measured there is no estimate (`current` gives None) and the payoff rule compiles after the
launch, which measures.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from simgpu import diskcache
from simgpu.shader.jit import compile as jc

WEIGHT = 0.3  # of a new measurement in the running figures
VERSION = 3  # 2: take and prepare (the take-up on the launching thread); 3: no prepare (jit.elfload loads)


@dataclass
class HostCosts:
    """Measured costs of compiling on this host (module docstring)."""

    translate: float = 0.0  # CPU seconds per reachable instruction (the worker's Python, or an eager compile's)
    llvm: float = 0.0  # CPU seconds per reachable instruction (LLVM)
    start: float = 0.0  # CPU seconds of a process's first compile's imports (and LLVM's start, in-process)
    compiles: int = 0  # compiles measured (LLVM ran)
    starts: int = 0  # first compiles of a process measured
    spawn: float = 0.0  # CPU seconds of the worker process's start, to its first translation
    spawns: int = 0  # worker starts measured
    take: float = 0.0  # CPU seconds per reachable instruction of a take-up on the launching thread
    takes: int = 0  # take-ups measured

    def known(self) -> bool:
        """Whether a compile (LLVM included) and a process's start (in-process or the worker's) have been
        measured."""
        return self.compiles > 0 and (self.starts > 0 or self.spawns > 0)


_LOCK = threading.Lock()
_CURRENT: HostCosts | None = None
_LOADED = False


def _host_id() -> str:
    """This CPU (its model name) and SIMGPU_JIT_CPU: what the costs depend on besides the load."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.partition(":")[2].strip()
                    break
    except OSError:
        pass
    return f"simgpu-jit-costs|{VERSION}|{model}|{jc.cpu_setting()}"


def _path() -> Path | None:
    root = jc.cache_dir()
    d = None if root is None else diskcache.directory(root, "host")  # (apart from the objects, <key>.msgpack)
    return None if d is None else d / "costs.msgpack"


def current() -> HostCosts | None:
    """The host's measured costs (this process's, else the disk's), or None while nothing is measured."""
    global _CURRENT, _LOADED
    with _LOCK:
        if _CURRENT is None and not _LOADED:
            _LOADED = True
            path = _path()
            entry = None if path is None else diskcache.load(path, _host_id())
            if entry is not None:
                try:
                    _CURRENT = HostCosts(**{k: entry[k] for k in asdict(HostCosts())})
                except (KeyError, TypeError):
                    _CURRENT = None
        return _CURRENT if _CURRENT is not None and _CURRENT.known() else None


def _avg(old: float, new: float, n: int) -> float:
    return new if n == 0 else (1 - WEIGHT) * old + WEIGHT * new


def record(insns: int, translate: float, llvm: float | None, start: float | None, spawn: float | None = None) -> None:
    """Add one compile's CPU seconds: `translate` (walk and translation), `llvm` (LLVM and loading; None when
    the object came from the disk cache) for `insns` reachable instructions, `start` (None unless it was the
    process's first compile, in-process) and `spawn` (None unless it was a new worker's first) to the running
    figures, and keep them on disk."""
    if insns <= 0:
        return

    def add(c: HostCosts) -> None:
        c.translate = _avg(c.translate, translate / insns, c.compiles)
        if llvm is not None:
            c.llvm = _avg(c.llvm, llvm / insns, c.compiles)
            c.compiles += 1
        if start is not None:
            c.start = _avg(c.start, start, c.starts)
            c.starts += 1
        if spawn is not None:
            c.spawn = _avg(c.spawn, spawn, c.spawns)
            c.spawns += 1
    _update(add)


def record_take(insns: int, take: float) -> None:
    """Add one take-up's CPU seconds on the launching thread: `take` for `insns` reachable instructions."""
    if insns <= 0:
        return

    def add(c: HostCosts) -> None:
        c.take = _avg(c.take, take / insns, c.takes)
        c.takes += 1
    _update(add)


def _update(add) -> None:
    """Apply `add` to the running figures (the disk's first) and keep them on disk."""
    global _CURRENT
    current()  # (the disk's figures first: they are averaged with)
    with _LOCK:
        c = _CURRENT or HostCosts()
        add(c)
        _CURRENT = c
        fields = asdict(c)
    path = _path()
    if path is not None:
        diskcache.store(path, _host_id(), fields)


def forget() -> None:
    """Read the costs from disk again at the next use (tests that change the cache directory)."""
    global _CURRENT, _LOADED
    with _LOCK:
        _CURRENT, _LOADED = None, False
