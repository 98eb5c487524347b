"""The fast exact FMA (fpexact.fma_nearest) equals the exact path (fpexact.fma_small) and the host C
library's fmaf bit for bit, on the input families of tools/verify_fma.py (crafted midpoints, subnormal
results, overflow, cancellations, random bit patterns) and on hypothesis' triples; and it repairs only
the lanes at risk. The full 10M+ verification: `python -m tools.verify_fma`."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu.shader.sem import fpexact as fx
from tools import verify_fma as vf

F16, F32 = np.float16, np.float32


@pytest.mark.parametrize("family", vf.FAMILIES, ids=lambda f: f.__name__)
def test_families_match_exact_path_and_libm(family):
    rng = np.random.default_rng(11)
    a, b, c = family(rng, 20_000)
    with np.errstate(all="ignore"):
        bad_exact, bad_c, _, _, _ = vf.check_f32(a, b, c, vf.c_fmaf(), True)
    assert (bad_exact, bad_c) == (0, 0)


def test_midpoint_family_really_defeats_double_rounding():
    """The crafted inputs are hard: rounding the float64 sum alone would be wrong on many of them."""
    a, b, c = vf.family_midpoint(np.random.default_rng(3), 20_000)
    with np.errstate(all="ignore"):
        _, _, hard, _, _ = vf.check_f32(a, b, c, None, False)
    assert hard > 2000


def test_f16_matches_exact_path():
    with np.errstate(all="ignore"):
        assert vf.check_f16(np.random.default_rng(5), 50_000) == 0


def _exact_f32(a, b, c) -> np.float32:
    from tests.simgpu.shader.test_corpus_opencl import round_f32
    return round_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


f32s = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(a=f32s, b=f32s, c=f32s)
def test_random_triples_round_once(a, b, c):
    x, y, z = (np.array([v], F32) for v in (a, b, c))
    with np.errstate(all="ignore"):
        got = fx.fma_nearest(x, y, z, F32)[0]
    want = _exact_f32(a, b, c)
    if want == 0:  # the sign of an exact zero: IEEE's rule, as the exact path applies it
        want = fx.fma_small(x, y, z, F32, fx.RNE)[0]
    assert got.view(np.uint32) == want.view(np.uint32)


def test_only_risky_lanes_take_the_exact_path(monkeypatch):
    """One lane whose float64 sum is inexact and on a midpoint costs one lane of exact arithmetic, not the
    whole batch; sums that are exact (on a midpoint or below the normal range) round once on the fast path."""
    rng = np.random.default_rng(1)
    a, b, c = (rng.random((64, 32), np.float32) for _ in range(3))
    a[3, :8] = np.arange(8, dtype=np.float32) * np.float32(2.0 ** -130)  # exact subnormal products
    a[4, :8], b[4, :8], c[4, :8] = 1 + 2.0 ** -23, 1.0, 2.0 ** -24  # exact sums on a midpoint
    ma, mb, mc = vf.family_midpoint(rng, 100)
    with np.errstate(all="ignore"):
        _, err = fx.two_sum(ma.astype(np.float64) * mb.astype(np.float64), mc.astype(np.float64))
    i = int(np.flatnonzero(err != 0)[0])  # a triple whose float64 sum is inexact: double rounding at risk
    a[5, 7], b[5, 7], c[5, 7] = ma[i], mb[i], mc[i]
    sizes = []
    real = fx.fma_small
    monkeypatch.setattr(fx, "fma_small", lambda *args: sizes.append(args[0].size) or real(*args))
    got = fx.fma_nearest(a, b, c, F32)
    assert sizes == [1]
    # an operand broadcast from [waves, 1] (an SGPR) selects its risky lanes the same way
    got_b = fx.fma_nearest(a, b[:, 7:8], c, F32)
    monkeypatch.setattr(fx, "fma_small", real)
    assert np.array_equal(got.view(np.uint32), fx.fma_small(a, b, c, F32, fx.RNE).view(np.uint32))
    assert np.array_equal(got_b.view(np.uint32), fx.fma_small(a, b[:, 7:8], c, F32, fx.RNE).view(np.uint32))
