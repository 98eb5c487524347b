"""Runtime buffers on MockOS: copies of many sizes and offsets, frees, several devices, faults."""

import io
import subprocess
import sys

import numpy as np
import pytest

import runtime
from compiler.llvm import compile_ir
from mockgpu import MockOS
from runtime.os import MAP_FIXED, PROT_NONE
from simgpu.hw import pm4 as hw
from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from traces.format import read_trace
from traces.record import RecordingOS


@pytest.fixture(scope="module")
def dev():
    return runtime.Device(os=MockOS(devices=1, vram_size=1 << 30))


@pytest.mark.parametrize("size", [1, 3, 4, 255, 4096, 4097, 100_000, (4 << 20) + 5])
@pytest.mark.parametrize("host", [False, True])
def test_copy_roundtrip(dev, size, host):
    data = np.random.default_rng(size).integers(0, 256, size, np.uint8)
    buf = dev.alloc(size + 16, host=host)
    buf.copyin(data, offset=7 if size > 1 else 0)
    out = buf.copyout(np.zeros(size, np.uint8), offset=7 if size > 1 else 0)
    assert np.array_equal(out, data)
    buf.free()


def test_copy_64mib(dev):
    data = np.arange(16 << 20, dtype=np.uint32)
    buf = dev.alloc(data.nbytes)
    buf.copyin(data)
    assert np.array_equal(buf.copyout(np.empty_like(data)), data)
    buf.free()


@pytest.mark.parametrize("host, what", [(False, "VRAM"), (True, r"system memory the GPU may use \(GTT\)")])
def test_an_allocation_larger_than_the_device_says_so(dev, host, what):
    with pytest.raises(MemoryError, match=rf"cannot allocate 1099511627776 bytes \(1 TiB\) of {what}: it exceeds "
                                          r"the device's memory \(\d+ bytes \(.*\) free of \d+ bytes"):
        dev.alloc(1 << 40, host=host)
    assert dev.alloc(4096)  # nothing was lost


def test_use_after_free_and_double_free(dev):
    buf = dev.alloc(64)
    buf.free()
    with pytest.raises(RuntimeError, match="after free"):
        buf.copyin(b"x")
    with pytest.raises(RuntimeError, match="twice"):
        buf.free()
    with pytest.raises(ValueError):
        dev.alloc(16).copyin(b"x" * 17)


def test_device_properties(dev):
    assert dev.arch == "gfx1100"
    assert dev.properties["gfx_target_version"] == 110000
    assert dev.properties["wave_front_size"] == 32
    assert not hasattr(dev, "simulator")  # the runtime knows the driver only through the seam


def test_copies_between_devices():
    os_ = MockOS(devices=2, vram_size=1 << 30)
    a, b = runtime.Device("AMD:0", os=os_), runtime.Device("AMD:1", os=os_)
    assert a.gpu_id != b.gpu_id and os_.simulator(b.gpu_id) is not os_.simulator(a.gpu_id)
    data = np.random.default_rng(0).integers(0, 1 << 32, 300_000, np.uint32)
    src, dst = a.alloc(data.nbytes).copyin(data), b.alloc(data.nbytes)
    src.copy_to(dst)
    assert np.array_equal(dst.copyout(np.empty_like(data)), data)
    back = a.alloc(data.nbytes)
    dst.copy_to(back)
    assert np.array_equal(back.copyout(np.empty_like(data)), data)
    with pytest.raises(RuntimeError, match="no such device"):
        runtime.Device("AMD:2", os=os_)


def _asm_kernel(dev, body: str):
    meta = {".args": [{".name": "p", ".offset": 0, ".size": 8, ".value_kind": "global_buffer"}]}
    co = write_code_object([("k", assemble(body), make_descriptor(8, kernarg_size=8), meta)])
    return dev.load(co)["k"]


STORE = """
s_load_b64 s[4:5], s[0:1], 0x0
s_waitcnt lgkmcnt(0)
v_mov_b32 v1, 0
v_mov_b32 v2, 42
global_store_b32 v1, v2, s[4:5]
s_endpgm
"""


def _ok(dev):
    k = _asm_kernel(dev, STORE)
    buf = dev.alloc(64)
    k(buf, grid=(1,), block=(32,))
    assert buf.copyout(np.zeros(1, np.uint32))[0] == 42


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_page_fault_is_reported_and_device_recovers(queue):
    dev = runtime.Device(queue=queue, os=MockOS(devices=1, vram_size=1 << 30))
    k = _asm_kernel(dev, STORE)
    with pytest.raises(runtime.GPUFault) as e:
        k(None, grid=(1,), block=(32,))
    assert e.value.kind == "page_fault" and e.value.address == 0 and e.value.device_usable
    report = e.value.report
    assert report.startswith(f"AMD:0 (gpu_id {dev.gpu_id}): memory exception at VA 0x0 (page not present)")
    # the driver's report: the queue that stopped, the wave, PC, instruction and registers
    assert "GPU fault (page_fault)" in report and "write at VA 0x0" in report and "wave 0, pc 0x" in report
    assert "[global_store_b32 v1, v2, s[4:5]]" in report and "exec 0x00000000ffffffff" in report
    assert "v[0:7] lane 0 00000000 00000000 0000002a" in report  # v2 = 42, the value being stored
    _ok(dev)


