"""gfx12 (RDNA4) scalar instructions: the family's own entries of the semantics table (semantics.py).

Meanings are from the RDNA4 ISA reference's pseudo-code; an instruction gfx12 only renamed runs gfx11's semantics
(`alias`). What gfx12 changes or adds:

- Renames: s_add_co_i32 / s_sub_co_i32 / s_add_co_u32 / s_sub_co_u32 / s_add_co_ci_u32 / s_sub_co_ci_u32 /
  s_addk_co_i32 are gfx11's s_add_i32, s_sub_i32, s_add_u32, s_sub_u32, s_addc_u32, s_subb_u32, s_addk_i32.
- 64-bit integer ops: s_add_nc_u64, s_sub_nc_u64, s_mul_u64 (D = S0 op S1 mod 2^64, SCC unchanged; defined in
  scalar/sop2.py with the family's name).
- Split counters: s_wait_loadcnt / storecnt / samplecnt / bvhcnt / kmcnt / dscnt / expcnt, the combined
  s_wait_loadcnt_dscnt / storecnt_dscnt, and s_wait_alu (s_waitcnt_depctr's fields). The engine completes every
  memory access and ALU result at the instruction that issues it, in order, so every counter is zero whenever a
  wait is reached: each is a one-cycle no-op, like gfx11's s_waitcnt.
- Barriers: s_barrier (gfx11) became s_barrier_signal -1 then s_barrier_wait -1 (workgroup barrier). The engine
  releases a barrier when every live wave of the workgroup waits at it (the gfx11 model): s_barrier_wait -1 is
  that barrier, s_barrier_signal -1 counts the wave's signal (s_barrier_signal_isfirst sets SCC for the first
  signal of a barrier: the count restarts when every live wave of the group has signalled). A wave that signals
  and never waits (the hardware completes the barrier at the last signal) is not modelled: the other waves would
  wait for it. s_get_barrier_state reads the workgroup barrier's state as the reference's pseudo-code lays it out
  (signal count, member count, valid); named barriers (s_barrier_init/join/leave, signals to barrier numbers > 0)
  are not implemented: RDNA4's reference gives no pseudo-code for their initialisation, and s_barrier_wait can
  only wait on the workgroup and trap barriers.
- SALU float ops (s_add_f32, s_fmac_f32, s_cvt_*, s_ceil_*, s_cmp_*_f32, f16 forms, ...): the VALU's definitions
  applied to each wave's scalar (the same MODE round and denorm rules; vector.valu.SPECS). An f16 result is
  written zero-extended to 32 bits (the reference says D0.f16 only; the upper half is not confirmed).
  s_min_num / s_max_num / s_minimum / s_maximum: IEEE 754-2019 minimumNumber / minimum (vector.gfx12).
- SMEM: the offset is signed 24 bits (sopp._smem_offset); s_load_b96 / s_buffer_load_b96; sub-dword loads
  s_load_{u8,i8,u16,i16} and s_buffer_load_{u8,i8,u16,i16} (zero/sign-extended into one SGPR; the address is not
  rounded down; a buffer load's bytes at or past the V#'s NUM_RECORDS read as 0, as s_buffer_load_b32's dwords);
  s_prefetch_* (no-ops: no caches).
- Hardware registers: SHADER_CYCLES_LO/HI (29/30) are the low and high words of the 64-bit core-cycle counter
  (gfx11's SHADER_CYCLES is 20 bits); the other ids the engine models (MODE, STATUS, HW_ID1) are unchanged.
- s_sleep_var, s_singleuse_vdst, s_wakeup_barrier: no-ops.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import constant
from simgpu.shader.scalar import sop1, sop2, sopp  # noqa: F401 - the shared entries aliased below
from simgpu.shader.scalar.alu import read_sgpr, write_scc, write_sgpr
from simgpu.shader.semantics import alias, register
from simgpu.shader.state import BARRIER, DONE, HW_MODE, NULL, SMEM_SDATA_END, wsel
from simgpu.shader.vector import cmp_float, cvt, float_arith, trans  # noqa: F401 - the VALU specs SALU shares
from simgpu.shader.vector import gfx12 as vgfx12  # noqa: F401 - the _num / minimum VALU specs SALU shares
from simgpu.shader.vector.valu import SPECS, OpCtx

G = "gfx12"
U16, U32, U64 = np.uint16, np.uint32, np.uint64

for _new, _old in (("s_add_co_i32", "s_add_i32"), ("s_sub_co_i32", "s_sub_i32"), ("s_add_co_u32", "s_add_u32"),
                   ("s_sub_co_u32", "s_sub_u32"), ("s_add_co_ci_u32", "s_addc_u32"),
                   ("s_sub_co_ci_u32", "s_subb_u32"), ("s_addk_co_i32", "s_addk_i32")):
    alias(_new, _old, G)



def _nop(ex, w, inst):
    return None


for _name in ("s_wait_loadcnt", "s_wait_storecnt", "s_wait_samplecnt", "s_wait_bvhcnt", "s_wait_kmcnt",
              "s_wait_dscnt", "s_wait_expcnt", "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt", "s_wait_alu",
              "s_sleep_var", "s_singleuse_vdst", "s_wakeup_barrier", "s_prefetch_inst", "s_prefetch_inst_pc_rel",
              "s_prefetch_data", "s_prefetch_data_pc_rel", "s_buffer_prefetch_data"):
    register(_name, _nop, G)


# ---------------------------------------------------------------------------------------------- barriers

_WORKGROUP_BARRIER = -1


def _barrier_number(ex, w, inst) -> int:
    """The barrier an s_barrier_signal names: its ssrc0 (an inline constant, or M0[4:0])."""
    code = inst.fields["ssrc0"]
    if code == 125:  # M0
        return int(ex.st.sgpr[w.item(0) if len(w) == 1 else w[0], 125]) & 0x1F
    v = constant(code, "b32") if code >= 128 else int(ex.st.sgpr[w[0], code])
    v = (inst.literal or 0) if code == 255 else v
    return v - (1 << 32) if v is not None and v & 0x80000000 else (v or 0)


def _signal_counts(ex) -> np.ndarray:
    """The workgroup barrier's signal count of each workgroup of the running batch (a new batch starts at 0)."""
    st = ex.st
    state = ex.__dict__.get("_barrier_signals")
    if state is None or state[0] is not st:
        state = ex.__dict__["_barrier_signals"] = (st, np.zeros(len(st.lds), np.int64))
    return state[1]


