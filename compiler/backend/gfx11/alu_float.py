"""Float ALU rules: float32 and float64 on the VALU, float16 with its 16-bit instructions, bfloat16 as float32
rounded back (round to nearest even, NaN kept quiet: the sequence LLVM emits for gfx11, which has no bfloat16
arithmetic).

Division, square root, exp2 and log2 follow LLVM's AMDGPU lowering without fast-math flags (f32 denormals on,
as the kernel descriptor says):

- f32 a / b: v_div_scale both operands, v_rcp_f32, two Newton-Raphson steps with FMAs, v_div_fmas (which
  reads the scale flag from VCC), v_div_fixup: correctly rounded, with IEEE special cases.
- f64 a / b: the same with v_rcp_f64 and one more refinement of the reciprocal.
- f32 sqrt: v_sqrt_f32 of the input (scaled by 2^32 below 2^-96), corrected to the correctly rounded result by
  testing the neighbours s - 1ulp and s + 1ulp with FMAs, scaled back; +-0 and +inf pass through.
- f64 sqrt: v_rsq_f64 of the input (scaled by 2^256 below 2^-767), Goldschmidt/Newton iterations with FMAs,
  scaled back by 2^-128; +-0 and +inf pass through.
- f32 exp2: v_exp_f32 (1 ULP) of x + 64 below -126 and the result times 2^-64, so subnormal results are right.
- f32 log2: v_log_f32 (1 ULP) of x * 2^32 for subnormal x, minus 32.
- float16 a / b: float32 division of the widened operands rounded once to float16 (float32 has 24 >= 2*11+2
  bits, so the double rounding is exact); float16 sqrt is v_sqrt_f16; float16 exp2/log2 go through float32.
- max/min propagate NaN (IR semantics): v_max/v_min, then a canonical NaN where either operand is NaN.
"""

from __future__ import annotations

import math

from compiler.backend.gfx11 import operands as opnd
from compiler.backend.gfx11.operands import NULL, VCC
from compiler.backend.gfx11.select import RULES, C, GfxSelector, fkind
from compiler.backend.mir import Sub
from compiler.dtypes import dtypes
from compiler.ir.ops import Ops, UOp


def is_float(s, u: UOp) -> bool:
    return getattr(u.dtype, "is_float", False)


_VOP3_ONLY = {"fma"}


def _f(kind: str, name: str) -> str:
    """The VALU opcode of a float op (16-bit ops in their VOP3 form: any VGPR, no true16 halves)."""
    return f"v_{name}_{kind}" + ("_e64" if kind == "f16" and name not in _VOP3_ONLY else "")


def fsrc(s: GfxSelector, u: UOp, kind: str):
    """A float source operand (inline constant, literal, or register)."""
    x = s.src(u)
    return s.imm_or_reg(x, kind)


def round_bf16(s: GfxSelector, d: Sub, x: Sub) -> None:
    """d <- the float32 value x rounded to bfloat16 (nearest even; NaN quieted), as a float32."""
    lsb, t, q = s.vreg().all, s.vreg().all, s.vreg().all
    m = s.sreg().all
    s.vop("v_bfe_u32", lsb, x, opnd.imm(16, "b32"), opnd.imm(1, "b32"))
    s.vop("v_add3_u32", t, x, lsb, opnd.imm(0x7FFF, "b32"))
    s.vop("v_cmp_u_f32_e64", m, x, x)
    s.vop("v_or_b32", q, opnd.imm(0x400000, "b32"), x)
    s.vop("v_cndmask_b32_e64", t, t, q, m, fixed_scalar=(2,))
    s.vop("v_and_b32", d, opnd.imm(0xFFFF0000, "b32"), t)


def _out(s: GfxSelector, u: UOp) -> tuple[Sub, Sub]:
    """(register the f32 computation writes, u's register): the same except for bfloat16 (rounded after)."""
    d = s.dst(u, "v")
    if u.dtype.name == "bfloat16":
        return s.vreg().all, d
    return d, d


def _finish(s: GfxSelector, u: UOp, t: Sub, d: Sub) -> None:
    if t is not d:
        round_bf16(s, d, t)


