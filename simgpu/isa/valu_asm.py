"""Assembler of the vector-ALU family: LLVM-syntax text back to VOP1/VOP2/VOPC/VOP3/VOP3P/VOPD/VINTERP bytes.

The inverse of valu.py's printer, driven by the same tables: the mnemonic names (encoding, opcode, form),
the entry's operand list says which field each operand fills, and the modifier effects say which bit a
printed `-`, `|..|`, array element or flag sets.
"""

from __future__ import annotations

import re
from functools import cache

from .arch import DEFAULT, get_arch
from .encodings import DPP8, SRC_DPP8, SRC_DPP8_FI, SRC_DPP16, SRC_LITERAL, SRC_SDWA
from .inst import Inst
from .operands import parse_register, parse_src
from .valu_fmt import DPP_ROWS, E32, OMOD, OP_SEL_BIT, SDWA_SEL, SDWA_UNUSED, sized, tables

_TRAILING = re.compile(r"^(op_sel|op_sel_hi|neg_lo|neg_hi|clamp|mul:|div:|wait_exp:|quad_perm:|row_|dpp8:|fi:|"
                       r"bound_ctrl:|bank_mask:|row_mask:|byte_sel:|index_key:|cbsz:|abid:|blgp:|bitop3:|wave_|"
                       r"dst_sel:|dst_unused:|src0_sel:|src1_sel:|neg:\[)")
_SDWA_WORDS = ("dst_sel:", "dst_unused:", "src0_sel:", "src1_sel:")
_DPP16_WORDS = ("quad_perm:", "row_", "wave_")


class _Bad(ValueError):
    """One candidate form does not fit the operands; carries the offending token."""

    def __init__(self, msg: str, tok: str = ""):
        super().__init__(msg)
        self.tok = tok


@cache
def mnemonic_index(arch: str = DEFAULT) -> dict[str, list[tuple[str, int, str, dict]]]:
    """mnemonic -> [(encoding, opcode, form, entry)] over every form in the tables, the default mode's
    entries before the True16 ones (a text that fits both assembles as llvm-mc's default mode would);
    VOPD under its X half."""
    idx: dict[str, list[tuple[str, int, str, dict]]] = {}
    for key in ("ops", "ops16"):
        for enc, entries in tables(arch)[key].items():
            for op, e in entries.items():
                for form in ("m", "dpp16", "dpp8", "sdwa", "scaled"):
                    if form in e:
                        idx.setdefault(e[form], []).append((enc, op, "base" if form == "m" else form, e))
    for op, e in tables(arch)["vopd"]["x"].items():
        idx.setdefault(e["m"], []).append(("VOPD", op, "x", e))
    return idx


def assemble(mnemonic: str, toks: list[str], ctx) -> bytes | None:
    """Bytes of one vector-ALU instruction, or an AsmError naming the offending token."""
    cands = mnemonic_index(ctx.arch).get(mnemonic)
    if not cands:
        return None
    form = "dpp8" if any(t.startswith("dpp8:") for t in toks) else (
        "dpp16" if any(t.startswith(_DPP16_WORDS) for t in toks) else (
            "sdwa" if any(t.startswith(_SDWA_WORDS) for t in toks) else "base"))
    err = _Bad(f"{mnemonic} takes other operands")
    if cands[0][2] == "scaled":
        try:
            return _build_scaled(*cands[0][:2], cands[0][3], toks, ctx.arch)
        except _Bad as exc:
            raise ctx.error(str(exc), exc.tok or mnemonic) from None
    for enc, op, f, e in cands:
        if f not in (form, "x"):
            continue
        try:
            inst = _build_vopd(op, toks, ctx.arch) if enc == "VOPD" else _build(enc, op, f, e, toks, ctx.arch)
            return inst.encode()
        except _Bad as exc:
            err = exc
    if form != "base" and not any(f == form for _, _, f, _ in cands):
        err = _Bad(f"{mnemonic} has no {form.upper()} form")
    raise ctx.error(str(err), err.tok or mnemonic)


def _split(toks: list[str]) -> tuple[list[str], list[str]]:
    ops = [t for t in toks if not _TRAILING.match(t)]
    return ops, [t for t in toks if _TRAILING.match(t)]


