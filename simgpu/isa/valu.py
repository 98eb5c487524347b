"""The vector-ALU family of the codec: VOP1, VOP2, VOPC, VOP3(SD), VOP3P, VOPD, VINTERP and DPP, of every
architecture (gfx11 and gfx12 share these layouts).

Everything per opcode comes from data/valu.json (generated from llvm-mc by `python -m tools.isatab_valu
[--arch A]`): the mnemonic of each form, the printed operands ([field, kind, dwords, class]), how each modifier
bit prints, and per operand class the spelling of inline constants and literals. This module holds only the
code per encoding and operand kind; the assembler is in valu_asm.py, the tables and the modifier spellings
both read in valu_fmt.py.

LLVM's True16 mode (-mattr=+real-true16) decodes some opcodes differently: their entries are in "ops16"
(and "no16" lists opcodes that mode does not decode). A 16-bit VGPR operand (dwords 0) prints as a half,
vN.l or vN.h: in the e32 encodings (VOP1/VOP2/VOPC and their DPP forms) bit 7 of the register field
selects the high half of v0-v127; in VOP3 the register is the whole field and op_sel selects the half.

gfx9 (gfx942): no VOPD/VINTERP/DPP8; VOP3P's MFMA/SMFMAC entries use the VOP3PMAI layout ("enc"), whose acc_cd
and acc bits make operands AGPRs (the effect ["acc", fields]); AGPR-only operands are of kind "a" (a register
field) or "asrc" (a 9-bit source whose VGPR codes are AGPRs), "vsrc" one that must be a VGPR code (gfx950's
v_permlane*_swap); the table's "dpp_ctrl" names the DPP16 controls.
An e32 word whose src0 is 249 is followed by an SDWA dword (SDWAB for VOPC): the entry's "sdwa" form, whose
"sdwamods" are its bits' effects and "sdwasel" the selects it prints; its sources are VGPRs unless the s0/s1 bit
makes them scalar codes, and VOPC's destination is VCC unless sd names an SGPR pair.
"""

from __future__ import annotations

from functools import cache

from .arch import DEFAULT, get_arch
from .encodings import DPP8, DPP16, SDWA, SDWAB, SRC_DPP8, SRC_DPP8_FI, SRC_DPP16, SRC_LITERAL, SRC_SDWA
from .errors import DecodeError
from .inst import Family, Inst, register
from .operands import reg_range, scalar_name, src_name
from .valu_asm import assemble, mnemonic_index
from .valu_fmt import DPP_ROWS, E32, OMOD, OP_SEL_BIT, SDWA_SEL, SDWA_UNUSED, sized, tables

ENCODINGS_OWNED = ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3SD", "VOP3P", "VOP3PMAI", "VOPD", "VINTERP")
# Trailing modifiers print in this order (LLVM's asm strings), DPP controls after them.
ARRAY_ORDER = ("op_sel", "op_sel_hi", "neg_lo", "neg_hi", "neg")  # neg: gfx9's f64 MFMA prints blgp so
VALUED_ORDER = ("cbsz", "abid", "blgp")  # MFMA's (other valued modifiers, gfx12's byte_sel/index_key, come alone)


def entry(enc: str, op: int, true16: bool = False, arch: str = DEFAULT) -> dict | None:
    """The table entry of an opcode in LLVM's default or True16 mode (None: not an instruction there)."""
    t = tables(arch)
    if true16:
        e = t["ops16"].get(enc, {}).get(op)
        if e is not None or op in t["no16"].get(enc, ()):
            return e
    return t["ops"][enc].get(op)


def vopd_half(side: str, op: int, true16: bool = False, arch: str = DEFAULT) -> dict | None:
    """The table entry of a VOPD X or Y opcode in LLVM's default or True16 mode."""
    t = tables(arch)
    e = t["vopd16"].get(side, {}).get(op) if true16 else None
    return e if e is not None else t["vopd"][side].get(op)


def _entry(enc: str, op: int, offset: int, word: int, true16: bool, arch: str) -> dict:
    e = entry(enc, op, true16, arch)
    if e is None:
        mode = " in LLVM's True16 mode" if true16 else ""
        raise DecodeError(f"{enc} opcode {op} is not a {arch} instruction{mode}", offset, word)
    return e


# ---------------------------------------------------------------- decoding

