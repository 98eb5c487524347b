"""VALU integer and bit semantics (adds with carry, shifts, logic, multiplies, bitfields, selects),
from the RDNA3 ISA reference pseudo-code. Sources arrive as typed [n, lanes] numpy arrays."""

from __future__ import annotations

import numpy as np

from .valu import vop

U32, U64, I64 = np.uint32, np.uint64, np.int64
M32 = np.uint64(0xFFFFFFFF)


def _u64(x):
    return np.asarray(x).astype(U64)


def _sat_u32(ctx, full):
    return np.clip(full, 0, 0xFFFFFFFF) if ctx.clamp else full & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------- moves

vop("v_mov_b32", "b32", ("b32",), lambda c, a: a)
vop("v_mov_b16", "b16", ("b16",), lambda c, a: a)
vop("v_cndmask_b32", "b32", ("b32", "b32"), lambda c, a, b, m: np.where(m, b, a), mask_in=True)
vop("v_cndmask_b16", "b16", ("b16", "b16"), lambda c, a, b, m: np.where(m, b, a), mask_in=True)


# ---------------------------------------------------------------------------------------------- add/sub


def _add_nc(c, a, b):
    return _sat_u32(c, _u64(a).astype(I64) + _u64(b).astype(I64)).astype(U32)


def _sub_nc(c, a, b):
    return _sat_u32(c, _u64(a).astype(I64) - _u64(b).astype(I64)).astype(U32)


def _add_co(c, a, b):
    full = _u64(a) + _u64(b)
    return _sat_u32(c, full.astype(I64)).astype(U32), (full >> np.uint64(32)) != 0


def _sub_co(c, a, b):
    full = _u64(a).astype(I64) - _u64(b).astype(I64)
    return _sat_u32(c, full).astype(U32), full < 0


def _add_co_ci(c, a, b, m):
    full = _u64(a) + _u64(b) + m.astype(U64)
    return _sat_u32(c, full.astype(I64)).astype(U32), (full >> np.uint64(32)) != 0


def _sub_co_ci(c, a, b, m):
    full = _u64(a).astype(I64) - _u64(b).astype(I64) - m.astype(I64)
    return _sat_u32(c, full).astype(U32), full < 0


vop("v_add_nc_u32", "u32", ("u32", "u32"), _add_nc, int_clamp=True)
vop("v_sub_nc_u32", "u32", ("u32", "u32"), _sub_nc, int_clamp=True)
vop("v_subrev_nc_u32", "u32", ("u32", "u32"), lambda c, a, b: _sub_nc(c, b, a), int_clamp=True)
vop("v_add_co_u32", "u32", ("u32", "u32"), _add_co, carry_out=True, int_clamp=True)
vop("v_sub_co_u32", "u32", ("u32", "u32"), _sub_co, carry_out=True, int_clamp=True)
vop("v_subrev_co_u32", "u32", ("u32", "u32"), lambda c, a, b: _sub_co(c, b, a), carry_out=True, int_clamp=True)
vop("v_add_co_ci_u32", "u32", ("u32", "u32"), _add_co_ci, carry_out=True, mask_in=True, int_clamp=True)
vop("v_sub_co_ci_u32", "u32", ("u32", "u32"), _sub_co_ci, carry_out=True, mask_in=True, int_clamp=True)
vop("v_subrev_co_ci_u32", "u32", ("u32", "u32"), lambda c, a, b, m: _sub_co_ci(c, b, a, m), carry_out=True,
    mask_in=True, int_clamp=True)


# ---------------------------------------------------------------------------------------------- shifts and logic


def _shift32(x):
    return _u64(x) & np.uint64(31)


