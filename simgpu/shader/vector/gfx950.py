"""gfx950 (CDNA4) vector ALU instructions: what CDNA4 adds to gfx942's (family gfx9's own entries of the semantics
table; gfx942 code never holds these opcodes: its decoder does not know them).

From the CDNA4 ISA reference's pseudo-code:

- v_prng_b32: one step of a 32-bit Galois LFSR, D = (S0 << 1) ^ (S0[31] ? 197 : 0) (expression form).
- v_cvt_f32_bf16: D = {S0[15:0], 16'0}, exact (expression form). An inline float constant source reads as its 32-bit
  pattern here, whose low half is 0, where the hardware presumably supplies the bf16 constant: not modelled (LLVM
  folds the conversion of a constant, so compiled code does not meet it).
- v_bitop3_b32 / v_bitop3_b16: any function of three bitwise inputs: bit (S0 << 2 | S1 << 1 | S2) of the 8-bit truth
  table, which the encoding holds in NEG (bits 0-2), ABS (3-5) and OMOD (6-7); the 16-bit form writes the low half
  (the high half: gfx942's rule for 16-bit results, kept).
- v_cvt_pk_bf16_f32 / v_cvt_pk_f16_f32: D = {cvt(S1), cvt(S0)}, each rounded to nearest even whatever MODE says
  (the pseudo-code forces ROUND_NEAREST_EVEN); a NaN stays a NaN, quieted.
- v_dot2c_f32_bf16: D = (D + S0.lo*S1.lo) + S0.hi*S1.hi, v_dot2_f32_bf16: D = (S0.lo*S1.lo + S0.hi*S1.hi) + S2 --
  the pseudo-code's order (the two differ: gfx11's v_dot2_f32_bf16 adds S2 first); each product of two bf16 values is
  exact in f32, each addition rounds to f32 (nearest even), MODE's f32 denormal mode flushes the inputs and results.
- v_minimum3_f32 / v_maximum3_f32 (and the packed v_pk_minimum3_f16 / v_pk_maximum3_f16): IEEE 754-2019 minimum /
  maximum applied twice, as gfx12's (vector.gfx12.minimum: a NaN operand yields a NaN, -0 < +0); defined in the
  expression form, the packed forms run per lane half (vop3p.PACKED).
- v_permlane16_swap_b32 vdst, src0: for each 32-lane half, src0's lanes 0-15 and vdst's lanes 16-31 trade places;
  v_permlane32_swap_b32: src0's lanes 0-31 and vdst's lanes 32-63. Both registers are written; the pseudo-code reads
  and writes every lane whatever EXEC says, and so does this.

- v_cvt_sr_bf16_f32 / v_cvt_sr_f16_f32: S0 with the top 23 - M bits of S1 added to its mantissa field, wrapping in the
  field (M = 7 for bf16, 10 for f16), then rounded to nearest even into the half op_sel[3] picks (the other half
  kept). The reference names the rounding function (f32_to_bf16_sr) without defining it; this is the reading of its
  v_cvt_sr_fp8_f32 pseudo-code carried over (sem.minifloat.stochastic_dither).
- v_ashr_pk_i8_i32 / v_ashr_pk_u8_i32: D.b16 = {SAT8(S1 >> S2[4:0]), SAT8(S0 >> S2[4:0])}, arithmetic shifts, SAT8
  saturating to the signed / unsigned byte range (expression form); the 16-bit result goes into the half op_sel[3]
  picks, the other half kept.
- The fp8/bf8 conversions (OCP formats on gfx950) are vector.cvt8's, the scaled v_cvt_scalef32_* family
  vector.scalef32's.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import write_vgpr
from simgpu.shader.sem import fpexact as fx
from simgpu.shader.sem.expr import bitcast, cast, flush_in, select
from simgpu.shader.sem.minifloat import stochastic_dither
from simgpu.shader.sem.numpy_gen import numpy_kernel
from simgpu.shader.semantics import register
from simgpu.shader.state import wsel
from simgpu.shader.vector.gfx9 import _define, _spec
from simgpu.shader.vector.gfx12 import maximum, minimum
from simgpu.shader.vector.valu import OpCtx, VOp, _definition
from simgpu.shader.vector.vop3p import (
    _write32,
    bf16_to_f32,
    clamp01,
    f32_denorm,
    f32_to_bf16,
    fma64,
    packed,
    packed_spec,
    raw32,
)

G = "gfx9"
U16, U32, F16, F32, F64 = np.uint16, np.uint32, np.float16, np.float32, np.float64

_define("v_prng_b32", "u32", ("u32",), lambda a: (a << 1) ^ (a >> 31) * 197)
_define("v_cvt_f32_bf16", "u32", ("u32",), lambda a: a << 16)


# ---------------------------------------------------------------------------------------------- bitop3

def _truth_table(inst) -> int:
    f = inst.fields
    return (f.get("neg", 0) & 7) | (f.get("abs", 0) & 7) << 3 | (f.get("omod", 0) & 3) << 6


def _bitop3(bits: int):
    def fn(ex, w, inst):
        a, b, c = (raw32(ex, w, inst, i) for i in range(3))
        table, out = _truth_table(inst), np.zeros(a.shape, U32)
        for k in range(8):  # minterm k: S0 is bit 2 of k, S1 bit 1, S2 bit 0
            if table >> k & 1:
                out |= (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
        mask = ex.st.exec_lanes(w)
        if bits == 16:
            old = ex.st.vgpr[inst.fields["vdst"], wsel(w), :]
            out = (old & U32(0xFFFF0000)) | (out & U32(0xFFFF))
        write_vgpr(ex, w, inst.fields["vdst"], out, mask)
    return fn


register("v_bitop3_b32", _bitop3(32), G)
register("v_bitop3_b16", _bitop3(16), G)


# ---------------------------------------------------------------------------------------------- conversions

def _flushed(ctx: OpCtx, xs):
    dm = fx.denorm_mode(ctx.mode, "f32")
    return xs if (dm & 1).all() else [fx.flush_in(x, dm) for x in xs]


def _pk_bf16(ctx: OpCtx, a, b):
    a, b = _flushed(ctx, [a, b])
    return f32_to_bf16(a).astype(U32) | f32_to_bf16(b).astype(U32) << U32(16)


def _pk_f16(ctx: OpCtx, a, b):
    a, b = _flushed(ctx, [a, b])
    with np.errstate(all="ignore"):  # numpy's conversion rounds to nearest even; a NaN stays a (quiet) NaN
        lo, hi = np.asarray(a, F32).astype(F16), np.asarray(b, F32).astype(F16)
    return lo.view(U16).astype(U32) | hi.view(U16).astype(U32) << U32(16)


_spec("v_cvt_pk_bf16_f32", VOp("u32", ("f32", "f32"), _pk_bf16, no_omod=True))
_spec("v_cvt_pk_f16_f32", VOp("u32", ("f32", "f32"), _pk_f16, no_omod=True))


def _sr_bf16(ctx: OpCtx, a, r):
    return f32_to_bf16(stochastic_dither(np.asarray(a, F32).view(U32), r, 7).view(F32))


def _sr_f16(ctx: OpCtx, a, r):
    bits = stochastic_dither(np.asarray(a, F32).view(U32), r, 10)
    with np.errstate(all="ignore"):  # numpy's conversion rounds to nearest even
        h = bits.view(F32).astype(F16).view(U16)
    # a NaN (an infinity the dither gave a payload, too) quieted with its sign and top payload bits, as v_cvt_f16_f32's
    nan = ((bits >> U32(16)) & U32(0x8000)) | U32(0x7E00) | ((bits >> U32(13)) & U32(0x3FF))
    return np.where(np.isnan(bits.view(F32)), nan.astype(U16), h)


# 16-bit results: into the half op_sel[3] picks, the other half kept (the executor's rule for 16-bit results)
_spec("v_cvt_sr_bf16_f32", VOp("b16", ("f32", "u32"), _sr_bf16, no_omod=True))
_spec("v_cvt_sr_f16_f32", VOp("b16", ("f32", "u32"), _sr_f16, no_omod=True))


def _ashr_pk(lo: int, hi: int):
    """v_ashr_pk_{i8,u8}_i32: {SAT8(S1 >> S2[4:0]), SAT8(S0 >> S2[4:0])}, arithmetic shifts, SAT8 clamping to
    [lo, hi] (expression form)."""
    def sat8(x):
        return select(x <= lo, lo & 0xFF, select(x >= hi, hi & 0xFF, x & 0xFF))

    def fn(a, b, c):
        n = bitcast(c & 31, "i32")
        return cast(sat8(a >> n) | sat8(b >> n) << 8, "u16")
    return fn


_define("v_ashr_pk_i8_i32", "u16", ("i32", "i32", "u32"), _ashr_pk(-128, 127))
_define("v_ashr_pk_u8_i32", "u16", ("i32", "i32", "u32"), _ashr_pk(0, 255))


# ---------------------------------------------------------------------------------------------- bf16 dot products

def _dot2c(ctx: OpCtx, a, b, d):
    dm = fx.denorm_mode(ctx.mode, "f32")
    lo = [bf16_to_f32(x & U32(0xFFFF)) for x in (a, b)]
    hi = [bf16_to_f32(x >> U32(16)) for x in (a, b)]
    lo, hi = [fx.flush_in(x, dm) for x in lo], [fx.flush_in(x, dm) for x in hi]
    with np.errstate(all="ignore"):
        acc = fx.flush_out(fma64(lo[0], lo[1], fx.flush_in(d, dm)).astype(F32), dm)
        return fx.flush_out(fma64(hi[0], hi[1], acc).astype(F32), dm)


_spec("v_dot2c_f32_bf16", VOp("f32", ("u32", "u32"), _dot2c, acc=True))


def _dot2_bf16(ex, w, inst) -> None:
    """v_dot2_f32_bf16 in CDNA4's order: (S0.lo*S1.lo + S0.hi*S1.hi) + S2."""
    a, b = packed(ex, w, inst, 0, "bf16"), packed(ex, w, inst, 1, "bf16")
    dm = f32_denorm(ex, w)
    c = fx.flush_in(raw32(ex, w, inst, 2, "f32").view(F32), dm)
    lo = [fx.flush_in(bf16_to_f32(x[0]), dm) for x in (a, b)]
    hi = [fx.flush_in(bf16_to_f32(x[1]), dm) for x in (a, b)]
    with np.errstate(all="ignore"):
        first = fx.flush_out((np.asarray(lo[0], F64) * lo[1]).astype(F32), dm)  # exact: 8-bit significands
        pair = fx.flush_out(fma64(hi[0], hi[1], first).astype(F32), dm)
        acc = fx.flush_out(fma64(pair, np.ones_like(pair, F64), c).astype(F32), dm)
    if inst.fields.get("clamp", 0):
        acc = clamp01(acc)
    _write32(ex, w, inst, acc.view(U32))


