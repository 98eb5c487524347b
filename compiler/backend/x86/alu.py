"""ALU rules: integers and bools on general-purpose registers, floats on SSE scalar instructions, in the value
conventions of compiler.backend.x86.select.

Floats follow IEEE 754 binary32/binary64 with round to nearest even and no reassociation: every IR op is one
SSE operation (or a fixed sequence), evaluated in the IR's order. What SSE lacks:

- MULACC (fused a*b+c): no FMA under unicorn, so float32 computes in float64 (the product is exact) and rounds
  the sum to float32, breaking the rare tie that the float64 rounding can create with the sum's exact error
  (TwoSum): one correct rounding, as an FMA. float16 and bfloat16 round the float64 sum to odd (TwoSum and a
  fix of the last bit), then to odd again to float32, then to the type. float64 uses Boldo and
  Melquiond's emulation (Dekker's exact product, TwoSum, an addition rounded to odd): correctly rounded while
  the operands' magnitudes stay below 2^995 and the product above 2^-969; outside that (and for inf/NaN
  operands) it is the product rounded, then the sum.
- MAX/MIN propagate NaN (compiler.backend.x86.expand).
- EXP2/LOG2/SIN: rewritten to polynomials before selection (compiler.backend.x86.backend).
"""

from __future__ import annotations

import math
import struct

from compiler.backend.x86.select import RULES, C, X86Selector, ft, imm, is_float, w
from compiler.dtypes import DType, dtypes
from compiler.ir.ops import COMMUTATIVE, Ops, UOp


def is_int(s, u: UOp) -> bool:
    """Integer or bool result (its operands' type)."""
    return not is_float(u.dtype)


def small(dt: DType) -> bool:
    return dt.name in ("int8", "uint8", "int16", "uint16")


def signed(dt: DType) -> bool:
    return dt.kind == "i"


def _result(s: X86Selector, u: UOp, name: str, *ops) -> None:
    """Emit name into a temporary and re-extend into u's register (small integers), else straight into it."""
    if small(u.dtype):
        t = s.g()
        s.op(name, t, *ops)
        s.normalize(s.dst(u), t, u.dtype)
    else:
        s.op(name, s.dst(u), *ops)


def _operands(s: X86Selector, u: UOp, commutative: bool):
    """(register, register-or-immediate) for a binary op, a constant moved to the second place when it may."""
    a, b = s.src(u.src[0]), s.src(u.src[1])
    if commutative and isinstance(a, C) and not isinstance(b, C):
        a, b = b, a
    return s.reg(a), s.operand(b, u.src[0].dtype)


_INT = {Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "imul", Ops.AND: "and", Ops.OR: "or", Ops.XOR: "xor"}


@RULES.rule(Ops.ADD, Ops.SUB, Ops.MUL, Ops.AND, Ops.OR, Ops.XOR, when=is_int, name="int_binary")
def _int_binary(s: X86Selector, u: UOp) -> None:
    a, b = _operands(s, u, u.op in COMMUTATIVE)
    _result(s, u, f"{_INT[u.op]}{w(u.dtype)}", a, b)


@RULES.rule(Ops.MULACC, when=is_int, name="int_mulacc")
def _int_mulacc(s: X86Selector, u: UOp) -> None:
    t = s.g()
    s.op(f"imul{w(u.dtype)}", t, s.rsrc(u.src[0]), s.operand(s.src(u.src[1]), u.dtype))
    _result(s, u, f"add{w(u.dtype)}", t, s.operand(s.src(u.src[2]), u.dtype))


@RULES.rule(Ops.NEG, when=is_int, name="int_neg")
def _int_neg(s: X86Selector, u: UOp) -> None:
    _result(s, u, f"neg{w(u.dtype)}", s.rsrc(u.src[0]))


@RULES.rule(Ops.NOT, when=lambda s, u: u.dtype == dtypes.bool, name="bool_not")
def _bool_not(s: X86Selector, u: UOp) -> None:
    s.op("xor32", s.dst(u), s.rsrc(u.src[0]), imm(1))


@RULES.rule(Ops.NOT, when=is_int, name="int_not")
def _int_not(s: X86Selector, u: UOp) -> None:
    _result(s, u, f"not{w(u.dtype)}", s.rsrc(u.src[0]))


@RULES.rule(Ops.IDIV, Ops.MOD, when=is_int, name="int_divmod")
def _int_divmod(s: X86Selector, u: UOp) -> None:
    kind = ("div" if u.op is Ops.IDIV else "rem") + ("s" if signed(u.dtype) else "u")
    _result(s, u, f"{kind}{w(u.dtype)}", s.rsrc(u.src[0]), s.rsrc(u.src[1]))


@RULES.rule(Ops.MAX, Ops.MIN, when=is_int, name="int_minmax")
def _int_minmax(s: X86Selector, u: UOp) -> None:
    cc = {(Ops.MAX, True): "g", (Ops.MAX, False): "a", (Ops.MIN, True): "l", (Ops.MIN, False): "b"}[
        (u.op, signed(u.dtype))]
    s.op(f"cmov.{cc}.{w(u.dtype)}", s.dst(u), s.rsrc(u.src[0]), s.rsrc(u.src[1]))


