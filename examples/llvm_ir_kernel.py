"""Write a kernel in LLVM IR, compile it for gfx1100 with compiler.llvm (llvmlite: no external tools), and run it.

    MOCKGPU=1 python examples/llvm_ir_kernel.py
"""

import numpy as np

import runtime
from compiler.llvm import compile_ir

# out[i] = x[i] * x[i] over i32, one work-item per element; the grid is exact (no bounds check needed).
SQUARE = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @square(ptr addrspace(1) %out, ptr addrspace(1) %x) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %g, 64
  %i = add i32 %base, %t
  %px = getelementptr i32, ptr addrspace(1) %x, i32 %i
  %v = load i32, ptr addrspace(1) %px
  %sq = mul i32 %v, %v
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %sq, ptr addrspace(1) %po
  ret void
}
"""

with runtime.Device("AMD:0", queue="aql") as dev:  # AQL packets this time; queue="pm4" is the default
    square = dev.load(compile_ir(SQUARE))["square"]
    x = np.arange(1024, dtype=np.int32)
    bx, bout = dev.alloc(x.nbytes).copyin(x), dev.alloc(x.nbytes)
    launch = square(bout, bx, grid=len(x) // 64, block=64, wait=False)  # returns at once: a Launch handle
    print(f"launched: {launch}")
    seconds = launch.wait()
    assert np.array_equal(bout.copyout(np.empty_like(x)), x * x)
    print(f"square of {len(x)} ints: {seconds * 1e6:.2f} us of GPU time, result matches numpy")
