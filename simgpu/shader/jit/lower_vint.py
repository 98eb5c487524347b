"""Translators of the lane reads and writes (vector/lane.py): v_readfirstlane_b32, v_readlane_b32 and
v_writelane_b32, which move values between a lane of a VGPR and an SGPR."""

from __future__ import annotations

from simgpu.shader.jit.lower import Lowering, Unsupported, translates
from simgpu.shader.jit.lower_valu import _signed

# ---------------------------------------------------------------------------------------------- lane reads/writes


def _count(lw: Lowering, inst):
    if inst.dpp is not None:
        raise Unsupported("DPP")
    lw.count_lanes()


@translates("v_readfirstlane_b32")
def _readfirstlane(lw: Lowering, inst):
    """SGPR = the source of the lowest active lane (lane 0 when EXEC is zero)."""
    _count(lw, inst)
    b = lw.b
    code = inst.fields["src0"]
    if code >= 256:
        vals = lw.vgpr(code - 256)
        mi = b.mask_int
        ex = lw.exec_bits()
        first = b.call(mi, f"@llvm.cttz.{mi}", [(mi, ex), ("i1", "false")], f"declare {mi} @llvm.cttz.{mi}({mi}, i1)")
        lane = b.op(f"select i1 {b.op(f'icmp eq {mi} {ex}, 0')}, {mi} 0, {mi} {first}")
        value = b.op(f"extractelement {b.v32} {vals}, {mi} {lane}")
    else:
        value = lw.scalar_src(code, inst.literal)
    lw.set_sgpr(inst.fields["vdst"], value)


@translates("v_readlane_b32")
def _readlane(lw: Lowering, inst):
    """SGPR = VGPR[lane S1 mod lanes]; EXEC is ignored."""
    _count(lw, inst)
    b = lw.b
    code = inst.fields["src0"]
    if code < 256:
        raise Unsupported("readlane of a non-VGPR")
    lane = b.op(f"and i32 {lw.scalar_src(inst.fields['src1'], inst.literal)}, {lw.lanes - 1}")
    lw.set_sgpr(inst.fields["vdst"], b.op(f"extractelement {b.v32} {lw.vgpr(code - 256)}, i32 {lane}"))


@translates("v_writelane_b32")
def _writelane(lw: Lowering, inst):
    """VGPR[lane S1 mod lanes] = S0 (a scalar), regardless of EXEC."""
    _count(lw, inst)
    b = lw.b
    val = lw.scalar_src(inst.fields["src0"], inst.literal)
    lane = b.op(f"and i32 {lw.scalar_src(inst.fields['src1'], inst.literal)}, {lw.lanes - 1}")
    r = inst.fields["vdst"]
    lw.set_vgpr(r, b.op(f"insertelement {b.v32} {lw.vgpr(r)}, i32 {_signed(val, 32)}, i32 {lane}"), None)
