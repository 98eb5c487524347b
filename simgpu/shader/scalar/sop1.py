"""Scalar semantics of SOP1 (moves, bit counts, saveexec, PC), SOPC (compares) and SOPK (16-bit
immediate forms), from the RDNA3 ISA reference pseudo-code. Values are those of the scalar unit
(svalue: a Python int for one wave, a uint64 array for many); the M0-indexed moves and the PC
instructions work on arrays over waves."""

from __future__ import annotations

import operator

import numpy as np

from simgpu.shader.operand import scalar_src
from simgpu.shader.operand import write_sgpr as write_sgpr_array
from simgpu.shader.scalar import value as sv
from simgpu.shader.scalar.alu import dst_wide, read_scc, read_sgpr, source_wide, sources, write_scc, write_sgpr
from simgpu.shader.semantics import register
from simgpu.shader.state import EXEC_LO

U32, U64 = np.uint32, np.uint64


def _unary(op, scc_rule=None):
    """A one-source op `op(x, bits) -> result` (bits: the source's width); SCC = result != 0 or kept."""
    def fn(ex, w, inst):
        (a,) = sources(ex, w, inst)
        src_bits = 64 if source_wide(inst, 0) else 32
        wide = dst_wide(inst)
        r = op(a, src_bits) & sv.width_mask(wide)
        write_sgpr(ex, w, inst.fields["sdst"], r, wide)
        if scc_rule == "nonzero":
            write_scc(ex, w, r != 0)
    return fn


def _cls(x, bits):
    """Leading bits equal to the sign bit (counted as leading zeros of x or NOT x), -1 when all are."""
    flipped = sv.select((x >> (bits - 1)) & 1 == 1, sv.inv(x) & sv.width_mask(bits == 64), x)
    return sv.count_leading_zeros(flipped, bits)


def _sext(bits):
    def op(x, src_bits):
        return sv.unsigned(sv.signed(x, bits), 32)
    return op


def _abs(x, bits):
    v = sv.signed(x, 32)
    return sv.unsigned(sv.select(v < 0, -v, v), 32)


def _bitset(value: int):
    def fn(ex, w, inst):
        wide = dst_wide(inst)
        (a,) = sources(ex, w, inst)
        cur = read_sgpr(ex, w, inst.fields["sdst"], wide)
        bit = 1 << (a & (63 if wide else 31))
        r = (cur | bit) if value else (cur & sv.inv(bit))
        write_sgpr(ex, w, inst.fields["sdst"], r & sv.width_mask(wide), wide)
    return fn


def _cmov(ex, w, inst):
    (a,) = sources(ex, w, inst)
    wide = dst_wide(inst)
    cur = read_sgpr(ex, w, inst.fields["sdst"], wide)
    write_sgpr(ex, w, inst.fields["sdst"], sv.select(read_scc(ex, w) != 0, a, cur), wide)


def _quadmask(x, bits):
    return sv.compress_nibbles(sv.nibbles_any(x & sv.width_mask(bits == 64)))


def _wqm(x, bits):
    return sv.nibbles_any(x & sv.width_mask(bits == 64)) * 0xF


SAVEEXEC = {"and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
            "nand": lambda s, e: sv.inv(s & e), "nor": lambda s, e: sv.inv(s | e),
            "xnor": lambda s, e: sv.inv(s ^ e), "and_not0": lambda s, e: sv.inv(s) & e,
            "or_not0": lambda s, e: sv.inv(s) | e, "and_not1": lambda s, e: s & sv.inv(e),
            "or_not1": lambda s, e: s | sv.inv(e)}


def _saveexec(f, wrexec: bool = False):
    """EXEC = f(S0, EXEC); SDST = the old EXEC (or the new one, for the wrexec forms); SCC = EXEC != 0."""
    def fn(ex, w, inst):
        wide = dst_wide(inst)
        (s,) = sources(ex, w, inst)
        old = read_sgpr(ex, w, EXEC_LO, wide)
        new = f(s, old) & sv.width_mask(wide)
        write_sgpr(ex, w, EXEC_LO, new, wide)
        write_sgpr(ex, w, inst.fields["sdst"], new if wrexec else old, wide)
        write_scc(ex, w, new != 0)
    return fn


