"""VALU floating-point arithmetic: add/sub/mul, fma (incl. the fmac/fmamk/fmaak and DX9 forms), mullit, ldexp,
and the division helpers (div_scale, div_fmas, div_fixup), from the RDNA3 ISA reference pseudo-code.

Results are rounded once in MODE's round mode for the result type, with denormals flushed on input and output
as MODE's denorm mode says, and a NaN result is the first NaN operand quieted (sem.expr). Everything but
v_ldexp_f64 and v_div_fmas_f64 is defined in the expression form, which both tiers are generated from; those two are
written for numpy only (the escape hatches, each with its reason below). Min/max/med3 and the cube-map ops:
vector.minmax.
"""

from __future__ import annotations

import math

import numpy as np

from simgpu.shader.sem import expr as ex
from simgpu.shader.sem import fpexact as fx
from simgpu.shader.sem.expr import (
    EXP_FIELD,
    FLOAT_LAYOUT,
    E,
    bitcast,
    cast,
    eq,
    flush_in,
    flush_out,
    fma,
    isnan,
    lift,
    ne,
    select,
)
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


def quieted(x: E) -> E:
    """A NaN with its quiet bit set (cvtToQuietNAN)."""
    ut, man, _ = FLOAT_LAYOUT[x.t]
    return bitcast(bitcast(x, ut) | (1 << (man - 1)), x.t)


# ---------------------------------------------------------------------------------------------- ldexp
# x * 2**n rounded once, n per lane. For f16/f32 it is defined once: x and 2**n are exact in f64 and so is their
# product while n stays within +-600 (an f32 scales to 2**-749 .. 2**727, normal f64s), and past +-600 every result
# rounds as at +-600 (0 or the smallest denormal, inf or the largest finite, by round mode); the product is then
# rounded once to the type in MODE's round mode. A NaN is returned quieted, as the conversion does. f64 stays an
# escape hatch: its scaled result need not be an f64 (2**n itself may not be), so one rounding needs fpexact.


def _ldexp_narrow(x: E, n: E) -> E:
    x = flush_in(x)
    k = cast(ex.minimum(ex.maximum(n, -600), 600), "i32")
    power = bitcast(cast(k + 1023, "u64") << 52, "f64")
    return select(isnan(x), quieted(x), flush_out(cast(ex.mul_rn(ex.cvt_rn(x, "f64"), power), x.t)))


define("v_ldexp_f32", "f32", ("f32", "i32"), _ldexp_narrow)
define("v_ldexp_f16", "f16", ("f16", "i16"), _ldexp_narrow)


def _ldexp(t, ctx, x, n):
    rm, dm = modes(ctx, t)
    x = fx.flush_in(x, dm)
    return fx.flush_out(fx.ldexp_round(x, n.astype(np.int64), DT[t], rm), dm)


vop("v_ldexp_f64", "f64", ("f64", "i32"), lambda c, x, n: _ldexp("f64", c, x, n))


# ---------------------------------------------------------------------------------------------- division helpers
# LLVM's fdiv expansion: v_div_scale both operands (VCC: the numerator was scaled), v_rcp, Newton-Raphson FMAs,
# v_div_fmas (the last FMA, scaled back when VCC is set), v_div_fixup (the special cases). Defined once:
# exponent tests on the operands' bits, the quotient tests in f64 (div_rn), and div_fmas's scaled FMA exact
# through f64 (below), so both tiers give the same bits and numpy's a / b is the macro's result.

_SCALE = {"f32": (96, 64, 23), "f64": (768, 128, 53)}  # exponent gap, scale power, tiny-numerator exponent
with np.errstate(invalid="ignore"):  # the NaN the host makes from numbers (inf - inf): fpexact's default NaN
    _HOST_NAN = {t: int((np.array(np.inf, DT[t]) - DT[t](np.inf)).view(f"u{DT[t]().itemsize}")) for t in DT}


def exponent_field(x: E) -> E:
    """The biased exponent field of x as an i32 (the pseudo-code's exponent())."""
    ut, man, _ = FLOAT_LAYOUT[x.t]
    return cast((bitcast(x, ut) >> man) & (EXP_FIELD[x.t] >> man), "i32")


def is_denormal(x: E) -> E:
    """Nonzero with a zero exponent field."""
    ut, man, _ = FLOAT_LAYOUT[x.t]
    b = bitcast(x, ut)
    return eq(b & EXP_FIELD[x.t], 0) & ne(b & ((1 << man) - 1), 0)