def _build(enc: str, op: int, form: str, e: dict, toks: list[str], arch: str) -> Inst:
    layout = e.get("enc", enc)
    inst = Inst(layout, op, e["m"], {"op": op} | e.get("fixed", {}), info={"entry": e, "form": form}, arch=arch)
    if form == "dpp16":
        inst.dpp = {"kind": 16, "row_mask": 0xF, "bank_mask": 0xF}
        inst.fields["src0"] = SRC_DPP16
    elif form == "dpp8":
        inst.dpp = {"kind": 8}
        inst.fields["src0"] = SRC_DPP8
    elif form == "sdwa":  # gfx9; a dst_sel not written is DWORD (v_cvt_pk_f32_fp8_sdwa), other selects 0
        inst.dpp = {"kind": "sdwa", "dst_sel": 0 if enc == "VOPC" else 6}
        inst.fields["src0"] = SRC_SDWA
    if enc == "VOP3P" and e.get("hidef"):
        _set_hi_default(inst, e)
    ops, trailing = _split(toks)
    if len(ops) != len(e["ops"]):
        raise _Bad(f"{e['m']} takes {len(e['ops'])} operands, got {len(ops)}")
    dpp16_e32 = form in ("dpp16", "sdwa") and enc in ("VOP1", "VOP2", "VOPC")
    effects = e.get({"base": "mods", "sdwa": "sdwamods"}.get(form, "dppmods"), {})
    for spec, tok in zip(_sized_specs(e, trailing), ops, strict=True):
        _operand(inst, spec, tok, effects, dpp16_e32)
    for tok in trailing:
        _trailing(inst, tok, effects, dpp16_e32)
    return inst


def _sized_specs(e: dict, trailing: list[str]) -> list[list]:
    """The entry's operand specs, widths set by the format modifiers written (gfx950's f8f6f4 cbsz / blgp)."""
    if "fmt" not in e:
        return e["ops"]
    values = {}
    for tok in trailing:
        name, _, val = tok.partition(":")
        if name in e["fmt"].values():
            values[name] = _int(val, tok, 7)
    return [sized(spec, e, values) for spec in e["ops"]]


def _build_scaled(enc: str, op: int, e: dict, toks: list[str], arch: str) -> bytes:
    """gfx950's scaled MFMA: the v_mfma_ld_scale_b32 word (the two scale VGPRs, op_sel / op_sel_hi's first two
    elements; LLVM ignores the third) and the f8f6f4 MFMA's (its four operands and cbsz / blgp)."""
    ops, trailing = _split(toks)
    if len(ops) != 6:
        raise _Bad(f"{e['scaled']} takes 6 operands, got {len(ops)}")
    sel = {"op_sel": 0, "op_sel_hi": 0}
    for tok in trailing:
        name, _, val = tok.partition(":")
        if name in sel:
            items = _items(val, tok, 3)
            sel[name] = _int(items[0], tok, 1) | _int(items[1], tok, 1) << 1
    mfma = _build(enc, op, "base", e, ops[:4] + [t for t in trailing if t.split(":")[0] not in sel], arch)
    mfma.fields["abid"] = 1  # what marks the MFMA word of a scaled MFMA (LLVM 22's encoding)
    ld_op = next(k for k, v in tables(arch)["ops"]["VOP3P"].items() if v.get("pair"))
    ld = Inst("VOP3P", ld_op, "v_mfma_ld_scale_b32", {"op": ld_op} | sel, arch=arch)
    for field, tok in zip(("src0", "src1"), ops[4:], strict=True):
        reg = parse_register(tok)
        if reg is None or reg[0] != "v" or reg[2] != 1:
            raise _Bad("expected a VGPR holding scales", tok)
        ld.fields[field] = 256 + reg[1]
    return ld.encode() + mfma.encode()


def _set_hi_default(inst: Inst, e: dict) -> None:
    # op_sel_hi is all ones unless printed; LLVM also sets the bits of sources the opcode lacks.
    inst.fields["op_sel_hi"] = 3
    inst.fields["op_sel_hi2"] = 1


def _build_vopd(opx: int, toks: list[str], arch: str) -> Inst:
    if "::" not in toks:
        raise _Bad("expected '::' and the second half of a dual instruction")
    i = toks.index("::")
    if i + 1 >= len(toks):
        raise _Bad("expected a dual (v_dual_*) mnemonic after '::'", "::")
    ymn, ytoks = toks[i + 1], toks[i + 2:]
    x = tables(arch)["vopd"]["x"][opx]
    ys = [(op, e) for op, e in tables(arch)["vopd"]["y"].items() if e["m"] == ymn]
    if not ys:
        raise _Bad("expected a dual (v_dual_*) mnemonic after '::'", ymn)
    opy, y = ys[0]
    inst = Inst("VOPD", opx, x["m"], {"opx": opx, "opy": opy}, info={"x": x, "y": y, "form": "base"}, arch=arch)
    for e, part in ((x, toks[:i]), (y, ytoks)):
        if len(part) != len(e["ops"]):
            raise _Bad(f"{e['m']} takes {len(e['ops'])} operands, got {len(part)}")
        for spec, tok in zip(e["ops"], part, strict=True):
            _operand(inst, spec, tok, {}, False)
    return inst


