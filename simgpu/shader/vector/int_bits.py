"""VALU bit manipulation, counting, min/max/median and integer packing: v_bfe/bfi/bfm/bfrev,
v_alignbit/alignbyte, v_perm_b32, v_bcnt/v_mbcnt, v_clz/ctz/cls (gfx11's names of ffbh/ffbl/ffbh_i32),
v_min/max/min3/max3/med3/minmax/maxmin, v_cvt_pk_*16_*32, v_sat_pk_u8_i16, v_pack_b32_f16 and the
16->32-bit integer conversions, from the RDNA3 ISA reference pseudo-code."""

from __future__ import annotations

import numpy as np

from simgpu.shader.vector.int_arith import i64, u64
from simgpu.shader.vector.valu import vop

U8, U16, U32, U64, I32, I64 = np.uint8, np.uint16, np.uint32, np.uint64, np.int32, np.int64

# bit-reversed bytes, for v_bfrev_b32 byte by byte
_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], U32)


def _m5(x):
    return u64(x) & U64(31)


def popcount(x) -> np.ndarray:
    """Number of set bits, as int64."""
    return np.bitwise_count(u64(x)).astype(I64)


def clz32(x) -> np.ndarray:
    """Leading zeros of a 32-bit value (32 for 0), as int64."""
    v = u64(x)
    for s in (1, 2, 4, 8, 16):  # smear the highest set bit downwards
        v = v | (v >> U64(s))
    return 32 - popcount(v)


def ctz32(x) -> np.ndarray:
    """Trailing zeros of a 32-bit value (32 for 0), as int64."""
    v = u64(x) & U64(0xFFFFFFFF)
    low = v & (~v + U64(1))  # lowest set bit
    return np.where(v == 0, 32, popcount(low - U64(1)))


def _bfrev(c, a):
    v = u64(a)
    out = np.zeros(np.shape(a), U32)
    for k in range(4):
        out |= _REV8[((v >> U64(8 * k)) & U64(0xFF)).astype(np.intp)] << U32(24 - 8 * k)
    return out


def _ffbh(c, a):
    n = clz32(a)
    return np.where(n == 32, -1, n).astype(I32)


def _ffbl(c, a):
    n = ctz32(a)
    return np.where(n == 32, -1, n).astype(I32)


def _cls(c, a):
    """First bit (counted from bit 30 as 1) that differs from the sign bit; -1 when all bits are equal."""
    v = i64(a)
    y = u64(v ^ (v >> I64(31))) & U64(0xFFFFFFFF)
    return np.where(y == 0, -1, clz32(y)).astype(I32)


vop("v_bfrev_b32", "b32", ("b32",), _bfrev)
vop("v_clz_i32_u32", "i32", ("u32",), _ffbh)
vop("v_ctz_i32_b32", "i32", ("u32",), _ffbl)
vop("v_cls_i32", "i32", ("i32",), _cls)
vop("v_bcnt_u32_b32", "u32", ("u32", "u32"), lambda c, a, b: (u64(popcount(a)) + u64(b)).astype(U32))


def _mbcnt(hi: bool):
    """popcount(S0 & ThreadMask[31:0] or [63:32]) + S1, ThreadMask = (1 << laneId) - 1."""
    def fn(c, a, b):
        lane = np.arange(c.lanes, dtype=np.int64)
        shift = lane - 32 if hi else lane
        below = np.where(shift >= 32, U64(0xFFFFFFFF),
                         np.where(shift <= 0, U64(0), (U64(1) << u64(np.clip(shift, 0, 31))) - U64(1)))
        return (u64(popcount(u64(a) & below[None, :])) + u64(b)).astype(U32)
    return fn


vop("v_mbcnt_lo_u32_b32", "u32", ("u32", "u32"), _mbcnt(False))
vop("v_mbcnt_hi_u32_b32", "u32", ("u32", "u32"), _mbcnt(True))


# ---------------------------------------------------------------------------------------------- bitfields


def _width_mask(w):
    return (U64(1) << w) - U64(1)


def _bfe_u32(c, a, off, width):
    return ((u64(a) >> _m5(off)) & _width_mask(_m5(width))).astype(U32)


def _bfe_i32(c, a, off, width):
    """Arithmetic shift, mask to width bits, sign-extend from bit width-1 (width 0 gives 0)."""
    wd = _m5(width)
    tmp = u64((i64(a) >> i64(_m5(off))) & i64(_width_mask(wd)))
    sign = np.where(wd == 0, U64(0), U64(1) << (np.maximum(wd, U64(1)) - U64(1)))
    return ((tmp ^ sign) - sign).astype(I32)


