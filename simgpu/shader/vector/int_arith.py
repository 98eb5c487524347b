"""VALU integer semantics: moves, selects, adds and subtracts (with carry and clamp saturation),
shifts and logic, from the RDNA3 ISA reference pseudo-code, in the expression form (sem.expr) that both
tiers are generated from; exact carries and saturation go through i64. The numpy helpers below are the
interpreter's pair plan of the 64-bit shifts.

Multiplies live in vector/int_mul.py, bitfield/counting/min-max/pack ops in vector/int_bits.py, integer
compares in vector/cmp_int.py."""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem.expr import cast, saturate, select
from simgpu.shader.vector.valu import define

U32 = np.uint32


def wide(x):
    """A source as i64 (its value: unsigned types zero-extend), for exact carries and saturation."""
    return cast(x, "i64")


# ---------------------------------------------------------------------------------------------- moves

# v_cndmask takes float abs/neg modifiers (VOP3), so its sources are typed as floats; the select moves bits.
define("v_mov_b32", "b32", ("b32",), lambda a: a)
define("v_mov_b16", "b16", ("b16",), lambda a: a)
define("v_cndmask_b32", "f32", ("f32", "f32"), lambda a, b, m: select(m, b, a), mask_in=True, no_omod=True)
define("v_cndmask_b16", "f16", ("f16", "f16"), lambda a, b, m: select(m, b, a), mask_in=True, no_omod=True)


# ---------------------------------------------------------------------------------------------- add/sub


def _add(a, b):
    return a + b


def _sub(a, b):
    return a - b


def _rsub(a, b):
    return b - a


def _nc(op, t: str):
    """D = S0 (op) S1 wrapped to t's width; with clamp, the exact result saturated to t's range."""
    def fn(a, b, clamp):
        return saturate(op(wide(a), wide(b)), t) if clamp else op(a, b)
    return fn


for _t in ("u32", "i32", "u16", "i16"):
    define(f"v_add_nc_{_t}", _t, (_t, _t), _nc(_add, _t), int_clamp=True)
    define(f"v_sub_nc_{_t}", _t, (_t, _t), _nc(_sub, _t), int_clamp=True)
define("v_subrev_nc_u32", "u32", ("u32", "u32"), _nc(_rsub, "u32"), int_clamp=True)


def _carry(op, with_carry: bool):
    """v_add/sub(rev)_co(_ci)_u32: (D0, carry/borrow lane mask). The carry of an add is a wrapped sum below
    an operand, the borrow of a subtract a subtrahend above the minuend (then the same again for the
    carry-in); with clamp D0 is the exact result saturated to u32, the carry whether it left that range."""
    def fn(a, b, *m, clamp):
        x, y = (b, a) if op is _rsub else (a, b)
        add = op is _add
        if clamp:
            full = wide(x) + wide(y) if add else wide(x) - wide(y)
            if with_carry:
                full = full + wide(m[0]) if add else full - wide(m[0])
            return saturate(full, "u32"), (full > 0xFFFFFFFF) | (full < 0)
        d = x + y if add else x - y
        carry = d < x if add else y > x
        if with_carry:
            cin = cast(m[0], "u32")
            if add:
                d2 = d + cin
                return d2, carry | (d2 < d)
            return d - cin, carry | (cin > d)
        return d, carry
    return fn


for _name, _op in (("add", _add), ("sub", _sub), ("subrev", _rsub)):
    define(f"v_{_name}_co_u32", "u32", ("u32", "u32"), _carry(_op, False), carry_out=True, int_clamp=True)
    define(f"v_{_name}_co_ci_u32", "u32", ("u32", "u32"), _carry(_op, True), carry_out=True, mask_in=True,
           int_clamp=True)

# Three-operand adds (no clamp in the pseudo-code beyond wraparound).
define("v_add3_u32", "u32", ("u32", "u32", "u32"), lambda a, b, d: a + b + d)
define("v_xad_u32", "u32", ("u32", "u32", "u32"), lambda a, b, d: (a ^ b) + d)


# ---------------------------------------------------------------------------------------------- shifts


def _amount(s, t: str, bits: int):
    """S0[log2(bits)-1:0] as type t (the shift amount is the first source in the rev forms)."""
    return cast(s & (bits - 1), t)


for _bits, (_u, _i) in ((16, ("b16", "i16")), (32, ("b32", "i32"))):
    _s = f"u{_bits}"
    define(f"v_lshlrev_b{_bits}", _u, (_s, _u), lambda s, v, t=_u, n=_bits: v << _amount(s, t, n))
    define(f"v_lshrrev_b{_bits}", _u, (_s, _u), lambda s, v, t=_u, n=_bits: v >> _amount(s, t, n))
    define(f"v_ashrrev_i{_bits}", _i, (_s, _i), lambda s, v, t=_i, n=_bits: v >> _amount(s, t, n))

define("v_lshl_add_u32", "u32", ("u32", "u32", "u32"), lambda a, s, b: (a << (s & 31)) + b)
define("v_add_lshl_u32", "u32", ("u32", "u32", "u32"), lambda a, b, s: (a + b) << (s & 31))
define("v_lshl_or_b32", "b32", ("b32", "u32", "b32"), lambda a, s, b: (a << _amount(s, "b32", 32)) | b)

# The 64-bit shifts: defined here for both tiers; for a constant amount the interpreter runs them on the two 32-bit
# halves of a VGPR pair instead (VOp.pair_fn: a uint64 view of a pair costs several strided passes), the same
# results without 64-bit lanes.
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


define("v_lshlrev_b64", "b64", ("u32", "b64"), lambda s, v: v << _amount(s, "b64", 64), pair_fn=_lshl_pair)
define("v_lshrrev_b64", "b64", ("u32", "b64"), lambda s, v: v >> _amount(s, "b64", 64), pair_fn=_lshr_pair)
define("v_ashrrev_i64", "i64", ("u32", "i64"), lambda s, v: v >> _amount(s, "i64", 64), pair_fn=_ashr_pair)


# ---------------------------------------------------------------------------------------------- logic

for _t in ("b32", "b16"):
    _n = _t[1:]
    define(f"v_and_b{_n}", _t, (_t, _t), lambda a, b: a & b)
    define(f"v_or_b{_n}", _t, (_t, _t), lambda a, b: a | b)
    define(f"v_xor_b{_n}", _t, (_t, _t), lambda a, b: a ^ b)
    define(f"v_not_b{_n}", _t, (_t,), lambda a: ~a)
define("v_xnor_b32", "b32", ("b32", "b32"), lambda a, b: ~(a ^ b))
define("v_and_or_b32", "b32", ("b32", "b32", "b32"), lambda a, b, d: (a & b) | d)
define("v_or3_b32", "b32", ("b32", "b32", "b32"), lambda a, b, d: a | b | d)
define("v_xor3_b32", "b32", ("b32", "b32", "b32"), lambda a, b, d: a ^ b ^ d)