def _members(st, groups: int) -> np.ndarray:
    """The workgroup barrier's members of each workgroup: its waves that have not ended (at least 1)."""
    return np.maximum(np.bincount(st.group[st.status != DONE], minlength=groups), 1)


def _signal(first: bool):
    def fn(ex, w, inst):
        number = _barrier_number(ex, w, inst)
        if number != _WORKGROUP_BARRIER:
            if number == 0:  # barrier #0 is a no-op
                if first:
                    write_scc(ex, w, False)
                return None
            raise ex.illegal_inst(w, inst,
                                  f"named barrier {number} is not implemented (only the workgroup barrier, -1)")
        st = ex.st
        counts = _signal_counts(ex)
        g = st.group[w]
        live = _members(st, len(counts))
        # each wave's signal in order: its rank among this instruction's waves of its workgroup
        order = np.argsort(g, kind="stable")
        sg = g[order]
        pos = np.arange(len(sg))
        first_of_group = np.r_[True, sg[1:] != sg[:-1]]
        rank = np.empty(len(sg), np.int64)
        rank[order] = pos - np.maximum.accumulate(np.where(first_of_group, pos, 0))
        scc = (counts[g] + rank) % live[g] == 0
        np.add.at(counts, g, 1)
        counts %= live  # every live wave signalled: the barrier completes and the count restarts
        if first:
            write_scc(ex, w, scc if len(w) > 1 else bool(scc[0]))
        return None
    return fn


def _barrier_wait(ex, w, inst):
    simm = inst.fields["simm16"]
    if simm & 0x8000 and (simm - 0x10000) == _WORKGROUP_BARRIER:
        ex.st.status[w] = BARRIER  # the scheduler releases the workgroup and steps past the wait
        return True
    if simm & 0x8000:  # -2: the trap barrier
        raise ex.illegal_inst(w, inst, "the trap barrier is not implemented")
    return None  # barrier bit 0 is reserved: nothing to wait for


def _get_barrier_state(ex, w, inst):
    """s_get_barrier_state: {signalCnt[22:16], memberCnt[10:4], valid[0]} of the barrier ssrc0 (or M0[4:0]) names.
    The workgroup barrier (-1) is valid, its members the workgroup's waves that have not ended, its signal count
    the signals since it last completed; barrier 0 (a no-op) and the named barriers 1-16, which no instruction here
    initialises or signals (RDNA4's reference defines no s_barrier_init), read 0."""
    number = _barrier_number(ex, w, inst)
    if number == -2:
        raise ex.illegal_inst(w, inst, "the trap barrier is not implemented")
    state = np.zeros(len(w), np.int64)
    if number == _WORKGROUP_BARRIER:
        counts = _signal_counts(ex)
        g = ex.st.group[w]
        members = _members(ex.st, len(counts))[g]
        # a count that reached the members (a member ended after the others signalled) is a completed barrier: 0
        state = (counts[g] % members) << 16 | np.minimum(members, 127) << 4 | 1
    write_sgpr(ex, w, inst.fields["sdst"], state.astype(U64) if len(w) > 1 else int(state[0]))