vop("v_lshlrev_b32", "b32", ("b32", "b32"), lambda c, s, v: ((_u64(v) << _shift32(s)) & M32).astype(U32))
vop("v_lshrrev_b32", "b32", ("b32", "b32"), lambda c, s, v: (_u64(v) >> _shift32(s)).astype(U32))
vop("v_ashrrev_i32", "i32", ("u32", "i32"), lambda c, s, v: (v.astype(I64) >> _shift32(s).astype(I64)).astype(np.int32))
vop("v_lshlrev_b64", "b64", ("u32", "b64"), lambda c, s, v: v << (_u64(s) & np.uint64(63)))
vop("v_lshrrev_b64", "b64", ("u32", "b64"), lambda c, s, v: v >> (_u64(s) & np.uint64(63)))
vop("v_ashrrev_i64", "i64", ("u32", "i64"), lambda c, s, v: v >> (_u64(s) & np.uint64(63)).astype(I64))
vop("v_and_b32", "b32", ("b32", "b32"), lambda c, a, b: a & b)
vop("v_or_b32", "b32", ("b32", "b32"), lambda c, a, b: a | b)
vop("v_xor_b32", "b32", ("b32", "b32"), lambda c, a, b: a ^ b)
vop("v_xnor_b32", "b32", ("b32", "b32"), lambda c, a, b: ~(a ^ b))
vop("v_not_b32", "b32", ("b32",), lambda c, a: ~a)
vop("v_lshl_add_u32", "u32", ("u32", "u32", "u32"),
    lambda c, a, s, b: (((_u64(a) << (_u64(s) & np.uint64(31))) + _u64(b)) & M32).astype(U32))
vop("v_add_lshl_u32", "u32", ("u32", "u32", "u32"),
    lambda c, a, b, s: (((_u64(a) + _u64(b)) << (_u64(s) & np.uint64(31))) & M32).astype(U32))
vop("v_lshl_or_b32", "b32", ("b32", "u32", "b32"),
    lambda c, a, s, b: (((_u64(a) << (_u64(s) & np.uint64(31))) & M32) | _u64(b)).astype(U32))
vop("v_and_or_b32", "b32", ("b32", "b32", "b32"), lambda c, a, b, d: (a & b) | d)
vop("v_or3_b32", "b32", ("b32", "b32", "b32"), lambda c, a, b, d: a | b | d)
vop("v_xor3_b32", "b32", ("b32", "b32", "b32"), lambda c, a, b, d: a ^ b ^ d)
vop("v_add3_u32", "u32", ("u32", "u32", "u32"),
    lambda c, a, b, d: ((_u64(a) + _u64(b) + _u64(d)) & M32).astype(U32))


# ---------------------------------------------------------------------------------------------- multiply


def _mad_u64_u32(c, a, b, acc):
    prod = _u64(a) * _u64(b)
    full = prod + acc
    carry = full < prod
    return full, carry


def _mad_i64_i32(c, a, b, acc):
    prod = a.astype(I64) * b.astype(I64)
    full = prod.astype(U64) + acc.astype(U64)
    # carry-out is the signed overflow of the 64-bit add
    sp, sa, sf = prod < 0, acc.astype(I64) < 0, full.astype(I64) < 0
    return full.astype(I64), (sp == sa) & (sf != sp)


vop("v_mul_lo_u32", "u32", ("u32", "u32"), lambda c, a, b: ((_u64(a) * _u64(b)) & M32).astype(U32))
vop("v_mul_hi_u32", "u32", ("u32", "u32"), lambda c, a, b: ((_u64(a) * _u64(b)) >> np.uint64(32)).astype(U32))
vop("v_mul_hi_i32", "i32", ("i32", "i32"),
    lambda c, a, b: ((a.astype(I64) * b.astype(I64)) >> 32).astype(np.int32))
vop("v_mad_u64_u32", "u64", ("u32", "u32", "u64"), _mad_u64_u32, carry_out=True)
vop("v_mad_i64_i32", "i64", ("i32", "i32", "i64"), _mad_i64_i32, carry_out=True)
vop("v_mul_u32_u24", "u32", ("u32", "u32"),
    lambda c, a, b: (((_u64(a) & np.uint64(0xFFFFFF)) * (_u64(b) & np.uint64(0xFFFFFF))) & M32).astype(U32))
