"""mockgpu: the fake kernel driver (`MockOS`): amdkfd ioctls, sysfs topology, the DRM render node,
mmap of allocations and doorbells, all over a simulated `simgpu.GPU`.

May import: simgpu, runtime.uapi.
"""
