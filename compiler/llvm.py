"""The LLVM backend: LLVM IR text -> gfx1100 code object, through llvmlite's AMDGPU target.

llvmlite emits a relocatable object (ET_REL); simgpu.isa.codeobject lays it out and applies its
relocations, so no external linker is needed. The IR gets the amdgcn triple and, unless it says
otherwise, code object version 5 (the ABI of ROCm's loaders and of simgpu's runtime).
"""

from __future__ import annotations

import re
from functools import cache

from compiler.errors import CompileError
from simgpu.isa.codeobject import TARGETS

TRIPLE = "amdgcn-amd-amdhsa"
_CO_FLAG = '!{i32 1, !"amdhsa_code_object_version", i32 500}'


def check_target(mcpu: str) -> None:
    """CompileError unless mcpu is a processor simgpu knows (simgpu.isa.codeobject.TARGETS): LLVM itself
    only warns about an unknown processor and then aborts the process while emitting code."""
    if mcpu not in TARGETS:
        raise CompileError(f"unknown target processor {mcpu!r}; valid targets: {', '.join(sorted(TARGETS))}")


@cache
def _target_machine(mcpu: str, opt: int):
    check_target(mcpu)
    if opt not in (0, 1, 2, 3):
        raise CompileError(f"optimization level {opt!r} is not 0, 1, 2 or 3")
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=mcpu, opt=opt, reloc="pic")


def prepare_ir(ir: str) -> str:
    """IR with the amdgcn target triple and a code-object-version module flag (v5) when missing."""
    if "target triple" not in ir:
        ir = f'target triple = "{TRIPLE}"\n' + ir
    if "amdhsa_code_object_version" not in ir:
        if "!llvm.module.flags" in ir:
            raise CompileError("IR has module flags but no amdhsa_code_object_version; add it")
        ids = [int(x) for x in re.findall(r"^!(\d+)\s*=", ir, re.M)]
        n = max(ids, default=-1) + 1
        ir += f"\n!llvm.module.flags = !{{!{n}}}\n!{n} = {_CO_FLAG}\n"
    return ir


def _parse(ir: str):
    import llvmlite.binding as llvm
    try:
        module = llvm.parse_assembly(prepare_ir(ir))
        module.verify()
    except RuntimeError as e:
        raise CompileError(str(e)) from None
    return module


def _optimize(module, tm, opt: int) -> None:
    """LLVM's middle-end pipeline at level opt (SROA, instcombine, LICM, unrolling...): emit_object alone
    runs only the code generator's passes."""
    import llvmlite.binding as llvm
    pto = llvm.create_pipeline_tuning_options(speed_level=opt)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)


def compile_ir(ir: str, mcpu: str = "gfx1100", opt: int = 2, *, optimize: bool = False) -> bytes:
    """Compile LLVM IR text to a code object (ELF relocatable) for mcpu with llvmlite; CompileError on bad IR
    or an unknown target. optimize=True also runs LLVM's IR pipeline at level opt first."""
    tm = _target_machine(mcpu, opt)
    module = _parse(ir)
    if optimize:
        _optimize(module, tm, opt)
    return tm.emit_object(module)


def compile_asm(ir: str, mcpu: str = "gfx1100", opt: int = 2, *, optimize: bool = False) -> str:
    """The assembly text LLVM generates for the IR (for reading, not for loading); errors as compile_ir."""
    tm = _target_machine(mcpu, opt)
    module = _parse(ir)
    if optimize:
        _optimize(module, tm, opt)
    return tm.emit_assembly(module)
