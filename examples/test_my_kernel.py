"""A pytest test of one's own kernel, with simgpu's pytest plugin (installed with simgpu):

    pytest --mockgpu examples/test_my_kernel.py     # on the simulated gfx1100
    pytest examples/test_my_kernel.py               # on a real AMD GPU

`amd_device` is a runtime.Device, closed after the test; `--mockgpu` (or MOCKGPU=1) selects the simulator.
Tests marked `hardware` are skipped on the simulator.
"""

import numpy as np
import pytest

from compiler.llvm import compile_ir

AXPB = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @axpb(ptr addrspace(1) %y, ptr addrspace(1) %x, float %a, float %b) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %g, 128
  %i = add i32 %base, %t
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i
  %v = load float, ptr addrspace(1) %px
  %r = call float @llvm.fma.f32(float %a, float %v, float %b)
  %py = getelementptr float, ptr addrspace(1) %y, i32 %i
  store float %r, ptr addrspace(1) %py
  ret void
}
declare float @llvm.fma.f32(float, float, float)
"""


@pytest.mark.parametrize("a, b", [(2.0, 1.0), (-0.5, 3.0)])
def test_axpb_matches_numpy(amd_device, a, b):
    axpb = amd_device.load(compile_ir(AXPB))["axpb"]
    x = np.linspace(-4, 4, 512, dtype=np.float32)
    bx, by = amd_device.alloc(x.nbytes).copyin(x), amd_device.alloc(x.nbytes)
    axpb(by, bx, a, b, grid=4, block=128)
    expected = (np.float64(a) * x.astype(np.float64) + b).astype(np.float32)  # fma: one rounding
    assert np.array_equal(by.copyout(np.empty_like(x)), expected)


@pytest.mark.hardware
def test_only_on_a_real_gpu(amd_device):
    assert amd_device.properties["simd_count"] > 0
