"""The scalar family of the codec: SOP1, SOP2, SOPC, SOPK, SOPP and SMEM, of every architecture.

Driven by data/scalar.json (`python -m tools.isatab_scalar [--arch A]`, probed from llvm-mc): per opcode the
mnemonic, the printed operands in order with their dword counts, and how the 16-bit immediate prints. gfx12's
SMEM (24-bit offset, th/scope cache policy, the s_prefetch_* operand order) is told apart by its table:
"smem_off" (the offset is printed even when zero), an entry's "pf" (prefetch order: sbase, offset, soffset,
then sdata as an immediate) and "th" (its cache-policy names, cpol.py). gfx9's SMEM (its layout has "imm") says
with imm whether the offset field is a byte offset or an SGPR code, and with soe that soffset is added.
"""

from __future__ import annotations

from functools import cache

from . import cpol, simm16
from .arch import DEFAULT, get_arch
from .errors import DecodeError
from .inst import Family, Inst, register
from .operands import LITERAL, parse_int, parse_register, parse_src, scalar_name, src_name

SOP = ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP")


@cache
def tables(arch: str = DEFAULT) -> dict:
    """The scalar opcode tables of an architecture, generated from llvm-mc."""
    return get_arch(arch).table("scalar")


@cache
def _by_name(arch: str = DEFAULT) -> dict[str, tuple[str, int, dict]]:
    out = {}
    for enc in (*SOP, "SMEM"):
        for op, entry in tables(arch)[enc].items():
            out[entry["name"]] = (enc, int(op), entry)
    return out


# ---------------------------------------------------------------------------------------------- decode


def _decode(enc: str, data: bytes, offset: int, arch: str = DEFAULT) -> Inst:
    e = get_arch(arch).encodings[enc]
    if offset + e.size > len(data):
        raise DecodeError(f"truncated {enc} instruction", offset, int.from_bytes(data[offset:offset + 4], "little"))
    word = int.from_bytes(data[offset:offset + e.size], "little")
    fields = e.unpack(word)
    entry = tables(arch)[enc].get(str(fields["op"]))
    if entry is None:
        raise DecodeError(f"{enc} opcode {fields['op']} is not a {arch} instruction", offset, word & 0xFFFFFFFF)
    inst = Inst(enc, fields["op"], entry["name"], fields, size=e.size, info=entry, arch=arch)
    if enc != "SMEM" and _needs_literal(entry, fields):
        if offset + e.size + 4 > len(data):
            raise DecodeError("truncated literal", offset, word)
        inst.literal = int.from_bytes(data[offset + 4:offset + 8], "little")
        inst.size += 4
    inst.operands = _operand_texts(inst, offset)
    return inst


def _needs_literal(entry: dict, fields: dict[str, int]) -> bool:
    if entry.get("literal"):
        return True
    return any(slot[0] in ("ssrc0", "ssrc1") and fields[slot[0]] == LITERAL for slot in entry["ops"])


def _operand_texts(inst: Inst, offset: int) -> list[str]:
    if inst.encoding == "SMEM":
        return _smem_operands(inst, offset)
    out = []
    for slot in inst.info["ops"]:
        out.append(_slot_text(inst, slot, offset))
    return out


def _bad(inst: Inst, offset: int, why: str) -> DecodeError:
    word = get_arch(inst.arch).encodings[inst.encoding].pack(inst.fields)
    return DecodeError(f"{inst.mnemonic}: {why}", offset, word & 0xFFFFFFFF)


