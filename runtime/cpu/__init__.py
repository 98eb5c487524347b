"""The CPU device: x86-64 kernels from compiler.backend.x86 run under unicorn, sandboxed (runtime.cpu.abi: the
address space and kernel ABI; runtime.cpu.image: the code object; runtime.cpu.device: buffers, loading,
launching; runtime.cpu.fault: fault reports; runtime.cpu.disasm: capstone listings).

It lives in runtime because it is what runs programs: the compiler reaches it through compiler.device's "CPU"
kind, exactly as it reaches the GPU through runtime.Device, and it imports nothing of the compiler.
"""

from runtime.cpu.device import CPUBuffer, CPUDevice, CPUGraph, LaunchStats, Program
from runtime.cpu.fault import CPUFault
from runtime.cpu.image import Image, ImageError, read_image, write_image

__all__ = ["CPUBuffer", "CPUDevice", "CPUFault", "CPUGraph", "Image", "ImageError", "LaunchStats", "Program",
           "read_image", "write_image"]
