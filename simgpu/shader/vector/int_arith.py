"""VALU integer semantics: moves, selects, adds and subtracts (with carry and clamp saturation),
shifts and logic, from the RDNA3 ISA reference pseudo-code. Sources arrive as typed [n, lanes] numpy
arrays; arithmetic is done in int64/uint64 so that carries and saturation are exact.

Multiplies live in vector/int_mul.py, bitfield/counting/min-max/pack ops in vector/int_bits.py, integer
compares in vector/cmp_int.py."""

from __future__ import annotations

import numpy as np

from simgpu.shader.vector.valu import vop

U16, U32, U64, I64 = np.uint16, np.uint32, np.uint64, np.int64
M32 = U64(0xFFFFFFFF)


def i64(x) -> np.ndarray:
    """Any integer array as int64 (its numeric value: unsigned stays non-negative)."""
    return np.asarray(x).astype(I64)


def u64(x) -> np.ndarray:
    """Any integer array as uint64 (signed values wrap, as the hardware's bit patterns do)."""
    return np.asarray(x).astype(U64)


def wrap_or_sat(ctx, full, lo: int, hi: int, dtype):
    """An exact int64 result as `dtype`: wrapped to its width, or saturated to [lo, hi] with clamp."""
    if ctx.clamp:
        return np.clip(full, lo, hi).astype(dtype)
    return full.astype(dtype)  # astype between integer types wraps


UMAX = {16: 0xFFFF, 32: 0xFFFFFFFF}
IRANGE = {16: (-0x8000, 0x7FFF), 32: (-0x80000000, 0x7FFFFFFF)}


# ---------------------------------------------------------------------------------------------- moves

# v_cndmask takes float abs/neg modifiers (VOP3), so its sources are typed as floats; np.where moves bits.
vop("v_mov_b32", "b32", ("b32",), lambda c, a: a)
vop("v_mov_b16", "b16", ("b16",), lambda c, a: a)
vop("v_cndmask_b32", "f32", ("f32", "f32"), lambda c, a, b, m: np.where(m, b, a), mask_in=True, no_omod=True)
vop("v_cndmask_b16", "f16", ("f16", "f16"), lambda c, a, b, m: np.where(m, b, a), mask_in=True, no_omod=True)


# ---------------------------------------------------------------------------------------------- add/sub


def _arith(bits: int, signed: bool, op):
    """fn(ctx, a, b): a (op) b on `bits`-wide integers; clamp saturates to the type's range."""
    lo, hi = IRANGE[bits] if signed else (0, UMAX[bits])
    dt = {(16, False): U16, (16, True): np.int16, (32, False): U32, (32, True): np.int32}[(bits, signed)]

    def fn(c, a, b):
        if not c.clamp:  # wraparound is numpy's own integer arithmetic in the operand type
            return op(a, b).astype(dt, copy=False)
        return wrap_or_sat(c, op(i64(a), i64(b)), lo, hi, dt)
    return fn


def _add(a, b):
    return a + b


def _sub(a, b):
    return a - b


def _rsub(a, b):
    return b - a


for _bits, _signed, _t in ((32, False, "u32"), (32, True, "i32"), (16, False, "u16"), (16, True, "i16")):
    _sfx = f"nc_{_t}"
    vop(f"v_add_{_sfx}", _t, (_t, _t), _arith(_bits, _signed, _add), int_clamp=True)
    vop(f"v_sub_{_sfx}", _t, (_t, _t), _arith(_bits, _signed, _sub), int_clamp=True)
vop("v_subrev_nc_u32", "u32", ("u32", "u32"), _arith(32, False, _rsub), int_clamp=True)


def _carry_op(op, with_carry: bool):
    """fn for v_add/sub(rev)_co(_ci)_u32: (D0, carry/borrow lane mask); clamp saturates D0 unsigned."""
    def fn(c, a, b, *m):
        if not c.clamp:
            return _carry_wrap(op, a, b, m[0] if with_carry else None, c.carry)
        full = op(i64(a), i64(b))
        if with_carry:
            cin = m[0].astype(I64)
            full = full + cin if op is _add else full - cin
        out = wrap_or_sat(c, full, 0, 0xFFFFFFFF, U32)
        return out, (full > 0xFFFFFFFF) | (full < 0)
    return fn


def _carry_wrap(op, a, b, cin, want_carry: bool = True):
    """(D0, carry) in uint32 arithmetic: the carry of an add is a wrapped sum below an operand, the
    borrow of a subtract a subtrahend above the minuend (then the same again for carry-in). Without
    `want_carry` (carry-out to null) the carry is None: only the sum, bool carry-in added directly."""
    x, y = (b, a) if op is _rsub else (a, b)
    if not want_carry:
        d = x + y if op is _add else x - y
        return (d if cin is None else d + cin if op is _add else d - cin), None
    if op is _add:
        d = x + y
        carry = d < x
        if cin is not None:
            d2 = d + cin.astype(U32)
            carry = carry | (d2 < d)
            d = d2
        return d, carry
    d = x - y
    borrow = y > x
    if cin is not None:
        c32 = cin.astype(U32)
        borrow = borrow | (c32 > d)
        d = d - c32
    return d, borrow


vop("v_add_co_u32", "u32", ("u32", "u32"), _carry_op(_add, False), carry_out=True, int_clamp=True)
vop("v_sub_co_u32", "u32", ("u32", "u32"), _carry_op(_sub, False), carry_out=True, int_clamp=True)
vop("v_subrev_co_u32", "u32", ("u32", "u32"), _carry_op(_rsub, False), carry_out=True, int_clamp=True)
vop("v_add_co_ci_u32", "u32", ("u32", "u32"), _carry_op(_add, True), carry_out=True, mask_in=True, int_clamp=True)
vop("v_sub_co_ci_u32", "u32", ("u32", "u32"), _carry_op(_sub, True), carry_out=True, mask_in=True, int_clamp=True)
vop("v_subrev_co_ci_u32", "u32", ("u32", "u32"), _carry_op(_rsub, True), carry_out=True, mask_in=True,
    int_clamp=True)

