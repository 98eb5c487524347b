"""Integer and bool ALU rules: SALU for scalar values, VALU otherwise; 64-bit values as register pairs with carries.

Small integers (8/16 bits) compute in 32 bits and are re-extended after ops that can leave their range (the
value convention of compiler.backend.gfx11.select). Fused forms come first in each op's rule list: a multiply
of 24-bit operands feeding an add is v_mad_u32_u24, a constant shift feeding an add v_lshl_add_u32
(s_lshl{1-4}_add_u32), an add feeding an add v_add3_u32, a compare feeding only a scalar select s_cmp +
s_cselect. Shifts by the type's width or more give 0 (or the sign), as the IR defines.
"""

from __future__ import annotations

from compiler.backend.gfx11 import operands as opnd
from compiler.backend.gfx11.operands import NULL
from compiler.backend.gfx11.select import RULES, C, GfxSelector
from compiler.backend.mir import Sub
from compiler.dtypes import dtypes
from compiler.ir.ops import Ops, UOp
from compiler.ir.ranges import vmax, vmin


def _int(u: UOp) -> bool:
    return u.dtype.is_int if hasattr(u.dtype, "is_int") else False


def w32(s, u: UOp) -> bool:
    """An integer of at most 32 bits."""
    return _int(u) and u.dtype.itemsize <= 4


def w64(s, u: UOp) -> bool:
    """A 64-bit integer."""
    return _int(u) and u.dtype.itemsize == 8


def is_bool(s, u: UOp) -> bool:
    return u.dtype == dtypes.bool


def sc(s: GfxSelector, u: UOp) -> bool:
    """Whether u is computed by the scalar unit."""
    return u in s.scalar


def normalize(s: GfxSelector, d: Sub, dt) -> None:
    """Re-extend a small integer in place (no-op for 32-bit types)."""
    if dt.itemsize >= 4:
        return
    bits = 8 * dt.itemsize
    if d.rc == "s":
        if dt.kind == "i":
            s.sop(f"s_sext_i32_i{bits}", d, d)
        else:
            s.sop("s_and_b32", d, d, opnd.imm((1 << bits) - 1, "b32"), flags=("scc",))
    elif dt.kind == "i":
        s.vop("v_bfe_i32", d, d, opnd.imm(0, "b32"), opnd.imm(bits, "b32"))
    else:
        s.vop("v_and_b32", d, opnd.imm((1 << bits) - 1, "b32"), d)


def ops2(s: GfxSelector, u: UOp, rc: str):
    """The two sources of u as 32-bit operands (constants as immediates)."""
    return (s.b32(s.src(u.src[0]), rc), s.b32(s.src(u.src[1]), rc))


def _range24(u: UOp, signed: bool) -> bool:
    try:
        lo, hi = vmin(u), vmax(u)
    except Exception:
        return False
    if signed:
        return -(1 << 23) <= lo and hi < (1 << 23)
    return 0 <= lo and hi < (1 << 24)


def _mul24(u: UOp) -> str | None:
    """'u24' or 'i24' when both factors of u fit the 24-bit multipliers."""
    a, b = u.src[:2]
    if _range24(a, False) and _range24(b, False):
        return "u24"
    if _range24(a, True) and _range24(b, True):
        return "i24"
    return None


# ---- 32-bit and smaller -------------------------------------------------------------------------------------------
_SOP2 = {Ops.ADD: "s_add_i32", Ops.SUB: "s_sub_i32", Ops.MUL: "s_mul_i32", Ops.AND: "s_and_b32", Ops.OR: "s_or_b32",
         Ops.XOR: "s_xor_b32"}
_VOP2 = {Ops.ADD: "v_add_nc_u32", Ops.SUB: "v_sub_nc_u32", Ops.MUL: "v_mul_lo_u32", Ops.AND: "v_and_b32",
         Ops.OR: "v_or_b32", Ops.XOR: "v_xor_b32"}
