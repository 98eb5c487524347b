"""The x86 backend: kernel IR -> x86-64 (SSE4.1, the instructions unicorn's CPU model executes) for the CPU device
(runtime.cpu), with the project's own instruction selection, the register allocator the native gfx1100
backend uses (compiler.backend.regalloc, here over GPR and XMM register files) and its own encoder. Kernels
whose work-items along local x access consecutive elements run four work-items per pass in SSE packed code
(compiler.backend.x86.vector).

exp2, log2 and sin of float32 and float64 are the IR polynomials of compiler.ir.transcendental (x86 has no
instruction for them); float16 and bfloat16 ones compute in float32 and round once, as the frontend's own
16-bit transcendentals do. sqrt is sqrtss/sqrtsd (correctly rounded).
"""

from __future__ import annotations

import functools
import pathlib

from compiler.backend.interface import MachineCodeBackend, register, source_hash
from compiler.dtypes import dtypes
from compiler.ir.linearize import LinearKernel
from compiler.ir.ops import Ops, UOp
from compiler.ir.rewrite import Rules
from compiler.ir.transcendental import rules_for


def _in_float32(u: UOp) -> UOp | None:
    """A float16/bfloat16 transcendental as the float32 one, rounded once."""
    if u.dtype.name not in ("float16", "bfloat16"):
        return None
    return UOp(u.op, dtypes.float32, (u.src[0].cast(dtypes.float32),)).cast(u.dtype)


@register
class X86Backend(MachineCodeBackend):
    """x86-64 code objects for the CPU device (module docstring)."""

    name = "x86"
    target = "x86_64-sse4.1"
    device_kind = "CPU"
    features: frozenset[str] = frozenset()

    # transcendentals as polynomials (module docstring)
    rules = Rules([((Ops.EXP2, Ops.LOG2, Ops.SIN), _in_float32)]) + rules_for("float32", "float64")

    def compile_full(self, kernel: LinearKernel):
        """The compiled kernel: an ELF x86-64 object (runtime.cpu.image) with its code and metadata
        (compiler.backend.x86.target.Compiled)."""
        from compiler.backend.x86.target import compile_kernel
        return compile_kernel(kernel)

    def assembly(self, kernel: LinearKernel) -> str:
        """capstone's disassembly of the kernel, with a resource line."""
        from compiler.backend.x86.target import describe
        from runtime.cpu.disasm import header, listing
        from runtime.cpu.image import read_image
        c = self.compile_full(kernel)
        image = read_image(c.binary)
        return "\n".join([header(image), describe(c), *listing(image)])

    @functools.cached_property
    def _fingerprint(self) -> str:
        here = pathlib.Path(__file__).parent
        root = here.parent.parent.parent
        files = [*here.glob("*.py"), *(here.parent / f for f in ("mir.py", "isel.py", "regalloc.py", "coalesce.py")),
                 here.parent.parent / "ir" / "transcendental.py", here.parent.parent / "ir" / "unroll.py",
                 root / "runtime" / "cpu" / "abi.py", root / "runtime" / "cpu" / "image.py"]
        return f"x86-{self.target}-{source_hash(files)}"

    def fingerprint(self) -> str:
        """Name, target, a hash of the backend's source (read once) and whether it vectorizes."""
        from compiler.backend.x86.vector import enabled
        return self._fingerprint + ("" if enabled() else "-scalar")