# Three-operand adds (no clamp in the pseudo-code beyond wraparound).
vop("v_add3_u32", "u32", ("u32", "u32", "u32"), lambda c, a, b, d: (u64(a) + u64(b) + u64(d)).astype(U32))
vop("v_xad_u32", "u32", ("u32", "u32", "u32"), lambda c, a, b, d: (u64(a ^ b) + u64(d)).astype(U32))


# ---------------------------------------------------------------------------------------------- shifts


# Shifts run in the operand's own type (no int64 widening: one pass over the lanes instead of four);
# the amount is masked to the width first, so numpy never sees an out-of-range shift.
_UDT = {16: U16, 32: U32, 64: U64}
_IDT = {16: np.int16, 32: np.int32, 64: np.int64}


def _amount(s, bits: int, dt):
    """S0[log2(bits)-1:0] as `dt` (the shift amount is the first source in the rev forms)."""
    return (np.asarray(s) & U32(bits - 1)).astype(dt, copy=False)


def _lshl(bits: int):
    """D = S1 << S0[log2(bits)-1:0]."""
    dt = _UDT[bits]
    return lambda c, s, v: np.left_shift(np.asarray(v).astype(dt, copy=False), _amount(s, bits, dt))


def _lshr(bits: int):
    dt = _UDT[bits]
    return lambda c, s, v: np.right_shift(np.asarray(v).astype(dt, copy=False), _amount(s, bits, dt))


def _ashr(bits: int):
    dt = _IDT[bits]
    return lambda c, s, v: np.right_shift(np.asarray(v).astype(dt, copy=False), _amount(s, bits, dt))


# The same 64-bit shifts on the (lo, hi) uint32 halves for a constant amount 0-63 (see VOp.pair_fn).
def _lshl_pair(n: int, lo, hi):
    if n == 0:
        return lo.copy(), hi.copy()
    if n >= 32:
        return np.zeros_like(lo), lo << U32(n - 32)
    return lo << U32(n), (hi << U32(n)) | (lo >> U32(32 - n))


def _lshr_pair(n: int, lo, hi):
    if n == 0:
        return lo.copy(), hi.copy()
    if n >= 32:
        return hi >> U32(n - 32), np.zeros_like(hi)
    return (lo >> U32(n)) | (hi << U32(32 - n)), hi >> U32(n)


def _ashr_pair(n: int, lo, hi):
    shi = hi.view(np.int32)
    if n == 0:
        return lo.copy(), hi.copy()
    if n >= 32:
        return (shi >> np.int32(n - 32)).view(U32), (shi >> np.int32(31)).view(U32)
    return (lo >> U32(n)) | (hi << U32(32 - n)), (shi >> np.int32(n)).view(U32)


vop("v_lshlrev_b16", "b16", ("u16", "b16"), _lshl(16))
vop("v_lshrrev_b16", "b16", ("u16", "b16"), _lshr(16))
vop("v_ashrrev_i16", "i16", ("u16", "i16"), _ashr(16))
vop("v_lshlrev_b32", "b32", ("u32", "b32"), _lshl(32))
vop("v_lshrrev_b32", "b32", ("u32", "b32"), _lshr(32))
vop("v_ashrrev_i32", "i32", ("u32", "i32"), _ashr(32))
vop("v_lshlrev_b64", "b64", ("u32", "b64"), _lshl(64), pair_fn=_lshl_pair)
vop("v_lshrrev_b64", "b64", ("u32", "b64"), _lshr(64), pair_fn=_lshr_pair)
vop("v_ashrrev_i64", "i64", ("u32", "i64"), _ashr(64), pair_fn=_ashr_pair)

vop("v_lshl_add_u32", "u32", ("u32", "u32", "u32"),
    lambda c, a, s, b: ((u64(a) << (u64(s) & U64(31))) + u64(b)).astype(U32))
vop("v_add_lshl_u32", "u32", ("u32", "u32", "u32"),
    lambda c, a, b, s: ((u64(a) + u64(b)) << (u64(s) & U64(31))).astype(U32))
vop("v_lshl_or_b32", "b32", ("b32", "u32", "b32"),
    lambda c, a, s, b: ((u64(a) << (u64(s) & U64(31))).astype(U32) | b))


# ---------------------------------------------------------------------------------------------- logic

for _t in ("b32", "b16"):
    _n = _t[1:]
    vop(f"v_and_b{_n}", _t, (_t, _t), lambda c, a, b: a & b)
    vop(f"v_or_b{_n}", _t, (_t, _t), lambda c, a, b: a | b)
    vop(f"v_xor_b{_n}", _t, (_t, _t), lambda c, a, b: a ^ b)
    vop(f"v_not_b{_n}", _t, (_t,), lambda c, a: ~a)
vop("v_xnor_b32", "b32", ("b32", "b32"), lambda c, a, b: ~(a ^ b))
vop("v_and_or_b32", "b32", ("b32", "b32", "b32"), lambda c, a, b, d: (a & b) | d)
vop("v_or3_b32", "b32", ("b32", "b32", "b32"), lambda c, a, b, d: a | b | d)
vop("v_xor3_b32", "b32", ("b32", "b32", "b32"), lambda c, a, b, d: a ^ b ^ d)