register("s_get_barrier_state", _get_barrier_state, G)
register("s_barrier_signal", _signal(False), G)
register("s_barrier_signal_isfirst", _signal(True), G)
register("s_barrier_wait", _barrier_wait, G)


# ---------------------------------------------------------------------------------------------- float ALU

def _fsrc(ex, w, inst, field: str, t: str) -> np.ndarray:
    """A scalar source as [n, 1] of type t (f16, f32, i32, u32; an f16 operand is the low half of its SGPR)."""
    code = inst.fields[field]
    n = len(w)
    if code < 128:
        raw = ex.st.sgpr[wsel(w), code].reshape(n, 1) if code != NULL else np.zeros((n, 1), U32)
    elif code == 255:
        raw = np.full((n, 1), inst.literal or 0, U32)
    else:
        c = constant(code, t)
        if c is None:
            raise ex.illegal_inst(w, inst, f"operand code {code} for {t}")
        raw = np.full((n, 1), c, U32)
    if t == "f16":
        return (raw & U32(0xFFFF)).astype(U16).view(np.float16)
    return raw.astype(U32).view({"f32": np.float32, "i32": np.int32, "u32": U32}[t])


def _kliteral(inst, t: str) -> np.ndarray:
    raw = np.array([[inst.literal or 0]], U32)
    return (raw & U32(0xFFFF)).astype(U16).view(np.float16) if t == "f16" else raw.view(np.float32)


def _ctx(ex, w) -> OpCtx:
    return OpCtx(False, ex.st.hwreg[w, HW_MODE], ex.st.lanes, ex, w)


def _write(ex, w, inst, r: np.ndarray) -> None:
    """A float or integer result [n, 1] into sdst (16-bit results zero-extended)."""
    r = np.asarray(r).reshape(len(w))
    bits = r.dtype.itemsize * 8
    raw = r.view(U16).astype(U64) if bits == 16 else r.view(U32).astype(U64) if bits == 32 else r.astype(U64)
    write_sgpr(ex, w, inst.fields["sdst"], raw if len(w) > 1 else int(raw[0]))


def _falu(vname: str, ts: tuple[str, ...], fields=("ssrc0", "ssrc1")):
    """A SALU float op running the VALU spec `vname` on each wave's scalar sources."""
    def fn(ex, w, inst):
        srcs = [_fsrc(ex, w, inst, f, t) for f, t in zip(fields, ts, strict=False)]
        _write(ex, w, inst, SPECS[vname].fn(_ctx(ex, w), *srcs))
    return fn


def _fma_form(kind: str, t: str):
    """s_fmac (D = S0 * S1 + D), s_fmaak (S0 * S1 + K), s_fmamk (S0 * K + S1)."""
    def fn(ex, w, inst):
        ctx = _ctx(ex, w)
        if kind == "fmac":
            a, b = _fsrc(ex, w, inst, "ssrc0", t), _fsrc(ex, w, inst, "ssrc1", t)
            c = _fsrc(ex, w, inst, "sdst", t)
        elif kind == "fmaak":
            a, b, c = _fsrc(ex, w, inst, "ssrc0", t), _fsrc(ex, w, inst, "ssrc1", t), _kliteral(inst, t)
        else:
            a, b, c = _fsrc(ex, w, inst, "ssrc0", t), _kliteral(inst, t), _fsrc(ex, w, inst, "ssrc1", t)
        _write(ex, w, inst, SPECS[f"v_fma_{t}"].fn(ctx, a, b, c))
    return fn


def _fcmp(vname: str, t: str):
    def fn(ex, w, inst):
        a, b = _fsrc(ex, w, inst, "ssrc0", t), _fsrc(ex, w, inst, "ssrc1", t)
        r = np.asarray(SPECS[vname].fn(_ctx(ex, w), a, b)).reshape(len(w))
        write_scc(ex, w, r if len(w) > 1 else bool(r[0]))
    return fn


def _cvt_hi_f32_f16(ex, w, inst):
    code = inst.fields["ssrc0"]
    raw = ex.st.sgpr[wsel(w), code].reshape(len(w), 1) if code < 128 else \
        np.full((len(w), 1), constant(code, "b32") if code != 255 else inst.literal or 0, U32)
    h = (raw >> U32(16)).astype(U16).view(np.float16)
    _write(ex, w, inst, SPECS["v_cvt_f32_f16"].fn(_ctx(ex, w), h))


