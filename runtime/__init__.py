"""runtime: the HCQ runtime (Device, Buffer, Module/Kernel, PM4/AQL/SDMA queues, signals, loader).

Talks to the driver through one seam, an `OS` object (HostOS for /dev/kfd, MockOS under MOCKGPU=1).
May import: simgpu.hw and simgpu.isa (definitions only, never the engines). Never mockgpu, traces or
wiring: the process's OS comes from the selector installed under the `simgpu.os` entry point.
"""

from runtime.device import Device
from runtime.fault import DeviceFault, GPUFault, GPUTimeout, SanitizerError
from runtime.launch import Launch
from runtime.memory import Buffer
from runtime.module import Kernel, Module
from runtime.os import OS, DeviceReport, HostOS, Mapping, select_os
from runtime.sanitize import SanitizerWarning

__all__ = ["OS", "Buffer", "Device", "DeviceFault", "DeviceReport", "GPUFault", "GPUTimeout", "HostOS", "Kernel",
           "Launch", "Mapping", "Module", "SanitizerError", "SanitizerWarning", "select_os"]
