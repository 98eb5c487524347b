"""Run by tests/wiring/test_run_tinygrad_am_local.py under `simgpu run --am` with DEV=PCI+AMD:LLVM:
tinygrad's AM backend on a LOCAL PCIDevice maps a CPU-device buffer into the GPU (mlock + /proc/self/pagemap) and the
GPU's SDMA engine copies through it both ways. Prints one JSON object per check (not a test module itself)."""

import errno
import json
import os

import numpy as np
from tinygrad import Device, dtypes
from tinygrad.device import Buffer, BufferSpec

SIZE = 0x3000


def report(check: str, **fields) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def sdma_copy(dev, dest, src, size: int) -> None:
    dev.hw_copy_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).copy(dest, src, size) \
        .signal(dev.timeline_signal, dev.timeline_value).submit(dev)
    dev.timeline_signal.wait(dev.timeline_value)
    dev.timeline_value += 1


def main() -> None:
    dev = Device["AMD"]
    bus = dev.iface.pci_dev.pcibus
    try:  # the run's bus number in domain 0: not one of the run's devices, whatever the sysfs holds there
        os.close(os.open(f"/sys/bus/pci/devices/0000:{bus[5:]}/config", os.O_RDWR))
        other = "opened"
    except OSError as e:
        other = errno.errorcode.get(e.errno, str(e.errno))
    report("device", iface=type(dev.iface).__name__, pci_dev=type(dev.iface.pci_dev).__name__, bus=bus,
           devices=sorted(os.listdir("/sys/bus/pci/devices")), other_domain=other)
    pattern = (np.arange(SIZE, dtype=np.uint32) * 2654435761 >> 24).astype(np.uint8)
    cpu = Buffer("CPU", SIZE, dtypes.uint8, options=BufferSpec(cpu_access=True)).ensure_allocated()
    cpu._buf.cpu_view().view(fmt='B')[:] = pattern.tobytes()
    gpu = Buffer("AMD", SIZE, dtypes.uint8, options=BufferSpec(cpu_access=True)).ensure_allocated()
    dev.allocator._map(cpu._buf)
    sdma_copy(dev, gpu._buf, cpu._buf, SIZE)
    report("to_gpu", equal=bool((gpu.numpy() == pattern).all()))
    back = pattern[::-1].copy()
    gpu._buf.cpu_view().view(fmt='B')[:] = back.tobytes()  # through BAR0
    sdma_copy(dev, cpu._buf, gpu._buf, SIZE)  # the GPU writes the CPU's pages
    report("to_cpu", equal=bool((cpu.numpy() == back).all()))


if __name__ == "__main__":
    main()
