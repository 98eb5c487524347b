"""gfx950's (CDNA4) conversions as LLVM 22 emits them for the llvm.amdgcn.cvt.scalef32.* / cvt.sr.* / ashr.pk.*
intrinsics (tests/data/kernels/cdna4_cvt.ll, compiled by llvmlite at test time as test_cdna4_corpus.py does), on the
engine and over PM4 and AQL, against references from ml_dtypes (the formats' rounding) and the pseudo-code's
definitions written out here (the scale's exponent, byte / word / half placement, the stochastic dither and v_prng_b32
between packed elements; docs/shader.md states the readings)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from simgpu.shader.sem import minifloat as mf
from simgpu.shader.vector import scalef32
from tests.simgpu.shader import test_cdna4_corpus as cdna4
from tests.simgpu.shader.test_cvt8 import dither, f32_inputs, ref_decode

U32, F32, F16, F64 = np.uint32, np.float32, np.float16, np.float64
N = 512  # elements: two workgroups of 256
NAME = "cdna4_cvt"
FP8, BF8, FP4 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float4_e2m1fn
FP6, BF6 = ml_dtypes.float6_e2m3fn, ml_dtypes.float6_e3m2fn
MAN = {FP8: 3, BF8: 2, FP4: 1, FP6: 3, BF6: 2}


@np.errstate(all="ignore")
def enc(dt, x) -> np.ndarray:
    """ml_dtypes' round-to-nearest-even codes of float64 values (the fp6/fp4 NaN, which ml_dtypes leaves unsettled,
    as +0: sem.minifloat's reading)."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        codes = x.astype(dt).view(np.uint8).astype(U32)
    return np.where(np.isnan(x), U32(0), codes) if dt in (FP4, FP6, BF6) else codes


def dec(dt, codes) -> np.ndarray:
    """ml_dtypes' values of codes (the format's low bits of each)."""
    if dt in (FP4, FP6, BF6):
        return _small(dt, codes)
    return ref_decode(np.asarray(codes, U32) & U32(0xFF), dt)


def _small(dt, codes):
    return (np.asarray(codes, U32) & U32((1 << {FP4: 4}.get(dt, 6)) - 1)).astype(np.uint8).view(dt).astype(F64)


def factor(scale_word) -> np.ndarray:
    """2**(E - 127), E the f32 scale's exponent field (its sign and mantissa ignored)."""
    return np.exp2(((np.asarray(scale_word, U32) >> U32(23)) & U32(0xFF)).astype(F64) - 127)


def prng(x):
    return cdna4.prng(np.asarray(x, U32))


def f16_of(bits) -> np.ndarray:
    return (np.asarray(bits, U32) & U32(0xFFFF)).astype(np.uint16).view(F16).astype(F32)


def bf16_of(bits) -> np.ndarray:
    return ((np.asarray(bits, U32) & U32(0xFFFF)) << U32(16)).view(F32)


def to_f16(x) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(x, F64).astype(F16).view(np.uint16).astype(U32)


def to_bf16(x) -> np.ndarray:
    with np.errstate(all="ignore"):
        nan = (np.asarray(x, F32).view(U32) >> U32(16)) | U32(0x40)  # a NaN: quieted, sign and top payload kept
        return np.where(np.isnan(x), nan, cdna4.bf16_rne(np.nan_to_num(x, nan=0.0)))


def to_f32(x) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(x, F64).astype(F32).view(U32)


def put(old, value, shift: int, width: int) -> np.ndarray:
    keep = U32(~(((1 << width) - 1) << shift) & 0xFFFFFFFF)
    return (np.asarray(old, U32) & keep) | (np.asarray(value, U32) << U32(shift))


def pack6(codes: list[np.ndarray]) -> np.ndarray:
    """32 six-bit codes per element, code k at bit 6k of six dwords: [N, 6]."""
    acc = sum(np.asarray(c, object) << (6 * k) for k, c in enumerate(codes))
    return np.array([[(int(v) >> (32 * d)) & 0xFFFFFFFF for d in range(6)] for v in acc], U32)


