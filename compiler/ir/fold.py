"""Evaluating one ALU op on constants, with the IR's semantics (wrapping integers, IEEE floats rounded to the
op's type): constant folding uses it, and so do the tests that check a backend against the IR."""

from __future__ import annotations

import math

import numpy as np

from compiler.dtypes import DType, from_bf16_bits, to_bf16_bits
from compiler.ir.ops import COMPARE, Ops, normalize
from compiler.ir.ranges import tdiv, tmod

# Ops whose result on constants is exact in every backend (the transcendentals are approximations there).
EXACT = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.IDIV, Ops.MOD, Ops.FDIV, Ops.MAX, Ops.MIN, Ops.NEG, Ops.CMPLT, Ops.CMPEQ,
         Ops.CMPNE, Ops.AND, Ops.OR, Ops.XOR, Ops.NOT, Ops.SHL, Ops.SHR, Ops.WHERE, Ops.SQRT, Ops.TRUNC, Ops.CAST,
         Ops.MULACC}


def round_to(dtype: DType, x: float) -> float:
    """x rounded to the float type dtype (as a Python float)."""
    if dtype.name == "bfloat16":
        return float(from_bf16_bits(to_bf16_bits(np.float32(x).reshape(1)))[0])
    return float(dtype.np.type(x))


def _float_op(op: Ops, dtype: DType, args: list[float]):
    t = np.float32 if dtype.name == "bfloat16" else dtype.np.type
    v = [t(a) for a in args]
    with np.errstate(all="ignore"):
        r = {Ops.ADD: lambda: v[0] + v[1], Ops.SUB: lambda: v[0] - v[1], Ops.MUL: lambda: v[0] * v[1],
             Ops.FDIV: lambda: v[0] / v[1], Ops.NEG: lambda: -v[0], Ops.SQRT: lambda: np.sqrt(v[0]),
             Ops.TRUNC: lambda: np.trunc(v[0]), Ops.MAX: lambda: np.maximum(v[0], v[1]),
             Ops.MIN: lambda: np.minimum(v[0], v[1]),
             Ops.MULACC: lambda: t(np.float64(v[0]) * np.float64(v[1]) + np.float64(v[2]))
             if dtype.itemsize < 8 else None}[op]()
    return None if r is None else round_to(dtype, float(r))


def exec_alu(op: Ops, dtype: DType, args: list, src_dtype: DType | None = None):
    """op applied to constant Python values; the result normalised to dtype. None when it cannot be folded
    exactly (a transcendental, a float->int conversion of NaN or inf, an f64 fused multiply-add)."""
    if op not in EXACT:
        return None
    if op is Ops.WHERE:
        return args[1] if args[0] else args[2]
    if op is Ops.CAST:
        return _cast(dtype, src_dtype, args[0])
    if op in COMPARE:
        a, b = args
        return {Ops.CMPLT: a < b, Ops.CMPEQ: a == b, Ops.CMPNE: a != b}[op]
    if dtype.is_float:
        return _float_op(op, dtype, args)
    if dtype.kind == "b":
        a = args[0]
        return {Ops.AND: lambda: a and args[1], Ops.OR: lambda: a or args[1], Ops.XOR: lambda: a != args[1],
                Ops.NOT: lambda: not a, Ops.MAX: lambda: a or args[1], Ops.MIN: lambda: a and args[1]}.get(
                    op, lambda: None)()
    return _int_op(op, dtype, args)


def _int_op(op: Ops, dtype: DType, args: list[int]):
    a = args[0]
    b = args[1] if len(args) > 1 else 0
    if op in (Ops.SHL, Ops.SHR) and not 0 <= b < dtype.bits:
        return None
    r = {Ops.ADD: lambda: a + b, Ops.SUB: lambda: a - b, Ops.MUL: lambda: a * b, Ops.IDIV: lambda: tdiv(a, b),
         Ops.MOD: lambda: tmod(a, b), Ops.MAX: lambda: max(a, b), Ops.MIN: lambda: min(a, b), Ops.NEG: lambda: -a,
         Ops.AND: lambda: a & b, Ops.OR: lambda: a | b, Ops.XOR: lambda: a ^ b, Ops.NOT: lambda: ~a,
         Ops.SHL: lambda: a << b, Ops.SHR: lambda: a >> b, Ops.MULACC: lambda: a * b + args[2]}.get(op)
    return None if r is None else normalize(dtype, r())


def _cast(dtype: DType, src: DType | None, x):
    if dtype.is_float:
        return round_to(dtype, float(x))
    if dtype.kind == "b":
        return bool(x)
    if isinstance(x, float):
        if not math.isfinite(x):
            return None
        x = math.trunc(x)
        if not dtype.min <= x <= dtype.max:
            return None  # out of range: the backends' conversions differ (saturate or undefined)
    return normalize(dtype, x)


def evaluate(u, env: dict):
    """The value of an integer/bool IR expression, with `env` giving SPECIAL, RANGE and other leaf values
    (tests compare expressions before and after rewriting with it)."""
    memo: dict = {}
    for x in u.toposort():
        if x in env:
            memo[x] = env[x]
        elif x.op is Ops.CONST:
            memo[x] = x.arg
        else:
            v = exec_alu(x.op, x.dtype, [memo[s] for s in x.src], x.src[0].dtype if x.src else None)
            if v is None:
                raise ValueError(f"cannot evaluate {x.op.name}")
            memo[x] = v
    return memo[u]