_SWAP = {"l": "g", "g": "l", "b": "a", "a": "b", "e": "e", "ne": "ne"}


@RULES.rule(Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE, when=lambda s, u: not is_float(u.src[0].dtype), name="int_cmp")
def _int_cmp(s: X86Selector, u: UOp) -> None:
    dt = u.src[0].dtype
    cc = {Ops.CMPLT: "l" if signed(dt) else "b", Ops.CMPEQ: "e", Ops.CMPNE: "ne"}[u.op]
    a, b = s.src(u.src[0]), s.src(u.src[1])
    if isinstance(a, C) and not isinstance(b, C):
        a, b, cc = b, a, _SWAP[cc]
    s.op(f"set.{cc}.{w(dt)}", s.dst(u), s.reg(a), s.operand(b, dt))


@RULES.rule(Ops.SHL, Ops.SHR, when=is_int, name="int_shift")
def _int_shift(s: X86Selector, u: UOp) -> None:
    dt = u.dtype
    name = "shl" if u.op is Ops.SHL else "sar" if signed(dt) else "shr"
    b = s.src(u.src[1])
    width = 64 if dt.itemsize == 8 else 32
    if isinstance(b, C) and 0 <= int(b.value) < width:
        amount = imm(int(b.value))
    else:
        amount = s.reg(b)
    a = s.rsrc(u.src[0])
    if u.op is Ops.SHL:
        _result(s, u, f"{name}{w(dt)}", a, amount)
    else:
        s.op(f"{name}{w(dt)}", s.dst(u), a, amount)  # a right shift stays inside the type's range


@RULES.rule(Ops.WHERE, name="where")
def _where(s: X86Selector, u: UOp) -> None:
    c = s.src(u.src[0])
    t, f = s.src(u.src[1]), s.src(u.src[2])
    if isinstance(c, C):
        s.copy(s.dst(u), t if c.value else f, u.dtype)
        return
    if is_float(u.dtype):
        s.op("fsel", s.dst(u), c, s.reg(t), s.reg(f))
    else:
        s.op(f"csel{w(u.dtype)}", s.dst(u), c, s.reg(t), s.reg(f))


# ---- floats ------------------------------------------------------------------------------------------------------
def is_float_op(s, u: UOp) -> bool:
    return is_float(u.dtype)


def rounded(s: X86Selector, u: UOp, t) -> None:
    """u's register <- t (a float32 result) rounded to u's 16-bit float type, or t itself for wider types."""
    if u.dtype.name == "float16":
        s.op("rnd.f16", s.dst(u), t)
    elif u.dtype.name == "bfloat16":
        s.op("rnd.bf16", s.dst(u), t)
    else:
        s.set(u, t)


def _narrow(dt: DType) -> bool:
    return dt.name in ("float16", "bfloat16")


_FLOAT = {Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "mul", Ops.FDIV: "div"}


@RULES.rule(Ops.ADD, Ops.SUB, Ops.MUL, Ops.FDIV, when=is_float_op, name="float_binary")
def _float_binary(s: X86Selector, u: UOp) -> None:
    t = s.x() if _narrow(u.dtype) else s.dst(u)
    s.op(f"f.{_FLOAT[u.op]}.{ft(u.dtype)}", t, s.rsrc(u.src[0]), s.rsrc(u.src[1]))
    rounded(s, u, t)


@RULES.rule(Ops.SQRT, when=is_float_op, name="float_sqrt")
def _float_sqrt(s: X86Selector, u: UOp) -> None:
    t = s.x() if _narrow(u.dtype) else s.dst(u)
    s.op(f"fsqrt.{ft(u.dtype)}", t, s.rsrc(u.src[0]))
    rounded(s, u, t)


@RULES.rule(Ops.TRUNC, when=is_float_op, name="float_trunc")
def _float_trunc(s: X86Selector, u: UOp) -> None:
    s.op(f"ftrunc.{ft(u.dtype)}", s.dst(u), s.rsrc(u.src[0]))  # a 16-bit float's integer part fits it


@RULES.rule(Ops.NEG, when=is_float_op, name="float_neg")
def _float_neg(s: X86Selector, u: UOp) -> None:
    s.op(f"fneg.{ft(u.dtype)}", s.dst(u), s.rsrc(u.src[0]))


@RULES.rule(Ops.MAX, Ops.MIN, when=is_float_op, name="float_minmax")
def _float_minmax(s: X86Selector, u: UOp) -> None:
    name = "fmax" if u.op is Ops.MAX else "fmin"
    s.op(f"{name}.{ft(u.dtype)}", s.dst(u), s.rsrc(u.src[0]), s.rsrc(u.src[1]))


_FCMP = {Ops.CMPLT: "lt", Ops.CMPEQ: "eq", Ops.CMPNE: "neq"}


