"""Run by tests/wiring/test_run_tinygrad_am_local.py under `simgpu run --am` with DEV=PCI+AMD:LLVM:
tinygrad's AM backend on a LOCAL PCIDevice maps a CPU-device buffer into the GPU (mlock + /proc/self/pagemap) and the
GPU's SDMA engine copies through it both ways -- for a CPU buffer over private memory of the program's own too (a
private anonymous mapping, a page-aligned block of the heap: tinygrad's external_ptr). Then host buffers are
allocated, written, copied by the GPU and freed in a loop (tinygrad frees one by munmap): the system memory the
service holds for them -- its own mappings of /memfd:simgpu-host blocks, read from the service's /proc/<pid>/maps
(the service is `simgpu run`, this process's parent) -- must stay bounded. Prints one JSON object per check (not a
test module itself)."""

import ctypes
import errno
import json
import mmap
import os

import numpy as np
from proc_maps import memfd_blocks  # (a sibling module: this runs as a script with the client's PYTHONPATH)
from tinygrad import Device, dtypes
from tinygrad.device import Buffer, BufferSpec

SIZE = 0x3000
LOOP, LOOP_SIZE = 40, 1 << 20  # host buffers of 1 MiB and a few pages more each time: 40+ MiB in all


def report(check: str, **fields) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def sdma_copy(dev, dest, src, size: int) -> None:
    dev.hw_copy_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).copy(dest, src, size) \
        .signal(dev.timeline_signal, dev.timeline_value).submit(dev)
    dev.timeline_signal.wait(dev.timeline_value)
    dev.timeline_value += 1


def host_blocks(pid) -> list[int]:
    """[mappings, bytes] of system-memory blocks (/memfd:simgpu-host:...) in a process's address space."""
    return memfd_blocks(pid, "simgpu-host:")


def sysmem_loop(dev) -> None:
    service = os.getppid()
    base = host_blocks(service)
    vram = Buffer("AMD", LOOP_SIZE + LOOP * 4096, dtypes.uint8, options=BufferSpec(nolru=True)).ensure_allocated()
    seen, mid = True, None
    for i in range(LOOP):
        size = LOOP_SIZE + i * 4096
        host = Buffer("AMD", size, dtypes.uint8, options=BufferSpec(host=True, nolru=True)).ensure_allocated()
        ctypes.memset(host._buf.va_addr, i + 1, size)
        if i % 8 == 0:  # the GPU reads the block at the addresses pagemap gave
            sdma_copy(dev, vram._buf, host._buf, size)
            seen &= bool((np.frombuffer(vram.as_memoryview(), np.uint8)[:size] == i + 1).all())
        host.deallocate()  # PCIIfaceBase.free: munmap
        if i == LOOP // 2:
            mid = host_blocks(service)
    report("sysmem_loop", base=base, mid=mid, end=host_blocks(service), largest=LOOP_SIZE + LOOP * 4096,
           gpu_saw=seen, mine=host_blocks("self"))


def private_memory(dev, kind: str) -> None:
    """A CPU buffer over private memory the program allocated itself (external_ptr), mapped into the GPU: pagemap
    moves its touched pages where the GPU reaches them; the GPU reads what the CPU wrote and writes what it reads."""
    libc = ctypes.CDLL(None)
    if kind == "mmap":
        keep = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(keep))
    else:  # the heap: malloc's memory, page aligned as the GPU's page tables need
        ptr = ctypes.c_void_p()
        assert libc.posix_memalign(ctypes.byref(ptr), mmap.PAGESIZE, SIZE) == 0
        addr = ptr.value
    host = np.frombuffer((ctypes.c_uint8 * SIZE).from_address(addr), np.uint8)
    pattern = (np.arange(SIZE, dtype=np.uint32) * 40503 >> 5).astype(np.uint8)
    host[:] = pattern
    cpu = Buffer("CPU", SIZE, dtypes.uint8, options=BufferSpec(external_ptr=addr)).ensure_allocated()
    gpu = Buffer("AMD", SIZE, dtypes.uint8, options=BufferSpec(cpu_access=True)).ensure_allocated()
    dev.allocator._map(cpu._buf)
    sdma_copy(dev, gpu._buf, cpu._buf, SIZE)
    to_gpu = bool((gpu.numpy() == pattern).all())
    gpu._buf.cpu_view().view(fmt='B')[:] = pattern[::-1].tobytes()
    sdma_copy(dev, cpu._buf, gpu._buf, SIZE)
    report(f"private_{kind}", to_gpu=to_gpu, to_cpu=bool((host == pattern[::-1]).all()))


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
    for kind in ("mmap", "heap"):
        private_memory(dev, kind)
    sysmem_loop(dev)


if __name__ == "__main__":
    main()