register("v_dot2_f32_bf16", _dot2_bf16, G)


# ---------------------------------------------------------------------------------------------- minimum3 / maximum3

def _imum3(f):
    """f applied twice over the inputs flushed as MODE's input denorm mode for their type says (expression form)."""
    return lambda a, b, c: f(f(flush_in(a), flush_in(b)), flush_in(c))


def _packed(name: str, fn) -> None:
    """A v_pk_* f16 op with no VALU opcode of its own: the definition `fn` run on each lane half (vop3p.PACKED)."""
    d = _definition("f16", ("f16",) * 3, fn, {})
    packed_spec(name, VOp("f16", ("f16",) * 3, numpy_kernel(d, name), definition=d), G)


_define("v_minimum3_f32", "f32", ("f32",) * 3, _imum3(minimum))
_define("v_maximum3_f32", "f32", ("f32",) * 3, _imum3(maximum))
_packed("v_pk_minimum3_f16", _imum3(minimum))
_packed("v_pk_maximum3_f16", _imum3(maximum))


# ---------------------------------------------------------------------------------------------- lane swaps

def _swap(span: int):
    """v_permlane16_swap (span 16) / v_permlane32_swap (32): src0's low `span` lanes of each 2*span group trade
    places with vdst's high `span` lanes."""
    def fn(ex, w, inst):
        if ex.st.lanes != 64:
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic} needs wave64")
        vdst, src = inst.fields["vdst"], inst.fields["src0"] - 256
        ix = wsel(w)
        d, s = ex.st.vgpr[vdst, ix, :].copy(), ex.st.vgpr[src, ix, :].copy()
        lanes = np.arange(64)
        low = (lanes // span) % 2 == 0  # the lanes of src0 that move
        new_s, new_d = s.copy(), d.copy()
        new_s[:, low] = d[:, lanes[low] + span]
        new_d[:, lanes[low] + span] = s[:, low]
        every = np.ones(d.shape, bool)
        write_vgpr(ex, w, src, new_s, every)
        write_vgpr(ex, w, vdst, new_d, every)
    return fn


register("v_permlane16_swap_b32", _swap(16), G)
register("v_permlane32_swap_b32", _swap(32), G)
