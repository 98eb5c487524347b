"""Random PM4 rings through the runtime (issue 27, item 7): whatever a compute queue is given, the wait for it ends
in completion or a GPUFault, never a plain TimeoutError; a wait that can never be satisfied (a WAIT_REG_MEM on
memory nobody writes) is a GPUTimeout naming the packet (opcode, ring offset) and the address, value, mask and
reference it waits on; the queue is then reset, so the next launch on the same Device works."""

from __future__ import annotations

import os
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runtime
from mockgpu import MockOS
from simgpu.hw import pm4 as hw
from tests.runtime.test_runtime_memory import STORE, _asm_kernel

FUZZ = settings(max_examples=int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "40")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
WORDS = 4096  # the scratch buffer the packets address


@cache
def _device():
    """One Device for every example: a wedged queue it did not reset would time out every later example."""
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28, watchdog=20_000))
    return dev, dev.alloc(4 * WORDS), _asm_kernel(dev, STORE)


def _ok(dev, store) -> None:
    out = dev.alloc(4).copyin(np.zeros(1, np.uint32))
    store(out, grid=1, block=32, timeout_ms=60_000)
    assert out.copyout(np.empty(1, np.uint32))[0] == 42
    out.free()


@st.composite
def _packet(draw, base: int) -> list[int]:
    a = base + 4 * draw(st.integers(0, WORDS - 8))
    small = draw(st.integers(0, 255))
    choice = draw(st.integers(0, 10))
    if choice == 0:
        return hw.write_data(a, *draw(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=4)))
    if choice in (1, 9, 10):  # waits, three times as often: a wait nothing satisfies is what wedged queues
        return hw.wait_reg_mem(a, draw(st.sampled_from([0, 1, small, 0xFFFFFFFF])),
                               mask=draw(st.sampled_from([0, 0xFF, 0xFFFFFFFF])), func=draw(st.integers(0, 6)))
    if choice == 2:
        return hw.release_mem(a & ~7, small, data_sel=draw(st.integers(0, 3)))
    if choice == 3:
        return hw.atomic_mem(a & ~7, draw(st.sampled_from(list(hw.TcOp))), small, small)
    if choice == 4:
        return hw.copy_data(hw.CopySrc.MEMORY, base + 4 * draw(st.integers(0, WORDS - 8)), hw.CopyDst.MEMORY, a)
    if choice == 5:
        return hw.dma_data(a, base + 4 * draw(st.integers(0, WORDS // 2)), 4 * small)
    if choice == 6:
        return hw.event_write(draw(st.sampled_from(list(hw.Event))))
    if choice == 7:
        return draw(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=16))  # garbage
    return hw.nop(draw(st.integers(1, 4)))


@FUZZ
@given(st.data())
def test_random_pm4_rings_end_in_completion_or_a_fault_and_the_device_stays_usable(data):
    dev, scratch, store = _device()
    scratch.copyin(np.zeros(WORDS, np.uint32))
    words = [w for p in data.draw(st.lists(_packet(scratch.va), min_size=1, max_size=10)) for w in p]
    value = dev.compute.submit(words)
    try:  # (the doorbell ran the ring until it ended or blocked: a wait that is not over at once never will be)
        dev.wait(dev.compute, value, timeout_ms=100)
    except runtime.GPUFault as e:
        assert e.report and e.device_usable
        if isinstance(e, TimeoutError):  # never satisfied: says which packet and what it waits for
            assert isinstance(e, runtime.GPUTimeout) and "blocked: " in e.report.splitlines()[0]
    _ok(dev, store)


def test_a_wait_that_is_never_satisfied_is_a_gpu_timeout_naming_the_packet_and_the_queue_is_reset():
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 28))
    flag = dev.alloc(64).copyin(np.zeros(16, np.uint32))
    value = dev.compute.submit(hw.nop(3) + hw.wait_reg_mem(flag.va + 8, 5, mask=0xFF, func=hw.Compare.EQ))
    with pytest.raises(runtime.GPUTimeout) as e:
        dev.wait(dev.compute, value, timeout_ms=100)
    first = e.value.report.splitlines()[0]
    assert isinstance(e.value, TimeoutError) and e.value.kind == "timeout" and e.value.device_usable
    assert first.startswith("AMD:0: pm4 queue did not reach 1 (at 0) within 100 ms: queue pm4-q1 blocked: ")
    assert f"WAIT_REG_MEM: memory at VA {flag.va + 8:#x} = 0x0; waiting for (value & 0xff) EQ 0x5 " \
        "(packet WAIT_REG_MEM at ring offset 0x10)" in first  # after the 4-dword NOP
    assert "the queues were reset" in e.value.report
    store = _asm_kernel(dev, STORE)
    _ok(dev, store)  # used to time out behind the wedged packet
    _ok(dev, store)
