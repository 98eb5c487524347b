"""v_ldexp_f32 and v_ldexp_f16 are defined once in the expression form (vector/float_arith.py) and v_ldexp_f32 runs
natively in the JIT (it was a callback into the interpreter: all 11,700 callbacks of tinygrad's jit suite). ldexp as
clang-19 lowers __builtin_ldexpf / __builtin_ldexpf16 (tests/data/opencl/ldexp.cl -> ldexp_gfx1100.so, `python -m
tools.gen_opencl_corpus --arch gfx1100`) gives numpy's np.ldexp, bit for bit, in both tiers: on denormals, zeros,
infinities, NaNs (quieted), results that overflow or underflow, and exponents far outside the type's range.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from tests import DATA
from tests.support import tiers

CODE_OBJECT = DATA / "opencl" / "ldexp_gfx1100.so"
N = 4096


def _operands(dt, rng) -> tuple[np.ndarray, np.ndarray]:
    """N values (specials, random magnitudes over the type's range, random bit patterns) and N exponents (small,
    near the type's range limits, and anything an int holds)."""
    info, ut = np.finfo(dt), {np.float16: np.uint16, np.float32: np.uint32}[dt]
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1.5, info.tiny, info.smallest_subnormal,
                         -info.smallest_subnormal, info.max, -info.max, 0.1], dt)
    with np.errstate(over="ignore"):  # (a magnitude past the type's max becomes inf: one more special)
        mags = (rng.standard_normal(N) * np.exp2(rng.uniform(info.minexp - info.nmant, info.maxexp, N))).astype(dt)
    bits = rng.integers(0, np.iinfo(ut).max, N, dtype=ut, endpoint=True).view(dt)
    x = np.where(rng.random(N) < 0.3, bits, mags)
    x[:len(specials)] = specials
    n = rng.integers(-2 * info.maxexp - info.nmant, 2 * info.maxexp + info.nmant, N).astype(np.int32)
    n[::7] = rng.integers(-2**31, 2**31, len(n[::7]))
    n[:16] = [0, 1, -1, 600, -600, 601, -601, 2**31 - 1, -2**31, 32767, -32768, 40000, -40000, 64, -64, 3]
    return x, n


@pytest.mark.parametrize("name, dt", [("ldexp32", np.float32), ("ldexp16", np.float16)])
def test_clang_ldexp_is_numpys_in_both_tiers(name, dt):
    x, n = _operands(dt, np.random.default_rng(7))
    reference, got = tiers.run_elementwise("interpreter", CODE_OBJECT.read_bytes(), name, x, n)
    for tier in ("jit", "jit-lean"):
        tb, _ = tiers.run_elementwise(tier, CODE_OBJECT.read_bytes(), name, x, n)
        tiers.assert_same(reference, tb)
    k = np.clip(n, -32768, 32767) if dt is np.float16 else n  # (clang clamps the f16 form's exponent to an i16)
    with np.errstate(all="ignore"):
        want = np.ldexp(x, k)
    nan = np.isnan(want)
    ut = f"u{dt().itemsize}"
    assert np.array_equal(np.isnan(got), nan)
    quiet = {np.float16: 0x200, np.float32: 0x400000}[dt]
    assert np.array_equal(got[nan].view(ut), x[nan].view(ut) | quiet)  # a NaN comes back quieted, payload kept
    assert np.array_equal(got[~nan].view(ut), want[~nan].view(ut))


def test_ldexp_f32_runs_natively():
    x, n = _operands(np.float32, np.random.default_rng(8))
    stats = tiers.run_elementwise("jit-lean", CODE_OBJECT.read_bytes(), "ldexp32", x, n)[0].engine.jit.stats
    assert stats.fused_batches >= 1 and stats.fused_aborts == 0 and stats.callbacks == 0, stats


@pytest.mark.skipif(shutil.which("/usr/lib/llvm-19/bin/clang") is None, reason="needs clang-19 and lld-19")
def test_committed_code_object_is_what_the_generator_builds():
    from tools import gen_opencl_corpus
    assert gen_opencl_corpus.build(gen_opencl_corpus.DIR / "ldexp.cl") == CODE_OBJECT.read_bytes()