@RULES.rule(Ops.CMPLT, Ops.CMPEQ, Ops.CMPNE, when=lambda s, u: is_float(u.src[0].dtype), name="float_cmp")
def _float_cmp(s: X86Selector, u: UOp) -> None:
    s.op(f"fcmp.{_FCMP[u.op]}.{ft(u.src[0].dtype)}", s.dst(u), s.rsrc(u.src[0]), s.rsrc(u.src[1]))


def fconst(s: X86Selector, value: float, dt: DType):
    """A float constant of dt in a register."""
    return s.materialize(C(value, dt, None))


def two_sum_error(s: X86Selector, a, b, total, t: str):
    """The exact error of total = RN(a + b) (Knuth's TwoSum, six operations)."""
    bb, t1, t2, t3, e = (s.x() for _ in range(5))
    s.op(f"f.sub.{t}", bb, total, a)
    s.op(f"f.sub.{t}", t1, total, bb)
    s.op(f"f.sub.{t}", t2, a, t1)
    s.op(f"f.sub.{t}", t3, b, bb)
    s.op(f"f.add.{t}", e, t2, t3)
    return e


def add_to_odd(s: X86Selector, a, b):
    """RO(a + b) in float64: the sum rounded to odd (exact error by TwoSum, then rto.fix)."""
    total, r = s.x(), s.x()
    s.op("f.add.sd", total, a, b)
    s.op("rto.fix", r, total, two_sum_error(s, a, b, total, "sd"))
    return r


def _split(s: X86Selector, a):
    """Veltkamp's split of a float64 into 26 + 27 bits: (hi, lo) with a = hi + lo exactly."""
    c = fconst(s, 134217729.0, dtypes.float64)  # 2^27 + 1
    gg, t, hi, lo = s.x(), s.x(), s.x(), s.x()
    s.op("f.mul.sd", gg, a, c)
    s.op("f.sub.sd", t, gg, a)
    s.op("f.sub.sd", hi, gg, t)
    s.op("f.sub.sd", lo, a, hi)
    return hi, lo


def _fma64(s: X86Selector, a, b, c):
    """Boldo & Melquiond's emulated FMA (module docstring); the product-then-sum result where it cannot hold."""
    uh = s.x()
    s.op("f.mul.sd", uh, a, b)
    ah, al = _split(s, a)
    bh, bl = _split(s, b)
    p1, p2, p3, p4, q1, q2, ul = (s.x() for _ in range(7))
    s.op("f.mul.sd", p1, ah, bh)
    s.op("f.sub.sd", q1, p1, uh)
    s.op("f.mul.sd", p2, ah, bl)
    s.op("f.add.sd", q2, q1, p2)
    s.op("f.mul.sd", p3, al, bh)
    s.op("f.add.sd", p4, q2, p3)
    p5 = s.x()
    s.op("f.mul.sd", p5, al, bl)
    s.op("f.add.sd", ul, p4, p5)  # uh + ul = a * b exactly
    th = s.x()
    s.op("f.add.sd", th, c, uh)
    tl = two_sum_error(s, c, uh, th, "sd")
    v = add_to_odd(s, tl, ul)
    r, plain = s.x(), s.x()
    s.op("f.add.sd", r, th, v)
    s.op("f.add.sd", plain, uh, c)
    bad = s.g()
    s.op("fcmp.neq.sd", bad, r, r)  # NaN: the split overflowed, or an operand is inf/NaN
    d = s.x()
    s.op("fsel", d, bad, plain, r)
    return d


def _widened(s: X86Selector, x: UOp):
    """A float32 (or 16-bit float) operand as float64: a finite constant is a float64 constant made once before
    the grid loops (the polynomials' coefficients); any other value is converted (cvtss2sd, exact) once per
    stretch of code between loop boundaries, where its other MULACCs reuse it (a polynomial's argument); an
    accumulator is converted at every use."""
    v = s.src(x)
    if isinstance(v, C) and math.isfinite(float(v.value)):
        return fconst(s, struct.unpack("<f", struct.pack("<f", float(v.value)))[0], dtypes.float64)
    key = (x, s.loops_seen)
    if key not in s.widened or x.op is Ops.DEFINE_ACC:  # an accumulator's register changes at its ASSIGNs
        t = s.x()
        s.op("cvt.ss2sd", t, s.reg(v))
        s.widened[key] = t
    return s.widened[key]


@RULES.rule(Ops.MULACC, when=is_float_op, name="float_fma")
def _float_fma(s: X86Selector, u: UOp) -> None:
    dt = u.dtype
    if dt.name == "float64":
        s.set(u, _fma64(s, *(s.rsrc(x) for x in u.src)))
        return
    wide = [_widened(s, x) for x in u.src]
    p = s.x()
    s.op("f.mul.sd", p, wide[0], wide[1])  # exact: 24 + 24 bits
    if dt.name == "float32":
        total = s.x()
        s.op("f.add.sd", total, p, wide[2])
        s.op("fma32.round", s.dst(u), total, p, wide[2])
        return
    r = add_to_odd(s, p, wide[2])
    t = s.x()
    s.op("rto.sd2ss", t, r)
    rounded(s, u, t)

