"""VOP3P packed math, dot products and fma_mix (and the VOP3/VOP2 dot relatives) against independent
per-element reference models written from the RDNA3 ISA reference (exact arithmetic with fractions, rounded
by hand), run through hand-assembled kernels; plus LLVM-IR kernels with <2 x half> math and the dot
intrinsics checked against numpy."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.llvm import compile_ir
from simgpu.testbed import Testbed

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the reference computes with inf/NaN
U32 = np.uint32
N = 256  # lanes per run (8 waves)
SPECIAL16 = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7D00, 0xFD01, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF,
             0xFBFF, 0x3C00, 0xBC00, 0x3800, 0x3C01, 0x4000, 0xC000, 0x1400]


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


def run3(tb, ops: list[str], a, b, c, d0=None) -> np.ndarray:
    """Each op with v1, v2, v3 = a, b, c and v4 = d0 (the old destination); v4 after each op."""
    d0 = np.zeros(N, U32) if d0 is None else d0
    body = ["s_load_b64 s[4:5], s[0:1], 0x0", "s_load_b64 s[6:7], s[0:1], 0x8", "s_load_b64 s[8:9], s[0:1], 0x10",
            "s_load_b64 s[10:11], s[0:1], 0x18", "s_load_b64 s[12:13], s[0:1], 0x20", "s_lshl_b32 s14, s2, 5",
            "v_add_nc_u32 v10, s14, v0", "v_lshlrev_b32 v10, 2, v10", "s_waitcnt lgkmcnt(0)",
            "global_load_b32 v1, v10, s[4:5]", "global_load_b32 v2, v10, s[6:7]", "global_load_b32 v3, v10, s[8:9]",
            "global_load_b32 v9, v10, s[12:13]", "s_waitcnt vmcnt(0)"]
    for op in ops:
        body += ["v_mov_b32 v4, v9", op, "global_store_b32 v10, v4, s[10:11]", f"s_add_u32 s10, s10, {4 * N}",
                 "s_addc_u32 s11, s11, 0"]
    body.append("s_endpgm")
    k = tb.load_asm("\n".join(body), args=5)
    out = tb.alloc(4 * N * len(ops))
    bufs = [tb.upload(np.asarray(x, U32)) for x in (a, b, c)]
    tb.launch(k, bufs + [out, tb.upload(np.asarray(d0, U32))], (N // 32,), (32,))
    return tb.download(out, U32, N * len(ops)).reshape(len(ops), N)


# ---------------------------------------------------------------------------------------------- reference arithmetic


def f16v(bits: int) -> float:
    return float(np.array(bits, np.uint16).view(np.float16))


def is_nan16(bits: int) -> bool:
    return (bits & 0x7C00) == 0x7C00 and (bits & 0x3FF) != 0


def round_f16(x) -> int:
    """Exact value (Fraction, or float inf/nan) -> f16 bits, round to nearest even."""
    if isinstance(x, float):
        return int(np.array(x, np.float16).view(np.uint16))
    if x == 0:
        return 0
    sign = 0x8000 if x < 0 else 0
    m = abs(x)
    e = max(math.floor(math.log2(m)), -14)
    if m >= 2 ** (e + 1):
        e += 1
    if m < 2 ** e and e > -14:
        e -= 1
    q = m / Fraction(2) ** (e - 10)  # significand in units of the last place
    n = math.floor(q)
    r = q - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2):
        n += 1
    v = Fraction(n) * Fraction(2) ** (e - 10)
    if v >= 65536:
        return sign | 0x7C00
    return sign | int(np.array(float(v), np.float16).view(np.uint16))


def exact16(bits: int):
    v = f16v(bits)
    return Fraction(v) if math.isfinite(v) else v


def ref_fma16(a: int, b: int, c: int) -> int:
    xa, xb, xc = exact16(a), exact16(b), exact16(c)
    if any(isinstance(x, float) for x in (xa, xb, xc)):
        return round_f16(float(xa) * float(xb) + float(xc))
    r = xa * xb + xc
    if r == 0:  # exact zero: sign per IEEE (-0 only when both addends are -0)
        return 0x8000 if (xa * xb == 0 and (a ^ b) & 0x8000 and c & 0x8000) else 0
    return round_f16(r)


def ref_max16(a: int, b: int, is_max: bool) -> int:
    """v_max_f16/v_min_f16 in IEEE mode."""
    def snan(x):
        return is_nan16(x) and not x & 0x200
    if snan(a):
        return a | 0x200
    if snan(b):
        return b | 0x200
    if is_nan16(a):
        return b
    if is_nan16(b):
        return a
    va, vb = f16v(a), f16v(b)
    if va == vb == 0:
        neg_a = bool(a & 0x8000)
        return (b if neg_a else a) if is_max else (a if neg_a else b)
    return a if (va > vb) == is_max and va != vb else b


def canon(bits: int) -> int:
    """NaN payloads aside: compare any NaN as one value."""
    return 0x7E00 if is_nan16(bits) else bits


# ---------------------------------------------------------------------------------------------- packed f16


def halves(word: int, osel: int, oshi: int, nlo: int, nhi: int, flt: bool) -> tuple[int, int]:
    lo = (word >> (16 * osel)) & 0xFFFF
    hi = (word >> (16 * oshi)) & 0xFFFF
    if flt:
        lo ^= 0x8000 * nlo
        hi ^= 0x8000 * nhi
    return lo, hi


def _mods_text(osel, oshi, nlo, nhi, n):
    def arr(x):
        return "[" + ",".join(str((x >> i) & 1) for i in range(n)) + "]"
    return f" op_sel:{arr(osel)} op_sel_hi:{arr(oshi)} neg_lo:{arr(nlo)} neg_hi:{arr(nhi)}"


F16_OPS = {
    "v_pk_add_f16": (2, lambda x, y: round_f16(float(np.float16(f16v(x)) + np.float16(f16v(y))))),
    "v_pk_mul_f16": (2, lambda x, y: round_f16(float(np.float16(f16v(x)) * np.float16(f16v(y))))),
    "v_pk_fma_f16": (3, ref_fma16),
    "v_pk_max_f16": (2, lambda x, y: ref_max16(x, y, True)),
    "v_pk_min_f16": (2, lambda x, y: ref_max16(x, y, False)),
}


def _clamp16(bits: int) -> int:
    if is_nan16(bits):
        return 0
    v = f16v(bits)  # -0 stays -0, as in the shared VALU executor's clamp (unverified on hardware)
    return bits if v == 0 else 0 if v < 0 else 0x3C00 if v >= 1 else bits


def _draw16(rng, n):
    pool = np.array(SPECIAL16, np.uint32)
    pick = rng.integers(0, 3, n)
    return np.where(pick == 0, pool[rng.integers(0, len(pool), n)], rng.integers(0, 1 << 16, n)).astype(U32)


def _words(rng):
    return (_draw16(rng, N) | (_draw16(rng, N) << 16)).astype(U32)


@pytest.mark.parametrize("name", list(F16_OPS))
def test_pk_f16_ops(tb, name):
    nsrc, fn = F16_OPS[name]
    rng = np.random.default_rng(hash(name) % 1000)
    a, b, c = _words(rng), _words(rng), _words(rng)
    mods = [(0, 7, 0, 0, 0)] + [tuple(int(x) for x in rng.integers(0, 8, 4)) + (int(i % 2),) for i in range(5)]
    srcs = ["v1", "v2", "v3"][:nsrc]
    ops = [f"{name} v4, {', '.join(srcs)}" + _mods_text(o, h, nl, nh, nsrc) + (" clamp" if cl else "")
           for o, h, nl, nh, cl in mods]
    got = run3(tb, ops, a, b, c)
    for i, (o, h, nl, nh, cl) in enumerate(mods):
        for lane in range(N):
            hs = [halves(int(w[lane]), (o >> j) & 1, (h >> j) & 1, (nl >> j) & 1, (nh >> j) & 1, True)
                  for j, w in enumerate((a, b, c)[:nsrc])]
            want = [fn(*[x[k] for x in hs]) for k in (0, 1)]
            if cl:
                want = [_clamp16(x) for x in want]
            g = int(got[i, lane])
            assert [canon(g & 0xFFFF), canon(g >> 16)] == [canon(x) for x in want], (ops[i], lane, hs)


def _sat(v, lo, hi, clamp):
    return max(lo, min(hi, v)) if clamp else v


def _s16(x):
    return x - 0x10000 if x & 0x8000 else x


INT_OPS = {  # name -> (sources, signed, fn(x, y[, z]) exact, saturates with clamp)
    "v_pk_add_u16": (2, False, lambda x, y: x + y, True),
    "v_pk_add_i16": (2, True, lambda x, y: x + y, True),
    "v_pk_sub_u16": (2, False, lambda x, y: x - y, True),
    "v_pk_sub_i16": (2, True, lambda x, y: x - y, True),
    "v_pk_mul_lo_u16": (2, False, lambda x, y: x * y, False),
    "v_pk_mad_u16": (3, False, lambda x, y, z: x * y + z, True),
    "v_pk_mad_i16": (3, True, lambda x, y, z: x * y + z, True),
    "v_pk_max_u16": (2, False, max, False),
    "v_pk_max_i16": (2, True, max, False),
    "v_pk_min_u16": (2, False, min, False),
    "v_pk_min_i16": (2, True, min, False),
    "v_pk_lshlrev_b16": (2, False, lambda s, v: v << (s & 15), False),
    "v_pk_lshrrev_b16": (2, False, lambda s, v: v >> (s & 15), False),
    "v_pk_ashrrev_i16": (2, True, lambda s, v: v >> (s & 15), False),
}


@pytest.mark.parametrize("name", list(INT_OPS))
def test_pk_int_ops(tb, name):
    nsrc, signed, fn, sat = INT_OPS[name]
    rng = np.random.default_rng(hash(name) % 1000)
    edge = np.array([0, 1, 0x7FFF, 0x8000, 0xFFFF, 0x8001, 15, 16, 17], np.uint32)
    def draw():
        lo = np.where(rng.integers(0, 2, N) == 0, edge[rng.integers(0, len(edge), N)], rng.integers(0, 1 << 16, N))
        hi = np.where(rng.integers(0, 2, N) == 0, edge[rng.integers(0, len(edge), N)], rng.integers(0, 1 << 16, N))
        return (lo | (hi << 16)).astype(U32)
    a, b, c = draw(), draw(), draw()
    mods = [(0, 7, 0), (5, 2, 1), (3, 7, 0), (0, 7, 1), (6, 1, 1)]
    srcs = ["v1", "v2", "v3"][:nsrc]
    ops = [f"{name} v4, {', '.join(srcs)}" + _mods_text(o, h, 0, 0, nsrc).split(" neg_lo")[0]
           + (" clamp" if cl and sat else "") for o, h, cl in mods]
    got = run3(tb, ops, a, b, c)
    lo, hi = (-0x8000, 0x7FFF) if signed else (0, 0xFFFF)
    conv = _s16 if signed else (lambda x: x)
    for i, (o, h, cl) in enumerate(mods):
        for lane in range(N):
            hs = [halves(int(w[lane]), (o >> j) & 1, (h >> j) & 1, 0, 0, False) for j, w in enumerate((a, b, c)[:nsrc])]
            want = [_sat(fn(*[conv(x[k]) for x in hs]), lo, hi, cl and sat) & 0xFFFF for k in (0, 1)]
            g = int(got[i, lane])
            assert [g & 0xFFFF, g >> 16] == want, (ops[i], lane, hs)


def test_packed_inline_constants_and_literal(tb):
    """A float inline constant is f16 bits in the low half, 0 in the high half; integers sign-extend to 32
    bits; a literal is the whole 32-bit word (as LLVM encodes <1.0, 0.0>, <-1, -1>, ...)."""
    a = np.full(N, 0x40003C00, U32)  # <1.0, 2.0>
    ops = ["v_pk_add_f16 v4, v1, 1.0", "v_pk_add_f16 v4, v1, 1.0 op_sel_hi:[1,0]",
           "v_pk_add_f16 v4, v1, 1.0 op_sel:[0,1] op_sel_hi:[1,0]", "v_pk_add_u16 v4, v1, -1",
           "v_pk_add_u16 v4, v1, 5", "v_pk_fma_f16 v4, v1, 0x44004200, v1", "v_pk_mul_f16 v4, -2.0, v1"]
    got = run3(tb, ops, a, a, a)
    assert list(got[:, 0]) == [0x40004000, 0x42004000, 0x42003C00, 0x3FFF3BFF, 0x40003C05, 0x49004400,
                               0x0000C000]


def test_pk_min_max_of_two_quiet_nans_is_s0(tb):
    """Each half is v_max_f16 / v_min_f16 (the reference: V_PK_MAX_F16 is `v_max_f16(S0[31:16], S1[31:16])` & co.),
    whose pseudo-code (IEEE mode) tests isQuietNAN(S1) first: of two quiet NaNs the result is S0's."""
    a, b = np.full(N, 0x7E01FE03, U32), np.full(N, 0xFE027E04, U32)
    got = run3(tb, ["v_pk_max_f16 v4, v1, v2", "v_pk_min_f16 v4, v2, v1"], a, b, b)
    assert list(got[:, 0]) == [0x7E01FE03, 0xFE027E04]


