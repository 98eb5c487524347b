"""Launch handles (kernel(..., wait=False)), synchronize()'s GPU time, per-slot fencing of the kernarg and
timestamp rings, and copies ordered after the launches before them -- also with lazy doorbells, where the GPU
runs only when the runtime waits."""

from functools import cache

import numpy as np
import pytest

import runtime
from compiler.llvm import compile_ir
from mockgpu import MockOS
from runtime import device as rtdevice
from runtime.launch import FencedRing, Launch

INC_IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @inc(ptr addrspace(1) %p, i32 %k) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %gb = mul i32 %g, 32
  %i = add i32 %gb, %tid
  %a = getelementptr i32, ptr addrspace(1) %p, i32 %i
  %v = load i32, ptr addrspace(1) %a
  %m = mul i32 %v, 3
  %r = add i32 %m, %k
  store i32 %r, ptr addrspace(1) %a
  ret void
}
"""
N = 1024  # elements: up to 32 workgroups of 32
TICK = 1.5e-8  # times are whole 100 MHz ticks; where a dispatch starts within a tick moves its end by one


@cache
def _code() -> bytes:
    return compile_ir(INC_IR)


def _device(queue: str, lazy: bool = False) -> runtime.Device:
    return runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 28, lazy_doorbells=lazy))


def _expected(steps) -> np.ndarray:
    """x -> 3x + k on the first 32 * groups elements, step by step (order matters: it does not commute)."""
    x = np.zeros(N, np.uint64)
    for groups, k in steps:
        x[:32 * groups] = (x[:32 * groups] * 3 + k) & 0xFFFFFFFF
    return x.astype(np.uint32)


@cache
def _reference_times(queue: str) -> dict:
    """GPU time of one launch per grid size, launched alone with wait=True on an eager device."""
    dev = _device(queue)
    inc, buf = dev.load(_code())["inc"], dev.alloc(4 * N)
    return {g: inc(buf, 1, grid=(g,), block=(32,)) for g in (1, 32)}


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_wait_false_returns_a_launch_whose_wait_gives_the_gpu_time(queue):
    dev = _device(queue)
    inc, buf = dev.load(_code())["inc"], dev.alloc(4 * N)
    t = inc(buf, 1, grid=(32,), block=(32,))
    assert isinstance(t, float) and t == pytest.approx(_reference_times(queue)[32], abs=TICK)
    h = inc(buf, 2, grid=(32,), block=(32,), wait=False)
    assert isinstance(h, Launch) and h.value == dev.compute.submitted
    assert h.wait() == h.wait() == h.time == pytest.approx(t, abs=TICK) and h.done()
    assert "inc" in repr(h)


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_synchronize_returns_the_gpu_time_since_the_last_synchronize(queue):
    dev = _device(queue)
    inc, buf = dev.load(_code())["inc"], dev.alloc(4 * N)
    dev.synchronize()
    waited = inc(buf, 1, grid=(1,), block=(32,))
    handles = [inc(buf, k, grid=(4,), block=(32,), wait=False) for k in range(5)]
    total = dev.synchronize()
    assert total == pytest.approx(waited + sum(h.wait() for h in handles), rel=1e-12) and total > 0
    assert dev.synchronize() == 0.0
    assert np.array_equal(buf.copyout(np.zeros(N, np.uint32)), _expected([(1, 1)] + [(4, k) for k in range(5)]))


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_slot_reuse_is_fenced_when_the_gpu_lags_behind(queue, monkeypatch):
    # Tiny rings: the kernarg ring holds 3 launches' arguments and the stamp ring 4 slots, so 40 launches reuse
    # every region many times while the GPU has not run any of them (lazy doorbells).
    monkeypatch.setattr(rtdevice, "STAMP_RING", 4 * rtdevice.STAMP_SLOT)
    dev = _device(queue, lazy=True)
    inc = dev.load(_code())["inc"]
    dev.kernarg_ring = FencedRing(3 * -(-inc.descriptor.kernarg_size // 64) * 64, 64)
    buf = dev.alloc(4 * N).copyin(np.zeros(N, np.uint32))
    steps = [(1 + 31 * (i % 2), i) for i in range(40)]
    first = inc(buf, 0, grid=(1,), block=(32,), wait=False)
    assert not first.done()  # the doorbell did not run the GPU: only a wait does
    handles = [inc(buf, k, grid=(g,), block=(32,), wait=False) for g, k in steps[1:]]
    assert first.done() and first.time is not None  # its slot was reclaimed: its time was read out first
    ref = _reference_times(queue)
    assert [h.wait() for h in [first, *handles]] == [pytest.approx(ref[g], abs=TICK) for g, _ in steps]
    assert np.array_equal(buf.copyout(np.zeros(N, np.uint32)), _expected(steps))


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_copies_wait_for_the_kernels_launched_before_them(queue):
    """SDMA does not wait for the compute queue by itself: a copy out of a buffer a kernel launched with
    wait=False writes must see what the kernel wrote (it read zeros: the compiler's z.mean(0) came back as
    zeros), a copy into a buffer a queued kernel reads must not overwrite it first, and a buffer-to-buffer
    copy sees the kernel's result. With lazy doorbells the GPU runs nothing until the runtime waits."""
    dev = _device(queue, lazy=True)
    inc = dev.load(_code())["inc"]
    buf, other = dev.alloc(4 * N).copyin(np.zeros(N, np.uint32)), dev.alloc(4 * N)
    first = inc(buf, 5, grid=(32,), block=(32,), wait=False)
    assert not first.done()
    assert np.array_equal(buf.copyout(np.zeros(N, np.uint32)), _expected([(32, 5)]))
    inc(buf, 1, grid=(32,), block=(32,), wait=False)
    buf.copyin(np.full(N, 7, np.uint32))  # after the kernel read the old values
    assert np.array_equal(buf.copyout(np.zeros(N, np.uint32)), np.full(N, 7, np.uint32))
    inc(buf, 2, grid=(32,), block=(32,), wait=False)
    buf.copy_to(other)
    assert np.array_equal(other.copyout(np.zeros(N, np.uint32)), np.full(N, 23, np.uint32))


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_a_copy_after_a_faulted_kernel_raises_its_fault_instead_of_reading_zeros(queue):
    """With doorbells that run the GPU at once too: a kernel that faulted stops the compute queue, so the kernels
    queued behind it never write their outputs; a copy out of one raises the fault (it returned the buffer's
    zeros without a word: the SDMA queue finished at its doorbell, so nothing waited for an event)."""
    dev = _device(queue)
    inc = dev.load(_code())["inc"]
    buf = dev.alloc(4 * N).copyin(np.zeros(N, np.uint32))
    inc(None, 1, grid=(1,), block=(32,), wait=False)  # loads from address 0: page fault
    inc(buf, 5, grid=(32,), block=(32,), wait=False)  # queued behind it: never runs
    with pytest.raises(runtime.GPUFault) as e:
        buf.copyout(np.zeros(N, np.uint32))
    assert e.value.kind == "page_fault"
    inc(buf, 5, grid=(32,), block=(32,), wait=False)  # the device recovered
    assert np.array_equal(buf.copyout(np.zeros(N, np.uint32)), _expected([(32, 5)]))


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_launches_aborted_by_a_fault_raise_and_the_device_recovers(queue):
    dev = _device(queue, lazy=True)
    inc, buf = dev.load(_code())["inc"], dev.alloc(4 * N).copyin(np.zeros(N, np.uint32))
    bad = inc(None, 1, grid=(1,), block=(32,), wait=False)  # loads from address 0: page fault
    after = inc(buf, 1, grid=(1,), block=(32,), wait=False)  # queued behind it: discarded with the queue
    with pytest.raises(runtime.GPUFault) as e:
        dev.synchronize()
    assert e.value.kind == "page_fault"
    for h in (bad, after):
        with pytest.raises(runtime.GPUFault, match="aborted"):
            h.wait()
        assert h.done() and h.time is None
    assert inc(buf, 5, grid=(1,), block=(32,)) > 0
    assert np.array_equal(buf.copyout(np.zeros(N, np.uint32)), _expected([(1, 5)]))