# ---------------------------------------------------------------- operands

def _strip(tok: str) -> tuple[str, set[str]]:
    mods = set()
    for name in ("neg", "sext"):
        if tok.startswith(name + "(") and tok.endswith(")"):
            return _strip(tok[len(name) + 1:-1])[0], {name} | _strip(tok[len(name) + 1:-1])[1]
    if tok.startswith("-") and (tok[1:2] == "|" or not re.fullmatch(r"-[0-9.]+|-0x[0-9a-fA-F]+", tok)):
        tok, mods = tok[1:], {"neg"}
    if len(tok) > 2 and tok[0] == "|" and tok[-1] == "|":
        tok = tok[1:-1]
        mods.add("abs")
    return tok, mods


def _operand(inst: Inst, spec: list, tok: str, effects: dict, dpp16_e32: bool) -> None:
    field, kind, count = spec[0], spec[1], spec[2]
    core, mods = _strip(tok) if kind != "imp" else (tok, set())
    for m in mods:
        _set_effect(inst, effects, ["pre", m, field], tok, dpp16_e32)
    agpr = _agpr_index(core, count)
    sdwa = inst.dpp is not None and inst.dpp["kind"] == "sdwa"
    if sdwa and (field in ("src0", "vsrc1") or (kind == "imp" and field == "vcc" and tok != "vcc")):
        _sdwa_operand(inst, spec, core, tok)
    elif kind == "imp":
        if tok != field:
            raise _Bad(f"expected {field}", tok)
    elif kind in ("a", "asrc") or (agpr is not None and kind in ("v", "src")):  # gfx9's AGPRs
        if agpr is None:
            raise _Bad(f"expected an AGPR range of {count} dwords", tok)
        if kind in ("v", "src"):
            _set_effect(inst, effects, ["acc"], tok, False, field)
        inst.fields[field] = agpr + (256 if kind in ("asrc", "src") else 0)
    elif kind == "v":
        _vgpr(inst, field, core, count)
    elif kind == "vsrc":
        if (idx := _vgpr_index(core, count, inst, field)) is None:
            raise _Bad(f"expected a VGPR range of {count} dwords", tok)
        inst.fields[field] = 256 + idx
    elif kind == "s":
        code = parse_src(core, count, get_arch(inst.arch).family)
        if code is None or code > 255 or 128 <= code <= 208 or 240 <= code <= 248:
            raise _Bad(f"expected a scalar register of {count} dwords", tok)
        inst.fields[field] = code
    elif kind == "lit":
        _set_literal(inst, _parse_literal(core, tok), tok)
    elif field == "src0" and inst.dpp is not None:
        idx = _vgpr_index(core, count, inst, field)
        if idx is None:
            raise _Bad("expected a VGPR as the DPP source", tok)
        inst.dpp["src0"] = idx
    elif (idx := _vgpr_index(core, count, inst, field)) is not None:
        inst.fields[field] = 256 + idx
    else:
        inst.fields[field] = _source(inst, core, max(count, 1), spec[3], tok)


_HALF = re.compile(r"v(\d+)\.([lh])")


def _agpr_index(core: str, count: int) -> int | None:
    """Index of an AGPR range of `count` dwords (a5, a[4:7]), else None."""
    reg = parse_register(core)
    if reg is None or reg[0] != "a" or reg[2] != count or reg[1] + count > 256:
        return None
    return reg[1]


def _vgpr_index(core: str, count: int, inst: Inst, field: str) -> int | None:
    """Index of a VGPR range of `count` dwords. Count 0 is a 16-bit half vN.l/vN.h: in the e32 encodings
    .h sets bit 7 of the index (v0-v127); in VOP3 the index is N and .h sets the operand's op_sel bit (an
    op_sel:[...] written as well adds its bits)."""
    if count == 0:
        m = _HALF.fullmatch(core)
        if not m:
            return None
        n, high = int(m.group(1)), m.group(2) == "h"
        if inst.encoding in E32:
            return None if n > 127 else n | (128 if high else 0)
        if n > 255 or (high and field not in OP_SEL_BIT):
            return None
        if high:
            inst.fields["op_sel"] = inst.fields.get("op_sel", 0) | (1 << OP_SEL_BIT[field])
        return n
    reg = parse_register(core)
    if reg is None or reg[0] != "v" or reg[2] != count or reg[1] + count > 256:
        return None
    return reg[1]


