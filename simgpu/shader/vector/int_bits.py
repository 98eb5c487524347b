"""VALU bit manipulation, counting, min/max/median and integer packing: v_bfe/bfi/bfm/bfrev,
v_alignbit/alignbyte, v_perm_b32, v_bcnt/v_mbcnt, v_clz/ctz/cls (gfx11's names of ffbh/ffbl/ffbh_i32),
v_min/max/min3/max3/med3/minmax/maxmin, v_cvt_pk_*16_*32, v_sat_pk_u8_i16, v_pack_b32_f16 and the
16->32-bit integer conversions, from the RDNA3 ISA reference pseudo-code, in the expression form (sem.expr)
both tiers are generated from."""

from __future__ import annotations

from simgpu.shader.sem.expr import (
    bitcast,
    bitreverse,
    cast,
    clz,
    const,
    ctz,
    eq,
    lane_id,
    maximum,
    minimum,
    popcount,
    select,
)
from simgpu.shader.vector.valu import define


def _count_or_minus_one(n, x):
    """A bit count as i32, -1 when x has no bit to find."""
    return select(eq(x, 0), -1, cast(n, "i32"))


define("v_bfrev_b32", "b32", ("b32",), bitreverse)
define("v_clz_i32_u32", "i32", ("u32",), lambda a: _count_or_minus_one(clz(a), a))
define("v_ctz_i32_b32", "i32", ("u32",), lambda a: _count_or_minus_one(ctz(a), a))


def _cls(a):
    """First bit (counted from bit 30 as 1) that differs from the sign bit; -1 when all bits are equal."""
    y = a ^ (a >> 31)
    return _count_or_minus_one(clz(y), y)


define("v_cls_i32", "i32", ("i32",), _cls)
define("v_bcnt_u32_b32", "u32", ("u32", "u32"), lambda a, b: popcount(a) + b)


def _mbcnt(hi: bool):
    """popcount(S0 & ThreadMask[31:0] or [63:32]) + S1, ThreadMask = (1 << laneId) - 1."""
    def fn(a, b):
        lane = lane_id()
        if hi:
            below = select(lane < 32, 0, (1 << ((lane - 32) & 31)) - 1)
        else:
            below = select(lane >= 32, 0xFFFFFFFF, (1 << (lane & 31)) - 1)
        return popcount(a & below) + b
    return fn


define("v_mbcnt_lo_u32_b32", "u32", ("u32", "u32"), _mbcnt(False))
define("v_mbcnt_hi_u32_b32", "u32", ("u32", "u32"), _mbcnt(True))


# ---------------------------------------------------------------------------------------------- bitfields


def _ones(width):
    """width (0-31) low bits set."""
    return (1 << (width & 31)) - 1


def _bfe_i32(a, off, width):
    """Arithmetic shift, mask to width bits, sign-extend from bit width-1 (width 0 gives 0)."""
    wd = width & 31
    tmp = cast(a >> cast(off & 31, "i32"), "u32") & _ones(wd)
    sign = select(eq(wd, 0), 0, 1 << ((wd - 1) & 31))
    return cast((tmp ^ sign) - sign, "i32")


define("v_bfe_u32", "u32", ("u32", "u32", "u32"), lambda a, off, width: (a >> (off & 31)) & _ones(width))
define("v_bfe_i32", "i32", ("i32", "u32", "u32"), _bfe_i32)
define("v_bfi_b32", "b32", ("b32", "b32", "b32"), lambda m, a, b: (m & a) | (~m & b))
define("v_bfm_b32", "b32", ("u32", "u32"), lambda w, off: _ones(w) << (off & 31))


def _pair(hi, lo):
    """{hi, lo} as one u64."""
    return (cast(hi, "u64") << 32) | cast(lo, "u64")


define("v_alignbit_b32", "b32", ("u32", "u32", "u32"),
       lambda a, b, s: cast(_pair(a, b) >> cast(s & 31, "u64"), "u32"))