def unpack6(words: np.ndarray) -> list[np.ndarray]:
    whole = [sum(int(words[i, d]) << (32 * d) for d in range(6)) for i in range(len(words))]
    return [np.array([(v >> (6 * k)) & 63 for v in whole], U32) for k in range(32)]


# ---------------------------------------------------------------------------------------------- inputs


@np.errstate(all="ignore")  # signaling NaNs among the inputs: their casts warn
def inputs(seed: int) -> np.ndarray:
    """[N, 48] input words (the layout cdna4_cvt.ll documents). Scales 2**-8 .. 2**8 (and the extreme exponent fields
    1 and 254 in a few elements) with random sign and mantissa bits; values in the formats' ranges times the scale;
    16-bit pairs likewise in the even elements, random bits in the odd ones; in cdna4_cvt6 the even elements hold f32
    values, the odd ones f16 pairs."""
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 2**32, (N, 48), dtype=np.uint64).astype(U32)
    e = rng.integers(127 - 8, 127 + 9, N)
    e[:4] = [1, 254, 127, 127]
    w[:, 4] = (e.astype(U32) << U32(23)) | (w[:, 4] & U32(0x807FFFFF))
    f = factor(w[:, 4])
    base = rng.choice(f32_inputs(mf.FP8, 4000, seed), (N, 2)).astype(F64)
    wide = rng.choice(f32_inputs(mf.BF8, 4000, seed), N).astype(F64)
    base[1::2, 1] = wide[1::2]
    with np.errstate(all="ignore"):
        w[:, 0:2] = (base * f[:, None]).astype(F32).view(U32)
        small = rng.choice(f32_inputs(mf.FP6, 2000, seed), (N, 32)).astype(F64)
        w[0::2, 12:44] = (small[0::2] * f[0::2, None]).astype(F32).view(U32)
        halves = (rng.choice(f32_inputs(mf.FP8, 2000, seed), (N, 64)) * f[:, None]).astype(F16).view(np.uint16)
    pairs = halves[:, 0::2].astype(U32) | halves[:, 1::2].astype(U32) << U32(16)
    w[1::2, 12:44] = pairs[1::2, :32]
    w[0::2, 12:17] = pairs[0::2, :5]  # cdna4_cvt's 16-bit pairs: value pairs in the even elements
    bf = (rng.choice(f32_inputs(mf.BF8, 2000, seed), (N, 2)) * f[:, None]).astype(F32).view(U32) >> U32(16)
    w[0::2, 13] = (bf[:, 0] | bf[:, 1] << U32(16))[0::2]
    w[0::2, 16] = (bf[:, 1] | bf[:, 0] << U32(16))[0::2]
    return w


# ---------------------------------------------------------------------------------------------- references