def _decode16(enc: str, data: bytes, offset: int, arch: str = DEFAULT) -> Inst:
    return _decode(enc, data, offset, arch, True)


def _decode(enc: str, data: bytes, offset: int, arch: str = DEFAULT, true16: bool = False,
            paired: bool = False) -> Inst:
    """One instruction (`paired`: the MFMA word of a scaled MFMA, whose abid bit 0 is set)."""
    layouts = get_arch(arch).encodings
    base = layouts[enc].size
    word0 = int.from_bytes(data[offset:offset + 4], "little")
    if offset + base > len(data):
        raise DecodeError(f"truncated {enc} instruction", offset, word0)
    raw = int.from_bytes(data[offset:offset + base], "little")
    fields = layouts[enc].unpack(raw)
    if layouts[enc].pack(fields) != raw:
        raise DecodeError(f"reserved bits of {enc} are set", offset, word0)
    if enc == "VOPD":
        return _decode_vopd(fields, data, offset, word0, true16, arch)
    e = _entry(enc, fields["op"], offset, word0, true16, arch)
    if e.get("enc") in ("VOP3SD", "VOP3PMAI"):  # another layout of the same word
        enc = e["enc"]
        fields = layouts[enc].unpack(int.from_bytes(data[offset:offset + base], "little"))
    inst = Inst(enc, fields["op"], e["m"], fields, info={"entry": e, "form": "base"}, arch=arch)
    pos = offset + base
    src0 = fields.get("src0")
    if enc != "VINTERP" and src0 in (SRC_DPP16, SRC_DPP8, SRC_DPP8_FI):
        kind = 16 if src0 == SRC_DPP16 else 8
        form = f"dpp{kind}"
        if form not in e:
            raise DecodeError(f"{e['m']} has no DPP{kind} form", offset, word0)
        layout, ext = (DPP16 if kind == 16 else DPP8), _dword(data, pos, offset, word0)
        inst.dpp = {"kind": kind} | layout.unpack(ext)
        if layout.pack(inst.dpp) != ext:
            raise DecodeError("reserved bits of the DPP control dword are set", offset, word0)
        inst.info["form"], inst.mnemonic = form, e[form]
        pos += 4
    elif src0 == SRC_SDWA and "sdwa" in e and enc in E32:
        layout, ext = (SDWAB if enc == "VOPC" else SDWA), _dword(data, pos, offset, word0)
        inst.dpp = {"kind": "sdwa"} | layout.unpack(ext)
        inst.info["form"], inst.mnemonic = "sdwa", e["sdwa"]
        pos += 4
    elif _needs_literal(e["ops"], fields):
        inst.literal = _dword(data, pos, offset, word0)
        pos += 4
    inst.size = pos - offset
    if e.get("fmt") and fields["abid"] != (1 if paired else 0):
        raise DecodeError(f"abid of {e['m']} is {fields['abid']}: only a scaled MFMA's word has abid 1", offset, word0)
    if e.get("pair") and (scaled := _scaled(inst, data, offset, arch)) is not None:
        inst = scaled
    _validate(inst, offset, word0)
    return inst


def _scaled(ld: Inst, data: bytes, offset: int, arch: str) -> Inst | None:
    """gfx950's scaled MFMA: v_mfma_ld_scale_b32 as LLVM 22 writes it before an f8f6f4 MFMA (VGPR scales, no bits
    but op_sel / op_sel_hi 0-1) and that MFMA (abid 1), one 16-byte instruction: the MFMA's fields, the scale word as
    `prefix` and its fields in info["scale"]. None when the words are not such a pair (the scale word stands alone)."""
    f = ld.fields
    extra = f["vdst"] | f["neg_hi"] | f["op_sel"] & 4 | f["op_sel_hi2"] | f.get("clamp", 0) | f["src2"] | f["neg"]
    if extra or f["src0"] < 256 or f["src1"] < 256 or offset + 16 > len(data):
        return None
    if get_arch(arch).identify(int.from_bytes(data[offset + 8:offset + 12], "little")) != "VOP3P":
        return None
    try:
        mfma = _decode("VOP3P", data, offset + 8, arch, paired=True)
    except DecodeError:
        return None
    name = mfma.info["entry"].get("scaled")
    if name is None:
        return None
    mfma.mnemonic, mfma.prefix, mfma.size = name, data[offset:offset + 8], 16
    mfma.info |= {"form": "scaled", "scale": f}
    return mfma