def _slot_text(inst: Inst, slot: list, offset: int) -> str:
    name, count = slot[0], slot[1]
    f = inst.fields
    fam = get_arch(inst.arch).family
    if name == "sdst":
        text = scalar_name(f["sdst"], count, fam)
    elif name in ("ssrc0", "ssrc1"):
        code = f[name]
        text = _literal_text(inst, name) if code == LITERAL else src_name(code, count, slot[2], fam)
    elif name == "ssrc0_msg":
        names = tables(inst.arch)["names"]
        text = simm16.format_sendmsg(f["ssrc0"], names["sendmsg"], "sendmsg_complete" in names)
    elif name == "ssrc1_gpr_idx":
        text = simm16.format_gpr_idx(f["ssrc1"])
    elif name == "simm16":
        text = simm16.format_imm(inst.info["imm"], f["simm16"], tables(inst.arch)["names"])
    elif name == "literal":
        text = _literal_text(inst, name)
    else:
        text = None
    if text is None:
        raise _bad(inst, offset, f"invalid operand {name}")
    return text


def _literal_text(inst: Inst, name: str) -> str:
    """A literal as llvm prints it in this operand: a constant (22, 1.0) where the table says so, else hex."""
    idx = inst.info.get("litv", {}).get(name)
    shown = tables(inst.arch)["literals"][idx].get(f"{inst.literal:x}") if idx is not None else None
    return shown if shown is not None else f"0x{inst.literal:x}"


def _parse_literal(entry: dict, name: str, tok: str, ctx) -> int:
    """The value of a literal operand token: an integer, or a constant spelling from the operand's table."""
    idx = entry.get("litv", {}).get(name)
    if idx is not None:
        for value, text in tables(ctx.arch)["literals"][idx].items():
            if text == tok:
                return int(value, 16)
    return parse_int(tok, ctx.line, ctx.column) & 0xFFFFFFFF


def _smem_operands(inst: Inst, offset: int) -> list[str]:
    e, f = inst.info, inst.fields
    if not e["has_addr"]:
        return []
    fam = get_arch(inst.arch).family
    sdata = simm16.imm_auto(f["sdata"]) if e["sdata"] < 0 else scalar_name(f["sdata"], e["sdata"], fam)
    sbase = scalar_name(f["sbase"] * 2, e["sbase"], fam) if e["sbase"] else ""
    if sdata is None or sbase is None:
        raise _bad(inst, offset, "invalid register")
    width = get_arch(inst.arch).encodings["SMEM"].field("offset").width
    off = f["offset"] - (1 << width) if f["offset"] >> (width - 1) else f["offset"]
    always = tables(inst.arch).get("smem_off")  # gfx12: the offset is printed even when it is zero
    so = scalar_name(f["soffset"], 1, fam)
    if so is None:
        raise _bad(inst, offset, "invalid soffset")
    if e.get("pf"):  # s_prefetch_*: [sbase,] offset, soffset, sdata
        return [t for t in (sbase, _hex_signed(off), so, sdata) if t]
    if "imm" in f:  # gfx9: soe adds soffset; imm: the offset field is bytes, else an SGPR code (its low 7 bits)
        head = [t for t, n in ((sdata, e["sdata"]), (sbase, e["sbase"])) if n]  # s_memtime: sdata only
        if not e["sbase"]:
            return head
        if f["soe"]:
            tail = [so] + ([f"offset:{_hex_signed(off)}"] if f["imm"] else [])
        else:
            tail = [_hex_signed(off) if f["imm"] else scalar_name(f["offset"] & 0x7F, 1, fam)]
        return head + tail
    if f["soffset"] == 124:
        tail = [_hex_signed(off)] if off or always else ["null"]
    else:
        tail = [so] + ([f"offset:{_hex_signed(off)}"] if off or always else [])
    return [sdata, sbase] + tail


def _smem_mods(inst: Inst) -> list[str]:
    """The cache-policy modifiers: glc/dlc flags (gfx11), th:/scope: (gfx12)."""
    if "th" in inst.info:
        return cpol.format_cpol(tables(inst.arch)["names"]["cpol"], inst.info["th"], inst.fields["th"],
                                inst.fields["scope"])
    return [m for m in ("glc", "dlc") if inst.fields.get(m)]


