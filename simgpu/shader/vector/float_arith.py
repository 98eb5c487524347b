"""VALU floating-point arithmetic: add/sub/mul, fma (incl. the fmac/fmamk/fmaak and DX9 forms), ldexp,
and the division helpers (div_scale, div_fmas, div_fixup), from the RDNA3 ISA reference pseudo-code.

Results are rounded once in MODE's round mode for the result type (fpexact), with denormals flushed
on input and output as MODE's denorm mode says. Min/max/med3 and the cube-map ops: vector.minmax.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem import fpexact as fx
from simgpu.shader.vector.valu import vop

F16, F32, F64 = np.float16, np.float32, np.float64
DT = {"f16": F16, "f32": F32, "f64": F64}
_EXP_BITS = {"f16": (10, 0x1F), "f32": (23, 0xFF), "f64": (52, 0x7FF)}


def modes(ctx, t: str):
    """(round mode, denorm mode), each [n, 1], that MODE sets for type t."""
    return fx.round_mode(ctx.mode, t), fx.denorm_mode(ctx.mode, t)


def exponent(x: np.ndarray, t: str) -> np.ndarray:
    """The biased exponent field of x (the pseudo-code's exponent())."""
    shift, mask = _EXP_BITS[t]
    bits = x.view({"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}[t]).astype(np.int64)
    return (bits >> shift) & mask


# ---------------------------------------------------------------------------------------------- add/sub/mul/fma


def native_mode(ctx, t: str) -> bool:
    """Whether every wave rounds type t to nearest even (the default): then numpy's IEEE arithmetic,
    with MODE's denormal flushing applied around it, gives the hardware's result directly."""
    u = ctx.uniform_mode
    if u is not None:
        return (u >> (0 if t == "f32" else 2)) & 3 == 0
    m = np.asarray(ctx.mode)
    return bool((((m >> (0 if t == "f32" else 2)) & 3) == 0).all())


def _flushing(ctx, t: str):
    """The denorm mode [n, 1] when some wave flushes denormals of type t, else None (nothing to do)."""
    u = ctx.uniform_mode
    if u is not None and (u >> (4 if t == "f32" else 6)) & 3 == 3:
        return None
    dm = fx.denorm_mode(ctx.mode, t)
    return None if (dm == 3).all() else dm


def _native(t, ctx, fn, slow, *args):
    """fn(*args) computed natively, denormals flushed as MODE says; the exact path when a lane produced
    a NaN (whose payload rules are the exact path's)."""
    dm = _flushing(ctx, t)
    if dm is not None:
        args = tuple(fx.flush_in(a, dm) for a in args)
    with np.errstate(all="ignore"):
        r = fn(*args)
    if np.isnan(r).any():
        return slow()
    return r if dm is None else fx.flush_out(r, dm)


# Exact (any MODE) add and mul: (f64 routine, f16/f32 routine) in fpexact.
_EXACT = {np.add: (fx.add64, fx.add_small), np.multiply: (fx.mul64, fx.mul_small)}


def _binary(op, t, ctx, a, b):
    """a (op) b for op np.add or np.multiply: numpy's own arithmetic in the default MODE, else exact."""
    if native_mode(ctx, t):
        return _native(t, ctx, op, lambda: _binary_exact(op, t, ctx, a, b), a, b)
    return _binary_exact(op, t, ctx, a, b)


def _binary_exact(op, t, ctx, a, b):
    rm, dm = modes(ctx, t)
    a, b = fx.flush_in(a, dm), fx.flush_in(b, dm)
    wide, small = _EXACT[op]
    r = wide(a, b, rm) if t == "f64" else small(a, b, DT[t], rm)
    return fx.first_nan(fx.flush_out(r, dm), a, b)


def _add(t, ctx, a, b):
    return _binary(np.add, t, ctx, a, b)


def _mul(t, ctx, a, b):
    return _binary(np.multiply, t, ctx, a, b)


def _fma(t, ctx, a, b, c, post_scale=0, flush_inputs=True):
    if t != "f64" and isinstance(post_scale, int) and post_scale == 0 and native_mode(ctx, t):
        dm = _flushing(ctx, t)
        x, y, z = (a, b, c) if dm is None or not flush_inputs else (fx.flush_in(v, dm) for v in (a, b, c))
        with np.errstate(all="ignore"):
            r = fx.fma_nearest(x, y, z, DT[t])  # exact: lanes at risk of double rounding are repaired
        return fx.first_nan(r if dm is None else fx.flush_out(r, dm), x, y, z)
    return _fma_exact(t, ctx, a, b, c, post_scale, flush_inputs)


def _fma_exact(t, ctx, a, b, c, post_scale=0, flush_inputs=True):
    rm, dm = modes(ctx, t)
    if flush_inputs:
        a, b, c = fx.flush_in(a, dm), fx.flush_in(b, dm), fx.flush_in(c, dm)
    r = fx.fma64(a, b, c, rm, post_scale) if t == "f64" else fx.fma_small(a, b, c, DT[t], rm, post_scale)
    return fx.first_nan(fx.flush_out(r, dm), a, b, c)


def _sub(t, ctx, a, b):
    """a - b, computed as a + (-b); a NaN result from b alone is b quieted with its own sign: subtraction
    does not negate a NaN (as LLVM's constant folder evaluates fsub, so folded and run-time results agree;
    docs/shader.md, "NaN results")."""
    return fx.first_nan(_add(t, ctx, a, -b), a, b)


for _t in ("f16", "f32", "f64"):
    vop(f"v_add_{_t}", _t, (_t, _t), lambda c, a, b, t=_t: _add(t, c, a, b))
    vop(f"v_mul_{_t}", _t, (_t, _t), lambda c, a, b, t=_t: _mul(t, c, a, b))
    vop(f"v_fma_{_t}", _t, (_t, _t, _t), lambda c, a, b, d, t=_t: _fma(t, c, a, b, d))
for _t in ("f16", "f32"):
    vop(f"v_sub_{_t}", _t, (_t, _t), lambda c, a, b, t=_t: _sub(t, c, a, b))
    vop(f"v_subrev_{_t}", _t, (_t, _t), lambda c, a, b, t=_t: _sub(t, c, b, a))
    vop(f"v_fmac_{_t}", _t, (_t, _t), lambda c, a, b, d, t=_t: _fma(t, c, a, b, d), acc=True)
    # fmamk: D = S0 * K + S1 with operands listed (src0, K, vsrc1); fmaak: D = S0 * S1 + K
    vop(f"v_fmamk_{_t}", _t, (_t, _t, _t), lambda c, a, k, b, t=_t: _fma(t, c, a, k, b))
    vop(f"v_fmaak_{_t}", _t, (_t, _t, _t), lambda c, a, b, k, t=_t: _fma(t, c, a, b, k))


# ---------------------------------------------------------------------------------------------- DX9 and lighting


def _dx9_zero(ctx, a, b, c):
    """fma where 0 * anything (inf and NaN included) is 0, so the result is the addend."""
    _, dm = modes(ctx, "f32")
    a, b = fx.flush_in(a, dm), fx.flush_in(b, dm)
    zero = (a == 0) | (b == 0)
    r = _fma("f32", ctx, np.where(zero, F32(0), a), np.where(zero, F32(0), b), c)
    return np.where(zero, fx.flush_in(c, dm), r)


def _mul_dx9_zero(ctx, a, b):
    _, dm = modes(ctx, "f32")
    zero = (fx.flush_in(a, dm) == 0) | (fx.flush_in(b, dm) == 0)
    return np.where(zero, F32(0), _mul("f32", ctx, a, b))


def _mullit(ctx, a, b, c):
    fmax = np.finfo(F32).max
    special = (b == -fmax) | (b == -np.inf) | np.isnan(b) | (c <= 0) | np.isnan(c)
    return np.where(special, -fmax, _mul("f32", ctx, a, b)).astype(F32)


vop("v_fma_dx9_zero_f32", "f32", ("f32", "f32", "f32"), _dx9_zero)
vop("v_fmac_dx9_zero_f32", "f32", ("f32", "f32"), _dx9_zero, acc=True)
vop("v_mul_dx9_zero_f32", "f32", ("f32", "f32"), _mul_dx9_zero)
vop("v_mullit_f32", "f32", ("f32", "f32", "f32"), _mullit)



# ---------------------------------------------------------------------------------------------- ldexp


def _ldexp(t, ctx, x, n):
    rm, dm = modes(ctx, t)
    x = fx.flush_in(x, dm)
    return fx.flush_out(fx.ldexp_round(x, n.astype(np.int64), DT[t], rm), dm)


vop("v_ldexp_f32", "f32", ("f32", "i32"), lambda c, x, n: _ldexp("f32", c, x, n))
vop("v_ldexp_f64", "f64", ("f64", "i32"), lambda c, x, n: _ldexp("f64", c, x, n))
vop("v_ldexp_f16", "f16", ("f16", "i16"), lambda c, x, n: _ldexp("f16", c, x, n))


# ---------------------------------------------------------------------------------------------- division helpers

_SCALE = {"f32": (96, 64, 23), "f64": (768, 128, 53)}  # exponent gap, scale power, tiny-numerator exponent


def _div_scale(t, ctx, s0, s1, s2):
    """V_DIV_SCALE: pre-scale a division's operand so Newton-Raphson steps never see denormals.

    The reference's pseudo-code (RDNA3 ISA 16.12), evaluated on MODE's view of the operands (denormal
    inputs read as zero when MODE flushes them: a denormal denominator then gives NaN, as verified on
    hardware), with these departures, each verified on hardware or needed for LLVM's fdiv expansion to
    be correct (docs/shader.md, "V_DIV_SCALE"):
    - a zero numerator or denominator (NaN) sets VCC (hardware);
    - "1/S1 is denormal" is tested in the operand's own type (the pseudo-code converts f32 to f64, where
      it never is): 1 / 2**127 sets VCC and leaves the numerator unscaled (hardware); when the quotient
      is denormal too, the denominator is scaled *down* by 2**64 (2**128): the pseudo-code's ldexp(S0, 64)
      would make a denominator near 2**127 infinite and LLVM's 1.0f / 2**127 zero."""
    dt = DT[t]
    gap, k, tiny = _SCALE[t]
    dm = fx.denorm_mode(ctx.mode, t)
    s0, s1, s2 = fx.flush_in(s0, dm), fx.flush_in(s1, dm), fx.flush_in(s2, dm)
    e1, e2 = exponent(s1, t), exponent(s2, t)
    with np.errstate(all="ignore"):
        rcp_denorm = fx.is_denormal((F64(1.0) / s1.astype(F64)).astype(dt))
        q_denorm = fx.is_denormal((s2.astype(F64) / s1.astype(F64)).astype(dt))
    up, down = np.ldexp(s0, k).astype(dt), np.ldexp(s0, -k).astype(dt)
    zero = (s2 == 0) | (s1 == 0)
    conds = [zero, e2 - e1 >= gap, fx.is_denormal(s1), rcp_denorm & q_denorm, rcp_denorm, q_denorm, e2 <= tiny]
    vals = [np.full(s0.shape, np.nan, dt), np.where(s0 == s1, up, s0), up, np.where(s0 == s1, down, s0), down,
            np.where(s0 == s2, up, s0), up]
    vcc = np.select(conds, [True, True, False, True, False, True, False], False)
    return np.select(conds, vals, s0).astype(dt), vcc


def _div_fmas(t, ctx, a, b, c, vcc):
    """V_DIV_FMAS: fma, post-scaled when VCC is set. The reference's "2**32 * fma" (2**64 for f64) is not
    what the division macro needs: div_scale scaled the denominator up (huge quotient, S2 large) or the
    numerator up (denormal quotient), so the quotient is scaled back by 2**±64 (f32) / 2**±128 (f64),
    chosen by S2's exponent, and rounded once."""
    k = _SCALE[t][1]
    bias = 127 if t == "f32" else 1023
    post = np.where(vcc, np.where(exponent(c, t) > bias, k, -k), 0)
    return _fma(t, ctx, a, b, c, post, flush_inputs=False)


def _div_fixup(t, ctx, q, den, num):
    """V_DIV_FIXUP: the special cases of num / den (NaN, 0/0, inf/inf, x/0, x/inf, underflow, overflow).

    Denormal inputs read as zero when MODE flushes them, as for div_scale: LLVM's fdiv expansion in a
    flushing MODE then gives x / denormal = inf and denormal / x = 0 (tests/simgpu/shader/test_sem_regressions)."""
    dt = DT[t]
    dm = fx.denorm_mode(ctx.mode, t)
    q, den, num = fx.flush_in(q, dm), fx.flush_in(den, dm), fx.flush_in(num, dm)
    neg = np.signbit(den) ^ np.signbit(num)
    sgn = np.where(neg, dt(-1), dt(1))
    ainf = np.abs(den) == np.inf
    nan_bits = {F16: 0xFE00, F32: 0xFFC00000, F64: 0xFFF8000000000000}[dt]
    default_nan = np.array(nan_bits, {F16: np.uint16, F32: np.uint32, F64: np.uint64}[dt]).view(dt)
    conds = [np.isnan(num), np.isnan(den), (den == 0) & (num == 0), ainf & (np.abs(num) == np.inf),
             (den == 0) | (np.abs(num) == np.inf), ainf | (num == 0)]
    vals = [fx.quiet_nan(num), fx.quiet_nan(den), default_nan, default_nan, sgn * dt(np.inf), sgn * dt(0)]
    if t != "f16":
        limit = 150 if t == "f32" else 1075
        conds.append(exponent(num, t) - exponent(den, t) < -limit)
        vals.append(sgn * dt(0))  # UNDERFLOW: the quotient rounds to zero
        # OVERFLOW: the reference tests `exponent(S1) == 255` (2047 for f64) here, which the NaN and inf
        # cases above already took; the hardware tests the quotient S0 (verified: a NaN S0 with finite S1,
        # S2 gives +-inf, as when the Newton-Raphson steps overflowed).
        conds.append(exponent(q, t) == _EXP_BITS[t][1])
        vals.append(sgn * dt(np.inf))
    return np.select(conds, vals, sgn * np.abs(q)).astype(dt)


for _t in ("f32", "f64"):
    vop(f"v_div_scale_{_t}", _t, (_t, _t, _t), lambda c, a, b, d, t=_t: _div_scale(t, c, a, b, d), carry_out=True)
    vop(f"v_div_fmas_{_t}", _t, (_t, _t, _t), lambda c, a, b, d, m, t=_t: _div_fmas(t, c, a, b, d, m),
        mask_in=True, vcc_in=True)
for _t in ("f16", "f32", "f64"):
    vop(f"v_div_fixup_{_t}", _t, (_t, _t, _t), lambda c, a, b, d, t=_t: _div_fixup(t, c, a, b, d))