def test_s_trap_and_hang_are_reported():
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 30, watchdog=20_000))
    with pytest.raises(runtime.GPUFault) as e:
        _asm_kernel(dev, "s_trap 2\ns_endpgm")(None, grid=(1,), block=(32,))
    assert e.value.kind == "trap" and e.value.address is None
    assert "hardware exception: GPU hang, per-engine reset" in e.value.report and "[s_trap 2]" in e.value.report
    _ok(dev)
    with pytest.raises(runtime.GPUFault) as e:
        _asm_kernel(dev, "s_branch -1\ns_endpgm")(None, grid=(1,), block=(32,), timeout_ms=100)
    assert e.value.kind == "watchdog"
    _ok(dev)


def test_addresses_depend_only_on_the_os_objects_own_history():
    def three(os_, name="AMD:0"):
        dev = runtime.Device(name, os=os_)
        return dev, [dev.alloc(1 << 20).va for _ in range(3)]

    _, first = three(MockOS(devices=1, vram_size=1 << 30))
    shared = MockOS(devices=2, vram_size=1 << 30)
    a, second = three(shared)
    assert second == first  # a second MockOS in the same process gets the same addresses
    b, third = three(shared, "AMD:1")  # devices of one process share its VA space: one address per buffer
    assert b.va_space is a.va_space and min(third) > max(second)


def test_cpu_mappings_sit_at_the_gpu_va_of_a_range_reserved_through_the_os():
    rec = io.BytesIO()
    os_ = RecordingOS(MockOS(devices=1, vram_size=1 << 30), rec)
    dev = runtime.Device(os=os_)
    buf = dev.alloc_system(1 << 16)
    assert buf.mapping.addr == buf.va and buf.reservation.addr == buf.va
    os_.finish()
    maps = [r for r in read_trace(rec.getvalue())[1] if r["t"] == "mmap"]
    reserved = next(r for r in maps if r["fd"] == -1 and r["addr"] == buf.va)
    assert reserved["prot"] == PROT_NONE and reserved["result"] == buf.va
    placed = next(r for r in maps if r["fd"] != -1 and r["addr"] == buf.va)
    assert placed["flags"] & MAP_FIXED and placed["result"] == buf.va


def test_a_timeout_says_what_the_queue_waits_for():
    dev = runtime.Device(os=MockOS(devices=1, vram_size=1 << 30))
    flag = dev.alloc(64)
    value = dev.compute.submit(hw.wait_reg_mem(flag.va, 1))  # waits for memory that never becomes 1
    with pytest.raises(TimeoutError) as e:
        dev.wait(dev.compute, value, timeout_ms=10)
    assert "pm4 queue did not reach 1" in str(e.value) and "waiting: WAIT_REG_MEM" in str(e.value)


def test_no_driver_error_and_no_mockgpu_import():
    code = """
import os, sys
os.environ.pop("MOCKGPU", None)
import runtime, runtime.device, runtime.module, runtime.queues, runtime.os, runtime.uapi.kfd
import runtime.launch, runtime.uapi.amdgpu_drm
assert "mockgpu" not in sys.modules and "simgpu.gpu" not in sys.modules, sorted(sys.modules)
if not os.path.exists("/dev/kfd"):
    try:
        runtime.Device()
    except RuntimeError as e:
        assert "MOCKGPU=1" in str(e), e
    else:
        raise AssertionError("no error")
assert "mockgpu" not in sys.modules
"""
    env = {k: v for k, v in __import__("os").environ.items() if k != "MOCKGPU"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


def test_mockgpu_env_selects_the_simulator():
    code = """
import runtime, numpy as np
d = runtime.Device()
assert type(d.os).__name__ == "MockOS" and d.os.simulator(d.gpu_id) is not None and d.arch == "gfx1100"
b = d.alloc(8).copyin(np.arange(2, dtype=np.uint32))
assert list(b.copyout(np.zeros(2, np.uint32))) == [0, 1]
"""
    env = dict(__import__("os").environ, MOCKGPU="1", MOCKGPU_DEVICES="2", MOCKGPU_VRAM=str(1 << 30))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr


def test_elementwise_from_ir(dev):
    ir = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @add(ptr addrspace(1) %o, ptr addrspace(1) %a, float %s) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %g = call i32 @llvm.amdgcn.workgroup.id.x()
  %b = mul i32 %g, 64
  %i = add i32 %b, %t
  %pa = getelementptr float, ptr addrspace(1) %a, i32 %i
  %x = load float, ptr addrspace(1) %pa
  %r = fmul float %x, %s
  %po = getelementptr float, ptr addrspace(1) %o, i32 %i
  store float %r, ptr addrspace(1) %po
  ret void
}
"""
    k = dev.load(compile_ir(ir))["add"]
    x = np.linspace(-1, 1, 256, dtype=np.float32)
    a, o = dev.alloc(1024).copyin(x), dev.alloc(1024)
    k(o, a, np.float32(2.5), grid=(4,), block=(64,))
    assert np.array_equal(o.copyout(np.empty_like(x)), x * np.float32(2.5))
