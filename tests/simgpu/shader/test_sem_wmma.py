"""WMMA (v_wmma_*_16x16x16_*): LLVM-compiled kernels calling @llvm.amdgcn.wmma.* against numpy matmul, with
fragments packed per the RDNA3 register layout (A: lane%16 = row, B: lane%16 = column, K packed low bits
first, 16-lane groups hold copies; C/D: column lane%16, VGPR r = row r*G + lane//16), wave32 and wave64;
plus hand-assembled kernels for the modifiers (op_sel on 16-bit C/D, signedness bits, clamp)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.llvm import compile_ir
from simgpu.testbed import Testbed

F16, F32 = np.float16, np.float32


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


def _bf16(x: np.ndarray) -> np.ndarray:
    """f32 values exactly representable in bf16 -> bf16 bits."""
    return (np.asarray(x, F32).view(np.uint32) >> 16).astype(np.uint16)


def pack_ab(m: np.ndarray, lanes: int, bits: int) -> np.ndarray:
    """A (rows) or B^T (columns) [16, 16] integer element bits -> per-lane dwords [lanes, 16*bits/32]."""
    per = 32 // bits
    el = (m.astype(np.int64) & ((1 << bits) - 1)).reshape(16, 16 // per, per)
    words = (el << (np.arange(per) * bits)).sum(axis=2).astype(np.uint32)
    return np.tile(words, (lanes // 16, 1))


def pack_c(c: np.ndarray, lanes: int) -> np.ndarray:
    """C [16, 16] (one value per element, any dtype) -> per-lane registers [lanes, nreg]."""
    g = lanes // 16
    lane = np.arange(lanes)
    rows = np.arange(16 // g)[None, :] * g + (lane // 16)[:, None]
    return c[rows, (lane % 16)[:, None]]


def unpack_d(d: np.ndarray, lanes: int) -> np.ndarray:
    """Per-lane registers [lanes, nreg] -> D [16, 16]."""
    g = lanes // 16
    out = np.zeros((16, 16), d.dtype)
    lane = np.arange(lanes)
    rows = np.arange(16 // g)[None, :] * g + (lane // 16)[:, None]
    out[rows, (lane % 16)[:, None]] = d
    return out


_ATTR = {32: '"target-features"="+wavefrontsize32"', 64: '"target-features"="+wavefrontsize64"'}


def _kernel(call: str, decl: str, ab: str, cty: str, lanes: int) -> str:
    return f"""