# ---------------------------------------------------------------------------------------------- dot products


def _bytes(x: int, bits: int, signed: bool) -> list[int]:
    m = (1 << bits) - 1
    el = [(x >> (k * bits)) & m for k in range(32 // bits)]
    return [e - (1 << bits) if signed and e >> (bits - 1) else e for e in el]


@given(st.lists(st.integers(0, (1 << 32) - 1), min_size=3 * N, max_size=3 * N))
@settings(max_examples=3, deadline=None)
def test_int_dots(tb, words):
    a, b, c = (np.array(words[i * N:(i + 1) * N], U32) for i in range(3))
    a[:8], b[:8], c[:8] = 0x80808080, 0x7F7F7F7F, [0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0, 1, 2, 3, 4]
    cases = [(n, bits, s, sa, sb, cl) for n, bits, s in (("v_dot4_i32_iu8", 8, True), ("v_dot8_i32_iu4", 4, True),
                                                     ("v_dot4_u32_u8", 8, False), ("v_dot8_u32_u4", 4, False))
             for sa, sb, cl in ((1, 1, 0), (0, 1, 1), (1, 0, 0), (0, 0, 1), (1, 1, 1))
             if s or (sa, sb) == (1, 1)]
    ops = [f"{n} v4, v1, v2, v3" + (f" neg_lo:[{sa},{sb},0]" if s else "") + (" clamp" if cl else "")
           for n, bits, s, sa, sb, cl in cases]
    got = run3(tb, ops, a, b, c)
    for i, (_, bits, s, sa, sb, cl) in enumerate(cases):
        for lane in range(N):
            ea, eb = _bytes(int(a[lane]), bits, s and sa), _bytes(int(b[lane]), bits, s and sb)
            acc = int(c[lane])
            if s:
                acc = _s16(acc >> 16) * 65536 + (acc & 0xFFFF)  # i32 view
            acc += sum(x * y for x, y in zip(ea, eb, strict=True))
            if cl:
                acc = max(-(1 << 31), min((1 << 31) - 1, acc)) if s else max(0, min((1 << 32) - 1, acc))
            assert int(got[i, lane]) == acc & 0xFFFFFFFF, (ops[i], lane)


def f32_bits(x) -> int:
    return int(np.array(x, np.float32).view(np.uint32))


def round_f32(x) -> float:
    """Exact Fraction -> nearest f32 (ties to even), via the two neighbours of the f64 rounding."""
    if abs(x) >= Fraction(2) ** 128 - Fraction(2) ** 103:  # max + half an ulp: overflows to inf
        return math.copysign(math.inf, x)
    f = np.float32(float(x))
    cands = [f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf))]
    cands = [c for c in cands if np.isfinite(c)]
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - x), int(np.array(c).view(np.uint32)) & 1))
    return float(best)


