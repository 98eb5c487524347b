"""Run by tests/wiring/test_run_tinygrad.py under `simgpu run --devices 2` with DEV=AMD:LLVM: tinygrad from PyPI,
unmodified, on its KFD interface (not a test module itself). Prints one JSON object per check; the deliberate
fault comes last, since it leaves the device in tinygrad's error state."""

import json
import os
import sys
import time

import numpy as np
from tinygrad import Device, Tensor, TinyJit
from tinygrad.device import TinyELF
from tinygrad.helpers import DEV

OOB_IR = """
define amdgpu_kernel void @oob(ptr addrspace(1) %p) {
  %q = getelementptr i8, ptr addrspace(1) %p, i64 1099511627776
  store i32 1, ptr addrspace(1) %q
  ret void
}
"""


def report(check: str, **fields) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def main() -> None:
    dev = Device["AMD"]
    report("device", name=Device.DEFAULT, arch=dev.arch, iface=type(dev.iface).__name__,
           renderer=type(dev.renderer).__name__)
    report("add", value=Tensor([1, 2, 3]).add(1).tolist())

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32)
    c = (Tensor(a) @ Tensor(b)).numpy()
    report("matmul", max_error=float(np.abs(c - a @ b).max()))

    x = rng.standard_normal((32, 40), dtype=np.float32)
    t = Tensor(x)
    report("reductions", sum=t.sum().item(), ref_sum=float(x.sum()), max=t.max().item(), ref_max=float(x.max()),
           rows=t.sum(axis=1).numpy().tolist(), ref_rows=x.sum(axis=1).tolist(),
           mean=t.mean(axis=0).numpy().tolist(), ref_mean=x.mean(axis=0).tolist())

    Tensor.manual_seed(42)
    r1 = Tensor.rand(4096).numpy()
    Tensor.manual_seed(42)
    r2 = Tensor.rand(4096).numpy()
    report("rand", min=float(r1.min()), max=float(r1.max()), mean=float(r1.mean()), repeatable=bool((r1 == r2).all()))

    @TinyJit
    def step(v: Tensor) -> Tensor:  # three kernels: a batch the JIT turns into an HCQ graph
        w = (v * 2 + 1).contiguous()
        return w.sum(axis=0).contiguous() + w.max(axis=1).sum()

    inputs = [Tensor(np.full((16, 8), i, np.float32)).realize() for i in range(6)]
    results, times = [], []
    for v in inputs:
        t0 = time.perf_counter()
        out = step(v)
        results.append(out.numpy().tolist())
        times.append(time.perf_counter() - t0)
    from tinygrad.engine.realize import graph_cache
    report("jit", results=results, seconds=times, captured=step.captured is not None,
           graphs=[type(g).__name__ for g in graph_cache.values()])

    a0 = Tensor(np.arange(64, dtype=np.float32), device="AMD:0").realize()
    a1 = (a0.to("AMD:1") * 3).realize()
    report("two_gpus", device=a1.device, value=a1.numpy().tolist())

    # Both ways between the GPUs (on gfx942 two members of an XGMI hive: tinygrad maps the peer's VRAM with
    # MAP_MEMORY_TO_GPU and copies with SDMA over XGMI), 1 MiB of random floats each, checked against numpy.
    up, down = rng.standard_normal(1 << 18, dtype=np.float32), rng.standard_normal(1 << 18, dtype=np.float32)
    on1 = Tensor(up, device="AMD:0").realize().to("AMD:1").realize()
    on0 = Tensor(down, device="AMD:1").realize().to("AMD:0").realize()
    report("copies_both_ways", devices=[on1.device, on0.device], to_1=bool(np.array_equal(on1.numpy(), up)),
           to_0=bool(np.array_equal(on0.numpy(), down)), sum_1=float((on1 * 2).sum().item()),
           ref_sum_1=float((up * 2).sum()))

    check_fault(dev)


def check_fault(dev) -> None:
    """A store 1 TiB past a 16-byte buffer: tinygrad must report the GPU's page fault (and the buffer's address, which
    the test finds in the report). Last of the checks: it leaves the device in tinygrad's error state."""
    buf = Tensor.zeros(4).contiguous().realize().uop.buffer._buf
    prg = dev.runtime(TinyELF(dev.compiler.compile(OOB_IR), "oob", DEV.target("AMD"), ()))
    try:
        prg(buf, global_size=(1, 1, 1), local_size=(1, 1, 1), wait=True)
        report("fault", error=None, base=buf.va_addr)
    except RuntimeError as e:
        report("fault", error=str(e), base=buf.va_addr)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # tinygrad's exit finalizers would each wait out the faulted device (200 ms per buffer)
