"""Sample kernels, written once: LLVM IR for gfx1100, each with inputs, a launch shape and a numpy reference.

The demo, the benchmarks, the golden-file generators in tools/ and the tests all take their kernels from
here. `corpus()` is the test corpus (one kernel per kind of code); the workloads are the demo's SAXPY and
MATMUL, the benchmarks' AXPB, ROWSUM and SPIN, and VADD, the kernel of the code-object golden files.
A sample compiles through compiler.llvm.compile_ir (`Sample.code_object()`).
"""

from compiler.samples.corpus import corpus
from compiler.samples.sample import Sample, elementwise
from compiler.samples.workloads import AXPB, MATMUL, ROWSUM, SAXPY, SPIN, VADD

__all__ = ["AXPB", "MATMUL", "ROWSUM", "SAXPY", "SPIN", "VADD", "Sample", "corpus", "elementwise"]
