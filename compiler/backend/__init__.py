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
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import pathlib

import simgpu.settings as settings
from compiler.dtypes import DType
from compiler.ir.linearize import LinearKernel
from compiler.ir.rewrite import Rules


class Backend:
    """The interface every backend implements (module docstring)."""

    name = "?"
    target = "?"
    device_kind = "AMD"  # which compiler.device kind runs its programs
    features: frozenset[str] = frozenset()  # what lowering may use: "wmma" (gfx11 matrix cores, wave32)
    requires: tuple[str, ...] = ()  # Python modules the backend needs (checked with find_spec, not imported)
    preference = 10  # lower first: the default of a device kind is its available backend with the lowest

    def supports(self, dtype: DType) -> bool:
        """Whether kernels may use dtype."""
        return True

    def rules(self) -> Rules:
        """IR rewrites this backend needs after lowering (applied before linearizing and proving)."""
        return Rules()

    def source(self, kernel: LinearKernel) -> str:
        """A readable rendering of the kernel in the backend's own input language (for SIMGPU_DEBUG=2)."""
        raise NotImplementedError

    def compile(self, kernel: LinearKernel) -> bytes:
        """The program: bytes the device's loader accepts."""
        raise NotImplementedError

    def assembly(self, kernel: LinearKernel) -> str:
        """The machine code as assembly text (for SIMGPU_DEBUG=3)."""
        raise NotImplementedError

    def fingerprint(self) -> str:
        """What identifies this backend's output for the kernel cache (name, target, code version)."""
        return f"{self.name}-{self.target}"


class MachineCodeBackend(Backend):
    """A backend that writes machine code itself (native, x86): it has no intermediate language, so its source is
    its assembly, and compile_full gives the binary together with that listing and the kernel's resources."""

    def compile_full(self, kernel: LinearKernel):
        """The compiled kernel: .binary (the program) and what the backend reports about it."""
        raise NotImplementedError

    def compile(self, kernel: LinearKernel) -> bytes:
        return self.compile_full(kernel).binary

    def source(self, kernel: LinearKernel) -> str:
        """The machine code as assembly (no intermediate language of its own)."""
        return self.assembly(kernel)


def source_hash(files) -> str:
    """A short hash of the source files a backend's output depends on (for its fingerprint)."""
    code = b"".join(pathlib.Path(f).read_bytes() for f in sorted(files))
    return hashlib.sha256(code).hexdigest()[:16]


_REGISTRY: dict[str, type[Backend]] = {}
_INSTANCES: dict[str, Backend] = {}
_override: list[str] = []


def register(cls: type[Backend]) -> type[Backend]:
    """Class decorator: make a backend available by its name."""
    _REGISTRY[cls.name] = cls
    return cls


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
    _load_builtin()
    names = [n for n, c in _REGISTRY.items() if (device_kind is None or c.device_kind == device_kind) and _usable(c)]
    return sorted(names, key=lambda n: _REGISTRY[n].preference)


def get(name: str) -> Backend:
    """The backend called name."""
    _load_builtin()
    if name not in _REGISTRY:
        raise ValueError(f"unknown backend {name!r} (available: {', '.join(sorted(_REGISTRY))})")
    if not _usable(_REGISTRY[name]):
        raise ValueError(f"backend {name!r} needs {', '.join(_REGISTRY[name].requires)}, which is not installed")
    if name not in _INSTANCES:
        _INSTANCES[name] = _REGISTRY[name]()
    return _INSTANCES[name]


def for_device(kind: str) -> Backend:
    """The backend compiling for a device kind: the innermost `using()` of that kind, else SIMGPU_BACKEND if it
    names one of that kind, else the kind's first. A choice made for another device kind (SIMGPU_BACKEND=native
    while a CPU tensor computes) does not apply; a name no backend has is an error."""
    names = available(kind)
    for want in (*reversed(_override), settings.get("SIMGPU_BACKEND")):
        if want:
            if want in names:
                return get(want)
            if want not in _REGISTRY:
                raise ValueError(f"backend {want!r} does not compile for {kind} devices (those: {', '.join(names)})")
    if not names:
        raise ValueError(f"no backend compiles for {kind} devices")
    return get(names[0])


@contextlib.contextmanager
def using(name: str):
    """Compile with backend `name` inside the block (for its device kind; nested blocks may pick one per kind)."""
    get(name)
    _override.append(name)
    try:
        yield
    finally:
        _override.pop()


def _load_builtin() -> None:
    if not _REGISTRY:
        from compiler.backend import llvm, native  # noqa: F401 - register themselves
        from compiler.backend.x86 import backend  # noqa: F401
