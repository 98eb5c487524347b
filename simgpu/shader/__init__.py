"""simgpu.shader: the RDNA3 shader engine: wave state, dispatch set-up, the PC-batched scheduler and
the semantics of every compute instruction (one subpackage per unit: scalar, vector, memory, lds,
matrix), over simulated memory (simgpu.mem).

May import: simgpu.isa, simgpu.hw, simgpu.mem, simgpu.fault, simgpu.interrupt, simgpu.clock.
"""

from .dispatch import Dispatch
from .engine import Counters, ShaderEngine

__all__ = ["Counters", "Dispatch", "ShaderEngine"]
