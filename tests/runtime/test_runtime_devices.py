"""Several Devices of one GPU in one process (issue 12, item 2): they share the process's amdkfd context as
libhsakmt's users do (one /dev/kfd, one render node and VM per GPU, one event page), close() releases all
that one Device holds, and a Device is a context manager."""

import errno

import numpy as np
import pytest

import runtime
from compiler.llvm import compile_ir
from mockgpu import MockOS
from runtime.uapi import kfd

INC = """
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @inc(ptr addrspace(1) %p, i32 %k) {
  %i = call i32 @llvm.amdgcn.workitem.id.x()
  %a = getelementptr i32, ptr addrspace(1) %p, i32 %i
  %v = load i32, ptr addrspace(1) %a
  %r = add i32 %v, %k
  store i32 %r, ptr addrspace(1) %a
  ret void
}
"""


def _run(dev: runtime.Device, k: int) -> np.ndarray:
    inc = dev.load(compile_ir(INC))["inc"]
    buf = dev.alloc(256).copyin(np.arange(64, dtype=np.int32))
    inc(buf, k, grid=1, block=64)
    return buf.copyout(np.empty(64, np.int32))


def _held(mock: MockOS) -> tuple[int, int, int]:
    """What the emulated process holds in the driver: buffer objects, queues, events."""
    p = mock.process
    return len(p.allocs), len(p.queues), len(p.events)


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_two_devices_of_one_gpu_run_side_by_side(queue):
    mock = MockOS(devices=1, vram_size=1 << 28)
    a, b = runtime.Device("AMD:0", queue=queue, os=mock), runtime.Device("AMD:0", queue=queue, os=mock)
    assert a.driver.drm_fd == b.driver.drm_fd and a.driver.kfd_fd == b.driver.kfd_fd  # one render node file, one VM
    assert np.array_equal(_run(a, 1), np.arange(64) + 1)
    assert np.array_equal(_run(b, 2), np.arange(64) + 2)
    a.close()
    assert np.array_equal(_run(b, 3), np.arange(64) + 3)


def test_a_new_device_after_close_works_and_close_releases_everything():
    mock = MockOS(devices=1, vram_size=1 << 28)
    first = runtime.Device("AMD:0", os=mock)
    baseline = _held(mock)
    _run(first, 1)
    first.close()
    process_wide = _held(mock)
    assert process_wide == (1, 0, 0)  # only the event page stays, with the process's amdkfd context
    with runtime.Device("AMD:0", os=mock) as again:  # used to fail: EBUSY, VM already acquired
        assert np.array_equal(_run(again, 5), np.arange(64) + 5)
        assert _held(mock)[1:] == baseline[1:]
    assert again.closed and _held(mock) == process_wide
    with pytest.raises(RuntimeError, match="AMD:0 is closed"):
        again.alloc(64)


def test_close_frees_the_devices_buffers_once():
    mock = MockOS(devices=1, vram_size=1 << 28)
    dev = runtime.Device("AMD:0", os=mock)
    kept, freed = dev.alloc(4096), dev.alloc(4096)
    freed.free()
    dev.close()
    assert kept.freed
    with pytest.raises(RuntimeError, match="used after free"):
        kept.copyin(b"x")
    dev.close()  # a second close does nothing


def test_devices_on_two_gpus_share_one_event_page():
    mock = MockOS(devices=2, vram_size=1 << 28)
    a, b = runtime.Device("AMD:0", queue="aql", os=mock), runtime.Device("AMD:1", queue="aql", os=mock)
    assert a.event_page_va == b.event_page_va
    assert np.array_equal(_run(a, 1), np.arange(64) + 1) and np.array_equal(_run(b, 7), np.arange(64) + 7)


def test_amdkfd_takes_one_event_page_per_process_and_reserves_signal_event_zero():
    # kfd_kmap_event_page: "Event page is already set" -> EINVAL; kfd_event_init_process allocates id 0.
    mock = MockOS(devices=1, vram_size=1 << 28)
    dev = runtime.Device("AMD:0", os=mock)
    assert dev.completion_event >= 1
    other = dev.alloc_system(kfd.KFD_SIGNAL_EVENT_LIMIT * 8)
    with pytest.raises(OSError) as e:
        dev.driver.kfd_ioctl(kfd.AMDKFD_IOC_CREATE_EVENT, kfd.kfd_ioctl_create_event_args(
            event_type=kfd.KFD_IOC_EVENT_SIGNAL, auto_reset=1, node_id=dev.node_id, event_page_offset=other.handle))
    assert e.value.errno == errno.EINVAL and "already set" in str(e.value)
