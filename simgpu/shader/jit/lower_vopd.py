"""VOPD dual issue for the translator: both components read their sources, then both write (vector.vopd).
Each component is generated from its single-issue twin's definition; a component without one leaves the whole
instruction to the interpreter."""

from __future__ import annotations

from simgpu.shader.jit.lower import Lowering, Unsupported, translates
from simgpu.shader.jit.lower_sem import emit_definition
from simgpu.shader.jit.lower_valu import ELEM, Op, _signed, to_raw
from simgpu.shader.semantics import implemented
from simgpu.shader.state import VCC_LO
from simgpu.shader.vector.valu import SPECS, TYPES, const_kind
from simgpu.shader.vector.vopd import _TWIN, _vdst


def _component(lw: Lowering, inst, side: str):
    """(destination VGPR, raw 32-bit result) of one half, computed from the registers before any write."""
    b = lw.b
    entry = inst.info[side]
    name = _TWIN.get(entry["m"], "v_" + entry["m"].removeprefix("v_dual_"))
    implemented()
    spec = SPECS.get(name)
    if spec is None or spec.definition is None or spec.carry_out or spec.compare or TYPES[spec.dst][1] != 32:
        raise Unsupported(f"VOPD component {name}")
    ops = entry["ops"]
    vdst = _vdst(inst, ops[0][0])
    srcs = []
    for e, t in zip(ops[1:], spec.srcs, strict=True):
        field, kind = e[0], e[1]
        if TYPES[t][1] != 32:
            raise Unsupported("VOPD operand width")
        if kind == "lit":
            raw = lw.broadcast32(_signed(str(inst.literal or 0), 32))
        elif kind == "v":
            raw = lw.vgpr(inst.fields[field])
        else:
            code = inst.fields[field]
            if code >= 256:
                raw = lw.vgpr(code - 256)
            else:
                raw = lw.broadcast32(_signed(lw.scalar_src(code, inst.literal, const_kind(t)), 32))
        srcs.append(raw if ELEM[t].startswith("i") else b.op(f"bitcast {b.v32} {raw} to {b.vec(ELEM[t])}"))
    if spec.acc:
        cur = lw.vgpr(vdst)
        if not ELEM[spec.dst].startswith("i"):
            cur = b.op(f"bitcast {b.v32} {cur} to {b.vec(ELEM[spec.dst])}")
        srcs.append(cur)
    if spec.mask_in:
        srcs.append(b.lane_mask(lw.mask(VCC_LO)))
    out = emit_definition(Op(lw, True, spec), *srcs)
    return vdst, to_raw(lw, out, spec.dst)


@translates("__vopd__")
def _vopd(lw: Lowering, inst):
    lw.count_lanes()
    x = _component(lw, inst, "x")
    y = _component(lw, inst, "y")
    active = lw.exec_lanes()
    for vdst, value in (x, y):
        lw.set_vgpr(vdst, value, active)
