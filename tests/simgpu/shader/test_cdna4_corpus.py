"""gfx950 (CDNA4): the new instructions LLVM 22 emits, run on the shader engine and through mockgpu + the runtime over
PM4 and AQL, against numpy references of the CDNA4 ISA's definitions.

The kernels (tests/data/kernels/cdna4_*.ll) are compiled by llvmlite (LLVM 22) for gfx950 at test time; each test
checks that the code holds the instruction it is about (so a change in LLVM's choices is seen, not silently
untested). The references are written from the ISA's pseudo-code and layout rules, not from simgpu's code:
bf16 rounding as a rounding of the value (frexp/rint), f16 by numpy's conversion, the MFMA layouts by the ISA's item /
lane formulas (CDNA4 ISA 7.1.4).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from compiler.llvm import compile_asm, compile_ir
from tests import DATA
from tests.simgpu.shader import test_corpus_opencl_gfx1201 as stack
from tests.support import tiers

ARCH = "gfx950"
KERNELS = DATA / "kernels"
N = 512  # work-items of the VALU kernel: two workgroups of 256 (four waves each)


@cache
def source(name: str) -> str:
    return (KERNELS / f"{name}.ll").read_text()


@cache
def code_object(name: str) -> bytes:
    return compile_ir(source(name), mcpu=ARCH)


@cache
def listing(name: str) -> str:
    return compile_asm(source(name), mcpu=ARCH)


def run(where: str, name: str, kernel: str, args: list, grid, block) -> list[np.ndarray]:
    """The arrays after running `kernel`: on a Testbed ("engine": the interpreter's, the JIT tier's runs ending the
    same, tests/support/tiers.py) or through the runtime's queue."""
    if where == "engine":
        results = []
        for tier in ("interpreter", "jit-lean", "jit"):
            tb = tiers.testbed(tier, arch=ARCH)
            k = tb.load(code_object(name))[kernel]
            bufs = [tb.upload(a) for a in args]
            tb.launch(k, bufs, grid, block)
            results.append([tb.download(b, a.dtype, a.size) for a, b in zip(args, bufs, strict=True)])
            if tier == "interpreter":
                reference = tb
            else:
                tiers.assert_same(reference, tb)
        return results[0]
    out, _gpu, _buffers = stack.launch(where, "interpreter", kernel, args, grid, block, ARCH, code_object(name))
    return out


WHERE = ["engine", "pm4", "aql"]


# ---------------------------------------------------------------------------------------------- references

