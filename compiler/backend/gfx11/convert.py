"""CAST and BITCAST: conversions between every pair of IR dtypes, in the register conventions of
compiler.backend.gfx11.select.

- integers: widening sign- or zero-extends by the source's signedness, narrowing keeps the low bits and
  re-extends; x -> bool is x != 0; bool -> integer or float is 1 or 0.
- float -> float: hardware conversions rounding to nearest even; float64 -> float16/bfloat16 rounds to float32
  toward zero with the inexact bit ORed into the last place (round to odd) first, so the final rounding is a
  single correct one; float16 <-> bfloat16 through float32.
- float -> integer truncates (v_cvt_*: NaN gives 0, out-of-range saturates; the IR leaves those cases to the
  backend); 64-bit results as LLVM builds them: the high word from trunc(x * 2^-32) (floor for the magnitude),
  the low word from an FMA remainder, then the sign.
- integer -> float: hardware conversions for 32 bits; int64 -> float64 as hi * 2^32 + lo (one rounding);
  int64 -> float32 normalizes the magnitude into 32 bits with a sticky bit, converts once and scales (LLVM's
  expansion).
"""

from __future__ import annotations

from compiler.backend.gfx11 import operands as opnd
from compiler.backend.gfx11.alu_float import round_bf16
from compiler.backend.gfx11.alu_int import normalize
from compiler.backend.gfx11.operands import NULL
from compiler.backend.gfx11.select import RULES, C, GfxSelector, nregs
from compiler.backend.mir import Sub
from compiler.dtypes import DType, dtypes
from compiler.ir.fold import exec_alu
from compiler.ir.ops import Ops, UOp


def _lo(x: Sub) -> Sub:
    return Sub(x.reg, x.off, 1)


def _hi(x: Sub) -> Sub:
    return Sub(x.reg, x.off + 1, 1)


@RULES.rule(Ops.CAST, when=lambda s, u: u.src[0].op is Ops.CONST, name="cast_const")
def _cast_const(s: GfxSelector, u: UOp) -> None:
    v = exec_alu(Ops.CAST, u.dtype, [u.src[0].arg], u.src[0].dtype)
    if v is None:
        _cast(s, u)
        return
    d = s.dst(u)
    s.copy(d, C(v, u.dtype, None), u.dtype)


@RULES.rule(Ops.CAST, name="cast")
def _cast(s: GfxSelector, u: UOp) -> None:
    src, dst = u.src[0].dtype, u.dtype
    x = s.src(u.src[0])
    if isinstance(x, C):
        x = s.in_sgpr(x, src) if src != dtypes.bool else s.mask_of(x)
    scalar = u in s.scalar
    if dst == dtypes.bool:
        _to_bool(s, u, src, x)
    elif src == dtypes.bool:
        _from_bool(s, u, dst, x)
    elif src.is_int and dst.is_int:
        _int_int(s, u, src, dst, x, scalar)
    elif src.is_float and dst.is_float:
        _float_float(s, u, src, dst, x)
    elif src.is_float:
        _float_int(s, u, src, dst, x)
    else:
        _int_float(s, u, src, dst, x)


def _to_bool(s: GfxSelector, u: UOp, src: DType, x) -> None:
    d = s.dst(u, "s")
    if src.is_float:
        kind = {"float16": "f16", "float64": "f64"}.get(src.name, "f32")
        s.vop(f"v_cmp_neq_{kind}_e64", d, opnd.imm(0, kind), x)
    elif src.itemsize == 8:
        if u in s.scalar:
            s.sop("s_cmp_lg_u64", x, opnd.imm(0, "b64"), ndef=0, flags=("scc",))
            s.sop("s_cselect_b32", d, opnd.imm(-1, "b32"), opnd.imm(0, "b32"), flags=("use_scc",))
        else:
            s.vop("v_cmp_ne_u64_e64", d, opnd.imm(0, "b64"), x)
    elif u in s.scalar:
        s.sop("s_cmp_lg_u32", x, opnd.imm(0, "b32"), ndef=0, flags=("scc",))
        s.sop("s_cselect_b32", d, opnd.imm(-1, "b32"), opnd.imm(0, "b32"), flags=("use_scc",))
    else:
        s.vop("v_cmp_ne_u32_e64", d, opnd.imm(0, "b32"), x)


