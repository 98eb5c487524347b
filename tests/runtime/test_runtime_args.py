"""Launch arguments and shapes are checked before anything reaches the GPU (issue 12, items 3-5): scalar
arguments convert exactly to the type the metadata names (or raise TypeError naming the argument), grid,
block and LDS are checked against the device's limits (ValueError naming the limit), and a code object for
another processor is refused at load()."""

import numpy as np
import pytest

import runtime
from compiler.llvm import compile_ir
from mockgpu import MockOS
from runtime.kernel_args import convert
from simgpu.isa.codeobject import CodeObjectError
from tests import DATA


@pytest.fixture(scope="module")
def dev():
    return runtime.Device("AMD:0", os=MockOS(devices=1, vram_size=1 << 28))


@pytest.fixture(scope="module")
def saxpy(dev):
    # clang-19's OpenCL saxpy(global float *y, global const float *x, float a, int n): type names in metadata.
    return dev.load((DATA / "opencl" / "corpus.so").read_bytes())["saxpy"]


def _saxpy(dev, saxpy, a, n=64):
    x, y = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    by, bx = dev.alloc(256).copyin(y), dev.alloc(256).copyin(x)
    saxpy(by, bx, a, n, grid=1, block=64)
    return by.copyout(np.empty(64, np.float32)), x, y


def test_python_int_for_a_float_argument_is_converted_not_reinterpreted(dev, saxpy):
    out, x, y = _saxpy(dev, saxpy, 2)  # used to pass the bits 0x00000002 (2.8e-45)
    assert np.array_equal(out, np.float32(2) * x + y)


def test_integral_float_for_an_int_argument_is_converted(dev, saxpy):
    out, x, y = _saxpy(dev, saxpy, np.float32(3), n=32.0)  # used to pass the bits of 32.0f as n
    assert np.array_equal(out[:32], np.float32(3) * x[:32] + y[:32]) and np.array_equal(out[32:], y[32:])


@pytest.mark.parametrize("a, n, says", [(1.0, 2.5, r"argument #3 is int; 2\.5 is not an integer"),
                                        (1e39, 4, r"argument #2 is float; 1e\+39 overflows float"),
                                        (1.0, 1 << 31, r"argument #3 is int; 2147483648 is outside"),
                                        ("2", 4, r"argument #2 is a 4-byte value, not str")])
def test_unrepresentable_scalars_raise_type_error_naming_the_argument(dev, saxpy, a, n, says):
    b = dev.alloc(256)
    with pytest.raises(TypeError, match=says):
        saxpy(b, b, a, n, grid=1, block=64)


@pytest.mark.parametrize("type_name, size, value, expected", [
    ("uint", 4, 7, np.uint32(7)), ("const uint", 4, 7.0, np.uint32(7)),
    ("ulong", 8, (1 << 64) - 1, np.uint64((1 << 64) - 1)),
    ("half", 2, 2048, np.float16(2048)), ("double", 8, 1, np.float64(1.0)), ("bool", 1, True, np.bool_(True)),
    ("char", 1, -128, np.int8(-128)), ("float", 4, np.float64(0.1), np.float32(0.1))])
def test_exact_conversions_by_type_name(type_name, size, value, expected):
    got = convert("k", "a", {".type_name": type_name, ".size": size, ".value_kind": "by_value"}, value)
    assert type(got) is type(expected) and got == expected


@pytest.mark.parametrize("type_name, size, value", [("uint", 4, -1), ("half", 2, 2049), ("float", 4, (1 << 24) + 1),
                                                    ("uchar", 1, 256), ("bool", 1, 2), ("int", 4, float("nan"))])
def test_inexact_conversions_by_type_name_raise(type_name, size, value):
    with pytest.raises(TypeError, match=f"argument a is {type_name}"):
        convert("k", "a", {".type_name": type_name, ".size": size, ".value_kind": "by_value"}, value)


def test_without_a_type_name_only_the_size_is_checked():
    meta = {".size": 4, ".value_kind": "by_value"}  # LLVM IR without !kernel_arg_type
    assert convert("k", "a", meta, 2) == 2 and convert("k", "a", meta, 2.5) == 2.5
    with pytest.raises(TypeError, match="does not fit in 4 bytes"):
        convert("k", "a", meta, 1 << 32)


INC = """
define amdgpu_kernel void @inc(ptr addrspace(1) %p) {
  %v = load i32, ptr addrspace(1) %p
  %r = add i32 %v, 1
  store i32 %r, ptr addrspace(1) %p
  ret void
}
"""


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("grid, block, shared, error, says", [
    ((1 << 32, 1, 1), 1, 0, ValueError, r"4294967296 work-items along x; at most 4294967295"),
    ((1 << 31, 1, 1), (2, 1, 1), 0, ValueError, r"along x; at most"),
    (1, (2048,), 0, ValueError, r"2048 work-items; a workgroup holds at most 1024"),
    (1, (32, 32, 2), 0, ValueError, r"2048 work-items"),
    (1, 32, 1 << 20, ValueError, r"1048576 dynamic bytes exceeds the 65536 bytes"),
    (1, 32, -5, ValueError, r"dynamic LDS \(shared=-5\) must be a non-negative int"),
    ((0, 1, 1), 32, 0, ValueError, r"must be positive"),
    ("4", 32, 0, TypeError, r"grid must be an int or up to three ints"),
    ((1, 1, 1, 1), 32, 0, TypeError, r"grid must be an int or up to three ints"),
    (1, 2.0, 0, TypeError, r"block must be an int or up to three ints")])
def test_launch_shapes_are_checked_against_the_device_limits(queue, grid, block, shared, error, says):
    d = runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 28))
    inc, buf = d.load(compile_ir(INC))["inc"], d.alloc(4).copyin(np.zeros(1, np.uint32))
    with pytest.raises(error, match=says):
        inc(buf, grid=grid, block=block, shared=shared)
    inc(buf, grid=4, block=32)  # ints for 1-D shapes; the queue is untouched by the refused launch
    assert buf.copyout(np.empty(1, np.uint32))[0] > 0


@pytest.mark.parametrize("mcpu", ["gfx90a", "gfx1030", "gfx1200"])
def test_code_object_for_another_gpu_is_refused_at_load(dev, mcpu):
    with pytest.raises(CodeObjectError, match=f"built for {mcpu} .*AMD:0 is a gfx1100"):
        dev.load(compile_ir(INC, mcpu=mcpu))
