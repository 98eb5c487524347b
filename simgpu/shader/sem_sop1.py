"""Scalar semantics of SOP1 (moves, bit counts, saveexec, PC), SOPC (compares) and SOPK (16-bit
immediate forms), from the RDNA3 ISA reference pseudo-code. Values are [n] arrays, one per wave."""

from __future__ import annotations

import numpy as np

from .operand import scalar_src, write_sgpr
from .sem_salu import _dst_wide, _i, _set_scc, _srcs, _u, _widths
from .semantics import register
from .state import EXEC_LO, M0

U32, U64 = np.uint32, np.uint64
ALL64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mask(wide: bool):
    return ALL64 if wide else np.uint64(0xFFFFFFFF)


def _unary(op, scc_rule=None):
    def fn(ex, w, inst):
        (a,) = _srcs(ex, w, inst)
        src_wide = _widths(inst).get("ssrc0", 1) == 2
        r = op(a.astype(U64), src_wide, ex, w)
        wide = _dst_wide(inst)
        r = np.asarray(r).astype(U64) & _mask(wide)
        write_sgpr(ex, w, inst.fields["sdst"], r, wide)
        if scc_rule == "nonzero":
            _set_scc(ex, w, r != 0)
    return fn


def _popcount(x):
    return np.unpackbits(np.ascontiguousarray(x, U64).view(np.uint8)).reshape(len(x), 64).sum(axis=1).astype(U64)


def _brev(x, wide, ex, w):
    bits = np.unpackbits(np.ascontiguousarray(x, U64).view(np.uint8), bitorder="little").reshape(len(x), 64)
    n = 64 if wide else 32
    rev = bits[:, :n][:, ::-1]
    return np.packbits(np.pad(rev, ((0, 0), (0, 64 - n))), axis=1, bitorder="little").view(U64).ravel()


def _ctz(x, wide, ex, w):
    n = 64 if wide else 32
    bits = np.unpackbits(np.ascontiguousarray(x, U64).view(np.uint8), bitorder="little").reshape(len(x), 64)[:, :n]
    any_ = bits.any(axis=1)
    return np.where(any_, bits.argmax(axis=1), -1).astype(np.int64).astype(U64)


def _clz(x, wide, ex, w):
    n = 64 if wide else 32
    bits = np.unpackbits(np.ascontiguousarray(x, U64).view(np.uint8), bitorder="little").reshape(len(x), 64)[:, :n]
    any_ = bits.any(axis=1)
    return np.where(any_, bits[:, ::-1].argmax(axis=1), -1).astype(np.int64).astype(U64)


def _cls(x, wide, ex, w):
    n = 64 if wide else 32
    sign = (x >> np.uint64(n - 1)) & np.uint64(1)
    flipped = np.where(sign == 1, ~x & _mask(wide), x)
    lz = _clz(flipped, wide, ex, w).astype(np.int64)
    return np.where(lz < 0, -1, lz).astype(np.int64).astype(U64)


def _sext(bits):
    def op(x, wide, ex, w):
        v = x & np.uint64((1 << bits) - 1)
        s = (v >> np.uint64(bits - 1)) & np.uint64(1)
        return np.where(s == 1, v | (np.uint64(0xFFFFFFFF) ^ np.uint64((1 << bits) - 1)), v)
    return op


def _bitset(value: int):
    def fn(ex, w, inst):
        wide = _dst_wide(inst)
        (a,) = _srcs(ex, w, inst)
        cur = scalar_src(ex, w, inst.fields["sdst"], None, "b64" if wide else "b32").astype(U64)
        bit = np.uint64(1) << (a.astype(U64) & np.uint64(63 if wide else 31))
        r = (cur | bit) if value else (cur & ~bit)
        write_sgpr(ex, w, inst.fields["sdst"], r & _mask(wide), wide)
    return fn


def _bitreplicate(x, wide, ex, w):
    bits = np.unpackbits(np.ascontiguousarray(x, U64).view(np.uint8), bitorder="little").reshape(len(x), 64)[:, :32]
    rep = np.repeat(bits, 2, axis=1)
    return np.packbits(rep, axis=1, bitorder="little").view(U64).ravel()


