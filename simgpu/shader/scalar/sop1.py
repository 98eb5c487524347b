"""Scalar semantics of SOP1 (moves, bit counts, saveexec, PC), SOPC (compares) and SOPK (16-bit
immediate forms), from the RDNA3 ISA reference pseudo-code. The ALU ones are definitions in the expression form
(sem.expr) that both tiers are generated from (scalar.define); the M0-indexed moves and the PC instructions work
on arrays over waves."""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import scalar_src
from simgpu.shader.operand import write_sgpr as write_sgpr_array
from simgpu.shader.scalar import value as sv
from simgpu.shader.scalar.alu import dst_wide, write_sgpr
from simgpu.shader.scalar.define import sdefine, simm16
from simgpu.shader.scalar.sop2 import signed_overflow
from simgpu.shader.sem.expr import bitreverse, bits, cast, clz, const, ctz, eq, ne, popcount, select
from simgpu.shader.semantics import register

U32, U64 = np.uint32, np.uint64
M32 = 0xFFFFFFFF


def _nonzero(r):
    return r, ne(r, 0)


def _count(n):
    """A bit count as the 32-bit result, -1 (0xFFFFFFFF) when the source x has no bit to count (x == 0)."""
    return lambda x: select(eq(x, 0), M32, cast(n(x), "u32"))


def _cls(x):
    """Leading bits equal to the sign bit (counted as leading zeros of x or NOT x), -1 when all are."""
    top = x >> (bits(x.t) - 1)
    return _count(clz)(select(eq(top, 1), ~x, x))


def _nibbles_any(x):
    """Bit 4k set where nibble k of a 64-bit x has any bit set; other bits clear."""
    x = x | (x >> 1)
    x = x | (x >> 2)
    return x & 0x1111111111111111


def _quadmask(x):
    """Bit k set where nibble k of x has any bit set (the nibbles' bits 4k gathered to bit k)."""
    v = _nibbles_any(cast(x, "u64"))
    for s, m in ((3, 0x0303030303030303), (6, 0x000F000F000F000F), (12, 0x000000FF000000FF),
                 (24, 0x000000000000FFFF)):
        v = (v | (v >> s)) & m
    return _nonzero(cast(v, x.t))


def _bitreplicate(x):
    """Each bit of a 32-bit x twice (bit i to bits 2i and 2i+1): its bits spread to the even positions, times 3."""
    v = cast(x, "u64")
    for s, m in ((16, 0x0000FFFF0000FFFF), (8, 0x00FF00FF00FF00FF), (4, 0x0F0F0F0F0F0F0F0F),
                 (2, 0x3333333333333333), (1, 0x5555555555555555)):
        v = (v | (v << s)) & m
    return v * 3


SAVEEXEC = {"and": lambda s, e: s & e, "or": lambda s, e: s | e, "xor": lambda s, e: s ^ e,
            "nand": lambda s, e: ~(s & e), "nor": lambda s, e: ~(s | e), "xnor": lambda s, e: ~(s ^ e),
            "and_not0": lambda s, e: ~s & e, "or_not0": lambda s, e: ~s | e, "and_not1": lambda s, e: s & ~e,
            "or_not1": lambda s, e: s | ~e}


def _saveexec(f, wrexec: bool = False):
    """EXEC = f(S0, EXEC); SDST = the old EXEC (or the new one, for the wrexec forms); SCC = EXEC != 0."""
    def fn(s, e):
        new = f(s, e)
        return new, new if wrexec else e, ne(new, 0)
    return fn


