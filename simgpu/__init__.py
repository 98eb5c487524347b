"""simgpu: the simulated AMD gfx1100 (RDNA3) GPU.

Lives here: the instruction codec and code objects (`simgpu.isa`), the hardware definitions shared with
the runtime (`simgpu.hw`: packet layouts, registers, kernel descriptor, page-table format), simulated
memory and the GPUVM MMU (`simgpu.mem`), the shader engine (`simgpu.shader`), the command processors and
SDMA engines (`simgpu.cp`) and the device that ties them together (`simgpu.GPU`, imported lazily).

May import: nothing of compiler/, runtime/, mockgpu/, traces/ or wiring/ (it is the bottom layer).
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    # Lazy: `import simgpu` stays cheap for the runtime, which only needs simgpu.hw and simgpu.isa.
    if name == "GPU":
        from simgpu.gpu import GPU
        return GPU
    raise AttributeError(f"module 'simgpu' has no attribute {name!r}")
