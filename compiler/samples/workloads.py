"""Whole workloads: the demo's SAXPY and matmul, the benchmarks' reduction and single-wave loop, the
elementwise kernel of the benchmarks, and VADD, the kernel of the code-object golden files.

SAXPY, MATMUL and VADD are kept as their IR was first written: the demo's recorded trace and the golden
code objects (`python -m tools.gen_codeobjects`) hold what LLVM makes of exactly this text.
"""

from __future__ import annotations

import numpy as np

from compiler.samples.sample import Sample, elementwise, kernel

SAXPY_IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @saxpy(ptr addrspace(1) %y, ptr addrspace(1) %x, float %a) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %b = mul i32 %g, 256
  %i = add i32 %b, %t
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i
  %py = getelementptr float, ptr addrspace(1) %y, i32 %i
  %xv = load float, ptr addrspace(1) %px
  %yv = load float, ptr addrspace(1) %py
  %m = fmul float %a, %xv
  %r = fadd float %m, %yv
  store float %r, ptr addrspace(1) %py
  ret void
}
"""

MATMUL_IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
define amdgpu_kernel void @matmul(ptr addrspace(1) %c, ptr addrspace(1) %a, ptr addrspace(1) %b, i32 %n) {
entry:
  %col = call i32 @llvm.amdgcn.workitem.id.x()
  %row = call i32 @llvm.amdgcn.workgroup.id.x()
  %rowbase = mul i32 %row, %n
  br label %loop
loop:
  %k = phi i32 [0, %entry], [%k1, %loop]
  %acc = phi float [0.0, %entry], [%acc1, %loop]
  %ai = add i32 %rowbase, %k
  %pa = getelementptr float, ptr addrspace(1) %a, i32 %ai
  %av = load float, ptr addrspace(1) %pa
  %kn = mul i32 %k, %n
  %bi = add i32 %kn, %col
  %pb = getelementptr float, ptr addrspace(1) %b, i32 %bi
  %bv = load float, ptr addrspace(1) %pb
  %acc1 = call float @llvm.fma.f32(float %av, float %bv, float %acc)
  %k1 = add i32 %k, 1
  %done = icmp eq i32 %k1, %n
  br i1 %done, label %exit, label %loop
exit:
  %ci = add i32 %rowbase, %col
  %pc = getelementptr float, ptr addrspace(1) %c, i32 %ci
  store float %acc1, ptr addrspace(1) %pc
  ret void
}
declare float @llvm.fma.f32(float, float, float)
"""

VADD_IR = """declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()

define amdgpu_kernel void @vadd(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %gid, 256
  %i = add i32 %base, %tid
  %pa = getelementptr float, ptr addrspace(1) %a, i32 %i
  %pb = getelementptr float, ptr addrspace(1) %b, i32 %i
  %pc = getelementptr float, ptr addrspace(1) %c, i32 %i
  %x = load float, ptr addrspace(1) %pa
  %y = load float, ptr addrspace(1) %pb
  %s = fadd float %x, %y
  store float %s, ptr addrspace(1) %pc
  ret void
}
"""

ROWSUM_IR = kernel("rowsum", """
  %start = shl i32 %i, 6
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %j = add i32 %start, %k
  %p = getelementptr float, ptr addrspace(1) %in, i32 %j
  %v = load float, ptr addrspace(1) %p
  %acc1 = fadd float %acc, %v
  %k1 = add i32 %k, 1
  %done = icmp eq i32 %k1, 64
  br i1 %done, label %exit, label %loop
exit:
  %po = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %acc1, ptr addrspace(1) %po
  ret void
""", block=256)

SPIN_IR = kernel("spin", """
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %v = phi i32 [ %tid, %entry ], [ %v2, %loop ]
  %v1 = mul i32 %v, 1664525
  %v2 = add i32 %v1, 1013904223
  %k1 = add i32 %k, 1
  %done = icmp eq i32 %k1, %n
  br i1 %done, label %exit, label %loop
exit:
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %v2, ptr addrspace(1) %po
  ret void
""", params="ptr addrspace(1) %out, i32 %n", block=32)

SAXPY_N = 1 << 16  # elements
MATMUL_N = 256  # rows and columns
ROWSUM_ITEMS = 1 << 16  # work-items, 64 elements each
SPIN_STEPS = 20000


def _normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _saxpy_inputs(rng: np.random.Generator) -> list:
    x, y = _normal(rng, SAXPY_N), _normal(rng, SAXPY_N)
    return [y, x, np.float32(2.0)]


def _matmul_inputs(rng: np.random.Generator) -> list:
    a, b = _normal(rng, MATMUL_N, MATMUL_N), _normal(rng, MATMUL_N, MATMUL_N)
    return [np.zeros_like(a), a, b, np.int32(MATMUL_N)]


def lcg(steps: int) -> np.ndarray:
    """SPIN's work in numpy: `steps` LCG steps on 32 lanes seeded with their lane ids."""
    v = np.arange(32, dtype=np.uint32)
    for _ in range(steps):
        v = v * np.uint32(1664525) + np.uint32(1013904223)
    return v


# y = a * x + y over SAXPY_N elements.
SAXPY = Sample("saxpy", SAXPY_IR, _saxpy_inputs, lambda a: {0: a[2] * a[1] + a[0]},
               grid=(SAXPY_N // 256,), block=(256,), tags={"demo"})

# c = a @ b: one work-item per element of c, a workgroup per row.
MATMUL = Sample("matmul", MATMUL_IR, _matmul_inputs, lambda a: {0: a[1].astype(np.float64) @ a[2]},
                grid=(MATMUL_N,), block=(MATMUL_N,), rtol=1e-4, atol=1e-4, tags={"demo", "bench"})

# c = a + b over 1024 elements.
VADD = Sample("vadd", VADD_IR, lambda rng: [_normal(rng, 1024), _normal(rng, 1024), np.zeros(1024, np.float32)],
              lambda a: {2: a[0] + a[1]}, grid=(4,), block=(256,), tags={"codeobject"})

# The benchmarks' elementwise kernel: out = 3x + y over 4M elements.
_F32 = np.float32
AXPB = elementwise("axpb", [_F32, _F32], _F32, "  %m = fmul float %x0, 3.0\n  %r = fadd float %m, %x1",
                   lambda x, y: x * _F32(3) + y, n=1 << 22, block=256, gen=lambda rng, t, n: rng.random(n, t),
                   tags={"bench"})

# Each work-item sums 64 consecutive elements (a second pass would be numpy's).
ROWSUM = Sample("rowsum", ROWSUM_IR,
                lambda rng: [np.zeros(ROWSUM_ITEMS, np.float32), rng.random(ROWSUM_ITEMS * 64, np.float32)],
                lambda a: {0: a[1].reshape(-1, 64).sum(axis=1, dtype=np.float64)},
                grid=(ROWSUM_ITEMS // 256,), block=(256,), rtol=1e-5, tags={"bench"})

# One wave of 32 lanes, each running SPIN_STEPS steps of a linear congruential generator seeded with its lane id.
SPIN = Sample("spin", SPIN_IR, lambda rng: [np.zeros(32, np.uint32), np.int32(SPIN_STEPS)],
              lambda a: {0: lcg(int(a[1]))}, grid=(1,), block=(32,), tags={"bench"})
