"""Integer division and remainder (IR semantics: truncating, x // 0 == x % 0 == 0, INT_MIN // -1 wraps).

- By a constant d: 0, +-1 and powers of two by shifts (a signed dividend gets the bias 2^k - 1 when negative);
  any other d by multiplying with a magic number (Granlund & Montgomery; Hacker's Delight 10-4, 10-8): the
  smallest shift s whose m = ceil(2^(32+s) / |d|) keeps the error below one step for every dividend the value
  range allows (so index arithmetic, whose ranges are known, mostly needs one v_mul_hi_u32 and a shift), with
  the 33-bit "add" form when m does not fit 32 bits. The remainder is x - q*d. Scalar values use s_mul_hi.
- By a variable (32 bits or less): LLVM's expansion, an estimate of 2^32/d from v_rcp_iflag_f32 refined by one
  Newton step in integers, q = mulhi(x, y), then two corrections; signs by the usual xor/subtract.
- 64 bits by a variable: restoring division, one quotient bit per step, each lane stepping through its own
  dividend's significant bits: a loop with a per-lane trip count under EXEC masking.
"""

from __future__ import annotations

from compiler.backend.gfx11 import operands as opnd
from compiler.backend.gfx11.alu_int import normalize
from compiler.backend.gfx11.operands import EXEC, NULL
from compiler.backend.gfx11.select import RULES, C, GfxSelector
from compiler.backend.mir import MInst, Sub, label
from compiler.dtypes import dtypes
from compiler.ir.ops import Ops, UOp
from compiler.ir.ranges import vmax, vmin