declare i32 @llvm.amdgcn.workitem.id.x()
{decl}
define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c,
                             ptr addrspace(1) %d) #0 {{
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr {ab}, ptr addrspace(1) %a, i32 %l
  %pb = getelementptr {ab}, ptr addrspace(1) %b, i32 %l
  %pc = getelementptr {cty}, ptr addrspace(1) %c, i32 %l
  %pd = getelementptr {cty}, ptr addrspace(1) %d, i32 %l
  %va = load {ab}, ptr addrspace(1) %pa
  %vb = load {ab}, ptr addrspace(1) %pb
  %vc = load {cty}, ptr addrspace(1) %pc
  %r = {call}
  store {cty} %r, ptr addrspace(1) %pd
  ret void
}}
attributes #0 = {{ {_ATTR[lanes]} }}
"""


def _run(tb, ir: str, a: np.ndarray, b: np.ndarray, c: np.ndarray, lanes: int, out_dtype) -> np.ndarray:
    k = tb.load(compile_ir(ir))["k"]
    va, vb, vc = tb.upload(a), tb.upload(b), tb.upload(c)
    vd = tb.alloc(c.nbytes)
    tb.launch(k, [va, vb, vc, vd], (1,), (lanes,))
    return tb.download(vd, out_dtype, c.size).reshape(c.shape)


def _small_float(rng, shape, lo=-8, hi=8) -> np.ndarray:
    return (rng.integers(lo, hi, shape) / 4).astype(F32)  # exact in f16 and bf16, sums exact


@pytest.mark.parametrize("lanes", [32, 64])
def test_wmma_f32_f16(tb, lanes):
    rng = np.random.default_rng(1)
    a, b, c = _small_float(rng, (16, 16)), _small_float(rng, (16, 16)), _small_float(rng, (16, 16))
    nc = 16 // (lanes // 16)
    ir = _kernel(f"call <{nc} x float> @llvm.amdgcn.wmma.f32.16x16x16.f16(<16 x half> %va, <16 x half> %vb, "
                 f"<{nc} x float> %vc)",
                 f"declare <{nc} x float> @llvm.amdgcn.wmma.f32.16x16x16.f16(<16 x half>, <16 x half>, <{nc} x float>)",
                 "<16 x half>", f"<{nc} x float>", lanes)
    pa = pack_ab(a.astype(F16).view(np.uint16), lanes, 16)
    pb = pack_ab(b.T.astype(F16).view(np.uint16), lanes, 16)
    d = _run(tb, ir, pa, pb, pack_c(c, lanes).astype(F32), lanes, F32)
    assert np.array_equal(unpack_d(d, lanes), a @ b + c)


@pytest.mark.parametrize("lanes", [32, 64])
def test_wmma_f32_bf16(tb, lanes):
    rng = np.random.default_rng(2)
    a, b, c = _small_float(rng, (16, 16)), _small_float(rng, (16, 16)), _small_float(rng, (16, 16))
    nc = 16 // (lanes // 16)
    ir = _kernel(f"call <{nc} x float> @llvm.amdgcn.wmma.f32.16x16x16.bf16(<16 x i16> %va, <16 x i16> %vb, "
                 f"<{nc} x float> %vc)",
                 f"declare <{nc} x float> @llvm.amdgcn.wmma.f32.16x16x16.bf16(<16 x i16>, <16 x i16>, <{nc} x float>)",
                 "<16 x i16>", f"<{nc} x float>", lanes)
    d = _run(tb, ir, pack_ab(_bf16(a), lanes, 16), pack_ab(_bf16(b.T), lanes, 16), pack_c(c, lanes), lanes, F32)
    assert np.array_equal(unpack_d(d, lanes), a @ b + c)


@pytest.mark.parametrize("opsel", [0, 1])
def test_wmma_f16_f16(tb, opsel):
    lanes = 32
    rng = np.random.default_rng(3 + opsel)
    a, b, c = _small_float(rng, (16, 16)), _small_float(rng, (16, 16)), _small_float(rng, (16, 16))
    ir = _kernel(f"call <16 x half> @llvm.amdgcn.wmma.f16.16x16x16.f16(<16 x half> %va, <16 x half> %vb, "
                 f"<16 x half> %vc, i1 {opsel})",
                 "declare <16 x half> @llvm.amdgcn.wmma.f16.16x16x16.f16(<16 x half>, <16 x half>, <16 x half>, i1)",
                 "<16 x half>", "<16 x half>", lanes)
    # 16-bit C/D: 8 VGPRs per lane, the value in the op_sel half (vector element 2r + opsel)
    cregs = np.zeros((lanes, 16), F16)
    cregs[:, opsel::2] = pack_c(c, lanes).astype(F16)
    d = _run(tb, ir, pack_ab(a.astype(F16).view(np.uint16), lanes, 16),
             pack_ab(b.T.astype(F16).view(np.uint16), lanes, 16), cregs, lanes, F16)
    assert np.array_equal(unpack_d(d[:, opsel::2], lanes).astype(F32), a @ b + c)


def test_wmma_bf16_bf16(tb):
    lanes = 32
    rng = np.random.default_rng(5)
    a, b, c = _small_float(rng, (16, 16)), _small_float(rng, (16, 16)), _small_float(rng, (16, 16))
    ir = _kernel("call <16 x i16> @llvm.amdgcn.wmma.bf16.16x16x16.bf16(<16 x i16> %va, <16 x i16> %vb, "
                 "<16 x i16> %vc, i1 0)",
                 "declare <16 x i16> @llvm.amdgcn.wmma.bf16.16x16x16.bf16(<16 x i16>, <16 x i16>, <16 x i16>, i1)",
                 "<16 x i16>", "<16 x i16>", lanes)
    cregs = np.zeros((lanes, 16), np.uint16)
    cregs[:, 0::2] = pack_c(_bf16(c), lanes)
    d = _run(tb, ir, pack_ab(_bf16(a), lanes, 16), pack_ab(_bf16(b.T), lanes, 16), cregs, lanes, np.uint16)
    got = (unpack_d(d[:, 0::2], lanes).astype(np.uint32) << 16).view(F32)
    assert np.array_equal(got, a @ b + c)


@pytest.mark.parametrize("bits", [8, 4])
@pytest.mark.parametrize("sa,sb,clamp", [(1, 1, 0), (0, 1, 0), (1, 0, 0), (0, 0, 0), (1, 1, 1)])
@pytest.mark.parametrize("lanes", [32, 64])
def test_wmma_i32_iu(tb, bits, sa, sb, clamp, lanes):
    rng = np.random.default_rng(bits * 100 + sa * 10 + sb + clamp * 7)
    lo_a, hi_a = (-(1 << (bits - 1)), 1 << (bits - 1)) if sa else (0, 1 << bits)
    lo_b, hi_b = (-(1 << (bits - 1)), 1 << (bits - 1)) if sb else (0, 1 << bits)
    a, b = rng.integers(lo_a, hi_a, (16, 16)), rng.integers(lo_b, hi_b, (16, 16))
    c = rng.integers(-(1 << 31), 1 << 31, (16, 16))
    if clamp:
        c[:4] = (1 << 31) - 5  # saturates upwards or stays put
        c[4:8] = -(1 << 31) + 5
    nab, nc = 16 * bits // 32, 16 // (lanes // 16)
    name = f"iu{bits}"
    ir = _kernel(f"call <{nc} x i32> @llvm.amdgcn.wmma.i32.16x16x16.{name}(i1 {sa}, <{nab} x i32> %va, i1 {sb}, "
                 f"<{nab} x i32> %vb, <{nc} x i32> %vc, i1 {clamp})",
                 f"declare <{nc} x i32> @llvm.amdgcn.wmma.i32.16x16x16.{name}(i1, <{nab} x i32>, i1, <{nab} x i32>, "
                 f"<{nc} x i32>, i1)", f"<{nab} x i32>", f"<{nc} x i32>", lanes)
    d = _run(tb, ir, pack_ab(a, lanes, bits), pack_ab(b.T, lanes, bits), pack_c(c, lanes).astype(np.int32), lanes,
             np.int32)
    exact = a @ b + c
    want = np.clip(exact, -(1 << 31), (1 << 31) - 1) if clamp else (exact + (1 << 31)) % (1 << 32) - (1 << 31)
    assert np.array_equal(unpack_d(d, lanes), want)


def test_wmma_f32_special_values(tb):
    """inf/NaN propagate, rounding happens once to f32 (a sum of f16 products that f32 cannot hold exactly)."""
    lanes = 32
    a = np.zeros((16, 16), F32)
    b = np.zeros((16, 16), F32)
    a[0, 0], b[0, 0] = np.inf, 1.0
    a[1, 0], b[0, 1] = 4096.0, 4096.0  # row 1, col 1 gets 2^24 ...
    a[1, 1], b[1, 1] = 1.0, 0.5  # ... + 0.5
    a[2, 0], b[0, 2] = np.nan, 1.0
    c = np.zeros((16, 16), F32)
    c[1, 1] = 0.75  # 2^24 + 1.25 rounds once to 2^24 + 2; rounding after each add would give 2^24
    ir = _kernel("call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16(<16 x half> %va, <16 x half> %vb, "
                 "<8 x float> %vc)",
                 "declare <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16(<16 x half>, <16 x half>, <8 x float>)",
                 "<16 x half>", "<8 x float>", lanes)
    d = unpack_d(_run(tb, ir, pack_ab(a.astype(F16).view(np.uint16), lanes, 16),
                      pack_ab(b.T.astype(F16).view(np.uint16), lanes, 16), pack_c(c, lanes), lanes, F32), lanes)
    assert d[0, 0] == np.inf and np.isnan(d[2, 2]) and d[1, 1] == 2.0 ** 24 + 2
