"""`simgpu demo`: two LLVM-IR kernels run end to end on the simulated gfx1100 through
runtime -> amdkfd (mockgpu.MockOS) -> simgpu, checked against numpy."""

from __future__ import annotations

import time

import numpy as np

SAXPY = """
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

MATMUL = """
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


def run(queue: str = "pm4", out=print) -> bool:
    """Build, run and check both kernels; print the table; True when every check passes."""
    import runtime
    from compiler.llvm import compile_ir
    from wiring.os_select import mock_os, traced
    out(f"simgpu demo: running on the SIMULATED gfx1100 (mockgpu.MockOS, queue={queue}), not on hardware")
    mock = mock_os(devices=1, vram_size=1 << 30)
    dev = runtime.Device("AMD:0", queue=queue, os=traced(mock))
    counters = mock.simulator(dev.gpu_id).engine.counters  # the simulator's own count, not the runtime's
    rows, ok = [], True
    rng = np.random.default_rng(1234)
    n = 1 << 16
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    saxpy = dev.load(compile_ir(SAXPY))["saxpy"]
    bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(y.nbytes).copyin(y)
    rows.append(_run(counters, "saxpy", saxpy, (by, bx, np.float32(2.0)), (n // 256, 1, 1), (256, 1, 1),
                     lambda: np.array_equal(by.copyout(np.empty_like(y)), np.float32(2.0) * x + y)))
    m = 256
    a, b = rng.standard_normal((m, m)).astype(np.float32), rng.standard_normal((m, m)).astype(np.float32)
    matmul = dev.load(compile_ir(MATMUL))["matmul"]
    ba, bb, bc = dev.alloc(a.nbytes).copyin(a), dev.alloc(b.nbytes).copyin(b), dev.alloc(a.nbytes)
    rows.append(_run(counters, "matmul 256x256", matmul, (bc, ba, bb, m), (m, 1, 1), (m, 1, 1),
                     lambda: np.allclose(bc.copyout(np.empty_like(a)), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)))
    out(f"{'kernel':<16}{'grid x block':>22}{'wave-instr':>12}{'lane-ops':>14}{'GPU time':>12}{'host time':>11}  check")
    for name, shape, wi, lo, gpu_t, host_t, good in rows:
        ok &= good
        out(f"{name:<16}{shape:>22}{wi:>12}{lo:>14}{gpu_t * 1e6:>10.2f}us{host_t:>10.2f}s  {'ok' if good else 'FAIL'}")
    out("GPU time is the simulator's virtual clock (deterministic); host time is wall time.")
    return ok


def _run(counters, name, kernel, args, grid, block, check):
    before = counters.snapshot()
    t0 = time.perf_counter()
    gpu_t = kernel(*args, grid=grid, block=block)
    host_t = time.perf_counter() - t0
    after = counters.snapshot()
    shape = f"{'x'.join(map(str, grid))} x {'x'.join(map(str, block))}"
    return (name, shape, after["wave_instructions"] - before["wave_instructions"],
            after["lane_ops"] - before["lane_ops"], gpu_t, host_t, bool(check()))
