"""The AMD device's pool of freed buffers (compiler.device.AMDRuntime): reuse by size, and drained when the device
runs out of memory."""

import pytest

import runtime
from compiler import device as devices
from mockgpu import MockOS


def test_freed_buffers_are_reused_and_given_back_when_memory_runs_out():
    """The AMD device's pool: a freed buffer serves the next allocation of its size without the driver; an
    allocation the device cannot satisfy drains the pool first (a simulated GPU of 256 MiB of VRAM)."""
    dev = devices.DeviceAdapter("AMD:0", rt=runtime.Device("AMD:0", os=MockOS(devices=1, vram_size=1 << 28)))
    a = dev.alloc(4096)
    handle = a.handle
    a.release()
    b = dev.alloc(4096)
    assert b.handle is handle
    info = dev.rt.memory_info()
    free = info["vram_size"] - info["vram_used"]
    chunk = (free // 4) & ~0xFFFFF
    chunks = [dev.alloc(chunk) for _ in range(3)]
    for c in chunks:
        c.release()
    assert dev.runtime._pooled == 3 * chunk
    with pytest.raises(MemoryError):
        dev.rt.alloc(2 * chunk)  # the runtime alone: the pooled chunks are still held
    big = dev.alloc(2 * chunk)
    assert dev.runtime._pooled == 0
    big.release()
    dev.rt.close()