def test_dot2_f32_f16_and_bf16(tb):
    rng = np.random.default_rng(9)
    vals = (rng.integers(-64, 64, (3, N)) / 8).astype(np.float32)
    a16 = (vals[0].astype(np.float16).view(np.uint16).astype(U32) * 0x10001).astype(U32)
    a16 ^= (rng.integers(0, 2, N) << 31).astype(U32)
    b16 = _words(rng) & U32(0x3FFF3FFF)  # finite halves
    c32 = np.array([f32_bits(x) for x in rng.standard_normal(N) * 100], U32)
    abf = (a16 & U32(0x7FFF7FFF))  # as bf16 bits: small/large magnitudes
    ops = ["v_dot2_f32_f16 v4, v1, v2, v3", "v_dot2_f32_f16 v4, v1, v2, v3 neg_lo:[1,0,1] neg_hi:[0,1,0]",
           "v_dot2_f32_f16 v4, v1, v2, v3 op_sel:[1,0,0] op_sel_hi:[0,1,1] clamp",
           "v_dot2_f32_bf16 v4, v1, v2, v3", "v_dot2_f32_bf16 v4, v1, v2, v3 neg_lo:[0,1,0] neg_hi:[1,0,0]"]
    got = run3(tb, ops, a16, b16, c32)
    got_bf = run3(tb, ops[3:], abf, b16, c32)
    def conv16(h):
        return Fraction(f16v(h))
    def convbf(h):
        return Fraction(float(np.array(h << 16, np.uint32).view(np.float32)))
    specs = [(conv16, 0, 3, 0, 0, 0, 16), (conv16, 0, 3, 5, 2, 0, 16), (conv16, 1, 2, 0, 0, 1, 16),
             (convbf, 0, 3, 0, 0, 0, 0), (convbf, 0, 3, 2, 1, 0, 0)]
    for i, (conv, osel, oshi, nlo, nhi, cl, kind) in enumerate(specs):
        res = got[i] if kind else got_bf[i - 3]
        aa = a16 if kind else abf
        for lane in range(N):
            ha = halves(int(aa[lane]), osel & 1, oshi & 1, nlo & 1, nhi & 1, True)
            hb = halves(int(b16[lane]), (osel >> 1) & 1, (oshi >> 1) & 1, (nlo >> 1) & 1, (nhi >> 1) & 1, True)
            cv = Fraction(float(np.array(c32[lane]).view(np.float32))) * (-1 if (nlo >> 2) & 1 else 1)
            acc = round_f32(cv + conv(ha[0]) * conv(hb[0]))  # the ISA pseudo-code: two f32 fused steps
            acc = round_f32(Fraction(acc) + conv(ha[1]) * conv(hb[1]))
            if cl:
                acc = min(max(acc, 0.0), 1.0)
            assert int(res[lane]) == f32_bits(acc), (ops[i], lane)


