"""VALU conversions (every v_cvt_*, packs, norms) and float rounding ops (trunc/ceil/floor/rndne, fract,
frexp), from the RDNA3 ISA reference pseudo-code; defined in the expression form (both tiers are generated
from it) but for two escape hatches written for numpy only, each with its reason.

Float results round once in the destination type's MODE round mode and denormals flush per MODE
(v_cvt_f16_f32 uses the f16/f64 fields, per the reference). Float -> integer conversions truncate,
saturate out-of-range values (and infinities), and turn NaN into 0.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem import expr
from simgpu.shader.sem import fpexact as fx
from simgpu.shader.sem.expr import bitcast, cast, const, eq, floor, flush_in, flush_out, isnan, rint, select
from simgpu.shader.sem.numpy_float import to_int
from simgpu.shader.vector.int_bits import pack16
from simgpu.shader.vector.valu import define, vop

F16, F32, F64 = np.float16, np.float32, np.float64
DT = {"f16": F16, "f32": F32, "f64": F64}


def _modes(ctx, t):
    return fx.round_mode(ctx.mode, t), fx.denorm_mode(ctx.mode, t)


# ---------------------------------------------------------------------------------------------- int <-> float

for _it, _ft in (("i32", "f32"), ("u32", "f32"), ("i32", "f64"), ("u32", "f64"), ("i16", "f16"), ("u16", "f16")):
    define(f"v_cvt_{_ft}_{_it}", _ft, (_it,), lambda x, f=_ft: cast(x, f))
    # (the reference flushes the input first: a denormal truncates to 0 either way)
    define(f"v_cvt_{_it}_{_ft}", _it, (_ft,), lambda x, i=_it: cast(x, i))
for _k in range(4):
    define(f"v_cvt_f32_ubyte{_k}", "f32", ("u32",), lambda x, k=_k: cast((x >> 8 * k) & 255, "f32"))
define("v_cvt_floor_i32_f32", "i32", ("f32",), lambda x: cast(floor(flush_in(x)), "i32"))
# Escape hatch: the reference adds 0.5 in f32 (so 0.49999997 rounds up to 1) before taking the floor, and that
# add rounds to nearest whatever MODE says here, where the form's + rounds as MODE says.
vop("v_cvt_nearest_i32_f32", "i32", ("f32",),
    lambda c, x: to_int(np.floor(fx.flush_in(x, _modes(c, "f32")[1]) + F32(0.5)), "i32"))
# the low nibble as a signed number of sixteenths
define("v_cvt_off_f32_i4", "f32", ("u32",), lambda x: cast(cast(x << 28, "i32") >> 28, "f32") * 0.0625)

# ---------------------------------------------------------------------------------------------- float <-> float

for _s, _d in (("f32", "f16"), ("f16", "f32"), ("f64", "f32"), ("f32", "f64")):
    define(f"v_cvt_{_d}_{_s}", _d, (_s,), lambda x, d=_d: flush_out(cast(flush_in(x), d)))


# ---------------------------------------------------------------------------------------------- packs and norms


def _norm(lo: float, scale: float):
    """f -> normalized short: NaN -> 0, clamped to [lo, 1] and scaled (exactly, in f64: 24 + 16 bits), rounded
    to nearest even."""
    def fn(x):
        v = cast(x, "f64")
        v = select(isnan(v), 0.0, select(v < lo, lo, select(v > 1, 1.0, v)))
        return cast(rint(v * scale), "i16" if lo else "u16")
    return fn


_snorm, _unorm = _norm(-1.0, 32767.0), _norm(0.0, 65535.0)
define("v_cvt_norm_i16_f16", "i16", ("f16",), _snorm)
define("v_cvt_norm_u16_f16", "u16", ("f16",), _unorm)
for _s in ("f16", "f32"):
    define(f"v_cvt_pk_norm_i16_{_s}", "b32", (_s, _s), lambda a, b: pack16(_snorm(a), _snorm(b)))
    define(f"v_cvt_pk_norm_u16_{_s}", "b32", (_s, _s), lambda a, b: pack16(_unorm(a), _unorm(b)))
define("v_cvt_pk_i16_f32", "b32", ("f32", "f32"), lambda a, b: pack16(cast(a, "i16"), cast(b, "i16")))
define("v_cvt_pk_u16_f32", "b32", ("f32", "f32"), lambda a, b: pack16(cast(a, "u16"), cast(b, "u16")))


def _cvt_pk_u8(x, byte, acc):
    """f32_to_u8 of S0 (truncating and saturating like f32_to_u32) into byte S1[1:0] of S2."""
    sh = (byte & 3) * 8
    return (acc & ~(const(0xFF, "u32") << sh)) | (expr.minimum(cast(x, "u32"), 255) << sh)


define("v_cvt_pk_u8_f32", "b32", ("f32", "u32", "u32"), _cvt_pk_u8)


def _rtz_f16(ctx, x):
    _, dm = _modes(ctx, "f32")
    v = fx.flush_in(x, dm).astype(F64)
    r = fx.round_pair(v, np.zeros(v.shape), F16, np.full((1, 1), fx.RTZ))
    return fx.flush_out(r, _modes(ctx, "f16")[1]).view(np.uint16).astype(np.uint32)


# Escape hatch: always rounds toward zero, where the form's casts round as MODE says.
vop("v_cvt_pk_rtz_f16_f32", "b32", ("f32", "f32"),
    lambda c, a, b: _rtz_f16(c, a) | (_rtz_f16(c, b) << np.uint32(16)))


# ---------------------------------------------------------------------------------------------- rounding to integers

# rndne: IEEE roundToIntegralTiesToEven; the reference's floor(x + 0.5) model would round 0.49999997 up and
# lose the sign of -0.3 -> -0, which round-to-integral hardware does not do.
for _name, _f in (("trunc", expr.trunc), ("ceil", expr.ceil), ("floor", floor), ("rndne", rint)):
    for _t in ("f16", "f32", "f64"):
        define(f"v_{_name}_{_t}", _t, (_t,), lambda x, f=_f: f(flush_in(x)))

def _fract(x):
    """x - floor(x) in the round mode, clamped below 1.0 (the reference's 0x3f7fffff for f32); a NaN gives
    itself quieted (S0 + -floor(S0) is arithmetic), an infinity the default NaN."""
    x = flush_in(x)
    r = x + -floor(x)
    below_one = float(np.nextafter(DT[x.t](1), DT[x.t](0)))
    ut, mbits, _ = expr.FLOAT_LAYOUT[x.t]
    return select(expr.fabs(x) < np.inf, select(r < below_one, r, below_one),
                  select(isnan(x), bitcast(bitcast(x, ut) | 1 << (mbits - 1), x.t), const(np.nan, x.t)))


def _frexp(x, it: str):
    """(mantissa in [0.5, 1) with x's sign, exponent as type it) of x flushed as MODE says, from its bits; NaN,
    inf and zero give themselves and exponent 0. A denormal is normalised by the position of its top bit."""
    ut, mbits, bias = expr.FLOAT_LAYOUT[x.t]
    width = int(ut[1:])
    u = bitcast(flush_in(x), ut)
    field, frac = (u >> mbits) & ((1 << (width - 1 - mbits)) - 1), u & ((1 << mbits) - 1)
    top = (width - 1) - expr.clz(frac)  # a denormal's top bit (wraps for zero, which is selected away)
    den = eq(field, 0)
    frac = select(den, (frac << (mbits - top)) & ((1 << mbits) - 1), frac)
    exp = select(den, cast(top, "i32") + (2 - bias - mbits), cast(field, "i32") + (1 - bias))
    mant = bitcast((u & (1 << (width - 1))) | ((bias - 1) << mbits) | frac, x.t)
    special = eq(u << 1, 0) | eq(field, (1 << (width - 1 - mbits)) - 1)  # zero, or inf/NaN
    return select(special, bitcast(u, x.t), mant), cast(select(special, 0, exp), it)


for _t, _it in (("f16", "i16"), ("f32", "i32"), ("f64", "i32")):
    define(f"v_fract_{_t}", _t, (_t,), _fract)
    define(f"v_frexp_mant_{_t}", _t, (_t,), lambda x: _frexp(x, "i32")[0])
    define(f"v_frexp_exp_{_it}_{_t}", _it, (_t,), lambda x, i=_it: _frexp(x, i)[1])
