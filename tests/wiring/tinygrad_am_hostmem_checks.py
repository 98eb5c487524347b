"""Run by tests/wiring/test_run_tinygrad_am_client.py under `simgpu run --am` with DEV=PCI+AMD:LLVM, by a Python that
cannot import simgpu (`python -I`, the base interpreter without the venv; tinygrad's package directory is the one
entry it adds to sys.path, argv[1]). tinygrad's AM backend boots the device (its firmware installed by simgpu from
outside), then plain CPU stores (ctypes.memset) go to a host buffer at its va_addr and the GPU copies them (SDMA);
the GPU writes into a host buffer and the CPU reads it at va_addr; with faulthandler on. Prints one JSON object
per check."""

import ctypes
import faulthandler
import importlib.util
import json
import sys

faulthandler.enable()  # a SIGSEGV handler of the program's own, as pytest installs: the interposer's comes first
sys.path.insert(0, sys.argv[1])

from tinygrad import Device, Tensor, dtypes  # noqa: E402
from tinygrad.device import Buffer, BufferSpec  # noqa: E402

SIZE = 3 << 20  # more than one run of the host mapping (2 MiB)


def report(check: str, **fields) -> None:
    print(json.dumps({"check": check, **fields}), flush=True)


def sdma_copy(dev, dst, src, size: int) -> None:
    dev.hw_copy_queue_t().wait(dev.timeline_signal, dev.timeline_value - 1).copy(dst._buf, src._buf, size) \
        .signal(dev.timeline_signal, dev.timeline_value).submit(dev)
    dev.timeline_signal.wait(dev.timeline_value)
    dev.timeline_value += 1


def main() -> None:
    report("isolation", simgpu=importlib.util.find_spec("simgpu") is not None, flags_isolated=sys.flags.isolated)
    dev = Device["AMD"]
    report("device", arch=dev.arch, iface=type(dev.iface).__name__)
    report("add", value=Tensor([1, 2, 3]).add(1).tolist())
    vram = Buffer("AMD", SIZE, dtypes.uint8, options=BufferSpec(nolru=True)).ensure_allocated()
    for spec in ("host", "cpu_access"):
        host = Buffer("AMD", SIZE, dtypes.uint8, options=BufferSpec(nolru=True, **{spec: True})).ensure_allocated()
        va = host._buf.va_addr
        ctypes.memset(va, 0x5A, SIZE)
        ctypes.memset(va + SIZE - 3, 0xC3, 3)
        sdma_copy(dev, vram, host, SIZE)
        seen = bytes(vram.as_memoryview())
        report(f"cpu_to_gpu_{spec}", ok=seen == b"\x5a" * (SIZE - 3) + b"\xc3" * 3, head=seen[:4].hex(),
               tail=seen[-4:].hex())
        pattern = memoryview(bytearray(b"\x11\x22\x33\x44" * (SIZE // 4)))
        vram.copy_from(Buffer("PYTHON", SIZE, dtypes.uint8, opaque=pattern))
        dev.synchronize()
        sdma_copy(dev, host, vram, SIZE)
        got = ctypes.string_at(va, SIZE)
        report(f"gpu_to_cpu_{spec}", ok=got == bytes(pattern), head=got[:4].hex(), tail=got[-4:].hex())


if __name__ == "__main__":
    main()
