"""simgpu: the simulated AMD gfx1100 (RDNA3) GPU.

Lives here: the instruction codec and code objects (`simgpu.isa`), the hardware definitions shared with
the runtime (`simgpu.hw`: packet layouts, registers, kernel descriptor, page-table format), simulated
memory and the GPUVM MMU (`simgpu.mem`), and (later) command processors, SDMA engines and the shader engine.

May import: nothing of compiler/, runtime/, mockgpu/ or traces/ (it is the bottom layer).
"""

__version__ = "0.1.0"
