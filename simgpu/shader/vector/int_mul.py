"""VALU integer multiplies and multiply-adds (24-, 16-, 32- and 64-bit forms) and the sum-of-absolute-
differences family (v_sad_*, v_msad_u8, v_qsad/v_mqsad, v_lerp_u8), from the RDNA3 ISA reference
pseudo-code. Products are formed exactly in int64/uint64 (a 32x32 product fits); clamp saturates to the
destination type where the encoding has a clamp bit. The multiplies are in the expression form (sem.expr)
both tiers are generated from; the SAD family stays numpy."""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import vector_src, write_vgpr
from simgpu.shader.sem.expr import cast, eq, ne, saturate, select
from simgpu.shader.semantics import register
from simgpu.shader.vector.int_arith import UMAX, i64, u64, wide, wrap_or_sat
from simgpu.shader.vector.valu import define, vop

U16, U32, U64, I32, I64 = np.uint16, np.uint32, np.uint64, np.int32, np.int64


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

_U32R = (0, UMAX[32])


def _bytes(x, n: int = 4) -> list[np.ndarray]:
    """The n bytes of x (low first) as int64 arrays."""
    v = u64(x)
    return [i64((v >> U64(8 * k)) & U64(0xFF)) for k in range(n)]


def _sad_u8(a, b, masked: bool = False):
    """Sum over the 4 bytes of |a.u8[i] - b.u8[i]|; masked (MSAD) skips bytes where b.u8[i] == 0."""
    total = 0
    for x, y in zip(_bytes(a), _bytes(b), strict=True):
        d = np.abs(x - y)
        total = total + (np.where(y == 0, 0, d) if masked else d)
    return total


def _halves(x):
    v = u64(x)
    return [i64(v & U64(0xFFFF)), i64((v >> U64(16)) & U64(0xFFFF))]


def _sad_u16(c, a, b, d):
    s = sum(np.abs(x - y) for x, y in zip(_halves(a), _halves(b), strict=True))
    return wrap_or_sat(c, s + i64(d), *_U32R, U32)


vop("v_sad_u8", "u32", ("u32", "u32", "u32"),
    lambda c, a, b, d: wrap_or_sat(c, _sad_u8(a, b) + i64(d), *_U32R, U32), int_clamp=True)
vop("v_sad_hi_u8", "u32", ("u32", "u32", "u32"),
    lambda c, a, b, d: wrap_or_sat(c, (_sad_u8(a, b) << I64(16)) + i64(d), *_U32R, U32), int_clamp=True)
vop("v_sad_u16", "u32", ("u32", "u32", "u32"), _sad_u16, int_clamp=True)
vop("v_sad_u32", "u32", ("u32", "u32", "u32"),
    lambda c, a, b, d: wrap_or_sat(c, np.abs(i64(a) - i64(b)) + i64(d), *_U32R, U32), int_clamp=True)
vop("v_msad_u8", "u32", ("u32", "u32", "u32"),
    lambda c, a, b, d: wrap_or_sat(c, _sad_u8(a, b, True) + i64(d), *_U32R, U32), int_clamp=True)


def _window(s0, k: int):
    """Bytes k..k+3 of the 64-bit S0 as a 32-bit value (the reference window of a quad SAD)."""
    return (u64(s0) >> U64(8 * k)) & U64(0xFFFFFFFF)


def _qsad(masked: bool):
    """v_(m)qsad_pk_u16_u8: four 16-bit (M)SADs of S1 against byte windows of S0, each plus S2.u16[i]."""
    def fn(c, s0, s1, s2):
        out = np.zeros(np.shape(s0), U64)
        for k in range(4):
            acc = i64((u64(s2) >> U64(16 * k)) & U64(0xFFFF))
            r = wrap_or_sat(c, _sad_u8(_window(s0, k), s1, masked) + acc, 0, UMAX[16], U16)
            out |= u64(r) << U64(16 * k)
        return out
    return fn


vop("v_qsad_pk_u16_u8", "u64", ("u64", "u32", "u64"), _qsad(False), int_clamp=True)
vop("v_mqsad_pk_u16_u8", "u64", ("u64", "u32", "u64"), _qsad(True), int_clamp=True)


def _mqsad_u32_u8(ex, w, inst):
    """D.u32[i] = MSAD_U8(S0 bytes i..i+3, S1.u32, S2.u32[i]) for i in 0..3 (a 128-bit result)."""
    f = inst.fields
    s0 = vector_src(ex, w, f["src0"], inst.literal, "b64")
    s1 = vector_src(ex, w, f["src1"], inst.literal, "b32")
    clamp = bool(f.get("clamp", 0))
    active = ex.st.exec_lanes(w)
    results = []
    for k in range(4):  # S2 is a VGPR quad; read all of it before writing: D may overlap it
        acc = i64(vector_src(ex, w, f["src2"] + k, None, "b32"))
        full = _sad_u8(_window(s0, k), s1, True) + acc
        results.append(np.clip(full, 0, UMAX[32]).astype(U32) if clamp else full.astype(U32))
    for k, r in enumerate(results):
        write_vgpr(ex, w, f["vdst"] + k, r, active)


register("v_mqsad_u32_u8", _mqsad_u32_u8)


def _lerp_u8(c, a, b, d):
    """Per byte: (S0.u8 + S1.u8 + rounding bit S2[8i]) >> 1."""
    out = np.zeros(np.shape(a), U64)
    rb = u64(d)
    for k, (x, y) in enumerate(zip(_bytes(a), _bytes(b), strict=True)):
        r = i64((rb >> U64(8 * k)) & U64(1))
        out |= u64((x + y + r) >> I64(1)) << U64(8 * k)
    return out.astype(U32)


vop("v_lerp_u8", "u32", ("u32", "u32", "u32"), _lerp_u8)
