"""Seeded bugs, each found by its sanitizer with the right kernel, lane, PC and allocation, and each silent
(or only a plain fault) without it. Kernels are LLVM IR compiled by llvmlite; the hazard is hand-written."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.llvm import compile_ir
from simgpu.fault import HardwareFault
from simgpu.isa import decode
from simgpu.sanitize import SanitizerFault
from simgpu.testbed import Testbed

HEADER = """target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.amdgcn.s.barrier()
"""


def _kernel(name: str, params: str, body: str, decls: str = "") -> bytes:
    return compile_ir(HEADER + decls + f"""
define amdgpu_kernel void @{name}({params}) {{
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %wg = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %wg, 64
  %i = add i32 %base, %tid
{body}
}}""")


SHIFTED_COPY = _kernel("shifted_copy", "ptr addrspace(1) %out, ptr addrspace(1) %in", """
  %j = add i32 %i, 1
  %p = getelementptr float, ptr addrspace(1) %in, i32 %j
  %x = load float, ptr addrspace(1) %p
  %po = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %x, ptr addrspace(1) %po
  ret void""")


def _instruction_at(tb: Testbed, pc: int) -> str:
    return decode(tb.read(pc, 16), true16=None).mnemonic


def _run(sanitize, code: bytes, name: str, args, grid=(1,), block=(64,), shared: int = 0):
    tb = Testbed(vram_size=1 << 28, sanitize=sanitize)
    k = tb.load(code)[name]
    vas = [a(tb) if callable(a) else a for a in args]
    tb.launch(k, vas, grid, block, shared)
    return tb, k, vas


def test_read_one_past_the_end_inside_the_page_is_an_error():
    data = np.arange(100, dtype=np.float32)  # 400 bytes: the read of element 100 stays in the page
    with pytest.raises(SanitizerFault) as e:
        _run("memcheck", SHIFTED_COPY, "shifted_copy",
             [lambda tb: tb.alloc(400), lambda tb: tb.upload(data)], grid=(2,))
    f = e.value.finding
    assert (f.check, f.what, f.kernel) == ("memcheck", "out-of-bounds read", "shifted_copy")
    assert (f.workgroup, f.wave, f.lane) == ((1, 0, 0), 1, 3)  # item 99 reads element 100
    assert f.instruction.startswith("global_load_b32")
    assert "0 bytes past the end of the 400-byte buffer" in f.message
    assert e.value.kind == "memcheck" and e.value.pc == f.pc


def test_read_one_past_the_end_is_silent_without_the_sanitizer():
    data = np.arange(100, dtype=np.float32)
    tb, _, (out, _) = _run("", SHIFTED_COPY, "shifted_copy",
                           [lambda tb: tb.alloc(400), lambda tb: tb.upload(data)], grid=(2,))
    assert np.array_equal(tb.download(out, np.float32, 99), data[1:])  # and element 99 read a stray 0


def test_use_after_free_names_the_freed_buffer():
    def freed(tb):
        va = tb.upload(np.zeros(64, np.float32))
        tb.free(va)
        return va
    with pytest.raises(SanitizerFault) as e:
        _run("memcheck", SHIFTED_COPY, "shifted_copy", [lambda tb: tb.alloc(1024), freed])
    f = e.value.finding
    assert f.what == "use after free" and f.lane == 0 and "256-byte buffer" in f.message
    with pytest.raises(HardwareFault) as plain:  # without the sanitizer: only a page fault at the address
        _run("", SHIFTED_COPY, "shifted_copy", [lambda tb: tb.alloc(1024), freed])
    assert plain.value.kind == "page_fault" and not isinstance(plain.value, SanitizerFault)


def test_uninitialized_global_read():
    tb, k, (out, src) = _run("initcheck", SHIFTED_COPY, "shifted_copy",
                             [lambda tb: tb.alloc(1024), lambda tb: tb.alloc(1024)], grid=(1,), block=(32,))
    [f] = tb.sanitizer.findings
    assert (f.check, f.what, f.lane, f.address) == ("initcheck", "uninitialized global read", 0, src + 4)
    assert f.lanes == 32 and f.severity == "warning"
    quiet, _, _ = _run("", SHIFTED_COPY, "shifted_copy", [lambda tb: tb.alloc(1024), lambda tb: tb.alloc(1024)])
    assert quiet.sanitizer is None


LDS_DECL = "@lds = internal addrspace(3) global [64 x i32] undef, align 4\n"
UNINIT_LDS = _kernel("uninit_lds", "ptr addrspace(1) %out", """
  %t1 = add i32 %tid, 1
  %l = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %tid
  store i32 %tid, ptr addrspace(3) %l
  call void @llvm.amdgcn.s.barrier()
  %r = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %t1
  %x = load i32, ptr addrspace(3) %r
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %x, ptr addrspace(1) %po
  ret void""", LDS_DECL)


def test_uninitialized_lds_read():
    # 63 items write lds[0..62]; item 62 reads lds[63], which nobody wrote
    tb, _, _ = _run("initcheck", UNINIT_LDS, "uninit_lds", [lambda tb: tb.alloc(256)], block=(63,))
    [f] = tb.sanitizer.findings
    assert (f.what, f.wave, f.lane, f.address) == ("uninitialized LDS read", 1, 30, 63 * 4)


def _lds_sum(barrier: bool) -> bytes:
    sync = "call void @llvm.amdgcn.s.barrier()" if barrier else ""
    return _kernel("lds_sum", "ptr addrspace(1) %out, ptr addrspace(1) %in", f"""
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %i
  %x = load i32, ptr addrspace(1) %p
  %l = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %tid
  store i32 %x, ptr addrspace(3) %l
  {sync}
  %first = icmp eq i32 %tid, 0
  br i1 %first, label %sum, label %done
