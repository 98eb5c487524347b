"""Kernels tinygrad compiled with LLVM for gfx1100, captured from its own test suites (tests/data/tinygrad),
run on the shader engine against numpy, in every tier (tests/support/tiers.py).

r_10_12_12 is the last kernel of tinygrad's sparse_categorical_crossentropy(ignore_index=4,
label_smoothing=0.3, reduction="mean") over 12 rows of 10 logits: one work-item, every loop unrolled, the
logits, row maxima and log-sum-exps in SGPRs, one class index loaded into VCC (`s_load_b32 vcc_lo`)."""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.shader.engine import DEFAULT_WATCHDOG
from simgpu.shader.jit import jit_tier
from simgpu.testbed import Testbed
from tests import DATA
from tests.support import tiers

DATA = DATA / "tinygrad"


def cross_entropy(x: np.ndarray, classes: np.ndarray, ignore: int, smoothing: float) -> np.float32:
    """Label-smoothed cross entropy, the mean over rows whose class is not `ignore` (torch's definition)."""
    x = x.astype(np.float64)
    logp = x - x.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    keep = classes != ignore
    picked = logp[np.arange(len(x)), classes]
    n = x.shape[1]
    loss = -((1 - smoothing) * picked + smoothing / n * logp.sum(1))
    return np.float32((loss * keep).sum() / keep.sum())


@pytest.mark.parametrize("tier", tiers.TIERS)
def test_sparse_categorical_crossentropy_kernel(tier):
    inputs = np.load(DATA / "r_10_12_12.npz")
    x, classes = inputs["x"], inputs["classes"]
    row_max = x.max(1)
    lse = np.log(np.exp(x - row_max[:, None]).sum(1)).astype(np.float32)  # what the two kernels before compute
    tb = tiers.testbed(tier)
    k = tb.load((DATA / "r_10_12_12.co").read_bytes())["r_10_12_12"]
    out = tb.alloc(4)
    tb.launch(k, [out, *(tb.upload(a) for a in (x, row_max, lse, classes))], (1,), (1,))
    got = tb.download(out, np.float32, 1)[0]
    np.testing.assert_allclose(got, cross_entropy(x, classes, int(classes[0]), 0.3), rtol=1e-5)


def test_masked_select_index_kernel_on_two_workgroups():
    """r_320_16_320_320_20: the index computation of tinygrad's masked_select(Tensor(True)) over 320 floats
    (test_ops.py::test_masked_select), which gathers out[g] = x[g] through three nested reduce loops of
    20 x 320 x 320 iterations per work-item (LLVM unrolls the innermost by 20): 9,901,090 wave-instructions
    per workgroup, 3.17e9 for the kernel's 320 (issue 26 item 2: the per-dispatch wave-instruction budget,
    5e7, stops it -- a correct dispatch, not a hang; tinygrad skips the test on its own emulator, "very slow
    on MOCKGPU because reduce does not fold"). Two workgroups, in the JIT tier only (the interpreter takes
    minutes for them)."""
    x = np.load(DATA / "r_320_16_320_320_20.npy")
    tb = tiers.testbed("jit")
    k = tb.load((DATA / "r_320_16_320_320_20.co").read_bytes())["r_320_16_320_320_20"]
    out = tb.alloc(320 * 4)
    tb.launch(k, [out, tb.upload(x)], (2,), (16,))
    assert np.array_equal(tb.download(out, np.float32, 2), x[:2])
    assert tb.engine.counters.snapshot()["wave_instructions"] == 2 * 9_901_090


def test_masked_select_index_kernel_whole_grid_runs_native_under_the_default_limit(monkeypatch, tmp_path):
    """The whole r_320_16_320_320_20 dispatch (320 one-wave workgroups, 3.17e9 wave-instructions) as a client's
    dispatch runs: the default JIT tier and wave-instruction budget. Its 5,120 lanes are one batch too small for the
    interpreter to leave the GIL to a compile (tier.GIL_FREE_LANES), so only the long-dispatch rule
    (tier.LONG_DISPATCH) compiles it beside itself; before that rule it stayed in the interpreter to the end, ~470 s
    of tinygrad's test_masked_select on a loaded host (issue 26). Nearly all of it must run natively."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", str(tmp_path))  # a compile of its own, not a disk-cache hit
    monkeypatch.delenv("SIMGPU_JIT", raising=False)
    monkeypatch.delenv("SIMGPU_JIT_BACKGROUND", raising=False)
    x = np.load(DATA / "r_320_16_320_320_20.npy")
    tb = Testbed(vram_size=1 << 28, watchdog=DEFAULT_WATCHDOG)
    tb.engine.jit = jit_tier()
    k = tb.load((DATA / "r_320_16_320_320_20.co").read_bytes())["r_320_16_320_320_20"]
    out = tb.alloc(320 * 4)
    tb.launch(k, [out, tb.upload(x)], (320,), (16,))
    assert np.array_equal(tb.download(out, np.float32, 320), x)
    total = tb.engine.counters.snapshot()["wave_instructions"]
    assert total == 320 * 9_901_090 < DEFAULT_WATCHDOG
    assert tb.engine.jit.stats.native_instructions > 0.9 * total