_GROWS = {Ops.ADD, Ops.SUB, Ops.MUL}


def _inner(s: GfxSelector, m: UOp, u: UOp) -> bool:
    """Whether m may be computed inside u's fused instruction: u is its only user, it has no value yet, and none of
    its own sources was left to it (deferred)."""
    return s.single_user(m) is u and m not in s.val and not any(x in _deferred_set(s) for x in m.src)


def _deferred_set(s: GfxSelector) -> set:
    return getattr(s, "deferred", set())


@RULES.rule(Ops.MUL, Ops.SHL, Ops.ADD, when=lambda s, u: w32(s, u) and _deferred(s, u), name="deferred")
def _defer(s: GfxSelector, u: UOp) -> None:
    s.deferred = _deferred_set(s) | {u}  # its user's fused rule reads its sources directly


def _fused_mad(s: GfxSelector, u: UOp):
    """ADD(MUL(a, b), c) with a single-use 24-bit multiply: (MUL, c)."""
    if u.dtype.itemsize != 4 or sc(s, u):
        return None
    for m, c in ((u.src[0], u.src[1]), (u.src[1], u.src[0])):
        if m.op is Ops.MUL and m.dtype == u.dtype and _inner(s, m, u) and _mul24(m):
            return m, c
    return None


@RULES.rule(Ops.ADD, when=lambda s, u: w32(s, u) and _fused_mad(s, u) is not None, name="v_mad_24")
def _mad24(s: GfxSelector, u: UOp) -> None:
    m, c = _fused_mad(s, u)
    op = "v_mad_u32_u24" if _mul24(m) == "u24" else "v_mad_i32_i24"
    d = s.dst(u)
    a, b = ops2(s, m, "v")
    s.vop(op, d, a, b, s.b32(s.src(c), "v"))


def _lshl_add(s: GfxSelector, u: UOp):
    """ADD(SHL(a, k), c) with a single-use constant shift: (SHL, k, c)."""
    if u.dtype.itemsize != 4:
        return None
    for m, c in ((u.src[0], u.src[1]), (u.src[1], u.src[0])):
        if m.op is Ops.SHL and m.dtype == u.dtype and m.src[1].op is Ops.CONST and _inner(s, m, u):
            k = int(m.src[1].arg)
            if 0 <= k < 32 and (not sc(s, u) or (1 <= k <= 4 and sc(s, m))):
                return m, k, c
    return None


@RULES.rule(Ops.ADD, when=lambda s, u: w32(s, u) and _lshl_add(s, u) is not None, name="lshl_add")
def _lshl_add_rule(s: GfxSelector, u: UOp) -> None:
    m, k, c = _lshl_add(s, u)
    d = s.dst(u)
    if sc(s, u):
        s.sop(f"s_lshl{k}_add_u32", d, s.b32(s.src(m.src[0])), s.b32(s.src(c)), flags=("scc",))
    else:
        s.vop("v_lshl_add_u32", d, s.b32(s.src(m.src[0]), "v"), opnd.imm(k, "b32"), s.b32(s.src(c), "v"))


def _add3(s: GfxSelector, u: UOp):
    """ADD(ADD(a, b), c) with a single-use inner add: (inner ADD, c)."""
    if sc(s, u) or u.dtype.itemsize != 4:
        return None
    for m, c in ((u.src[0], u.src[1]), (u.src[1], u.src[0])):
        if m.op is Ops.ADD and m.dtype == u.dtype and _inner(s, m, u) and not _fused_mad(s, m) and \
                not _lshl_add(s, m):
            return m, c
    return None


@RULES.rule(Ops.ADD, when=lambda s, u: w32(s, u) and _add3(s, u) is not None, name="v_add3")
def _add3_rule(s: GfxSelector, u: UOp) -> None:
    m, c = _add3(s, u)
    d = s.dst(u)
    s.vop("v_add3_u32", d, *(s.b32(s.src(x), "v") for x in (m.src[0], m.src[1], c)))


