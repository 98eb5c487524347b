"""The VALU framework of the translator: operands and results of VOP1/VOP2/VOP3/VOP3SD/VOPC, driven by
the interpreter's own spec per opcode (valu.SPECS: source and destination types, carry-out, mask-in,
compare, accumulator), so the two tiers agree on what an instruction reads and writes. The operation,
`emit_definition(op, *sources)` over typed <lanes x T> values returning the result (and the carry/compare lane mask
where the spec says so), is generated from the opcode's definition (lower_sem).

Covered: 16-, 32- and 64-bit types, VGPR/SGPR/constant/literal sources, abs/neg on float sources, clamp on the
integer results of defined opcodes; a 16-bit operand is the half of its VGPR (or of the scalar's 32 bits) that
bit 7 of the register number (VOP1/VOP2/VOPC) or op_sel (VOP3) picks, a 16-bit result goes into the half
vdst's bit 7 or op_sel[3] picks, the other half kept (valu._raw_source, valu._dst16). The rest (DPP, SDWA, omod,
other clamps) raises Unsupported and runs in the interpreter. Packed math (VOP3P v_pk_* on 16-bit halves,
vector.vop3p.PACKED) runs its opcode's definition on each half: op_sel/op_sel_hi pick the halves, neg_lo/neg_hi
flip float signs, clamp is the definition's saturation or the float clamp.
"""

from __future__ import annotations

from dataclasses import dataclass

from simgpu.shader.jit.lower import TRANSLATORS, Lowering, Unsupported, from_definition, translates
from simgpu.shader.jit.lower_sem import emit_definition
from simgpu.shader.jit.lower_sem import signed_spelling as _signed
from simgpu.shader.semantics import implemented
from simgpu.shader.state import EXEC_LO, VCC_LO
from simgpu.shader.vector.valu import (
    SPECS,
    TYPES,
    _dst16,
    _op_sel,
    _source_entries,
    _zeroes_high,
    const_kind,
    is_float,
    t16_vgpr,
)
from simgpu.shader.vector.vop3p import PACKED, neg_hi, neg_lo, op_sel, op_sel_hi

# IR element type and bits of each VALU type
ELEM = {"f32": "float", "f64": "double", "f16": "half", "u32": "i32", "i32": "i32", "b32": "i32",
        "u64": "i64", "i64": "i64", "b64": "i64", "u16": "i16", "i16": "i16", "b16": "i16"}


@dataclass
class Op:
    """What an operation needs beyond its sources."""

    lw: Lowering
    carry_used: bool  # the carry-out goes somewhere (not null)
    spec: object
    clamp: bool = False  # the instruction's clamp bit (integer saturation, for definitions that take it)
    scalar: bool = False  # values of one wave (the SALU's definitions), not vectors over its lanes

    @property
    def b(self):
        return self.lw.b


def _bits(t: str) -> int:
    return TYPES[t][1]


def raw_source(lw: Lowering, inst, field: str, t: str, index: int = 0) -> str:
    """A source's raw bits as <lanes x i16/i32/i64>, as the interpreter reads it (valu._raw_source; its fast plan
    reads the same values): a VGPR (pair), or a scalar through operand.scalar_src's rules (null reads 0; the
    literal extended as the type's kind says; inline constants of that kind; specials). A 16-bit source (operand
    `index`) is a half of the 32 bits read that way."""
    f = inst.fields
    bits = _bits(t)
    if bits == 16:
        return _half_source(lw, inst, field, t, index)
    if field == "K":
        scalar = str(inst.literal or 0)
    else:
        code = 256 + f["vsrc1"] if field == "vsrc1" else f[field]
        if code >= 256:
            r = code - 256
            return lw.vgpr64(r) if bits == 64 else lw.vgpr(r)
        scalar = lw.scalar_src(code, inst.literal, const_kind(t))
    scalar = _signed(scalar, bits)
    return lw.broadcast64(scalar) if bits == 64 else lw.broadcast32(scalar)


def _half_source(lw: Lowering, inst, field: str, t: str, index: int) -> str:
    """valu._raw_source of a 16-bit operand: the high half when bit 7 of a VOP1/VOP2/VOPC VGPR or op_sel says."""
    b = lw.b
    code = 255 if field == "K" else 256 + inst.fields["vsrc1"] if field == "vsrc1" else inst.fields[field]
    code, hi = t16_vgpr(inst, code, 16)
    if code >= 256:
        word = lw.vgpr(code - 256)
    else:
        word = lw.broadcast32(_signed(lw.scalar_src(code, inst.literal, const_kind(t)), 32))
    if hi | _op_sel(inst, index):
        word = b.op(f"lshr {b.v32} {word}, {b.splat('i32', 16)}")
    return b.op(f"trunc {b.v32} {word} to {b.vec('i16')}")


