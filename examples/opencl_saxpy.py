"""Write an OpenCL C kernel, compile it with clang-19 for gfx1100, run it through runtime.Device.

    MOCKGPU=1 python examples/opencl_saxpy.py      # on the simulated gfx1100
    python examples/opencl_saxpy.py                # on a real AMD GPU (/dev/kfd)
"""

from pathlib import Path

import numpy as np

import runtime
from compiler.opencl import compile_opencl

source = (Path(__file__).parent / "kernels" / "saxpy.cl").read_text()
code = compile_opencl(source)  # an AMDGPU code object (ELF), what clang + ld.lld produce for ROCm

with runtime.Device("AMD:0") as dev:  # MOCKGPU=1: the simulator; otherwise the GPU behind /dev/kfd
    module = dev.load(code)
    print(f"{dev}: kernels {module.kernels}")

    n = 1 << 16
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(y.nbytes).copyin(y)
    seconds = module["saxpy"](by, bx, 2.0, n, grid=n // 256, block=256)  # waits; the GPU time in seconds
    out = by.copyout(np.empty_like(y))
    assert np.array_equal(out, np.float32(2.0) * x + y)
    print(f"saxpy of {n} elements: {seconds * 1e6:.1f} us of GPU time, result matches numpy")

    sums = dev.alloc(4 * (n // 256))
    module["group_sum"](sums, bx, grid=n // 256, block=256)
    got = sums.copyout(np.empty(n // 256, np.float32))
    assert np.allclose(got, x.reshape(-1, 256).sum(axis=1), rtol=1e-5, atol=1e-4)
    print(f"group_sum: {len(got)} workgroup sums match numpy")
