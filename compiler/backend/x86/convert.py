"""CAST and BITCAST between every pair of IR dtypes, in the conventions of compiler.backend.x86.select.

- integers: widening to 64 bits sign-extends a signed source (movsxd) and keeps an unsigned one (its upper
  half is already zero); narrowing keeps the low bits and re-extends; x -> bool is x != 0; bool -> number
  is 0 or 1.
- float -> float: cvtss2sd / cvtsd2ss (round to nearest even); float16/bfloat16 are float32 values, so
  widening them is free and narrowing float32 to them is one rounding; float64 -> float16/bfloat16 rounds to
  float32 to odd first, so the final rounding is a single correct one.
- float -> integer truncates (cvttss2si); uint32 through the 64-bit conversion; uint64 with the 2^63 case.
  NaN and out-of-range values give what the instruction gives (the IR leaves them to the backend).
- integer -> float: cvtsi2ss/sd of the 32-bit value for signed types of 32 bits or less, of the 64-bit
  register for unsigned ones (exact: its upper half is zero) and int64; uint64 halves values from 2^63 up
  with a sticky bit. To float16/bfloat16 through float32 (two roundings for integers beyond 2^24).
"""

from __future__ import annotations

from compiler.backend.x86.alu import rounded, signed, small
from compiler.backend.x86.select import RULES, C, X86Selector, ft, imm, w
from compiler.dtypes import DType, dtypes
from compiler.ir.fold import exec_alu
from compiler.ir.ops import Ops, UOp


@RULES.rule(Ops.CAST, when=lambda s, u: u.src[0].op is Ops.CONST, name="cast_const")
def _cast_const(s: X86Selector, u: UOp) -> None:
    v = exec_alu(Ops.CAST, u.dtype, [u.src[0].arg], u.src[0].dtype)
    if v is None:
        _cast(s, u)
        return
    s.copy(s.dst(u), C(v, u.dtype, None), u.dtype)


@RULES.rule(Ops.CAST, name="cast")
def _cast(s: X86Selector, u: UOp) -> None:
    src, dst = u.src[0].dtype, u.dtype
    x = s.rsrc(u.src[0])
    if dst == dtypes.bool:
        _to_bool(s, u, src, x)
    elif src.is_float and dst.is_float:
        _float_float(s, u, src, dst, x)
    elif src.is_float:
        _float_int(s, u, src, dst, x)
    elif dst.is_float:
        _int_float(s, u, src, dst, x)
    else:
        _int_int(s, u, src, dst, x)


def _to_bool(s: X86Selector, u: UOp, src: DType, x) -> None:
    if src.is_float:
        s.op(f"fcmp.neq.{ft(src)}", s.dst(u), x, s.materialize(C(0.0, src, None)))
    else:
        s.op(f"set.ne.{w(src)}", s.dst(u), x, s.operand(C(0, src, None), src))


def _int_int(s: X86Selector, u: UOp, src: DType, dst: DType, x) -> None:
    if dst.itemsize == 8:
        if src.itemsize < 8 and signed(src):
            s.op("movsxd", s.dst(u), x)
        else:
            s.copy(s.dst(u), x, dst)  # bool and unsigned sources have a zero upper half
        return
    t = x
    if src.itemsize == 8:
        t = s.g()
        s.op("zext32", t, x)
    s.normalize(s.dst(u), t, dst)


def _float_float(s: X86Selector, u: UOp, src: DType, dst: DType, x) -> None:
    if src.name == "float64":
        t = s.x()
        if dst.name == "float32":
            s.op("cvt.sd2ss", s.dst(u), x)
            return
        s.op("rto.sd2ss", t, x)
        rounded(s, u, t)
        return
    if dst.name == "float64":
        s.op("cvt.ss2sd", s.dst(u), x)  # float16/bfloat16 values are float32 values
        return
    if dst.name == "float32" or src == dst:
        s.copy(s.dst(u), x, dst)
        return
    rounded(s, u, x)


def _float_int(s: X86Selector, u: UOp, src: DType, dst: DType, x) -> None:
    t = ft(src)
    if dst.itemsize == 8 and dst.kind == "u":
        s.op(f"cvtt.{t}2u64", s.dst(u), x)
    elif dst.itemsize == 8:
        s.op(f"cvtt.{t}2si64", s.dst(u), x)
    elif dst.name == "uint32":
        r = s.g()
        s.op(f"cvtt.{t}2si64", r, x)
        s.op("zext32", s.dst(u), r)
    elif small(dst):
        r = s.g()
        s.op(f"cvtt.{t}2si32", r, x)
        s.normalize(s.dst(u), r, dst)
    else:
        s.op(f"cvtt.{t}2si32", s.dst(u), x)


def _int_float(s: X86Selector, u: UOp, src: DType, dst: DType, x) -> None:
    t = ft(dst)
    out = s.x() if dst.name in ("float16", "bfloat16") else s.dst(u)
    if src.itemsize == 8 and src.kind == "u":
        s.op(f"cvt.u2{t}64", out, x)
    elif src.itemsize == 8 or not signed(src):
        s.op(f"cvt.si2{t}64", out, x)
    else:
        s.op(f"cvt.si2{t}32", out, x)
    rounded(s, u, out)


@RULES.rule(Ops.BITCAST, name="bitcast")
def _bitcast(s: X86Selector, u: UOp) -> None:
    src, dst = u.src[0].dtype, u.dtype
    x = s.rsrc(u.src[0])
    if src.is_float and dst.is_float and src != dst:
        _float_bits_float(s, u, src, dst, x)
    elif src.is_float == dst.is_float:
        s.copy(s.dst(u), x, dst)
    elif src.is_float:
        if src.name == "float16":
            t = s.g()
            s.op("f16.bits", t, x)
            s.normalize(s.dst(u), t, dst)
        elif src.name == "bfloat16":
            t, r = s.g(), s.g()
            s.op("movd.xg", t, x)
            s.op("shr32", r, t, imm(16))
            s.normalize(s.dst(u), r, dst)
        else:
            s.op("movq.xg" if src.itemsize == 8 else "movd.xg", s.dst(u), x)
    else:
        if dst.name == "float16":
            s.op("f16.value", s.dst(u), x)
        elif dst.name == "bfloat16":
            t = s.g()
            s.op("shl32", t, x, imm(16))
            s.op("movd.gx", s.dst(u), t)
        else:
            s.op("movq.gx" if dst.itemsize == 8 else "movd.gx", s.dst(u), x)


def _float_bits_float(s: X86Selector, u: UOp, src: DType, dst: DType, x) -> None:
    """float16 <-> bfloat16 by their bits (the only same-width pair of float types)."""
    t = s.g()
    if src.name == "float16":
        s.op("f16.bits", t, x)
        r = s.g()
        s.op("shl32", r, t, imm(16))
        s.op("movd.gx", s.dst(u), r)
    else:
        r = s.g()
        s.op("movd.xg", r, x)
        s.op("shr32", t, r, imm(16))
        s.op("f16.value", s.dst(u), t)