_BIN = {Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "mul"}


@RULES.rule(Ops.ADD, Ops.SUB, Ops.MUL, when=is_float, name="float_binary")
def _binary(s: GfxSelector, u: UOp) -> None:
    k = fkind(u.dtype)
    a, b = fsrc(s, u.src[0], k), fsrc(s, u.src[1], k)
    t, d = _out(s, u)
    if k == "f64" and u.op is Ops.SUB:
        s.vop("v_add_f64", t, a, -b if not isinstance(b, opnd.Imm) else _neg_imm(s, u.src[1], k))
    else:
        s.vop(_f(k, _BIN[u.op]), t, a, b)
    _finish(s, u, t, d)


def _neg_imm(s: GfxSelector, u: UOp, kind: str):
    return s.imm_or_reg(C(-float(u.arg), u.dtype, None), kind)


@RULES.rule(Ops.MULACC, when=is_float, name="float_fma")
def _fma(s: GfxSelector, u: UOp) -> None:
    k = fkind(u.dtype)
    a, b, c = (fsrc(s, x, k) for x in u.src)
    t, d = _out(s, u)
    s.vop(_f(k, "fma"), t, a, b, c)
    _finish(s, u, t, d)


@RULES.rule(Ops.NEG, when=is_float, name="float_neg")
def _neg(s: GfxSelector, u: UOp) -> None:
    k = fkind(u.dtype)
    x = s.src(u.src[0])
    if u in s.scalar:
        d = s.dst(u, "s")
        if k == "f64":
            s.sop("s_mov_b32", Sub(d.reg, d.off, 1), s.b32(s.lo(x)))
            s.sop("s_xor_b32", Sub(d.reg, d.off + 1, 1), s.b32(s.hi(x)), opnd.imm(0x80000000, "b32"), flags=("scc",))
        else:
            s.sop("s_xor_b32", d, s.b32(x), opnd.imm(0x8000 if k == "f16" else 0x80000000, "b32"), flags=("scc",))
        return
    d = s.dst(u, "v")
    if k == "f64":
        s.vop("v_mul_f64", d, s.imm_or_reg(x, "f64"), opnd.imm(-1.0, "f64"))
    else:
        s.vop("v_xor_b32", d, opnd.imm(0x8000 if k == "f16" else 0x80000000, "b32"), s.b32(x, "v"))


@RULES.rule(Ops.MAX, Ops.MIN, when=is_float, name="float_minmax")
def _minmax(s: GfxSelector, u: UOp) -> None:
    k = fkind(u.dtype)
    a, b = fsrc(s, u.src[0], k), fsrc(s, u.src[1], k)
    d = s.dst(u, "v")
    m = s.sreg().all
    name = "max" if u.op is Ops.MAX else "min"
    if k == "f64":
        t = s.vreg(2).all
        s.vop(f"v_{name}_f64", t, a, b)
        s.vop("v_cmp_u_f64_e64", m, a, b)
        s.vop("v_cndmask_b32_e64", Sub(d.reg, d.off, 1), Sub(t.reg, t.off, 1), opnd.imm(0, "b32"), m,
              fixed_scalar=(2,))
        s.vop("v_cndmask_b32_e64", Sub(d.reg, d.off + 1, 1), Sub(t.reg, t.off + 1, 1),
              opnd.imm(0x7FF80000, "b32"), m, fixed_scalar=(2,))
        return
    t = s.vreg().all
    s.vop(_f(k, name), t, a, b)
    s.vop(f"v_cmp_u_{k}_e64", m, a, b)
    s.vop("v_cndmask_b32_e64", d, t, opnd.imm(opnd.nan_bits(k), "b32"), m, fixed_scalar=(2,))


_VCMP = {Ops.CMPLT: "lt", Ops.CMPEQ: "eq", Ops.CMPNE: "neq"}


@RULES.rule(Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE, when=lambda s, u: u.src[0].dtype.is_float, name="float_cmp")
def _cmp(s: GfxSelector, u: UOp) -> None:
    k = fkind(u.src[0].dtype)
    a, b = fsrc(s, u.src[0], k), fsrc(s, u.src[1], k)
    d = s.dst(u, "s")
    s.vop(f"v_cmp_{_VCMP[u.op]}_{k}_e64", d, a, b)


