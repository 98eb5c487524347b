"""Exactly rounded float arithmetic over numpy arrays, for the VALU float semantics.

numpy rounds to nearest-even only, and has no fused multiply-add. The hardware rounds once, in any of
the four MODE round modes, and may flush denormals. Here every result is first computed as an exact
unevaluated pair `hi + lo` of float64 values (error-free transformations: TwoSum, Dekker's product,
scaling by powers of two), then `round_pair` rounds that exact value once to f16/f32/f64 in the
requested mode. Round mode codes are MODE's: 0 nearest-even, 1 +inf, 2 -inf, 3 toward zero.
"""

from __future__ import annotations

import numpy as np

F16, F32, F64 = np.float16, np.float32, np.float64
RNE, RUP, RDN, RTZ = 0, 1, 2, 3
_SPLIT = F64(134217729.0)  # 2**27 + 1: Dekker's splitter for 53-bit significands
_OVERFLOW_TIE = {F32: F64(2.0 ** 128 - 2.0 ** 103), F16: F64(65520.0)}  # MAX + half an ulp


# ---------------------------------------------------------------------------------------------- MODE fields


def round_mode(mode: np.ndarray, t: str) -> np.ndarray:
    """MODE.FP_ROUND for a type, as an [n, 1] array (f32: bits 1:0; f16/f64: bits 3:2)."""
    m = np.asarray(mode).astype(np.int64).reshape(-1, 1)
    return (m >> (0 if t == "f32" else 2)) & 3


def denorm_mode(mode: np.ndarray, t: str) -> np.ndarray:
    """MODE.FP_DENORM for a type, [n, 1]: bit 0 keeps input denormals, bit 1 keeps output denormals."""
    m = np.asarray(mode).astype(np.int64).reshape(-1, 1)
    return (m >> (4 if t == "f32" else 6)) & 3


def is_denormal(x: np.ndarray) -> np.ndarray:
    """Nonzero values below the smallest normal of their own dtype."""
    return (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)


_EXP_MASK = {2: np.uint16(0x7C00), 4: np.uint32(0x7F800000), 8: np.uint64(0x7FF0000000000000)}
_SIGN = {2: np.uint16(1 << 15), 4: np.uint32(1 << 31), 8: np.uint64(1 << 63)}
_BITS = {2: np.dtype("<u2"), 4: np.dtype("<u4"), 8: np.dtype("<u8")}


def _flush(x: np.ndarray, dm: np.ndarray, bit: int) -> np.ndarray:
    """x with denormals replaced by zero of the same sign where bit `bit` of the denorm mode `dm` is clear (bit
    operations: an exponent field of 0 is zero or denormal, and both become the bare sign bit). Most arrays have
    no denormal: they return after one mask and test, before the mode is looked at (a transcendental's
    callback from the JIT tier flushed its input and result through here, three quarters of its time)."""
    x = np.asarray(x)
    size = x.dtype.itemsize
    u = x.view(_BITS[size])
    exponent = u & _EXP_MASK[size]
    if exponent.all():
        return x
    return np.where(((dm & bit) == 0) & (exponent == 0), u & _SIGN[size], u).astype(u.dtype).view(x.dtype)


def flush_in(x: np.ndarray, dm: np.ndarray) -> np.ndarray:
    """Inputs with denormals flushed to signed zero where the denorm mode says so."""
    return _flush(x, dm, 1)


def flush_out(x: np.ndarray, dm: np.ndarray) -> np.ndarray:
    """Results with denormals flushed to signed zero where the denorm mode says so."""
    return _flush(x, dm, 2)


_UINT = {np.dtype(F16): np.uint16, np.dtype(F32): np.uint32, np.dtype(F64): np.uint64}


def _quiet_bit(dt):
    return _UINT[np.dtype(dt)](1 << (np.finfo(dt).nmant - 1))


def is_snan(x: np.ndarray) -> np.ndarray:
    """Signaling NaNs (quiet bit, the top mantissa bit, clear)."""
    return np.isnan(x) & ((x.view(_UINT[x.dtype]) & _quiet_bit(x.dtype)) == 0)


def quiet_nan(x: np.ndarray) -> np.ndarray:
    """x with the quiet bit set on NaNs (cvtToQuietNAN), other values unchanged."""
    q = x.view(_UINT[x.dtype]) | _quiet_bit(x.dtype)
    return np.where(np.isnan(x), q.view(x.dtype), x)


