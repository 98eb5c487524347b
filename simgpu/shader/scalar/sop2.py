"""Scalar ALU semantics of SOP2, from the RDNA3 ISA reference pseudo-code.

Each op is written once over values of the scalar unit (svalue: a Python int for one wave, a uint64
array for many). Operand widths come from the decoded instruction's table entry, so one function
serves the b32 and b64 forms.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.scalar.alu import dst_wide, read_scc, sources, write_scc, write_sgpr
from simgpu.shader.scalar.value import M32, inv, select, signed, unsigned, width_mask
from simgpu.shader.semantics import register


def _arith(kind: str):
    """32-bit add/sub: SCC is the carry (unsigned forms) or the signed overflow (_i32 forms)."""
    def fn(ex, w, inst):
        a, b = sources(ex, w, inst)
        if kind == "add_u":
            full = a + b
            carry = full > M32
        elif kind == "addc":
            full = a + b + read_scc(ex, w)
            carry = full > M32
        elif kind == "sub_u":
            full, carry = a - b, b > a
        elif kind == "subb":
            borrow = b + read_scc(ex, w)
            full, carry = a - borrow, borrow > a
        else:
            full = signed(a, 32) + signed(b, 32) if kind == "add_i" else signed(a, 32) - signed(b, 32)
            carry = (full > 0x7FFFFFFF) | (full < -0x80000000)
        write_sgpr(ex, w, inst.fields["sdst"], unsigned(full, 32))
        write_scc(ex, w, carry)
    return fn


def _binop(op, scc_rule: str | None = "nonzero"):
    """A two-source op `op(a, b, bits) -> (result, scc)`; SCC = result != 0, or the op's, or kept."""
    def fn(ex, w, inst):
        a, b = sources(ex, w, inst)
        wide = dst_wide(inst)
        r, scc = op(a, b, 64 if wide else 32)
        r = r & width_mask(wide)
        write_sgpr(ex, w, inst.fields["sdst"], r, wide)
        if scc_rule == "nonzero":
            write_scc(ex, w, r != 0)
        elif scc_rule == "op":
            write_scc(ex, w, scc)
    return fn


def _lshl(a, b, bits):
    return a << (b & (bits - 1)), None


def _lshr(a, b, bits):
    return a >> (b & (bits - 1)), None


def _ashr(a, b, bits):
    return arith_shift_right(a, b & (bits - 1), bits), None


def arith_shift_right(x, amount, bits: int):
    """x >> amount with the sign bit of a `bits`-wide x shifted in."""
    s = signed(x, bits)
    if not isinstance(amount, int):  # an int64 shift of an int64 value (numpy refuses mixed signedness)
        amount = amount.astype(np.int64)
    return unsigned(s >> amount, bits)


def _lshl_add(n: int):
    """S_LSHLn_ADD_U32: tmp = (64'U(S0) << n) + S1; SCC = tmp >= 2**32 (the carry out of the shift and the add)."""
    def op(a, b, bits):
        full = (a << n) + b  # a < 2**32: the shifted value fits in 64 bits of either kind
        return full, full > M32
    return op


def _minmax(is_min: bool, is_signed: bool):
    def op(a, b, bits):
        x, y = (signed(a, bits), signed(b, bits)) if is_signed else (a, b)
        pick = (x < y) if is_min else (x >= y)
        return select(pick, a, b), pick
    return op


def _field_mask(width):
    """Ones in the low `width` bits, width 0..64."""
    return select(width >= 64, width_mask(True), (1 << (width & 63)) - 1)


def _bfe(is_signed: bool):
    """Bit-field extract: offset in S1[5:0] (S1[4:0] for 32 bits), width in S1[22:16].

    The signed forms shift the *signed* source (the reference: `tmp = (S0.i >> offset) & mask;
    D = signextFromBit(tmp, width)`), so a field running past the top of the register takes copies
    of the sign bit, and its own top bit is then the source's sign."""
    def op(a, b, bits):
        off = b & (bits - 1)
        width = (b >> 16) & 0x7F
        width = select(width > bits, bits, width)
        mask = _field_mask(width)
        v = (arith_shift_right(a, off, bits) if is_signed else a >> off) & mask
        if is_signed:
            sign = (v >> ((width + 63) & 63)) & 1  # the field's top bit (0 for an empty field)
            v = v | select((sign == 1) & (width < 64), inv(mask), 0)
        return v, None
    return op


