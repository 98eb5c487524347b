"""The interface every backend implements (compiler.backend describes the backends), and the registry of backend
classes by name that each backend's module fills when it is imported (compiler.backend imports the built-in ones)."""

from __future__ import annotations

import hashlib
import pathlib

from compiler.dtypes import DType
from compiler.ir.linearize import LinearKernel
from compiler.ir.rewrite import Rules


class Backend:
    """The interface every backend implements (module docstring)."""

    name = "?"
    target = "?"  # the target it compiles for (an instance's: the first of `targets` unless it was given another)
    targets: tuple[str, ...] = ()  # every target it compiles for (empty: `target` only)
    device_kind = "AMD"  # which compiler.device kind runs its programs
    features: frozenset[str] = frozenset()  # what lowering may use: "wmma" (gfx11 matrix cores, wave32)
    requires: tuple[str, ...] = ()  # Python modules the backend needs (checked with find_spec, not imported)
    preference = 10  # lower first: the default of a device kind is its available backend with the lowest
    rules: Rules = Rules()  # IR rewrites it needs after lowering (with the simplifier: compiler.kernel.PASSES)

    def __init__(self, target: str | None = None):
        """The backend compiling for `target` (default: its first); ValueError for a target it does not compile
        for."""
        known = self.targets or (type(self).target,)
        if target is not None and target not in known:
            raise ValueError(f"the {self.name} backend compiles for {', '.join(known)} only, not {target}")
        self.target = target or known[0]

    @classmethod
    def compiles_for(cls, target: str | None) -> bool:
        """Whether the backend compiles for `target` (None: any device of its kind)."""
        return target is None or target in (cls.targets or (cls.target,))

    def supports(self, dtype: DType) -> bool:
        """Whether kernels may use dtype."""
        return True

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


REGISTRY: dict[str, type[Backend]] = {}  # name -> backend class


def register(cls: type[Backend]) -> type[Backend]:
    """Class decorator: make a backend available by its name."""
    REGISTRY[cls.name] = cls
    return cls