def test_dot2_f16_f16_vop3_and_vop2_relatives(tb):
    rng = np.random.default_rng(12)
    a = (rng.integers(-16, 16, (2, N)) / 4).astype(np.float16).view(np.uint16).astype(U32)
    b = (rng.integers(-16, 16, (2, N)) / 4).astype(np.float16).view(np.uint16).astype(U32)
    c = (rng.integers(-16, 16, (2, N)) / 4).astype(np.float16).view(np.uint16).astype(U32)
    wa, wb, wc = (x[0] | (x[1] << 16) for x in (a, b, c))
    c32 = np.array([f32_bits(x) for x in rng.integers(-100, 100, N) / 8], U32)
    ops = ["v_dot2_f16_f16 v4, v1, v2, v3", "v_dot2_f16_f16 v4, v1, v2, v3 op_sel:[0,0,1,1]",
           "v_dot2_f16_f16 v4, -v1, v2, v3", "v_dot2acc_f32_f16 v4, v1, v2", "v_pk_fmac_f16 v4, v1, v2"]
    got = run3(tb, ops[:3], wa, wb, wc, d0=np.full(N, 0xAAAABBBB, U32))
    got2 = run3(tb, ops[3:], wa, wb, wc, d0=c32)
    got3 = run3(tb, ops[4:], wa, wb, wc, d0=wc)
    fa, fb, fc = (x.astype(np.uint16).view(np.float16).astype(np.float64) for x in (a, b, c))
    dot = fa[0] * fb[0] + fa[1] * fb[1]  # exact: small quarter-integers
    lo = (dot + fc[0]).astype(np.float16).view(np.uint16).astype(U32)
    assert np.array_equal(got[0], lo | U32(0xAAAA0000))
    hi = (dot + fc[1]).astype(np.float16).view(np.uint16).astype(U32)
    assert np.array_equal(got[1], (hi << 16) | 0xBBBB)
    assert np.array_equal(got[2] & 0xFFFF, (-dot + fc[0]).astype(np.float16).view(np.uint16))
    assert np.array_equal(got2[0], (dot + c32.view(np.float32)).astype(np.float32).view(U32))
    pk = [(fa[k] * fb[k] + fc[k]).astype(np.float16).view(np.uint16).astype(U32) for k in (0, 1)]
    assert np.array_equal(got3[0], pk[0] | (pk[1] << 16))