@RULES.rule(Ops.TRUNC, when=is_float, name="float_trunc")
def _trunc(s: GfxSelector, u: UOp) -> None:
    k = fkind(u.dtype)
    d = s.dst(u, "v")
    s.vop(_f(k, "trunc"), d, fsrc(s, u.src[0], k))


# ---- division --------------------------------------------------------------------------------------------------
def fdiv32(s: GfxSelector, d: Sub, a, b) -> None:
    """d <- a / b in float32, correctly rounded (module docstring)."""
    den, r, t, num, q, e, e2 = (s.vreg().all for _ in range(7))
    one = opnd.imm(1.0, "f32")
    s.vop("v_div_scale_f32", den, NULL, b, b, a, ndef=2)
    s.vop("v_rcp_f32", r, den, flags=("trans",))
    s.vop("v_fma_f32", t, -den, r, one)
    s.vop("v_fma_f32", r, t, r, r)
    s.vop("v_div_scale_f32", num, VCC, a, b, a, ndef=2)
    s.vop("v_mul_f32", q, num, r)
    s.vop("v_fma_f32", e, -den, q, num)
    s.vop("v_fma_f32", q, e, r, q)
    s.vop("v_fma_f32", e2, -den, q, num)
    s.vop("v_div_fmas_f32", e2, e2, r, q, flags=("use_vcc",))
    s.vop("v_div_fixup_f32", d, e2, b, a)


def fdiv64(s: GfxSelector, d: Sub, a, b) -> None:
    """d <- a / b in float64, correctly rounded (module docstring)."""
    den, r, t, num, q, e = (s.vreg(2).all for _ in range(6))
    one = opnd.imm(1.0, "f64")
    s.vop("v_div_scale_f64", den, NULL, b, b, a, ndef=2)
    s.vop("v_rcp_f64", r, den, flags=("trans",))
    s.vop("v_fma_f64", t, -den, r, one)
    s.vop("v_fma_f64", r, r, t, r)
    s.vop("v_fma_f64", t, -den, r, one)
    s.vop("v_fma_f64", r, r, t, r)
    s.vop("v_div_scale_f64", num, VCC, a, b, a, ndef=2)
    s.vop("v_mul_f64", q, num, r)
    s.vop("v_fma_f64", e, -den, q, num)
    s.vop("v_div_fmas_f64", e, e, r, q, flags=("use_vcc",))
    s.vop("v_div_fixup_f64", d, e, b, a)


def _f16_to_f32(s: GfxSelector, x) -> Sub:
    t = s.vreg().all
    s.vop("v_cvt_f32_f16_e64", t, x)
    return t


def _pow2_reciprocal(u: UOp) -> float | None:
    """1/c when the divisor is a constant power of two whose reciprocal is a normal number of u's type: then
    x / c and x * (1/c) are the same exact quotient, rounded once the same way."""
    c = u.src[1]
    if c.op is not Ops.CONST or c.arg == 0 or not math.isfinite(c.arg):
        return None
    m, e = math.frexp(abs(c.arg))
    limit = {"float16": 14, "float64": 1022}.get(u.dtype.name, 126)
    if m != 0.5 or not -limit <= 1 - e <= limit:
        return None
    return math.copysign(2.0 ** (1 - e), c.arg)


@RULES.rule(Ops.FDIV, when=lambda s, u: is_float(s, u) and _pow2_reciprocal(u) is not None, name="float_div_pow2")
def _fdiv_pow2(s: GfxSelector, u: UOp) -> None:
    k = fkind(u.dtype)
    t, d = _out(s, u)
    s.vop(_f(k, "mul"), t, fsrc(s, u.src[0], k), s.imm_or_reg(C(_pow2_reciprocal(u), u.dtype, None), k))
    _finish(s, u, t, d)


