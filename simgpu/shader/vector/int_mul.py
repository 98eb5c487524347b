"""VALU integer multiplies and multiply-adds (24-, 16-, 32- and 64-bit forms) and the sum-of-absolute-
differences family (v_sad_*, v_msad_u8, v_qsad/v_mqsad, v_lerp_u8), from the RDNA3 ISA reference
pseudo-code. Products are formed exactly in int64/uint64 (a 32x32 product fits); clamp saturates to the
destination type where the encoding has a clamp bit. They are in the expression form (sem.expr) both tiers are
generated from; v_mqsad_u32_u8 (a 128-bit result) runs v_msad_u8's kernel on each window, in the interpreter."""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import vector_src, write_vgpr
from simgpu.shader.sem.expr import cast, eq, ne, saturate, select
from simgpu.shader.semantics import register
from simgpu.shader.vector.int_arith import wide
from simgpu.shader.vector.valu import SPECS, OpCtx, define

U32, U64 = np.uint32, np.uint64


def _u24(x):
    return x & 0xFFFFFF


def _i24(x):
    """The low 24 bits of a u32, sign-extended to i32."""
    return cast(x << 8, "i32") >> 8


def _hi32(p, t: str):
    """The high half of a 64-bit product, as t."""
    return cast(p >> 32, t)


def _mul24(f, t: str, acc: bool):
    """v_mul(_hi)/v_mad_*_*24 without `hi`: f(S0) * f(S1) (+ S2) wrapped to t, saturated with clamp."""
    def fn(a, b, *d, clamp):
        if clamp:
            full = wide(f(a)) * wide(f(b))
            return saturate(full + wide(d[0]) if acc else full, t)
        p = cast(f(a), t) * cast(f(b), t)
        return p + d[0] if acc else p
    return fn


# ---------------------------------------------------------------------------------------------- 32-bit


define("v_mul_lo_u32", "u32", ("u32", "u32"), lambda a, b: a * b)
define("v_mul_hi_u32", "u32", ("u32", "u32"), lambda a, b: _hi32(cast(a, "u64") * cast(b, "u64"), "u32"))
define("v_mul_hi_i32", "i32", ("i32", "i32"), lambda a, b: _hi32(wide(a) * wide(b), "i32"))
define("v_mul_u32_u24", "u32", ("u32", "u32"), _mul24(_u24, "u32", False), int_clamp=True)
define("v_mul_i32_i24", "i32", ("u32", "u32"), _mul24(_i24, "i32", False), int_clamp=True)
define("v_mad_u32_u24", "u32", ("u32", "u32", "u32"), _mul24(_u24, "u32", True), int_clamp=True)
define("v_mad_i32_i24", "i32", ("u32", "u32", "i32"), _mul24(_i24, "i32", True), int_clamp=True)
define("v_mul_hi_u32_u24", "u32", ("u32", "u32"),
       lambda a, b: _hi32(cast(_u24(a), "u64") * cast(_u24(b), "u64"), "u32"))
define("v_mul_hi_i32_i24", "i32", ("u32", "u32"), lambda a, b: _hi32(wide(_i24(a)) * wide(_i24(b)), "i32"))


# ---------------------------------------------------------------------------------------------- 16-bit


def _mad16(t: str):
    """S0 * S1 + S2 in t (the 16-bit sources widened to it), saturated to t with clamp."""
    def fn(a, b, d, clamp):
        if clamp:
            return saturate(wide(a) * wide(b) + wide(d), t)
        return cast(a, t) * cast(b, t) + d
    return fn


define("v_mul_lo_u16", "u16", ("u16", "u16"), lambda a, b: a * b)
define("v_mad_u16", "u16", ("u16", "u16", "u16"), _mad16("u16"), int_clamp=True)
define("v_mad_i16", "i16", ("i16", "i16", "i16"), _mad16("i16"), int_clamp=True)
define("v_mad_u32_u16", "u32", ("u16", "u16", "u32"), _mad16("u32"), int_clamp=True)
define("v_mad_i32_i16", "i32", ("i16", "i16", "i32"), _mad16("i32"), int_clamp=True)


# ---------------------------------------------------------------------------------------------- 64-bit


def _mad_u64_u32(a, b, acc):
    """{D1, D0.u64} = 65-bit S0.u32 * S1.u32 + S2.u64: the carry is bit 64."""
    prod = cast(a, "u64") * cast(b, "u64")
    full = prod + acc
    return full, full < prod


def _mad_i64_i32(a, b, acc):
    """{D1, D0.i64} = 65-bit signed S0.i32 * S1.i32 + S2.i64: D1 is bit 64, the sign of the exact sum."""
    prod = wide(a) * wide(b)
    full = prod + acc
    pneg, fneg = prod < 0, full < 0
    overflow = eq(pneg, acc < 0) & ne(fneg, pneg)
    return full, select(overflow, pneg, fneg)


