"""VALU float min/max family (min, max, min3, max3, med3, minmax, maxmin) and the cube-map ops, from the
RDNA3 ISA reference pseudo-code, defined in the expression form (both tiers are generated from it) but for
v_cubema_f32.

min/max follow MODE.IEEE: with it set, a signaling NaN operand yields that NaN quieted and a quiet NaN operand
yields the other operand; with it clear any NaN yields the other operand. -0 < +0 (sem.expr.fmin/fmax).
Denormal inputs are flushed per the input denorm mode (the reference: the result then cannot be one).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem.expr import const, eq, fabs, flush_in, fmax, fmin, isnan, select
from simgpu.shader.vector.valu import define, vop

F32 = np.float32


def _flushed(fn):
    return lambda *xs: fn(*(flush_in(x) for x in xs))


def _med3(a, b, c):
    m = fmax(fmax(a, b), c)
    return select(isnan(a) | isnan(b) | isnan(c), fmin(fmin(a, b), c),
                  select(eq(m, a), fmax(b, c), select(eq(m, b), fmax(a, c), fmax(a, b))))


for _t in ("f16", "f32", "f64"):
    define(f"v_min_{_t}", _t, (_t, _t), _flushed(fmin))
    define(f"v_max_{_t}", _t, (_t, _t), _flushed(fmax))
for _t in ("f16", "f32"):
    _3 = (_t, _t, _t)
    define(f"v_min3_{_t}", _t, _3, _flushed(lambda a, b, c: fmin(fmin(a, b), c)))
    define(f"v_max3_{_t}", _t, _3, _flushed(lambda a, b, c: fmax(fmax(a, b), c)))
    define(f"v_med3_{_t}", _t, _3, _flushed(_med3))
    define(f"v_maxmin_{_t}", _t, _3, _flushed(lambda a, b, c: fmin(fmax(a, b), c)))
    define(f"v_minmax_{_t}", _t, _3, _flushed(lambda a, b, c: fmax(fmin(a, b), c)))


# ---------------------------------------------------------------------------------------------- cube maps


def _cube_axes(x, y, z):
    """(z is major, y is major) per the reference's comparisons on |x|, |y|, |z|."""
    ax, ay, az = fabs(x), fabs(y), fabs(z)
    zmaj = (az >= ax) & (az >= ay)
    return zmaj, ~zmaj & (ay >= ax)


def _cubeid(x, y, z):
    zmaj, ymaj = _cube_axes(x, y, z)
    face = [const(v, "f32") for v in range(6)]
    return select(zmaj, select(z < 0, face[5], face[4]), select(ymaj, select(y < 0, face[3], face[2]),
                                                                select(x < 0, face[1], face[0])))


def _cubesc(x, y, z):
    zmaj, ymaj = _cube_axes(x, y, z)
    return select(zmaj, select(z < 0, -x, x), select(ymaj, x, select(x < 0, z, -z)))


def _cubetc(x, y, z):
    zmaj, ymaj = _cube_axes(x, y, z)
    return select(zmaj, -y, select(ymaj, select(y < 0, -z, z), -y))


def _cubema(c, x, y, z):
    """Escape hatch: the major axis times 2 in numpy's own arithmetic (round mode ignored, as for every cube
    op: docs/shader.md, "Deviations"), where the form's * rounds as MODE says."""
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    zmaj = (az >= ax) & (az >= ay)
    return (np.select([zmaj, ~zmaj & (ay >= ax)], [z, y], x) * F32(2)).astype(F32)


for _name, _fn in (("cubeid", _cubeid), ("cubesc", _cubesc), ("cubetc", _cubetc)):
    define(f"v_{_name}_f32", "f32", ("f32", "f32", "f32"), _fn)
vop("v_cubema_f32", "f32", ("f32", "f32", "f32"), _cubema)