def sign_bit(x: E) -> E:
    ut = FLOAT_LAYOUT[x.t][0]
    return ne(bitcast(x, ut) >> (ex.bits(ut) - 1), 0)


def host_nan(t: str) -> E:
    return bitcast(lift(_HOST_NAN[t], FLOAT_LAYOUT[t][0]), t)


def _scaled(x: E, power: int) -> E:
    """x * 2**power rounded once to nearest even (np.ldexp's result): exact in f64 for an f32 x."""
    return ex.mul_rn(x, 2.0 ** power) if x.t == "f64" else ex.cvt_rn(ex.mul_rn(ex.cvt_rn(x, "f64"), 2.0 ** power), x.t)


def _div_scale(s0: E, s1: E, s2: E):
    """V_DIV_SCALE: pre-scale a division's operand so Newton-Raphson steps never see denormals.

    The reference's pseudo-code (RDNA3 ISA 16.12), evaluated on MODE's view of the operands (denormal
    inputs read as zero when MODE flushes them: a denormal denominator then gives NaN, as verified on
    hardware), with these departures, each verified on hardware or needed for LLVM's fdiv expansion to
    be correct (docs/shader.md, "V_DIV_SCALE"):
    - a zero numerator or denominator (NaN) sets VCC (hardware);
    - "1/S1 is denormal" is tested in the operand's own type (the pseudo-code converts f32 to f64, where
      it never is): 1 / 2**127 sets VCC and leaves the numerator unscaled (hardware); when the quotient
      is denormal too, the denominator is scaled *down* by 2**64 (2**128): the pseudo-code's ldexp(S0, 64)
      would make a denominator near 2**127 infinite and LLVM's 1.0f / 2**127 zero.
    The first case that holds decides (the pseudo-code's if-else chain)."""
    t = s0.t
    gap, k, tiny = _SCALE[t]
    s0, s1, s2 = flush_in(s0), flush_in(s1), flush_in(s2)
    e1, e2 = exponent_field(s1), exponent_field(s2)
    w1, w2 = ex.cvt_rn(s1, "f64"), ex.cvt_rn(s2, "f64")
    rcp_denorm = is_denormal(ex.cvt_rn(ex.rcp(w1), t))
    q_denorm = is_denormal(ex.cvt_rn(ex.div_rn(w2, w1), t))
    up, down = _scaled(s0, k), _scaled(s0, -k)
    cases = [(eq(s2, 0) | eq(s1, 0), lift(math.nan, t), True),
             (e2 - e1 >= gap, select(eq(s0, s1), up, s0), True),
             (is_denormal(s1), up, False),
             (rcp_denorm & q_denorm, select(eq(s0, s1), down, s0), True),
             (rcp_denorm, down, False),
             (q_denorm, select(eq(s0, s2), up, s0), True),
             (e2 <= tiny, up, False)]
    out, vcc = s0, lift(False, "bool")
    for cond, value, flag in reversed(cases):
        out, vcc = select(cond, value, out), select(cond, flag, vcc)
    return out, vcc


def _fma_round_to_odd(a: E, b: E, c: E) -> E:
    """a * b + c for f32 operands as an f64 rounded to odd (the nearest f64 toward zero with its last bit set
    when inexact): rounding that to f32 in any mode (or after scaling it by a power of two) is the once-rounded
    result, since f64 has more than 24 + 2 bits. a * b is exact in f64; TwoSum gives the sum's rounding error
    exactly; an inexact sum with an even last bit moves one unit toward the error. Infinities and NaNs pass
    through as the f64 sum gives them. An exact zero sum takes its sign from MODE's f32 round mode (-0 toward
    -inf unless both terms are +0), which the f32 sum of two zeros of the terms' signs gives."""
    p, cc = ex.mul_rn(ex.cvt_rn(a, "f64"), ex.cvt_rn(b, "f64")), ex.cvt_rn(c, "f64")
    s = ex.add_rn(p, cc)
    zero = lambda x: select(sign_bit(x), lift(-0.0, "f32"), lift(0.0, "f32"))  # noqa: E731
    s = select(eq(s, 0), ex.cvt_rn(zero(p) + zero(cc), "f64"), s)
    v = ex.sub_rn(s, p)
    err = ex.add_rn(ex.sub_rn(p, ex.sub_rn(s, v)), ex.sub_rn(cc, v))
    sb = bitcast(s, "u64")
    inexact = (ex.fabs(s) < math.inf) & ne(err, 0) & eq(sb & 1, 0)
    toward = select(eq(sign_bit(err), sign_bit(s)), sb + 1, sb - 1)
    return bitcast(select(inexact, toward, sb), "f64")


