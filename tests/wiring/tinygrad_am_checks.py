"""Run by tests/wiring/test_run_tinygrad_am.py under `simgpu run --am [--arch ARCH]` with DEV=PCI+AMD:LLVM: tinygrad
from PyPI, its AM backend (PCIIface: AMDev's bring-up, its page tables, MQD/HQD and SDMA ring programming, its IH
handling) driving the emulated PCI function. Prints one JSON object per check (not a test module itself); the
deliberate fault comes last, since it leaves the device in tinygrad's error state."""

import os
import sys

import numpy as np
from tinygrad import Device, Tensor, TinyJit
from tinygrad_checks import check_fault, report  # (this directory: the script's own, first on sys.path)


def main() -> None:
    dev = Device["AMD"]
    report("device", arch=dev.arch, iface=type(dev.iface).__name__, ip=str(dev.iface.dev_impl.ip_ver),
           pci_dev=type(dev.iface.pci_dev).__name__)
    report("add", value=Tensor([1, 2, 3]).add(1).tolist())
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32)
    c = (Tensor(a) @ Tensor(b)).numpy()
    report("matmul", max_error=float(np.abs(c - a @ b).max()))

    x = rng.standard_normal((32, 40), dtype=np.float32)
    t = Tensor(x)
    report("reductions", sum=t.sum().item(), ref_sum=float(x.sum()), max=t.max().item(), ref_max=float(x.max()),
           rows=t.sum(axis=1).numpy().tolist(), ref_rows=x.sum(axis=1).tolist())

    @TinyJit
    def step(v: Tensor) -> Tensor:  # three kernels: a batch the JIT turns into an HCQ graph
        w = (v * 2 + 1).contiguous()
        return w.sum(axis=0).contiguous() + w.max(axis=1).sum()

    results = [step(Tensor(np.full((16, 8), i, np.float32)).realize()).numpy().tolist() for i in range(5)]
    from tinygrad.engine.realize import graph_cache
    report("jit", results=results, captured=step.captured is not None,
           graphs=[type(g).__name__ for g in graph_cache.values()])

    check_fault(dev)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # tinygrad's exit finalizers would each wait out the faulted device