def test_fma_mix(tb):
    rng = np.random.default_rng(13)
    a = _words(rng) & U32(0xBFFFBFFF)
    b32 = np.array([f32_bits(x) for x in rng.standard_normal(N)], U32)
    c = _words(rng) & U32(0x3FFF3FFF)
    cases = [("v_fma_mix_f32", 7, 0, 0, 0), ("v_fma_mix_f32", 5, 1, 0, 0), ("v_fma_mix_f32", 5, 5, 1, 4),
             ("v_fma_mixlo_f16", 5, 4, 0, 0), ("v_fma_mixhi_f16", 5, 1, 2, 1), ("v_fma_mix_f32", 0, 0, 0, 0)]
    def src(j, nl, nh):
        t = f"|v{j + 1}|" if (nh >> j) & 1 else f"v{j + 1}"
        return "-" + t if (nl >> j) & 1 else t
    ops = [f"{n} v4, {src(0, nl, nh)}, {src(1, nl, nh)}, {src(2, nl, nh)} "
           f"op_sel:[{osel & 1},{osel >> 1 & 1},{osel >> 2}] op_sel_hi:[{hi & 1},{hi >> 1 & 1},{hi >> 2}]"
           for n, hi, osel, nl, nh in cases]
    d0 = np.full(N, 0x12345678, U32)
    got = run3(tb, ops, a, b32, c, d0=d0)
    for i, (n, hi, osel, nl, nh) in enumerate(cases):
        for lane in range(N):
            xs = []
            for j, w in enumerate((a, b32, c)):
                word = int(w[lane])
                if (hi >> j) & 1:
                    v = f16v((word >> (16 * ((osel >> j) & 1))) & 0xFFFF)
                else:  # f32 sources: MODE.FP_DENORM f32 = 0 in the testbed flushes denormals
                    v = float(np.array(word, np.uint32).view(np.float32))
                    v = math.copysign(0.0, v) if abs(v) < 2.0 ** -126 else v
                if (nh >> j) & 1:
                    v = abs(v)
                xs.append(-v if (nl >> j) & 1 else v)
            if not all(math.isfinite(x) for x in xs):
                continue
            exact = Fraction(xs[0]) * Fraction(xs[1]) + Fraction(xs[2])
            g = int(got[i, lane])
            if n == "v_fma_mix_f32":
                r = round_f32(exact)
                if abs(r) < 2.0 ** -126:  # flushed result (sign of an exact zero is not modelled here)
                    assert g & 0x7FFFFFFF == 0, (ops[i], lane)
                    continue
                assert g == f32_bits(r), (ops[i], lane)
            else:
                # two roundings: fma in f32, then f32_to_f16 (see test_fma_mix_rounds_to_f32_then_f16)
                r = round_f16(Fraction(round_f32(exact))) if exact != 0 else \
                    int(g >> (16 if n.endswith("hi_f16") else 0)) & 0xFFFF
                want = (0x12340000 | r) if n == "v_fma_mixlo_f16" else (r << 16) | 0x5678
                assert g == want, (ops[i], lane)


