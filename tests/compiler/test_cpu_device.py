"""The CPU device's sandbox (runtime.cpu) with kernels from the x86 backend and hand-written x86-64: bad kernels
are contained (an out-of-bounds store, a jump into data, an endless loop, a runaway compiled loop, a touch of a
buffer that is not an argument), each reported with the kernel, the faulting address, capstone's text of the
instruction and the registers, and the next kernel runs; the code object reads back and bad ones are clear
errors; launches are deterministic."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.backend.x86.backend import X86Backend
from compiler.backend.x86.isa import Imm, Inst, Label, Mem, gpr
from compiler.backend.x86.target import raw_kernel
from compiler.dtypes import PtrDType, dtypes
from compiler.ir.linearize import linearize
from compiler.ir.lower import Geometry
from compiler.ir.ops import Ops, UOp
from runtime.cpu import CPUDevice, CPUFault, ImageError, abi, read_image
from runtime.cpu.disasm import listing

F32 = dtypes.float32


def _param(i: int, n: int, dt=F32) -> UOp:
    return UOp(Ops.PARAM, PtrDType(dt, "global", n), (), i)


def _c(v, dt=dtypes.int32) -> UOp:
    return UOp.const(dt, v)


def _compile(sink: UOp, grid=(1, 1, 1), block=(1, 1, 1)) -> bytes:
    return X86Backend().compile(linearize(sink, Geometry(sink.arg, grid, block)))


def _good_kernel() -> bytes:
    """data0[i] = data1[i] * 2 for 16 work-items."""
    lid = UOp(Ops.SPECIAL, dtypes.int32, (), ("local", 0, 16))
    v = UOp(Ops.LOAD, F32, (_param(1, 16), lid)) * _c(2.0, F32)
    return _compile(UOp(Ops.SINK, dtypes.int32, (UOp(Ops.STORE, dtypes.int32, (_param(0, 16), lid, v)),), "double"),
                    block=(16, 1, 1))


def _check_next_kernel_runs(dev: CPUDevice) -> None:
    out, src = dev.alloc(64), dev.alloc(64)
    src.copyin(np.arange(16, dtype=np.float32))
    dev.launch(dev.load(_good_kernel()), [out, src])
    assert out.copyout(np.empty(16, np.float32)).tolist() == [2.0 * i for i in range(16)]


def _report_ok(f: CPUFault, name: str, text: str) -> None:
    assert f"kernel {name} stopped" in f.report
    assert text in f.instruction and text in f.report, f.report
    for reg in ("rax=", "rsp=", "rip=", "eflags=", "xmm15="):
        assert reg in f.report
    assert f.registers["rip"] == f.pc and f.device_usable


def test_out_of_bounds_store_stops_at_the_first_byte_past_the_buffer():
    dev = CPUDevice()
    p = _param(0, 16)
    store = UOp(Ops.STORE, dtypes.int32, (p, _c(16), _c(1.0, F32)))  # one past the end: no proof, compiled as is
    buf = dev.alloc(64)
    with pytest.raises(CPUFault) as e:
        dev.launch(dev.load(_compile(UOp(Ops.SINK, dtypes.int32, (store,), "oob_store"))), [buf])
    f = e.value
    _report_ok(f, "oob_store", "movss dword ptr [")
    assert f.kind == "page_fault" and f.address == buf.address + 64
    assert "write of unmapped memory" in f.report and "0 bytes past the end of data0 (64 bytes" in f.report
    _check_next_kernel_runs(dev)


def test_out_of_bounds_store_from_packed_code_stops_at_the_first_byte_past_the_buffer():
    """Eight work-items (two packed passes) store to a buffer of six floats: the second movups crosses its end;
    the elements before the end are written, as the scalar code writes them before its fault."""
    dev = CPUDevice()
    lid = UOp(Ops.SPECIAL, dtypes.int32, (), ("local", 0, 8))
    store = UOp(Ops.STORE, dtypes.int32, (_param(0, 6), lid, _c(1.0, F32)))
    buf = dev.alloc(24)
    code = _compile(UOp(Ops.SINK, dtypes.int32, (store,), "oob_packed"), block=(8, 1, 1))
    assert read_image(code).meta["lanes"] == 4
    with pytest.raises(CPUFault) as e:
        dev.launch(dev.load(code), [buf])
    f = e.value
    _report_ok(f, "oob_packed", "movups xmmword ptr [")
    assert f.kind == "page_fault" and f.address == buf.address + 24
    assert "0 bytes past the end of data0 (24 bytes" in f.report
    assert buf.copyout(np.empty(6, np.float32)).tolist() == [1.0] * 6
    _check_next_kernel_runs(dev)


def test_jump_into_data_stops_at_the_buffer_it_jumped_to():
    dev = CPUDevice()
    buf = dev.alloc(32)
    buf.copyin(np.full(32, 0x90, np.uint8))  # nops: executable bytes, but on a page that is not code
    code = raw_kernel("jump_into_data", [Inst("mov", (gpr(0), Mem(8, None, None, 1, abi.KERNARG))),
                                         Inst("jmp", (gpr(0),))], params=1)
    with pytest.raises(CPUFault) as e:
        dev.launch(dev.load(code), [buf])
    f = e.value
    _report_ok(f, "jump_into_data", "nop")
    assert f.kind == "no_execute" and f.address == f.pc == buf.address
    assert "fetch of protected memory" in f.report and "inside data0" in f.report
    assert "(outside the kernel's code)" in f.report
    _check_next_kernel_runs(dev)


def test_endless_loop_ends_when_the_instruction_budget_does():
    dev = CPUDevice(budget=100_000)
    code = raw_kernel("spin", ["top", Inst("add", (gpr(3, 4), Imm(1))), Inst("jmp", (Label("top"),))], params=0)
    prog = dev.load(code)
    with pytest.raises(CPUFault) as e:
        dev.launch(prog, [])
    f = e.value
    assert f.kind == "budget" and "instruction budget of 100000 exhausted in the loop" in f.report
    assert f.address == prog.address + 0xE and "jmp 0x" in f.report  # the loop's branch, after its check
    _report_ok(f, "spin", "ud2")
    assert f.registers["rbx"] == 100_000 // 4 + 1  # iterations the budget allowed (4 instructions each)
    _check_next_kernel_runs(dev)


def test_runaway_compiled_loop_is_stopped_by_its_budget_check():
    p = _param(0, 1)
    outer = UOp(Ops.RANGE, dtypes.int32, (_c(1 << 30),), 0)
    inner = UOp(Ops.RANGE, dtypes.int32, (_c(1 << 30), outer), 1)
    store = UOp(Ops.STORE, dtypes.int32, (p, _c(0), inner.cast(F32)))
    end = UOp(Ops.ENDRANGE, dtypes.int32, (outer, UOp(Ops.ENDRANGE, dtypes.int32, (inner, store))))
    dev = CPUDevice(budget=1_000_000)
    with pytest.raises(CPUFault) as e:
        dev.launch(dev.load(_compile(UOp(Ops.SINK, dtypes.int32, (end,), "runaway"))), [dev.alloc(4)])
    assert e.value.kind == "budget" and "kernel runaway stopped" in e.value.report
    _check_next_kernel_runs(dev)


def test_a_buffer_that_is_not_an_argument_is_out_of_reach():
    dev = CPUDevice()
    other, mine = dev.alloc(64), dev.alloc(64)
    code = raw_kernel("peek", [Inst("movabs", (gpr(0), Imm(other.address))),
                               Inst("mov", (gpr(1, 4), Mem(4, gpr(0), None, 1, 0))), Inst("ret")], params=1)
    with pytest.raises(CPUFault) as e:
        dev.launch(dev.load(code), [mine])
    assert e.value.kind == "page_fault" and e.value.address == other.address
    assert "read of protected memory" in e.value.report and "not an argument of this kernel" in e.value.report
    _check_next_kernel_runs(dev)


def test_a_divide_error_and_an_invalid_instruction_are_reported():
    dev = CPUDevice()
    div = raw_kernel("divide", [Inst("xor", (gpr(1, 4), gpr(1, 4))), Inst("div", (gpr(1, 4),)), Inst("ret")], 0)
    with pytest.raises(CPUFault) as e:
        dev.launch(dev.load(div), [])
    assert e.value.kind == "exception" and "div ecx" in e.value.report
    bad = raw_kernel("undefined", [Inst("ud2")], 0)
    with pytest.raises(CPUFault) as e:
        dev.launch(dev.load(bad), [])
    assert e.value.kind == "illegal_instruction" and "ud2" in e.value.report
    _check_next_kernel_runs(dev)


def test_launches_are_deterministic_and_each_buffer_ends_at_a_page_end():
    dev = CPUDevice()
    prog = dev.load(_good_kernel())
    outs = []
    for _ in range(2):
        out, src = dev.alloc(64), dev.alloc(64)
        assert (out.address + 64) % abi.PAGE == 0
        src.copyin(np.linspace(-1, 1, 16, dtype=np.float32))
        stats = dev.launch(prog, [out, src])
        outs.append(out.copyout(np.empty(64, np.uint8)).tobytes())
        assert stats.charged > 0
    assert outs[0] == outs[1]


def test_image_reads_back_and_lists_with_capstone():
    image = read_image(_good_kernel())
    assert image.name == "double" and image.meta["params"] == 2 and image.meta["block"] == [16, 1, 1]
    text = "\n".join(listing(image))
    assert "<double>:" in text and "movups xmm" in text and "budget trap of the loop" in text


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.data())
def test_damaged_images_are_image_errors(data):
    good = bytearray(_GOOD)
    kind = data.draw(st.sampled_from(["truncate", "flip", "garbage"]))
    if kind == "truncate":
        bad = bytes(good[:data.draw(st.integers(0, len(good) - 1))])
    elif kind == "flip":
        for _ in range(data.draw(st.integers(1, 8))):
            i = data.draw(st.integers(0, len(good) - 1))
            good[i] ^= 1 << data.draw(st.integers(0, 7))
        bad = bytes(good)
    else:
        bad = data.draw(st.binary(max_size=256))
    try:
        image = read_image(bad)
    except ImageError:
        return
    assert isinstance(image.code, bytes)  # a flip that left a valid object: it still reads as one


_GOOD = _good_kernel()


def test_simgpu_disasm_lists_cached_cpu_kernels_as_llvm_objdump_decodes_them(tmp_path, capsys, monkeypatch):
    """`simgpu disasm` accepts a CPU code object and the kernel cache's entry of one; every instruction line
    has the address and mnemonic llvm-objdump-19 finds in the same object."""
    import re
    import subprocess

    from compiler import Tensor, cache
    from compiler import backend as backends
    from compiler import device as devices
    from tests.support.llvm import llvm_tool_or_skip
    from wiring.cli import main

    monkeypatch.setenv("SIMGPU_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SIMGPU_CACHE", "1")  # the test reads the cache's entries: on whatever the session says
    cache.clear_memory()
    old = devices.DEFAULT
    devices.DEFAULT = "CPU"
    try:
        with backends.using("x86"):
            (Tensor(np.arange(40, dtype=np.float32).reshape(5, 8)).sum(1) * 3).numpy()
    finally:
        devices.DEFAULT = old
    entries = sorted((tmp_path / "kernels").glob("x86-*/*.msgpack"))
    assert entries
    assert main(["disasm", str(entries[0])]) == 0
    ours = capsys.readouterr().out
    assert "elf64-x86-64 (simgpu CPU kernel)" in ours and "budget trap" in ours
    import msgpack
    obj = tmp_path / "kernel.o"
    obj.write_bytes(msgpack.unpackb(entries[0].read_bytes())["binary"])
    assert main(["disasm", str(obj)]) == 0
    assert capsys.readouterr().out.split("\n", 3)[3] == ours.split("\n", 3)[3]  # same listing after the file line
    objdump = llvm_tool_or_skip("llvm-objdump")
    ref = subprocess.run([objdump, "-d", "--x86-asm-syntax=intel", str(obj)], capture_output=True, text=True).stdout
    pat = re.compile(r"^\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*([a-z0-9]+)", re.M)
    assert pat.findall(ours) == pat.findall(ref) != []
    assert main(["disasm", str(tmp_path / "missing.o")]) == 1


def test_debug_level_3_prints_each_kernel_as_capstone_disassembles_it(tmp_path, capfd, monkeypatch):
    """SIMGPU_DEBUG=3 prints every compiled CPU kernel's code: each instruction capstone decodes in the cached
    code object appears, in order, as `address: bytes  mnemonic operands`."""
    import capstone
    import msgpack

    from compiler import Tensor, cache, kernel
    from compiler import backend as backends

    monkeypatch.setenv("SIMGPU_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SIMGPU_CACHE", "1")  # the test reads the cache's entries: on whatever the session says
    monkeypatch.setenv("SIMGPU_DEBUG", "3")
    cache.clear_memory()
    kernel._by_ast.clear()  # nor programs an earlier test of this process compiled from the same ASTs (x86 reduces)
    x = np.linspace(-3, 3, 1024, dtype=np.float32)
    with backends.using("x86"):
        got = ((Tensor(x, device="CPU") * 2).relu() + Tensor(x[:5], device="CPU").sum()).numpy()
    assert np.allclose(got, np.maximum(x * 2, 0) + x[:5].sum())
    printed = capfd.readouterr().err
    entries = sorted((tmp_path / "kernels").glob("x86-*/*.msgpack"))
    assert len(entries) >= 2
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    for entry in entries:
        image = read_image(msgpack.unpackb(entry.read_bytes())["binary"])
        assert f"<{image.name}>:" in printed
        at = printed.index(f"<{image.name}>:")
        insns = list(md.disasm(image.code, 0))
        assert sum(i.size for i in insns) == len(image.code)  # capstone decodes the whole kernel
        for i in insns:
            line = f"{i.address:8x}: {i.bytes.hex(' '):<30} {i.mnemonic} {i.op_str}".rstrip()
            at = printed.index(line, at)  # in order, after the previous one


def test_buffers_of_collected_cpu_tensors_are_freed_at_the_next_cpu_operation():
    """compiler.device frees the buffers of garbage-collected tensors at the next device operation; CPU-only
    work reaches that point too (no AMD operation needed)."""
    import gc

    from compiler import Tensor
    from compiler import backend as backends
    from compiler import device as devices
    with backends.using("x86"):
        x = Tensor(np.arange(8, dtype=np.float32), device="CPU").realize()
        cycle = [(x + 1).realize()]
        cycle.append(cycle)  # only the cycle collector frees it
        buf = cycle[0].lazydata.base.buffer
        del cycle
        gc.collect()
        assert buf in devices._UNREFERENCED or buf.released
        assert (x * 2).tolist() == [2.0 * i for i in range(8)]
    assert buf.released
