"""What a GPU fault looks like, and that the device stays usable afterwards.

    MOCKGPU=1 python examples/gpu_fault.py
"""

import numpy as np

import runtime
from compiler.llvm import compile_ir

# Writes one element past a pointer it is given: passing None (a null pointer) makes it a page fault.
POKE = """
define amdgpu_kernel void @poke(ptr addrspace(1) %p, i32 %v) {
  %a = getelementptr i32, ptr addrspace(1) %p, i32 1
  store i32 %v, ptr addrspace(1) %a
  ret void
}
"""

with runtime.Device("AMD:0") as dev:
    poke = dev.load(compile_ir(POKE))["poke"]
    try:
        poke(None, 7, grid=1, block=1)
    except runtime.GPUFault as fault:
        # kind, address and the report: on the simulator the wave, PC, instruction and registers as well
        print(f"GPUFault kind={fault.kind} address={fault.address:#x} device_usable={fault.device_usable}")
        print(fault.report)
    else:
        raise SystemExit("expected a page fault")

    buf = dev.alloc(8).copyin(np.zeros(2, np.int32))  # the queues were restarted: the device works
    poke(buf, 7, grid=1, block=1)
    assert list(buf.copyout(np.empty(2, np.int32))) == [0, 7]
    print("after the fault: the next launch ran correctly")
