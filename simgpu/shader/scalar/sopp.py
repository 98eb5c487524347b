"""Program control (SOPP), hardware registers (s_getreg/s_setreg) and scalar memory (SMEM).

Waits (s_waitcnt*, s_delay_alu, s_clause, ...) change no result: the simulator completes every
memory access at the instruction that issues it, so they only cost a cycle.
"""

from __future__ import annotations

import numpy as np

from simgpu.fault import HardwareFault
from simgpu.interrupt import Interrupt, Kind, Source
from simgpu.shader.operand import scalar_src, write_sgpr
from simgpu.shader.scalar.alu import read_scc, read_sgpr
from simgpu.shader.semantics import family_of, register
from simgpu.shader.state import (
    BARRIER,
    DONE,
    EXEC_LO,
    HW_HW_ID1,
    HW_MODE,
    HW_SHADER_CYCLES,
    HW_STATUS,
    SMEM_SDATA_END,
    VCC_LO,
    wsel,
)

U32, U64 = np.uint32, np.uint64


def _simm(inst) -> int:
    v = inst.fields["simm16"]
    return v - 0x10000 if v & 0x8000 else v


def _nop(ex, w, inst):
    return None


def _branch(cond):
    """PC += 4 + 4 * simm16 where cond(ex, w) holds (a bool for one wave, an array for many), else 4."""
    def fn(ex, w, inst):
        pc = ex.st.pc
        take = True if cond is None else cond(ex, w)
        if isinstance(take, np.ndarray):
            pc[w] = np.where(take, pc[w] + 4 + 4 * _simm(inst), pc[w] + 4)
        else:
            w0 = w.item(0) if len(w) == 1 else wsel(w)
            pc[w0] += 4 + 4 * _simm(inst) if take else 4
        return True
    return fn


def _mask_is(code: int, zero: bool):
    """Whether the wave's VCC or EXEC (both halves in wave64) is zero (vccz/execz), or not."""
    if zero:
        return lambda ex, w: read_sgpr(ex, w, code, ex.st.lanes == 64) == 0
    return lambda ex, w: read_sgpr(ex, w, code, ex.st.lanes == 64) != 0


def _endpgm(ex, w, inst):
    ex.st.status[w] = DONE
    return True


def _barrier(ex, w, inst):
    ex.st.status[w] = BARRIER  # the scheduler releases the workgroup and steps past the barrier
    return True


def _sleep(ex, w, inst):
    ex.engine.clock.advance(64 * (inst.fields["simm16"] & 0x7F))


def _trap(ex, w, inst):
    raise HardwareFault("trap", f"s_trap {inst.fields['simm16'] & 0xFF} (no trap handler installed)")


def _sendmsg(ex, w, inst):
    msg = inst.fields["simm16"] & 0xFF
    if msg == 1:  # MSG_INTERRUPT: the device owner sees an interrupt with the wave's M0
        for m0 in ex.st.sgpr[w, ex.m0]:
            ex.engine.interrupt(Interrupt(Source.SQ, Kind.SENDMSG, ex.d.queue, context_id=int(m0)))
    if inst.mnemonic == "s_sendmsghalt":
        ex.st.status[w] = DONE
        return True
    return None


def _mode_field(lo: int):
    def fn(ex, w, inst):
        mode = ex.st.hwreg[w, HW_MODE]
        ex.st.hwreg[w, HW_MODE] = (mode & ~U32(0xF << lo)) | U32((inst.fields["simm16"] & 0xF) << lo)
        ex.uniform_mode = None
    return fn


def _icache_inv(ex, w, inst):
    ex.cache.clear()


def _v_illegal(ex, w, inst):
    raise ex.illegal_inst(w, inst, "executed v_illegal")


def _code_end(ex, w, inst):
    raise ex.illegal_inst(w, inst, "executed s_code_end padding (ran off the end of the kernel)")