def _movrel(kind: str):
    """s_movrels/s_movreld/s_movrelsd_2: SGPR moves indexed by M0 (arrays: the index differs per wave)."""
    def fn(ex, w, inst):
        wide = dst_wide(inst)
        m0 = ex.st.sgpr[w, ex.m0].astype(np.int64)
        n = 2 if wide else 1
        if kind == "s":
            idx = inst.fields["ssrc0"] + m0
            vals = [ex.st.sgpr[w, np.clip(idx + k, 0, 127)] for k in range(n)]
            for k in range(n):
                write_sgpr_array(ex, w, inst.fields["sdst"] + k, vals[k])
        elif kind == "d":
            s = scalar_src(ex, w, inst.fields["ssrc0"], inst.literal, "b64" if wide else "b32").astype(U64)
            idx = inst.fields["sdst"] + m0
            for k in range(n):
                part = (s >> np.uint64(32 * k)) & np.uint64(0xFFFFFFFF)
                ex.st.sgpr[w, np.clip(idx + k, 0, 105)] = part.astype(U32)
        else:  # movrelsd_2: source offset M0[9:0], destination offset M0[25:16]
            src = inst.fields["ssrc0"] + (m0 & 0x3FF)
            dst = inst.fields["sdst"] + ((m0 >> 16) & 0x3FF)
            ex.st.sgpr[w, np.clip(dst, 0, 105)] = ex.st.sgpr[w, np.clip(src, 0, 127)]
    return fn


def _return_address(ex, w, inst, next_pc: int) -> None:
    write_sgpr_array(ex, w, inst.fields["sdst"], (ex.st.pc[w] + next_pc).astype(U64), True)


def _jump(ex, w, inst) -> None:
    target = scalar_src(ex, w, inst.fields["ssrc0"], inst.literal, "b64")
    ex.st.pc[w] = target.astype(np.int64)


def _getpc(ex, w, inst):
    _return_address(ex, w, inst, inst.size)


def _setpc(ex, w, inst):
    _jump(ex, w, inst)
    return True


def _swappc(ex, w, inst):
    target = scalar_src(ex, w, inst.fields["ssrc0"], inst.literal, "b64")
    _return_address(ex, w, inst, inst.size)
    ex.st.pc[w] = target.astype(np.int64)
    return True


def _sendmsg_rtn(ex, w, inst):
    msg = inst.fields["ssrc0"]
    value = ex.engine.clock.timestamp() if msg == 0x83 else 0  # MSG_RTN_GET_REALTIME; others read as 0
    wide = dst_wide(inst)
    write_sgpr(ex, w, inst.fields["sdst"], value & sv.width_mask(wide), wide)


def _bcnt0(x, bits):
    return bits - sv.popcount(x)


register("s_mov_b32", _unary(lambda x, bits: x))
register("s_mov_b64", _unary(lambda x, bits: x))
register("s_cmov_b32", _cmov)
register("s_cmov_b64", _cmov)
register("s_brev_b32", _unary(sv.bit_reverse))
register("s_brev_b64", _unary(sv.bit_reverse))
register("s_ctz_i32_b32", _unary(sv.count_trailing_zeros))
register("s_ctz_i32_b64", _unary(sv.count_trailing_zeros))
register("s_clz_i32_u32", _unary(sv.count_leading_zeros))
register("s_clz_i32_u64", _unary(sv.count_leading_zeros))
register("s_cls_i32", _unary(_cls))
register("s_cls_i32_i64", _unary(_cls))
register("s_sext_i32_i8", _unary(_sext(8)))
register("s_sext_i32_i16", _unary(_sext(16)))
register("s_bitset0_b32", _bitset(0))
register("s_bitset0_b64", _bitset(0))
register("s_bitset1_b32", _bitset(1))
register("s_bitset1_b64", _bitset(1))
register("s_bitreplicate_b64_b32", _unary(lambda x, bits: sv.spread_bits(x) * 3))
register("s_abs_i32", _unary(_abs, "nonzero"))
register("s_bcnt1_i32_b32", _unary(lambda x, bits: sv.popcount(x), "nonzero"))
register("s_bcnt1_i32_b64", _unary(lambda x, bits: sv.popcount(x), "nonzero"))
register("s_bcnt0_i32_b32", _unary(_bcnt0, "nonzero"))
register("s_bcnt0_i32_b64", _unary(_bcnt0, "nonzero"))
register("s_quadmask_b32", _unary(_quadmask, "nonzero"))
register("s_quadmask_b64", _unary(_quadmask, "nonzero"))
register("s_wqm_b32", _unary(_wqm, "nonzero"))
register("s_wqm_b64", _unary(_wqm, "nonzero"))
register("s_not_b32", _unary(lambda x, bits: sv.inv(x), "nonzero"))
register("s_not_b64", _unary(lambda x, bits: sv.inv(x), "nonzero"))
for _name, _f in SAVEEXEC.items():
    register(f"s_{_name}_saveexec_b32", _saveexec(_f))
    register(f"s_{_name}_saveexec_b64", _saveexec(_f))