def _sdwa_operand(inst: Inst, spec: list, core: str, tok: str) -> None:
    """gfx9's SDWA sources (a VGPR, or a scalar code with the s0/s1 bit) and VOPC destination (VCC, or an SGPR
    pair with sd)."""
    field, count, d = spec[0], max(spec[2], 1), inst.dpp
    fam = get_arch(inst.arch).family
    if field == "vcc":
        code = parse_src(core, 2, fam)
        if code is None or code > 127:
            raise _Bad("expected vcc or an SGPR pair", tok)
        d["sd"], d["sdst"] = 1, code
        return
    idx = _vgpr_index(core, count, inst, field)
    if idx is None:
        code = _source(inst, core, count, spec[3], tok) if len(spec) > 3 else parse_src(core, count, fam)
        if code is None or code >= 255:
            raise _Bad("expected a VGPR, SGPR or inline constant", tok)
        idx = code
        d["s0" if field == "src0" else "s1"] = 1
    if field == "src0":
        d["src0"] = idx
    else:
        inst.fields["vsrc1"] = idx


def _vgpr(inst: Inst, field: str, core: str, count: int) -> None:
    idx = _vgpr_index(core, count, inst, field)
    if idx is None:
        raise _Bad(f"expected a VGPR range of {count} dwords", core)
    if field == "vdsty":
        if (idx & 1) == (inst.fields.get("vdstx", 0) & 1):
            raise _Bad("the two destinations of a dual instruction need opposite parity", core)
        inst.fields[field] = idx >> 1
    else:
        inst.fields[field] = idx


@cache
def _inline_codes(cls: str, arch: str) -> dict[str, int]:
    return {text: int(code) for code, text in tables(arch)["classes"][cls]["inline"].items()}


@cache
def _value_codes(cls: str, arch: str) -> dict[int, str]:
    return {int(v, 16): text for v, text in tables(arch)["classes"][cls]["value"].items()}


def _source(inst: Inst, core: str, count: int, cls: str, tok: str) -> int:
    inline = _inline_codes(cls, inst.arch)
    code = inline.get(core)
    if code is not None:
        return code
    reg = parse_src(core, count, get_arch(inst.arch).family)
    if reg is not None and not (128 <= reg <= 208 or 240 <= reg <= 248):
        return reg
    value = _parse_literal(core, tok)
    text = _value_codes(cls, inst.arch).get(value)
    if text is not None and text in inline:  # llvm-mc folds such a literal to the constant
        return inline[text]
    if tables(inst.arch)["classes"][cls]["lit"] is None:
        raise _Bad("no literal allowed here", tok)
    _set_literal(inst, value, tok)
    return SRC_LITERAL


def _parse_literal(core: str, tok: str) -> int:
    try:
        value = int(core, 0)
    except ValueError:
        raise _Bad("expected a register, inline constant or 32-bit literal", tok) from None
    if not -(1 << 31) <= value < (1 << 32):
        raise _Bad("literal does not fit in 32 bits", tok)
    return value & 0xFFFFFFFF


def _set_literal(inst: Inst, value: int, tok: str) -> None:
    if inst.literal is not None and inst.literal != value:
        raise _Bad("only one distinct literal per instruction", tok)
    inst.literal = value


def _set_effect(inst: Inst, effects: dict, want: list, tok: str, dpp16_e32: bool, acc: str | None = None) -> None:
    """Set the modifier bit whose printed effect is `want` (prefix on a field, or array position; with `acc`, the
    acc bit that makes that field an AGPR)."""
    for key, eff in effects.items():
        if eff[:len(want)] == want and (acc is None or acc in eff[1]):
            name, _, bit = key.partition(":")
            target = inst.dpp if dpp16_e32 else inst.fields
            target[name] = target.get(name, 0) | int(bit)
            return
    raise _Bad("modifier not allowed here", tok)


def _clear_effect(inst: Inst, effects: dict, want: list) -> None:
    for key, eff in effects.items():
        if eff[:len(want)] == want:
            name, _, bit = key.partition(":")
            inst.fields[name] = inst.fields.get(name, 0) & ~int(bit)


# ---------------------------------------------------------------- trailing modifiers

