"""compiler: kernels from IR through passes to backends (rdna3 native, LLVM via llvmlite, x86-64),
producing AMDGPU code objects.

May import: simgpu.isa (encodings, code objects); runtime (only to execute what it compiled).
"""