@np.errstate(all="ignore")
def ref_cvt(w: np.ndarray) -> np.ndarray:
    a, b, rnd, old, codes = w[:, 0].view(F32), w[:, 1].view(F32), w[:, 2], w[:, 3], w[:, 5]
    f = factor(w[:, 4])
    byte = [(codes >> U32(8 * k)) & U32(0xFF) for k in range(4)]
    nib = [(codes >> U32(4 * k)) & U32(0xF) for k in range(8)]

    def e(dt, x, r=None):  # encode f32 values (dithered first when r is given), divided by the scale
        x = np.asarray(x, F32)
        if r is not None:
            x = dither(x, r, MAN[dt])
        return enc(dt, x.astype(F64) / f)

    def d(dt, c):
        return dec(dt, c) * f

    out = np.zeros((N, 24), U32)
    out[:, 0] = e(FP8, a) | e(FP8, b) << U32(8) | (e(BF8, a) | e(BF8, b) << U32(8)) << U32(16)
    out[:, 1] = put(put(old, e(FP8, a, rnd), 8, 8), e(BF8, b, rnd), 24, 8)
    out[:, 2] = to_f32(d(FP8, byte[2]))
    out[:, 3], out[:, 4] = to_f32(d(BF8, byte[2])), to_f32(d(BF8, byte[3]))
    out[:, 5] = put(old, e(FP4, a) | e(FP4, b) << U32(4), 8, 8)
    out[:, 6], out[:, 7] = to_f32(d(FP4, nib[2])), to_f32(d(FP4, nib[3]))
    out[:, 8] = put(old, e(FP4, a, rnd) | e(FP4, b, prng(rnd)) << U32(4), 16, 8)
    h12, b13, h14, h15, b16 = w[:, 12], w[:, 13], w[:, 14], w[:, 15], w[:, 16]
    out[:, 9] = put(old, e(FP8, f16_of(h12)) | e(FP8, f16_of(h12 >> U32(16))) << U32(8), 0, 16)
    out[:, 10] = put(old, e(BF8, bf16_of(b13)) | e(BF8, bf16_of(b13 >> U32(16))) << U32(8), 16, 16)
    out[:, 11] = put(old, e(FP8, f16_of(h14), rnd), 16, 8)
    out[:, 12] = to_f16(d(FP8, byte[2])) | to_f16(d(FP8, byte[3])) << U32(16)
    out[:, 13] = to_bf16(d(BF8, byte[0])) | to_bf16(d(BF8, byte[1])) << U32(16)
    out[:, 14] = put(old, to_f16(d(FP8, byte[3])), 16, 16)
    out[:, 15] = put(old, e(FP4, f16_of(h15)) | e(FP4, f16_of(h15 >> U32(16))) << U32(4), 24, 8)
    out[:, 16] = to_f16(d(FP4, nib[4])) | to_f16(d(FP4, nib[5])) << U32(16)
    out[:, 17] = to_bf16(d(FP4, nib[0])) | to_bf16(d(FP4, nib[1])) << U32(16)
    out[:, 18] = put(old, e(FP4, bf16_of(b16), rnd) | e(FP4, bf16_of(b16 >> U32(16)), prng(rnd)) << U32(4), 0, 8)
    return out