class _Owner:
    def __init__(self, log, name):
        self.log, self.name = log, name

    def retire(self):
        self.log.append(self.name)


def test_fenced_ring_retires_only_the_regions_it_hands_out_again():
    log: list[str] = []
    ring = FencedRing(256, 64)
    for name, size in (("a", 64), ("b", 128), ("c", 64)):
        ring.claim(ring.alloc(size), size, _Owner(log, name))
    assert log == [] and ring.pos == 256
    ring.claim(ring.alloc(64), 64, _Owner(log, "d"))  # wraps to 0: only a's region is needed
    assert log == ["a"]
    ring.claim(ring.alloc(64), 64, _Owner(log, "e"))  # [64, 128): b starts there
    assert log == ["a", "b"]
    ring.claim(ring.alloc(64), 64, _Owner(log, "f"))  # [128, 192): b's second half, already retired
    assert log == ["a", "b"]
    ring.claim(ring.alloc(128), 128, _Owner(log, "g"))  # does not fit before 256: c in the tail, then d, e at 0
    assert log == ["a", "b", "c", "d", "e"] and ring.pos == 128
    ring.retire_all()
    assert log == ["a", "b", "c", "d", "e", "f", "g"] and not ring.live
    with pytest.raises(ValueError):
        ring.alloc(257)