register("s_branch", _branch(None))
register("s_cbranch_scc0", _branch(lambda ex, w: read_scc(ex, w) == 0))
register("s_cbranch_scc1", _branch(lambda ex, w: read_scc(ex, w) != 0))
register("s_cbranch_vccz", _branch(_mask_is(VCC_LO, True)))
register("s_cbranch_vccnz", _branch(_mask_is(VCC_LO, False)))
register("s_cbranch_execz", _branch(_mask_is(EXEC_LO, True)))
register("s_cbranch_execnz", _branch(_mask_is(EXEC_LO, False)))
for _dbg in ("s_cbranch_cdbgsys", "s_cbranch_cdbguser", "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbgsys_and_user"):
    register(_dbg, _branch(lambda ex, w: False))  # no debugger attached
register("s_endpgm", _endpgm)
register("s_endpgm_saved", _endpgm)
register("s_barrier", _barrier)
register("s_sleep", _sleep)
register("s_trap", _trap)
register("s_sendmsg", _sendmsg)
register("s_sendmsghalt", _sendmsg)
register("s_round_mode", _mode_field(0))
register("s_denorm_mode", _mode_field(4))
register("s_icache_inv", _icache_inv)
register("s_code_end", _code_end)
# VALU instructions that only control the pipeline: v_nop and v_pipeflush change no state; v_illegal
# exists to raise the illegal-instruction exception.
register("v_nop", _nop)
register("v_pipeflush", _nop)
register("v_illegal", _v_illegal)
for _name in ("s_nop", "s_setkill", "s_sethalt", "s_set_inst_prefetch_distance", "s_clause", "s_delay_alu",
              "s_waitcnt_depctr", "s_waitcnt", "s_wait_idle", "s_wait_event", "s_setprio", "s_incperflevel",
              "s_decperflevel", "s_ttracedata", "s_ttracedata_imm", "s_wakeup"):
    register(_name, _nop)


# ---------------------------------------------------------------------------------------------- hwreg


def _hwreg_fields(simm: int) -> tuple[int, int, int]:
    return simm & 0x3F, (simm >> 6) & 0x1F, ((simm >> 11) & 0x1F) + 1


def _hw_value(ex, w, rid: int) -> np.ndarray:
    st = ex.st
    if rid == HW_SHADER_CYCLES:
        return np.full(len(w), ex.engine.clock.cycles & 0xFFFFF, U32)
    if rid == HW_HW_ID1:  # wave id [4:0], simd id [9:8], wgp id [13:10], se id [20:18]
        return (w.astype(np.int64) & 0x1F).astype(U32)
    if rid == HW_STATUS:  # bit 0 is SCC; the rest of STATUS is not modelled and reads as 0
        return st.scc[w].astype(U32)
    return st.hwreg[w, rid].copy()


def _getreg(ex, w, inst):
    rid, off, size = _hwreg_fields(inst.fields["simm16"])
    mask = (1 << size) - 1
    write_sgpr(ex, w, inst.fields["sdst"], (_hw_value(ex, w, rid) >> U32(off)) & U32(mask & 0xFFFFFFFF))


def _setreg_value(ex, w, rid: int, off: int, size: int, value: np.ndarray) -> None:
    mask = ((1 << size) - 1) << off & 0xFFFFFFFF
    cur = ex.st.hwreg[w, rid]
    ex.st.hwreg[w, rid] = (cur & U32(~mask & 0xFFFFFFFF)) | ((value.astype(U64) << U64(off)).astype(U32) & U32(mask))
    if rid == HW_MODE:
        ex.uniform_mode = None


def _setreg(ex, w, inst):
    rid, off, size = _hwreg_fields(inst.fields["simm16"])
    _setreg_value(ex, w, rid, off, size, ex.st.sgpr[w, inst.fields["sdst"]])


def _setreg_imm(ex, w, inst):
    rid, off, size = _hwreg_fields(inst.fields["simm16"])
    _setreg_value(ex, w, rid, off, size, np.full(len(w), inst.literal or 0, U32))


register("s_getreg_b32", _getreg)
register("s_setreg_b32", _setreg)
register("s_setreg_imm32_b32", _setreg_imm)


# ---------------------------------------------------------------------------------------------- SMEM


