"""mockgpu: the fake kernel driver (`MockOS`): amdkfd ioctls, sysfs topology, the DRM render node,
mmap of allocations and doorbells, all over simulated `simgpu.GPU`s.

May import: simgpu, runtime.uapi (and runtime.os for the seam's base class and Mapping).
"""

from mockgpu.driver import MockOS

__all__ = ["MockOS"]
