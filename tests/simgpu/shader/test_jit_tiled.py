"""A tiled matrix product as compilers write it (clang-19 OpenCL: LDS tiles, a loop over K with a barrier
before and after each tile's use, workgroups of 8 waves) in the JIT tier, bit for bit as the interpreter.

Its waves run barrier to barrier (jit/barrier.py): one native call per interval runs every wave of the batch
to its next s_barrier, LDS stores included, and only the tail after the K loop (a global store) runs in
rounds, where @wave moves only the VGPRs reachable from the block it enters at (translate.entry_vgprs). The
oracle for the result is numpy (integer-valued floats: every sum is exact); for the tier, the interpreter
(tests/support/tiers.py: memory, registers of every batch, counters, clock).
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from tests.support import tiers

LLVM = pathlib.Path("/usr/lib/llvm-19/bin")
TILE = 16

SOURCE = r"""
#define LID_X __builtin_amdgcn_workitem_id_x()
#define LID_Y __builtin_amdgcn_workitem_id_y()
#define GRP_X __builtin_amdgcn_workgroup_id_x()
#define GRP_Y __builtin_amdgcn_workgroup_id_y()
#define T 16

// OpenCL's barrier(CLK_LOCAL_MEM_FENCE) as the device library defines it (-nogpulib: no library)
static void barrier_local(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// c[m][n] = sum_k a[m][k] * b[k][n]; a workgroup of T x T items computes one T x T tile of c
__kernel void tiled_matmul(__global float *c, __global const float *a, __global const float *b,
                           int m, int n, int k) {
  __local float as[T][T], bs[T][T + 1];
  int tx = LID_X, ty = LID_Y;
  int row = GRP_Y * T + ty, col = GRP_X * T + tx;
  float acc = 0.0f;
  for (int t = 0; t < k; t += T) {
    as[ty][tx] = a[row * k + t + tx];
    bs[ty][tx] = b[(t + ty) * n + col];
    barrier_local();
    for (int j = 0; j < T; j++)
      acc += as[ty][j] * bs[j][tx];
    barrier_local();
  }
  c[row * n + col] = acc;
}
"""


@pytest.fixture(scope="module")
def code_object(tmp_path_factory) -> bytes:
    if shutil.which(str(LLVM / "clang")) is None or shutil.which(str(LLVM / "ld.lld")) is None:
        pytest.skip("needs clang-19 and lld-19")
    d = tmp_path_factory.mktemp("tiled")
    (d / "k.cl").write_text(SOURCE)
    subprocess.run([LLVM / "clang", "-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-nogpulib",
                    "-O2", "-c", d / "k.cl", "-o", d / "k.o"], check=True)
    subprocess.run([LLVM / "ld.lld", "-shared", d / "k.o", "-o", d / "k.so"], check=True)
    return (d / "k.so").read_bytes()


def _run(tier: str, code: bytes, a: np.ndarray, b: np.ndarray):
    tb = tiers.testbed(tier)
    kernel = tb.load(code)["tiled_matmul"]
    m, k = a.shape
    n = b.shape[1]
    c_va = tb.upload(np.zeros((m, n), np.float32))
    tb.launch(kernel, [c_va, tb.upload(a), tb.upload(b), m, n, k], (n // TILE, m // TILE), (TILE, TILE))
    return tb, tb.download(c_va, np.float32, m * n).reshape(m, n)


@pytest.mark.parametrize("shape", [(32, 64, 48), (16, 128, 16)])
def test_tiled_matmul_jit_matches_interpreter(code_object, shape):
    m, k, n = shape
    rng = np.random.default_rng(sum(shape))
    a = rng.integers(-8, 9, (m, k)).astype(np.float32)
    b = rng.integers(-8, 9, (k, n)).astype(np.float32)
    reference, want = _run("interpreter", code_object, a, b)
    np.testing.assert_array_equal(want, a @ b)
    for tier in ("jit", "jit-lean"):
        tb, got = _run(tier, code_object, a, b)
        tiers.assert_same(reference, tb)
        np.testing.assert_array_equal(got, want)
        stats = tb.engine.jit.stats
        # the tier ran the loop natively, barrier to barrier (jit/barrier.py): each K step's two intervals
        # one native call for the batch, LDS stores included ...
        assert stats.native_instructions > 0.6 * tb.engine.counters.wave_instructions
        assert stats.intervals >= 2 * k // TILE
        # ... so the interpreter no longer steps through each K step's two LDS stores and two barriers (it did
        # 4 * k // TILE sync steps and more rounds before, issues 28/29): only the tail after the loop's global
        # store, where the last interval parks its waves in the interpreter's order (kept: barrier.py)
        assert stats.interval_aborts == 0
        assert stats.sync_steps <= 2
        assert stats.rounds <= 2
        # ... entering @wave with per-entry register sets, not the whole file
        (state,) = [s for s in tb.engine.jit.kernels.values() if s.compiled is not None]
        assert state.compiled.entry_sets >= 2