vop("v_bfe_u32", "u32", ("u32", "u32", "u32"), _bfe_u32)
vop("v_bfe_i32", "i32", ("i32", "u32", "u32"), _bfe_i32)
vop("v_bfi_b32", "b32", ("b32", "b32", "b32"), lambda c, m, a, b: (m & a) | (~m & b))
vop("v_bfm_b32", "b32", ("u32", "u32"), lambda c, w, off: (_width_mask(_m5(w)) << _m5(off)).astype(U32))


def _pair(hi, lo):
    return (u64(hi) << U64(32)) | u64(lo)


vop("v_alignbit_b32", "b32", ("u32", "u32", "u32"), lambda c, a, b, s: (_pair(a, b) >> _m5(s)).astype(U32))
vop("v_alignbyte_b32", "b32", ("u32", "u32", "u32"),
    lambda c, a, b, s: (_pair(a, b) >> ((u64(s) & U64(3)) * U64(8))).astype(U32))


def _perm(c, a, b, sel):
    """D.byte[k] = BYTE_PERMUTE({S0, S1}, S2.byte[k]): 0-7 pick a byte (S1 is the low dword), 8-11 the
    sign of byte 1/3/5/7 replicated, 12 gives 0x00, 13-255 give 0xff."""
    data = _pair(a, b)
    s = u64(sel)
    out = np.zeros(np.shape(data), U64)
    for k in range(4):
        x = (s >> U64(8 * k)) & U64(0xFF)
        pick = (data >> ((x & U64(7)) * U64(8))) & U64(0xFF)
        sign_byte = (data >> ((x & U64(3)) * U64(16) + U64(15))) & U64(1)  # bit 7 of byte 2*(x-8)+1
        r = np.where(x < 8, pick, np.where(x < 12, sign_byte * U64(0xFF), np.where(x == 12, U64(0), U64(0xFF))))
        out |= r << U64(8 * k)
    return out.astype(U32)


vop("v_perm_b32", "b32", ("u32", "u32", "u32"), _perm)


# ---------------------------------------------------------------------------------------------- min/max


def _med3(c, a, b, d):
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), d))


for _t in ("i32", "u32", "i16", "u16"):
    vop(f"v_min_{_t}", _t, (_t, _t), lambda c, a, b: np.minimum(a, b))
    vop(f"v_max_{_t}", _t, (_t, _t), lambda c, a, b: np.maximum(a, b))
    vop(f"v_min3_{_t}", _t, (_t, _t, _t), lambda c, a, b, d: np.minimum(np.minimum(a, b), d))
    vop(f"v_max3_{_t}", _t, (_t, _t, _t), lambda c, a, b, d: np.maximum(np.maximum(a, b), d))
    vop(f"v_med3_{_t}", _t, (_t, _t, _t), _med3)
for _t in ("i32", "u32"):
    vop(f"v_maxmin_{_t}", _t, (_t, _t, _t), lambda c, a, b, d: np.minimum(np.maximum(a, b), d))
    vop(f"v_minmax_{_t}", _t, (_t, _t, _t), lambda c, a, b, d: np.maximum(np.minimum(a, b), d))


# ---------------------------------------------------------------------------------------------- packing


def _pack16(lo, hi):
    return (u64(lo) & U64(0xFFFF)) | ((u64(hi) & U64(0xFFFF)) << U64(16))


vop("v_cvt_pk_u16_u32", "b32", ("u32", "u32"),
    lambda c, a, b: _pack16(np.minimum(a, U32(0xFFFF)), np.minimum(b, U32(0xFFFF))).astype(U32))
vop("v_cvt_pk_i16_i32", "b32", ("i32", "i32"),
    lambda c, a, b: _pack16(np.clip(a, -0x8000, 0x7FFF), np.clip(b, -0x8000, 0x7FFF)).astype(U32))


def _sat_pk_u8_i16(c, a):
    v = u64(a)
    lo = np.clip(i64((v & U64(0xFFFF)).astype(U16).view(np.int16)), 0, 255)
    hi = np.clip(i64(((v >> U64(16)) & U64(0xFFFF)).astype(U16).view(np.int16)), 0, 255)
    return (u64(lo) | (u64(hi) << U64(8))).astype(U16)


vop("v_sat_pk_u8_i16", "b16", ("u32",), _sat_pk_u8_i16)
# A bit move of two halves (abs/neg apply as f16 sign-bit operations, nothing is rounded).
vop("v_pack_b32_f16", "b32", ("f16", "f16"),
    lambda c, a, b: _pack16(a.view(U16), b.view(U16)).astype(U32), no_omod=True)
vop("v_cvt_u32_u16", "u32", ("u16",), lambda c, a: a.astype(U32))
vop("v_cvt_i32_i16", "i32", ("i16",), lambda c, a: a.astype(I32))
