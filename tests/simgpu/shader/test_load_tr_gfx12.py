"""gfx1201 transposing loads (simgpu/shader/memory/gfx12_tr.py): clang-19's __builtin_amdgcn_global_load_tr_b64 /
_b128 for gfx1201 (tests/data/opencl/load_tr.cl -> load_tr_gfx1201.so, load_tr_w64_gfx1201.so, `python -m
tools.gen_opencl_corpus --arch gfx1201`), run through mockgpu's amdkfd and the runtime over PM4 and AQL, in the
interpreter and the JIT tier (the same GPU state at the end), checked against a numpy reference of the rule: in each
group of 8 lanes, lane 8g + j receives element j of the 8-element rows its group's lanes read, row e from lane 8g + e.

The wmma_b_from_tr case is the use the instruction exists for: a row-major 16x16 f16 B loaded straight into the RDNA4
WMMA B operand (the lanes' row addresses from AMD's matrix calculator equations for B[k][j]), multiplied by
v_wmma_f32_16x16x16_f16 and compared with A @ B.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from runtime.fault import GPUFault
from simgpu.fault import HardwareFault
from simgpu.testbed import Testbed
from tests import DATA
from tests.simgpu.shader.test_corpus_opencl_gfx1201 import launch, launcher

ARCH = "gfx1201"
CODE_OBJECT = DATA / "opencl" / "load_tr_gfx1201.so"
CODE_OBJECT_W64 = DATA / "opencl" / "load_tr_w64_gfx1201.so"
RNG = np.random.default_rng(12)


def transposed(rows: np.ndarray) -> np.ndarray:
    """What each lane receives ([32, 8] elements) from the rows the lanes read ([32, 8])."""
    out = np.empty_like(rows)
    for lane in range(32):
        g, j = divmod(lane, 8)
        out[lane] = [rows[8 * g + e, j] for e in range(8)]
    return out


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("kernel, dtype", [("tr_b64", np.uint8), ("tr_b128_i16", np.uint16),
                                           ("tr_b128_f16", np.uint16)])
def test_each_group_of_8_lanes_receives_its_rows_transposed(kernel, dtype, queue):
    src = RNG.integers(0, np.iinfo(dtype).max + 1, (64, 8), dtype=np.uint64).astype(dtype)  # 64 rows of 8 elements
    offset = RNG.permutation(64)[:32].astype(np.int32)  # any rows, in any order, one a lane
    d = np.zeros((32, 8), dtype)
    out, _ = launcher(queue, code_object=CODE_OBJECT)(kernel, [d, src, offset], (1,), (32,))
    assert np.array_equal(out[0], transposed(src[offset]))


def _b_offsets() -> np.ndarray:
    """Per lane, the row (in 8-element units) of a row-major 16x16 B it addresses so that the transposed load leaves
    B in the WMMA B layout: B[k][j] in lane 16 * (k // 4 % 2) + j, element 4 * (k // 8) + k % 4 (AMD's equations)."""
    offset = np.empty(32, np.int32)
    for lane in range(32):
        g, e = divmod(lane, 8)  # this lane's row is element e of lanes 8g .. 8g + 7
        h, col0 = g // 2, 8 * (g % 2)  # those lanes: half h, columns col0 .. col0 + 7
        k = 8 * (e // 4) + 4 * h + e % 4
        offset[lane] = (16 * k + col0) // 8
    return offset


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_a_row_major_b_loads_transposed_into_the_wmma_operand(queue):
    a = (RNG.integers(-64, 65, (16, 16)) / 8).astype(np.float16)
    b = (RNG.integers(-64, 65, (16, 16)) / 8).astype(np.float16)
    a_regs = np.zeros((32, 8), np.float16)  # A[i][k] in lane 16 * (k // 4 % 2) + i, element 4 * (k // 8) + k % 4
    for i in range(16):
        for k in range(16):
            a_regs[16 * (k // 4 % 2) + i, 4 * (k // 8) + k % 4] = a[i, k]
    d = np.zeros((32, 8), np.float32)
    out, _ = launcher(queue, code_object=CODE_OBJECT)("wmma_b_from_tr", [d, a_regs, b, _b_offsets()], (1,), (32,))
    got = np.empty((16, 16), np.float32)
    for lane in range(32):
        for r in range(8):  # D[i][j]: VGPR i % 8 of lane 16 * (i // 8) + j
            got[r + 8 * (lane // 16), lane % 16] = out[0][lane, r]
    assert np.array_equal(got, (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32))


@pytest.mark.parametrize("kernel", ["tr_b64", "tr_b128_i16"])
def test_wave64_transposing_loads_are_refused(kernel):
    args = [np.zeros((64, 2), np.uint32), np.zeros((64, 4), np.uint32), np.zeros(64, np.int32)]
    with pytest.raises(GPUFault, match="wave64 is not implemented"):
        launch("pm4", "interpreter", kernel, args, (1,), (64,), code_object=CODE_OBJECT_W64)


def test_a_partial_exec_is_refused():
    """The rows come from other lanes: a launch of 20 work-items leaves lanes 20-31 off, and the load faults."""
    args = [np.zeros((32, 2), np.uint32), np.zeros((64, 2), np.uint32), np.zeros(32, np.int32)]
    with pytest.raises(GPUFault, match="needs EXEC all ones"):
        launch("pm4", "interpreter", "tr_b64", args, (1,), (20,), code_object=CODE_OBJECT)


@pytest.mark.skipif(shutil.which("/usr/lib/llvm-19/bin/clang") is None, reason="needs clang-19 and lld-19")
@pytest.mark.parametrize("name", ["load_tr", "load_tr_w64"])
def test_committed_code_object_is_what_the_generator_builds(name):
    from tools import gen_opencl_corpus
    built = gen_opencl_corpus.build(gen_opencl_corpus.source(name), arch=ARCH, name=name)
    assert built == gen_opencl_corpus.output(ARCH, name).read_bytes()


def test_memcheck_sees_each_lane_s_row():
    """The sanitizers check a transposing load as the plain load of each lane's row: in bounds, no finding; one row
    past the end of its buffer, an out-of-bounds read."""
    tb = Testbed(vram_size=1 << 26, arch=ARCH, sanitize="all")
    k = tb.load(CODE_OBJECT.read_bytes())["tr_b128_i16"]
    src = tb.upload(np.arange(64 * 8, dtype=np.uint16))
    offset = np.arange(32, dtype=np.int32)
    d = tb.upload(np.zeros((32, 8), np.uint16))
    tb.launch(k, [d, src, tb.upload(offset)], (1,), (32,))
    assert [f.text() for f in tb.sanitizer.findings] == []
    offset[5] = 64  # row 64 of a 64-row buffer
    with pytest.raises(HardwareFault, match="memcheck.*out-of-bounds read"):
        tb.launch(k, [d, src, tb.upload(offset)], (1,), (32,))