define("v_mad_u64_u32", "u64", ("u32", "u32", "u64"), _mad_u64_u32, carry_out=True)
define("v_mad_i64_i32", "i64", ("i32", "i32", "i64"), _mad_i64_i32, carry_out=True)


# ---------------------------------------------------------------------------------------------- SAD

def _absdiff(x, y):
    """|x - y| of two unsigned values."""
    return select(x > y, x - y, y - x)


def _parts(x, n: int, width: int) -> list:
    """The n `width`-bit fields of x (low first)."""
    return [(x >> width * k) & ((1 << width) - 1) for k in range(n)]


def _sad(a, b, n: int = 4, width: int = 8, masked: bool = False):
    """Sum over the n fields of |a[i] - b[i]| as i64; masked (MSAD) skips fields where b[i] == 0."""
    total = None
    for x, y in zip(_parts(a, n, width), _parts(b, n, width), strict=True):
        d = cast(_absdiff(x, y), "i64")
        d = select(eq(y, 0), 0, d) if masked else d
        total = d if total is None else total + d
    return total


def _plus(sad, t: str = "u32"):
    """D = sad(S0, S1) + S2 wrapped to t, saturated with clamp."""
    def fn(a, b, d, clamp):
        full = sad(a, b) + cast(d, "i64")
        return saturate(full, t) if clamp else cast(full, t)
    return fn


for _name, _sum in (("v_sad_u8", _sad), ("v_sad_hi_u8", lambda a, b: _sad(a, b) << 16),
                    ("v_sad_u16", lambda a, b: _sad(a, b, 2, 16)), ("v_msad_u8", lambda a, b: _sad(a, b, masked=True)),
                    ("v_sad_u32", lambda a, b: cast(_absdiff(a, b), "i64"))):
    define(_name, "u32", ("u32", "u32", "u32"), _plus(_sum), int_clamp=True)


def _window(s0, k: int):
    """Bytes k..k+3 of the 64-bit S0 as a 32-bit value (the reference window of a quad SAD)."""
    return cast(s0 >> 8 * k, "u32")


def _qsad(masked: bool):
    """v_(m)qsad_pk_u16_u8: four 16-bit (M)SADs of S1 against byte windows of S0, each plus S2.u16[i]."""
    def fn(s0, s1, s2, clamp):
        out = None
        for k in range(4):
            r = _plus(lambda a, b: _sad(a, b, masked=masked), "u16")(_window(s0, k), s1, (s2 >> 16 * k) & 0xFFFF, clamp)
            out = cast(r, "u64") if out is None else out | (cast(r, "u64") << 16 * k)
        return out
    return fn


define("v_qsad_pk_u16_u8", "u64", ("u64", "u32", "u64"), _qsad(False), int_clamp=True)
define("v_mqsad_pk_u16_u8", "u64", ("u64", "u32", "u64"), _qsad(True), int_clamp=True)


def _mqsad_u32_u8(ex, w, inst):
    """D.u32[i] = MSAD_U8(S0 bytes i..i+3, S1.u32, S2.u32[i]) for i in 0..3 (a 128-bit result): v_msad_u8's kernel
    on each window."""
    f = inst.fields
    s0 = vector_src(ex, w, f["src0"], inst.literal, "b64")
    s1 = vector_src(ex, w, f["src1"], inst.literal, "b32")
    ctx = OpCtx(bool(f.get("clamp", 0)), None, ex.st.lanes, ex, w)
    msad = SPECS["v_msad_u8"].fn
    # S2 is a VGPR quad: all of it is read before any write (D may overlap it)
    results = [msad(ctx, (s0 >> U64(8 * k)).astype(U32), s1, vector_src(ex, w, f["src2"] + k, None, "b32"))
               for k in range(4)]
    active = ex.st.exec_lanes(w)
    for k, r in enumerate(results):
        write_vgpr(ex, w, f["vdst"] + k, r, active)


register("v_mqsad_u32_u8", _mqsad_u32_u8)


def _lerp_u8(a, b, d):
    """Per byte: (S0.u8 + S1.u8 + rounding bit S2[8i]) >> 1."""
    out = None
    for k, (x, y) in enumerate(zip(_parts(a, 4, 8), _parts(b, 4, 8), strict=True)):
        r = ((x + y + ((d >> 8 * k) & 1)) >> 1) << 8 * k
        out = r if out is None else out | r
    return out


define("v_lerp_u8", "u32", ("u32", "u32", "u32"), _lerp_u8)