for _t in ("f16", "f32"):
    for _op in ("add", "sub", "mul", "min_num", "max_num", "minimum", "maximum"):
        register(f"s_{_op}_{_t}", _falu(f"v_{_op}_{_t}", (_t, _t)), G)
    for _op in ("ceil", "floor", "trunc", "rndne"):
        register(f"s_{_op}_{_t}", _falu(f"v_{_op}_{_t}", (_t,)), G)
    register(f"s_fmac_{_t}", _fma_form("fmac", _t), G)
    for _c in ("lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt"):
        register(f"s_cmp_{_c}_{_t}", _fcmp(f"v_cmp_{_c}_{_t}", _t), G)
register("s_fmaak_f32", _fma_form("fmaak", "f32"), G)
register("s_fmamk_f32", _fma_form("fmamk", "f32"), G)
register("s_cvt_f32_i32", _falu("v_cvt_f32_i32", ("i32",)), G)
register("s_cvt_f32_u32", _falu("v_cvt_f32_u32", ("u32",)), G)
register("s_cvt_i32_f32", _falu("v_cvt_i32_f32", ("f32",)), G)
register("s_cvt_u32_f32", _falu("v_cvt_u32_f32", ("f32",)), G)
register("s_cvt_f16_f32", _falu("v_cvt_f16_f32", ("f32",)), G)
register("s_cvt_f32_f16", _falu("v_cvt_f32_f16", ("f16",)), G)
register("s_cvt_hi_f32_f16", _cvt_hi_f32_f16, G)
register("s_cvt_pk_rtz_f16_f32", _falu("v_cvt_pk_rtz_f16_f32", ("f32", "f32")), G)


# ---------------------------------------------------------------------------------------------- SMEM


def _s_load_sub_dword(kind: str, buffer: bool):
    """s_load_{u8,i8,u16,i16} / s_buffer_load_{...}: one byte or half at base + offset, extended into one SGPR. A
    buffer load's base is the V#'s (sbase names its 4 SGPRs) and its bytes at or past NUM_RECORDS read as 0, as for
    s_buffer_load_b32 (sopp._s_buffer_load)."""
    size = 1 if kind.endswith("8") else 2

    def fn(ex, w, inst):
        f = inst.fields
        offset = sopp._smem_offset(ex, w, inst)
        in_range = np.ones(len(w), bool)
        if buffer:
            d = ex.st.sgpr[w, f["sbase"] * 2:f["sbase"] * 2 + 3].astype(np.int64)
            base = d[:, 0] | ((d[:, 1] & 0xFFFF) << 32)
            in_range = offset + size <= d[:, 2]
        else:
            base = np.array([read_sgpr(ex, np.array([wave]), f["sbase"] * 2, True) for wave in w.tolist()], np.int64)
        addr = ((base & ((1 << 48) - 1)) + offset).astype(U64)
        v = ex.mem.gather(ex.vmid, addr, size, in_range).astype(np.int64) * in_range
        if kind.startswith("i"):
            top = 1 << (8 * size - 1)
            v = (v ^ top) - top
        if f["sdata"] < SMEM_SDATA_END:
            ex.st.sgpr[w, f["sdata"]] = (v & 0xFFFFFFFF).astype(U32)
    return fn


for _k in ("u8", "i8", "u16", "i16"):
    register(f"s_load_{_k}", _s_load_sub_dword(_k, False), G)
    register(f"s_buffer_load_{_k}", _s_load_sub_dword(_k, True), G)
alias("s_load_b96", "s_load_b32", G)  # the dword count comes from the table entry (sdata: 3)
alias("s_buffer_load_b96", "s_buffer_load_b32", G)


# ---------------------------------------------------------------------------------------------- hwreg

_SHADER_CYCLES_LO, _SHADER_CYCLES_HI = 29, 30


def _getreg(ex, w, inst):
    simm = inst.fields["simm16"]
    rid, off, size = simm & 0x3F, (simm >> 6) & 0x1F, ((simm >> 11) & 0x1F) + 1
    if rid not in (_SHADER_CYCLES_LO, _SHADER_CYCLES_HI):
        return sopp._getreg(ex, w, inst)
    cycles = ex.engine.clock.cycles
    word = cycles & 0xFFFFFFFF if rid == _SHADER_CYCLES_LO else (cycles >> 32) & 0xFFFFFFFF
    value = (word >> off) & ((1 << size) - 1)
    write_sgpr(ex, w, inst.fields["sdst"], np.full(len(w), value, U64) if len(w) > 1 else value)
    return None


register("s_getreg_b32", _getreg, G)
