"""gfx12 (RDNA4) WMMA: D = A x B + C on 16x16 tiles, with RDNA4's register layout (wave32), and the fp8 / bf8
element types RDNA4 adds.

The gfx12 forms share gfx11's mnemonics (v_wmma_f32_16x16x16_f16, _bf16, v_wmma_f16_16x16x16_f16,
v_wmma_bf16_16x16x16_bf16, v_wmma_i32_16x16x16_iu8) but not their layout, so they are gfx12's own entries:

- A and B: each lane holds 8 elements of one row of A (lane % 16 = row m) or one column of B (lane % 16 = column
  n), packed lowest bits first (16-bit: 2 per VGPR, 4 VGPRs; 8-bit: 4 per VGPR, 2 VGPRs). There are no copies: K is
  split between the two 16-lane halves, element e of lane l holding k = (e & 3) | (l // 16) << 2 | (e & 4) << 1
  (lanes 0-15: k 0-3 and 8-11; lanes 16-31: k 4-7 and 12-15).
- C and D (f32/i32): VGPR r of lane l holds row m = r + 8 * (l // 16), column n = l % 16 (8 VGPRs); 16-bit C/D
  pack two rows per VGPR: VGPR r holds rows 2r (low half) and 2r + 1 (high half) of its lane's 8 (4 VGPRs).

The layout is not in the RDNA4 ISA reference's pseudo-code (which says only D = A * B + C); it is the one tinygrad's
RDNA4 emulator uses (tested there against RX 9070-class hardware) and the one LLVM's gfx12 WMMA operand sizes imply
(v8f16 A/B, v8f32 C/D in wave32); not confirmed against AMD's reference text. Sums are formed exactly (f64) and
rounded once, as for gfx11 (matrix.wmma). Modifiers as gfx11's: neg_lo[0]/[1] make iu8 A/B signed; for floats
neg_lo / neg_hi negate the low / high 16-bit elements of A/B, neg_lo[2] negates C.

Unlike gfx11, C may be an inline constant (llvm-mc -mcpu=gfx1201 takes `v_wmma_f32_16x16x16_f16 v[8:15], v[0:3],
v[4:7], 1.0`, and LLVM and Triton emit `..., 0` to start an accumulation from zero): every element of C is then the
constant, read as C's element type (f32, i32, f16; for bf16 a float constant is taken as the bf16 of its value, an
integer one as its bits, as for f16). SGPRs and literals are not encodable there.

fp8 and bf8 are the OCP formats (vector.gfx12).

Not implemented for gfx12: wave64 WMMA, the iu4 forms (v_wmma_i32_16x16x16_iu4, v_wmma_i32_16x16x32_iu4) and the
sparse v_swmmac_*: their layouts are not confirmed.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import constant, write_vgpr
from simgpu.shader.semantics import register
from simgpu.shader.vector.gfx12 import BF8, FP8
from simgpu.shader.vector.vop3p import bf16_to_f32, neg_hi, neg_lo, to_bf16

G = "gfx12"
U8, U16, U32, I64, F16, F32, F64 = np.uint8, np.uint16, np.uint32, np.int64, np.float16, np.float32, np.float64


# name -> (A kind, B kind, accumulator/result kind)
VARIANTS = {
    "v_wmma_f32_16x16x16_f16": ("f16", "f16", "f32"),
    "v_wmma_f32_16x16x16_bf16": ("bf16", "bf16", "f32"),
    "v_wmma_f16_16x16x16_f16": ("f16", "f16", "f16"),
    "v_wmma_bf16_16x16x16_bf16": ("bf16", "bf16", "bf16"),
    "v_wmma_i32_16x16x16_iu8": ("iu8", "iu8", "i32"),
    "v_wmma_f32_16x16x16_fp8_fp8": ("fp8", "fp8", "f32"),
    "v_wmma_f32_16x16x16_fp8_bf8": ("fp8", "bf8", "f32"),
    "v_wmma_f32_16x16x16_bf8_fp8": ("bf8", "fp8", "f32"),
    "v_wmma_f32_16x16x16_bf8_bf8": ("bf8", "bf8", "f32"),
}
_BITS = {"f16": 16, "bf16": 16, "iu8": 8, "fp8": 8, "bf8": 8}

# Where (row-or-column i, k) of A or B sits: lane and element index within the lane (8 elements per lane).
_K = np.arange(16)
_ELEM = (_K & 3) | ((_K >> 1) & 4)  # [k]
_LANE = np.arange(16)[:, None] + ((_K >> 2) & 1)[None, :] * 16  # [i, k]


def _matrix(ex, w, inst, i: int, kind: str) -> np.ndarray:
    """A (i = 0) as [n, m, k] or B (i = 1) as [n, col, k] element values (f64, or int64 for iu8)."""
    code = inst.fields[("src0", "src1")[i]]
    if code < 256:
        raise ex.illegal_inst(w, inst, "WMMA A/B operands must be VGPRs")
    bits = _BITS[kind]
    nreg = 8 * bits // 32
    regs = np.ascontiguousarray(ex.st.vgpr[code - 256:code - 256 + nreg, w, :].transpose(1, 2, 0))  # [n, lanes, r]
    el = regs.view(U16 if bits == 16 else U8).reshape(len(w), 32, 8).astype(I64)  # [n, lane, element]
    vals = el[:, _LANE, _ELEM[None, :]]  # [n, i, k]
    if kind == "iu8":
        if neg_lo(inst, i):
            vals = (vals ^ 0x80) - 0x80
        return vals
    if kind in ("fp8", "bf8"):
        return (FP8 if kind == "fp8" else BF8)[vals]
    sign = np.where(_ELEM[None, :] % 2 == 0, neg_lo(inst, i), neg_hi(inst, i)).astype(I64) << 15  # [1, k]
    h = (vals ^ sign).astype(U16)
    return (h.view(F16) if kind == "f16" else bf16_to_f32(h)).astype(F64)


def _rows_cols():
    """For the 8 result slots of each lane: the (row m, column n) each holds, as [lanes, 8] arrays."""
    lane = np.arange(32)[:, None]
    slot = np.arange(8)[None, :]
    return slot + 8 * (lane // 16), np.broadcast_to(lane % 16, (32, 8))


_M, _N = _rows_cols()


def _inline_c(ex, w, inst, code: int, out: str) -> np.ndarray:
    """An inline-constant C as [n, lanes, 8] values: the constant in every element, read as C's element type."""
    bits = constant(code, {"f32": "f32", "i32": "b32"}.get(out, "f16"))
    if bits is None:
        raise ex.illegal_inst(w, inst, "WMMA C operand must be VGPRs or an inline constant")
    if out == "i32":
        value = float(np.array(bits, U32).view(np.int32))
    elif out == "f32":
        value = float(np.array(bits, U32).view(F32))
    elif out == "bf16" and code >= 240:  # a float constant: its value rounded to bf16
        value = float(bf16_to_f32(to_bf16(np.array([constant(code, "f32")], U32).view(F32)))[0])
    else:
        h = np.array(bits, U16)
        value = float(h.view(F16) if out == "f16" else bf16_to_f32(h))
    if out == "i32":  # (neg_lo[2] does not apply to an integer C, as for a VGPR C)
        return np.full((len(w), 32, 8), int(value), I64)
    c = np.full((len(w), 32, 8), value, F64)
    return -c if neg_lo(inst, 2) else c


