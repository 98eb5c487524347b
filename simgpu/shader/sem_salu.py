"""Scalar ALU semantics (SOP1, SOP2, SOPC, SOPK), from the RDNA3 ISA reference pseudo-code.

Every function works on [n] arrays (one value per wave). Operand widths come from the decoded
instruction's table entry (dwords per operand), so one function serves the b32 and b64 forms.
"""

from __future__ import annotations

import numpy as np

from .operand import scalar_src, write_sgpr
from .semantics import register

U32, U64 = np.uint32, np.uint64
M32 = np.uint64(0xFFFFFFFF)


def _widths(inst) -> dict[str, int]:
    """Dwords per operand field, from the codec's table entry (cached on the decoded instruction)."""
    wd = inst.__dict__.get("_widths")
    if wd is None:
        wd = inst.__dict__["_widths"] = {slot[0]: slot[1] for slot in inst.info.get("ops", [])}
    return wd


def _srcs(ex, w, inst):
    wd = _widths(inst)
    out = []
    for name in ("ssrc0", "ssrc1"):
        if name in wd:
            out.append(scalar_src(ex, w, inst.fields[name], inst.literal, "b64" if wd[name] == 2 else "b32"))
    return out


def _dst_wide(inst) -> bool:
    return _widths(inst).get("sdst", 1) == 2


def _u(x, wide: bool):
    return np.asarray(x).astype(U64 if wide else U32)


def _i(x, wide: bool):
    return _u(x, wide).view(np.int64 if wide else np.int32)


def _set_scc(ex, w, cond) -> None:
    ex.st.scc[w] = np.asarray(cond).astype(U32)


# ---------------------------------------------------------------------------------------------- SOP2


def _arith(kind: str):
    def fn(ex, w, inst):
        a, b = _srcs(ex, w, inst)
        a64, b64 = a.astype(U64), b.astype(U64)
        scc = ex.st.scc[w].astype(U64)
        if kind == "add_u":
            r = a64 + b64
            carry = r >> np.uint64(32)
        elif kind == "addc":
            r = a64 + b64 + scc
            carry = r >> np.uint64(32)
        elif kind == "sub_u":
            r = a64 - b64
            carry = (b64 > a64)
        elif kind == "subb":
            r = a64 - b64 - scc
            carry = (b64 + scc > a64)
        else:  # signed add/sub: SCC = signed overflow
            ai, bi = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
            full = ai + bi if kind == "add_i" else ai - bi
            r = full.astype(U64)
            carry = (full > 0x7FFFFFFF) | (full < -0x80000000)
        write_sgpr(ex, w, inst.fields["sdst"], (r & M32).astype(U32))
        _set_scc(ex, w, carry != 0)
    return fn


def _binop(op, scc_rule="nonzero", signed=False):
    """A two-source op whose result sets SCC by `scc_rule`."""
    def fn(ex, w, inst):
        a, b = _srcs(ex, w, inst)
        wide = _dst_wide(inst)
        r, scc = op(a, b, wide, ex.st.scc[w])
        r = _u(r, wide)
        write_sgpr(ex, w, inst.fields["sdst"], r, wide)
        if scc_rule == "nonzero":
            _set_scc(ex, w, r != 0)
        elif scc_rule == "op":
            _set_scc(ex, w, scc)
    return fn


def _shift_amount(b, wide):
    return (b.astype(U64) & np.uint64(63 if wide else 31))


def _lshl(a, b, wide, scc):
    return (a.astype(U64) << _shift_amount(b, wide)) & (np.uint64(0xFFFFFFFFFFFFFFFF) if wide else M32), None


def _lshr(a, b, wide, scc):
    return a.astype(U64) >> _shift_amount(b, wide), None


def _ashr(a, b, wide, scc):
    return (_i(a, wide).astype(np.int64) >> _shift_amount(b, wide).astype(np.int64)), None


def _lshl_add(n):
    def op(a, b, wide, scc):
        full = ((a.astype(U64) << np.uint64(n)) & M32) + b.astype(U64)
        return full & M32, (full >> np.uint64(32)) != 0
    return op


def _minmax(is_min: bool, signed: bool):
    def op(a, b, wide, scc):
        x, y = (_i(a, wide), _i(b, wide)) if signed else (a, b)
        pick = (x < y) if is_min else (x >= y)
        return np.where(pick, a, b), pick
    return op


def _bfe(signed: bool):
    def op(a, b, wide, scc):
        bits = 64 if wide else 32
        off = (b.astype(np.int64) & (bits - 1))
        width = (b.astype(np.int64) >> 16) & 0x7F
        width = np.minimum(width, bits)
        v = a.astype(U64) >> off.astype(U64)
        mask = np.where(width >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                        (np.uint64(1) << np.minimum(width, 63).astype(U64)) - np.uint64(1))
        v = v & mask
        if signed:
            sign = np.where(width > 0, (v >> np.maximum(width - 1, 0).astype(U64)) & np.uint64(1), 0)
            ext = np.where((sign == 1) & (width < 64), ~mask, np.uint64(0))
            v = v | ext
        if not wide:
            v = v & M32
        return v, None
    return op


def _bfm(a, b, wide, scc):
    bits = 63 if wide else 31
    w_ = a.astype(U64) & np.uint64(bits)
    o = b.astype(U64) & np.uint64(bits)
    v = ((np.uint64(1) << w_) - np.uint64(1)) << o
    return (v if wide else v & M32), None


def _mul(a, b, wide, scc):
    return (a.astype(U64) * b.astype(U64)) & M32, None


def _mul_hi_u(a, b, wide, scc):
    return (a.astype(U64) * b.astype(U64)) >> np.uint64(32), None


def _mul_hi_i(a, b, wide, scc):
    p = a.view(np.int32).astype(np.int64) * b.view(np.int32).astype(np.int64)
    return (p >> 32).astype(np.int64).astype(U64) & M32, None


def _absdiff(a, b, wide, scc):
    d = np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))
    return d.astype(U64) & M32, None


def _pack(sel0: int, sel1: int):
    def op(a, b, wide, scc):
        lo = (a.astype(U64) >> np.uint64(16 * sel0)) & np.uint64(0xFFFF)
        hi = (b.astype(U64) >> np.uint64(16 * sel1)) & np.uint64(0xFFFF)
        return lo | (hi << np.uint64(16)), None
    return op


def _logic(f):
    def op(a, b, wide, scc):
        r = f(a.astype(U64), b.astype(U64))
        return r & (np.uint64(0xFFFFFFFFFFFFFFFF) if wide else M32), None
    return op


def _cselect(ex, w, inst):
    a, b = _srcs(ex, w, inst)
    wide = _dst_wide(inst)
    write_sgpr(ex, w, inst.fields["sdst"], np.where(ex.st.scc[w] != 0, a, b), wide)


LOGIC = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
         "nand": lambda a, b: ~(a & b), "nor": lambda a, b: ~(a | b), "xnor": lambda a, b: ~(a ^ b),
         "and_not1": lambda a, b: a & ~b, "or_not1": lambda a, b: a | ~b}

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