def test_fma_mix_rounds_to_f32_then_f16(tb):
    # RDNA3 ISA 16.10 V_FMA_MIXLO_F16 / V_FMA_MIXHI_F16: "D0[15:0].f16 = f32_to_f16(fma(in[0], in[1], in[2]))"
    # with f32 `in`: the fma rounds to f32, then the conversion to f16. LLVM relies on that: llc-19 selects
    # v_fma_mixlo_f16 for `fptrunc (fmul float %a, %b) to half`. 0x40b7cd2e * 0x42072554 is 194.0625 in
    # f32, a tie between the f16 values 194.0 and 194.125: nearest-even gives 194.0 (0x5a10); a single
    # rounding of the exact product (a hair above the tie) would give 194.125 (0x5a11).
    a = np.full(N, 0x40B7CD2E, U32)
    b = np.full(N, 0x42072554, U32)
    c = np.full(N, 0x80000000, U32)
    ops = ["v_fma_mixlo_f16 v4, v1, v2, v3", "v_fma_mixhi_f16 v4, v1, v2, v3", "v_fma_mix_f32 v4, v1, v2, v3"]
    got = run3(tb, ops, a, b, c, d0=np.full(N, 0x12345678, U32))
    assert (got[0] == 0x12345A10).all() and (got[1] == 0x5A105678).all()
    assert (got[2].view(np.float32) == np.float32(194.0625)).all()