def magic_unsigned(d: int, xmax: int) -> tuple[int, int] | None:
    """(m, s) with floor(x * m / 2^(32+s)) == x // d for 0 <= x <= xmax and m < 2^32, or None."""
    for s in range(0, 33):
        m = -(-(1 << (32 + s)) // d)
        if m >= 1 << 32:
            return None
        e = m * d - (1 << (32 + s))
        if e * xmax < 1 << (32 + s):
            return m, s
    return None


def magic_signed(d: int) -> tuple[int, int]:
    """(m, s) for signed division by d >= 2 of any int32 (m may be >= 2^31: the add form)."""
    for s in range(0, 32):
        m = -(-(1 << (32 + s)) // d)
        e = m * d - (1 << (32 + s))
        if e * (1 << 31) < 1 << (32 + s) and m < 1 << 32:
            return m, s
    raise AssertionError(f"no magic number for {d}")


def _vmin_vmax(u: UOp) -> tuple[int, int]:
    try:
        return int(vmin(u)), int(vmax(u))
    except Exception:
        return u.dtype.min, u.dtype.max


class _Emit:
    """Scalar or vector forms of the few ops the division sequences need."""

    def __init__(self, s: GfxSelector, scalar: bool):
        self.s, self.scalar = s, scalar

    def new(self) -> Sub:
        return self.s.sreg().all if self.scalar else self.s.vreg().all

    def op(self, name: str, d, a, b=None):
        s = self.s
        k = lambda x: s.b32(x, "s" if self.scalar else "v") if isinstance(x, C) else x  # noqa: E731
        a = k(a)
        b = k(b) if b is not None else None
        if self.scalar:
            sop = {"add": "s_add_i32", "sub": "s_sub_i32", "mul": "s_mul_i32", "mulhi_u": "s_mul_hi_u32",
                   "mulhi_i": "s_mul_hi_i32", "shr": "s_lshr_b32", "sar": "s_ashr_i32", "shl": "s_lshl_b32",
                   "and": "s_and_b32", "xor": "s_xor_b32"}[name]
            s.sop(sop, d, a, *([b] if b is not None else []), flags=("scc",))
            return d
        if name in ("shr", "sar", "shl"):  # VALU shifts take the amount first
            vop = {"shr": "v_lshrrev_b32", "sar": "v_ashrrev_i32", "shl": "v_lshlrev_b32"}[name]
            s.vop(vop, d, b, a)
            return d
        vop = {"add": "v_add_nc_u32", "sub": "v_sub_nc_u32", "mul": "v_mul_lo_u32", "mulhi_u": "v_mul_hi_u32",
               "mulhi_i": "v_mul_hi_i32", "and": "v_and_b32", "xor": "v_xor_b32"}[name]
        s.vop(vop, d, a, b)
        return d


def _imm(v: int):
    return opnd.imm(v & 0xFFFFFFFF, "b32")


@RULES.rule(Ops.IDIV, Ops.MOD, when=lambda s, u: u.dtype.itemsize <= 4 and u.src[1].op is Ops.CONST,
            name="divmod_const")
def _divmod_const(s: GfxSelector, u: UOp) -> None:
    dt = u.dtype
    d = int(u.src[1].arg)
    x = s.src(u.src[0])
    div = u.op is Ops.IDIV
    scalar = u in s.scalar
    e = _Emit(s, scalar)
    out = s.dst(u)
    signed = dt.kind == "i"
    if d == 0 or (not div and abs(d) == 1):
        s.copy(out, C(0, dtypes.int32), dtypes.int32)
        return
    if d == 1:
        s.copy(out, x, dtypes.int32)
        return
    if signed and d == -1:
        e.op("sub", out, _imm(0), x)
        normalize(s, out, dt)
        return
    lo, hi = _vmin_vmax(u.src[0])
    ad = abs(d)
    if not div and (not signed or lo >= 0) and ad & (ad - 1) == 0:
        e.op("and", out, x, _imm(ad - 1))
        return
    if not signed or lo >= 0:
        q = _udiv_const(e, x, ad, hi if signed or dt.itemsize < 4 else min(hi, (1 << 32) - 1))
        neg = signed and d < 0
    else:
        q = _sdiv_const(e, x, ad)
        neg = d < 0
    if div:
        if neg:
            e.op("sub", out, _imm(0), q)
        else:
            s.copy(out, q, dtypes.int32)
        normalize(s, out, dt)
        return
    t = e.new()
    e.op("mul", t, q, _imm(ad))
    e.op("sub", out, x, t)
    normalize(s, out, dt)


def _udiv_const(e: _Emit, x, d: int, xmax: int) -> Sub:
    """x // d for 0 <= x <= xmax."""
    if d & (d - 1) == 0:
        return e.op("shr", e.new(), x, _imm(d.bit_length() - 1))
    mag = magic_unsigned(d, max(xmax, 1))
    if mag is not None:
        m, sh = mag
        q = e.op("mulhi_u", e.new(), x, _imm(m))
        return e.op("shr", e.new(), q, _imm(sh)) if sh else q
    # 33-bit magic: t = mulhi(x, m - 2^32); q = (((x - t) >> 1) + t) >> (s - 1)
    s = (d - 1).bit_length()
    m = -(-(1 << (32 + s)) // d) - (1 << 32)
    t = e.op("mulhi_u", e.new(), x, _imm(m))
    w = e.op("sub", e.new(), x, t)
    w = e.op("shr", w, w, _imm(1))
    w = e.op("add", w, w, t)
    return e.op("shr", w, w, _imm(s - 1)) if s > 1 else w


def _sdiv_const(e: _Emit, x, d: int) -> Sub:
    """trunc(x / d) for int32 x and d >= 2."""
    if d & (d - 1) == 0:
        k = d.bit_length() - 1
        t = e.op("sar", e.new(), x, _imm(31))
        t = e.op("shr", t, t, _imm(32 - k))
        t = e.op("add", t, x, t)
        return e.op("sar", t, t, _imm(k))
    m, sh = magic_signed(d)
    q = e.op("mulhi_i", e.new(), x, _imm(m))
    if m >= 1 << 31:
        q = e.op("add", q, q, x)
    if sh:
        q = e.op("sar", q, q, _imm(sh))
    t = e.op("shr", e.new(), x, _imm(31))
    return e.op("add", q, q, t)


# ---- by a variable ------------------------------------------------------------------------------------------------
def udivrem32(s: GfxSelector, a, b) -> tuple[Sub, Sub]:
    """(a // b, a % b) of unsigned 32-bit VGPR values (b == 0 gives garbage: callers select 0)."""
    f, y, nb, z, q, t, r, q1, r1 = (s.vreg().all for _ in range(9))
    m1, m2 = s.sreg().all, s.sreg().all
    s.vop("v_cvt_f32_u32", f, b)
    s.vop("v_rcp_iflag_f32", f, f, flags=("trans",))
    s.vop("v_mul_f32", f, opnd.imm(0x4F7FFFFE, "f32"), f)
    s.vop("v_cvt_u32_f32", y, f)
    s.vop("v_sub_nc_u32", nb, opnd.imm(0, "b32"), b)
    s.vop("v_mul_lo_u32", z, nb, y)
    s.vop("v_mul_hi_u32", z, y, z)
    s.vop("v_add_nc_u32", y, y, z)
    s.vop("v_mul_hi_u32", q, a, y)
    s.vop("v_mul_lo_u32", t, q, b)
    s.vop("v_sub_nc_u32", r, a, t)
    for m in (m1, m2):
        s.vop("v_add_nc_u32", q1, opnd.imm(1, "b32"), q)
        s.vop("v_sub_nc_u32", r1, r, b)
        s.vop("v_cmp_ge_u32_e64", m, r, b)
        s.vop("v_cndmask_b32_e64", q, q, q1, m, fixed_scalar=(2,))
        s.vop("v_cndmask_b32_e64", r, r, r1, m, fixed_scalar=(2,))
    return q, r


@RULES.rule(Ops.IDIV, Ops.MOD, when=lambda s, u: u.dtype.itemsize <= 4, name="divmod32")
def _divmod32(s: GfxSelector, u: UOp) -> None:
    dt = u.dtype
    a = s.in_vgpr(s.src(u.src[0]), dtypes.int32)
    b = s.in_vgpr(s.src(u.src[1]), dtypes.int32)
    out = s.dst(u, "v")
    signed = dt.kind == "i"
    if signed:
        sa, sb, aa, ab = (s.vreg().all for _ in range(4))
        s.vop("v_ashrrev_i32", sa, opnd.imm(31, "b32"), a)
        s.vop("v_ashrrev_i32", sb, opnd.imm(31, "b32"), b)
        for src, sg, dst in ((a, sa, aa), (b, sb, ab)):
            s.vop("v_add_nc_u32", dst, src, sg)
            s.vop("v_xor_b32", dst, dst, sg)
        q, r = udivrem32(s, aa, ab)
        res, sign = (q, s.vreg().all) if u.op is Ops.IDIV else (r, sa)
        if u.op is Ops.IDIV:
            s.vop("v_xor_b32", sign, sa, sb)
        s.vop("v_xor_b32", res, res, sign)
        s.vop("v_sub_nc_u32", res, res, sign)
    else:
        q, r = udivrem32(s, a, b)
        res = q if u.op is Ops.IDIV else r
    nz = s.sreg().all
    s.vop("v_cmp_ne_u32_e64", nz, opnd.imm(0, "b32"), b)
    s.vop("v_cndmask_b32_e64", out, opnd.imm(0, "b32"), res, nz, fixed_scalar=(2,))
    normalize(s, out, dt)


@RULES.rule(Ops.IDIV, Ops.MOD, when=lambda s, u: u.dtype.itemsize == 8, name="divmod64")
def _divmod64(s: GfxSelector, u: UOp) -> None:
    """64-bit division: restoring, one quotient bit per iteration, each lane iterating over its dividend's
    significant bits only: a loop with a per-lane trip count, lanes leaving EXEC as they finish."""
    dt = u.dtype
    signed = dt.kind == "i"
    a = s.in_vgpr(s.src(u.src[0]), dt)
    b = s.in_vgpr(s.src(u.src[1]), dt)
    if signed:
        sa, sb = s.vreg().all, s.vreg().all
        s.vop("v_ashrrev_i32", sa, opnd.imm(31, "b32"), Sub(a.reg, a.off + 1, 1))
        s.vop("v_ashrrev_i32", sb, opnd.imm(31, "b32"), Sub(b.reg, b.off + 1, 1))
        a, b = _abs64(s, a, sa), _abs64(s, b, sb)
    q, r = udivrem64(s, a, b)
    res = q if u.op is Ops.IDIV else r
    if signed:
        sign = s.vreg().all
        if u.op is Ops.IDIV:
            s.vop("v_xor_b32", sign, sa, sb)
        else:
            sign = sa
        res = _negate_if(s, res, sign)
    out = s.dst(u, "v")
    nz = s.sreg().all
    s.vop("v_cmp_ne_u64_e64", nz, opnd.imm(0, "b64"), b)
    for i in range(2):
        s.vop("v_cndmask_b32_e64", Sub(out.reg, out.off + i, 1), opnd.imm(0, "b32"), Sub(res.reg, res.off + i, 1),
              nz, fixed_scalar=(2,))


def _part(x: Sub, i: int) -> Sub:
    return Sub(x.reg, x.off + i, 1)


def udivrem64(s: GfxSelector, a: Sub, b: Sub) -> tuple[Sub, Sub]:
    """(a // b, a % b) of unsigned 64-bit VGPR pairs (b == 0 gives garbage: callers select 0). The dividend is
    shifted so its top set bit is bit 63 and each lane runs as many steps as it has significant bits: EXEC
    drops the lanes that are done, and the loop ends when none is left (s_cbranch_execnz)."""
    n, q, r, t = (s.vreg(2).all for _ in range(4))
    zh, zl, z, cnt, bit = (s.vreg().all for _ in range(5))
    s.vop("v_clz_i32_u32", zh, _part(a, 1))  # -1 (all ones) for a zero word
    s.vop("v_clz_i32_u32", zl, _part(a, 0))
    s.vop("v_min_u32", zl, opnd.imm(32, "b32"), zl)
    s.vop("v_add_nc_u32", zl, opnd.imm(32, "b32"), zl)
    s.vop("v_min_u32", z, zh, zl)  # leading zeros of the 64-bit value (64 for 0)
    s.vop("v_sub_nc_u32", cnt, opnd.imm(64, "b32"), z)
    s.vop("v_lshlrev_b64", n, z, a)
    for i in range(2):
        s.vop("v_mov_b32", _part(q, i), opnd.imm(0, "b32"))
        s.vop("v_mov_b32", _part(r, i), opnd.imm(0, "b32"))
    save, more = s.sreg().all, s.sreg().all
    done, top = s.new_label("udiv64_done"), s.new_label("udiv64_")
    s.vop("v_cmp_ne_u32_e64", more, opnd.imm(0, "b32"), cnt)
    s.sop("s_and_saveexec_b32", save, more, flags=("scc", "exec"))
    s.emit(MInst("s_cbranch_execz", target=done, flags=frozenset({"branch"})))
    s.emit(label(top))
    ge, c = s.sreg().all, s.sreg().all
    s.vop("v_lshlrev_b64", r, opnd.imm(1, "b32"), r)
    s.vop("v_lshrrev_b32", bit, opnd.imm(31, "b32"), _part(n, 1))
    s.vop("v_or_b32", _part(r, 0), _part(r, 0), bit)
    s.vop("v_lshlrev_b64", n, opnd.imm(1, "b32"), n)
    s.vop("v_cmp_ge_u64_e64", ge, r, b)
    s.vop("v_sub_co_u32", _part(t, 0), c, _part(r, 0), _part(b, 0), ndef=2)
    s.vop("v_sub_co_ci_u32_e64", _part(t, 1), NULL, _part(r, 1), _part(b, 1), c, ndef=2, fixed_scalar=(2,))
    for i in range(2):
        s.vop("v_cndmask_b32_e64", _part(r, i), _part(r, i), _part(t, i), ge, fixed_scalar=(2,))
    s.vop("v_lshlrev_b64", q, opnd.imm(1, "b32"), q)
    s.vop("v_cndmask_b32_e64", bit, opnd.imm(0, "b32"), opnd.imm(1, "b32"), ge, fixed_scalar=(2,))
    s.vop("v_or_b32", _part(q, 0), _part(q, 0), bit)
    s.vop("v_add_nc_u32", cnt, opnd.imm(-1, "b32"), cnt)
    s.vop("v_cmp_ne_u32_e64", more, opnd.imm(0, "b32"), cnt)
    s.sop("s_and_b32", EXEC, EXEC, more, flags=("scc", "exec"))
    s.emit(MInst("s_cbranch_execnz", target=top, flags=frozenset({"branch"})))
    s.emit(label(done))
    s.sop("s_mov_b32", EXEC, save, flags=("exec",))
    return q, r


def _abs64(s: GfxSelector, x: Sub, sign: Sub) -> Sub:
    """|x| as an unsigned 64-bit value: (x ^ sign) - sign."""
    return _negate_if(s, x, sign)


def _negate_if(s: GfxSelector, x: Sub, sign: Sub) -> Sub:
    """(x ^ sign) - sign, sign all ones or zero per lane."""
    t = s.vreg(2).all
    c = s.sreg().all
    for i in range(2):
        s.vop("v_xor_b32", Sub(t.reg, t.off + i, 1), Sub(x.reg, x.off + i, 1), sign)
    s.vop("v_sub_co_u32", Sub(t.reg, t.off, 1), c, Sub(t.reg, t.off, 1), sign, ndef=2)
    s.vop("v_sub_co_ci_u32_e64", Sub(t.reg, t.off + 1, 1), NULL, Sub(t.reg, t.off + 1, 1), sign, c, ndef=2,
          fixed_scalar=(2,))
    return t
