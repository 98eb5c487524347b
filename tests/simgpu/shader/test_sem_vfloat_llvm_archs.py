"""The LLVM IR float corpus (tests/data/kernels/vf_*.ll, test_sem_vfloat_llvm.py) compiled by llvmlite for gfx1201
and gfx942 at test time, as the gfx1100 tests compile it, and checked against the same numpy references: each case of
test_sem_vfloat_llvm runs here with its `run` swapped.

The IR assumes nothing of the wave size (a 256-lane workgroup indexed by workitem.id.x and workgroup.id.x): LLVM
builds gfx1201 as wave32 and gfx942 as wave64 (its only size), and test_the_code_is_the_architectures checks both.

Per architecture, every case runs on the shader engine alone (a Testbed, in both tiers, interpreter and JIT, which must
end in the same state: tests/support/tiers.py) and through the whole stack --
mockgpu's amdkfd, the runtime's Device and Module -- over PM4 and over AQL.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from compiler.llvm import compile_ir
from simgpu.isa.codeobject import read_code_object
from tests.simgpu.shader import test_corpus_opencl_gfx1201 as stack
from tests.simgpu.shader import test_sem_vfloat_llvm as vf
from tests.support import tiers

ARCHES = ("gfx1201", "gfx942", "gfx950")
WAVE = {"gfx1201": 32, "gfx942": 64, "gfx950": 64}
CASES = sorted(n for n in dir(vf) if n.startswith("test_"))
KERNELS = sorted(p.stem for p in vf.KERNELS.glob("vf_*.ll"))
GROUP = 256  # the IR's workgroup size (each kernel multiplies workgroup.id.x by it)


@cache
def code_object(name: str, arch: str) -> bytes:
    return compile_ir((vf.KERNELS / f"{name}.ll").read_text(), mcpu=arch)


def on_engine(arch: str):
    """vf.run's signature on Testbeds of `arch`: the interpreter's result, the JIT tier's ending the same."""
    def run(_tb, name, inputs, k, out_dtype):
        beds = tiers.pair(arch=arch)
        results = []
        for tb in beds:
            kern = tb.load(code_object(name, arch))[name]
            out = tb.alloc(np.dtype(out_dtype).itemsize * k * vf.N)
            tb.launch(kern, [*(tb.upload(x) for x in inputs), out], (vf.N // GROUP,), (GROUP,))
            results.append(tb.download(out, out_dtype, k * vf.N).reshape(vf.N, k))
        tiers.assert_same(*beds)
        return results[0]
    return run


def on_stack(arch: str, queue: str):
    """vf.run's signature on a simulated GPU of `arch` through the runtime's `queue` ("pm4" or "aql")."""
    def run(_tb, name, inputs, k, out_dtype):
        args = [*inputs, np.zeros(k * vf.N, out_dtype)]
        out, _gpu, _buffers = stack.launch(queue, "interpreter", name, args, (vf.N // GROUP,), (GROUP,), arch,
                                           code_object(name, arch))
        return out[-1].reshape(vf.N, k)
    return run


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("arch", ARCHES)
def test_llvm_ir_kernel_on_the_engine(arch: str, case: str, monkeypatch):
    monkeypatch.setattr(vf, "run", on_engine(arch))
    getattr(vf, case)(None)


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("arch", ARCHES)
def test_llvm_ir_kernel_through_the_runtime(arch: str, case: str, queue: str, monkeypatch):
    monkeypatch.setattr(vf, "run", on_stack(arch, queue))
    getattr(vf, case)(None)


@pytest.mark.parametrize("arch", ARCHES)
def test_the_code_is_the_architectures(arch: str):
    """Each kernel compiles to a code object of `arch` with its wave size, and every kernel has a case."""
    for name in KERNELS:
        co = read_code_object(code_object(name, arch))
        assert co.processor == arch
        assert co.kernels[name].descriptor.wavefront_size == WAVE[arch]
    assert {f"vf_{c}" for c in ("f32_math", "f16", "f64", "trans", "cmp_select", "convert")} == set(KERNELS)