for _name in ("and_not0", "and_not1"):
    register(f"s_{_name}_wrexec_b32", _saveexec(SAVEEXEC[_name], True))
    register(f"s_{_name}_wrexec_b64", _saveexec(SAVEEXEC[_name], True))
register("s_movrels_b32", _movrel("s"))
register("s_movrels_b64", _movrel("s"))
register("s_movreld_b32", _movrel("d"))
register("s_movreld_b64", _movrel("d"))
register("s_movrelsd_2_b32", _movrel("sd2"))
register("s_getpc_b64", _getpc)
register("s_setpc_b64", _setpc)
register("s_swappc_b64", _swappc)
register("s_rfe_b64", _setpc)
register("s_sendmsg_rtn_b32", _sendmsg_rtn)
register("s_sendmsg_rtn_b64", _sendmsg_rtn)


# ---------------------------------------------------------------------------------------------- SOPC

_CMP = {"eq": operator.eq, "lg": operator.ne, "gt": operator.gt, "ge": operator.ge, "lt": operator.lt,
        "le": operator.le}


def _cmp(op, is_signed: bool):
    def fn(ex, w, inst):
        a, b = sources(ex, w, inst)
        if is_signed:
            a, b = sv.signed(a, 32), sv.signed(b, 32)
        write_scc(ex, w, op(a, b))
    return fn


def _bitcmp(value: int):
    def fn(ex, w, inst):
        a, b = sources(ex, w, inst)
        bits = 64 if source_wide(inst, 0) else 32
        write_scc(ex, w, (a >> (b & (bits - 1))) & 1 == value)
    return fn


for _c, _f in _CMP.items():
    register(f"s_cmp_{_c}_i32", _cmp(_f, True))
    register(f"s_cmp_{_c}_u32", _cmp(_f, False))
register("s_cmp_eq_u64", _cmp(operator.eq, False))
register("s_cmp_lg_u64", _cmp(operator.ne, False))
register("s_bitcmp0_b32", _bitcmp(0))
register("s_bitcmp1_b32", _bitcmp(1))
register("s_bitcmp0_b64", _bitcmp(0))
register("s_bitcmp1_b64", _bitcmp(1))


# ---------------------------------------------------------------------------------------------- SOPK


def _simm(inst, is_signed: bool) -> int:
    v = inst.fields["simm16"]
    return v - 0x10000 if is_signed and v & 0x8000 else v


def _movk(cond: bool):
    def fn(ex, w, inst):
        value = _simm(inst, True) & sv.M32
        if cond:
            value = sv.select(read_scc(ex, w) != 0, value, read_sgpr(ex, w, inst.fields["sdst"]))
        write_sgpr(ex, w, inst.fields["sdst"], value)
    return fn


def _cmpk(op, is_signed: bool):
    def fn(ex, w, inst):
        a = read_sgpr(ex, w, inst.fields["sdst"])
        write_scc(ex, w, op(sv.signed(a, 32), _simm(inst, True)) if is_signed else op(a, _simm(inst, False)))
    return fn


def _addk(ex, w, inst):
    full = sv.signed(read_sgpr(ex, w, inst.fields["sdst"]), 32) + _simm(inst, True)
    write_sgpr(ex, w, inst.fields["sdst"], sv.unsigned(full, 32))
    write_scc(ex, w, (full > 0x7FFFFFFF) | (full < -0x80000000))


def _mulk(ex, w, inst):
    a = sv.signed(read_sgpr(ex, w, inst.fields["sdst"]), 32)
    write_sgpr(ex, w, inst.fields["sdst"], sv.unsigned(a * _simm(inst, True), 32))


def _call(ex, w, inst):
    _return_address(ex, w, inst, 4)
    ex.st.pc[w] = ex.st.pc[w] + 4 + 4 * _simm(inst, True)
    return True


register("s_movk_i32", _movk(False))
register("s_cmovk_i32", _movk(True))
for _c, _f in _CMP.items():
    register(f"s_cmpk_{_c}_i32", _cmpk(_f, True))
    register(f"s_cmpk_{_c}_u32", _cmpk(_f, False))
register("s_addk_i32", _addk)
register("s_mulk_i32", _mulk)
register("s_call_b64", _call)
for _nop in ("s_version", "s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt"):
    register(_nop, lambda ex, w, inst: None)  # memory is coherent at each step in the simulator