def _hex_signed(v: int) -> str:
    return f"-0x{-v:x}" if v < 0 else f"0x{v:x}"


# ---------------------------------------------------------------------------------------------- print


def _format(inst: Inst) -> str:
    ops = inst.operands
    if inst.encoding == "SMEM":
        mods = _smem_mods(inst)
        if len(ops) >= 3 and ops[-1].startswith("offset:"):
            body = ", ".join(ops[:-1]) + " " + ops[-1]
        else:
            body = ", ".join(ops)
        return " ".join(x for x in (inst.mnemonic, body, *mods) if x)
    if inst.info.get("imm") in ("waitcnt", "depctr", "delay_alu") and ops:
        return f"{inst.mnemonic} {ops[0]}"
    if inst.info.get("imm") == "dec_opt" and inst.fields["simm16"] == 0:
        return inst.mnemonic
    return inst.mnemonic + (" " + ", ".join(ops) if ops else "")


# ---------------------------------------------------------------------------------------------- assemble


def _assemble(mnemonic: str, toks: list[str], ctx) -> bytes | None:
    enc, op, entry = _by_name(ctx.arch)[mnemonic]
    if enc == "SMEM":
        return _assemble_smem(op, entry, toks, ctx)
    fam = get_arch(ctx.arch).family
    fields = {"op": op}
    literal = None
    slots = entry["ops"]
    if entry.get("imm") in ("waitcnt", "depctr", "delay_alu"):
        toks = [" ".join(toks)] if toks else []
    if entry.get("imm") == "dec_opt" and not toks:
        toks = ["0"]
    if len(toks) != len(slots):
        raise ctx.error(f"{mnemonic} expects {len(slots)} operands", " ".join(toks))
    for slot, tok in zip(slots, toks, strict=True):
        name, count = slot[0], slot[1]
        if name == "sdst":
            code = parse_src(tok, count, fam)
            if code is None or code > 127:
                raise ctx.error("expected a scalar register", tok)
            fields["sdst"] = code
        elif name in ("ssrc0", "ssrc1"):
            code = parse_src(tok, count, fam)
            if code is None or code >= 256:
                code, literal = LITERAL, _parse_literal(entry, name, tok, ctx)
            fields[name] = code
        elif name == "ssrc0_msg":
            fields["ssrc0"] = simm16.parse_sendmsg(tok, tables(ctx.arch)["names"]["sendmsg"], ctx)
        elif name == "ssrc1_gpr_idx":
            fields["ssrc1"] = simm16.parse_gpr_idx(tok, ctx)
            if fields["ssrc1"] > 0xFF:
                raise ctx.error("expected an 8-bit mode", tok)
        elif name == "simm16":
            fields["simm16"] = simm16.parse_imm(entry["imm"], tok, tables(ctx.arch)["names"], ctx)
        elif name == "literal":
            literal = _parse_literal(entry, name, tok, ctx)
    out = get_arch(ctx.arch).encodings[enc].pack(fields).to_bytes(4, "little")
    return out + (literal.to_bytes(4, "little") if literal is not None else b"")


