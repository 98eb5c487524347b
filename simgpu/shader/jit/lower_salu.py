"""Translators of the scalar ALU (SOP1, SOP2, SOPC, SOPK) and of the SOPP/SMEM instructions that change
nothing (waits, hints), on i32/i64 values of one wave.

An opcode defined in the expression form (scalar.define) is translated from its definition (jit.lower_sem over
scalars): its operands are read as scalar.alu reads them (widths from the instruction's table entry, null as 0,
a 32-bit literal zero-extended into a 64-bit operand, sign-extended into the signed ones of scalar.alu.SIGNED64)
and its results written like scalar.alu.write_sgpr.
"""

from __future__ import annotations

from simgpu.shader.jit.lower import Lowering, from_definition, translates
from simgpu.shader.jit.lower_sem import emit_tree, signed_spelling
from simgpu.shader.jit.lower_valu import Op
from simgpu.shader.scalar.alu import SIGNED64
from simgpu.shader.scalar.define import SPECS, SOp, simm16
from simgpu.shader.sem.expr import bits
from simgpu.shader.semantics import implemented
from simgpu.shader.state import EXEC_LO


def _widths(inst) -> dict[str, int]:
    return {slot[0]: slot[1] for slot in inst.info.get("ops", [])}


def _read(lw: Lowering, inst, name: str, t: str) -> str:
    """One operand a definition reads, as i32/i64 (i1 for SCC)."""
    wide = bits(t) == 64
    if name in ("ssrc0", "ssrc1"):
        if (_widths(inst)[name] == 2) != wide:
            raise TypeError(f"{inst.mnemonic}: {name} is typed {t}, the instruction table says otherwise")
        kind = ("i64" if (inst.mnemonic, name) in SIGNED64 else "b64") if wide else "b32"
        return lw.scalar_src(inst.fields[name], inst.literal, kind)
    if name in ("sdst", "exec"):
        code = EXEC_LO if name == "exec" else inst.fields["sdst"]
        return lw.sgpr64(code) if wide else lw.sgpr(code)  # (Unsupported past the SGPR file)
    if name == "simm16":
        return signed_spelling(str(simm16(inst, t)), bits(t))
    return lw.scc()


def _defined(spec: SOp):
    def fn(lw: Lowering, inst):
        sources = [_read(lw, inst, n, t) for n, t in spec.reads]
        out = emit_tree(Op(lw, True, spec, scalar=True), spec.definition.tree(), sources)
        for (name, t), v in zip(spec.writes, out, strict=True):
            if name == "scc":
                lw.set_scc(v)
                continue
            code = EXEC_LO if name == "exec" else inst.fields["sdst"]
            if bits(t) == 64:
                lw.set_sgpr64(code, v)
            else:
                lw.set_sgpr(code, v)
    return from_definition(spec, fn)


def register_all() -> None:
    """A translator for every scalar opcode defined in the expression form (for its family, when it has one)."""
    implemented()  # every semantics module loaded: SPECS complete
    for name, spec in SPECS.items():
        translates(name, family=spec.family)(_defined(spec))


@translates("s_getpc_b64")
def _getpc(lw: Lowering, inst):
    lw.set_sgpr64(inst.fields["sdst"], lw.b.op(f"add i64 %base, {lw.off + inst.size}"))


# ---------------------------------------------------------------------------------------------- no-ops

_NOPS = ("s_nop", "s_setkill", "s_sethalt", "s_set_inst_prefetch_distance", "s_clause", "s_delay_alu",
         "s_waitcnt_depctr", "s_waitcnt", "s_wait_idle", "s_wait_event", "s_setprio", "s_incperflevel",
         "s_decperflevel", "s_ttracedata", "s_ttracedata_imm", "s_wakeup", "s_version", "s_waitcnt_vscnt",
         "s_waitcnt_vmcnt", "s_waitcnt_expcnt", "s_waitcnt_lgkmcnt", "s_gl1_inv", "s_dcache_inv", "s_atc_probe",
         "s_atc_probe_buffer", "v_nop", "v_pipeflush", "s_sendmsg", "buffer_gl0_inv", "buffer_gl1_inv")


@translates(*_NOPS)
def _nop(lw: Lowering, inst):
    """Waits, hints and cache invalidations change nothing in the simulator (it has no caches: mubuf.py);
    s_sendmsg only matters for MSG_INTERRUPT, which region.is_sync keeps out of native code."""
    if inst.mnemonic.startswith("v_"):
        lw.count_lanes()


# gfx12's own no-ops (scalar/gfx12.py, memory/gfx12.py): the split waits, prefetches, cache write-backs
_GFX12_NOPS = ("s_wait_loadcnt", "s_wait_storecnt", "s_wait_samplecnt", "s_wait_bvhcnt", "s_wait_kmcnt",
               "s_wait_dscnt", "s_wait_expcnt", "s_wait_loadcnt_dscnt", "s_wait_storecnt_dscnt", "s_wait_alu",
               "s_sleep_var", "s_singleuse_vdst", "s_wakeup_barrier", "s_prefetch_inst", "s_prefetch_inst_pc_rel",
               "s_prefetch_data", "s_prefetch_data_pc_rel", "s_buffer_prefetch_data", "global_inv", "global_wb",
               "global_wbinv")
translates(*_GFX12_NOPS, family="gfx12")(_nop)
