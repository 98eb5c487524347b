"""Every corpus kernel through the runtime's public API on MockOS, over PM4 and AQL; launch ordering;
argument checks."""

from functools import cache

import numpy as np
import pytest

import runtime
from compiler.llvm import compile_ir
from compiler.samples import corpus
from mockgpu import MockOS

KERNELS = {k.name: k for k in corpus()}


@cache
def _device(queue: str) -> runtime.Device:
    return runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 30))


def run_corpus(dev: runtime.Device, name: str, seed: int = 0):
    """Run a corpus kernel on a device: (inputs, outputs, GPU time)."""
    k = KERNELS[name]
    kern = dev.load(k.code_object())[name]
    args = k.inputs(np.random.default_rng(seed))
    bufs = [dev.alloc(max(a.nbytes, 4)).copyin(a) if isinstance(a, np.ndarray) else a for a in args]
    t = kern(*bufs, grid=k.grid, block=k.block, shared=k.shared)
    after = [b.copyout(np.empty_like(a)) if isinstance(a, np.ndarray) else a for a, b in zip(args, bufs, strict=True)]
    for b in bufs:
        if isinstance(b, runtime.Buffer):
            b.free()
    return args, after, t


def check(name: str, args, after) -> None:
    assert KERNELS[name].mismatch(args, after) is None


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_corpus_kernel_through_runtime(name, queue):
    args, after, t = run_corpus(_device(queue), name)
    check(name, args, after)
    assert t > 0


def test_pm4_and_aql_give_identical_bytes():
    for name in sorted(KERNELS)[:6]:
        a = run_corpus(_device("pm4"), name, seed=3)[1]
        b = run_corpus(_device("aql"), name, seed=3)[1]
        assert [x.tobytes() if isinstance(x, np.ndarray) else x for x in a] == \
            [x.tobytes() if isinstance(x, np.ndarray) else x for x in b], name


INC_IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @inc(ptr addrspace(1) %p, i32 %k) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %a = getelementptr i32, ptr addrspace(1) %p, i32 %tid
  %v = load i32, ptr addrspace(1) %a
  %m = mul i32 %v, 3
  %r = add i32 %m, %k
  store i32 %r, ptr addrspace(1) %a
  ret void
}
"""


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_many_small_launches_run_in_order(queue):
    dev = _device(queue)
    inc = dev.load(compile_ir(INC_IR))["inc"]
    buf = dev.alloc(4 * 32).copyin(np.zeros(32, np.uint32))
    expected = np.zeros(32, np.uint64)
    for i in range(2000):  # x -> 3x + i does not commute: any reordering changes the result
        inc(buf, i, grid=(1,), block=(32,), wait=False)
        expected = (expected * 3 + i) & 0xFFFFFFFF
    dev.synchronize()
    assert np.array_equal(buf.copyout(np.zeros(32, np.uint32)), expected.astype(np.uint32))


def test_argument_checks_name_the_argument():
    dev = _device("pm4")
    inc = dev.load(compile_ir(INC_IR))["inc"]
    buf = dev.alloc(128)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        inc(buf, grid=(1,), block=(32,))
    with pytest.raises(TypeError, match="argument p"):
        inc(5, 1, grid=(1,), block=(32,))
    with pytest.raises(TypeError, match="argument k"):
        inc(buf, buf, grid=(1,), block=(32,))
    with pytest.raises(TypeError, match="argument k"):
        inc(buf, np.int64(1), grid=(1,), block=(32,))
    with pytest.raises(KeyError):
        dev.load(compile_ir(INC_IR))["nope"]
    assert dev.load(compile_ir(INC_IR)).kernels == ["inc"]