def _scale_ops(inst: Inst) -> list[str]:
    """The scale operands a scaled MFMA prints after C: the VGPRs of A's and B's scales."""
    f = inst.info["scale"]
    return [vgpr_text(f["src0"] - 256, 1), vgpr_text(f["src1"] - 256, 1)]


def _scale_mods(inst: Inst) -> str:
    """op_sel (when set) and op_sel_hi (always, as LLVM 22 prints them) of a scaled MFMA: A's and B's byte selects."""
    f = inst.info["scale"]
    sel = [f["op_sel"] & 1, f["op_sel"] >> 1 & 1, 0]
    hi = [f["op_sel_hi"] & 1, f["op_sel_hi"] >> 1 & 1, 0]
    return (f" op_sel:[{','.join(map(str, sel))}]" if any(sel) else "") + f" op_sel_hi:[{','.join(map(str, hi))}]"


def _dword(data: bytes, pos: int, offset: int, word0: int) -> int:
    if pos + 4 > len(data):
        raise DecodeError("truncated instruction: missing extension dword", offset, word0)
    return int.from_bytes(data[pos:pos + 4], "little")


def _needs_literal(ops: list, fields: dict) -> bool:
    return any(o[1] == "lit" or (o[1] == "src" and fields.get(o[0]) == SRC_LITERAL) for o in ops)


def _decode_vopd(fields: dict, data: bytes, offset: int, word0: int, true16: bool, arch: str) -> Inst:
    x, y = vopd_half("x", fields["opx"], true16, arch), vopd_half("y", fields["opy"], true16, arch)
    if x is None or y is None:
        raise DecodeError(f"VOPD opx {fields['opx']} / opy {fields['opy']} is not a {arch} dual op", offset, word0)
    inst = Inst("VOPD", fields["opx"], x["m"], fields, info={"x": x, "y": y, "form": "base"}, arch=arch)
    inst.size = 8
    if _needs_literal(x["ops"], fields) or _needs_literal(y["ops"], fields):
        inst.literal = _dword(data, offset + 8, offset, word0)
        inst.size = 12
    _validate(inst, offset, word0)
    return inst


def _validate(inst: Inst, offset: int, word0: int) -> None:
    """Print once so that an operand LLVM cannot spell is a DecodeError now, not an error later."""
    try:
        inst.operands = _operand_texts(inst)
        _dpp_text(inst)
    except ValueError as err:
        raise DecodeError(str(err), offset, word0) from None


# ---------------------------------------------------------------- printing

def _format(inst: Inst) -> str:
    if inst.encoding == "VOPD":
        x, y = inst.info["x"], inst.info["y"]
        return f"{_join(x['m'], _ops(inst, x, {}))} :: {_join(y['m'], _ops(inst, y, {}))}"
    e = inst.info["entry"]
    mods = _mod_state(inst, e)
    if inst.info.get("form") == "scaled":
        text = _join(inst.mnemonic, _ops(inst, e, mods["pre"]) + _scale_ops(inst)) + _scale_mods(inst)
        return text + _trailing(inst, e, mods)
    text = _join(inst.mnemonic, _ops(inst, e, mods["pre"]))
    return text + _trailing(inst, e, mods) + _dpp_text(inst)


def _operand_texts(inst: Inst) -> list[str]:
    if inst.encoding == "VOPD":
        return _ops(inst, inst.info["x"], {}) + _ops(inst, inst.info["y"], {})
    ops = _ops(inst, inst.info["entry"], _mod_state(inst, inst.info["entry"])["pre"])
    return ops + _scale_ops(inst) if inst.info.get("form") == "scaled" else ops


def _join(mnemonic: str, ops: list[str]) -> str:
    return mnemonic + (" " + ", ".join(ops) if ops else "")


def _ops(inst: Inst, e: dict, pre: dict[str, set[str]]) -> list[str]:
    bad = e.get("bad")
    specs = [sized(spec, e, inst.fields) for spec in e["ops"]]
    return [_with_mods(_operand(inst, spec, "acc" in pre.get(spec[0], ())) + (_note(inst, bad, spec) if bad else ""),
                       _is_imm(inst, spec), pre.get(spec[0], set())) for spec in specs]


