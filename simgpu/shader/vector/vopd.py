"""VOPD dual issue: two VALU ops (X and Y) in one instruction. Both read all their sources before either
writes, so Y may read the register X writes (and vice versa) and sees the old value.

Each component runs the VALU spec of its single-issue twin (v_dual_add_f32 = v_add_f32, ...; valu.SPECS):
sources from the entry's operand list (src0 any operand, vsrc1 a VGPR, K the shared literal), the
destination as an extra input for fmac/dot2acc, VCC for cndmask. No modifiers exist in VOPD.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import vector_src, write_vgpr
from simgpu.shader.semantics import implemented, register
from simgpu.shader.state import HW_MODE, VCC_LO
from simgpu.shader.vector.valu import SPECS, TYPES, UNSIGNED, OpCtx, VOp, const_kind

U32 = np.uint32


_TWIN = {"v_dual_mul_dx9_zero_f32": "v_mul_dx9_zero_f32", "v_dual_dot2acc_f32_f16": "v_dot2acc_f32_f16"}


def _spec(ex, w, inst, mnemonic: str) -> VOp:
    name = _TWIN.get(mnemonic, "v_" + mnemonic.removeprefix("v_dual_"))
    implemented()  # loads every sem_* module, so SPECS is complete
    spec = SPECS.get(name)
    if spec is None:
        raise ex.fault(w, int(ex.st.pc[w[0]]), inst, "illegal_instruction", f"{mnemonic}: {name} not implemented")
    return spec


def _vdst(inst, field: str) -> int:
    if field == "vdsty":  # the low bit of vdsty is the opposite of vdstx's
        return (inst.fields["vdsty"] << 1) | ((inst.fields["vdstx"] & 1) ^ 1)
    return inst.fields[field]


def _source(ex, w, inst, entry: list, t: str) -> np.ndarray:
    field, kind = entry[0], entry[1]
    dt, bits = TYPES[t]
    if kind == "lit":
        raw = np.full((len(w), ex.st.lanes), inst.literal or 0, U32)
    elif kind == "v":
        raw = ex.st.vgpr[inst.fields[field], w, :]
    else:
        raw = vector_src(ex, w, inst.fields[field], inst.literal, const_kind(t))
    raw = np.asarray(raw).astype(UNSIGNED[bits], copy=False)
    return raw.view(dt) if raw.dtype != dt else raw


def _component(ex, w, inst, side: str):
    """Compute one half: (destination VGPR, 32-bit result words) without writing."""
    entry = inst.info[side]
    spec = _spec(ex, w, inst, entry["m"])
    ops = entry["ops"]
    vdst = _vdst(inst, ops[0][0])
    srcs = [_source(ex, w, inst, e, t) for e, t in zip(ops[1:], spec.srcs, strict=True)]
    if spec.acc:
        srcs.append(ex.st.vgpr[vdst, w, :].view(TYPES[spec.dst][0]))
    if spec.mask_in:
        srcs.append(ex.st.lanes_of(ex.st.mask64(w, VCC_LO)))
    ctx = OpCtx(False, ex.st.hwreg[w, HW_MODE], ex.st.lanes, ex, w)
    with np.errstate(all="ignore"):
        out = spec.fn(ctx, *srcs)
    dt, bits = TYPES[spec.dst]
    return vdst, np.asarray(out).astype(dt, copy=False).view(UNSIGNED[bits]).astype(U32)


def _vopd(ex, w, inst):
    """Run X and Y: all reads first, then both writes under EXEC."""
    x = _component(ex, w, inst, "x")
    y = _component(ex, w, inst, "y")
    active = ex.st.exec_lanes(w)
    for vdst, value in (x, y):
        write_vgpr(ex, w, vdst, value, active)


register("__vopd__", _vopd)
