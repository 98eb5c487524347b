"""The JIT tier of the shader engine: hot kernels compiled through llvmlite to native code over the
engine's own register file, bit-identical to the interpreter (tier.py names its parts; docs/shader.md)."""

from simgpu.shader.jit.tier import JitTier, jit_mode, jit_tier

__all__ = ["JitTier", "jit_mode", "jit_tier"]