def typed_source(lw: Lowering, inst, index: int, field: str, t: str) -> str:
    """A source as a typed vector, with VOP3 abs/neg applied to floats (sign-bit operations, as
    valu.typed_source does them on the raw bits)."""
    b = lw.b
    raw = raw_source(lw, inst, field, t, index)
    bits = _bits(t)
    ity = b.vec(f"i{bits}")
    if is_float(t) and inst.encoding == "VOP3":
        a = (inst.fields["abs"] >> index) & 1
        n = (inst.fields["neg"] >> index) & 1
        sign = 1 << (bits - 1)
        if a:
            raw = b.op(f"and {ity} {raw}, {b.splat(f'i{bits}', _signed(str(sign - 1), bits))}")
        if n:
            raw = b.op(f"xor {ity} {raw}, {b.splat(f'i{bits}', _signed(str(sign), bits))}")
    if ELEM[t].startswith("i"):
        return raw
    return b.op(f"bitcast {ity} {raw} to {b.vec(ELEM[t])}")


def to_raw(lw: Lowering, value: str, t: str) -> str:
    """A typed vector back to its raw integer bits."""
    b = lw.b
    if ELEM[t].startswith("i"):
        return value
    return b.op(f"bitcast {b.vec(ELEM[t])} {value} to {b.vec(f'i{_bits(t)}')}")


def mask_in(lw: Lowering, inst, vcc_only: bool) -> str:
    """valu._lane_mask_in: VCC for e32 forms, the src2 operand for VOP3 forms, as <lanes x i1>."""
    b = lw.b
    code = inst.fields["src2"] if inst.encoding in ("VOP3", "VOP3SD") and not vcc_only else VCC_LO
    if code == lw.null:
        bits = "0"
    elif code < 127:  # an SGPR (pair) of the file: plain SGPRs, VCC, TTMPs, M0 (its code is the family's), EXEC
        bits = lw.mask(code)
    elif code == 255 or 128 <= code <= 248:
        c = lw.scalar_const(code, lw.lanes == 64, inst.literal)
        if c is None:
            raise Unsupported(f"mask operand {code}")
        bits = _signed(str(c & ((1 << lw.lanes) - 1)), lw.lanes)
    else:
        raise Unsupported(f"mask operand {code}")
    return b.lane_mask(bits)


def _check_form(inst, spec) -> None:
    f = inst.fields
    if inst.dpp is not None or inst.encoding not in ("VOP1", "VOP2", "VOP3", "VOP3SD", "VOPC"):
        raise Unsupported("encoding")
    # clamp on an integer result: saturation where the definition takes it, else nothing (as in the interpreter)
    clamp_ok = spec.definition is not None and not is_float(spec.dst or "")
    if inst.encoding == "VOP3":
        if f["omod"] or (f["clamp"] and not clamp_ok):
            raise Unsupported("modifiers")
        floats = [is_float(t) for t in spec.srcs]
        for i in range(3):
            if ((f["abs"] | f["neg"]) >> i) & 1 and not (i < len(floats) and floats[i]):
                raise Unsupported("abs/neg on a non-float operand")
    if inst.encoding == "VOP3SD" and (f["omod"] or f["neg"] or (f["clamp"] and not clamp_ok)):
        raise Unsupported("modifiers")


def valu(lw: Lowering, inst, spec) -> None:
    """Translate one VALU instruction of the common forms, its operation generated from spec's definition."""
    _check_form(inst, spec)
    b = lw.b
    lw.count_lanes()
    entries = _source_entries(inst)
    if len(entries) < len(spec.srcs):
        raise Unsupported("operands")
    srcs = [typed_source(lw, inst, i, e[0], t) for i, (e, t) in enumerate(zip(entries, spec.srcs, strict=False))]
    vdst = inst.fields.get("vdst", 0)
    if spec.acc:
        bits = _bits(spec.dst)
        if bits == 16:  # (v_fmac_f16, the only one, is an f16 fma: the interpreter's)
            raise Unsupported("16-bit accumulator")
        cur = lw.vgpr64(vdst) if bits == 64 else lw.vgpr(vdst)
        if not ELEM[spec.dst].startswith("i"):
            cur = b.op(f"bitcast {b.vec(f'i{bits}')} {cur} to {b.vec(ELEM[spec.dst])}")
        srcs.append(cur)
    if spec.mask_in:
        srcs.append(mask_in(lw, inst, spec.vcc_in))
    carry_code = inst.fields["sdst"] if inst.encoding == "VOP3SD" else VCC_LO
    clamp = inst.encoding in ("VOP3", "VOP3SD") and bool(inst.fields["clamp"])
    op = Op(lw, not spec.carry_out or carry_code != lw.null, spec, clamp)
    out = emit_definition(op, *srcs)
    active = lw.exec_lanes()
    if spec.compare:
        res = b.mask_bits(b.op(f"and {b.vmask} {out}, {active}"))
        if spec.cmpx:
            lw.set_mask(EXEC_LO, res)
            if lw.family != "gfx9":  # gfx9's v_cmpx also writes VCC (e32) or its SGPR destination (e64)
                return
        lw.set_mask(inst.fields["vdst"] if inst.encoding == "VOP3" else VCC_LO, res)
        return
    carry = None
    if spec.carry_out:
        out, carry = out
    raw = to_raw(lw, out, spec.dst)
    if _bits(spec.dst) == 64:
        lw.set_vgpr64(vdst, raw, active)
    elif _bits(spec.dst) == 16:
        _write_half(lw, inst, raw, active)
    else:
        lw.set_vgpr(vdst, raw, active)
    if carry is not None and op.carry_used:
        lw.set_mask(carry_code, b.mask_bits(b.op(f"and {b.vmask} {carry}, {active}")))