@RULES.rule(Ops.FDIV, when=is_float, name="float_div")
def _fdiv(s: GfxSelector, u: UOp) -> None:
    k = fkind(u.dtype)
    a, b = fsrc(s, u.src[0], k), fsrc(s, u.src[1], k)
    if k == "f64":
        d = s.dst(u, "v")
        fdiv64(s, d, _reg64(s, a), _reg64(s, b))
        return
    if k == "f16":
        d = s.dst(u, "v")
        t = s.vreg().all
        fdiv32(s, t, _f16_to_f32(s, a), _f16_to_f32(s, b))
        s.vop("v_cvt_f16_f32_e64", d, t)
        return
    t, d = _out(s, u)
    fdiv32(s, t, a, b)
    _finish(s, u, t, d)


def _reg64(s: GfxSelector, x):
    return x


# ---- square root ---------------------------------------------------------------------------------------------
def sqrt32(s: GfxSelector, d: Sub, x) -> None:
    """d <- sqrt(x) in float32, correctly rounded (module docstring)."""
    t, xs, r, sm, sp, em, ep, t2 = (s.vreg().all for _ in range(8))
    small, c1, c2, c3 = (s.sreg().all for _ in range(4))
    s.vop("v_mul_f32", t, opnd.imm(0x4F800000, "f32"), x)
    s.vop("v_cmp_gt_f32_e64", small, opnd.imm(0x0F800000, "f32"), x)
    s.vop("v_cndmask_b32_e64", xs, x, t, small, fixed_scalar=(2,))
    s.vop("v_sqrt_f32", r, xs, flags=("trans",))
    s.vop("v_add_nc_u32", sm, opnd.imm(-1, "b32"), r)
    s.vop("v_add_nc_u32", sp, opnd.imm(1, "b32"), r)
    s.vop("v_fma_f32", em, -sm, r, xs)
    s.vop("v_fma_f32", ep, -sp, r, xs)
    s.vop("v_cmp_ge_f32_e64", c1, opnd.imm(0, "f32"), em)
    s.vop("v_cndmask_b32_e64", r, r, sm, c1, fixed_scalar=(2,))
    s.vop("v_cmp_lt_f32_e64", c2, opnd.imm(0, "f32"), ep)
    s.vop("v_cndmask_b32_e64", r, r, sp, c2, fixed_scalar=(2,))
    s.vop("v_mul_f32", t2, opnd.imm(0x37800000, "f32"), r)
    s.vop("v_cndmask_b32_e64", r, r, t2, small, fixed_scalar=(2,))
    s.vop("v_cmp_class_f32_e64", c3, xs, opnd.imm(0x260, "b32"))
    s.vop("v_cndmask_b32_e64", d, r, xs, c3, fixed_scalar=(2,))


def sqrt64(s: GfxSelector, d: Sub, x) -> None:
    """d <- sqrt(x) in float64, correctly rounded (module docstring)."""
    small, cls = s.sreg().all, s.sreg().all
    k, k2 = s.vreg().all, s.vreg().all
    xs, r, g, h, e, f = (s.vreg(2).all for _ in range(6))
    s.vop("v_cmp_gt_f64_e64", small, opnd.imm(0x1000000000000000, "f64"), x)
    s.vop("v_cndmask_b32_e64", k, opnd.imm(0, "b32"), opnd.imm(0x100, "b32"), small, fixed_scalar=(2,))
    s.vop("v_ldexp_f64", xs, x, k)
    s.vop("v_rsq_f64", r, xs, flags=("trans",))
    s.vop("v_mul_f64", g, xs, r)
    s.vop("v_mul_f64", h, r, opnd.imm(0.5, "f64"))
    s.vop("v_fma_f64", e, -h, g, opnd.imm(0.5, "f64"))
    s.vop("v_fma_f64", g, g, e, g)
    s.vop("v_fma_f64", h, h, e, h)
    s.vop("v_fma_f64", f, -g, g, xs)
    s.vop("v_fma_f64", g, f, h, g)
    s.vop("v_fma_f64", f, -g, g, xs)
    s.vop("v_fma_f64", g, f, h, g)
    s.vop("v_cndmask_b32_e64", k2, opnd.imm(0, "b32"), opnd.imm(0xFFFFFF80, "b32"), small, fixed_scalar=(2,))
    s.vop("v_ldexp_f64", g, g, k2)
    s.vop("v_cmp_class_f64_e64", cls, xs, opnd.imm(0x260, "b32"))
    for i in range(2):
        s.vop("v_cndmask_b32_e64", Sub(d.reg, d.off + i, 1), Sub(g.reg, g.off + i, 1), Sub(xs.reg, xs.off + i, 1),
              cls, fixed_scalar=(2,))