def _note(inst: Inst, bad: dict, spec: list) -> str:
    """LLVM's /*Invalid register...*/ note after a register outside the operand's register class."""
    field = spec[0]
    if field == "src0" and inst.dpp is not None:
        key, code = f"dpp{inst.dpp['kind']}:src0", inst.dpp["src0"]
    else:
        key, code = field, inst.fields.get(field)
    for idx in bad.get(key, ()):
        rec = tables(inst.arch)["notes"][idx]
        if any(lo <= code <= hi for lo, hi in rec["codes"]):
            return f"/*{rec['note']}*/"
    return ""


def _is_imm(inst: Inst, spec: list) -> bool:
    if spec[0] == "vsrc1" and inst.dpp is not None and inst.dpp["kind"] == "sdwa" and inst.dpp["s1"]:
        code = inst.fields["vsrc1"]  # an SDWA src1 with s1: a scalar code
        return 128 <= code <= 208 or 240 <= code <= 248
    if spec[1] != "src":
        return spec[1] == "lit"
    code = inst.fields[spec[0]]
    if spec[0] == "src0" and inst.dpp is not None:  # a DPP source is a VGPR; an SDWA one a scalar code with s0
        code = inst.dpp["src0"] if inst.dpp["kind"] == "sdwa" and inst.dpp["s0"] else 0
    return 128 <= code <= 208 or 240 <= code <= 248 or code == SRC_LITERAL


def _operand(inst: Inst, spec: list, acc: bool = False) -> str:
    """An operand's text; `acc`: a gfx9 acc bit makes this register operand an AGPR."""
    field, kind, count = spec[0], spec[1], spec[2]
    if kind == "imp":
        if field == "vcc" and inst.dpp is not None and inst.dpp["kind"] == "sdwa" and inst.dpp.get("sd"):
            return _sdst_text(inst.dpp["sdst"], inst.arch)
        return field
    if kind == "lit":
        return literal_text(inst.literal, spec[3], inst.arch)
    if inst.dpp is not None and inst.dpp["kind"] == "sdwa" and field in ("src0", "vsrc1"):
        return _sdwa_source(inst, spec)
    if kind in ("v", "a"):
        return vgpr_text(vgpr_index(inst, field), count, half_select(inst, field), "a" if acc or kind == "a" else "v")
    code = inst.fields[field]
    if kind == "vsrc":  # a 9-bit source that must name a VGPR (gfx950's v_permlane*_swap)
        if code < 256:
            raise ValueError(f"{field} code {code} is not a VGPR")
        return vgpr_text(code - 256, count, None)
    if kind == "asrc" or (acc and code >= 256):
        if code < 256:
            raise ValueError(f"{field} code {code} is not an AGPR")
        return vgpr_text(code - 256, count, None, "a")
    if kind == "s":
        name = scalar_name(code, count, get_arch(inst.arch).family)
        if name is None:
            raise ValueError(f"{field} code {code} is not a scalar register of {count} dwords")
        return name
    if field == "src0" and inst.dpp is not None:
        return vgpr_text(inst.dpp["src0"], count, half_select(inst, field))
    if code >= 256:
        return vgpr_text(code - 256, count, half_select(inst, field))
    return source_text(code, max(count, 1), spec[3], inst.literal, inst.arch)


def _sdst_text(code: int, arch: str) -> str:
    name = scalar_name(code, 2, get_arch(arch).family)
    if name is None:
        raise ValueError(f"sdst code {code} is not a scalar register pair")
    return name


def _sdwa_source(inst: Inst, spec: list) -> str:
    """An SDWA source: a VGPR, or with the s0/s1 bit a scalar code (an SGPR or constant)."""
    d, field, count = inst.dpp, spec[0], max(spec[2], 1)
    code, scalar = (d["src0"], d["s0"]) if field == "src0" else (inst.fields["vsrc1"], d["s1"])
    if not scalar:
        return vgpr_text(code, count)
    cls = spec[3] if len(spec) > 3 else None
    if cls is not None and 128 <= code <= 254:
        return source_text(code, count, cls, None, inst.arch)
    name = src_name(code, count, 32, get_arch(inst.arch).family)
    if name is None or code == SRC_LITERAL:
        raise ValueError(f"SDWA source code {code} is not valid")
    return name