sum:
  %k = phi i32 [ 0, %entry ], [ %k1, %sum ]
  %acc = phi i32 [ 0, %entry ], [ %acc1, %sum ]
  %lk = getelementptr [64 x i32], ptr addrspace(3) @lds, i32 0, i32 %k
  %v = load volatile i32, ptr addrspace(3) %lk
  %acc1 = add i32 %acc, %v
  %k1 = add i32 %k, 1
  %end = icmp eq i32 %k1, 64
  br i1 %end, label %store, label %sum
store:
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %wg
  store i32 %acc1, ptr addrspace(1) %po
  br label %done
done:
  ret void""", LDS_DECL)


def test_lds_reduction_without_barrier_races():
    data = np.arange(128, dtype=np.int32)
    tb, _, _ = _run("racecheck", _lds_sum(False), "lds_sum",
                    [lambda tb: tb.upload(np.zeros(2, np.int32)), lambda tb: tb.upload(data)], grid=(2,))
    [f] = tb.sanitizer.findings
    assert f.what == "LDS write-read race" and (f.wave, f.lane) == (0, 0)
    assert f.instruction.startswith("ds_load_b32") and f.other["wave"] == 1
    assert f.other["instruction"].startswith("ds_store_b32") and f.count == 32  # once per word of wave 1


def test_lds_reduction_with_barrier_is_clean():
    data = np.arange(128, dtype=np.int32)
    tb, _, (out, _) = _run("all", _lds_sum(True), "lds_sum",
                           [lambda tb: tb.upload(np.zeros(2, np.int32)), lambda tb: tb.upload(data)], grid=(2,))
    assert list(tb.sanitizer.findings) == []
    assert tb.download(out, np.int32, 2).tolist() == [data[:64].sum(), data[64:].sum()]


SAME_ELEMENT = _kernel("same_element", "ptr addrspace(1) %out", """
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %wg, ptr addrspace(1) %po
  ret void""")


def test_two_workgroups_writing_one_element_race():
    tb, _, (out,) = _run("racecheck", SAME_ELEMENT, "same_element", [lambda tb: tb.alloc(256)], grid=(2,),
                         block=(32,))
    [f] = tb.sanitizer.findings
    assert f.what == "global write-write race" and f.workgroup == (1, 0, 0) and f.lane == 0
    assert f.other["workgroup"] == [0, 0, 0] and f.address == out and f.lanes == 32


def test_distinct_elements_do_not_race():
    tb, _, _ = _run("all", SHIFTED_COPY, "shifted_copy",
                    [lambda tb: tb.alloc(4 * 129), lambda tb: tb.upload(np.zeros(129, np.float32))], grid=(2,))
    assert list(tb.sanitizer.findings) == []


TRANS_USE = """
  v_cvt_f32_u32 v0, v0
  v_rcp_f32 v1, v0
  v_add_f32 v2, v1, v1
  {wait}
  v_mul_f32 v3, v1, v0
  s_endpgm
"""


@pytest.mark.parametrize("wait", ["", "s_waitcnt_depctr 0xfff"])
def test_hand_written_trans_use_hazard(wait):
    tb = Testbed(vram_size=1 << 28, sanitize="hazards")
    k = tb.load_asm(TRANS_USE.format(wait=wait), name="hazard", args=0)
    tb.launch(k, [], (1,), (32,))
    found = list(tb.sanitizer.findings)  # v_add right after the rcp; the v_mul too unless depctr waited
    assert [f.instruction.split()[0] for f in found] == ["v_add_f32_e32"] + ([] if wait else ["v_mul_f32_e32"])
    f = found[0]
    assert (f.check, f.what, f.kernel, f.lane) == ("hazards", "transcendental result used too soon", "hazard", None)
    assert f.pc == k.code_address + 8 and "v1 was written by a transcendental" in f.message
    quiet = Testbed(vram_size=1 << 28, sanitize="")
    quiet.launch(quiet.load_asm(TRANS_USE.format(wait=wait), name="hazard", args=0), [], (1,), (32,))