@RULES.rule(Ops.SQRT, when=is_float, name="float_sqrt")
def _sqrt(s: GfxSelector, u: UOp) -> None:
    k = fkind(u.dtype)
    x = fsrc(s, u.src[0], k)
    if k == "f64":
        sqrt64(s, s.dst(u, "v"), x)
        return
    if k == "f16":
        s.vop("v_sqrt_f16_e64", s.dst(u, "v"), x, flags=("trans",))
        return
    t, d = _out(s, u)
    sqrt32(s, t, x)
    _finish(s, u, t, d)


# ---- exp2 and log2 -------------------------------------------------------------------------------------------
def exp2_32(s: GfxSelector, d: Sub, x) -> None:
    """d <- 2**x in float32 (module docstring)."""
    m = s.sreg().all
    t, y, e, f = (s.vreg().all for _ in range(4))
    s.vop("v_cmp_gt_f32_e64", m, opnd.imm(-126.0, "f32"), x)
    s.vop("v_cndmask_b32_e64", t, opnd.imm(0, "f32"), opnd.imm(64.0, "f32"), m, fixed_scalar=(2,))
    s.vop("v_add_f32", y, x, t)
    s.vop("v_exp_f32", e, y, flags=("trans",))
    s.vop("v_cndmask_b32_e64", f, opnd.imm(1.0, "f32"), opnd.imm(0x1F800000, "f32"), m, fixed_scalar=(2,))
    s.vop("v_mul_f32", d, e, f)


def log2_32(s: GfxSelector, d: Sub, x) -> None:
    """d <- log2(x) in float32 (module docstring)."""
    m = s.sreg().all
    f, y, lg, t = (s.vreg().all for _ in range(4))
    s.vop("v_cmp_gt_f32_e64", m, opnd.imm(0x00800000, "f32"), x)
    s.vop("v_cndmask_b32_e64", f, opnd.imm(1.0, "f32"), opnd.imm(0x4F800000, "f32"), m, fixed_scalar=(2,))
    s.vop("v_mul_f32", y, x, f)
    s.vop("v_log_f32", lg, y, flags=("trans",))
    s.vop("v_cndmask_b32_e64", t, opnd.imm(0, "f32"), opnd.imm(32.0, "f32"), m, fixed_scalar=(2,))
    s.vop("v_sub_f32", d, lg, t)


@RULES.rule(Ops.EXP2, Ops.LOG2, when=lambda s, u: u.dtype.name in ("float32", "bfloat16", "float16"),
            name="float_exp2_log2")
def _exp_log(s: GfxSelector, u: UOp) -> None:
    fn = exp2_32 if u.op is Ops.EXP2 else log2_32
    k = fkind(u.dtype)
    x = fsrc(s, u.src[0], k)
    if k == "f16":
        d = s.dst(u, "v")
        t = s.vreg().all
        fn(s, t, _f16_to_f32(s, x))
        s.vop("v_cvt_f16_f32_e64", d, t)
        return
    t, d = _out(s, u)
    fn(s, t, x)
    _finish(s, u, t, d)


@RULES.rule(Ops.SIN, when=lambda s, u: u.dtype.name in ("float16",), name="f16_sin")
def _sin16(s: GfxSelector, u: UOp) -> None:
    """float16 sine: the hardware's v_sin_f16 of x/(2*pi) (only reached if a float16 SIN survives the rules)."""
    d = s.dst(u, "v")
    t = s.vreg().all
    s.vop("v_mul_f16_e64", t, fsrc(s, u.src[0], "f16"), opnd.imm(0x3118, "f16"))
    s.vop("v_sin_f16_e64", d, t, flags=("trans",))


_ = dtypes
