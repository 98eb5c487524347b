"""Shader-engine throughput on LLVM-compiled kernels: wave-instructions/s, lane-ops/s, and the ratio
to numpy doing the same work, for an elementwise f32 kernel over 4M elements, a reduction, a
256x256x256 f32 matmul, and a single-wave loop.

    python -m bench.bench_shader

Each kernel runs once to warm the TLB and decode cache, then the best of five launches is reported
(this VM's speed drifts by tens of percent from minute to minute; numpy's own times show it).
Times are this process's CPU time (time.process_time): the simulator is single-threaded, so on an
idle machine that equals wall time, and on a shared one it does not count other processes' work.
"""

from __future__ import annotations

import time

import numpy as np

from compiler.llvm import compile_ir
from simgpu.testbed import Testbed

HEADER = """target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
"""

ELEMENTWISE = HEADER + """
define amdgpu_kernel void @axpb(ptr addrspace(1) %out, ptr addrspace(1) %x, ptr addrspace(1) %y) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 8
  %i = add i32 %base, %tid
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i
  %py = getelementptr float, ptr addrspace(1) %y, i32 %i
  %a = load float, ptr addrspace(1) %px
  %b = load float, ptr addrspace(1) %py
  %m = fmul float %a, 3.0
  %r = fadd float %m, %b
  %po = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %r, ptr addrspace(1) %po
  ret void
}
"""

# Each work-item sums 64 consecutive elements; a second pass is numpy's (the figure is the kernel's).
REDUCE = HEADER + """
define amdgpu_kernel void @rowsum(ptr addrspace(1) %out, ptr addrspace(1) %x) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = shl i32 %gid, 8
  %i = add i32 %base, %tid
  %start = shl i32 %i, 6
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %j = add i32 %start, %k
  %p = getelementptr float, ptr addrspace(1) %x, i32 %j
  %v = load float, ptr addrspace(1) %p
  %acc1 = fadd float %acc, %v
  %k1 = add i32 %k, 1
  %done = icmp eq i32 %k1, 64
  br i1 %done, label %exit, label %loop
exit:
  %po = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %acc1, ptr addrspace(1) %po
  ret void
}
"""

MATMUL = HEADER + """
define amdgpu_kernel void @matmul(ptr addrspace(1) %c, ptr addrspace(1) %a, ptr addrspace(1) %b) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gx = call i32 @llvm.amdgcn.workgroup.id.x()
  %gy = call i32 @llvm.amdgcn.workgroup.id.y()
  %colbase = shl i32 %gx, 6
  %col = add i32 %colbase, %tid
  %row = shl i32 %gy, 8
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ 0.0, %entry ], [ %acc1, %loop ]
  %ai = add i32 %row, %k
  %pa = getelementptr float, ptr addrspace(1) %a, i32 %ai
  %av = load float, ptr addrspace(1) %pa
  %bk = shl i32 %k, 8
  %bi = add i32 %bk, %col
  %pb = getelementptr float, ptr addrspace(1) %b, i32 %bi
  %bv = load float, ptr addrspace(1) %pb
  %acc1 = call float @llvm.fma.f32(float %av, float %bv, float %acc)
  %k1 = add i32 %k, 1
  %done = icmp eq i32 %k1, 256
  br i1 %done, label %exit, label %loop
exit:
  %ci = add i32 %row, %col
  %pc = getelementptr float, ptr addrspace(1) %c, i32 %ci
  store float %acc1, ptr addrspace(1) %pc
  ret void
}
declare float @llvm.fma.f32(float, float, float)
"""

LOOP = HEADER + """
define amdgpu_kernel void @spin(ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
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
}
"""


def _timed(tb: Testbed, kernel, args, grid, block, repeats: int = 5) -> tuple[float, int, int]:
    """Best of `repeats` warm launches: (seconds, wave-instructions, lane-ops) of one launch."""
    tb.launch(kernel, args, grid, block)  # warm: TLB, decode cache
    c = tb.engine.counters
    best = None
    for _ in range(repeats):
        w0, l0 = c.wave_instructions, c.lane_ops
        t0 = time.process_time()
        tb.launch(kernel, args, grid, block)
        dt = time.process_time() - t0
        if best is None or dt < best[0]:
            best = (dt, c.wave_instructions - w0, c.lane_ops - l0)
    return best


def _numpy_time(fn) -> float:
    """Best wall time of a few runs (numpy's BLAS may use several threads)."""
    fn()
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _report(name: str, dt: float, wi: int, lo: int, np_dt: float, ok: bool) -> None:
    print(f"{name:28s} {dt:7.3f} s  {wi / dt / 1e6:7.2f} M wave-inst/s  {lo / dt / 1e6:8.1f} M lane-ops/s  "
          f"numpy {np_dt * 1e3:8.2f} ms (x{dt / np_dt:8.0f} slower)  {'ok' if ok else 'MISMATCH'}")


def main() -> None:
    rng = np.random.default_rng(0)
    tb = Testbed(vram_size=2 << 30)

    n = 1 << 22
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    vx, vy, vo = tb.upload(x), tb.upload(y), tb.alloc(4 * n)
    k = tb.load(compile_ir(ELEMENTWISE))["axpb"]
    dt, wi, lo = _timed(tb, k, [vo, vx, vy], (n // 256,), (256,))
    ref = x * np.float32(3) + y
    _report("elementwise f32, 4M", dt, wi, lo, _numpy_time(lambda: x * np.float32(3) + y),
            np.array_equal(tb.download(vo, np.float32, n), ref))

    m = 1 << 16  # work-items, 64 elements each
    data = rng.random(m * 64, np.float32)
    vd, vs = tb.upload(data), tb.alloc(4 * m)
    k = tb.load(compile_ir(REDUCE))["rowsum"]
    dt, wi, lo = _timed(tb, k, [vs, vd], (m // 256,), (256,))
    got = tb.download(vs, np.float32, m)
    _report("reduction 4M (64/item)", dt, wi, lo, _numpy_time(lambda: data.reshape(m, 64).sum(axis=1)),
            np.allclose(got, data.reshape(m, 64).sum(axis=1, dtype=np.float64), rtol=1e-5))

    a, b = rng.random((256, 256), np.float32), rng.random((256, 256), np.float32)
    va, vb, vc = tb.upload(a), tb.upload(b), tb.alloc(4 * 256 * 256)
    k = tb.load(compile_ir(MATMUL))["matmul"]
    dt, wi, lo = _timed(tb, k, [vc, va, vb], (4, 256), (64,))
    got = tb.download(vc, np.float32, 256 * 256).reshape(256, 256)
    _report("matmul 256^3 f32", dt, wi, lo, _numpy_time(lambda: a @ b),
            np.allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4))

    vo = tb.alloc(4 * 32)
    k = tb.load(compile_ir(LOOP))["spin"]
    dt, wi, lo = _timed(tb, k, [vo, 20000], (1,), (32,))
    _report("single wave, 20k-iteration loop", dt, wi, lo, _numpy_time(lambda: _lcg(20000)),
            np.array_equal(tb.download(vo, np.uint32, 32), _lcg(20000)))


def _lcg(steps: int) -> np.ndarray:
    """The loop kernel's work in numpy: `steps` LCG steps on 32 lanes seeded with their lane ids."""
    v = np.arange(32, dtype=np.uint32)
    for _ in range(steps):
        v = v * np.uint32(1664525) + np.uint32(1013904223)
    return v


if __name__ == "__main__":
    main()
