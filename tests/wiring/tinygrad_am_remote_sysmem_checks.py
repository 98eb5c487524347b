"""Run by tests/wiring/test_run_tinygrad_am_remote_sysmem.py under `simgpu run --am --remote-pci` (REMOTE set,
DEV=PCI+AMD:LLVM). tinygrad at this version sends nothing when it frees a host buffer over REMOTE (its
PCIIfaceBase.free unmaps only a local device's buffers), so its system memory lives as long as the program's
connection does: this program starts tinygrad programs one after the other (`child`), each of which allocates host
buffers, writes them from the CPU at their va_addr, has the GPU copy some of them, frees them and exits. Between the
children the service (`simgpu run`, this process's parent) must be back to what it held before. Prints one JSON
object per check (not a test module itself)."""

import ctypes
import json
import os
import subprocess
import sys
import time

from proc_maps import memfd_blocks  # (a sibling module: this runs as a script with the client's PYTHONPATH)

BUFFERS, SIZE = 12, 1 << 20  # per child: host buffers of 1 MiB and a few pages more each time
CHILDREN = 3


def report(check: str, **fields) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def sysmem_blocks(pid) -> list[int]:
    """[mappings, bytes] of the remote transport's system buffers (/memfd:simgpu-sysmem) in a process."""
    return memfd_blocks(pid, "simgpu-sysmem")


def child() -> None:
    import numpy as np
    from tinygrad import Device, dtypes
    from tinygrad.device import Buffer, BufferSpec
    dev = Device["AMD"]
    service = int(os.environ["SERVICE_PID"])
    vram = Buffer("AMD", SIZE + BUFFERS * 4096, dtypes.uint8, options=BufferSpec(nolru=True)).ensure_allocated()
    seen = True
    for i in range(BUFFERS):
        size = SIZE + i * 4096
        host = Buffer("AMD", size, dtypes.uint8, options=BufferSpec(host=True, nolru=True)).ensure_allocated()
        ctypes.memset(host._buf.va_addr, i + 1, size)  # plain CPU stores (the host-mapping service maps the block)
        if i % 4 == 0:  # the GPU reads the block at its physical addresses
            q = dev.hw_copy_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1)
            q.copy(vram._buf, host._buf, size).signal(dev.timeline_signal, dev.timeline_value)
            q.submit(dev)
            dev.timeline_signal.wait(dev.timeline_value)
            dev.timeline_value += 1
            seen &= bool((np.frombuffer(vram.as_memoryview(), np.uint8)[:size] == i + 1).all())
        host.deallocate()
    report("child", pci_dev=type(dev.iface.pci_dev).__name__, gpu_saw=seen, held=sysmem_blocks(service))


def main() -> None:
    service = os.getppid()
    base = sysmem_blocks(service)
    after = []
    for _ in range(CHILDREN):
        r = subprocess.run([sys.executable, __file__, "child"], env=dict(os.environ, SERVICE_PID=str(service)),
                           capture_output=True, text=True, timeout=600)
        sys.stdout.write(r.stdout)
        if r.returncode:
            report("failed", code=r.returncode, stderr=r.stderr[-3000:])
            return
        # the service frees a connection's memory when it sees the connection close, in its own thread: wait for it
        deadline = time.monotonic() + 30
        while sysmem_blocks(service) != base and time.monotonic() < deadline:
            time.sleep(0.05)
        after.append(sysmem_blocks(service))
    report("sysmem_lifetime", base=base, after=after)


if __name__ == "__main__":
    child() if sys.argv[1:] == ["child"] else main()
