"""compiler: array programs -> gfx1100 kernels, run through runtime.Device.

    from compiler import Tensor, dtypes
    x = Tensor([[1.0, 2.0], [3.0, 4.0]])
    print((x @ x.T).softmax().numpy())

`Tensor` builds a lazy graph; `realize()` / `numpy()` hand it to the scheduler (compiler.schedule), which cuts
it into kernels; each kernel is lowered to the kernel IR (compiler.ir), simplified, linearized, proven in
bounds with z3 (SIMGPU_CHECK_OOB=1) and compiled by a backend (compiler.backend: the native gfx1100 backend,
the project's own instruction selection and register allocation, or the LLVM backend via llvmlite; either
makes a gfx1100 code object), cached in memory and on disk (compiler.cache), and launched on
`runtime.Device`. docs/compiler.md describes the pipeline.

May import: simgpu.isa (targets, code objects); runtime (only to execute what it compiled).
"""

from compiler import nn  # `from compiler import Tensor, nn`, as from tinygrad
from compiler.dtypes import DType, dtypes
from compiler.errors import CompileError
from compiler.tensor import Tensor, no_grad

__all__ = ["CompileError", "DType", "Tensor", "dtypes", "nn", "no_grad"]
