"""Backends: one interface from a linearized kernel to a loadable program.

A backend names itself and its target, says which dtypes it compiles, may add IR rewrite rules it needs
before linearization (e.g. f64 transcendentals as polynomials when its target has no instruction for
them), and turns a `LinearKernel` into bytes its device loads (an AMDGPU code object for the GPU backends).
`SIMGPU_BACKEND` picks the backend of a device kind when more than one is registered; `using(name)` does
the same for a block of code. Either applies to the device kind of the backend it names only. Without either, a
kind's default is its first available backend: for AMD the native backend (compiler.backend.native; it and the
LLVM backend both pass the whole ops suite, and native needs no LLVM at run time and compiles faster), then LLVM;
for CPU the x86 backend. The LLVM backend is available only when llvmlite is installed (looked up, not imported:
a process that never compiles with it never loads LLVM).

The interface and the registry of backend classes are compiler.backend.interface; the built-in backends' modules
(llvm, native, x86.backend) register their classes when this package imports them, and load their code
generators only when they first compile.
"""

from __future__ import annotations

import contextlib
import importlib.util

import simgpu.settings as settings
from compiler.backend import llvm, native  # noqa: F401 - the built-in backends: each registers itself
from compiler.backend.interface import REGISTRY, Backend, MachineCodeBackend, register, source_hash
from compiler.backend.x86 import backend as _x86_backend  # noqa: F401 - (the CPU's)

__all__ = ["Backend", "MachineCodeBackend", "REGISTRY", "available", "for_device", "get", "register", "source_hash",
           "using"]

_INSTANCES: dict[tuple[str, str | None], Backend] = {}  # (name, target) -> the backend
_override: list[str] = []


def _usable(cls: type[Backend]) -> bool:
    """Whether a backend's requirements are installed (Backend.requires: module names, found without importing)."""
    for mod in getattr(cls, "requires", ()):
        try:
            if importlib.util.find_spec(mod) is None:
                return False
        except (ImportError, ValueError):
            return False
    return True


def available(device_kind: str | None = None) -> list[str]:
    """Names of the registered backends whose requirements are installed (for one device kind), the default
    first."""
    names = [n for n, c in REGISTRY.items() if (device_kind is None or c.device_kind == device_kind) and _usable(c)]
    return sorted(names, key=lambda n: REGISTRY[n].preference)


def get(name: str, target: str | None = None) -> Backend:
    """The backend called name, compiling for `target` (default: its first target; ValueError for one it does not
    compile for)."""
    if name not in REGISTRY:
        raise ValueError(f"unknown backend {name!r} (available: {', '.join(sorted(REGISTRY))})")
    if not _usable(REGISTRY[name]):
        raise ValueError(f"backend {name!r} needs {', '.join(REGISTRY[name].requires)}, which is not installed")
    if (name, target) not in _INSTANCES:
        _INSTANCES[name, target] = REGISTRY[name](target)
    return _INSTANCES[name, target]


def for_device(kind: str, target: str | None = None) -> Backend:
    """The backend compiling for a device kind (of architecture `target`: "gfx1201"; None: the kind's default): the
    innermost `using()` of that kind, else SIMGPU_BACKEND if it names one of that kind, else the kind's first that
    compiles for the target (the native backend compiles for gfx1100 only; LLVM serves the other AMD targets). A
    choice made for another device kind (SIMGPU_BACKEND=native while a CPU tensor computes) does not apply; a name
    no backend has, or one that does not compile for the target, is an error."""
    names = available(kind)
    for want in (*reversed(_override), settings.get("SIMGPU_BACKEND")):
        if want:
            if want in names:
                return get(want, target)
            if want not in REGISTRY:
                raise ValueError(f"backend {want!r} does not compile for {kind} devices (those: {', '.join(names)})")
    names = [n for n in names if REGISTRY[n].compiles_for(target)]
    if not names:
        raise ValueError(f"no backend compiles for {kind} devices" + (f" of {target}" if target else ""))
    return get(names[0], target)


@contextlib.contextmanager
def using(name: str):
    """Compile with backend `name` inside the block (for its device kind; nested blocks may pick one per kind)."""
    get(name)
    _override.append(name)
    try:
        yield
    finally:
        _override.pop()

