"""VALU floating-point arithmetic: add/sub/mul, fma (incl. the fmac/fmamk/fmaak and DX9 forms), mullit, ldexp,
and the division helpers (div_scale, div_fmas, div_fixup), from the RDNA3 ISA reference pseudo-code.

Results are rounded once in MODE's round mode for the result type, with denormals flushed on input and output
as MODE's denorm mode says, and a NaN result is the first NaN operand quieted (sem.expr). Everything up to
mullit is defined in the expression form, which both tiers are generated from; ldexp and the division helpers
are written for numpy only (the escape hatches, each with its reason below). Min/max/med3 and the cube-map
ops: vector.minmax.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem import fpexact as fx
from simgpu.shader.sem.expr import eq, flush_in, flush_out, fma, isnan, select
from simgpu.shader.vector.valu import define, vop

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


# ---------------------------------------------------------------------------------------------- defined once


def arith(fn):
    """The frame of MODE's arithmetic: the sources flushed as MODE's input denorm mode says, the result as its
    output denorm mode says."""
    return lambda *xs: flush_out(fn(*(flush_in(x) for x in xs)))


for _t in ("f16", "f32", "f64"):
    define(f"v_add_{_t}", _t, (_t, _t), arith(lambda a, b: a + b))
    define(f"v_mul_{_t}", _t, (_t, _t), arith(lambda a, b: a * b))
    define(f"v_fma_{_t}", _t, (_t, _t, _t), arith(fma))
for _t in ("f16", "f32"):
    define(f"v_sub_{_t}", _t, (_t, _t), arith(lambda a, b: a - b))
    define(f"v_subrev_{_t}", _t, (_t, _t), arith(lambda a, b: b - a))
    define(f"v_fmac_{_t}", _t, (_t, _t), arith(fma), acc=True)
    # fmamk: D = S0 * K + S1 with operands listed (src0, K, vsrc1); fmaak: D = S0 * S1 + K
    define(f"v_fmamk_{_t}", _t, (_t, _t, _t), arith(lambda a, k, b: fma(a, k, b)))
    define(f"v_fmaak_{_t}", _t, (_t, _t, _t), arith(fma))


def _dx9_zero(a, b, c):
    """fma where 0 * anything (inf and NaN included) is 0, so the result is the (flushed) addend."""
    a, b, c = flush_in(a), flush_in(b), flush_in(c)
    return select(eq(a, 0) | eq(b, 0), c, flush_out(fma(a, b, c)))


def _mul_dx9_zero(a, b):
    a, b = flush_in(a), flush_in(b)
    return select(eq(a, 0) | eq(b, 0), 0, flush_out(a * b))


def _mullit(a, b, c):
    """-FLT_MAX when S1 is -FLT_MAX, -inf or NaN, or S2 is not above 0 (compared unflushed), else S0 * S1."""
    fmax = float(np.finfo(F32).max)
    special = eq(b, -fmax) | eq(b, -np.inf) | isnan(b) | ~(c > 0)
    return select(special, -fmax, arith(lambda x, y: x * y)(a, b))


define("v_fma_dx9_zero_f32", "f32", ("f32", "f32", "f32"), _dx9_zero)
define("v_fmac_dx9_zero_f32", "f32", ("f32", "f32"), _dx9_zero, acc=True)
define("v_mul_dx9_zero_f32", "f32", ("f32", "f32"), _mul_dx9_zero)
define("v_mullit_f32", "f32", ("f32", "f32", "f32"), _mullit)


# ---------------------------------------------------------------------------------------------- ldexp
# Escape hatch: the result is x * 2**n rounded once with n per lane, which the form cannot scale by (its
# arithmetic rounds each node; an exact power of two may not be representable in the type).


def _ldexp(t, ctx, x, n):
    rm, dm = modes(ctx, t)
    x = fx.flush_in(x, dm)
    return fx.flush_out(fx.ldexp_round(x, n.astype(np.int64), DT[t], rm), dm)


vop("v_ldexp_f32", "f32", ("f32", "i32"), lambda c, x, n: _ldexp("f32", c, x, n))
vop("v_ldexp_f64", "f64", ("f64", "i32"), lambda c, x, n: _ldexp("f64", c, x, n))
vop("v_ldexp_f16", "f16", ("f16", "i16"), lambda c, x, n: _ldexp("f16", c, x, n))


# ---------------------------------------------------------------------------------------------- division helpers
# Escape hatches: div_scale and div_fixup test exponents and quotients in float64 against thresholds in the
# pseudo-code's own terms, and div_fmas scales an exact fma by a per-lane power of two before its one rounding;
# written once for numpy, they run in the interpreter (the JIT leaves them there).

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
    rm, dm = modes(ctx, t)
    r = fx.fma64(a, b, c, rm, post) if t == "f64" else fx.fma_small(a, b, c, DT[t], rm, post)
    return fx.first_nan(fx.flush_out(r, dm), a, b, c)


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
