"""mockgpu: the fake kernel driver (`MockOS`): amdkfd ioctls, sysfs topology, the DRM render node,
mmap of allocations and doorbells, all over simulated `simgpu.GPU`s.

May import: simgpu, runtime.uapi (and runtime.os for the seam's base class and Mapping).

`MockOS` is loaded when first asked for (a module __getattr__): the driver brings the shader engine, and `simgpu
run` starts its program on this package's lighter modules (the interposer's build, the server) before that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockgpu.driver import MockOS

__all__ = ["MockOS"]


def __getattr__(name: str):
    # Lazy: a process that needs one module of the package -- the trace format's limits (mockgpu.devmem), which
    # every `simgpu` subcommand's parser loads -- does not load the driver and the whole simulator with it.
    if name == "MockOS":
        from mockgpu.driver import MockOS
        return MockOS
    raise AttributeError(f"module 'mockgpu' has no attribute {name!r}")