def _clamp01(lw: Lowering, x: str, t: str) -> str:
    """The float clamp to [0, 1] (valu._omod_clamp: NaN gives +0, -0 stays -0)."""
    b, ft = lw.b, lw.b.vec(ELEM[t])
    zero, one = (f"splat ({ELEM[t]} 0x{v:016X})" for v in (0, 0x3FF0000000000000))
    x = b.op(f"select {b.vmask} {b.op(f'fcmp olt {ft} {x}, {zero}')}, {ft} {zero}, {ft} {x}")
    x = b.op(f"select {b.vmask} {b.op(f'fcmp ogt {ft} {x}, {one}')}, {ft} {one}, {ft} {x}")
    return b.op(f"select {b.vmask} {b.op(f'fcmp uno {ft} {x}, {x}')}, {ft} {zero}, {ft} {x}")


def _pk_half(lw: Lowering, inst, word: str, i: int, high: int, t: str) -> str:
    """Lane half `high` of packed source i (vop3p.pk_halves): the 16 bits op_sel(_hi) picks, sign flipped by neg."""
    b, h = lw.b, lw.b.vec("i16")
    if (op_sel_hi if high else op_sel)(inst, i):
        word = b.op(f"lshr {b.v32} {word}, {b.splat('i32', 16)}")
    x = b.op(f"trunc {b.v32} {word} to {h}")
    if not is_float(t):
        return x
    if (neg_hi if high else neg_lo)(inst, i):
        x = b.op(f"xor {h} {x}, {b.splat('i16', -32768)}")
    return b.op(f"bitcast {h} {x} to {b.vec(ELEM[t])}")


def packed(lw: Lowering, inst, spec) -> None:
    """A v_pk_* instruction (vop3p.pk_execute): spec's definition on the low and the high 16-bit halves."""
    if inst.dpp is not None or _bits(spec.dst) != 16:
        raise Unsupported("DPP or 32-bit halves")
    b = lw.b
    lw.count_lanes()
    kind = "v2f16" if spec.dst == "f16" else "b32"  # float constants: f16 bits in the low half (vop3p)
    words = [raw_source(lw, inst, f, kind) for f in ("src0", "src1", "src2")[:len(spec.srcs)]]
    clamp = bool(inst.fields["clamp"])
    out = []
    for high in (0, 1):
        srcs = [_pk_half(lw, inst, wd, i, high, t) for i, (wd, t) in enumerate(zip(words, spec.srcs, strict=True))]
        r = emit_definition(Op(lw, True, spec, clamp), *srcs)
        r = _clamp01(lw, r, spec.dst) if clamp and is_float(spec.dst) else r
        out.append(b.op(f"zext {b.vec('i16')} {to_raw(lw, r, spec.dst)} to {b.v32}"))
    high = b.op(f"shl {b.v32} {out[1]}, {b.splat('i32', 16)}")
    value = b.op(f"or {b.v32} {out[0]}, {high}")
    lw.set_vgpr(inst.fields["vdst"], value, lw.exec_lanes())


def _write_half(lw: Lowering, inst, raw16: str, active: str) -> None:
    """A 16-bit result into its half of vdst (valu._merge_half: the other half kept, or zeroed where the family's
    low-half results zero it)."""
    b = lw.b
    vdst, hi = _dst16(inst)
    cur = lw.vgpr(vdst)
    v = b.op(f"zext {b.vec('i16')} {raw16} to {b.v32}")
    if hi:
        kept = b.op(f"and {b.v32} {cur}, {b.splat('i32', 0xFFFF)}")
        v = b.op(f"or {b.v32} {kept}, {b.op(f'shl {b.v32} {v}, splat (i32 16)')}")
    elif not _zeroes_high(inst):
        v = b.op(f"or {b.v32} {b.op(f'and {b.v32} {cur}, splat (i32 -65536)')}, {v}")
    lw.set_vgpr(vdst, v, active)


def register_all() -> None:
    """A translator for every VALU mnemonic defined in the expression form, its operation generated from the
    definition (jit.lower_sem)."""
    implemented()  # every semantics module loaded: SPECS complete
    for name, spec in SPECS.items():
        if spec.definition is not None and name not in TRANSLATORS:  # a family may have its own translator first
            # (a family's own spec, gfx12's v_min_num_f32, is that family's translator: lower.translator)
            translates(name, family=spec.family)(from_definition(spec, lambda lw, inst, s=spec: valu(lw, inst, s)))
    for name, (spec, family) in PACKED.items():
        if spec.definition is not None:
            translates(name, family=family)(from_definition(spec, lambda lw, inst, s=spec: packed(lw, inst, s)))