def _from_bool(s: GfxSelector, u: UOp, dst: DType, m) -> None:
    one = {"float16": 0x3C00, "float64": 0x3FF00000}.get(dst.name, 0x3F800000 if dst.is_float else 1)
    if u in s.scalar:
        d = s.dst(u, "s")
        s.sop("s_cmp_lg_u32", m, opnd.imm(0, "b32"), ndef=0, flags=("scc",))
        if dst.itemsize == 8:
            s.sop("s_cselect_b32", _lo(d), opnd.imm(1 if not dst.is_float else 0, "b32"), opnd.imm(0, "b32"),
                  flags=("use_scc",))
            s.sop("s_cselect_b32", _hi(d), opnd.imm(one if dst.is_float else 0, "b32"), opnd.imm(0, "b32"),
                  flags=("use_scc",))
        else:
            s.sop("s_cselect_b32", d, opnd.imm(one, "b32"), opnd.imm(0, "b32"), flags=("use_scc",))
        return
    d = s.dst(u, "v")
    if dst.itemsize == 8:
        if dst.is_float:
            s.vop("v_mov_b32", _lo(d), opnd.imm(0, "b32"))
            s.vop("v_cndmask_b32_e64", _hi(d), opnd.imm(0, "b32"), opnd.imm(one, "b32"), m, fixed_scalar=(2,))
        else:
            s.vop("v_cndmask_b32_e64", _lo(d), opnd.imm(0, "b32"), opnd.imm(1, "b32"), m, fixed_scalar=(2,))
            s.vop("v_mov_b32", _hi(d), opnd.imm(0, "b32"))
    else:
        s.vop("v_cndmask_b32_e64", d, opnd.imm(0, "b32"), opnd.imm(one, "b32"), m, fixed_scalar=(2,))


def _int_int(s: GfxSelector, u: UOp, src: DType, dst: DType, x, scalar: bool) -> None:
    if dst.itemsize == 8:
        d = s.dst(u)
        if src.itemsize == 8:
            s.copy(d, x, dst)
            return
        if scalar:
            s.sop("s_mov_b32", _lo(d), x)
            if src.kind == "i":
                s.sop("s_ashr_i32", _hi(d), x, opnd.imm(31, "b32"), flags=("scc",))
            else:
                s.sop("s_mov_b32", _hi(d), opnd.imm(0, "b32"))
        else:
            s.vop("v_mov_b32", _lo(d), x)
            if src.kind == "i":
                s.vop("v_ashrrev_i32", _hi(d), opnd.imm(31, "b32"), x)
            else:
                s.vop("v_mov_b32", _hi(d), opnd.imm(0, "b32"))
        return
    low = _lo(x) if src.itemsize == 8 else x
    if dst.itemsize == 4 or (dst.itemsize >= src.itemsize and (dst.kind == src.kind or src.kind == "u")):
        s.set(u, low)  # same bits (already extended the way dst needs)
        return
    d = s.dst(u)
    s.copy(d, low, dtypes.int32)
    normalize(s, d, dst)


def _float_float(s: GfxSelector, u: UOp, src: DType, dst: DType, x) -> None:
    sn, dn = src.name, dst.name
    d = s.dst(u, "v")
    if {sn, dn} == {"float32", "bfloat16"}:
        if dn == "float32":
            s.set(u, x)  # bfloat16 is float32 already
        else:
            round_bf16(s, d, s.in_vgpr(x, dtypes.float32))
        return
    if sn == "float16" and dn == "float32":
        s.vop("v_cvt_f32_f16_e64", d, x)
    elif sn == "float32" and dn == "float16":
        s.vop("v_cvt_f16_f32_e64", d, x)
    elif sn == "float32" and dn == "float64":
        s.vop("v_cvt_f64_f32", d, x)
    elif sn == "float64" and dn == "float32":
        s.vop("v_cvt_f32_f64", d, x)
    elif sn == "bfloat16" and dn == "float64":
        s.vop("v_cvt_f64_f32", d, x)
    elif sn == "float16" and dn == "float64":
        t = s.vreg().all
        s.vop("v_cvt_f32_f16_e64", t, x)
        s.vop("v_cvt_f64_f32", d, t)
    elif sn == "float16" and dn == "bfloat16":
        t = s.vreg().all
        s.vop("v_cvt_f32_f16_e64", t, x)
        round_bf16(s, d, t)
    elif sn == "bfloat16" and dn == "float16":
        s.vop("v_cvt_f16_f32_e64", d, x)
    elif sn == "float64":  # -> float16 / bfloat16: round to odd in float32 first
        t = _f64_to_f32_odd(s, x)
        if dn == "float16":
            s.vop("v_cvt_f16_f32_e64", d, t)
        else:
            round_bf16(s, d, t)
    else:
        raise AssertionError(f"no float conversion {sn} -> {dn}")