define("v_alignbyte_b32", "b32", ("u32", "u32", "u32"),
       lambda a, b, s: cast(_pair(a, b) >> cast((s & 3) * 8, "u64"), "u32"))


def _perm(a, b, sel):
    """D.byte[k] = BYTE_PERMUTE({S0, S1}, S2.byte[k]): 0-7 pick a byte (S1 is the low dword), 8-11 the
    sign of byte 1/3/5/7 replicated, 12 gives 0x00, 13-255 give 0xff."""
    data = _pair(a, b)
    out = None
    for k in range(4):
        x = (sel >> (8 * k)) & 0xFF
        x64 = cast(x, "u64")
        pick = cast((data >> ((x64 & 7) * 8)) & 0xFF, "u32")
        sign = cast((data >> ((x64 & 3) * 16 + 15)) & 1, "u32")  # bit 7 of byte 2*(x-8)+1
        r = select(x < 8, pick, select(x < 12, sign * 0xFF, select(eq(x, 12), const(0, "u32"), 0xFF)))
        out = r if out is None else out | (r << (8 * k))
    return out


define("v_perm_b32", "b32", ("u32", "u32", "u32"), _perm)


# ---------------------------------------------------------------------------------------------- min/max


def _med3(a, b, d):
    return maximum(minimum(a, b), minimum(maximum(a, b), d))


for _t in ("i32", "u32", "i16", "u16"):
    define(f"v_min_{_t}", _t, (_t, _t), minimum)
    define(f"v_max_{_t}", _t, (_t, _t), maximum)
    define(f"v_min3_{_t}", _t, (_t, _t, _t), lambda a, b, d: minimum(minimum(a, b), d))
    define(f"v_max3_{_t}", _t, (_t, _t, _t), lambda a, b, d: maximum(maximum(a, b), d))
    define(f"v_med3_{_t}", _t, (_t, _t, _t), _med3)
for _t in ("i32", "u32"):
    define(f"v_maxmin_{_t}", _t, (_t, _t, _t), lambda a, b, d: minimum(maximum(a, b), d))
    define(f"v_minmax_{_t}", _t, (_t, _t, _t), lambda a, b, d: maximum(minimum(a, b), d))


# ---------------------------------------------------------------------------------------------- packing


def pack16(lo, hi):
    """The low halves of two integers as one u32, lo first."""
    return (cast(lo, "u32") & 0xFFFF) | ((cast(hi, "u32") & 0xFFFF) << 16)


define("v_cvt_pk_u16_u32", "b32", ("u32", "u32"), lambda a, b: pack16(minimum(a, 0xFFFF), minimum(b, 0xFFFF)))
define("v_cvt_pk_i16_i32", "b32", ("i32", "i32"),
       lambda a, b: pack16(minimum(maximum(a, -0x8000), 0x7FFF), minimum(maximum(b, -0x8000), 0x7FFF)))


def _sat_pk_u8_i16(a):
    """Each i16 half of S0 saturated to u8, packed into a u16."""
    lo, hi = cast(a, "i16"), cast(a >> 16, "i16")
    lo, hi = (cast(minimum(maximum(x, 0), 255), "u16") for x in (lo, hi))
    return lo | (hi << 8)


define("v_sat_pk_u8_i16", "b16", ("u32",), _sat_pk_u8_i16)
define("v_cvt_u32_u16", "u32", ("u16",), lambda a: cast(a, "u32"))
define("v_cvt_i32_i16", "i32", ("i16",), lambda a: cast(a, "i32"))

# A bit move of two f16 halves (abs/neg apply as f16 sign-bit operations, nothing is rounded)
define("v_pack_b32_f16", "b32", ("f16", "f16"),
       lambda a, b: cast(bitcast(a, "u16"), "b32") | (cast(bitcast(b, "u16"), "b32") << 16), no_omod=True)
