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
from simgpu.shader.state import VCC_LO, wsel
from simgpu.shader.vector import window
from simgpu.shader.vector.valu import SPECS, TYPES, UNSIGNED, OpCtx, VOp, const_kind

U32 = np.uint32


_TWIN = {"v_dual_mul_dx9_zero_f32": "v_mul_dx9_zero_f32", "v_dual_dot2acc_f32_f16": "v_dot2acc_f32_f16"}


_SPECS: dict[str, VOp] = {}


def _spec(ex, w, inst, mnemonic: str) -> VOp:
    name = _TWIN.get(mnemonic, "v_" + mnemonic.removeprefix("v_dual_"))
    spec = _SPECS.get(name)
    if spec is None:
        implemented()  # loads every sem_* module, so SPECS is complete
        spec = SPECS.get(name)
        if spec is None:
            raise ex.illegal_inst(w, inst, f"{mnemonic}: {name} not implemented")
        _SPECS[name] = spec
    return spec


def _vdst(inst, field: str) -> int:
    if field == "vdsty":  # the low bit of vdsty is the opposite of vdstx's
        return (inst.fields["vdsty"] << 1) | ((inst.fields["vdstx"] & 1) ^ 1)
    return inst.fields[field]


def _typed(raw: np.ndarray, t: str) -> np.ndarray:
    dt, bits = TYPES[t]
    raw = np.asarray(raw).astype(UNSIGNED[bits], copy=False)
    return raw.view(dt) if raw.dtype != dt else raw


def _reader(inst, entry: list, t: str):
    """A function (ex, w, ix, ls) -> the source as type t: [n, lanes] (lanes `ls` of a VGPR: all, or a lone wave's
    window), or 0-d for the literal (ops broadcast)."""
    field, kind = entry[0], entry[1]
    if kind == "lit":
        const = _typed(np.array(inst.literal or 0, U32), t)
        return lambda ex, w, ix, ls: const
    if kind == "v":
        reg = inst.fields[field]
        return lambda ex, w, ix, ls: _typed(ex.st.vgpr[reg, ix, ls], t)
    code, kind_of = inst.fields[field], const_kind(t)
    return lambda ex, w, ix, ls: _typed(vector_src(ex, w, code, inst.literal, kind_of)[:, ls], t)


def _side_plan(ex, w, inst, side: str) -> tuple:
    """What one half needs each time it runs, worked out once per decoded instruction: (spec, destination
    VGPR, source readers)."""
    entry = inst.info[side]
    spec = _spec(ex, w, inst, entry["m"])
    ops = entry["ops"]
    readers = tuple(_reader(inst, e, t) for e, t in zip(ops[1:], spec.srcs, strict=True))
    return spec, _vdst(inst, ops[0][0]), readers


def _component(ex, w, ix, plan: tuple, ls: slice = slice(None)):
    """Compute one half over lanes `ls`: (destination VGPR, 32-bit result words, a copy) without writing."""
    spec, vdst, readers = plan
    srcs = [read(ex, w, ix, ls) for read in readers]
    if spec.acc:
        srcs.append(ex.st.vgpr[vdst, ix, ls].view(TYPES[spec.dst][0]))
    if spec.mask_in:
        srcs.append(ex.st.lanes_of(ex.st.mask64(w, VCC_LO))[:, ls])
    with np.errstate(all="ignore"):
        out = spec.fn(OpCtx(False, None, ex.st.lanes, ex, w), *srcs)
    dt, bits = TYPES[spec.dst]
    # astype(U32) copies: a result that is a view of a source register must not see the other half's write
    return vdst, np.asarray(out).astype(dt, copy=False).view(UNSIGNED[bits]).astype(U32)


def _vopd(ex, w, inst):
    """Run X and Y: all reads first, then both writes under EXEC."""
    plan = inst.__dict__.get("_vdplan")
    if plan is None:
        plan = inst.__dict__["_vdplan"] = (_side_plan(ex, w, inst, "x"), _side_plan(ex, w, inst, "y"))
    st = ex.st
    ix = wsel(w)
    if len(w) == 1 and window.windowed(plan[0][0]) and window.windowed(plan[1][0]):
        win = window.lane_window(st, w)
        if win is not None:  # a lone wave: both halves over its lane window (vector.window)
            ls, width, bits = win
            x, y = _component(ex, w, ix, plan[0], ls), _component(ex, w, ix, plan[1], ls)
            act = window.active(st, width, bits)
            for vdst, value in (x, y):
                window.store(st, vdst, ix, ls, window.per_lane(value, width), act)
            return
    x = _component(ex, w, ix, plan[0])
    y = _component(ex, w, ix, plan[1])
    if st.exec_full(w):
        for vdst, value in (x, y):
            st.vgpr[vdst, ix, :] = value  # every lane active: no mask (a 0-d result broadcasts)
        return
    active = st.exec_lanes(w)
    for vdst, value in (x, y):
        write_vgpr(ex, w, vdst, np.broadcast_to(value, active.shape), active)


register("__vopd__", _vopd)