def half_select(inst: Inst, field: str) -> int | None:
    """How a 16-bit VGPR operand picks its half: None in the e32 encodings (bit 7 of the register field),
    else whether op_sel selects the high half (VOP3: the op_sel bit of the operand)."""
    if inst.encoding in E32:
        return None
    return (inst.fields.get("op_sel", 0) >> OP_SEL_BIT[field]) & 1 if field in OP_SEL_BIT else 0


def vgpr_text(index: int, count: int, high: int | None = None, file: str = "v") -> str:
    """A VGPR (`file` "a": AGPR) range; count 0 is a 16-bit half (True16 syntax): `high` None takes bit 7 of the
    index as .h (e32 encodings), else the index is the register and `high` the half (VOP3, from op_sel)."""
    if count == 0:
        if high is None:
            return f"v{index & 127}.{'h' if index & 128 else 'l'}"
        return f"v{index}.{'h' if high else 'l'}"
    if index + count > 256:  # a range past v255 is not an operand LLVM decodes
        raise ValueError(f"VGPR range v{index} of {count} dwords runs past v255")
    return reg_range(file, index, count)


def vgpr_index(inst: Inst, field: str) -> int:
    """VGPR number of an 8-bit VGPR field; VOPD's vdsty keeps only the high bits (its low bit is
    the opposite of vdstx's)."""
    if field == "vdsty":
        return (inst.fields["vdsty"] << 1) | ((inst.fields["vdstx"] & 1) ^ 1)
    return inst.fields[field]


def source_text(code: int, count: int, cls: str, literal: int | None, arch: str = DEFAULT) -> str:
    """Spelling of a 9-bit source code in operand class `cls`."""
    c = tables(arch)["classes"][cls]
    if code == SRC_LITERAL:
        return literal_text(literal, cls, arch)
    if 128 <= code <= 254:  # constants and special registers: as probed for this class
        text = c["inline"].get(str(code))
        if text is None:
            raise ValueError(f"source code {code} is not allowed here")
        return text
    name = src_name(code, count, 32, get_arch(arch).family)
    if name is None:
        raise ValueError(f"source code {code} is not valid here")
    return name


def literal_text(value: int | None, cls: str, arch: str = DEFAULT) -> str:
    """Spelling of a 32-bit literal in operand class `cls`."""
    c = tables(arch)["classes"][cls]
    if value is None or c["lit"] is None:
        raise ValueError("no literal allowed here")
    return literal_spelling(c, value)


def literal_spelling(c: dict, value: int) -> str:
    """Spelling of a 32-bit literal in class record `c`: a constant when its value (the low 16 bits only
    for "fold16" classes) is one, else hex of all 32 bits or, for "lo16" classes, of the low 16."""
    shown = c["value"].get(f"{value & 0xFFFF if c.get('fold16') else value:x}")
    if shown is not None:
        return shown
    return f"0x{value & 0xFFFF:x}" if c["lit"] == "lo16" else f"0x{value:x}"


def _with_mods(text: str, imm: bool, mods: set[str]) -> str:
    if "abs" in mods:
        text = f"|{text}|"
    if "sext" in mods:
        text = f"sext({text})"
    if "neg" in mods:
        # LLVM writes neg(...) around a bare immediate: -1 is a different constant than neg(1).
        text = f"neg({text})" if imm and "abs" not in mods else f"-{text}"
    return text


def _mod_state(inst: Inst, e: dict) -> dict:
    """Which operands carry neg/abs, which array bits, flags and omod are set, per the entry's effects."""
    pre: dict[str, set[str]] = {}
    arrays: dict[str, list[int]] = {}
    flags: list[str] = []
    valued: dict[str, int] = {}  # gfx12's byte_sel:N, index_key:N: each bit adds its share
    dpp16_e32 = inst.dpp is not None and inst.dpp["kind"] in (16, "sdwa") and inst.encoding in ("VOP1", "VOP2", "VOPC")
    effects = e.get("mods", {}) if inst.dpp is None else e.get("sdwamods" if inst.dpp["kind"] == "sdwa" else "dppmods",
                                                                 {})
    src = inst.dpp if dpp16_e32 else inst.fields
    for key, eff in effects.items():
        name, _, bit = key.partition(":")
        if eff[0] == "arr":
            arr = arrays.setdefault(eff[1], [1 if eff[1] == "op_sel_hi" and e.get("hidef") else 0] * eff[3])
            arr[eff[2]] = 1 if src.get(name, 0) & int(bit) else 0
        elif not src.get(name, 0) & (3 if name == "omod" and eff[0] != "val" else int(bit)):
            continue
        elif eff[0] == "pre":
            pre.setdefault(eff[2], set()).add(eff[1])
        elif eff[0] == "acc":
            for f in eff[1]:
                pre.setdefault(f, set()).add("acc")
        elif eff[0] == "val":
            valued[eff[1]] = valued.get(eff[1], 0) + eff[2]
        elif eff[1].startswith("mul:"):
            flags.append(OMOD[src["omod"]])
        else:
            flags.append(eff[1])
    return {"pre": pre, "arrays": arrays, "flags": flags, "valued": valued}