def _quadmask(x, wide, ex, w):
    n = 64 if wide else 32
    bits = np.unpackbits(np.ascontiguousarray(x, U64).view(np.uint8), bitorder="little").reshape(len(x), 64)[:, :n]
    q = bits.reshape(len(x), n // 4, 4).any(axis=2).astype(np.uint8)
    return np.packbits(np.pad(q, ((0, 0), (0, 64 - n // 4))), axis=1, bitorder="little").view(U64).ravel()


def _wqm(x, wide, ex, w):
    n = 64 if wide else 32
    bits = np.unpackbits(np.ascontiguousarray(x, U64).view(np.uint8), bitorder="little").reshape(len(x), 64)[:, :n]
    q = np.repeat(bits.reshape(len(x), n // 4, 4).any(axis=2), 4, axis=1).astype(np.uint8)
    return np.packbits(np.pad(q, ((0, 0), (0, 64 - n))), axis=1, bitorder="little").view(U64).ravel()


SAVEEXEC = {"and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
            "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
            "and_not0": lambda s, e: ~s & e, "or_not0": lambda s, e: ~s | e,
            "and_not1": lambda s, e: s & ~e, "or_not1": lambda s, e: s | ~e}


def _saveexec(f, wrexec: bool = False):
    def fn(ex, w, inst):
        wide = _dst_wide(inst)
        (s,) = _srcs(ex, w, inst)
        old = ex.st.mask64(w, EXEC_LO) if wide else ex.st.sgpr[w, EXEC_LO].astype(U64)
        new = f(s.astype(U64), old) & _mask(wide)
        if wide:
            ex.st.set_mask64(w, EXEC_LO, new)
        else:
            ex.st.sgpr[w, EXEC_LO] = new.astype(U32)
        write_sgpr(ex, w, inst.fields["sdst"], new if wrexec else old, wide)
        _set_scc(ex, w, new != 0)
    return fn


def _movrel(kind: str):
    def fn(ex, w, inst):
        wide = _dst_wide(inst)
        m0 = ex.st.sgpr[w, M0].astype(np.int64)
        n = 2 if wide else 1
        if kind == "s":
            idx = inst.fields["ssrc0"] + m0
            vals = [ex.st.sgpr[w, np.clip(idx + k, 0, 127)] for k in range(n)]
            for k in range(n):
                write_sgpr(ex, w, inst.fields["sdst"] + k, vals[k])
        elif kind == "d":
            (s,) = _srcs(ex, w, inst)
            idx = inst.fields["sdst"] + m0
            for k in range(n):
                part = (s.astype(U64) >> np.uint64(32 * k)) & np.uint64(0xFFFFFFFF)
                ex.st.sgpr[w, np.clip(idx + k, 0, 105)] = part.astype(U32)
        else:  # movrelsd_2: source offset M0[9:0], destination offset M0[25:16]
            src = inst.fields["ssrc0"] + (m0 & 0x3FF)
            dst = inst.fields["sdst"] + ((m0 >> 16) & 0x3FF)
            ex.st.sgpr[w, np.clip(dst, 0, 105)] = ex.st.sgpr[w, np.clip(src, 0, 127)]
    return fn


def _getpc(ex, w, inst):
    write_sgpr(ex, w, inst.fields["sdst"], (ex.st.pc[w] + inst.size).astype(U64), True)


def _setpc(ex, w, inst):
    (s,) = _srcs(ex, w, inst)
    ex.st.pc[w] = s.astype(np.int64)
    return True


def _swappc(ex, w, inst):
    (s,) = _srcs(ex, w, inst)
    write_sgpr(ex, w, inst.fields["sdst"], (ex.st.pc[w] + inst.size).astype(U64), True)
    ex.st.pc[w] = s.astype(np.int64)
    return True


def _sendmsg_rtn(ex, w, inst):
    msg = inst.fields["ssrc0"]
    value = ex.engine.clock.timestamp() if msg == 0x83 else 0  # MSG_RTN_GET_REALTIME; others read as 0
    write_sgpr(ex, w, inst.fields["sdst"], np.full(len(w), value, U64) & _mask(_dst_wide(inst)), _dst_wide(inst))


register("s_mov_b32", _unary(lambda x, wd, ex, w: x))
register("s_mov_b64", _unary(lambda x, wd, ex, w: x))
for _wd in ("b32", "b64"):
    register(f"s_cmov_{_wd}", lambda ex, w, inst: _unary(lambda x, wd, e, ww: x)(ex, w[ex.st.scc[w] != 0], inst))
register("s_brev_b32", _unary(_brev))
register("s_brev_b64", _unary(_brev))
register("s_ctz_i32_b32", _unary(_ctz))
register("s_ctz_i32_b64", _unary(_ctz))
register("s_clz_i32_u32", _unary(_clz))
register("s_clz_i32_u64", _unary(_clz))
register("s_cls_i32", _unary(_cls))
register("s_cls_i32_i64", _unary(_cls))
register("s_sext_i32_i8", _unary(_sext(8)))
register("s_sext_i32_i16", _unary(_sext(16)))
register("s_bitset0_b32", _bitset(0))
register("s_bitset0_b64", _bitset(0))
register("s_bitset1_b32", _bitset(1))
register("s_bitset1_b64", _bitset(1))
register("s_bitreplicate_b64_b32", _unary(_bitreplicate))
register("s_abs_i32", _unary(lambda x, wd, ex, w: np.abs(_i(x & np.uint64(0xFFFFFFFF), False).astype(np.int64)),
                             "nonzero"))
register("s_bcnt1_i32_b32", _unary(lambda x, wd, ex, w: _popcount(x), "nonzero"))
register("s_bcnt1_i32_b64", _unary(lambda x, wd, ex, w: _popcount(x), "nonzero"))
register("s_bcnt0_i32_b32", _unary(lambda x, wd, ex, w: 32 - _popcount(x & np.uint64(0xFFFFFFFF)), "nonzero"))
register("s_bcnt0_i32_b64", _unary(lambda x, wd, ex, w: 64 - _popcount(x), "nonzero"))
register("s_quadmask_b32", _unary(_quadmask, "nonzero"))
register("s_quadmask_b64", _unary(_quadmask, "nonzero"))
register("s_wqm_b32", _unary(_wqm, "nonzero"))
register("s_wqm_b64", _unary(_wqm, "nonzero"))
register("s_not_b32", _unary(lambda x, wd, ex, w: ~x, "nonzero"))
register("s_not_b64", _unary(lambda x, wd, ex, w: ~x, "nonzero"))
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

_CMP = {"eq": np.equal, "lg": np.not_equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
        "le": np.less_equal}


def _cmp(op, signed: bool):
    def fn(ex, w, inst):
        a, b = _srcs(ex, w, inst)
        wide = a.dtype == U64
        x, y = (_i(a, wide), _i(b, wide)) if signed else (a, b)
        _set_scc(ex, w, op(x, y))
    return fn


def _bitcmp(value: int):
    def fn(ex, w, inst):
        a, b = _srcs(ex, w, inst)
        wide = a.dtype == U64
        bit = (a.astype(U64) >> (b.astype(U64) & np.uint64(63 if wide else 31))) & np.uint64(1)
        _set_scc(ex, w, bit == value)
    return fn


for _c, _f in _CMP.items():
    register(f"s_cmp_{_c}_i32", _cmp(_f, True))
    register(f"s_cmp_{_c}_u32", _cmp(_f, False))
register("s_cmp_eq_u64", _cmp(np.equal, False))
register("s_cmp_lg_u64", _cmp(np.not_equal, False))
register("s_bitcmp0_b32", _bitcmp(0))
register("s_bitcmp1_b32", _bitcmp(1))
register("s_bitcmp0_b64", _bitcmp(0))
register("s_bitcmp1_b64", _bitcmp(1))


# ---------------------------------------------------------------------------------------------- SOPK


def _simm(inst, signed: bool) -> int:
    v = inst.fields["simm16"]
    return v - 0x10000 if signed and v & 0x8000 else v


def _movk(cond: bool):
    def fn(ex, w, inst):
        if cond:
            w = w[ex.st.scc[w] != 0]
        write_sgpr(ex, w, inst.fields["sdst"], np.full(len(w), _simm(inst, True) & 0xFFFFFFFF, U32))
    return fn


def _cmpk(op, signed: bool):
    def fn(ex, w, inst):
        a = ex.st.sgpr[w, inst.fields["sdst"]]
        if signed:
            _set_scc(ex, w, op(a.view(np.int32).astype(np.int64), _simm(inst, True)))
        else:
            _set_scc(ex, w, op(a.astype(np.int64), _simm(inst, False)))
    return fn


def _addk(ex, w, inst):
    a = ex.st.sgpr[w, inst.fields["sdst"]].view(np.int32).astype(np.int64)
    full = a + _simm(inst, True)
    write_sgpr(ex, w, inst.fields["sdst"], _u(full & 0xFFFFFFFF, False))
    _set_scc(ex, w, (full > 0x7FFFFFFF) | (full < -0x80000000))


def _mulk(ex, w, inst):
    a = ex.st.sgpr[w, inst.fields["sdst"]].view(np.int32).astype(np.int64)
    write_sgpr(ex, w, inst.fields["sdst"], _u((a * _simm(inst, True)) & 0xFFFFFFFF, False))


def _call(ex, w, inst):
    write_sgpr(ex, w, inst.fields["sdst"], (ex.st.pc[w] + 4).astype(U64), True)
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
