"""LDS races between two barriers (clang-19 OpenCL, workgroups of 8 wave32 waves) in the JIT tier, bit for
bit as the interpreter.

A correct kernel has no race, but the tier must not depend on that: when two waves store to one LDS byte
between two barriers (from one PC, or from two PCs on the two sides of a branch), or a wave loads a byte
another wave stores in the same interval, the result is the interpreter's order of the waves (its
PC-grouped steps), and the JIT tier has to reproduce it (tests/support/tiers.py compares memory, the
registers of every batch, counters and clock). The loop runs the race several times through the barrier
on its back edge. Independently of the tiers, every value read after a barrier must be one some lane
stored (numpy over the kernel's own formula).
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from tests.support import tiers

LLVM = pathlib.Path("/usr/lib/llvm-19/bin")
GROUP = 256  # 8 wave32 waves
STEPS = 3

SOURCE = r"""
#define LID __builtin_amdgcn_workitem_id_x()
#define GRP __builtin_amdgcn_workgroup_id_x()

static void barrier_local(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// out[g][t][lid] = (slot 0 and slot 1 after the barrier, the early read of slot 0 before it)
__kernel void lds_race(__global int *out, __global int *early, int steps) {
  __local volatile int slot[2];
  int lid = LID, wave = lid / 32;
  for (int t = 0; t < steps; t++) {
    slot[0] = lid * 4 + t;                     // every lane of every wave, one PC
    if (wave & 1) slot[1] = 1000 + lid + t;    // odd waves at one PC ...
    else slot[1] = 2000 + lid + t;             // ... even waves at another
    early[(GRP * steps + t) * 256 + lid] = slot[0];  // a load racing the other waves' stores
    barrier_local();
    int base = ((GRP * steps + t) * 256 + lid) * 2;
    out[base] = slot[0];
    out[base + 1] = slot[1];
    barrier_local();
  }
}
"""


@pytest.fixture(scope="module")
def code_object(tmp_path_factory) -> bytes:
    if shutil.which(str(LLVM / "clang")) is None or shutil.which(str(LLVM / "ld.lld")) is None:
        pytest.skip("needs clang-19 and lld-19")
    d = tmp_path_factory.mktemp("race")
    (d / "k.cl").write_text(SOURCE)
    subprocess.run([LLVM / "clang", "-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-nogpulib",
                    "-O2", "-c", d / "k.cl", "-o", d / "k.o"], check=True)
    subprocess.run([LLVM / "ld.lld", "-shared", d / "k.o", "-o", d / "k.so"], check=True)
    return (d / "k.so").read_bytes()


def _run(tier: str, code: bytes, groups: int):
    tb = tiers.testbed(tier)
    kernel = tb.load(code)["lds_race"]
    out = tb.upload(np.zeros(groups * STEPS * GROUP * 2, np.int32))
    early = tb.upload(np.zeros(groups * STEPS * GROUP, np.int32))
    tb.launch(kernel, [out, early, STEPS], (groups, 1), (GROUP, 1))
    got = tb.download(out, np.int32, groups * STEPS * GROUP * 2).reshape(groups, STEPS, GROUP, 2)
    return tb, got, tb.download(early, np.int32, groups * STEPS * GROUP).reshape(groups, STEPS, GROUP)


def _check_values(got: np.ndarray, early: np.ndarray) -> None:
    """Every value read is one a lane of the group stored in that step (the kernel's formulas)."""
    lid = np.arange(GROUP)
    for t in range(STEPS):
        slot0 = set((lid * 4 + t).tolist())
        slot1 = set((np.where((lid // 32) & 1, 1000, 2000) + lid + t).tolist())
        assert set(got[:, t, :, 0].ravel().tolist()) <= slot0
        assert set(got[:, t, :, 1].ravel().tolist()) <= slot1
        assert set(early[:, t].ravel().tolist()) <= slot0
        # after the barrier every lane of a group sees one value
        assert (got[:, t] == got[:, t, :1]).all()


@pytest.mark.parametrize("groups", [1, 3])
def test_lds_race_jit_matches_interpreter(code_object, groups):
    reference, want, want_early = _run("interpreter", code_object, groups)
    _check_values(want, want_early)
    for tier in ("jit", "jit-lean"):
        tb, got, early = _run(tier, code_object, groups)
        tiers.assert_same(reference, tb)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(early, want_early)
        assert tb.engine.jit.stats.native_instructions > 0