for _t in ("b32", "b64"):
    _w = _t[1:]
    sdefine(f"s_mov_{_t}", f"ssrc0:{_t} -> sdst:{_t}", lambda x: x)
    sdefine(f"s_cmov_{_t}", f"ssrc0:{_t} sdst:{_t} scc -> sdst:{_t}", lambda x, cur, c: select(c, x, cur))
    sdefine(f"s_not_{_t}", f"ssrc0:{_t} -> sdst:{_t} scc", lambda x: _nonzero(~x))
    sdefine(f"s_brev_{_t}", f"ssrc0:{_t} -> sdst:{_t}", bitreverse)
    sdefine(f"s_ctz_i32_{_t}", f"ssrc0:{_t} -> sdst:u32", _count(ctz))
    sdefine(f"s_clz_i32_u{_w}", f"ssrc0:{_t} -> sdst:u32", _count(clz))
    sdefine(f"s_bcnt1_i32_{_t}", f"ssrc0:{_t} -> sdst:u32 scc", lambda x: _nonzero(cast(popcount(x), "u32")))
    sdefine(f"s_bcnt0_i32_{_t}", f"ssrc0:{_t} -> sdst:u32 scc",
            lambda x, n=int(_w): _nonzero(n - cast(popcount(x), "u32")))
    sdefine(f"s_quadmask_{_t}", f"ssrc0:{_t} -> sdst:{_t} scc", _quadmask)
    sdefine(f"s_wqm_{_t}", f"ssrc0:{_t} -> sdst:{_t} scc",
            lambda x, t=_t: _nonzero(cast(_nibbles_any(cast(x, "u64")) * 0xF, t)))
    # the bit index is a 32-bit source in both forms
    sdefine(f"s_bitset0_{_t}", f"ssrc0:u32 sdst:{_t} -> sdst:{_t}",
            lambda a, cur, t=_t: cur & ~(const(1, t) << cast(a & (int(t[1:]) - 1), t)))
    sdefine(f"s_bitset1_{_t}", f"ssrc0:u32 sdst:{_t} -> sdst:{_t}",
            lambda a, cur, t=_t: cur | (const(1, t) << cast(a & (int(t[1:]) - 1), t)))
    for _name, _f in SAVEEXEC.items():
        sdefine(f"s_{_name}_saveexec_{_t}", f"ssrc0:{_t} exec:{_t} -> exec:{_t} sdst:{_t} scc", _saveexec(_f))
    for _name in ("and_not0", "and_not1"):
        sdefine(f"s_{_name}_wrexec_{_t}", f"ssrc0:{_t} exec:{_t} -> exec:{_t} sdst:{_t} scc",
                _saveexec(SAVEEXEC[_name], True))
sdefine("s_cls_i32", "ssrc0:b32 -> sdst:u32", _cls)
sdefine("s_cls_i32_i64", "ssrc0:b64 -> sdst:u32", _cls)
sdefine("s_sext_i32_i8", "ssrc0:i32 -> sdst:i32", lambda x: (x << 24) >> 24)
sdefine("s_sext_i32_i16", "ssrc0:i32 -> sdst:i32", lambda x: (x << 16) >> 16)
sdefine("s_abs_i32", "ssrc0:i32 -> sdst:i32 scc", lambda x: _nonzero(select(x < 0, -x, x)))
sdefine("s_bitreplicate_b64_b32", "ssrc0:b32 -> sdst:b64", _bitreplicate)


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

_CMP = {"eq": eq, "lg": ne, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b}

for _c, _f in _CMP.items():
    for _t in ("i32", "u32"):
        sdefine(f"s_cmp_{_c}_{_t}", f"ssrc0:{_t} ssrc1:{_t} -> scc", _f)
        sdefine(f"s_cmpk_{_c}_{_t}", f"sdst:{_t} simm16:{_t} -> scc", _f)  # (SOPK: the immediate's extension by type)
for _c in ("eq", "lg"):
    sdefine(f"s_cmp_{_c}_u64", "ssrc0:u64 ssrc1:u64 -> scc", _CMP[_c])
for _t in ("b32", "b64"):  # the bit index is a 32-bit source in both forms
    for _v in (0, 1):
        sdefine(f"s_bitcmp{_v}_{_t}", f"ssrc0:{_t} ssrc1:u32 -> scc",
                lambda a, b, t=_t, v=_v: eq((a >> cast(b & (int(t[1:]) - 1), t)) & 1, v))


# ---------------------------------------------------------------------------------------------- SOPK

sdefine("s_movk_i32", "simm16:i32 -> sdst:i32", lambda k: k)
sdefine("s_cmovk_i32", "simm16:i32 sdst:i32 scc -> sdst:i32", lambda k, cur, c: select(c, k, cur))
sdefine("s_addk_i32", "sdst:i32 simm16:i32 -> sdst:i32 scc",
        lambda a, k: signed_overflow(cast(a, "i64") + cast(k, "i64")))
sdefine("s_mulk_i32", "sdst:i32 simm16:i32 -> sdst:i32", lambda a, k: a * k)


def _call(ex, w, inst):
    _return_address(ex, w, inst, 4)
    ex.st.pc[w] = ex.st.pc[w] + 4 + 4 * sv.signed(simm16(inst, "i32"), 32)
    return True


register("s_call_b64", _call)
for _nop in ("s_version", "s_waitcnt_vscnt", "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt"):
    register(_nop, lambda ex, w, inst: None)  # memory is coherent at each step in the simulator
