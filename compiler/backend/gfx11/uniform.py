"""Uniformity: which values of a kernel are the same in every lane of a wave and live in SGPRs.

A value is *scalar* when the scalar unit computes it (SALU, or SMEM for a load) into SGPRs: kernel arguments,
workgroup ids, loop counters, constants' materializations, and every integer or bool op whose sources are all
scalar, where the scalar unit has the op (no float arithmetic on gfx1100's SALU: a float op of uniform sources
runs on the VALU, reading the SGPRs, and its result is a VGPR). Comparisons are scalar bools when their sources
are uniform, float ones included: a VALU compare writes its lane mask to an SGPR, and a mask of uniform inputs
is uniform. A global load is scalar (s_load) when its index and gate are scalar and its element is 4 or 8
bytes (SMEM reads whole dwords). An accumulator is scalar when its initial value and every assignment are,
found by a fixpoint that starts from "all scalar" and removes what is not.

Bools are lane masks in one SGPR either way (bit l: lane l's value); a scalar bool's mask is all ones or zero.
"""

from __future__ import annotations

from compiler.dtypes import DType
from compiler.ir.linearize import LinearKernel
from compiler.ir.ops import COMPARE, Ops, UOp

# integer/bool ops the scalar unit computes (IDIV/MOD only by constants: magic-number multiplication)
_SALU_INT = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.NEG, Ops.AND, Ops.OR, Ops.XOR, Ops.NOT, Ops.SHL, Ops.SHR, Ops.MAX,
             Ops.MIN, Ops.WHERE, Ops.MULACC, Ops.CAST, Ops.BITCAST, Ops.IDIV, Ops.MOD} | COMPARE


def _scalar_op(u: UOp) -> bool:
    """Whether the scalar unit has u's operation (its sources aside)."""
    dt = u.dtype
    if u.op in COMPARE:
        return True  # a VALU compare of uniform sources is a uniform mask too
    if not isinstance(dt, DType):
        return False
    if u.op is Ops.BITCAST:
        return True
    if u.op in (Ops.NEG, Ops.WHERE) and dt.is_float:
        return True  # a sign flip (s_xor) and a select (s_cselect) need no float unit
    if u.op is Ops.CAST:
        src = u.src[0].dtype
        return not src.is_float and not dt.is_float
    if dt.is_float:
        return False
    if u.op in (Ops.IDIV, Ops.MOD):
        return u.src[1].op is Ops.CONST and dt.itemsize <= 4
    return u.op in _SALU_INT


def scalar_values(k: LinearKernel) -> set[UOp]:
    """The uops whose values live in SGPRs (module docstring); constants are not listed (they are operands)."""
    accs: dict[UOp, list[UOp]] = {}
    for u in k.uops:
        if u.op is Ops.ASSIGN:
            accs.setdefault(u.src[0], []).append(u.src[1])
    not_scalar_acc: set[UOp] = set()
    while True:
        scalar: set[UOp] = set()

        def ok(s: UOp, scalar: set[UOp] = scalar) -> bool:
            return s.op is Ops.CONST or s in scalar

        for u in k.uops:
            op = u.op
            if op in (Ops.PARAM, Ops.RANGE):
                scalar.add(u)
            elif op is Ops.SPECIAL:
                if u.arg[0] == "group":
                    scalar.add(u)
            elif op is Ops.DEFINE_ACC:
                if u not in not_scalar_acc and ok(u.src[0]):
                    scalar.add(u)
            elif op in (Ops.AFTER, Ops.ASSIGN):
                if u.src[0] in scalar:
                    scalar.add(u)
            elif op is Ops.LOAD:
                buf = u.src[0]
                glob = buf.op is Ops.PARAM
                if glob and u.dtype.itemsize in (4, 8) and all(ok(s) for s in u.src[1:]):
                    scalar.add(u)
            elif op in (Ops.WMMA, Ops.GEP, Ops.LDS, Ops.STORE, Ops.BARRIER, Ops.ENDRANGE, Ops.SINK, Ops.CONST):
                pass
            elif _scalar_op(u) and all(ok(s) for s in u.src):
                scalar.add(u)
        bad = {a for a, vals in accs.items() if a in scalar and not all(ok(v) for v in vals)}
        if not bad:
            return scalar
        not_scalar_acc |= bad
