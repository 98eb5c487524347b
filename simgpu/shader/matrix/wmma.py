"""RDNA3 WMMA: D = A x B + C on 16x16 tiles (v_wmma_{f32,f16,bf16,i32}_16x16x16_*), wave32 and wave64.

Register layout (RDNA3 ISA reference, "Wave Matrix Multiply Accumulate"): every lane holds one row of A
(lane % 16 = row m) and one column of B (lane % 16 = column n), K = 0..15 packed into the source VGPRs
(f16/bf16: 2 per VGPR, iu8: 4, iu4: 8, lowest bits first); the 16-lane groups hold copies, and each group
reads its own copy. C and D hold column n = lane % 16 and, in VGPR r, row m = r * G + lane // 16 with
G = lanes / 16 groups (8 VGPRs in wave32, 4 in wave64). 16-bit C/D use the half chosen by op_sel[2], the
other half of D is kept. Integer variants: neg_lo[0]/[1] make A/B signed, clamp saturates to i32.

Float products are exact in f64; the 16-term sum plus C is formed in f64 and rounded once to the result
type (the hardware's internal accumulation order is not documented).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import write_vgpr
from simgpu.shader.semantics import register
from simgpu.shader.vector.vop3p import bf16_to_f32, neg_hi, neg_lo, op_sel, to_bf16

U16, U32, I64, F16, F32, F64 = np.uint16, np.uint32, np.int64, np.float16, np.float32, np.float64

# name -> (A/B element kind, accumulator/result kind)
VARIANTS = {
    "v_wmma_f32_16x16x16_f16": ("f16", "f32"),
    "v_wmma_f32_16x16x16_bf16": ("bf16", "f32"),
    "v_wmma_f16_16x16x16_f16": ("f16", "f16"),
    "v_wmma_bf16_16x16x16_bf16": ("bf16", "bf16"),
    "v_wmma_i32_16x16x16_iu8": ("iu8", "i32"),
    "v_wmma_i32_16x16x16_iu4": ("iu4", "i32"),
}
_BITS = {"f16": 16, "bf16": 16, "iu8": 8, "iu4": 4}


def _fragment(ex, w, inst, i: int, kind: str) -> np.ndarray:
    """Source i (A or B) as [n, lanes, 16] element values (f64 for floats, int64 for integers)."""
    code = inst.fields[("src0", "src1")[i]]
    if code < 256:
        raise ex.illegal_inst(w, inst, "WMMA A/B operands must be VGPRs")
    bits = _BITS[kind]
    per = 32 // bits
    regs = ex.st.vgpr[code - 256:code - 256 + 16 // per, w, :]  # [nreg, n, lanes]
    if bits >= 8:  # whole bytes: a little-endian view splits each dword into its elements, lowest first
        el = np.ascontiguousarray(regs).view(U16 if bits == 16 else np.uint8).reshape(regs.shape + (per,))
    else:
        el = (regs[..., None] >> (np.arange(per, dtype=U32) * U32(bits))) & U32((1 << bits) - 1)
    el = el.transpose(1, 2, 0, 3).reshape(len(w), ex.st.lanes, 16).astype(I64)  # [n, lanes, k]
    if kind in ("iu8", "iu4"):
        if neg_lo(inst, i):
            top = 1 << (bits - 1)
            el = (el ^ top) - top
        return el
    # float halves: neg_lo / neg_hi negate the low / high f16 of each dword (like packed math)
    sign = np.array([neg_lo(inst, i), neg_hi(inst, i)] * 8, I64) << 15
    h = (el ^ sign).astype(U16)
    return (h.view(F16) if kind == "f16" else bf16_to_f32(h)).astype(F64)


def _accumulator(ex, w, inst, out: str, nreg: int) -> np.ndarray:
    """C as [n, lanes, nreg] values (f64 or int64)."""
    code = inst.fields["src2"]
    if code < 256:
        raise ex.illegal_inst(w, inst, "WMMA C operand must be VGPRs")
    regs = ex.st.vgpr[code - 256:code - 256 + nreg, w, :].transpose(1, 2, 0)  # [n, lanes, nreg]
    if out == "i32":
        return regs.view(np.int32).astype(I64)
    if out == "f32":
        c = regs.view(F32).astype(F64)
    else:
        h = ((regs >> U32(16)) if op_sel(inst, 2) else regs).astype(U16)
        c = (h.view(F16) if out == "f16" else bf16_to_f32(h)).astype(F64)
    return -c if neg_lo(inst, 2) else c


def _products(a: np.ndarray, b: np.ndarray, lanes: int) -> np.ndarray:
    """sum_k A[m,k] * B[k,n] as [n, lanes, nreg]: output lane l, VGPR r is row r*G + l//16, column l%16,
    from the copy of A and B held by l's 16-lane group."""
    groups = lanes // 16
    nreg = 16 // groups
    n = a.shape[0]
    ag = a.reshape(n, groups, 16, 16)  # [n, g, m, k]
    bg = b.reshape(n, groups, 16, 16)  # [n, g, col, k]
    full = np.einsum("ngmk,ngck->ngmc", ag, bg)  # [n, g, m, col]
    rows = np.arange(nreg)[:, None] * groups + np.arange(groups)[None, :]  # [r, g]
    gi = np.arange(groups)
    picked = full[:, gi[None, :], rows, :]  # [n, r, g, col]
    return picked.transpose(0, 2, 3, 1).reshape(n, lanes, nreg)


def _result_words(ex, w, inst, out: str, d: np.ndarray, nreg: int) -> np.ndarray:
    """[n, lanes, nreg] results -> 32-bit words, 16-bit results merged into D's other half."""
    if out == "i32":
        if inst.fields.get("clamp", 0):
            d = np.clip(d, -(1 << 31), (1 << 31) - 1)
        return (d & 0xFFFFFFFF).astype(U32)
    with np.errstate(all="ignore"):
        if out == "f32":
            return d.astype(F32).view(U32)
        h = d.astype(F16).view(U16) if out == "f16" else to_bf16(d)
    vdst = inst.fields["vdst"]
    cur = ex.st.vgpr[vdst:vdst + nreg, w, :].transpose(1, 2, 0)  # [n, lanes, nreg]
    v = h.astype(U32)
    return (cur & U32(0xFFFF)) | (v << U32(16)) if op_sel(inst, 2) else (cur & U32(0xFFFF0000)) | v


def wmma(name: str):
    """The semantic function of one WMMA variant."""
    kind, out = VARIANTS[name]

    def fn(ex, w, inst):
        lanes = ex.st.lanes
        nreg = 16 // (lanes // 16)
        a, b = _fragment(ex, w, inst, 0, kind), _fragment(ex, w, inst, 1, kind)
        c = _accumulator(ex, w, inst, out, nreg)
        with np.errstate(all="ignore"):
            d = _products(a, b, lanes) + c
        words = _result_words(ex, w, inst, out, d, nreg)
        active = ex.st.exec_lanes(w)
        vdst = inst.fields["vdst"]
        for r in range(nreg):
            write_vgpr(ex, w, vdst + r, words[:, :, r], active)
    return fn


for _name in VARIANTS:
    register(_name, wmma(_name))