# ---------------------------------------------------------------------------------------------- LLVM IR

PK_IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.amdgcn.fdot2(<2 x half>, <2 x half>, float, i1)
declare i32 @llvm.amdgcn.sdot4(i32, i32, i32, i1)
declare i32 @llvm.amdgcn.udot4(i32, i32, i32, i1)
declare <2 x half> @llvm.fma.v2f16(<2 x half>, <2 x half>, <2 x half>)
declare <2 x half> @llvm.maxnum.v2f16(<2 x half>, <2 x half>)

define amdgpu_kernel void @pk(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %out) {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %ia = getelementptr <2 x half>, ptr addrspace(1) %pa, i32 %l
  %ib = getelementptr <2 x half>, ptr addrspace(1) %pb, i32 %l
  %a = load <2 x half>, ptr addrspace(1) %ia
  %b = load <2 x half>, ptr addrspace(1) %ib
  %s = fadd <2 x half> %a, %b
  %m = fmul <2 x half> %s, <half 0xH4000, half 0xH3800>
  %f = call <2 x half> @llvm.fma.v2f16(<2 x half> %a, <2 x half> %b, <2 x half> %m)
  %x = call <2 x half> @llvm.maxnum.v2f16(<2 x half> %f, <2 x half> %a)
  %ai = bitcast <2 x half> %a to i32
  %bi = bitcast <2 x half> %b to i32
  %d = call float @llvm.amdgcn.fdot2(<2 x half> %a, <2 x half> %b, float 1.0, i1 0)
  %s4 = call i32 @llvm.amdgcn.sdot4(i32 %ai, i32 %bi, i32 7, i1 0)
  %u4 = call i32 @llvm.amdgcn.udot4(i32 %ai, i32 %bi, i32 %l, i1 0)
  %xi = bitcast <2 x half> %x to i32
  %di = bitcast float %d to i32
  %v0 = insertelement <4 x i32> undef, i32 %xi, i32 0
  %v1 = insertelement <4 x i32> %v0, i32 %di, i32 1
  %v2 = insertelement <4 x i32> %v1, i32 %s4, i32 2
  %v3 = insertelement <4 x i32> %v2, i32 %u4, i32 3
  %o = getelementptr <4 x i32>, ptr addrspace(1) %out, i32 %l
  store <4 x i32> %v3, ptr addrspace(1) %o
  ret void
}
"""


def test_llvm_packed_and_dot_intrinsics(tb):
    k = tb.load(compile_ir(PK_IR))["pk"]
    rng = np.random.default_rng(14)
    a = (rng.integers(-32, 32, (64, 2)) / 4).astype(np.float16)
    b = (rng.integers(-32, 32, (64, 2)) / 4).astype(np.float16)
    out = tb.alloc(64 * 16)
    tb.launch(k, [tb.upload(a), tb.upload(b), out], (1,), (64,))
    got = tb.download(out, U32, 256).reshape(64, 4)
    m = (a + b) * np.array([2.0, 0.5], np.float16)
    f = (a.astype(np.float64) * b + m).astype(np.float16)
    assert np.array_equal(got[:, 0].copy().view(np.float16).reshape(64, 2), np.maximum(f, a))
    assert np.array_equal(got[:, 1].copy().view(np.float32), (a.astype(np.float32) * b).sum(axis=1) + 1)
    ab, bb = a.view(np.int8).reshape(64, 4).astype(np.int64), b.view(np.int8).reshape(64, 4).astype(np.int64)
    assert np.array_equal(got[:, 2].copy().view(np.int32), (ab * bb).sum(axis=1) + 7)
    ub, vb = a.view(np.uint8).reshape(64, 4).astype(np.int64), b.view(np.uint8).reshape(64, 4).astype(np.int64)
    assert np.array_equal(got[:, 3], ((ub * vb).sum(axis=1) + np.arange(64)) & 0xFFFFFFFF)
