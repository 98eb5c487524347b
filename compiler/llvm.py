"""The LLVM backend: LLVM IR text -> gfx1100 code object, through llvmlite's AMDGPU target.

llvmlite emits a relocatable object (ET_REL); simgpu.isa.codeobject lays it out and applies its
relocations, so no external linker is needed. The IR gets the amdgcn triple and, unless it says
otherwise, code object version 5 (the ABI of ROCm's loaders and of simgpu's runtime).
"""

from __future__ import annotations

import re
from functools import cache

TRIPLE = "amdgcn-amd-amdhsa"
_CO_FLAG = '!{i32 1, !"amdhsa_code_object_version", i32 500}'


class CompileError(ValueError):
    """LLVM rejected the IR; the message is LLVM's."""


@cache
def _target_machine(mcpu: str, opt: int):
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


def compile_ir(ir: str, mcpu: str = "gfx1100", opt: int = 2) -> bytes:
    """Compile LLVM IR text to a gfx1100 code object (ELF relocatable) with llvmlite."""
    import llvmlite.binding as llvm
    try:
        module = llvm.parse_assembly(prepare_ir(ir))
        module.verify()
    except RuntimeError as e:
        raise CompileError(str(e)) from None
    return _target_machine(mcpu, opt).emit_object(module)


def compile_asm(ir: str, mcpu: str = "gfx1100", opt: int = 2) -> str:
    """The assembly text LLVM generates for the IR (for reading, not for loading)."""
    import llvmlite.binding as llvm
    module = llvm.parse_assembly(prepare_ir(ir))
    module.verify()
    return _target_machine(mcpu, opt).emit_assembly(module)