def _trailing(inst: Inst, e: dict, mods: dict) -> str:
    order = sorted(mods["valued"], key=lambda n: VALUED_ORDER.index(n) if n in VALUED_ORDER else -1)
    out = [f"{name}:{_valued_text(name, mods['valued'][name])}" for name in order]
    for name in ARRAY_ORDER:
        arr = mods["arrays"].get(name)
        default = 1 if name == "op_sel_hi" and e.get("hidef") else 0
        if arr is not None and any(v != default for v in arr):
            out.append(f"{name}:[{','.join(map(str, arr))}]")
    flags = [f for f in mods["flags"] if f == "clamp"] + [f for f in mods["flags"] if f != "clamp"]
    if inst.encoding == "VINTERP":  # its asm string puts clamp before op_sel
        out = flags + out + [f"wait_exp:{inst.fields['waitexp']}"]
    else:
        out += flags
    return "".join(" " + t for t in out)


def _valued_text(name: str, value: int) -> str:
    # LLVM 22 prints gfx950's bitop3 truth table in decimal up to 10 and in hex above (seen in its compiles)
    return f"0x{value:x}" if name == "bitop3" and value > 10 else str(value)


def _dpp_text(inst: Inst) -> str:
    d = inst.dpp
    if d is None:
        return ""
    if d["kind"] == "sdwa":
        return "".join(f" {name}:{_sdwa_sel_text(name, d[name])}" for name in inst.info["entry"].get("sdwasel", ()))
    if d["kind"] == 8:
        sel = ",".join(str((d["lane_sel"] >> (3 * i)) & 7) for i in range(8))
        return f" dpp8:[{sel}]" + (" fi:1" if inst.fields["src0"] == SRC_DPP8_FI else "")
    out = f" {dpp_ctrl_text(d['dpp_ctrl'], inst.arch)} row_mask:0x{d['row_mask']:x} bank_mask:0x{d['bank_mask']:x}"
    return out + (" bound_ctrl:1" if d["bound_ctrl"] else "") + (" fi:1" if d["fi"] else "")


def _sdwa_sel_text(name: str, v: int) -> str:
    names = SDWA_UNUSED if name == "dst_unused" else SDWA_SEL
    if v >= len(names):
        raise ValueError(f"{name} {v} is not valid")
    return names[v]


def dpp_ctrl_text(ctrl: int, arch: str = DEFAULT) -> str:
    """LLVM's spelling of a DPP16 dpp_ctrl value (gfx9's from its table)."""
    names = tables(arch).get("dpp_ctrl")
    if names is not None:
        if str(ctrl) not in names:
            raise ValueError(f"dpp_ctrl {ctrl:#x} is not valid")
        return names[str(ctrl)]
    if ctrl < 0x100:
        return "quad_perm:[" + ",".join(str((ctrl >> (2 * i)) & 3) for i in range(4)) + "]"
    if ctrl == 0x140:
        return "row_mirror"
    if ctrl == 0x141:
        return "row_half_mirror"
    name = DPP_ROWS.get(ctrl & ~0xF)
    if name is None or ((ctrl & 0xF) == 0 and ctrl < 0x130):
        raise ValueError(f"dpp_ctrl {ctrl:#x} is not valid")
    return f"{name}:{ctrl & 0xF}"


@cache
def _mnemonics(arch: str = DEFAULT) -> frozenset[str]:
    return frozenset(mnemonic_index(arch))


register(Family("valu", ENCODINGS_OWNED, _decode, _format, assemble, _mnemonics, _decode16))
