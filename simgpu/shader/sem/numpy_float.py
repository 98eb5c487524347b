"""The float operations the generated numpy kernels (sem.numpy_gen) call: what MODE says per float type for a
batch of waves, arithmetic rounded as MODE says, the NaN rules, the ISA's min/max and the conversions.

In the default round mode (nearest-even in every wave) numpy's own IEEE arithmetic gives the hardware's
results (f16 through float32: double rounding from 24 bits is innocuous for + - *; fma through fpexact's
fma_nearest); in any other mode the exact paths of fpexact round once. MODE is one int when every wave of the
batch has the same (ctx.uniform_mode: the dispatch's initial MODE until some wave writes it), so a FloatMode
per (MODE, type) is made once and its tests cost nothing; otherwise one is made per call, per wave ([n, 1]).
Float exceptions are results: the engine switches numpy's error state off for a whole dispatch.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem import fpexact as fx

F16, F32, F64 = np.float16, np.float32, np.float64
DT = {"f16": F16, "f32": F32, "f64": F64}
IEEE_BIT = 9
ROUND_SHIFT = {"f32": 0, "f16": 2, "f64": 2}  # MODE.FP_ROUND: f32 in bits 1:0, f16/f64 in 3:2
DENORM_SHIFT = {"f32": 4, "f16": 6, "f64": 6}  # MODE.FP_DENORM: bit 0 keeps input denormals, bit 1 results


class FloatMode:
    """MODE for one float type over the waves of a batch: `native` every wave rounds to nearest even, `rm` the
    round mode, `din` / `dout` the denorm mode when some wave flushes inputs / results (else None: nothing to
    flush), `ieee` MODE.IEEE (one bool when the waves agree, else [n, 1])."""

    __slots__ = ("t", "dt", "native", "rm", "din", "dout", "ieee")

    def __init__(self, mode, t: str):
        m = np.asarray(mode).astype(np.int64).reshape(-1, 1)
        self.t, self.dt = t, DT[t]
        self.rm = (m >> ROUND_SHIFT[t]) & 3
        self.native = bool((self.rm == 0).all())
        dm = (m >> DENORM_SHIFT[t]) & 3
        self.din = None if (dm & 1).all() else dm
        self.dout = None if (dm & 2).all() else dm
        ieee = ((m >> IEEE_BIT) & 1).astype(bool)
        self.ieee = bool(ieee.all()) if ieee.all() or not ieee.any() else ieee


_UNIFORM: dict[tuple[int, str], FloatMode] = {}


def fmode(c, t: str) -> FloatMode:
    """The FloatMode of type t for the batch an op context (vector.valu.OpCtx) runs."""
    u = c.uniform_mode
    if u is None:
        return FloatMode(c.mode, t)
    fm = _UNIFORM.get((u, t))
    if fm is None:
        fm = _UNIFORM[(u, t)] = FloatMode(u, t)
    return fm


_FLUSH_ALWAYS = np.zeros((1, 1), np.int64)  # a denorm mode that flushes


def flush(x):
    return fx.flush_in(x, _FLUSH_ALWAYS)


# ---------------------------------------------------------------------------------------------- arithmetic


def add(m: FloatMode, a, b):
    if m.native:
        r = a + b
    else:
        r = fx.add64(a, b, m.rm) if m.t == "f64" else fx.add_small(a, b, m.dt, m.rm)
    return fx.first_nan(r, a, b)


def sub(m: FloatMode, a, b):
    """a - b is a + (-b) (IEEE), but a NaN b alone gives b quieted with its own sign: subtraction does not
    negate a NaN (as LLVM's constant folder evaluates fsub, so folded and run-time results agree)."""
    return fx.first_nan(a - b if m.native else add(m, a, -b), a, b)


def mul(m: FloatMode, a, b):
    if m.native:
        r = a * b
    else:
        r = fx.mul64(a, b, m.rm) if m.t == "f64" else fx.mul_small(a, b, m.dt, m.rm)
    return fx.first_nan(r, a, b)


def fma(m: FloatMode, a, b, c):
    if m.t == "f64":
        r = fx.fma64(a, b, c, m.rm)  # (numpy has no fused multiply-add of its own)
    elif m.native:
        r = fx.fma_nearest(a, b, c, m.dt)  # exact: lanes at risk of double rounding are repaired
    else:
        r = fx.fma_small(a, b, c, m.dt, m.rm)
    return fx.first_nan(r, a, b, c)


# ---------------------------------------------------------------------------------------------- min/max


def _less(a, b):
    """a < b with -0 < +0 (LT_NEG_ZERO)."""
    return (a < b) | ((a == 0) & (b == 0) & np.signbit(a) & ~np.signbit(b))


def _pick(ieee, a, b, a_wins):
    """The min/max selection with the reference's NaN rules; a_wins: a is the strict winner."""
    a, b = np.asarray(a), np.asarray(b)
    na, nb = np.isnan(a), np.isnan(b)
    if not (na.any() or nb.any()):  # no NaN operand: both rule sets pick the winner
        return np.where(a_wins, a, b).astype(a.dtype)
    sa, sb = fx.is_snan(a), fx.is_snan(b)
    ieee_r = np.select([sa, sb, nb, na], [fx.quiet_nan(a), fx.quiet_nan(b), a, b], np.where(a_wins, a, b))
    legacy_r = np.select([nb, na], [a, b], np.where(a_wins, a, b))
    return np.where(ieee, ieee_r, legacy_r).astype(a.dtype)


def fmin(m: FloatMode, a, b):
    return _pick(m.ieee, a, b, _less(a, b))


def fmax(m: FloatMode, a, b):
    return _pick(m.ieee, a, b, _less(b, a))


def _pick_num(a, b, a_wins):
    """minimumNumber / maximumNumber's selection (IEEE 754-2019): a NaN operand gives the other, two NaNs a
    quieted; a_wins: a is the strict winner."""
    a, b = np.asarray(a), np.asarray(b)
    na, nb = np.isnan(a), np.isnan(b)
    r = np.where(a_wins, a, b)
    if na.any() or nb.any():
        r = np.select([na & nb, na, nb], [fx.quiet_nan(a), b, a], r)
    return np.asarray(r, a.dtype)


def fmin_num(a, b):
    return _pick_num(a, b, _less(a, b))


def fmax_num(a, b):
    return _pick_num(a, b, _less(b, a))


# ---------------------------------------------------------------------------------------------- conversions

_INT = {"i32": (np.int32, -2.0 ** 31, 2.0 ** 31 - 1), "u32": (np.uint32, 0.0, 2.0 ** 32 - 1),
        "i16": (np.int16, -2.0 ** 15, 2.0 ** 15 - 1), "u16": (np.uint16, 0.0, 2.0 ** 16 - 1)}


def to_int(x, it: str):
    """Float -> integer with truncation, saturation, NaN -> 0 (f32_to_i32 and friends)."""
    dt, lo, hi = _INT[it]
    v = np.clip(np.trunc(np.nan_to_num(np.asarray(x, F64), nan=0.0, posinf=hi, neginf=lo)), lo, hi)
    return v.astype(np.int64).astype(dt)


def to_float(m: FloatMode, x):
    """An integer or float (exact in float64) rounded once to m's type in its round mode."""
    v = np.asarray(x).astype(F64)
    return v.astype(m.dt) if m.native else fx.round_pair(v, np.zeros(v.shape), m.dt, m.rm)


# rcp, rsq, sqrt: float64 arithmetic rounded to nearest once (within the documented accuracy: f32 1 ULP,
# f16 0.51 ULP, f64 2**29 ULP); a NaN operand comes out of float64 and back quieted, as `+` gives it.
def rcp(x):
    return (1.0 / np.asarray(x).astype(F64)).astype(x.dtype)


def rsq(x):
    return (1.0 / np.sqrt(np.asarray(x).astype(F64))).astype(x.dtype)


def sqrt(x):
    return np.sqrt(np.asarray(x).astype(F64)).astype(x.dtype)