def _f64_to_f32_odd(s: GfxSelector, x) -> Sub:
    """float64 -> float32 rounded to odd: toward zero, with the last bit set when inexact (then rounding that
    to float16/bfloat16 to nearest even rounds the float64 once). Without a change of the rounding mode: the
    nearest float32 t is stepped one unit toward zero (its bit pattern minus one: sign and magnitude) when it
    rounded away from zero (|t| > |x|; an overflow to infinity becomes FLT_MAX), and NaN stays NaN."""
    t, back, step, bit, tz, out = s.vreg().all, s.vreg(2).all, s.vreg().all, s.vreg().all, s.vreg().all, \
        s.vreg().all
    inexact, away = s.sreg().all, s.sreg().all
    s.vop("v_cvt_f32_f64", t, x)
    s.vop("v_cvt_f64_f32", back, t)
    s.vop("v_cmp_neq_f64_e64", inexact, back, x)
    s.vop("v_cmp_gt_f64_e64", away, abs(back), abs(x))
    s.vop("v_cndmask_b32_e64", step, opnd.imm(0, "b32"), opnd.imm(1, "b32"), away, fixed_scalar=(2,))
    s.vop("v_sub_nc_u32", tz, t, step)
    s.vop("v_cndmask_b32_e64", bit, opnd.imm(0, "b32"), opnd.imm(1, "b32"), inexact, fixed_scalar=(2,))
    s.vop("v_or_b32", out, tz, bit)
    return out


def _float_int(s: GfxSelector, u: UOp, src: DType, dst: DType, x) -> None:
    d = s.dst(u, "v")
    if src.name == "float16":
        t = s.vreg().all
        s.vop("v_cvt_f32_f16_e64", t, x)
        x, src = t, dtypes.float32
    f64 = src.name == "float64"
    if dst.itemsize == 8:
        _float_to_int64(s, d, x, f64, dst.kind == "i")
        return
    suffix = "u32" if dst.kind == "u" else "i32"
    s.vop(f"v_cvt_{suffix}_{'f64' if f64 else 'f32'}", d, x)
    if dst.itemsize < 4:
        normalize(s, d, dst)


def _float_to_int64(s: GfxSelector, d: Sub, x, f64: bool, signed: bool) -> None:
    """trunc(x) as a 64-bit integer (module docstring)."""
    k = "f64" if f64 else "f32"
    n = 2 if f64 else 1
    t, a, hi, lo_f = (s.vreg(n).all for _ in range(4))
    s.vop(f"v_trunc_{k}", t, x)
    mag = abs(t) if signed else t
    s.vop(f"v_mul_{k}", a, mag, opnd.imm(2.0 ** -32, k))
    s.vop(f"v_floor_{k}", hi, a)
    s.vop(f"v_fma_{k}", lo_f, hi, opnd.imm(-(2.0 ** 32), k), mag)
    lo, h = s.vreg().all, s.vreg().all
    s.vop(f"v_cvt_u32_{k}", h, hi)
    s.vop(f"v_cvt_u32_{k}", lo, lo_f)
    if not signed:
        s.vop("v_mov_b32", _lo(d), lo)
        s.vop("v_mov_b32", _hi(d), h)
        return
    sign = s.vreg().all
    s.vop("v_ashrrev_i32", sign, opnd.imm(31, "b32"), _hi(t) if f64 else t)
    s.vop("v_xor_b32", lo, lo, sign)
    s.vop("v_xor_b32", h, h, sign)
    c = s.sreg().all
    s.vop("v_sub_co_u32", _lo(d), c, lo, sign, ndef=2)
    s.vop("v_sub_co_ci_u32_e64", _hi(d), NULL, h, sign, c, ndef=2, fixed_scalar=(2,))


