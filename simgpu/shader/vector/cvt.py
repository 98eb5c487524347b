"""VALU conversions (every v_cvt_*, packs, norms) and float rounding ops (trunc/ceil/floor/rndne, fract,
frexp), from the RDNA3 ISA reference pseudo-code.

Float results round once in the destination type's MODE round mode and denormals flush per MODE
(v_cvt_f16_f32 uses the f16/f64 fields, per the reference). Float -> integer conversions truncate,
saturate out-of-range values (and infinities), and turn NaN into 0.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem import fpexact as fx
from simgpu.shader.vector.valu import vop

F16, F32, F64 = np.float16, np.float32, np.float64
DT = {"f16": F16, "f32": F32, "f64": F64}
_INT = {"i32": (np.int32, -2.0 ** 31, 2.0 ** 31 - 1), "u32": (np.uint32, 0.0, 2.0 ** 32 - 1),
        "i16": (np.int16, -2.0 ** 15, 2.0 ** 15 - 1), "u16": (np.uint16, 0.0, 2.0 ** 16 - 1),
        "u8": (np.uint8, 0.0, 255.0)}


def _modes(ctx, t):
    return fx.round_mode(ctx.mode, t), fx.denorm_mode(ctx.mode, t)


def to_int(x: np.ndarray, it: str) -> np.ndarray:
    """Float -> integer with truncation, saturation, NaN -> 0 (f32_to_i32 and friends)."""
    dt, lo, hi = _INT[it]
    v = np.clip(np.trunc(np.nan_to_num(x.astype(F64), nan=0.0, posinf=hi, neginf=lo)), lo, hi)
    return v.astype(np.int64).astype(dt)


def to_float(x: np.ndarray, src: str, dst: str, ctx) -> np.ndarray:
    """A float or integer value (exact in f64) rounded to float type dst per MODE."""
    rm, dm = _modes(ctx, dst)
    v = x.astype(F64)
    if src in DT:
        v = fx.flush_in(x, fx.denorm_mode(ctx.mode, src)).astype(F64)
    return fx.flush_out(fx.round_pair(v, np.zeros(v.shape), DT[dst], rm), dm)


# ---------------------------------------------------------------------------------------------- int <-> float

for _it, _ft in (("i32", "f32"), ("u32", "f32"), ("i32", "f64"), ("u32", "f64"), ("i16", "f16"), ("u16", "f16")):
    vop(f"v_cvt_{_ft}_{_it}", _ft, (_it,), lambda c, x, i=_it, f=_ft: to_float(x, i, f, c))
    vop(f"v_cvt_{_it}_{_ft}", _it, (_ft,), lambda c, x, i=_it, f=_ft: to_int(fx.flush_in(x, _modes(c, f)[1]), i))
for _k in range(4):
    vop(f"v_cvt_f32_ubyte{_k}", "f32", ("u32",),
        lambda c, x, k=_k: ((x >> np.uint32(8 * k)) & np.uint32(255)).astype(F32))
vop("v_cvt_floor_i32_f32", "i32", ("f32",), lambda c, x: to_int(np.floor(fx.flush_in(x, _modes(c, "f32")[1])), "i32"))
# the reference adds 0.5 in f32 (so 0.49999997 rounds up to 1) before taking the floor
vop("v_cvt_nearest_i32_f32", "i32", ("f32",),
    lambda c, x: to_int(np.floor(fx.flush_in(x, _modes(c, "f32")[1]) + F32(0.5)), "i32"))
_OFF_TABLE = np.array([i / 16.0 for i in range(8)] + [(i - 16) / 16.0 for i in range(8, 16)], F32)
vop("v_cvt_off_f32_i4", "f32", ("u32",), lambda c, x: _OFF_TABLE[x & np.uint32(15)])

# ---------------------------------------------------------------------------------------------- float <-> float

vop("v_cvt_f16_f32", "f16", ("f32",), lambda c, x: to_float(x, "f32", "f16", c))
vop("v_cvt_f32_f16", "f32", ("f16",), lambda c, x: to_float(x, "f16", "f32", c))
vop("v_cvt_f32_f64", "f32", ("f64",), lambda c, x: to_float(x, "f64", "f32", c))
vop("v_cvt_f64_f32", "f64", ("f32",), lambda c, x: to_float(x, "f32", "f64", c))


# ---------------------------------------------------------------------------------------------- packs and norms


def _pack16(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    lo16 = lo.view(np.uint16) if lo.dtype.itemsize == 2 else lo.astype(np.uint16)
    hi16 = hi.view(np.uint16) if hi.dtype.itemsize == 2 else hi.astype(np.uint16)
    return lo16.astype(np.uint32) | (hi16.astype(np.uint32) << np.uint32(16))


def snorm(x: np.ndarray) -> np.ndarray:
    """f -> signed normalized short: clamp to [-1, 1], scale by 32767, round to nearest even; NaN -> 0."""
    v = np.clip(np.nan_to_num(x.astype(F64), nan=0.0), -1.0, 1.0)
    return np.rint(v * 32767.0).astype(np.int16)


def unorm(x: np.ndarray) -> np.ndarray:
    """f -> unsigned normalized short: clamp to [0, 1], scale by 65535, round to nearest even; NaN -> 0."""
    v = np.clip(np.nan_to_num(x.astype(F64), nan=0.0), 0.0, 1.0)
    return np.rint(v * 65535.0).astype(np.uint16)


def _rtz_f16(ctx, x):
    _, dm = _modes(ctx, "f32")
    v = fx.flush_in(x, dm).astype(F64)
    r = fx.round_pair(v, np.zeros(v.shape), F16, np.full((1, 1), fx.RTZ))
    return fx.flush_out(r, _modes(ctx, "f16")[1])


vop("v_cvt_pk_rtz_f16_f32", "b32", ("f32", "f32"), lambda c, a, b: _pack16(_rtz_f16(c, a), _rtz_f16(c, b)))
vop("v_cvt_norm_i16_f16", "i16", ("f16",), lambda c, x: snorm(x))
vop("v_cvt_norm_u16_f16", "u16", ("f16",), lambda c, x: unorm(x))
for _s in ("f16", "f32"):
    vop(f"v_cvt_pk_norm_i16_{_s}", "b32", (_s, _s), lambda c, a, b: _pack16(snorm(a), snorm(b)))
    vop(f"v_cvt_pk_norm_u16_{_s}", "b32", (_s, _s), lambda c, a, b: _pack16(unorm(a), unorm(b)))
vop("v_cvt_pk_i16_f32", "b32", ("f32", "f32"), lambda c, a, b: _pack16(to_int(a, "i16"), to_int(b, "i16")))
vop("v_cvt_pk_u16_f32", "b32", ("f32", "f32"), lambda c, a, b: _pack16(to_int(a, "u16"), to_int(b, "u16")))


def _cvt_pk_u8(ctx, x, byte, acc):
    """f32_to_u8 of S0 (truncating and saturating like f32_to_u32) into byte S1[1:0] of S2."""
    sh = (byte & np.uint32(3)) * np.uint32(8)
    keep = acc & ~(np.uint32(0xFF) << sh)
    return keep | (to_int(x, "u8").astype(np.uint32) << sh)


vop("v_cvt_pk_u8_f32", "b32", ("f32", "u32", "u32"), _cvt_pk_u8)




# ---------------------------------------------------------------------------------------------- rounding to integers


def _round_op(fn):
    def op(ctx, x, t):
        _, dm = _modes(ctx, t)
        return fn(fx.flush_in(x, dm)).astype(x.dtype)
    return op


# rndne: IEEE roundToIntegralTiesToEven (np.rint); the reference's floor(x + 0.5) model would round
# 0.49999997 up and lose the sign of -0.3 -> -0, which round-to-integral hardware does not do.
_ROUNDERS = {"trunc": np.trunc, "ceil": np.ceil, "floor": np.floor, "rndne": np.rint}
for _name, _f in _ROUNDERS.items():
    for _t in ("f16", "f32", "f64"):
        _op = _round_op(_f)
        vop(f"v_{_name}_{_t}", _t, (_t,), lambda c, x, t=_t, op=_op: op(c, x, t))


def _fract(ctx, x, t):
    """x - floor(x) in the round mode, clamped below 1.0 (the reference's 0x3f7fffff for f32)."""
    rm, dm = _modes(ctx, t)
    x = fx.flush_in(x, dm)
    fl = np.floor(x)
    r = fx.add64(x, -fl, rm) if t == "f64" else fx.add_small(x, -fl, DT[t], rm)
    below_one = np.nextafter(DT[t](1), DT[t](0))
    # NaN in, NaN out quieted (the reference's S0 + -floor(S0) is arithmetic: a signaling NaN is quieted)
    return np.where(np.isfinite(x), np.minimum(r, below_one), np.where(np.isnan(x), fx.quiet_nan(x), DT[t](np.nan))
                    ).astype(DT[t])


def _frexp_mant(ctx, x, t):
    x = fx.flush_in(x, _modes(ctx, t)[1])
    m, _ = np.frexp(x)
    return np.where(np.isfinite(x), m, x).astype(x.dtype)


def _frexp_exp(ctx, x, t, it):
    x = fx.flush_in(x, _modes(ctx, t)[1])
    _, e = np.frexp(x)
    return np.where(np.isfinite(x), e, 0).astype(it)


for _t, _it in (("f16", "i16"), ("f32", "i32"), ("f64", "i32")):
    vop(f"v_fract_{_t}", _t, (_t,), lambda c, x, t=_t: _fract(c, x, t))
    vop(f"v_frexp_mant_{_t}", _t, (_t,), lambda c, x, t=_t: _frexp_mant(c, x, t))
    vop(f"v_frexp_exp_{_it}_{_t}", _it, (_t,), lambda c, x, t=_t, i=_it: _frexp_exp(c, x, t, _INT[i][0]))
