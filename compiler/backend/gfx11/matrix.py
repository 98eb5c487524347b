"""WMMA: D = A x B + C on gfx11's matrix cores (v_wmma_f32_16x16x16_{f16,bf16}, wave32).

A and B are 8 VGPRs each: 16 16-bit elements, element 2i in the low half of register i and 2i+1 in its high
half; C and D are 8 float32 VGPRs. When the 16 elements are the halves of one combined load (compiler.backend.
gfx11.memory) the loaded registers are the operand as they are; otherwise the elements are packed two at a time
(v_perm_b32 picks the low halves of two registers; bfloat16 values, held as float32, give their high halves),
except that elements loaded only for the WMMA are loaded into their half of the operand directly
(global_load_d16_b16 / _d16_hi_b16, ds_load_u16_d16 / _d16_hi, which keep the other half).
The 8 accumulators a WMMA reads as C are one register tuple (planned before selection), so the instruction
updates them in place: D = C, and the GEPs that are assigned back to them cost nothing.

Hazard (LLVM's GCNHazardRecognizer::fixWMMAHazards): a WMMA whose A or B overlaps the previous WMMA's D needs
a VALU between them (compiler.backend.gfx11.hazards inserts v_nop).
"""

from __future__ import annotations

from compiler.backend.gfx11 import operands as opnd
from compiler.backend.gfx11.memory import Packed
from compiler.backend.gfx11.select import RULES, C, GfxSelector
from compiler.backend.mir import Sub
from compiler.ir.ops import Ops, UOp

# v_perm_b32 selectors: bytes 1:0 of src1 then bytes 1:0 of src0 (low halves) / bytes 3:2 of each (high halves)
_PERM_LO = 0x05040100
_PERM_HI = 0x07060302


def plan(s: GfxSelector) -> None:
    """Give the accumulators each WMMA reads as C one 8-register tuple, and load A and B elements that no other
    combined load covers straight into their halves of an 8-register tuple (d16 loads)."""
    for u in s.k.uops:
        if u.op is not Ops.WMMA:
            continue
        for elems in (u.src[:16], u.src[16:32]):
            if all(e.op is Ops.LOAD and len(e.src) == 2 and e not in s.combined and e not in s.d16 and
                   s.users[e] == [u] and e.dtype.itemsize == 2 for e in elems) and len(set(elems)) == 16:
                t = s.vreg(8)
                for j, e in enumerate(elems):
                    s.d16[e] = (t[j // 2], j % 2)
        cs = u.src[32:]
        if all(c.op is Ops.DEFINE_ACC and c not in s.wmma_acc for c in cs) and len(set(cs)) == 8:
            t = s.vreg(8)
            for i, c in enumerate(cs):
                s.wmma_acc[c] = t[i]


def _operand(s: GfxSelector, elems: tuple[UOp, ...], bf16: bool) -> Sub:
    """The 8-register A or B operand from 16 element uops."""
    vals = [s.src(e) if e.op is Ops.CONST else s.val[e] for e in elems]
    if all(isinstance(v, Packed) for v in vals):
        words = [v.word for v in vals]
        base = words[0]
        if all(vals[i].half == i % 2 and words[i].reg is base.reg and words[i].off == base.off + i // 2
               for i in range(16)):
            return Sub(base.reg, base.off, 8)
    t = s.vreg(8)
    for i in range(8):
        lo, hi = (_half(s, v, e) for v, e in zip(vals[2 * i:2 * i + 2], elems[2 * i:2 * i + 2], strict=True))
        sel = _PERM_HI if bf16 else _PERM_LO
        s.vop("v_perm_b32", t[i], hi, lo, opnd.imm(sel, "b32"))
    return t.all


def _half(s: GfxSelector, v, e: UOp):
    if isinstance(v, Packed):
        return s.unpack(e)
    if isinstance(v, C):
        return s.in_vgpr(v, e.dtype)
    return s.in_vgpr(v, e.dtype)


@RULES.rule(Ops.WMMA)
def _wmma(s: GfxSelector, u: UOp) -> None:
    bf16 = u.arg == "bfloat16"
    a = _operand(s, u.src[:16], bf16)
    b = _operand(s, u.src[16:32], bf16)
    cs = [s.src(c) for c in u.src[32:]]
    first = cs[0]
    in_place = all(isinstance(c, Sub) and c.reg is first.reg and c.off == first.off + i for i, c in enumerate(cs))
    if in_place:
        d = Sub(first.reg, first.off, 8)
        c = d
    else:
        t = s.vreg(8)
        for i, cv in enumerate(cs):
            s.copy(t[i], cv, u.dtype)
        d = c = t.all
    op = "v_wmma_f32_16x16x16_bf16" if bf16 else "v_wmma_f32_16x16x16_f16"
    s.vop(op, d, a, b, c, early=True, flags=("wmma",))
    s.set(u, d)


@RULES.rule(Ops.GEP)
def _gep(s: GfxSelector, u: UOp) -> None:
    d = s.src(u.src[0])
    s.set(u, Sub(d.reg, d.off + u.arg, 1))
