"""The scalar family of the gfx11 codec: SOP1, SOP2, SOPC, SOPK, SOPP and SMEM.

Driven by data/scalar.json (`python -m tools.isatab_scalar`, probed from llvm-mc): per opcode the mnemonic,
the printed operands in order with their dword counts, and how the 16-bit immediate prints.
"""

from __future__ import annotations

import json
import os
from functools import cache

from . import simm16
from .encodings import ENCODINGS
from .errors import DecodeError
from .inst import Family, Inst, register
from .operands import LITERAL, parse_int, parse_register, parse_src, scalar_name, src_name

SOP = ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP")


@cache
def tables() -> dict:
    """The scalar opcode tables generated from llvm-mc."""
    with open(os.path.join(os.path.dirname(__file__), "data", "scalar.json")) as f:
        return json.load(f)


@cache
def _by_name() -> dict[str, tuple[str, int, dict]]:
    out = {}
    for enc in (*SOP, "SMEM"):
        for op, entry in tables()[enc].items():
            out[entry["name"]] = (enc, int(op), entry)
    return out


# ---------------------------------------------------------------------------------------------- decode


def _decode(enc: str, data: bytes, offset: int) -> Inst:
    e = ENCODINGS[enc]
    if offset + e.size > len(data):
        raise DecodeError(f"truncated {enc} instruction", offset, int.from_bytes(data[offset:offset + 4], "little"))
    word = int.from_bytes(data[offset:offset + e.size], "little")
    fields = e.unpack(word)
    entry = tables()[enc].get(str(fields["op"]))
    if entry is None:
        raise DecodeError(f"{enc} opcode {fields['op']} is not a gfx1100 instruction", offset, word & 0xFFFFFFFF)
    inst = Inst(enc, fields["op"], entry["name"], fields, size=e.size, info=entry)
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
    return DecodeError(f"{inst.mnemonic}: {why}", offset, ENCODINGS[inst.encoding].pack(inst.fields) & 0xFFFFFFFF)


def _slot_text(inst: Inst, slot: list, offset: int) -> str:
    name, count = slot[0], slot[1]
    f = inst.fields
    if name == "sdst":
        text = scalar_name(f["sdst"], count)
    elif name in ("ssrc0", "ssrc1"):
        code = f[name]
        text = _literal_text(inst, name) if code == LITERAL else src_name(code, count, slot[2])
    elif name == "ssrc0_msg":
        text = simm16.format_sendmsg(f["ssrc0"], tables()["names"]["sendmsg"])
    elif name == "simm16":
        text = simm16.format_imm(inst.info["imm"], f["simm16"], tables()["names"])
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
    shown = tables()["literals"][idx].get(f"{inst.literal:x}") if idx is not None else None
    return shown if shown is not None else f"0x{inst.literal:x}"


def _parse_literal(entry: dict, name: str, tok: str, ctx) -> int:
    """The value of a literal operand token: an integer, or a constant spelling from the operand's table."""
    idx = entry.get("litv", {}).get(name)
    if idx is not None:
        for value, text in tables()["literals"][idx].items():
            if text == tok:
                return int(value, 16)
    return parse_int(tok, ctx.line, ctx.column) & 0xFFFFFFFF


def _smem_operands(inst: Inst, offset: int) -> list[str]:
    e, f = inst.info, inst.fields
    if not e["has_addr"]:
        return []
    sdata = simm16.imm_auto(f["sdata"]) if e["sdata"] < 0 else scalar_name(f["sdata"], e["sdata"])
    sbase = scalar_name(f["sbase"] * 2, e["sbase"])
    if sdata is None or sbase is None:
        raise _bad(inst, offset, "invalid register")
    off = f["offset"] - (1 << 21) if f["offset"] & (1 << 20) else f["offset"]
    if f["soffset"] == 124:
        tail = [_hex_signed(off)] if off else ["null"]
    else:
        so = scalar_name(f["soffset"])
        if so is None:
            raise _bad(inst, offset, "invalid soffset")
        tail = [so] + ([f"offset:{_hex_signed(off)}"] if off else [])
    return [sdata, sbase] + tail


def _hex_signed(v: int) -> str:
    return f"-0x{-v:x}" if v < 0 else f"0x{v:x}"


# ---------------------------------------------------------------------------------------------- print


def _format(inst: Inst) -> str:
    ops = inst.operands
    if inst.encoding == "SMEM":
        mods = [m for m in ("glc", "dlc") if inst.fields[m]]
        if len(ops) == 4 and ops[3].startswith("offset:"):
            body = ", ".join(ops[:3]) + " " + ops[3]
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
    enc, op, entry = _by_name()[mnemonic]
    if enc == "SMEM":
        return _assemble_smem(op, entry, toks, ctx)
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
            code = parse_src(tok, count)
            if code is None or code > 127:
                raise ctx.error("expected a scalar register", tok)
            fields["sdst"] = code
        elif name in ("ssrc0", "ssrc1"):
            code = parse_src(tok, count)
            if code is None or code >= 256:
                code, literal = LITERAL, _parse_literal(entry, name, tok, ctx)
            fields[name] = code
        elif name == "ssrc0_msg":
            fields["ssrc0"] = simm16.parse_sendmsg(tok, tables()["names"]["sendmsg"], ctx)
        elif name == "simm16":
            fields["simm16"] = simm16.parse_imm(entry["imm"], tok, tables()["names"], ctx)
        elif name == "literal":
            literal = _parse_literal(entry, name, tok, ctx)
    out = ENCODINGS[enc].pack(fields).to_bytes(4, "little")
    return out + (literal.to_bytes(4, "little") if literal is not None else b"")


def _assemble_smem(op: int, entry: dict, toks: list[str], ctx) -> bytes:
    fields = {"op": op, "soffset": 124}
    rest = list(toks)
    for m in ("glc", "dlc"):
        if m in rest:
            fields[m] = 1
            rest.remove(m)
    if entry["has_addr"]:
        if len(rest) < 3:
            raise ctx.error("expected sdata, sbase and an offset", " ".join(toks))
        if entry["sdata"] < 0:
            fields["sdata"] = parse_int(rest[0], ctx.line, ctx.column)
        else:
            fields["sdata"] = _sreg(rest[0], entry["sdata"], ctx)
        fields["sbase"] = _sreg(rest[1], entry["sbase"], ctx) // 2
        for tok in rest[2:]:
            if tok.startswith("offset:"):
                fields["offset"] = parse_int(tok[7:], ctx.line, ctx.column) & 0x1FFFFF
            elif tok == "null":
                fields["soffset"] = 124
            elif parse_register(tok) or parse_src(tok) is not None:
                code = parse_src(tok)
                if code is None or code > 127:
                    raise ctx.error("expected a scalar offset register", tok)
                fields["soffset"] = code
            else:
                fields["offset"] = parse_int(tok, ctx.line, ctx.column) & 0x1FFFFF
    elif rest:
        raise ctx.error("unexpected operand", rest[0])
    else:
        fields["soffset"] = 0
    return ENCODINGS["SMEM"].pack(fields).to_bytes(8, "little")


def _sreg(tok: str, count: int, ctx) -> int:
    code = parse_src(tok, count)
    if code is None or code > 127:
        raise ctx.error(f"expected a {count}-dword scalar register", tok)
    return code


register(Family("scalar", (*SOP, "SMEM"), _decode, _format, _assemble, lambda: set(_by_name())))
