"""A program compiles to the same kernels in every process: the same kernel IR, and for each backend the same
code object bytes, whatever PYTHONHASHSEED (str hashes) and the address of None are.

Found by comparing SIMGPU_DEBUG=2 printouts of one program run twice: the simplifier's term order came from
node hashes that included str and None hashes, so index expressions were summed in another order each run
(results were equal; kernel IR, code objects and kernel-cache keys were not). compiler.ir.ops.stable_key.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# A convolution's forward and backward pass (index arithmetic with divisions, masks, reductions, a pool):
# the kernels whose IR differed run to run. Compiled only, never launched.
CHILD = r"""
import hashlib, sys
from compiler import backend
from compiler.kernel import compile_ast, linear_kernel
from compiler.ir.printer import format_kernel
from compiler.schedule import schedule
from compiler.tensor import Tensor

Tensor.manual_seed(0)
x = Tensor.rand(2, 2, 10, 10, requires_grad=True)
w = Tensor.rand(3, 2, 3, 3, requires_grad=True)
x.conv2d(w, padding=1).relu().max_pool2d(2).sum().backward()
items = [it for it in schedule([x.grad.lazydata.base, w.grad.lazydata.base]) if it.ast is not None]
assert len(items) >= 4, len(items)
for name in sys.argv[1:]:
    be = backend.get(name)
    for it in items:
        print(name, format_kernel(linear_kernel(it.ast, be)))
        print(name, hashlib.sha256(compile_ast(it.ast, be, cached=False).binary).hexdigest())
"""


def _compile_in_process(seed: str, backends: list[str]) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed, SIMGPU_CACHE="0")
    out = subprocess.run([sys.executable, "-c", CHILD, *backends], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


@pytest.mark.parametrize("backends", [["native", "x86"], ["llvm"]], ids=["native+x86", "llvm"])
def test_kernels_are_the_same_in_every_process(backends):
    from compiler import backend
    missing = [b for b in backends if b not in backend.available()]
    if missing:
        pytest.skip(f"backend not available here: {missing}")
    first, second = _compile_in_process("1", backends), _compile_in_process("2", backends)
    assert first.count("kernel ") >= 4 * len(backends)
    assert first == second
