"""The LLVM backend: kernel IR -> LLVM IR text (compiler.backend.llvmir) -> llvmlite -> an AMDGPU code object for
gfx1100 or gfx1201 (the IR is the same for both; LLVM selects each target's instructions)."""

from __future__ import annotations

import functools
import pathlib

from compiler import llvm as llvm_compiler
from compiler.backend.interface import Backend, register, source_hash
from compiler.ir.linearize import LinearKernel
from compiler.ir.transcendental import LLVM_RULES


@register
class LLVMBackend(Backend):
    """gfx1100 and gfx1201 code objects through llvmlite's AMDGPU target."""

    name = "llvm"
    target = "gfx1100"
    targets = ("gfx1100", "gfx1201")
    device_kind = "AMD"
    preference = 1
    requires = ("llvmlite",)

    # f64 exp2/log2/sin as polynomials (LLVM's AMDGPU target has no lowering for them: it aborts), and f32 sin with
    # an exact range reduction (compiler.ir.transcendental)
    rules = LLVM_RULES

    @property
    def features(self) -> frozenset[str]:
        """WMMA on gfx1100 only: the renderer's intrinsics and register layout are gfx11's (gfx12's WMMA operands
        are laid out otherwise: simgpu.shader.matrix.gfx12)."""
        return frozenset({"wmma"}) if self.target == "gfx1100" else frozenset()

    def source(self, kernel: LinearKernel) -> str:
        """The LLVM IR."""
        from compiler.backend.llvmir import render
        return render(kernel)

    def compile(self, kernel: LinearKernel) -> bytes:
        """An ET_REL code object (the runtime's loader lays it out)."""
        return llvm_compiler.compile_ir(self.source(kernel), mcpu=self.target, optimize=True)

    def assembly(self, kernel: LinearKernel) -> str:
        """LLVM's assembly for the target."""
        return llvm_compiler.compile_asm(self.source(kernel), mcpu=self.target, optimize=True)

    @functools.cached_property
    def _fingerprint(self) -> str:
        import llvmlite
        here = pathlib.Path(__file__).parent
        files = [here / "llvmir.py", here / "llvm.py", here.parent / "llvm.py",
                 here.parent / "ir" / "transcendental.py"]
        return f"llvm-{self.target}-{llvmlite.__version__}-{source_hash(files)}"

    def fingerprint(self) -> str:
        """Name, target, llvmlite's version and a hash of the renderer's source (read once)."""
        return self._fingerprint