def bf16_rne(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to bf16 (8 significant bits, f32's exponent range) to nearest even, as bit patterns."""
    x = np.asarray(x, np.float64)
    _, e = np.frexp(x)
    quantum = np.exp2(np.maximum(e - 8, -133))  # bf16's spacing at x (subnormal spacing 2^-133 below 2^-126)
    r = np.rint(x / quantum) * quantum  # numpy's rint: to nearest, ties to even
    with np.errstate(over="ignore"):
        return (r.astype(np.float32).view(np.uint32) >> 16).astype(np.uint32)


def prng(a: np.ndarray) -> np.ndarray:
    return ((a << np.uint32(1)) ^ np.where(a >> np.uint32(31), np.uint32(197), np.uint32(0))).astype(np.uint32)


def swap(a: np.ndarray, b: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """v_permlaneN_swap vdst=a, src0=b per wave64: src0's low `span` lanes of each group trade with vdst's high ones."""
    d, s = a.reshape(-1, 64).copy(), b.reshape(-1, 64).copy()
    for g in range(0, 64, 2 * span):
        lo, hi = slice(g, g + span), slice(g + span, g + 2 * span)
        d[:, hi], s[:, lo] = b.reshape(-1, 64)[:, lo], a.reshape(-1, 64)[:, hi]
    return d.reshape(-1), s.reshape(-1)


def valu_inputs(rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Floats of moderate range (sums in the dot product exact in f64), with ties, subnormals, infinities and NaNs."""
    f = (rng.standard_normal(N) * np.exp2(rng.integers(-6, 6, N))).astype(np.float32)
    a, b, c = f.view(np.uint32).copy(), np.roll(f, 7).view(np.uint32).copy(), np.roll(f, 99).view(np.uint32).copy()
    a[:8] = [0x3F808000, 0x3F818000, 0x7F7FFFFF, 0x00000001, 0x80400000, 0x7F800000, 0x7FC00000, 0xC0000000]
    b[:8] = [0x3F808001, 0x3F817FFF, 0x3F800000, 0x807FFFFF, 0x00000000, 0xFF800000, 0x3F800000, 0x7FC00001]
    return a, b, c


@pytest.mark.parametrize("where", WHERE)
def test_valu(where):
    text = listing("cdna4_valu")
    for inst in ("v_prng_b32", "v_cvt_pk_bf16_f32", "v_cvt_pk_f16_f32", "v_dot2c_f32_bf16", "v_minimum3_f32",
                 "v_maximum3_f32", "v_bitop3_b32", "v_permlane16_swap_b32", "v_permlane32_swap_b32"):
        assert inst in text, f"LLVM no longer emits {inst} for cdna4_valu.ll"
    a, b, c = valu_inputs(np.random.default_rng(950))
    out = run(where, "cdna4_valu", "cdna4_valu", [a, b, c, np.zeros(N * 12, np.uint32)], (N // 256,), (256,))[-1]
    r = out.reshape(N, 12)
    fa, fb, fc = a.view(np.float32), b.view(np.float32), c.view(np.float32)
    assert np.array_equal(r[:, 0], prng(a))
    finite = np.isfinite(fa) & np.isfinite(fb)
    assert np.array_equal(r[finite, 1], (bf16_rne(fa) | bf16_rne(fb) << 16)[finite])
    with np.errstate(all="ignore"):
        f16 = fa.astype(np.float16).view(np.uint16).astype(np.uint32) | \
            fb.astype(np.float16).view(np.uint16).astype(np.uint32) << 16
    assert np.array_equal(r[finite, 2], f16[finite])
    for half, x in ((0, fa), (16, fb)):  # a NaN input converts to a NaN in its half of both packs
        for j in (1, 2):
            h = (r[np.isnan(x), j] >> half) & 0xFFFF
            exp_mask, man_mask = (0x7F80, 0x7F) if j == 1 else (0x7C00, 0x3FF)
            assert len(h) and ((h & exp_mask) == exp_mask).all() and ((h & man_mask) != 0).all()
    # dot2: (c + a.lo*b.lo) + a.hi*b.hi, each addition rounded to f32 (v_dot2c_f32_bf16's order)
    lo = [((x & 0xFFFF) << 16).view(np.float32).astype(np.float64) for x in (a, b)]
    hi = [((x >> 16) << 16).astype(np.uint32).view(np.float32).astype(np.float64) for x in (a, b)]
    with np.errstate(all="ignore"):
        step = (fc.astype(np.float64) + lo[0] * lo[1]).astype(np.float32)
        dot = (step.astype(np.float64) + hi[0] * hi[1]).astype(np.float32)
    ok = np.isfinite(dot) & finite & np.isfinite(fc)
    assert np.array_equal(r[ok, 3].view(np.float32), dot[ok])
    with np.errstate(all="ignore"):
        mn, mx = np.minimum(np.minimum(fa, fb), fc), np.maximum(np.maximum(fa, fb), fc)
    for j, ref in ((4, mn), (5, mx)):
        got = r[:, j].view(np.float32)
        assert np.array_equal(np.isnan(got), np.isnan(ref))
        assert np.array_equal(got[~np.isnan(ref)], ref[~np.isnan(ref)])
    assert np.array_equal(r[:, 6], (~a & b) ^ c)
    assert np.array_equal(r[:, 7], ((a | b) ^ c) & ~a)
    for j, span in ((8, 16), (10, 32)):
        d, s = swap(a, b, span)
        assert np.array_equal(r[:, j], d) and np.array_equal(r[:, j + 1], s)


# ---------------------------------------------------------------------------------------------- MFMA

MFMA = {  # kernel -> (M, N, K, element type, D dtype)
    "cdna4_mfma_f32_16x16x32_f16": (16, 16, 32, "f16", np.float32),
    "cdna4_mfma_f32_32x32x16_bf16": (32, 32, 16, "bf16", np.float32),
    "cdna4_mfma_i32_16x16x64_i8": (16, 16, 64, "i8", np.int32),
    "cdna4_mfma_i32_32x32x32_i8": (32, 32, 32, "i8", np.int32),
    "cdna4_mfma_f32_16x16x32_fp8_fp8": (16, 16, 32, "fp8", np.float32),
}


def e4m3(code: np.ndarray) -> np.ndarray:
    """The value of OCP E4M3 bytes (sign, 4 exponent bits with bias 7, 3 mantissa bits; no infinities)."""
    sign = np.where(code & 0x80, -1.0, 1.0)
    e, m = (code >> 3) & 0xF, code & 7
    return sign * np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * np.exp2(e.astype(np.float64) - 7))


def _matrix(rng, rows: int, cols: int, kind: str) -> np.ndarray:
    """Values with full significands (f16 11 bits, bf16 8) over exponent ranges whose products' sums are exact in f64
    but not in f32: the result shows whether the sum is rounded once (the module doc of matrix.gfx9); or int8."""
    if kind == "i8":
        return rng.integers(-128, 128, (rows, cols))
    if kind == "fp8":  # E4M3 bytes (NaN, S.1111.111, left out), as codes: _pack stores them, e4m3 gives their values
        return rng.choice(np.array([c for c in range(256) if c & 0x7F != 0x7F]), (rows, cols))
    top, lo, hi = (2047, -16, -6) if kind == "f16" else (255, -12, 0)
    return rng.integers(-top, top + 1, (rows, cols)) * np.exp2(rng.integers(lo, hi + 1, (rows, cols)))


def _pack(x: np.ndarray, kind: str) -> np.ndarray:
    """[lanes, items] values -> [lanes, 4] 32-bit words, items little-endian."""
    if kind == "f16":
        raw = x.astype(np.float16).view(np.uint16)
    elif kind == "bf16":
        raw = (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    elif kind == "fp8":
        raw = x.astype(np.uint8)
    else:
        raw = x.astype(np.int8).view(np.uint8)
    return np.ascontiguousarray(raw).view(np.uint32).reshape(64, -1)


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("kernel", sorted(MFMA))
def test_mfma(kernel, where):
    m, n, k, kind, dt = MFMA[kernel]
    assert kernel.removeprefix("cdna4_") in listing("cdna4_mfma")
    rng = np.random.default_rng(hash(kernel) % (1 << 32))
    A, B = _matrix(rng, m, k, kind), _matrix(rng, k, n, kind)
    kl = k // (64 // m)  # items of K per lane (the ISA's K_L, one block)
    la, lb = np.zeros((64, kl), A.dtype), np.zeros((64, kl), B.dtype)
    for i in range(m):
        for kk in range(k):
            la[i + m * (kk // kl), kk % kl] = A[i, kk]
    for kk in range(k):
        for j in range(n):
            lb[j + n * (kk // kl), kk % kl] = B[kk, j]
    regs = m * n // 64
    out = run(where, "cdna4_mfma", kernel, [_pack(la, kind).reshape(-1), _pack(lb, kind).reshape(-1),
                                           np.zeros(64 * regs, np.uint32)], (1,), (64,))[-1]
    got = out.reshape(64, regs).view(dt)
    if kind == "fp8":
        va, vb = e4m3(A), e4m3(B)
    else:
        va, vb = A.astype(np.float64), B.astype(np.float64)
    D = (va @ vb) if dt == np.float32 else A @ B  # exact; rounded once below
    if dt == np.float32:
        assert not np.array_equal(D, D.astype(np.float32)), "the inputs do not test the rounding"
    mi = 64 // n  # rows of D per item across the lanes (one block: B_I = 1)
    ref = np.zeros((64, regs))
    for i in range(m):
        for j in range(n):
            ref[j + n * ((i // 4) % mi), (i % 4) + 4 * (i // (4 * mi))] = D[i, j]
    assert np.array_equal(got, ref.astype(dt))
