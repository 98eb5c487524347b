"""gfx12 (RDNA4) WMMA and SWMMAC: D = A x B + C on 16x16 tiles, with RDNA4's register layout (wave32 and wave64,
matrix.gfx12_layout), the fp8 / bf8 element types RDNA4 adds, the 4-bit integer forms and the sparse SWMMAC.

The gfx12 forms share gfx11's mnemonics (v_wmma_f32_16x16x16_f16, _bf16, v_wmma_f16_16x16x16_f16,
v_wmma_bf16_16x16x16_bf16, v_wmma_i32_16x16x16_iu8, _iu4) but not their layout, so they are gfx12's own entries.
The layout (gfx12_layout) is the one AMD's matrix instruction calculator gives for RDNA4; the RDNA4 ISA reference's
pseudo-code says only D = A * B + C (SWMMAC: D = A (sparse) * B + D).

Sums are formed exactly (f64, or int64) and rounded once, as for gfx11 (matrix.wmma). Modifiers as gfx11's:
neg_lo[0]/[1] make iu8/iu4 A/B signed; for 16-bit floats neg_lo / neg_hi negate the elements in the low / high 16
bits of A's/B's VGPRs, neg_lo[2] negates C; clamp saturates an i32 result.

WMMA's C may be an inline constant (llvm-mc -mcpu=gfx1201 takes `v_wmma_f32_16x16x16_f16 v[8:15], v[0:3],
v[4:7], 1.0`, and LLVM and Triton emit `..., 0` to start an accumulation from zero): every element of C is then the
constant, read as C's element type (f32, i32, f16; for bf16 a float constant is taken as the bf16 of its value, an
integer one as its bits, as for f16). SGPRs and literals are not encodable there.

SWMMAC (v_swmmac_*): A is 4:2 sparse (two stored elements per group of four k), B dense with twice A's stored K,
the accumulator is D itself (vdst), and src2 is the VGPR of compression index fields (OPSEL, LLVM's index_key,
picks the set; gfx12_layout). An element is multiplied with the B row its 2-bit index names; two indices naming
the same k both count (the hardware's result for such an index is not documented; compilers do not make one).

fp8 and bf8 are the OCP formats (vector.gfx12).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simgpu.shader.matrix import gfx12_layout as layout
from simgpu.shader.operand import constant, write_vgpr
from simgpu.shader.semantics import register
from simgpu.shader.vector.gfx12 import BF8, FP8
from simgpu.shader.vector.vop3p import bf16_to_f32, neg_hi, neg_lo, op_sel, to_bf16

G = "gfx12"
U16, U32, I64, F16, F32, F64 = np.uint16, np.uint32, np.int64, np.float16, np.float32, np.float64


@dataclass(frozen=True)
class Variant:
    a: str  # A's element kind
    b: str  # B's
    out: str  # C's and D's
    k: int  # K of the (dense) product
    sparse: bool = False


_FLOAT8 = {"fp8_fp8": ("fp8", "fp8"), "fp8_bf8": ("fp8", "bf8"), "bf8_fp8": ("bf8", "fp8"), "bf8_bf8": ("bf8", "bf8")}
VARIANTS = {
    "v_wmma_f32_16x16x16_f16": Variant("f16", "f16", "f32", 16),
    "v_wmma_f32_16x16x16_bf16": Variant("bf16", "bf16", "f32", 16),
    "v_wmma_f16_16x16x16_f16": Variant("f16", "f16", "f16", 16),
    "v_wmma_bf16_16x16x16_bf16": Variant("bf16", "bf16", "bf16", 16),
    "v_wmma_i32_16x16x16_iu8": Variant("iu8", "iu8", "i32", 16),
    "v_wmma_i32_16x16x16_iu4": Variant("iu4", "iu4", "i32", 16),
    "v_wmma_i32_16x16x32_iu4": Variant("iu4", "iu4", "i32", 32),
    **{f"v_wmma_f32_16x16x16_{t}": Variant(a, b, "f32", 16) for t, (a, b) in _FLOAT8.items()},
    "v_swmmac_f32_16x16x32_f16": Variant("f16", "f16", "f32", 32, True),
    "v_swmmac_f32_16x16x32_bf16": Variant("bf16", "bf16", "f32", 32, True),
    "v_swmmac_f16_16x16x32_f16": Variant("f16", "f16", "f16", 32, True),
    "v_swmmac_bf16_16x16x32_bf16": Variant("bf16", "bf16", "bf16", 32, True),
    "v_swmmac_i32_16x16x32_iu8": Variant("iu8", "iu8", "i32", 32, True),
    "v_swmmac_i32_16x16x32_iu4": Variant("iu4", "iu4", "i32", 32, True),
    "v_swmmac_i32_16x16x64_iu4": Variant("iu4", "iu4", "i32", 64, True),
    **{f"v_swmmac_f32_16x16x32_{t}": Variant(a, b, "f32", 32, True) for t, (a, b) in _FLOAT8.items()},
}
BITS = {"f16": 16, "bf16": 16, "iu8": 8, "iu4": 4, "fp8": 8, "bf8": 8, "f32": 32, "i32": 32}


def _registers(ex, w, inst, field: str, nreg: int) -> np.ndarray:
    """The VGPR block operand `field` names, as [n, lanes, nreg] words."""
    code = inst.fields[field]
    if field == "vdst":  # a VGPR number, not an operand code
        code += 256
    if code < 256:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: its {field} operand must be VGPRs")
    base = code - 256
    if base + nreg > ex.st.vgpr.shape[0]:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: v[{base}:{base + nreg - 1}] is past the wave's VGPRs")
    return np.ascontiguousarray(ex.st.vgpr[base:base + nreg, w, :].transpose(1, 2, 0))


def _elements(inst, i: int, kind: str, words: np.ndarray, place: layout.Place) -> np.ndarray:
    """The values (f64, or int64 for integers) of operand i's elements at `place`, from its [n, lanes, nreg] words."""
    bits = BITS[kind]
    raw = (words[:, place.lane, place.reg].astype(I64) >> place.bit) & ((1 << bits) - 1)
    if kind in ("iu8", "iu4"):
        if neg_lo(inst, i):  # signed: sign-extend
            top = 1 << (bits - 1)
            raw = (raw ^ top) - top
        return raw
    if kind in ("fp8", "bf8"):
        return (FP8 if kind == "fp8" else BF8)[raw]
    negate = np.where(place.bit % 32 == 0, neg_lo(inst, i), neg_hi(inst, i)).astype(I64) << 15
    h = (raw ^ negate).astype(U16)
    return (h.view(F16) if kind == "f16" else bf16_to_f32(h)).astype(F64)


