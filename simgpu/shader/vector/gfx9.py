"""gfx942 (CDNA3, ISA family gfx9) vector ALU instructions: the family's own entries of the semantics table.

A gfx9 mnemonic that means what a gfx11 one does runs gfx11's spec (the executor reads gfx9's fields: SDWA and
gfx9's DPP controls are in valu / sdwa); the meanings are the CDNA3 ISA reference's, the pairing LLVM's (one
instruction record carries both names). What gfx9 changes or adds:

- Renames: v_add_u32 / v_sub_u32 / v_subrev_u32 (no carry) are v_add_nc_u32 & co.; v_addc_co_u32 / v_subb_co_u32 /
  v_subbrev_co_u32 are v_add_co_ci_u32 & co. (carry in and out through VCC in e32, SGPRs in e64); v_add_i32 /
  v_sub_i32 and the 16-bit v_add_u16 / v_sub_u16 / v_add_i16 / v_sub_i16 are v_add_nc_* (clamp saturates);
  v_ffbh_u32 / v_ffbl_b32 / v_ffbh_i32 are v_clz_i32_u32 / v_ctz_i32_b32 / v_cls_i32; v_cvt_flr_i32_f32 /
  v_cvt_rpi_i32_f32 are v_cvt_floor_i32_f32 / v_cvt_nearest_i32_f32; v_cvt_pkrtz_f16_f32 and v_cvt_pknorm_* are
  v_cvt_pk_rtz_f16_f32 and v_cvt_pk_norm_*; v_mul_legacy_f32 is v_mul_dx9_zero_f32 (0 * anything is 0);
  v_cmp(x)_tru_* are v_cmp(x)_t_*; v_mad_legacy_u16 / i16 are v_mad_u16 / v_mad_i16; v_dot2c_f32_f16 is
  v_dot2acc_f32_f16.
- The fp8/bf8 conversions (FNUZ formats on gfx942, OCP on gfx950) are vector.cvt8's.
- v_cmpx_* write the mask to VCC (e32) or their SGPR destination (e64) as well as to EXEC (valu._write_compare).
- 16-bit results: the instructions LLVM's GCNSubtarget::zeroesHigh16BitsOfDest lists for gfx9 (conversions to
  f16, f16 transcendental and rounding ops, 16-bit shifts, add/sub/mul/min/max, mad/fma/div_fixup) write their
  result zero-extended to the whole VGPR; gfx10+ keep the high half, and so do gfx9's v_fmac_f16 / v_fmamk_f16 /
  v_fmaak_f16 (LLVM: "some instructions changed to preserving the high bits"). The others are not stated
  anywhere: they keep the high half here, as on gfx11.
- New: v_lshl_add_u64 (D = (S0 << S1[2:0]) + S2, 64-bit), v_mov_b64, v_fmac_f64 (fma(S0, S1, D) in f64, MODE's
  rounding and denormals as v_fma_f64), the packed f32 ops v_pk_add_f32 / v_pk_mul_f32 / v_pk_fma_f32 (each half
  of a 64-bit VGPR pair is one f32 lane of the operation: op_sel[i] picks the half source i gives the low lane,
  op_sel_hi[i] the high lane, neg / neg_hi negate them; each lane rounds as v_add_f32 / v_mul_f32 / v_fma_f32; an
  inline constant or literal is the 32-bit f32 constant in the low half and 0 in the high one -- not the f64
  constant a 64-bit operand reads -- which is why LLVM writes `v_pk_mul_f32 v[0:1], v[2:3], 0.5 op_sel_hi:[1,0]`
  to scale both lanes; the high half's 0 is not confirmed against hardware),
  v_pk_mov_b32 (D[31:0] = half op_sel[0] of S0, D[63:32] = half op_sel[1] of S1).
- Not implemented (illegal_instruction): the legacy mad/mac f16 forms (v_mad_f16, v_mac_f16, v_madak_f16,
  v_madmk_f16, v_mad_legacy_f16, v_fma_legacy_f16, v_div_fixup_legacy_f16: unfused or legacy rounding not
  modelled), v_exp_legacy_f32 / v_log_legacy_f32, v_cvt_pkaccum_u8_f32, v_dot2_i32_i16,
  v_dot2_u32_u16, v_dot4_i32_i8, v_dot4c_i32_i8, v_dot8_i32_i4, v_dot8c_i32_i4, v_dot2c_i32_i16, v_subrev_u16,
  v_clrexcp, v_screen_partition_4se_b32.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import vector_src, write_vgpr
from simgpu.shader.sem.expr import cast, fma
from simgpu.shader.sem.numpy_gen import numpy_kernel
from simgpu.shader.semantics import alias, register
from simgpu.shader.vector import (  # noqa: F401 - the shared specs renamed below
    cmp_float,
    cmp_int,
    cvt,
    float_arith,
    int_arith,
    int_bits,
    int_mul,
    vop3p,
)
from simgpu.shader.vector.float_arith import arith
from simgpu.shader.vector.valu import SPECS, ZERO_HIGH16, VOp, _definition, execute
from simgpu.shader.vector.vop3p import op_sel, packed_op, write_mask

G = "gfx9"
U32, U64 = np.uint32, np.uint64


# gfx9's own VALU specs by gfx9 mnemonic (renames of gfx11's and gfx9-only definitions): the JIT translates these
# (jit.lower_gfx9) from the same spec the interpreter runs
OWN_SPECS: dict[str, VOp] = {}


def _spec(name: str, spec: VOp) -> None:
    """Register a VALU spec as gfx9's entry `name` (not in valu.SPECS, which names gfx11's: gfx9 has no VOPD)."""
    OWN_SPECS[name] = spec
    register(name, execute(spec), G)


def _define(name: str, dst: str, srcs: tuple[str, ...], fn, **kw) -> None:
    """A gfx9-only instruction in the expression form (valu.define, registered as gfx9's entry)."""
    d = _definition(dst, srcs, fn, kw)
    _spec(name, VOp(dst, srcs, numpy_kernel(d, name), definition=d, **kw))


_RENAMES = {
    "v_add_u32": "v_add_nc_u32", "v_sub_u32": "v_sub_nc_u32", "v_subrev_u32": "v_subrev_nc_u32",
    "v_addc_co_u32": "v_add_co_ci_u32", "v_subb_co_u32": "v_sub_co_ci_u32", "v_subbrev_co_u32": "v_subrev_co_ci_u32",
    "v_add_i32": "v_add_nc_i32", "v_sub_i32": "v_sub_nc_i32", "v_add_u16": "v_add_nc_u16", "v_sub_u16": "v_sub_nc_u16",
    "v_add_i16": "v_add_nc_i16", "v_sub_i16": "v_sub_nc_i16",
    "v_ffbh_u32": "v_clz_i32_u32", "v_ffbl_b32": "v_ctz_i32_b32", "v_ffbh_i32": "v_cls_i32",
    "v_cvt_flr_i32_f32": "v_cvt_floor_i32_f32", "v_cvt_rpi_i32_f32": "v_cvt_nearest_i32_f32",
    "v_cvt_pkrtz_f16_f32": "v_cvt_pk_rtz_f16_f32", "v_cvt_pknorm_i16_f32": "v_cvt_pk_norm_i16_f32",
    "v_cvt_pknorm_u16_f32": "v_cvt_pk_norm_u16_f32", "v_cvt_pknorm_i16_f16": "v_cvt_pk_norm_i16_f16",
    "v_cvt_pknorm_u16_f16": "v_cvt_pk_norm_u16_f16", "v_mul_legacy_f32": "v_mul_dx9_zero_f32",
    "v_mad_legacy_u16": "v_mad_u16", "v_mad_legacy_i16": "v_mad_i16", "v_dot2c_f32_f16": "v_dot2acc_f32_f16",
}
for _cmp in ("cmp", "cmpx"):
    for _t in ("f16", "f32", "f64"):
        _RENAMES[f"v_{_cmp}_tru_{_t}"] = f"v_{_cmp}_t_{_t}"


def _rename(new: str, old: str) -> None:
    if old in SPECS:
        _spec(new, SPECS[old])
    else:  # a hand-written (non-spec) semantic function
        alias(new, old, G)


for _new, _old in _RENAMES.items():
    _rename(_new, _old)

# LLVM's GCNSubtarget::zeroesHigh16BitsOfDest, the gfx9 entries (gfx9 spellings)
ZERO_HIGH16[G] = frozenset(
    [f"v_{op}_f16" for op in ("rcp", "rsq", "sqrt", "log", "exp", "sin", "cos", "floor", "ceil", "trunc", "rndne",
                              "fract", "frexp_mant", "ldexp", "add", "sub", "subrev", "mul", "max", "min", "mad",
                              "fma", "div_fixup")]
    + ["v_cvt_f16_f32", "v_cvt_f16_u16", "v_cvt_f16_i16", "v_frexp_exp_i16_f16", "v_lshlrev_b16", "v_lshrrev_b16",
       "v_ashrrev_i16", "v_add_u16", "v_sub_u16", "v_subrev_u16", "v_mul_lo_u16", "v_max_u16", "v_min_u16",
       "v_max_i16", "v_min_i16", "v_mad_u16", "v_mad_i16"])


# ---------------------------------------------------------------------------------------------- new 64-bit ops

_define("v_lshl_add_u64", "u64", ("u64", "u32", "u64"), lambda a, s, c: (a << cast(s & 7, "u64")) + c)
_define("v_mov_b64", "b64", ("b64",), lambda a: a)
_define("v_fmac_f64", "f64", ("f64", "f64"), arith(fma), acc=True)


# ---------------------------------------------------------------------------------------------- packed f32


for _op in ("add", "mul", "fma"):  # each lane half as the f32 definition, rounded as MODE says
    packed_op(f"v_pk_{_op}_f32", f"v_{_op}_f32", G)


def _pk_mov_b32(ex, w, inst):
    f = inst.fields
    a = vector_src(ex, w, f["src0"], inst.literal, "b64").astype(U64)
    b = vector_src(ex, w, f["src1"], inst.literal, "b64").astype(U64)
    lo = (a >> U64(32 * op_sel(inst, 0))) & U64(0xFFFFFFFF)
    hi = (b >> U64(32 * op_sel(inst, 1))) & U64(0xFFFFFFFF)
    write_vgpr(ex, w, f["vdst"], lo | (hi << U64(32)), write_mask(ex, w, inst), 2)


register("v_pk_mov_b32", _pk_mov_b32, G)
