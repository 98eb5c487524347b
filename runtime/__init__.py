"""runtime: the HCQ runtime (Device, Buffer, Module/Kernel, PM4/AQL/SDMA queues, signals, loader).

Talks to the driver through one seam, an `OS` object (HostOS for /dev/kfd, MockOS under MOCKGPU=1).
May import: simgpu.hw and simgpu.isa (definitions only, never the engines). Never mockgpu, traces or
wiring: the process's OS comes from the selector installed under the `simgpu.os` entry point.
"""

__all__ = ["OS", "Buffer", "Device", "DeviceFault", "DeviceReport", "GPUFault", "GPUTimeout", "HostOS", "Kernel",
           "Launch", "Mapping", "Module", "SanitizerError", "SanitizerWarning", "select_os"]


def __getattr__(name: str):
    # Lazy: a module that needs one definition below this package -- mockgpu and `simgpu run`'s interposer build
    # key need runtime.uapi's structs -- does not load the device, its queues and numpy (~0.3 CPU-s; `simgpu run`
    # imports the uapi before it starts its program).
    if name == "Device":
        from runtime.device import Device
        return Device
    if name in ("DeviceFault", "GPUFault", "GPUTimeout", "SanitizerError"):
        from runtime import fault
        return getattr(fault, name)
    if name == "Launch":
        from runtime.launch import Launch
        return Launch
    if name == "Buffer":
        from runtime.memory import Buffer
        return Buffer
    if name in ("Kernel", "Module"):
        from runtime import module
        return getattr(module, name)
    if name in ("OS", "DeviceReport", "HostOS", "Mapping", "select_os"):
        from runtime import os
        return getattr(os, name)
    if name == "SanitizerWarning":
        from runtime.sanitize import SanitizerWarning
        return SanitizerWarning
    raise AttributeError(f"module 'runtime' has no attribute {name!r}")