def _assemble_smem(op: int, entry: dict, toks: list[str], ctx) -> bytes:
    layout = get_arch(ctx.arch).encodings["SMEM"]
    omask = layout.field("offset").mask
    gfx9 = "imm" in layout.field_names
    fields = {"op": op, "soffset": 0 if gfx9 else 124}
    rest = list(toks)
    if "th" in entry:
        rest, th, scope = cpol.parse_cpol(tables(ctx.arch)["names"]["cpol"], entry["th"], rest, ctx)
        fields |= {"th": th, "scope": scope}
    else:
        for m in ("glc", "dlc"):
            if m in rest:
                fields[m] = 1
                rest.remove(m)
    if entry.get("pf"):  # [sbase,] offset, soffset, sdata
        want = 4 if entry["sbase"] else 3
        if len(rest) != want:
            raise ctx.error(f"expected {want} operands", " ".join(toks))
        if entry["sbase"]:
            fields["sbase"] = _sreg(rest.pop(0), entry["sbase"], ctx) // 2
        fields["offset"] = parse_int(rest[0], ctx.line, ctx.column) & omask
        fields["soffset"] = _soffset(rest[1], ctx)
        fields["sdata"] = parse_int(rest[2], ctx.line, ctx.column)
    elif entry["has_addr"] and gfx9:  # [sdata,] [sbase, offset operands]
        if entry["sdata"] and rest:  # s_atc_probe: an immediate
            tok = rest.pop(0)
            imm = entry["sdata"] < 0
            fields["sdata"] = parse_int(tok, ctx.line, ctx.column) if imm else _sreg(tok, entry["sdata"], ctx)
        if entry["sbase"] and len(rest) >= 2:
            fields["sbase"] = _sreg(rest.pop(0), entry["sbase"], ctx) // 2
            _smem_offset9(fields, rest, omask, ctx)
        elif rest or entry["sbase"]:
            raise ctx.error("unexpected operands", " ".join(toks))
    elif entry["has_addr"]:
        if len(rest) < 3:
            raise ctx.error("expected sdata, sbase and an offset", " ".join(toks))
        if entry["sdata"] < 0:
            fields["sdata"] = parse_int(rest[0], ctx.line, ctx.column)
        else:
            fields["sdata"] = _sreg(rest[0], entry["sdata"], ctx)
        fields["sbase"] = _sreg(rest[1], entry["sbase"], ctx) // 2
        if gfx9:
            _smem_offset9(fields, rest[2:], omask, ctx)
            return layout.pack(fields).to_bytes(8, "little")
        for tok in rest[2:]:
            if tok.startswith("offset:"):
                fields["offset"] = parse_int(tok[7:], ctx.line, ctx.column) & omask
            elif tok == "null" or parse_register(tok) or parse_src(tok) is not None:
                fields["soffset"] = _soffset(tok, ctx)
            else:
                fields["offset"] = parse_int(tok, ctx.line, ctx.column) & omask
    elif rest:
        raise ctx.error("unexpected operand", rest[0])
    else:
        fields["soffset"] = 0
    return layout.pack(fields).to_bytes(8, "little")


def _smem_offset9(fields: dict[str, int], toks: list[str], omask: int, ctx) -> None:
    """gfx9's offset operands: a byte offset (imm), an SGPR (in the offset field), or an SGPR and offset:N (soe)."""
    if len(toks) == 2 and toks[1].startswith("offset:"):
        fields |= {"soe": 1, "imm": 1, "soffset": _soffset(toks[0], ctx),
                   "offset": parse_int(toks[1][7:], ctx.line, ctx.column) & omask}
    elif len(toks) == 1 and parse_src(toks[0], 1, "gfx9") is not None and parse_src(toks[0], 1, "gfx9") < 128:
        fields["offset"] = _soffset(toks[0], ctx)
    elif len(toks) == 1:
        fields |= {"imm": 1, "offset": parse_int(toks[0], ctx.line, ctx.column) & omask}
    else:
        raise ctx.error("expected an offset, an SGPR, or an SGPR and offset:N", " ".join(toks))


def _soffset(tok: str, ctx) -> int:
    code = parse_src(tok, 1, get_arch(ctx.arch).family)
    if code is None or code > 127:
        raise ctx.error("expected a scalar offset register", tok)
    return code


def _sreg(tok: str, count: int, ctx) -> int:
    code = parse_src(tok, count, get_arch(ctx.arch).family)
    if code is None or code > 127:
        raise ctx.error(f"expected a {count}-dword scalar register", tok)
    return code


@cache
def _mnemonics(arch: str = DEFAULT) -> frozenset[str]:
    return frozenset(_by_name(arch))


register(Family("scalar", (*SOP, "SMEM"), _decode, _format, _assemble, _mnemonics))