# SMEM's immediate offset: signed 21 bits on gfx11, signed 24 bits on gfx12 (family -> width)
_SMEM_OFFSET_BITS = {"gfx11": 21, "gfx12": 24}
# A family whose SMEM encoding names its offsets otherwise registers its reader here (gfx9: scalar/gfx9.py)
SMEM_OFFSETS: dict = {}


def smem_immediate(inst) -> int:
    """An SMEM instruction's immediate offset: signed, 21 bits on gfx11, 24 on gfx12."""
    bits, off = _SMEM_OFFSET_BITS[family_of(inst.arch)], inst.fields["offset"]
    return off - (1 << bits) if off & (1 << (bits - 1)) else off


def _smem_offset(ex, w, inst) -> np.ndarray:
    f = inst.fields
    family = family_of(inst.arch)
    if family in SMEM_OFFSETS:
        return SMEM_OFFSETS[family](ex, w, inst)
    off = smem_immediate(inst)
    extra = scalar_src(ex, w, f["soffset"], None) if f["soffset"] != 124 else np.zeros(len(w), U32)
    return off + extra.astype(np.int64)


def _s_load(ex, w, inst):
    f, dwords = inst.fields, inst.info["sdata"]
    base = scalar_src(ex, w, f["sbase"] * 2, None, "b64").astype(np.int64) & ((1 << 48) - 1)
    addr = (base + _smem_offset(ex, w, inst)) & ~3
    if (addr == addr[0]).all():  # one address for every wave (kernel arguments, constants): read it once
        _broadcast_dwords(ex, w, f["sdata"], int(addr[0]), dwords)
        return
    _load_dwords(ex, w, f["sdata"], addr, dwords, None)


def _broadcast_dwords(ex, w, sdata: int, addr: int, dwords: int) -> None:
    """`dwords` dwords at one address into SGPRs sdata.. of every wave in `w` (faults as a gather would:
    MMU.read checks every page first and reports the address)."""
    vals = np.frombuffer(ex.mem.read(ex.vmid, addr, 4 * dwords), "<u4")
    count = max(0, min(dwords, SMEM_SDATA_END - sdata))  # destinations past VCC (TTMPs on) are dropped
    ex.st.sgpr[wsel(w), sdata:sdata + count] = vals[:count]


def _s_buffer_load(ex, w, inst):
    f, dwords = inst.fields, inst.info["sdata"]
    d0 = ex.st.sgpr[w, f["sbase"] * 2].astype(np.int64)
    d1 = ex.st.sgpr[w, f["sbase"] * 2 + 1].astype(np.int64)
    num_records = ex.st.sgpr[w, f["sbase"] * 2 + 2].astype(np.int64)
    base = d0 | ((d1 & 0xFFFF) << 32)
    offset = _smem_offset(ex, w, inst) & ~3
    _load_dwords(ex, w, f["sdata"], base + offset, dwords, (offset, num_records))


def _load_dwords(ex, w, sdata: int, addr: np.ndarray, dwords: int, bounds) -> None:
    k = np.arange(dwords, dtype=np.int64)
    addrs = addr[:, None] + 4 * k[None, :]
    mask = np.ones(addrs.shape, bool)
    if bounds is not None:  # s_buffer_load: dwords at or past num_records read as 0
        offset, num_records = bounds
        mask = (offset[:, None] + 4 * k[None, :] + 4) <= num_records[:, None]
    vals = ex.mem.gather(ex.vmid, addrs.ravel().astype(U64), 4, mask.ravel()).reshape(addrs.shape)
    for i in range(dwords):
        if sdata + i < SMEM_SDATA_END:
            ex.st.sgpr[w, sdata + i] = np.where(mask[:, i], vals[:, i], 0).astype(U32)


for _n in ("b32", "b64", "b128", "b256", "b512"):
    register(f"s_load_{_n}", _s_load)
    register(f"s_buffer_load_{_n}", _s_buffer_load)
for _name in ("s_gl1_inv", "s_dcache_inv", "s_atc_probe", "s_atc_probe_buffer"):
    register(_name, _nop)  # caches are coherent in the simulator