def _deferred(s: GfxSelector, u: UOp) -> bool:
    """A uop a fused rule of its only user will compute (selected there, not here)."""
    user = s.single_user(u)
    if user is None or user.op is not Ops.ADD or not w32(s, user):
        return False
    for f in (_fused_mad(s, user), _lshl_add(s, user), _add3(s, user)):
        if f is not None:
            return f[0] is u
    return False


@RULES.rule(Ops.MUL, when=lambda s, u: w32(s, u) and not sc(s, u) and u.dtype.itemsize == 4 and
            _mul24(u) is not None, name="v_mul_24")
def _mul24_rule(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    a, b = ops2(s, u, "v")
    s.vop("v_mul_u32_u24" if _mul24(u) == "u24" else "v_mul_i32_i24", d, a, b)


@RULES.rule(Ops.ADD, Ops.SUB, Ops.MUL, Ops.AND, Ops.OR, Ops.XOR, when=w32, name="int_binary")
def _binary(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    if sc(s, u):
        a, b = ops2(s, u, "s")
        s.sop(_SOP2[u.op], d, a, b, flags=("scc",))
    else:
        a, b = ops2(s, u, "v")
        s.vop(_VOP2[u.op], d, a, b)
    if u.op in _GROWS:
        normalize(s, d, u.dtype)


@RULES.rule(Ops.NEG, when=w32)
def _neg(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    a = s.b32(s.src(u.src[0]), "s" if sc(s, u) else "v")
    if sc(s, u):
        s.sop("s_sub_i32", d, opnd.imm(0, "b32"), a, flags=("scc",))
    else:
        s.vop("v_sub_nc_u32", d, opnd.imm(0, "b32"), a)
    normalize(s, d, u.dtype)


@RULES.rule(Ops.NOT, when=w32)
def _not(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    a = s.b32(s.src(u.src[0]), "s" if sc(s, u) else "v")
    if sc(s, u):
        s.sop("s_not_b32", d, a, flags=("scc",))
    else:
        s.vop("v_not_b32", d, a)
    if u.dtype.kind == "u":
        normalize(s, d, u.dtype)


@RULES.rule(Ops.MAX, Ops.MIN, when=w32)
def _minmax(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    t = "u32" if u.dtype.kind == "u" else "i32"
    name = "max" if u.op is Ops.MAX else "min"
    if sc(s, u):
        s.sop(f"s_{name}_{t}", d, *ops2(s, u, "s"), flags=("scc",))
    else:
        s.vop(f"v_{name}_{t}", d, *ops2(s, u, "v"))


def _const_shift(u: UOp) -> int | None:
    b = u.src[1]
    return int(b.arg) if b.op is Ops.CONST else None


@RULES.rule(Ops.SHL, Ops.SHR, when=w32)
def _shift(s: GfxSelector, u: UOp) -> None:
    dt = u.dtype
    bits = dt.bits
    signed_shr = u.op is Ops.SHR and dt.kind == "i"
    k = _const_shift(u)
    scalar = sc(s, u)
    rc = "s" if scalar else "v"
    a = s.b32(s.src(u.src[0]), rc)
    d = s.dst(u)
    if k is not None:
        k = k & ((1 << bits) - 1) if k >= 0 else k
        if k >= bits or k < 0:
            if signed_shr:
                k = 31
            else:
                s.copy(d, C(0, dtypes.int32), dtypes.int32)
                return
        if scalar:
            op = "s_lshl_b32" if u.op is Ops.SHL else "s_ashr_i32" if signed_shr else "s_lshr_b32"
            s.sop(op, d, a, opnd.imm(k, "b32"), flags=("scc",))
        else:
            op = "v_lshlrev_b32" if u.op is Ops.SHL else "v_ashrrev_i32" if signed_shr else "v_lshrrev_b32"
            s.vop(op, d, opnd.imm(k, "b32"), a)
        if u.op is Ops.SHL:
            normalize(s, d, dt)
        return
    b = s.b32(s.src(u.src[1]), rc)
    if scalar:
        if signed_shr:
            t = s.sreg().all
            s.sop("s_min_u32", t, b, opnd.imm(31, "b32"), flags=("scc",))
            s.sop("s_ashr_i32", d, a, t, flags=("scc",))
            return
        t = s.sreg().all
        s.sop("s_lshl_b32" if u.op is Ops.SHL else "s_lshr_b32", t, a, b, flags=("scc",))
        s.sop("s_cmp_lt_u32", b, opnd.imm(bits, "b32"), ndef=0, flags=("scc",))
        s.sop("s_cselect_b32", d, t, opnd.imm(0, "b32"), flags=("use_scc",))
    else:
        if signed_shr:
            t = s.vreg().all
            s.vop("v_min_u32", t, b, opnd.imm(31, "b32"))
            s.vop("v_ashrrev_i32", d, t, a)
            return
        t = s.vreg().all
        s.vop("v_lshlrev_b32" if u.op is Ops.SHL else "v_lshrrev_b32", t, b, a)
        m = s.sreg().all
        s.vop("v_cmp_gt_u32_e64", m, opnd.imm(bits, "b32"), b)
        s.vop("v_cndmask_b32_e64", d, opnd.imm(0, "b32"), t, m, fixed_scalar=(2,))
    if u.op is Ops.SHL:
        normalize(s, d, dt)


@RULES.rule(Ops.MULACC, when=w32)
def _mulacc(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    scalar = sc(s, u)
    rc = "s" if scalar else "v"
    a, b, c = (s.b32(s.src(x), rc) for x in u.src)
    if scalar:
        t = s.sreg().all
        s.sop("s_mul_i32", t, a, b)
        s.sop("s_add_i32", d, t, c, flags=("scc",))
    elif _mul24(u) and u.dtype.itemsize == 4:
        s.vop("v_mad_u32_u24" if _mul24(u) == "u24" else "v_mad_i32_i24", d, a, b, c)
    else:
        t = s.vreg().all
        s.vop("v_mul_lo_u32", t, a, b)
        s.vop("v_add_nc_u32", d, t, c)
    normalize(s, d, u.dtype)


# ---- comparisons and selects -------------------------------------------------------------------------------------
_SCMP = {Ops.CMPLT: "lt", Ops.CMPEQ: "eq", Ops.CMPNE: "lg"}
_VCMP = {Ops.CMPLT: "lt", Ops.CMPEQ: "eq", Ops.CMPNE: "ne"}


def scalar_compare(s: GfxSelector, u: UOp) -> None:
    """s_cmp of u's sources (32-bit integers or bools): SCC = the comparison."""
    dt = u.src[0].dtype
    if dt.itemsize == 8:
        a, b = s.src(u.src[0]), s.src(u.src[1])
        op = "eq" if u.op is Ops.CMPEQ else "lg"
        s.sop(f"s_cmp_{op}_u64", _pair(s, a), _pair(s, b), ndef=0, flags=("scc",))
        return
    t = "u32" if dt.kind in "ub" or u.op is not Ops.CMPLT else "i32"
    a, b = ops2(s, u, "s")
    s.sop(f"s_cmp_{_SCMP[u.op]}_{t}", a, b, ndef=0, flags=("scc",))


def _pair(s: GfxSelector, x):
    if isinstance(x, C):
        im = opnd.imm(x.value, "b64")
        return im if im is not None else s.materialize(x, "s")
    return x


def _scmp_ok(s: GfxSelector, c: UOp) -> bool:
    """Whether compare c runs on the scalar unit (integer or bool sources; 64-bit only ==, !=)."""
    dt = c.src[0].dtype
    if c not in s.scalar or dt.is_float:
        return False
    return dt.itemsize <= 4 or c.op is not Ops.CMPLT


@RULES.rule(Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE, when=lambda s, u: not u.src[0].dtype.is_float)
def _cmp(s: GfxSelector, u: UOp) -> None:
    dt = u.src[0].dtype
    d = s.dst(u, "s")
    if dt == dtypes.bool:
        a, b = (s.mask_of(s.src(x)) for x in u.src)
        if u.op is Ops.CMPNE:
            s.sop("s_xor_b32", d, a, b, flags=("scc",))
        elif u.op is Ops.CMPEQ:
            s.sop("s_xnor_b32", d, a, b, flags=("scc",))
        else:  # False < True: b and not a
            s.sop("s_and_not1_b32", d, b, a, flags=("scc",))
        return
    if _scmp_ok(s, u):
        scalar_compare(s, u)
        s.sop("s_cselect_b32", d, opnd.imm(-1, "b32"), opnd.imm(0, "b32"), flags=("use_scc",))
        return
    signed = dt.kind == "i"
    t = ("i" if signed else "u") + str(max(32, dt.bits)) if u.op is Ops.CMPLT else "u" + str(max(32, dt.bits))
    if dt.itemsize == 8:
        a, b = (_vpair(s, s.src(x)) for x in u.src)
    else:
        a, b = ops2(s, u, "v")
    s.vop(f"v_cmp_{_VCMP[u.op]}_{t}_e64", d, a, b)


def _vpair(s: GfxSelector, x):
    """A 64-bit VALU source: a register pair or an inline constant (else materialized in SGPRs)."""
    return _pair(s, x)


def _where_scalar(s: GfxSelector, u: UOp) -> bool:
    return u in s.scalar


@RULES.rule(Ops.WHERE, when=lambda s, u: _where_scalar(s, u) and u.src[0].op in (Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE)
            and s.single_user(u.src[0]) is u and _scmp_ok(s, u.src[0]) and u.src[0] not in s.val,
            name="s_cmp_cselect")
def _where_cmp_scalar(s: GfxSelector, u: UOp) -> None:
    scalar_compare(s, u.src[0])
    _cselect(s, u)


@RULES.rule(Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE,
            when=lambda s, u: s.single_user(u) is not None and s.single_user(u).op is Ops.WHERE and
            s.single_user(u).src[0] is u and _where_scalar(s, s.single_user(u)) and _scmp_ok(s, u) and
            u not in s.val and not u.src[0].dtype.is_float, name="deferred_cmp")
def _defer_cmp(s: GfxSelector, u: UOp) -> None:
    pass  # selected with its WHERE (s_cmp + s_cselect)


def _cselect(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u, "s")
    a, b = s.src(u.src[1]), s.src(u.src[2])
    if u.dtype == dtypes.bool:
        s.sop("s_cselect_b32", d, s.b32(s.mask_of(a)), s.b32(s.mask_of(b)), flags=("use_scc",))
    elif u.dtype.itemsize == 8:
        s.sop("s_cselect_b64", d, _pair(s, a), _pair(s, b), flags=("use_scc",))
    else:
        s.sop("s_cselect_b32", d, s.b32(a), s.b32(b), flags=("use_scc",))


@RULES.rule(Ops.WHERE, when=_where_scalar, name="s_cselect")
def _where_s(s: GfxSelector, u: UOp) -> None:
    s.sop("s_cmp_lg_u32", s.mask_of(s.src(u.src[0])), opnd.imm(0, "b32"), ndef=0, flags=("scc",))
    _cselect(s, u)


@RULES.rule(Ops.WHERE, name="v_cndmask")
def _where_v(s: GfxSelector, u: UOp) -> None:
    dt = u.dtype
    m = s.mask_of(s.src(u.src[0]))
    if dt == dtypes.bool:  # (m & a) | (~m & b)
        d = s.dst(u, "s")
        a, b = (s.mask_of(s.src(x)) for x in u.src[1:])
        t1, t2 = s.sreg().all, s.sreg().all
        s.sop("s_and_b32", t1, m, a, flags=("scc",))
        s.sop("s_and_not1_b32", t2, b, m, flags=("scc",))
        s.sop("s_or_b32", d, t1, t2, flags=("scc",))
        return
    d = s.dst(u, "v")
    a, b = s.src(u.src[1]), s.src(u.src[2])
    kind = "b32"
    if dt.itemsize == 8:
        for i in range(2):
            half = s.lo if i == 0 else s.hi
            s.vop("v_cndmask_b32_e64", Sub(d.reg, d.off + i, 1), s.imm_or_reg(half(b), kind),
                  s.imm_or_reg(half(a), kind), m, fixed_scalar=(2,))
    else:
        fk = "f32" if dt.is_float and dt.itemsize == 4 else kind
        s.vop("v_cndmask_b32_e64", d, s.imm_or_reg(b, fk), s.imm_or_reg(a, fk), m, fixed_scalar=(2,))


# ---- bools ---------------------------------------------------------------------------------------------------------
_SBOOL = {Ops.AND: "s_and_b32", Ops.OR: "s_or_b32", Ops.XOR: "s_xor_b32", Ops.MAX: "s_or_b32",
          Ops.MIN: "s_and_b32"}


@RULES.rule(Ops.AND, Ops.OR, Ops.XOR, Ops.MAX, Ops.MIN, when=is_bool, name="bool_binary")
def _bool_binary(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u, "s")
    a, b = (s.mask_of(s.src(x)) for x in u.src)
    s.sop(_SBOOL[u.op], d, a, b, flags=("scc",))


@RULES.rule(Ops.NOT, when=is_bool, name="bool_not")
def _bool_not(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u, "s")
    s.sop("s_not_b32", d, s.mask_of(s.src(u.src[0])), flags=("scc",))


# ---- 64-bit -------------------------------------------------------------------------------------------------------
def _halves(s: GfxSelector, x, rc: str):
    lo, hi = s.lo(x), s.hi(x)
    return s.b32(lo, rc), s.b32(hi, rc)


@RULES.rule(Ops.ADD, Ops.SUB, when=w64, name="int64_addsub")
def _add64(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    lo, hi = Sub(d.reg, d.off, 1), Sub(d.reg, d.off + 1, 1)
    add = u.op is Ops.ADD
    if sc(s, u):
        (al, ah), (bl, bh) = (_halves(s, s.src(x), "s") for x in u.src)
        s.sop("s_add_u32" if add else "s_sub_u32", lo, al, bl, flags=("scc",))
        s.sop("s_addc_u32" if add else "s_subb_u32", hi, ah, bh, flags=("scc", "use_scc"))
        return
    (al, ah), (bl, bh) = (_halves(s, s.src(x), "v") for x in u.src)
    c = s.sreg().all
    s.vop("v_add_co_u32" if add else "v_sub_co_u32", lo, c, al, bl, ndef=2)
    s.vop("v_add_co_ci_u32_e64" if add else "v_sub_co_ci_u32_e64", hi, NULL, ah, bh, c, ndef=2, fixed_scalar=(2,))


@RULES.rule(Ops.NEG, when=w64, name="int64_neg")
def _neg64(s: GfxSelector, u: UOp) -> None:
    _sub_from_zero(s, u, s.src(u.src[0]))


def _sub_from_zero(s: GfxSelector, u: UOp, x) -> None:
    d = s.dst(u)
    lo, hi = Sub(d.reg, d.off, 1), Sub(d.reg, d.off + 1, 1)
    z = opnd.imm(0, "b32")
    if sc(s, u):
        xl, xh = _halves(s, x, "s")
        s.sop("s_sub_u32", lo, z, xl, flags=("scc",))
        s.sop("s_subb_u32", hi, z, xh, flags=("scc", "use_scc"))
        return
    xl, xh = _halves(s, x, "v")
    c = s.sreg().all
    s.vop("v_sub_co_u32", lo, c, z, xl, ndef=2)
    s.vop("v_sub_co_ci_u32_e64", hi, NULL, z, xh, c, ndef=2, fixed_scalar=(2,))


@RULES.rule(Ops.MUL, when=w64, name="int64_mul")
def _mul64(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    lo, hi = Sub(d.reg, d.off, 1), Sub(d.reg, d.off + 1, 1)
    rc = "s" if sc(s, u) else "v"
    (al, ah), (bl, bh) = (_halves(s, s.src(x), rc) for x in u.src)
    if rc == "s":
        t1, t2, t3 = s.sreg().all, s.sreg().all, s.sreg().all
        s.sop("s_mul_hi_u32", t1, al, bl)
        s.sop("s_mul_i32", t2, al, bh)
        s.sop("s_mul_i32", t3, ah, bl)
        s.sop("s_add_i32", t1, t1, t2, flags=("scc",))
        s.sop("s_mul_i32", lo, al, bl)
        s.sop("s_add_i32", hi, t1, t3, flags=("scc",))
        return
    s.vop("v_mad_u64_u32", d, NULL, al, bl, opnd.imm(0, "b64"), ndef=2, early=True)
    terms = []
    for x, y in ((al, bh), (ah, bl)):
        if isinstance(x, opnd.Imm) and x.value == 0 or isinstance(y, opnd.Imm) and y.value == 0:
            continue
        t = s.vreg().all
        s.vop("v_mul_lo_u32", t, x, y)
        terms.append(t)
    if len(terms) == 2:
        s.vop("v_add3_u32", hi, hi, *terms)
    elif terms:
        s.vop("v_add_nc_u32", hi, hi, terms[0])


@RULES.rule(Ops.AND, Ops.OR, Ops.XOR, when=w64, name="int64_bitwise")
def _bit64(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    name = {Ops.AND: "and", Ops.OR: "or", Ops.XOR: "xor"}[u.op]
    rc = "s" if sc(s, u) else "v"
    (al, ah), (bl, bh) = (_halves(s, s.src(x), rc) for x in u.src)
    for i, (a, b) in enumerate(((al, bl), (ah, bh))):
        if rc == "s":
            s.sop(f"s_{name}_b32", Sub(d.reg, d.off + i, 1), a, b, flags=("scc",))
        else:
            s.vop(f"v_{name}_b32", Sub(d.reg, d.off + i, 1), a, b)


@RULES.rule(Ops.NOT, when=w64, name="int64_not")
def _not64(s: GfxSelector, u: UOp) -> None:
    d = s.dst(u)
    rc = "s" if sc(s, u) else "v"
    for i, a in enumerate(_halves(s, s.src(u.src[0]), rc)):
        if rc == "s":
            s.sop("s_not_b32", Sub(d.reg, d.off + i, 1), a, flags=("scc",))
        else:
            s.vop("v_not_b32", Sub(d.reg, d.off + i, 1), a)


@RULES.rule(Ops.SHL, Ops.SHR, when=w64, name="int64_shift")
def _shift64(s: GfxSelector, u: UOp) -> None:
    dt = u.dtype
    signed_shr = u.op is Ops.SHR and dt.kind == "i"
    a = _pair(s, s.src(u.src[0]))
    if isinstance(a, opnd.Imm) or (isinstance(a, Sub) and a.rc == "s" and not sc(s, u)):
        a = s.in_vgpr(s.src(u.src[0]), dt) if not sc(s, u) else s.in_sgpr(s.src(u.src[0]), dt)
    d = s.dst(u)
    k = _const_shift(u)
    scalar = sc(s, u)
    if k is not None:
        if k >= 64 or k < 0:
            if not signed_shr:
                s.copy(d, C(0, dt), dt)
                return
            k = 63
        if scalar:
            op = "s_lshl_b64" if u.op is Ops.SHL else "s_ashr_i64" if signed_shr else "s_lshr_b64"
            s.sop(op, d, a, opnd.imm(k, "b32"), flags=("scc",))
        else:
            op = "v_lshlrev_b64" if u.op is Ops.SHL else "v_ashrrev_i64" if signed_shr else "v_lshrrev_b64"
            s.vop(op, d, opnd.imm(k, "b32"), a)
        return
    b = s.src(u.src[1])
    bl = s.b32(s.lo(b), "s" if scalar else "v")
    small = s.sreg().all  # the amount is below 64
    s.vop("v_cmp_gt_u64_e64", small, opnd.imm(64, "b64"), _pair(s, b))
    if scalar:
        if signed_shr:
            amt = s.sreg().all
            s.sop("s_cmp_lg_u32", small, opnd.imm(0, "b32"), ndef=0, flags=("scc",))
            s.sop("s_cselect_b32", amt, bl, opnd.imm(63, "b32"), flags=("use_scc",))
            s.sop("s_ashr_i64", d, a, amt, flags=("scc",))
            return
        t = s.sreg(2).all
        s.sop("s_lshl_b64" if u.op is Ops.SHL else "s_lshr_b64", t, a, bl, flags=("scc",))
        s.sop("s_cmp_lg_u32", small, opnd.imm(0, "b32"), ndef=0, flags=("scc",))
        s.sop("s_cselect_b64", d, t, opnd.imm(0, "b64"), flags=("use_scc",))
        return
    if signed_shr:
        amt = s.vreg().all
        s.vop("v_cndmask_b32_e64", amt, opnd.imm(63, "b32"), bl, small, fixed_scalar=(2,))
        s.vop("v_ashrrev_i64", d, amt, a)
        return
    t = s.vreg(2).all
    s.vop("v_lshlrev_b64" if u.op is Ops.SHL else "v_lshrrev_b64", t, bl, a)
    for i in range(2):
        s.vop("v_cndmask_b32_e64", Sub(d.reg, d.off + i, 1), opnd.imm(0, "b32"), Sub(t.reg, t.off + i, 1),
              small, fixed_scalar=(2,))


def _cmp64_mask(s: GfxSelector, op: Ops, dt, a, b) -> Sub:
    """A lane mask of a < b, a == b or a != b for 64-bit integers (a VALU compare: SGPR pairs are fine)."""
    m = s.sreg().all
    t = ("i64" if dt.kind == "i" else "u64") if op is Ops.CMPLT else "u64"
    s.vop(f"v_cmp_{_VCMP[op]}_{t}_e64", m, _pair(s, a), _pair(s, b))
    return m


@RULES.rule(Ops.MAX, Ops.MIN, when=w64, name="int64_minmax")
def _minmax64(s: GfxSelector, u: UOp) -> None:
    a, b = s.src(u.src[0]), s.src(u.src[1])
    m = _cmp64_mask(s, Ops.CMPLT, u.dtype, b, a) if u.op is Ops.MAX else _cmp64_mask(s, Ops.CMPLT, u.dtype, a, b)
    d = s.dst(u)
    if sc(s, u):
        s.sop("s_cmp_lg_u32", m, opnd.imm(0, "b32"), ndef=0, flags=("scc",))
        s.sop("s_cselect_b64", d, _pair(s, a), _pair(s, b), flags=("use_scc",))
        return
    for i in range(2):
        half = s.lo if i == 0 else s.hi
        s.vop("v_cndmask_b32_e64", Sub(d.reg, d.off + i, 1), s.b32(half(b), "v"), s.b32(half(a), "v"), m,
              fixed_scalar=(2,))


@RULES.rule(Ops.MULACC, when=w64, name="int64_mulacc")
def _mulacc64(s: GfxSelector, u: UOp) -> None:
    a, b, c = u.src
    prod = UOp(Ops.MUL, u.dtype, (a, b))
    tmp = UOp(Ops.ADD, u.dtype, (prod, c))
    s.users.setdefault(prod, [])
    if u in s.scalar:
        s.scalar |= {prod, tmp}
    saved = s.cur
    _mul64(s, prod)
    s.cur = saved
    _add64(s, tmp)
    s.set(u, s.val[tmp])
