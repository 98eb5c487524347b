"""The division family (v_div_scale, v_div_fmas, v_div_fixup) is defined once in the expression form
(vector/float_arith.py) and runs natively in the JIT: a / b as clang-19 expands it (tests/data/opencl/fdiv.cl ->
fdiv_gfx1100.so, `python -m tools.gen_opencl_corpus --arch gfx1100`) gives numpy's correctly rounded quotient in
both tiers, bit for bit, on denormals, zeros, infinities, NaNs and quotients that overflow or underflow; and the
f32 div_fmas's round-to-odd FMA is fpexact's exact scaled FMA in every round mode (hypothesis). Each defined
instruction alone, under MODEs that flush or keep denormals, is in test_sem_define's every-float-opcode test.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simgpu.shader.sem import fpexact as fx
from simgpu.shader.semantics import implemented
from simgpu.shader.vector.valu import SPECS, OpCtx
from tests import DATA
from tests.support import tiers

CODE_OBJECT = DATA / "opencl" / "fdiv_gfx1100.so"
N = 4096  # lanes: every pair of the specials below, then random values

F32_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, 0.1, 2.0 ** -149, -(2.0 ** -149), 2.0 ** -126,
             2.0 ** -127, 3 * 2.0 ** -140, 2.0 ** 127, 3.4028235e38, -3.4028235e38, 2.0 ** 64, 2.0 ** -64, 1e-30,
             1e30, 7.0, 2.0 ** 126, 0.75 * 2.0 ** -126]
F64_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 3.0, 0.1, 5e-324, -5e-324, 2.0 ** -1022, 2.0 ** -1023,
             2.0 ** 1023, 1.7976931348623157e308, 2.0 ** 128, 2.0 ** -128, 1e-300, 1e300, 7.0, 2.0 ** 1022]


def _operands(dt, edges: list[float], rng) -> tuple[np.ndarray, np.ndarray]:
    """N numerators and denominators: every pair of edges, then random magnitudes over the whole exponent range
    (huge and tiny quotients, denormal ones) and random bit patterns (NaN payloads among them)."""
    pairs = np.array([(a, b) for a in edges for b in edges], dt)
    info, ut = np.finfo(dt), {np.float32: np.uint32, np.float64: np.uint64}[dt]
    rest = N - len(pairs)
    with np.errstate(over="ignore"):
        mags = rng.standard_normal((rest, 2)) * np.exp2(rng.uniform(info.minexp - info.nmant, info.maxexp, (rest, 2)))
        mags = mags.astype(dt)
    bits = rng.integers(0, np.iinfo(ut).max, (rest, 2), dtype=ut, endpoint=True).view(dt)
    out = np.concatenate([pairs, np.where(rng.random((rest, 2)) < 0.25, bits, mags)])
    return np.ascontiguousarray(out[:, 0]), np.ascontiguousarray(out[:, 1])


@pytest.mark.parametrize("name, dt, edges", [("fdiv", np.float32, F32_EDGES), ("ddiv", np.float64, F64_EDGES)])
def test_clang_division_is_numpys_in_both_tiers(name, dt, edges):
    a, b = _operands(dt, edges, np.random.default_rng(3))
    reference, got = tiers.run_elementwise("interpreter", CODE_OBJECT.read_bytes(), name, a, b)
    for tier in ("jit", "jit-lean"):
        tb, _ = tiers.run_elementwise(tier, CODE_OBJECT.read_bytes(), name, a, b)
        tiers.assert_same(reference, tb)
    with np.errstate(all="ignore"):
        want = a / b
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(f"u{dt().itemsize}"), want[~nan].view(f"u{dt().itemsize}"))


def test_the_division_family_runs_natively():
    """The f32 division runs as fused batches (all native but the store) without a callback into the interpreter;
    the f64 one leaves native code for v_div_fmas_f64 (its escape hatch: the interpreter runs it), so it runs in
    rounds."""
    a, b = _operands(np.float32, F32_EDGES, np.random.default_rng(4))
    stats = tiers.run_elementwise("jit-lean", CODE_OBJECT.read_bytes(), "fdiv", a, b)[0].engine.jit.stats
    assert stats.fused_batches >= 1 and stats.fused_aborts == 0 and stats.callbacks == 0, stats
    a, b = _operands(np.float64, F64_EDGES, np.random.default_rng(4))
    stats = tiers.run_elementwise("jit-lean", CODE_OBJECT.read_bytes(), "ddiv", a, b)[0].engine.jit.stats
    assert stats.fused_batches == 0 and stats.sync_steps + stats.callbacks > 0 and stats.native_instructions > 0, stats


ROUND = st.sampled_from([0, 1, 2, 3])  # MODE.FP_ROUND for f32: nearest even, +inf, -inf, toward zero
F32_BITS = st.one_of(st.integers(0, (1 << 32) - 1),
                     st.sampled_from([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00000, 1, 0x807FFFFF,
                                      0x00800000, 0x3F800000, 0x7F7FFFFF, 0x1F800000, 0x5F800000, 0x33800000]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(F32_BITS, F32_BITS, F32_BITS, st.booleans()), min_size=1, max_size=32), ROUND)
@example([(0, 0, 0x80000000, False)], 2)  # found in CI: 0 * 0 + -0 toward -inf is -0
def test_div_fmas_f32_is_the_exact_scaled_fma(lanes, rm):
    """The definition's FMA (f64 round to odd, scaled, rounded once as MODE says) against fpexact's exact one."""
    implemented()
    raw = np.array([x[:3] for x in lanes], np.uint32).view(np.float32)
    a, b, c = (raw[:, i].reshape(1, -1) for i in range(3))
    vcc = np.array([x[3] for x in lanes]).reshape(1, -1)
    mode = 0x3F0 | rm  # denormals kept, IEEE on
    ctx = OpCtx(False, np.full((1, 1), mode, np.int64), a.shape[1], None, np.arange(1))
    post = np.where(vcc, np.where((c.view(np.uint32) >> 23 & 0xFF) > 127, 64, -64), 0)
    with np.errstate(all="ignore"):  # (float exceptions are results, as in the engine's dispatches)
        got = SPECS["v_div_fmas_f32"].fn(ctx, a, b, c, vcc)
        want = fx.first_nan(fx.fma_small(a, b, c, np.float32, np.full((1, 1), rm), post), a, b, c)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


@pytest.mark.skipif(shutil.which("/usr/lib/llvm-19/bin/clang") is None, reason="needs clang-19 and lld-19")
def test_committed_code_object_is_what_the_generator_builds():
    from tools import gen_opencl_corpus
    assert gen_opencl_corpus.build(gen_opencl_corpus.DIR / "fdiv.cl") == CODE_OBJECT.read_bytes()
