"""The native backend: kernel IR -> gfx1100 machine code with the project's own instruction selection, register
allocation and assembler (compiler.backend.gfx11), no LLVM at run time.

It uses the same IR rules as the LLVM backend (float64 exp2/log2/sin and float32 sin as polynomials,
compiler.ir.transcendental), so both backends compute the same expansions; everything else is selected from
the rules in compiler.backend.gfx11.
"""

from __future__ import annotations

import functools
import pathlib

from compiler.backend.interface import MachineCodeBackend, register, source_hash
from compiler.ir.linearize import LinearKernel
from compiler.ir.transcendental import LLVM_RULES


@register
class NativeBackend(MachineCodeBackend):
    """gfx1100 code objects from compiler.backend.gfx11."""

    name = "native"
    target = "gfx1100"
    targets = ("gfx1100",)  # (other AMD targets: the LLVM backend; compiler.backend.for_device)
    device_kind = "AMD"
    features = frozenset({"wmma"})
    preference = 0

    rules = LLVM_RULES  # the transcendental expansions both GPU backends share (module docstring)

    def compile_full(self, kernel: LinearKernel):
        """The compiled kernel: an ET_DYN code object (v5) with its assembly and resources
        (compiler.backend.gfx11.target.Compiled)."""
        from compiler.backend.gfx11.target import compile_kernel
        return compile_kernel(kernel)

    def assembly(self, kernel: LinearKernel) -> str:
        """gfx1100 assembly with a resource line (registers, scratch, LDS, spills, occupancy)."""
        return self.compile_full(kernel).assembly

    @functools.cached_property
    def _fingerprint(self) -> str:
        here = pathlib.Path(__file__).parent
        files = [here / "native.py", here / "mir.py", here / "isel.py", here / "regalloc.py", here / "coalesce.py",
                 here / "dce.py", *(here / "gfx11").glob("*.py"),
                 here.parent / "ir" / "transcendental.py", here.parent / "ir" / "unroll.py"]
        return f"native-{self.target}-{source_hash(files)}"

    def fingerprint(self) -> str:
        """Name, target and a hash of the backend's source (read once)."""
        return self._fingerprint
