"""VALU float min/max family (min, max, min3, max3, med3, minmax, maxmin) and the cube-map ops, from the
RDNA3 ISA reference pseudo-code.

min/max follow MODE.IEEE: with it set, a signaling NaN operand yields that NaN quieted and a quiet
NaN operand yields the other operand; with it clear any NaN yields the other operand. -0 < +0.
Denormal inputs are flushed per the input denorm mode (the reference: the result then cannot be one).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem import fpexact as fx
from simgpu.shader.vector.valu import vop

F32 = np.float32
_IEEE_BIT = 9


def _ieee(ctx) -> np.ndarray | bool:
    """MODE.IEEE per wave ([n, 1] bool), or one bool when every wave has the same MODE."""
    u = ctx.uniform_mode
    if u is not None:
        return bool((u >> _IEEE_BIT) & 1)
    return ((np.asarray(ctx.mode).astype(np.int64).reshape(-1, 1) >> _IEEE_BIT) & 1).astype(bool)


def _less(a, b):
    """a < b with -0 < +0 (LT_NEG_ZERO)."""
    return (a < b) | ((a == 0) & (b == 0) & np.signbit(a) & ~np.signbit(b))


def _pick(ieee, a, b, a_wins):
    """The min/max selection with the reference's NaN rules; a_wins: a is the strict winner."""
    na, nb = np.isnan(a), np.isnan(b)
    if not (na.any() or nb.any()):  # no NaN operand: both rule sets pick the winner
        return np.where(a_wins, a, b).astype(a.dtype)
    sa, sb = fx.is_snan(a), fx.is_snan(b)
    ieee_r = np.select([sa, sb, nb, na], [fx.quiet_nan(a), fx.quiet_nan(b), a, b], np.where(a_wins, a, b))
    legacy_r = np.select([nb, na], [a, b], np.where(a_wins, a, b))
    return np.where(ieee, ieee_r, legacy_r).astype(a.dtype)


def fmin(ctx, t, a, b):
    """v_min_<t> on flushed inputs."""
    return _pick(_ieee(ctx), a, b, _less(a, b))


def fmax(ctx, t, a, b):
    """v_max_<t> on flushed inputs."""
    return _pick(_ieee(ctx), a, b, _less(b, a))


def _flushed(ctx, t, *xs):
    u = ctx.uniform_mode
    if u is not None and (u >> (4 if t == "f32" else 6)) & 1:  # every wave keeps input denormals
        return list(xs)
    dm = fx.denorm_mode(ctx.mode, t)
    return [fx.flush_in(x, dm) for x in xs]


def _min3(ctx, t, a, b, c):
    return fmin(ctx, t, fmin(ctx, t, a, b), c)


def _max3(ctx, t, a, b, c):
    return fmax(ctx, t, fmax(ctx, t, a, b), c)


def _med3(ctx, t, a, b, c):
    anynan = np.isnan(a) | np.isnan(b) | np.isnan(c)
    m = _max3(ctx, t, a, b, c)
    r = np.select([anynan, m == a, m == b], [_min3(ctx, t, a, b, c), fmax(ctx, t, b, c), fmax(ctx, t, a, c)],
                  fmax(ctx, t, a, b))
    return r.astype(a.dtype)


def _reg(name, t, nsrc, fn):
    srcs = (t,) * nsrc
    if nsrc == 2:
        vop(name, t, srcs, lambda c, a, b: fn(c, t, *_flushed(c, t, a, b)))
    else:
        vop(name, t, srcs, lambda c, a, b, d: fn(c, t, *_flushed(c, t, a, b, d)))


for _t in ("f16", "f32", "f64"):
    _reg(f"v_min_{_t}", _t, 2, fmin)
    _reg(f"v_max_{_t}", _t, 2, fmax)
for _t in ("f16", "f32"):
    _reg(f"v_min3_{_t}", _t, 3, _min3)
    _reg(f"v_max3_{_t}", _t, 3, _max3)
    _reg(f"v_med3_{_t}", _t, 3, _med3)
    _reg(f"v_maxmin_{_t}", _t, 3, lambda c, t, a, b, d: fmin(c, t, fmax(c, t, a, b), d))
    _reg(f"v_minmax_{_t}", _t, 3, lambda c, t, a, b, d: fmax(c, t, fmin(c, t, a, b), d))


# ---------------------------------------------------------------------------------------------- cube maps


def _cube_axes(x, y, z):
    """(z is major, y is major) per the reference's comparisons on |x|, |y|, |z|."""
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    zmaj = (az >= ax) & (az >= ay)
    return zmaj, ~zmaj & (ay >= ax)


def _cubeid(c, x, y, z):
    zmaj, ymaj = _cube_axes(x, y, z)
    return np.select([zmaj, ymaj], [np.where(z < 0, 5.0, 4.0), np.where(y < 0, 3.0, 2.0)],
                     np.where(x < 0, 1.0, 0.0)).astype(F32)


def _cubesc(c, x, y, z):
    zmaj, ymaj = _cube_axes(x, y, z)
    return np.select([zmaj, ymaj], [np.where(z < 0, -x, x), x], np.where(x < 0, z, -z)).astype(F32)


def _cubetc(c, x, y, z):
    zmaj, ymaj = _cube_axes(x, y, z)
    return np.select([zmaj, ymaj], [-y, np.where(y < 0, -z, z)], -y).astype(F32)


def _cubema(c, x, y, z):
    zmaj, ymaj = _cube_axes(x, y, z)
    return (np.select([zmaj, ymaj], [z, y], x) * F32(2)).astype(F32)


for _name, _fn in (("cubeid", _cubeid), ("cubesc", _cubesc), ("cubetc", _cubetc), ("cubema", _cubema)):
    vop(f"v_{_name}_f32", "f32", ("f32", "f32", "f32"), _fn)
