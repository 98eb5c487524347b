"""simgpu.shader: the RDNA3 shader engine: wave state, dispatch set-up, the PC-batched scheduler and
the semantics of every compute instruction (one subpackage per unit: scalar, vector, memory, lds,
matrix), over simulated memory (simgpu.mem).

May import: simgpu.isa, simgpu.hw, simgpu.mem, simgpu.fault, simgpu.interrupt, simgpu.clock.
"""

__all__ = ["Counters", "Dispatch", "ShaderEngine"]


def __getattr__(name: str):
    # Lazy: a process that needs one module below this package -- the JIT's compile worker (simgpu.shader.jit.worker:
    # LLVM and msgpack, no engine) -- does not load the engine and every instruction's semantics with it.
    if name == "Dispatch":
        from simgpu.shader.dispatch import Dispatch
        return Dispatch
    if name in ("Counters", "ShaderEngine"):
        from simgpu.shader import engine
        return getattr(engine, name)
    raise AttributeError(f"module 'simgpu.shader' has no attribute {name!r}")
