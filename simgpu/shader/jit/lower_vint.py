"""VALU integer operations for the translator that are not in the expression form yet (the rest are generated
from their definitions: jit.lower_sem): 64-bit shifts, by hand on the halves of a VGPR pair for a constant
amount as the interpreter's pair plan does, and the lane reads and writes (vector/lane.py)."""

from __future__ import annotations

from simgpu.shader.jit.lower import Lowering, Unsupported, translates
from simgpu.shader.jit.lower_valu import EMITTERS, Op, _signed, emits, scalar_src, valu
from simgpu.shader.operand import constant
from simgpu.shader.semantics import base_name
from simgpu.shader.vector.valu import SPECS


def _c(op: Op, v: int, bits: int = 32) -> str:
    return op.b.splat(f"i{bits}", _signed(str(v), bits))


# ---------------------------------------------------------------------------------------------- 64-bit shifts


def _m(op: Op, s, bits: int = 32):
    return op.b.op(f"and {op.b.v32} {s}, {_c(op, bits - 1)}")


def _shift64(kind: str):
    def fn(op: Op, s, v):
        b = op.b
        amount = b.op(f"zext {b.v32} {_m(op, s, 64)} to {b.v64}")
        return b.op(f"{kind} {b.v64} {v}, {amount}")
    return fn


emits("v_lshlrev_b64")(_shift64("shl"))
emits("v_lshrrev_b64")(_shift64("lshr"))
emits("v_ashrrev_i64")(_shift64("ashr"))


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
        value = scalar_src(lw, inst, code)
    lw.set_sgpr(inst.fields["vdst"], value)


@translates("v_readlane_b32")
def _readlane(lw: Lowering, inst):
    """SGPR = VGPR[lane S1 mod lanes]; EXEC is ignored."""
    _count(lw, inst)
    b = lw.b
    code = inst.fields["src0"]
    if code < 256:
        raise Unsupported("readlane of a non-VGPR")
    lane = b.op(f"and i32 {scalar_src(lw, inst, inst.fields['src1'])}, {lw.lanes - 1}")
    lw.set_sgpr(inst.fields["vdst"], b.op(f"extractelement {b.v32} {lw.vgpr(code - 256)}, i32 {lane}"))


@translates("v_writelane_b32")
def _writelane(lw: Lowering, inst):
    """VGPR[lane S1 mod lanes] = S0 (a scalar), regardless of EXEC."""
    _count(lw, inst)
    b = lw.b
    val = scalar_src(lw, inst, inst.fields["src0"])
    lane = b.op(f"and i32 {scalar_src(lw, inst, inst.fields['src1'])}, {lw.lanes - 1}")
    r = inst.fields["vdst"]
    lw.set_vgpr(r, b.op(f"insertelement {b.v32} {lw.vgpr(r)}, i32 {_signed(val, 32)}, i32 {lane}"), None)


def _shift_pair(kind: str):
    """v_lshlrev_b64 & co. by a constant amount on the two 32-bit halves (as valu's pair plan does it in the
    interpreter: the same results, and no 64-bit lanes); other forms go through the generic path."""
    def fn(lw: Lowering, inst):
        f = inst.fields
        code = f["src0"]
        amount = (inst.literal or 0) if code == 255 else constant(code, "b32") if 128 <= code < 255 else None
        if (inst.encoding != "VOP3" or inst.dpp is not None or amount is None or f["src1"] < 256
                or f["abs"] or f["neg"] or f["omod"] or f["clamp"] or f["op_sel"]):
            name = base_name(inst.mnemonic)  # (gfx12 has a VOP2 form: v_lshlrev_b64_e32)
            return valu(lw, inst, SPECS[name], EMITTERS[name])
        b = lw.b
        v = b.v32
        n = amount & 63
        lw.count_lanes()
        r = f["src1"] - 256
        lo, hi = lw.vgpr(r), lw.vgpr(r + 1)

        def c(x):
            return b.splat("i32", x)
        if n == 0:
            out_lo, out_hi = lo, hi
        elif kind == "shl":
            if n >= 32:
                out_lo, out_hi = c(0), b.op(f"shl {v} {lo}, {c(n - 32)}")
            else:
                out_lo = b.op(f"shl {v} {lo}, {c(n)}")
                out_hi = b.op(f"or {v} {b.op(f'shl {v} {hi}, {c(n)}')}, {b.op(f'lshr {v} {lo}, {c(32 - n)}')}")
        else:
            top = "ashr" if kind == "ashr" else "lshr"
            if n >= 32:
                out_lo = b.op(f"{top} {v} {hi}, {c(n - 32)}")
                out_hi = b.op(f"ashr {v} {hi}, {c(31)}") if kind == "ashr" else c(0)
            else:
                out_lo = b.op(f"or {v} {b.op(f'lshr {v} {lo}, {c(n)}')}, {b.op(f'shl {v} {hi}, {c(32 - n)}')}")
                out_hi = b.op(f"{top} {v} {hi}, {c(n)}")
        active = lw.exec_lanes()
        lw.set_vgpr(f["vdst"], out_lo, active)
        lw.set_vgpr(f["vdst"] + 1, out_hi, active)
    return fn


translates("v_lshlrev_b64")(_shift_pair("shl"))
translates("v_lshrrev_b64")(_shift_pair("lshr"))
translates("v_ashrrev_i64")(_shift_pair("ashr"))
