"""Run by tests/wiring/test_run_tinygrad_am.py under `simgpu run --am` with DEV=PCI+AMD:LLVM: tinygrad from PyPI,
its AM backend (PCIIface: AMDev's bring-up, its page tables, MQD/HQD and SDMA ring programming, its IH handling)
driving the emulated PCI function. Prints one JSON object per check (not a test module itself)."""

import json

import numpy as np
from tinygrad import Device, Tensor


def report(check: str, **fields) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def main() -> None:
    dev = Device["AMD"]
    report("device", arch=dev.arch, iface=type(dev.iface).__name__, ip=str(dev.iface.dev_impl.ip_ver),
           pci_dev=type(dev.iface.pci_dev).__name__)
    report("add", value=Tensor([1, 2, 3]).add(1).tolist())
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32)
    c = (Tensor(a) @ Tensor(b)).numpy()
    report("matmul", max_error=float(np.abs(c - a @ b).max()))


if __name__ == "__main__":
    main()