def _inline_c(ex, w, inst, code: int, out: str) -> np.ndarray:
    """An inline-constant C as [n, 16, 16] values: the constant in every element, read as C's element type."""
    bits = constant(code, {"f32": "f32", "i32": "b32"}.get(out, "f16"))
    if bits is None:
        raise ex.illegal_inst(w, inst, "WMMA C operand must be VGPRs or an inline constant")
    if out == "i32":  # (neg_lo[2] does not apply to an integer C, as for a VGPR C)
        return np.full((len(w), 16, 16), int(np.array(bits, U32).view(np.int32)), I64)
    if out == "f32":
        value = float(np.array(bits, U32).view(F32))
    elif out == "bf16" and code >= 240:  # a float constant: its value rounded to bf16
        value = float(bf16_to_f32(to_bf16(np.array([constant(code, "f32")], U32).view(F32)))[0])
    else:
        h = np.array(bits, U16)
        value = float(h.view(F16) if out == "f16" else bf16_to_f32(h))
    c = np.full((len(w), 16, 16), value, F64)
    return -c if neg_lo(inst, 2) else c


def _accumulator(ex, w, inst, v: Variant) -> np.ndarray:
    """C as [n, 16, 16] values (f64 or int64): src2 for WMMA, vdst itself for SWMMAC."""
    place = layout.accumulator(BITS[v.out], ex.st.lanes)
    field = "vdst" if v.sparse else "src2"
    if not v.sparse and inst.fields["src2"] < 256:
        return _inline_c(ex, w, inst, inst.fields["src2"], v.out)
    words = _registers(ex, w, inst, field, place.nreg)[:, place.lane, place.reg] >> place.bit.astype(U32)
    if v.out == "i32":
        return words.view(np.int32).astype(I64)
    if v.out == "f32":
        c = words.view(F32).astype(F64)
    else:
        h = (words & U32(0xFFFF)).astype(U16)
        c = (h.view(F16) if v.out == "f16" else bf16_to_f32(h)).astype(F64)
    return -c if neg_lo(inst, 2) and not v.sparse else c