def first_nan(r: np.ndarray, *srcs: np.ndarray) -> np.ndarray:
    """An arithmetic result whose NaNs are the first NaN source operand, quieted (docs/shader.md, "NaN
    results"; LLVM's constant folder does the same), where a source is NaN; a NaN made from non-NaN
    operands (inf - inf) is left as it is. Needed because numpy's own choice is not reliable: a C
    compiler may swap the operands of a commutative multiply."""
    nan = np.isnan(r)
    if not nan.any():
        return r
    dt = r.dtype
    out = r
    for s in reversed(srcs):  # the first source last: it wins where several are NaN
        s = np.asarray(s, dt)
        out = np.where(nan & np.isnan(s), quiet_nan(s), out)
    return out.astype(dt, copy=False)


# ---------------------------------------------------------------------------------------------- error-free transforms


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s = fl(a + b) and the exact error e = a + b - s (Knuth's TwoSum; exact without overflow)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p = fl(a * b) and the exact error (Dekker); exact for |a|, |b| in [0.5, 1)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


# ---------------------------------------------------------------------------------------------- rounding


def _nudge(r: np.ndarray, cond: np.ndarray, toward: float) -> np.ndarray:
    return np.where(cond, np.nextafter(r, r.dtype.type(toward)), r)


def round_pair(hi: np.ndarray, lo: np.ndarray, dt, rm: np.ndarray, scale=0) -> np.ndarray:
    """Round the exact value (hi + lo) * 2**scale to `dt` once, in round mode `rm` (per element).

    hi = fl64(hi + lo); lo only matters through its sign and whether it is zero, so callers may pass a
    stand-in of the right sign. `scale` (f64 only) lets f64 results land in the subnormal range exactly.
    """
    hi, lo = np.asarray(hi, F64), np.asarray(lo, F64)
    r = np.ldexp(hi, scale).astype(dt) if dt is F64 else hi.astype(dt)
    back = np.ldexp(r.astype(F64), -np.asarray(scale)) if dt is F64 else r.astype(F64)
    ok = np.isfinite(hi)
    diff = np.where(ok, hi - back, 0.0)  # exact: r is a neighbour of hi on the coarser grid
    rs = np.where(diff != 0, np.sign(diff), np.where(ok, np.sign(lo), 0.0))
    # nearest-even: hi sitting exactly on a midpoint while lo pushes past it rounds the other way
    toward = np.where(diff > 0, np.inf, -np.inf)
    n = np.nextafter(r, toward.astype(dt))
    nb = np.ldexp(n.astype(F64), -np.asarray(scale)) if dt is F64 else n.astype(F64)
    with np.errstate(invalid="ignore"):
        tie = np.isfinite(r) & (diff != 0) & (np.abs(diff) * 2 == np.abs(nb - back)) & (np.sign(lo) == np.sign(diff))
    if dt in _OVERFLOW_TIE:  # hi exactly at the overflow midpoint, lo pulling back below it
        tie |= np.isinf(r) & (np.abs(hi) == _OVERFLOW_TIE[dt]) & (np.sign(lo) == -np.sign(hi))
        n = np.where(np.isinf(r) & tie, np.copysign(np.finfo(dt).max, r), n)
    rne = np.where(tie, n, r)
    up = _nudge(r, rs > 0, np.inf)
    down = _nudge(r, rs < 0, -np.inf)
    zero = _nudge(r, ((rs > 0) & (r < 0)) | ((rs < 0) & (r > 0)), 0.0)
    return np.select([rm == RUP, rm == RDN, rm == RTZ], [up, down, zero], rne).astype(dt)


def signed_zero_sum(r: np.ndarray, exact_zero: np.ndarray, x: np.ndarray, y: np.ndarray, rm) -> np.ndarray:
    """IEEE sign of an exact zero sum x + y: -0 in round-down unless both addends are +0."""
    both_pos_zero = (x == 0) & (y == 0) & ~np.signbit(x) & ~np.signbit(y)
    neg = exact_zero & (rm == RDN) & ~both_pos_zero
    both_neg_zero = (x == 0) & (y == 0) & np.signbit(x) & np.signbit(y)
    return np.where(neg | both_neg_zero, -r.dtype.type(0), np.where(exact_zero, r.dtype.type(0), r)).astype(r.dtype)


# ---------------------------------------------------------------------------------------------- f16/f32 operations


def add_small(a: np.ndarray, b: np.ndarray, dt, rm) -> np.ndarray:
    """a + b for f16/f32 operands, rounded once to dt."""
    x, y = a.astype(F64), b.astype(F64)
    s, e = two_sum(x, y)
    r = round_pair(s, e, dt, rm)
    return signed_zero_sum(r, (s == 0) & (e == 0), x, y, rm)


def mul_small(a: np.ndarray, b: np.ndarray, dt, rm) -> np.ndarray:
    """a * b for f16/f32 operands (exact in f64), rounded once to dt."""
    return round_pair(a.astype(F64) * b.astype(F64), np.zeros(a.shape), dt, rm)


def fma_small(a: np.ndarray, b: np.ndarray, c: np.ndarray, dt, rm, post_scale=0) -> np.ndarray:
    """(a * b + c) * 2**post_scale for f16/f32 operands, rounded once: the product is exact in f64, the
    sum is a TwoSum pair, and scaling the pair by a power of two within f64's range is exact."""
    p = a.astype(F64) * b.astype(F64)
    z = c.astype(F64)
    s, e = two_sum(p, z)
    r = round_pair(np.ldexp(s, post_scale), np.ldexp(e, post_scale), dt, rm)
    return signed_zero_sum(r, (s == 0) & (e == 0), p, z, rm)


# (mantissa bits f64 has below dt's, dt's smallest normal exponent): a float64 whose dropped bits are
# exactly 100...0 sits on a midpoint between two neighbours of dt's normal grid.
_NEAREST_GRID = {np.dtype(F32): (29, -126), np.dtype(F16): (42, -14)}
_MAG = np.uint64(0x7FFFFFFFFFFFFFFF)
_INF_BITS = np.uint64(0x7FF0000000000000)


def fma_nearest(a: np.ndarray, b: np.ndarray, c: np.ndarray, dt) -> np.ndarray:
    """a * b + c for f16/f32 operands rounded once to nearest-even, with numpy's speed.

    The product is exact in float64 and the float64 sum s rounds once; rounding s to dt again is then
    exact unless s is inexact and sits exactly on a midpoint of dt's grid (double rounding). Only the
    elements where that cannot be ruled out take the exact path (fma_small, whose TwoSum error breaks the
    tie): an inexact s on a normal-range midpoint or in dt's subnormal range (another grid), and NaN
    results (whose payload rules are the exact path's). Operands broadcast against each other.

    Whether s is exact is asked only of the candidates (TwoSum's error is zero): values with few
    significant bits (pixels, small integers, inactive lanes' leftovers) put a quarter of a network's
    sums on a midpoint or below the normal range, all of them exact, and an exact s rounds once."""
    x, y, z = (np.asarray(v) for v in (a, b, c))
    s = x.astype(F64) * y.astype(F64)
    s = s + z.astype(F64)  # not in place: a product of scalars [n, 1] broadcasts against a vector addend
    r = s.astype(dt)
    drop, emin = _NEAREST_GRID[np.dtype(dt)]
    bits = s.view(np.uint64)
    mag = bits & _MAG
    risky = (bits & np.uint64((1 << drop) - 1)) == np.uint64(1 << (drop - 1))
    # below dt's smallest normal (zero excluded: mag - 1 wraps)
    risky |= (mag - np.uint64(1)) < np.uint64(((1023 + emin) << 52) - 1)
    if risky.any():
        risky[risky] = _inexact_sum(x, y, z, risky)
    risky |= mag > _INF_BITS  # NaN
    if risky.any():
        shape = r.shape
        xs, ys, zs = (np.broadcast_to(v, shape)[risky] for v in (x, y, z))
        r[risky] = fma_small(xs, ys, zs, dt, RNE)
    return r


def _inexact_sum(x: np.ndarray, y: np.ndarray, z: np.ndarray, where: np.ndarray) -> np.ndarray:
    """For the elements `where` of broadcast x * y + z (f16/f32): whether the float64 sum is inexact."""
    xs, ys, zs = (np.broadcast_to(v, where.shape)[where] for v in (x, y, z))
    _, e = two_sum(xs.astype(F64) * ys.astype(F64), zs.astype(F64))
    return e != 0


# ---------------------------------------------------------------------------------------------- f64 operations


def add64(a: np.ndarray, b: np.ndarray, rm) -> np.ndarray:
    """a + b for f64, in any round mode; huge operands are halved first so TwoSum cannot overflow."""
    a, b = np.asarray(a, F64), np.asarray(b, F64)
    big = (np.abs(a) >= 2.0 ** 1020) | (np.abs(b) >= 2.0 ** 1020)
    # halving a tiny addend may round it; next to a huge one it only counts by its sign, which stays
    half = F64(0.5)
    x = np.where(big & (np.abs(a) >= 2.0 ** -1000), a * half, a)
    y = np.where(big & (np.abs(b) >= 2.0 ** -1000), b * half, b)
    s, e = two_sum(x, y)
    r = round_pair(s, e, F64, rm, np.where(big, 1, 0))
    r = np.where(np.isfinite(a) & np.isfinite(b), r, a + b)
    return signed_zero_sum(r, (s == 0) & (e == 0), a, b, rm)


def _fma64_general(a, b, c):
    """(hi, lo, scale) with (hi + lo) * 2**scale == a*b + c up to a sticky stand-in; finite, a*b != 0."""
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    mc, ec = np.frexp(c)
    p_exp = ea.astype(np.int64) + eb
    d = np.where(c != 0, ec - p_exp, -10_000)
    c_dominates = d > 60
    scale = np.where(c_dominates, ec, p_exp)
    # c far below the product only counts by its sign: a tiny stand-in keeps the rounding the same
    cs = np.where(d < -150, np.sign(c) * 2.0 ** -200, np.ldexp(c, -np.where(d < -150, 0, p_exp)))
    p, pe = two_prod(ma, mb)
    s, e1 = two_sum(p, cs)
    t, e2 = two_sum(e1, pe)
    # Boldo-Melquiond: round e1 + pe to odd, then s + that rounds to nearest exactly once
    t_bits = t.view(np.uint64)
    t_odd = np.where((e2 != 0) & ((t_bits & np.uint64(1)) == 0), np.nextafter(t, np.where(e2 > 0, np.inf, -np.inf)), t)
    hi, lo_a = two_sum(s, t_odd)
    rho_sign = np.where(t_odd == t, np.sign(e2), -np.sign(e2))
    lo = np.where(lo_a != 0, lo_a, rho_sign * np.abs(hi) * 2.0 ** -80)
    # c dominating: the product is far below half an ulp of c and counts only by its sign
    hi = np.where(c_dominates, mc, hi)
    lo = np.where(c_dominates, np.sign(a) * np.sign(b) * 2.0 ** -200, lo)
    return hi, lo, scale


def fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray, rm, post_scale=0) -> np.ndarray:
    """(a * b + c) * 2**post_scale for f64, rounded once in round mode rm."""
    a, b, c = (np.asarray(v, F64) for v in (a, b, c))
    gen = np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & (a != 0) & (b != 0)
    one = F64(1.0)
    ga, gb, gc = np.where(gen, a, one), np.where(gen, b, one), np.where(gen, c, 0.0)
    hi, lo, scale = _fma64_general(ga, gb, gc)
    r = round_pair(hi, lo, F64, rm, scale + post_scale)
    ab = a * b
    # inf/NaN/zero products: numpy's single operations are exact here; but a finite product that overflows
    # float64 is still finite, so next to an infinite addend the result is the addend, not inf - inf
    special = np.where(np.isinf(c) & np.isfinite(a) & np.isfinite(b), c, ab + c)
    r = np.where(gen, r, np.ldexp(special, post_scale))
    # exact zeros: +0, or -0 when rounding down (IEEE 754 6.3); same-signed zero addends keep their sign
    cancel = gen & (hi == 0) & (lo == 0)
    zeros = ~gen & (ab == 0) & (c == 0) & (np.signbit(ab) != np.signbit(c))
    return np.where(cancel | zeros, np.where(rm == RDN, -0.0, 0.0), r)


def mul64(a: np.ndarray, b: np.ndarray, rm) -> np.ndarray:
    """a * b for f64 in round mode rm (an fma with a zero addend that does not change the product's sign)."""
    a, b = np.asarray(a, F64), np.asarray(b, F64)
    r = fma64(a, b, np.zeros(a.shape), rm)
    return np.where((r == 0) & np.isfinite(r), np.copysign(0.0, a) * np.copysign(1.0, b), r)


def ldexp_round(x: np.ndarray, n: np.ndarray, dt, rm) -> np.ndarray:
    """x * 2**n rounded once to dt (x of any float type, n an integer array)."""
    x64 = x.astype(F64)
    n = np.clip(np.asarray(n, np.int64), -2300, 2300)
    if dt is F64:
        return round_pair(x64, np.zeros(x64.shape), F64, rm, n)
    # f16/f32 values scaled within f64 range stay exact; clip keeps far under/overflow saturated
    return round_pair(np.ldexp(x64, np.clip(n, -600, 600)), np.zeros(x64.shape), dt, rm)
