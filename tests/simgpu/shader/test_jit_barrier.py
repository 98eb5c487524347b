"""Barrier-to-barrier intervals (simgpu/shader/jit/barrier.py) on clang-19 OpenCL kernels, bit for bit as the
interpreter (tests/support/tiers.py: memory, registers of every batch, LDS, counters, clock).

What the mechanism adds, each with its own kernel: LDS stores run natively and are undone when the LDS order
check fails (a wave loads a word another wave of its group stored in the same interval: the loads that run
afterwards in rounds must see the LDS as it was before the interval); the K loop's back edge through a
barrier; waves of one group reaching different s_barrier instructions, and a wave that ends before the
others' barriers; workgroups of 1 to 16 wave32 waves. Independently of the tiers, each result is checked
against numpy running the kernel's own formula.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess

import numpy as np
import pytest

from tests.support import tiers

LLVM = pathlib.Path("/usr/lib/llvm-19/bin")
STEPS = 3

SOURCE = r"""
#define LID __builtin_amdgcn_workitem_id_x()
#define GRP __builtin_amdgcn_workgroup_id_x()

static void barrier_local(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// Each step every item reads a value another wave stored before the barrier (no race): out = the last step's.
__kernel void lds_shift(__global int *out, __global const int *in, int steps, int gs) {
  __local int buf[512];
  int lid = LID, g = GRP;
  int v = in[g * gs + lid];
  for (int t = 0; t < steps; t++) {
    buf[lid] = v;
    barrier_local();
    v = buf[(lid + 33 * t + 1) % gs] * 3 + t;
    barrier_local();
  }
  out[g * gs + lid] = v;
}

// A race inside an interval: every wave loads slot[0], then stores it; the second wave's load finds the first
// wave's store (the order check fails), so the interval is undone, LDS included, and runs in rounds.
__kernel void load_then_store(__global int *out, int steps) {
  __local volatile int slot[1];
  int lid = LID;
  int acc = 0;
  if (lid == 0) slot[0] = 5;
  barrier_local();
  for (int t = 0; t < steps; t++) {
    int before = slot[0];
    slot[0] = lid * 4 + t;
    barrier_local();
    acc = acc * 7 + before + slot[0];
    barrier_local();
  }
  out[GRP * 256 + lid] = acc;
}

// After the barrier odd waves store first; even waves skip that store and run past its PC to their own: the
// tail interval parks waves at a store another wave ran past, so it is undone and runs in rounds.
__kernel void tail_diverge(__global int *out, __global const int *in) {
  __local int buf[256];
  int lid = LID, wave = __builtin_amdgcn_readfirstlane(lid / 32);
  buf[lid] = in[GRP * 256 + lid];
  barrier_local();
  int v = buf[lid ^ 32] * 5;
  if (wave & 1) out[GRP * 512 + lid] = v;
  v = v * 3 + buf[lid ^ 64];
  out[GRP * 512 + 256 + lid] = v;
}

// A race in a batch's first interval: every wave loads slot[0] (LDS starts zeroed on the simulator) and stores
// its own value; undone, the LDS goes back to zeros (not copied: barrier.py) and the interval runs in rounds.
__kernel void first_race(__global int *out) {
  __local volatile int slot[1];
  int lid = LID;
  int before = slot[0];
  slot[0] = lid + 1;
  barrier_local();
  out[GRP * 256 + lid] = before * 1000 + slot[0];
}

// Odd and even waves meet at different s_barrier instructions; wave 3 ends before any barrier.
__kernel void diverge(__global int *out, __global const int *in, int steps) {
  __local int buf[256];
  int lid = LID, wave = __builtin_amdgcn_readfirstlane(lid / 32);
  int v = in[GRP * 256 + lid];
  buf[lid] = v;
  if (wave == 3) return;
  for (int t = 0; t < steps; t++) {
    if (wave & 1) {
      barrier_local();
      v += buf[lid ^ 64];
    } else {
      barrier_local();
      v -= 2 * buf[lid ^ 64];
    }
    barrier_local();
    buf[lid] = v;
  }
  out[GRP * 256 + lid] = v;
}
"""


@pytest.fixture(scope="module")
def code_object(tmp_path_factory) -> bytes:
    if shutil.which(str(LLVM / "clang")) is None or shutil.which(str(LLVM / "ld.lld")) is None:
        pytest.skip("needs clang-19 and lld-19")
    d = tmp_path_factory.mktemp("b2b")
    (d / "k.cl").write_text(SOURCE)
    subprocess.run([LLVM / "clang", "-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-nogpulib",
                    "-O2", "-c", d / "k.cl", "-o", d / "k.o"], check=True)
    subprocess.run([LLVM / "ld.lld", "-shared", d / "k.o", "-o", d / "k.so"], check=True)
    return (d / "k.so").read_bytes()


def _launch(tier: str, code: bytes, name: str, groups: int, gs: int, args, n_out: int, inputs=()):
    tb = tiers.testbed(tier)
    kernel = tb.load(code)[name]
    out = tb.upload(np.zeros(n_out, np.int32))
    tb.launch(kernel, [out, *(tb.upload(x) for x in inputs), *args], (groups, 1), (gs, 1))
    return tb, tb.download(out, np.int32, n_out)


def _both(code: bytes, name: str, groups: int, gs: int, args, n_out: int, inputs=()):
    """The interpreter's result, and the JIT tiers' testbeds compared with it (each tier's stats returned)."""
    reference, want = _launch("interpreter", code, name, groups, gs, args, n_out, inputs)
    stats = []
    for tier in ("jit", "jit-lean"):
        tb, got = _launch(tier, code, name, groups, gs, args, n_out, inputs)
        tiers.assert_same(reference, tb)
        np.testing.assert_array_equal(got, want)
        stats.append(tb.engine.jit.stats)
    return want, stats


@pytest.mark.parametrize("waves", [1, 3, 8, 16])
@pytest.mark.parametrize("groups", [1, 3])
def test_intervals_match_interpreter_for_group_sizes(code_object, waves, groups):
    gs = 32 * waves
    x = np.random.default_rng(waves * 10 + groups).integers(-100, 100, groups * gs).astype(np.int32)
    want, stats = _both(code_object, "lds_shift", groups, gs, [STEPS, gs], groups * gs, [x])
    v = x.reshape(groups, gs).copy()
    lid = np.arange(gs)
    for t in range(STEPS):
        v = v[:, (lid + 33 * t + 1) % gs] * 3 + t
    np.testing.assert_array_equal(want, v.reshape(-1))
    for s in stats:
        # every interval of the loop (both barriers, the back edge's included) ran natively, and the tail's: its
        # waves park at the global store in the interpreter's order (barrier.py's _round_order), so it is kept
        assert s.intervals >= 2 * STEPS + 1
        assert s.interval_aborts == 0 and s.sync_steps <= 2


@pytest.mark.parametrize("groups", [1, 2])
def test_failed_order_check_undoes_lds(code_object, groups):
    want, stats = _both(code_object, "load_then_store", groups, 256, [STEPS], groups * 256)
    # the interpreter's order: at each step every wave loads slot[0] before any stores (one PC, all waves),
    # then the highest lane of the last wave stores last
    lid = np.arange(256)
    acc, slot = np.zeros(256, np.int64), 5
    for t in range(STEPS):
        before = slot
        slot = 255 * 4 + t
        acc = acc * 7 + before + slot
    np.testing.assert_array_equal(want.reshape(groups, 256), np.broadcast_to(acc.astype(np.int32), (groups, 256)))
    assert lid.size == 256
    for s in stats:
        assert s.interval_aborts >= STEPS  # each step's racing interval undone ...
        assert s.intervals >= STEPS  # ... the race-free ones (after each step's first barrier) kept


@pytest.mark.parametrize("groups", [1, 2])
def test_failed_first_interval_clears_lds(code_object, groups):
    want, stats = _both(code_object, "first_race", groups, 256, [], groups * 256)
    # the interpreter's order: all waves load before any stores (one PC), then the last store wins
    lid = np.arange(256)
    assert (want.reshape(groups, 256) == 0 * lid + 256).all()
    for s in stats:
        assert s.interval_aborts >= 1


@pytest.mark.parametrize("groups", [1, 2])
def test_tail_kept_only_in_the_interpreters_order(code_object, groups):
    x = np.random.default_rng(groups + 7).integers(-50, 50, groups * 256).astype(np.int32)
    want, stats = _both(code_object, "tail_diverge", groups, 256, [], groups * 512, [x])
    buf = x.reshape(groups, 256).astype(np.int64)
    lid = np.arange(256)
    v = buf[:, lid ^ 32] * 5
    first = np.where((lid // 32) & 1 == 1, v, 0)
    expect = np.concatenate([first, v * 3 + buf[:, lid ^ 64]], axis=1).astype(np.int32).reshape(-1)
    np.testing.assert_array_equal(want, expect)
    for s in stats:
        # the interval after the barrier: the even waves ran past the odd waves' store, so it is undone
        assert s.intervals >= 1 and s.interval_aborts >= 1


@pytest.mark.parametrize("groups", [1, 2])
def test_divergent_barriers_and_early_exit(code_object, groups):
    x = np.random.default_rng(groups).integers(-50, 50, groups * 256).astype(np.int32)
    want, stats = _both(code_object, "diverge", groups, 256, [STEPS], groups * 256, [x])
    buf = x.reshape(groups, 256).astype(np.int64)
    v = buf.copy()
    lid = np.arange(256)
    odd, live = (lid // 32) & 1 == 1, lid // 32 != 3
    for _ in range(STEPS):
        other = buf[:, lid ^ 64]
        v = np.where(odd, v + other, v - 2 * other)
        buf = np.where(live, v, buf)
    expect = np.where(live, v, 0).astype(np.int32).reshape(-1)
    np.testing.assert_array_equal(want, expect)
    for s in stats:
        assert s.intervals >= 2 * STEPS
