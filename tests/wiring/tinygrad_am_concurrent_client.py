"""Run twice at once by tests/wiring/test_run_tinygrad_am_local.py, each under its own `simgpu run --am` with
DEV=PCI+AMD:LLVM: opens its device (tinygrad's PCIDevice takes $TMPDIR/am_<bdf>.lock for as long as it drives it),
then waits at a barrier -- a directory where each run leaves its bus address -- until the other run has opened its own
device too, so both hold their devices at the same time; then computes a matmul numpy checks. Prints one JSON object
per check (not a test module itself). argv: the barrier directory, a seed."""

import json
import os
import sys
import time

import numpy as np
from tinygrad import Device, Tensor


def report(check: str, **fields) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def main() -> None:
    barrier, seed = sys.argv[1], int(sys.argv[2])
    dev = Device["AMD"]
    bus = dev.iface.pci_dev.pcibus
    report("device", pci_dev=type(dev.iface.pci_dev).__name__, bus=bus,
           devices=sorted(os.listdir("/sys/bus/pci/devices")))
    open(os.path.join(barrier, bus), "w").close()
    deadline = time.monotonic() + 300
    while len(os.listdir(barrier)) < 2:
        if time.monotonic() > deadline:
            raise SystemExit(f"the other run never opened its device: {os.listdir(barrier)}")
        time.sleep(0.05)
    report("both_open", buses=sorted(os.listdir(barrier)))
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((32, 48), dtype=np.float32), rng.standard_normal((48, 16), dtype=np.float32)
    c = (Tensor(a) @ Tensor(b)).numpy()
    report("matmul", max_error=float(np.abs(c - a @ b).max()))


if __name__ == "__main__":
    main()
