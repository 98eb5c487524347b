"""VOPD dual issue against independent reference models: both components read their sources before either
writes (X may read Y's destination and vice versa and sees the old value); every X and Y opcode of gfx1100,
the shared literal K (fmaak/fmamk), VCC for cndmask, the destination as accumulator (fmac, dot2acc)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from simgpu.testbed import Testbed

U32, F32 = np.uint32, np.float32
N = 128
VCC = 0x5A5AC3C3


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


def run4(tb, ops: list[str], a, b, c, d) -> np.ndarray:
    """v1..v4 = a, b, c, d; before each op v6 = c, v7 = d and VCC = VCC; returns (v6, v7) after each op."""
    body = ["s_load_b64 s[4:5], s[0:1], 0x0", "s_load_b64 s[6:7], s[0:1], 0x8", "s_load_b64 s[8:9], s[0:1], 0x10",
            "s_load_b64 s[12:13], s[0:1], 0x18", "s_load_b64 s[10:11], s[0:1], 0x20", "s_lshl_b32 s14, s2, 5",
            "v_add_nc_u32 v10, s14, v0", "v_lshlrev_b32 v10, 2, v10", "s_waitcnt lgkmcnt(0)",
            "global_load_b32 v1, v10, s[4:5]", "global_load_b32 v2, v10, s[6:7]", "global_load_b32 v3, v10, s[8:9]",
            "global_load_b32 v4, v10, s[12:13]", "s_waitcnt vmcnt(0)"]
    for op in ops:
        body += ["v_mov_b32 v6, v3", "v_mov_b32 v7, v4", f"s_mov_b32 vcc_lo, {VCC:#x}", op,
                 "global_store_b32 v10, v6, s[10:11]", f"global_store_b32 v10, v7, s[10:11] offset:{4 * N}",
                 f"s_add_u32 s10, s10, {8 * N}", "s_addc_u32 s11, s11, 0"]
    body.append("s_endpgm")
    k = tb.load_asm("\n".join(body), args=5)
    out = tb.alloc(8 * N * len(ops))
    bufs = [tb.upload(np.asarray(x, U32)) for x in (a, b, c, d)]
    tb.launch(k, bufs + [out], (N // 32,), (32,))
    return tb.download(out, U32, 2 * N * len(ops)).reshape(len(ops), 2, N)


# ---------------------------------------------------------------------------------------------- references


def fl(bits):
    return np.asarray(bits, U32).view(F32)


def bits(x):
    return np.asarray(x, F32).view(U32)


def ref_fma(a, b, c):
    """Exactly rounded f32 fma per element (specials through float arithmetic)."""
    out = np.empty(len(a), U32)
    for i, (x, y, z) in enumerate(zip(fl(a), fl(b), fl(c), strict=True)):
        x, y, z = float(x), float(y), float(z)
        if not all(math.isfinite(v) for v in (x, y, z)):
            out[i] = bits(F32(x * y + z))
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        f = F32(float(exact))
        if abs(exact) >= Fraction(2) ** 128 - Fraction(2) ** 103:  # max + half an ulp: overflows to inf
            out[i] = bits(F32(np.inf) if exact > 0 else F32(-np.inf))
            continue
        cands = [c for c in (f, np.nextafter(f, F32(np.inf)), np.nextafter(f, F32(-np.inf))) if np.isfinite(c)] or [f]
        best = min(cands, key=lambda c: (abs(Fraction(float(c)) - exact), int(bits(c)) & 1))
        if exact == 0:
            best = F32(x * y + z)
        out[i] = bits(best)
    return out


def ref_maxmin(a, b, is_max):
    """v_max_f32 / v_min_f32, IEEE mode: sNaN -> quieted, one NaN -> the other operand, +0 > -0."""
    out = np.empty(len(a), U32)
    for i, (x, y) in enumerate(zip(np.asarray(a, U32), np.asarray(b, U32), strict=True)):
        x, y = int(x), int(y)
        def nan(v):
            return (v & 0x7F800000) == 0x7F800000 and v & 0x7FFFFF
        if nan(x) and not x & 0x400000:
            r = x | 0x400000
        elif nan(y) and not y & 0x400000:
            r = y | 0x400000
        elif nan(x):
            r = y
        elif nan(y):
            r = x
        else:
            fx, fy = float(fl(x)), float(fl(y))
            if fx == fy == 0:
                r = (x if not x >> 31 else y) if is_max else (x if x >> 31 else y)
            else:
                r = x if (fx > fy) == is_max and fx != fy else y
        out[i] = r
    return out


def same_f32(got, want):
    """Bitwise, with any two NaNs equal."""
    g, w = np.asarray(got, U32), np.asarray(want, U32)
    gn, wn = np.isnan(fl(g)), np.isnan(fl(w))
    return bool(np.all((g == w) | (gn & wn)))


def ref_dot2acc(a, b, acc):
    out = np.empty(len(a), U32)
    for i in range(len(a)):
        ha = np.array([a[i]], U32).view(np.float16)
        hb = np.array([b[i]], U32).view(np.float16)
        t = Fraction(float(fl(acc[i]))) + Fraction(float(ha[0])) * Fraction(float(hb[0]))
        t = Fraction(float(F32(float(t))))  # small exact values in this test: rounding is exact
        t += Fraction(float(ha[1])) * Fraction(float(hb[1]))
        out[i] = bits(F32(float(t)))
    return out


SPECIAL = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FA00000, 0x00000001, 0x80400000,
           0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x00800000]


def _floats(rng):
    x = bits(F32(rng.standard_normal(N) * 8))
    pick = rng.integers(0, 4, N) == 0
    return np.where(pick, np.array(SPECIAL, U32)[rng.integers(0, len(SPECIAL), N)], x).astype(U32)


def ftz(x):
    """The testbed's kernels run with MODE.FP_DENORM f32 = 0: f32 denormals flush to signed zero."""
    x = np.asarray(x, U32)
    return np.where((x & 0x7F800000) == 0, x & U32(0x80000000), x).astype(U32)