def _div_fmas_f32(a: E, b: E, c: E, vcc: E) -> E:
    """V_DIV_FMAS: fma, post-scaled when VCC is set, rounded once as MODE says. The reference's "2**32 * fma" is
    not what the division macro needs: div_scale scaled the denominator up (huge quotient, S2 large) or the
    numerator up (denormal quotient), so the quotient is scaled back by 2**64 or 2**-64, chosen by S2's exponent."""
    k = _SCALE["f32"][1]
    scale = select(vcc, select(exponent_field(c) > FLOAT_LAYOUT["f32"][2], lift(2.0 ** k, "f64"), 2.0 ** -k), 1.0)
    r = flush_out(cast(ex.mul_rn(_fma_round_to_odd(a, b, c), scale), "f32"))
    first = host_nan("f32")
    for x in (c, b, a):
        first = select(isnan(x), quieted(x), first)
    return select(isnan(r), first, r)


def _div_fixup(q: E, den: E, num: E) -> E:
    """V_DIV_FIXUP: the special cases of num / den (NaN, 0/0, inf/inf, x/0, x/inf, underflow, overflow).

    Denormal inputs read as zero when MODE flushes them, as for div_scale: LLVM's fdiv expansion in a
    flushing MODE then gives x / denormal = inf and denormal / x = 0 (tests/simgpu/shader/test_sem_regressions).
    The first case that holds decides."""
    t = q.t
    q, den, num = flush_in(q), flush_in(den), flush_in(num)
    neg = sign_bit(den) ^ sign_bit(num)
    inf, zero = select(neg, lift(-math.inf, t), math.inf), select(neg, lift(-0.0, t), 0.0)
    default_nan = host_nan(t)
    den_inf, num_inf = eq(ex.fabs(den), math.inf), eq(ex.fabs(num), math.inf)
    cases = [(isnan(num), quieted(num)), (isnan(den), quieted(den)), (eq(den, 0) & eq(num, 0), default_nan),
             (den_inf & num_inf, default_nan), (eq(den, 0) | num_inf, inf), (den_inf | eq(num, 0), zero)]
    if t != "f16":
        limit = 150 if t == "f32" else 1075
        cases.append((exponent_field(num) - exponent_field(den) < -limit, zero))  # UNDERFLOW: rounds to zero
        # OVERFLOW: the reference tests `exponent(S1) == 255` (2047 for f64) here, which the NaN and inf
        # cases above already took; the hardware tests the quotient S0 (verified: a NaN S0 with finite S1,
        # S2 gives +-inf, as when the Newton-Raphson steps overflowed).
        cases.append((eq(exponent_field(q), EXP_FIELD[t] >> FLOAT_LAYOUT[t][1]), inf))
    # |q| with the quotient's sign (a NaN q, f16 only here, comes out quieted and positive)
    out = select(isnan(q), quieted(ex.fabs(q)), select(neg, -ex.fabs(q), ex.fabs(q)))
    for cond, value in reversed(cases):
        out = select(cond, value, out)
    return out


# div_fmas_f64 stays an escape hatch: its FMA scaled per lane before its one rounding needs more than f64's
# 53 bits (the f32 form above rounds to odd in f64); written once for numpy, the JIT leaves it to the interpreter.
def _div_fmas_f64(ctx, a, b, c, vcc):
    k = _SCALE["f64"][1]
    post = np.where(vcc, np.where(exponent(c, "f64") > 1023, k, -k), 0)
    rm, dm = modes(ctx, "f64")
    return fx.first_nan(fx.flush_out(fx.fma64(a, b, c, rm, post), dm), a, b, c)


for _t in ("f32", "f64"):
    define(f"v_div_scale_{_t}", _t, (_t, _t, _t), _div_scale, carry_out=True)
define("v_div_fmas_f32", "f32", ("f32", "f32", "f32"), _div_fmas_f32, mask_in=True, vcc_in=True)
vop("v_div_fmas_f64", "f64", ("f64", "f64", "f64"), _div_fmas_f64, mask_in=True, vcc_in=True)
for _t in ("f16", "f32", "f64"):
    define(f"v_div_fixup_{_t}", _t, (_t, _t, _t), _div_fixup)