def _dense_product(ex, w, inst, v: Variant) -> np.ndarray:
    """A x B as [n, 16, 16] (exact)."""
    pa = layout.dense(BITS[v.a], v.k, ex.st.lanes)
    pb = layout.dense(BITS[v.b], v.k, ex.st.lanes)
    a = _elements(inst, 0, v.a, _registers(ex, w, inst, "src0", pa.nreg), pa)  # [n, i, k]
    b = _elements(inst, 1, v.b, _registers(ex, w, inst, "src1", pb.nreg), pb)  # [n, j, k]
    return np.einsum("nik,njk->nij", a, b)


def _sparse_product(ex, w, inst, v: Variant) -> np.ndarray:
    """A (4:2 sparse, expanded by its compression index) x B as [n, 16, 16] (exact)."""
    bits, lanes = BITS[v.a], ex.st.lanes
    pairs, where = layout.sparse_a(bits, v.k, lanes)
    pb = layout.dense(BITS[v.b], v.k, lanes, sparse_op=True)
    a = _elements(inst, 0, v.a, _registers(ex, w, inst, "src0", pairs.nreg), pairs)  # [n, i, group, 2]
    b = _elements(inst, 1, v.b, _registers(ex, w, inst, "src1", pb.nreg), pb)  # [n, j, k]
    sets = layout.index_sets(bits, v.k, lanes)
    key = (op_sel(inst, 0) | op_sel(inst, 1) << 1) & (sets - 1)  # LLVM's index_key
    shift = where.bit + key * (32 // sets)
    fields = (_registers(ex, w, inst, "src2", 1)[:, where.lane, 0].astype(I64) >> shift) & 0xF  # [n, i, group]
    k = 4 * np.arange(v.k // 4)[None, None, :, None] + np.stack([fields & 3, fields >> 2], axis=-1)  # [n, i, g, 2]
    rows = np.take_along_axis(b[:, None, :, :], k.reshape(len(w), 16, 1, -1), axis=3)  # [n, i, j, g * 2]
    return np.einsum("nip,nijp->nij", a.reshape(len(w), 16, -1), rows)


def _write_d(ex, w, inst, v: Variant, d: np.ndarray) -> None:
    """Round D ([n, 16, 16] exact values) to its type and write it to vdst's registers in the active lanes."""
    place = layout.accumulator(BITS[v.out], ex.st.lanes)
    with np.errstate(all="ignore"):
        if v.out == "i32":
            if inst.fields.get("clamp", 0):
                d = np.clip(d, -(1 << 31), (1 << 31) - 1)
            bits = (d & 0xFFFFFFFF).astype(U32)
        elif v.out == "f32":
            bits = d.astype(F32).view(U32)
        else:
            bits = (d.astype(F16).view(U16) if v.out == "f16" else to_bf16(d)).astype(U32)
    words = np.zeros((len(w), ex.st.lanes, place.nreg), U32)
    np.bitwise_or.at(words, (slice(None), place.lane, place.reg), bits << place.bit.astype(U32))
    active = ex.st.exec_lanes(w)
    for r in range(place.nreg):
        write_vgpr(ex, w, inst.fields["vdst"] + r, words[:, :, r], active)


def wmma(name: str):
    """The semantic function of one gfx12 WMMA or SWMMAC variant."""
    v = VARIANTS[name]
    product = _sparse_product if v.sparse else _dense_product

    def fn(ex, w, inst):
        c = _accumulator(ex, w, inst, v)
        with np.errstate(all="ignore"):
            _write_d(ex, w, inst, v, product(ex, w, inst, v) + c)
    return fn


for _name in VARIANTS:
    register(_name, wmma(_name), G)