def _int_float(s: GfxSelector, u: UOp, src: DType, dst: DType, x) -> None:
    d = s.dst(u, "v")
    signed = src.kind == "i"
    if src.itemsize == 8:
        if dst.name == "float64":
            _int64_to_f64(s, d, x, signed)
            return
        t = s.vreg().all
        _int64_to_f32(s, t, x, signed)
        _from_f32(s, d, t, dst)
        return
    suffix = "i32" if signed else "u32"
    if dst.name == "float64":
        s.vop(f"v_cvt_f64_{suffix}", d, x)
        return
    if dst.name == "float32":
        s.vop(f"v_cvt_f32_{suffix}", d, x)
        return
    t = s.vreg().all
    s.vop(f"v_cvt_f32_{suffix}", t, x)
    _from_f32(s, d, t, dst)


def _from_f32(s: GfxSelector, d: Sub, t: Sub, dst: DType) -> None:
    if dst.name == "float32":
        s.vop("v_mov_b32", d, t)
    elif dst.name == "float16":
        s.vop("v_cvt_f16_f32_e64", d, t)
    else:
        round_bf16(s, d, t)


def _int64_to_f64(s: GfxSelector, d: Sub, x, signed: bool) -> None:
    h, lo = s.vreg(2).all, s.vreg(2).all
    s.vop(f"v_cvt_f64_{'i32' if signed else 'u32'}", h, _hi(x))
    s.vop("v_ldexp_f64", h, h, opnd.imm(32, "b32"))
    s.vop("v_cvt_f64_u32", lo, _lo(x))
    s.vop("v_add_f64", d, h, lo)


def _int64_to_f32(s: GfxSelector, d: Sub, x, signed: bool) -> None:
    """LLVM's expansion: shift the value left so its top bits fill the high word (keeping the sign), fold the
    low word into a sticky bit, convert the high word once, scale by 2^(32 - shift)."""
    xv = s.in_vgpr(x, dtypes.int64)
    n, t, y, sticky, w, f, e = (s.vreg().all for _ in range(7))
    sh = s.vreg(2).all
    if signed:
        sgn = s.vreg().all
        s.vop("v_xor_b32", sgn, _lo(xv), _hi(xv))
        s.vop("v_ashrrev_i32", sgn, opnd.imm(31, "b32"), sgn)
        s.vop("v_add_nc_u32", sgn, opnd.imm(32, "b32"), sgn)  # 32, or 31 when the signs differ
        s.vop("v_cls_i32", n, _hi(xv))
        s.vop("v_add_nc_u32", n, opnd.imm(-1, "b32"), n)
        s.vop("v_min_u32", n, n, sgn)
    else:
        s.vop("v_clz_i32_u32", n, _hi(xv))
        s.vop("v_min_u32", n, opnd.imm(32, "b32"), n)
    s.vop("v_lshlrev_b64", sh, n, xv)
    s.vop("v_min_u32", sticky, opnd.imm(1, "b32"), _lo(sh))
    s.vop("v_or_b32", w, _hi(sh), sticky)
    s.vop(f"v_cvt_f32_{'i32' if signed else 'u32'}", f, w)
    s.vop("v_sub_nc_u32", e, opnd.imm(32, "b32"), n)
    s.vop("v_ldexp_f32", d, f, e)
    _ = (t, y)


# ---- bitcasts ------------------------------------------------------------------------------------------------------
@RULES.rule(Ops.BITCAST, name="bitcast")
def _bitcast(s: GfxSelector, u: UOp) -> None:
    src, dst = u.src[0].dtype, u.dtype
    x = s.src(u.src[0])
    if isinstance(x, C):
        x = s.in_sgpr(x, src) if u in s.scalar else s.in_vgpr(x, src)
    if dst.itemsize >= 4:
        s.set(u, x)
        return
    scalar = isinstance(x, Sub) and x.rc == "s"
    d = s.dst(u, "s" if scalar else "v")
    if src.name == "bfloat16":  # float32 form -> its high half
        op = "ashr" if dst.kind == "i" else "lshr"
        if scalar:
            s.sop(f"s_{op}_{'i32' if op == 'ashr' else 'b32'}", d, x, opnd.imm(16, "b32"), flags=("scc",))
        else:
            s.vop(f"v_{op}rev_{'i32' if op == 'ashr' else 'b32'}", d, opnd.imm(16, "b32"), x)
        return
    if dst.name == "bfloat16":
        if scalar:
            s.sop("s_lshl_b32", d, x, opnd.imm(16, "b32"), flags=("scc",))
        else:
            s.vop("v_lshlrev_b32", d, opnd.imm(16, "b32"), x)
        return
    s.copy(d, x, dtypes.int32)
    if dst.is_int:
        normalize(s, d, dst)


_ = nregs
