"""exp2, log2 and sin as IR (range reduction + polynomial) for targets without an instruction for them.

LLVM's AMDGPU target has none for f64 (it aborts on llvm.exp2.f64), and the CPU backend has none at all,
so these are rewrite rules a backend opts into per dtype. Each works for float32 and float64 (the bit
layout and the number of terms follow the type); accuracy is within a few ULP on the ranges the tests use
(docs/compiler.md, "Transcendentals"):

- exp2: x = n + f with n = round(x), |f| <= 1/2; 2^f by its Taylor series; 2^n built from exponent bits
  in two halves (so results near the subnormal and overflow edges are right).
- log2: x = m * 2^e with m in [sqrt(2)/2, sqrt(2)] from the bits (subnormals scaled first);
  log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.172, by its odd series.
- sin: k = round(x * 2/pi), r = x - k*pi/2 with pi/2 split in three parts (Cody & Waite) and fused
  multiply-adds; sin or cos of r (|r| <= pi/4) by Taylor series, chosen and signed by k mod 4. Exact
  reduction holds for |x| up to about 2^20 * pi/2.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

from compiler.dtypes import DType, dtypes
from compiler.ir.ops import Ops, UOp
from compiler.ir.rewrite import Rules

getcontext().prec = 60
_PI = Fraction(Decimal("3.14159265358979323846264338327950288419716939937510582097494459"))


def _split(x: Fraction, bits: int) -> float:
    """x as a float with only its top `bits` significant bits (so k * part is exact for small k)."""
    f = float(x)
    if f == 0:
        return 0.0
    m, e = math.frexp(f)
    return math.ldexp(math.floor(m * (1 << bits)) / (1 << bits), e)


def _pio2_parts(mant: int) -> tuple[float, float, float]:
    half = _PI / 2
    p1 = _split(half, mant - 20)
    p2 = _split(half - Fraction(p1), mant - 20)
    p3 = float(half - Fraction(p1) - Fraction(p2))
    return p1, p2, p3


_FMT = {  # mantissa bits, exponent bias, int type of the same width, Taylor terms (exp2, log, sin/cos)
    "float32": (23, 127, dtypes.int32, 9, 6, 6),
    "float64": (52, 1023, dtypes.int64, 14, 11, 9),
}


def _c(dt: DType, v) -> UOp:
    return UOp.const(dt, v)


def _round(x: UOp) -> UOp:
    """Nearest integer value (ties away from zero) as a float."""
    half = x.alu(Ops.CMPLT, _c(x.dtype, 0.0)).where(_c(x.dtype, -0.5), _c(x.dtype, 0.5))
    return UOp(Ops.TRUNC, x.dtype, (x + half,))


def _horner(x: UOp, coeffs: list[float]) -> UOp:
    """coeffs[0] + x*coeffs[1] + x^2*coeffs[2] + ..."""
    acc = _c(x.dtype, coeffs[-1])
    for k in reversed(coeffs[:-1]):
        acc = UOp(Ops.MULACC, x.dtype, (acc, x, _c(x.dtype, k)))
    return acc


def _pow2(n: UOp, dt: DType) -> UOp:
    """2.0 ** n for an integer n in the normal exponent range (built from the exponent bits)."""
    mant, bias, it = _FMT[dt.name][:3]
    e = (n.cast(it) + _c(it, bias)).alu(Ops.SHL, _c(it, mant))
    return UOp(Ops.BITCAST, dt, (e,))


def exp2(x: UOp) -> UOp:
    """2 ** x (module docstring)."""
    dt = x.dtype
    mant, bias, it, terms = _FMT[dt.name][:4]
    limit = bias + mant + 8
    xc = x.alu(Ops.MAX, _c(dt, -limit)).alu(Ops.MIN, _c(dt, limit))
    n = _round(xc)
    f = xc - n
    p = _horner(f, [math.log(2) ** k / math.factorial(k) for k in range(terms)])
    ni = n.cast(dtypes.int32)
    a = ni.alu(Ops.SHR, _c(dtypes.int32, 1))
    b = ni - a
    r = p * _pow2(a, dt) * _pow2(b, dt)
    return x.alu(Ops.CMPNE, x).where(x, r)


def log2(x: UOp) -> UOp:
    """log2(x) (module docstring)."""
    dt = x.dtype
    mant, bias, it, _, terms, _ = _FMT[dt.name]
    tiny = x.alu(Ops.CMPLT, _c(dt, 2.0 ** (1 - bias)))
    xs = tiny.where(x * _c(dt, 2.0 ** (mant + 2)), x)
    bits = UOp(Ops.BITCAST, it, (xs,))
    e = bits.alu(Ops.SHR, _c(it, mant)).alu(Ops.AND, _c(it, (1 << (8 * dt.itemsize - 1 - mant)) - 1)) - _c(it, bias)
    e = e - tiny.where(_c(it, mant + 2), _c(it, 0))
    m = UOp(Ops.BITCAST, dt, (bits.alu(Ops.AND, _c(it, (1 << mant) - 1)).alu(Ops.OR, _c(it, bias << mant)),))
    big = _c(dt, math.sqrt(2)).alu(Ops.CMPLT, m)
    m = big.where(m * _c(dt, 0.5), m)
    ef = (e + big.where(_c(it, 1), _c(it, 0))).cast(dt)
    s = (m - _c(dt, 1.0)).alu(Ops.FDIV, m + _c(dt, 1.0))
    s2 = s * s
    series = _horner(s2, [1.0 / (2 * k + 1) for k in range(terms)])
    r = ef + s * series * _c(dt, 2 / math.log(2))
    inf = _c(dt, math.inf)
    r = x.alu(Ops.CMPEQ, inf).where(inf, r)
    r = x.alu(Ops.CMPEQ, _c(dt, 0.0)).where(_c(dt, -math.inf), r)
    bad = x.alu(Ops.CMPLT, _c(dt, 0.0)).alu(Ops.OR, x.alu(Ops.CMPNE, x))
    return bad.where(_c(dt, math.nan), r)


def sin(x: UOp) -> UOp:
    """sin(x) (module docstring)."""
    dt = x.dtype
    mant, _, it, _, _, terms = _FMT[dt.name]
    p1, p2, p3 = _pio2_parts(mant + 1)
    k = _round(x * _c(dt, 2 / math.pi))
    r = x
    for part in (p1, p2, p3):
        r = UOp(Ops.MULACC, dt, (k, _c(dt, -part), r))
    r2 = r * r
    s = r * _horner(r2, [(-1) ** j / math.factorial(2 * j + 1) for j in range(terms)])
    c = _horner(r2, [(-1) ** j / math.factorial(2 * j) for j in range(terms + 1)])
    q = k.cast(it).alu(Ops.AND, _c(it, 3))
    v = q.alu(Ops.AND, _c(it, 1)).alu(Ops.CMPNE, _c(it, 0)).where(c, s)
    v = q.alu(Ops.AND, _c(it, 2)).alu(Ops.CMPNE, _c(it, 0)).where(UOp(Ops.NEG, dt, (v,)), v)
    finite = (x - x).alu(Ops.CMPEQ, _c(dt, 0.0))  # false for inf and NaN
    return finite.where(v, _c(dt, math.nan))


def rules_for(*type_names: str) -> Rules:
    """Rules replacing EXP2/LOG2/SIN of the named float types by the expansions above."""
    def when(fn):
        return lambda u: fn(u.src[0]) if u.dtype.name in type_names else None
    return Rules([(Ops.EXP2, when(exp2)), (Ops.LOG2, when(log2)), (Ops.SIN, when(sin))])


F64_RULES = rules_for("float64")


def f32_sin(u: UOp) -> UOp | None:
    """float32 SIN as above: the hardware's v_sin_f32 (what LLVM emits) loses digits once |x| is past a few."""
    return sin(u.src[0]) if u.dtype.name == "float32" else None


LLVM_RULES = F64_RULES + Rules([(Ops.SIN, f32_sin)])