def _trailing(inst: Inst, tok: str, effects: dict, dpp16_e32: bool) -> None:
    name, _, val = tok.partition(":")
    if val.startswith("["):
        _array(inst, name, val, effects, tok)
    elif tok == "clamp":
        _set_effect(inst, effects, ["flag", "clamp"], tok, dpp16_e32 and inst.dpp["kind"] == "sdwa")
    elif tok in OMOD.values():
        _set_effect(inst, effects, ["flag", "mul:2"], tok, dpp16_e32)
        (inst.dpp if dpp16_e32 else inst.fields)["omod"] = {v: k for k, v in OMOD.items()}[tok]
    elif name == "wait_exp" and inst.encoding == "VINTERP":
        inst.fields["waitexp"] = _int(val, tok, 7)
    elif any(eff[:2] == ["val", name] for eff in effects.values()):
        _valued(inst, name, _int(val, tok, 255), effects, tok)
    elif inst.dpp is not None:
        _dpp(inst, name, val, tok)
    else:
        raise _Bad("unexpected modifier", tok)


def _valued(inst: Inst, name: str, value: int, effects: dict, tok: str) -> None:
    """Set the bits whose shares of a valued modifier (byte_sel:N) add up to `value`."""
    left = value
    for key, eff in effects.items():
        if eff[:2] == ["val", name] and left & eff[2]:
            field, _, bit = key.partition(":")
            inst.fields[field] = inst.fields.get(field, 0) | int(bit)
            left &= ~eff[2]
    if left:
        raise _Bad(f"{name} value out of range", tok)


def _array(inst: Inst, name: str, val: str, effects: dict, tok: str) -> None:
    if name == "dpp8":
        if inst.dpp is None or inst.dpp["kind"] != 8:
            raise _Bad("dpp8 needs a DPP8 form", tok)
        inst.dpp["lane_sel"] = DPP8.field("lane_sel").mask & sum(
            _int(v, tok, 7) << (3 * i) for i, v in enumerate(_items(val, tok, 8)))
        return
    if name == "quad_perm":
        inst.dpp["dpp_ctrl"] = sum(_int(v, tok, 3) << (2 * i) for i, v in enumerate(_items(val, tok, 4)))
        return
    for pos, v in enumerate(val[1:-1].split(",")):
        if _int(v, tok, 1):
            _set_effect(inst, effects, ["arr", name, pos], tok, False)
        elif name == "op_sel_hi":
            _clear_effect(inst, effects, ["arr", name, pos])


def _items(val: str, tok: str, n: int) -> list[str]:
    items = val[1:-1].split(",")
    if not val.endswith("]") or len(items) != n:
        raise _Bad(f"expected {n} values in brackets", tok)
    return items


def _int(text: str, tok: str, hi: int) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise _Bad("expected an integer", tok) from None
    if not 0 <= v <= hi:
        raise _Bad(f"value out of range 0..{hi}", tok)
    return v


def _dpp(inst: Inst, name: str, val: str, tok: str) -> None:
    d = inst.dpp
    if d["kind"] == "sdwa":
        names = SDWA_UNUSED if name == "dst_unused" else SDWA_SEL
        if name not in ("dst_sel", "dst_unused", "src0_sel", "src1_sel") or val not in names:
            raise _Bad("unexpected SDWA modifier", tok)
        d[name] = names.index(val)
    elif d["kind"] == 8:
        if tok != "fi:1" and tok != "fi:0":
            raise _Bad("unexpected DPP8 modifier", tok)
        inst.fields["src0"] = SRC_DPP8_FI if tok == "fi:1" else SRC_DPP8
    elif _dpp_names(inst.arch) is not None:  # gfx9: the table names every control
        ctrl = _dpp_names(inst.arch).get(tok)
        if ctrl is None and name not in ("row_mask", "bank_mask", "bound_ctrl"):
            raise _Bad("unexpected DPP modifier", tok)
        if ctrl is not None:
            d["dpp_ctrl"] = ctrl
        elif name == "bound_ctrl":
            d[name] = 1
        else:
            d[name] = _int(val, tok, 15)
    elif tok == "row_mirror":
        d["dpp_ctrl"] = 0x140
    elif tok == "row_half_mirror":
        d["dpp_ctrl"] = 0x141
    elif name in ("row_mask", "bank_mask"):
        d[name] = _int(val, tok, 15)
    elif name in ("bound_ctrl", "fi"):
        d[name] = 1 if name == "bound_ctrl" else _int(val, tok, 1)
    else:
        base = {v: k for k, v in DPP_ROWS.items()}.get(name)
        if base is None:
            raise _Bad("unexpected DPP modifier", tok)
        n = _int(val, tok, 15)
        if n == 0 and base < 0x130:
            raise _Bad("shift amount must be 1..15", tok)
        d["dpp_ctrl"] = base | n


@cache
def _dpp_names(arch: str) -> dict[str, int] | None:
    """gfx9: DPP16 control text -> dpp_ctrl (None where the codec spells the controls itself)."""
    names = tables(arch).get("dpp_ctrl")
    return None if names is None else {text: int(ctrl) for ctrl, text in reversed(names.items())}