def _bfm(a, b, bits):
    return ((1 << (a & (bits - 1))) - 1) << (b & (bits - 1)), None


def _mul(a, b, bits):
    return a * b, None


def _mul_hi_u(a, b, bits):
    return (a * b) >> 32, None


def _mul_hi_i(a, b, bits):
    return unsigned((signed(a, 32) * signed(b, 32)) >> 32, 32), None


def _absdiff(a, b, bits):
    """D = S0 - S1 wrapped to 32 bits, negated when that is negative (the reference's functional
    examples: (0x80000000, 0) -> 0x80000000, (0x80000000, 1) -> 0x7fffffff): not the true magnitude."""
    d = signed(unsigned(signed(a, 32) - signed(b, 32), 32), 32)
    return unsigned(select(d < 0, -d, d), 32), None


def _pack(sel0: int, sel1: int):
    def op(a, b, bits):
        return ((a >> (16 * sel0)) & 0xFFFF) | (((b >> (16 * sel1)) & 0xFFFF) << 16), None
    return op


def _cselect(ex, w, inst):
    a, b = sources(ex, w, inst)
    write_sgpr(ex, w, inst.fields["sdst"], select(read_scc(ex, w) != 0, a, b), dst_wide(inst))


def _logic(f):
    def op(a, b, bits):
        return f(a, b), None
    return op


LOGIC = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
         "nand": lambda a, b: inv(a & b), "nor": lambda a, b: inv(a | b), "xnor": lambda a, b: inv(a ^ b),
         "and_not1": lambda a, b: a & inv(b), "or_not1": lambda a, b: a | inv(b)}

for _k in ("add_u", "sub_u"):
    register(f"s_{_k[:3]}_u32", _arith(_k))
register("s_add_i32", _arith("add_i"))
register("s_sub_i32", _arith("sub_i"))
register("s_addc_u32", _arith("addc"))
register("s_subb_u32", _arith("subb"))
register("s_absdiff_i32", _binop(_absdiff))
for _w in ("b32", "b64"):
    register(f"s_lshl_{_w}", _binop(_lshl))
    register(f"s_lshr_{_w}", _binop(_lshr))
    for _name, _f in LOGIC.items():
        register(f"s_{_name}_{_w}", _binop(_logic(_f)))
    register(f"s_cselect_{_w}", _cselect)
register("s_ashr_i32", _binop(_ashr))
register("s_ashr_i64", _binop(_ashr))
for _n in range(1, 5):
    register(f"s_lshl{_n}_add_u32", _binop(_lshl_add(_n), "op"))
register("s_min_i32", _binop(_minmax(True, True), "op"))
register("s_min_u32", _binop(_minmax(True, False), "op"))
register("s_max_i32", _binop(_minmax(False, True), "op"))
register("s_max_u32", _binop(_minmax(False, False), "op"))
register("s_bfe_u32", _binop(_bfe(False)))
register("s_bfe_i32", _binop(_bfe(True)))
register("s_bfe_u64", _binop(_bfe(False)))
register("s_bfe_i64", _binop(_bfe(True)))
register("s_bfm_b32", _binop(_bfm, None))
register("s_bfm_b64", _binop(_bfm, None))
register("s_mul_i32", _binop(_mul, None))
register("s_mul_hi_u32", _binop(_mul_hi_u, None))
register("s_mul_hi_i32", _binop(_mul_hi_i, None))
for _s0, _s1, _n in ((0, 0, "ll"), (0, 1, "lh"), (1, 1, "hh"), (1, 0, "hl")):
    register(f"s_pack_{_n}_b32_b16", _binop(_pack(_s0, _s1), None))
