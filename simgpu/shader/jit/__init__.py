"""The JIT tier of the shader engine: hot kernels compiled through llvmlite to native code over the
engine's own register file, bit-identical to the interpreter (tier.py names its parts; docs/shader.md)."""

__all__ = ["JitTier", "jit_mode", "jit_tier"]


def __getattr__(name: str):
    # Lazy: the compile worker (simgpu.shader.jit.worker) imports this package on its way to jit.compile; the tier
    # (and through it the engine's run-time parts) is loaded by whoever asks for it.
    if name in __all__:
        from simgpu.shader.jit import tier
        return getattr(tier, name)
    raise AttributeError(f"module 'simgpu.shader.jit' has no attribute {name!r}")