def _accumulator(ex, w, inst, out: str) -> np.ndarray:
    """C as [n, lanes, 8] values (f64 or int64), slot s of lane l being row _M[l, s], column _N[l, s]."""
    code = inst.fields["src2"]
    if code < 256:
        return _inline_c(ex, w, inst, code, out)
    nreg = 8 if out in ("f32", "i32") else 4
    regs = np.ascontiguousarray(ex.st.vgpr[code - 256:code - 256 + nreg, w, :].transpose(1, 2, 0))  # [n, lanes, r]
    if out == "i32":
        return regs.view(np.int32).astype(I64)
    if out == "f32":
        c = regs.view(F32).astype(F64)
    else:
        h = regs.view(U16).reshape(len(w), 32, 8)  # slot 2r: low half of VGPR r, 2r + 1: its high half
        c = (h.view(F16) if out == "f16" else bf16_to_f32(h)).astype(F64)
    return -c if neg_lo(inst, 2) else c


def wmma(name: str):
    """The semantic function of one gfx12 WMMA variant."""
    ka, kb, out = VARIANTS[name]

    def fn(ex, w, inst):
        if ex.st.lanes != 32:
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: wave64 WMMA is not implemented for gfx12")
        a, b = _matrix(ex, w, inst, 0, ka), _matrix(ex, w, inst, 1, kb)
        c = _accumulator(ex, w, inst, out)
        with np.errstate(all="ignore"):
            full = np.einsum("nmk,nck->nmc", a, b)  # [n, m, col]
            d = full[:, _M, _N] + c  # [n, lanes, 8]
        active = ex.st.exec_lanes(w)
        vdst = inst.fields["vdst"]
        if out in ("f32", "i32"):
            if out == "i32":
                if inst.fields.get("clamp", 0):
                    d = np.clip(d, -(1 << 31), (1 << 31) - 1)
                words = (d & 0xFFFFFFFF).astype(U32)
            else:
                with np.errstate(all="ignore"):
                    words = d.astype(F32).view(U32)
            for r in range(8):
                write_vgpr(ex, w, vdst + r, words[:, :, r], active)
            return
        with np.errstate(all="ignore"):
            h = (d.astype(F16).view(U16) if out == "f16" else to_bf16(d)).astype(U32)
        for r in range(4):
            write_vgpr(ex, w, vdst + r, h[:, :, 2 * r] | (h[:, :, 2 * r + 1] << U32(16)), active)
    return fn


for _name in VARIANTS:
    register(_name, wmma(_name), G)


def _not_implemented(ex, w, inst):
    raise ex.illegal_inst(w, inst,
                          f"{inst.mnemonic} is not implemented for gfx12 (its register layout is not confirmed)")


register("v_wmma_i32_16x16x16_iu4", _not_implemented, G)  # (gfx11's layout must not run on gfx12)
