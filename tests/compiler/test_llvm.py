"""compiler.llvm, the LLVM IR -> code object entry point others use (issue 12, item 6): an unknown target is a
CompileError naming the valid ones (LLVM itself aborts the process), bad IR is a CompileError from both
compile_ir and compile_asm, and optimize=True runs LLVM's IR pipeline."""

import subprocess
import sys

import pytest

from compiler import CompileError
from compiler.llvm import compile_asm, compile_ir

IR = """
define amdgpu_kernel void @k(ptr addrspace(1) %p) {
  %v = load float, ptr addrspace(1) %p
  %a = alloca float, addrspace(5)
  store float %v, ptr addrspace(5) %a
  %w = load float, ptr addrspace(5) %a
  %r = fmul float %w, 2.0
  store float %r, ptr addrspace(1) %p
  ret void
}
"""


@pytest.mark.parametrize("fn", [compile_ir, compile_asm])
def test_unknown_target_is_a_compile_error(fn):
    with pytest.raises(CompileError, match=r"unknown target processor 'gfx9999'.*gfx1100"):
        fn(IR, mcpu="gfx9999")


def test_unknown_target_does_not_abort_the_process():
    code = ("from compiler.llvm import compile_ir\ntry:\n    compile_ir('', mcpu='sm_90')\n"
            "except Exception as e:\n    print(type(e).__name__)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "CompileError"


@pytest.mark.parametrize("fn", [compile_ir, compile_asm])
def test_bad_ir_is_a_compile_error(fn):
    with pytest.raises(CompileError, match="use of undefined value"):
        fn("define amdgpu_kernel void @k() {\n  %x = add i32 %y, 1\n  ret void\n}")


def test_bad_opt_level():
    with pytest.raises(CompileError, match="optimization level"):
        compile_ir(IR, opt=7)


def test_optimize_runs_the_ir_pipeline():
    """Without the IR pipeline the alloca survives to the code generator, which moves it to LDS; with it, SROA
    keeps the value in a register."""
    assert "ds_store_b32" in compile_asm(IR)
    assert "ds_store" not in compile_asm(IR, optimize=True)
    assert compile_ir(IR, optimize=True)[:4] == b"\x7fELF"