def test_vopd_float_pairs(tb):
    rng = np.random.default_rng(1)
    a0, b0, c0, d0 = (_floats(rng) for _ in range(4))
    a, b, c, d = (ftz(x) for x in (a0, b0, c0, d0))
    K = 0x40400000  # 3.0
    k = np.full(N, K, U32)
    with np.errstate(all="ignore"):
        cases = [
            ("v_dual_add_f32 v6, v1, v2 :: v_dual_mul_f32 v7, v4, v3", bits(fl(a) + fl(b)), bits(fl(d) * fl(c))),
            ("v_dual_sub_f32 v6, v1, v2 :: v_dual_subrev_f32 v7, v4, v3", bits(fl(a) - fl(b)), bits(fl(c) - fl(d))),
            (f"v_dual_fmaak_f32 v6, v1, v2, {K:#x} :: v_dual_fmamk_f32 v7, v4, {K:#x}, v3",
             ref_fma(a, b, k), ref_fma(d, k, c)),
            ("v_dual_max_f32 v6, v1, v2 :: v_dual_min_f32 v7, v4, v3",
             ref_maxmin(a, b, True), ref_maxmin(d, c, False)),
            ("v_dual_min_f32 v6, v1, v2 :: v_dual_max_f32 v7, v4, v3",
             ref_maxmin(a, b, False), ref_maxmin(d, c, True)),
            ("v_dual_mul_dx9_zero_f32 v6, v1, v2 :: v_dual_fmac_f32 v7, v4, v3",
             np.where((fl(a) == 0) | (fl(b) == 0), U32(0), bits(fl(a) * fl(b))), ref_fma(d, c, d)),
            ("v_dual_fmac_f32 v6, v1, v2 :: v_dual_mul_dx9_zero_f32 v7, v4, v3",
             ref_fma(a, b, c), np.where((fl(d) == 0) | (fl(c) == 0), U32(0), bits(fl(d) * fl(c)))),
            ("v_dual_subrev_f32 v6, 2.0, v2 :: v_dual_add_f32 v7, -1.0, v3",
             bits(fl(b) - F32(2)), bits(fl(c) + F32(-1))),
        ]
    got = run4(tb, [c_[0] for c_ in cases], a0, b0, c0, d0)
    for i, (op, wx, wy) in enumerate(cases):
        assert same_f32(got[i, 0], ftz(wx)), op
        assert same_f32(got[i, 1], ftz(wy)), op


def test_vopd_reads_before_writes_and_int_ops(tb):
    rng = np.random.default_rng(2)
    a, b, c, d = (rng.integers(0, 1 << 32, N, dtype=np.uint64).astype(U32) for _ in range(4))
    vcc = ((VCC >> (np.arange(N) % 32)) & 1).astype(bool)
    cases = [
        # Y reads v6 which X writes: the old v6 (= c)
        ("v_dual_mov_b32 v6, v1 :: v_dual_add_nc_u32 v7, v6, v3", a, (c.astype(np.uint64) * 2).astype(U32)),
        # X reads v7 which Y writes: the old v7 (= d)
        ("v_dual_mov_b32 v6, v7 :: v_dual_mov_b32 v7, v1", d, a),
        # swap through dual moves
        ("v_dual_mov_b32 v6, v7 :: v_dual_mov_b32 v7, v6", d, c),
        ("v_dual_cndmask_b32 v6, v1, v2 :: v_dual_and_b32 v7, v4, v3", np.where(vcc, b, a), d & c),
        ("v_dual_mov_b32 v6, 0x1234 :: v_dual_lshlrev_b32 v7, v4, v3", np.full(N, 0x1234, U32),
         (c.astype(np.uint64) << (d & 31).astype(np.uint64)).astype(U32)),
        ("v_dual_mov_b32 v6, -7 :: v_dual_cndmask_b32 v7, v4, v3", np.full(N, 0xFFFFFFF9, U32), np.where(vcc, c, d)),
    ]
    got = run4(tb, [c_[0] for c_ in cases], a, b, c, d)
    for i, (op, wx, wy) in enumerate(cases):
        assert np.array_equal(got[i, 0], wx), op
        assert np.array_equal(got[i, 1], wy), op


def test_vopd_dot2acc(tb):
    rng = np.random.default_rng(3)
    h = (rng.integers(-16, 16, (4, N)) / 4).astype(np.float16).view(np.uint16).astype(U32)
    a, b = h[0] | (h[1] << 16), h[2] | (h[3] << 16)
    c = bits(F32(rng.integers(-64, 64, N) / 8))
    ops = ["v_dual_dot2acc_f32_f16 v6, v1, v2 :: v_dual_mov_b32 v7, v2",
           "v_dual_mov_b32 v6, v4 :: v_dual_dot2acc_f32_f16 v7, v1, v2"]
    got = run4(tb, ops, a, b, c, c)  # v6 = v7 = c (the f32 accumulator) before each op
    assert np.array_equal(got[0, 0], ref_dot2acc(a, b, c)) and np.array_equal(got[0, 1], b)
    assert np.array_equal(got[1, 0], c) and np.array_equal(got[1, 1], ref_dot2acc(a, b, c))