@np.errstate(all="ignore")
def ref_cvt6(w: np.ndarray) -> np.ndarray:
    rnd, f = w[:, 2], factor(w[:, 4])
    vals = [w[:, 12 + k].view(F32) for k in range(32)]
    halves1 = [f16_of(w[:, 12 + k // 2] >> U32(16 * (k % 2))) for k in range(32)]
    halves2 = [f16_of(w[:, 28 + k // 2] >> U32(16 * (k % 2))) for k in range(32)]

    def e(dt, x, r=None):
        x = np.asarray(x, F32)
        if r is not None:
            x = dither(x, r, MAN[dt])
        return enc(dt, x.astype(F64) / f)

    def randoms():
        r = rnd
        for _ in range(32):
            yield r
            r = prng(r)

    out = np.zeros((N, 72), U32)
    inter = [x for p in range(16) for x in (vals[p], vals[16 + p])]
    out[:, 0:6] = pack6([e(FP6, x) for x in inter])
    out[:, 6:12] = pack6([e(BF6, x, r) for x, r in zip(vals, randoms(), strict=True)])
    six = unpack6(w[:, 6:12])
    out[:, 12:44] = np.stack([to_f32(_small(FP6, c) * f) for c in six], axis=1)
    out[:, 44:50] = pack6([e(FP6, x) for x in halves1])
    bfs = [to_bf16(_small(BF6, c) * f) for c in six]
    out[:, 50:66] = np.stack([bfs[2 * k] | bfs[2 * k + 1] << U32(16) for k in range(16)], axis=1)
    out[:, 66:72] = pack6([e(FP6, x, r) for x, r in zip(halves2, randoms(), strict=True)])
    return out


@np.errstate(all="ignore")
def ref_cvt_more(w: np.ndarray) -> np.ndarray:
    rnd, old, codes, f = w[:, 2], w[:, 3], w[:, 5], factor(w[:, 4])
    byte = [(codes >> U32(8 * k)) & U32(0xFF) for k in range(4)]

    def e(dt, x, r=None):
        x = np.asarray(x, F32)
        if r is not None:
            x = dither(x, r, MAN[dt])
        return enc(dt, x.astype(F64) / f)

    def d(dt, c):
        return dec(dt, c) * f

    h12, b13, h14, h15, b16 = w[:, 12], w[:, 13], w[:, 14], w[:, 15], w[:, 16]
    out = np.zeros((N, 16), U32)
    out[:, 0] = put(old, e(FP8, bf16_of(b16)) | e(FP8, bf16_of(b16 >> U32(16))) << U32(8), 0, 16)
    out[:, 1] = put(old, e(BF8, f16_of(h12)) | e(BF8, f16_of(h12 >> U32(16))) << U32(8), 16, 16)
    out[:, 2] = put(old, e(BF8, f16_of(h14), rnd), 8, 8)
    out[:, 3] = put(old, e(FP8, bf16_of(b16), rnd), 24, 8)
    out[:, 4] = put(old, e(BF8, bf16_of(b13), rnd), 0, 8)
    out[:, 5] = to_f32(d(BF8, byte[1]))
    out[:, 6], out[:, 7] = to_f32(d(FP8, byte[0])), to_f32(d(FP8, byte[1]))
    out[:, 8] = to_f16(d(BF8, byte[0])) | to_f16(d(BF8, byte[1])) << U32(16)
    out[:, 9] = to_bf16(d(FP8, byte[2])) | to_bf16(d(FP8, byte[3])) << U32(16)
    out[:, 10] = put(old, to_f16(d(BF8, byte[0])), 0, 16)
    out[:, 11] = put(old, e(FP4, bf16_of(b16)) | e(FP4, bf16_of(b16 >> U32(16))) << U32(4), 16, 8)
    out[:, 12] = put(old, e(FP4, f16_of(h15), rnd) | e(FP4, f16_of(h15 >> U32(16)), prng(rnd)) << U32(4), 8, 8)
    return out


@np.errstate(all="ignore")
def ref_cvt6_more(w: np.ndarray) -> np.ndarray:
    rnd, f = w[:, 2], factor(w[:, 4])
    vals = [w[:, 12 + k].view(F32) for k in range(32)]

    def halves(first: int, of) -> list[np.ndarray]:
        return [of(w[:, first + k // 2] >> U32(16 * (k % 2))) for k in range(32)]

    def e(dt, x, r=None):
        x = np.asarray(x, F32)
        if r is not None:
            x = dither(x, r, MAN[dt])
        return enc(dt, x.astype(F64) / f)

    def randoms():
        r = rnd
        for _ in range(32):
            yield r
            r = prng(r)

    def pairs16(vals16: list[np.ndarray]) -> np.ndarray:
        return np.stack([vals16[2 * k] | vals16[2 * k + 1] << U32(16) for k in range(16)], axis=1)

    six = unpack6(w[:, 6:12])
    out = np.zeros((N, 128), U32)
    out[:, 0:6] = pack6([e(BF6, x) for p in range(16) for x in (vals[p], vals[16 + p])])
    out[:, 6:12] = pack6([e(FP6, x, r) for x, r in zip(vals, randoms(), strict=True)])
    out[:, 12:44] = np.stack([to_f32(_small(BF6, c) * f) for c in six], axis=1)
    out[:, 44:50] = pack6([e(BF6, x) for x in halves(12, f16_of)])
    out[:, 50:56] = pack6([e(FP6, x) for x in halves(12, bf16_of)])
    out[:, 56:62] = pack6([e(BF6, x) for x in halves(28, bf16_of)])
    out[:, 62:78] = pairs16([to_f16(_small(FP6, c) * f) for c in six])
    out[:, 78:94] = pairs16([to_bf16(_small(FP6, c) * f) for c in six])
    out[:, 94:110] = pairs16([to_f16(_small(BF6, c) * f) for c in six])
    out[:, 110:116] = pack6([e(BF6, x, r) for x, r in zip(halves(28, f16_of), randoms(), strict=True)])
    out[:, 116:122] = pack6([e(FP6, x, r) for x, r in zip(halves(12, bf16_of), randoms(), strict=True)])
    out[:, 122:128] = pack6([e(BF6, x, r) for x, r in zip(halves(28, bf16_of), randoms(), strict=True)])
    return out


def sat(x: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return (np.clip(x, lo, hi) & 0xFF).astype(U32)


@np.errstate(all="ignore")
def ref_misc(w: np.ndarray) -> np.ndarray:
    a, b, rnd, old, codes = w[:, 0].view(F32), w[:, 1].view(F32), w[:, 2], w[:, 3], w[:, 5]
    out = np.zeros((N, 8), U32)
    out[:, 0] = put(old, to_bf16(dither(a, rnd, 7)), 0, 16)
    out[:, 1] = put(old, to_f16(dither(b, rnd, 10)), 16, 16)
    shift = (rnd & U32(31)).astype(np.int64)
    sa, sb = w[:, 0].view(np.int32).astype(np.int64) >> shift, w[:, 1].view(np.int32).astype(np.int64) >> shift
    out[:, 2] = sat(sa, -128, 127) | sat(sb, -128, 127) << U32(8)
    out[:, 3] = sat(sa, 0, 255) | sat(sb, 0, 255) << U32(8)
    out[:, 4] = put(old, enc(FP8, a) | enc(FP8, b) << U32(8), 16, 16)
    out[:, 5] = put(old, enc(BF8, dither(a, rnd, 2)), 16, 8)
    out[:, 6], out[:, 7] = (to_f32(dec(BF8, (codes >> U32(s)) & U32(0xFF))) for s in (16, 24))
    return out


KERNELS = {"cdna4_cvt": (24, ref_cvt), "cdna4_cvt6": (72, ref_cvt6), "cdna4_cvt_misc": (8, ref_misc),
           "cdna4_cvt_more": (16, ref_cvt_more), "cdna4_cvt6_more": (128, ref_cvt6_more)}
# Words whose other bytes are not the old operand in LLVM 22's code: it does not tie the old value of
# llvm.amdgcn.cvt.scalef32.sr.pk.fp4.* to the destination (it writes into a register holding something else), so only
# the byte the instruction writes is compared there.
WRITTEN_ONLY = {"cdna4_cvt": {8: 0x00FF0000, 18: 0x000000FF}, "cdna4_cvt_more": {12: 0x0000FF00}}


def assert_words(got: np.ndarray, want: np.ndarray, w: np.ndarray) -> None:
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{len(bad)} words differ; first (element, word, got, want, a, b, scale): " + str(
        [(int(i), int(j), hex(int(got[i, j])), hex(int(want[i, j])), hex(int(w[i, 0])), hex(int(w[i, 1])),
          hex(int(w[i, 4]))) for i, j in bad[:6]])


@pytest.mark.parametrize("kernel", sorted(KERNELS))
@pytest.mark.parametrize("where", cdna4.WHERE)
def test_llvm_conversions_match_the_references(kernel, where):
    width, ref = KERNELS[kernel]
    w = inputs(seed=len(kernel))
    out = np.zeros((N, width), U32)
    got = cdna4.run(where, NAME, kernel, [w, out], (N // 256,), (256,))[1].reshape(N, width)
    want = ref(w)
    for j, mask in WRITTEN_ONLY.get(kernel, {}).items():
        got[:, j] &= U32(mask)
        want[:, j] &= U32(mask)
    used = np.flatnonzero(want.any(axis=0) | got.any(axis=0))  # words the kernel writes
    assert_words(got[:, used], want[:, used], w)


def test_the_code_holds_every_instruction_it_is_about():
    """All 49 v_cvt_scalef32_* forms (the semantics table's) and the other conversions are in LLVM's code."""
    text = cdna4.listing(NAME)
    names = {f"v_cvt_scalef32_{n}" for n in scalef32.FORMS}
    names |= {"v_cvt_sr_bf16_f32", "v_cvt_sr_f16_f32", "v_ashr_pk_i8_i32", "v_ashr_pk_u8_i32", "v_cvt_pk_fp8_f32",
              "v_cvt_sr_bf8_f32", "v_cvt_pk_f32_bf8"}
    missing = [n for n in sorted(names) if f"\t{n} " not in text and f"\t{n}_" not in text]
    assert len(scalef32.FORMS) == 49 and not missing, missing
