"""Assembler of the memory family: operand tokens are matched against the opcode's learned templates."""

from __future__ import annotations

import re

from . import cpol
from .arch import get_arch
from .memory_fmt import (
    ACC_FIELDS,
    FLAGS,
    IMAGES12,
    MOD_FIELDS,
    SADDR_OFF,
    SCALAR_FIELDS,
    SCALED,
    image_address_fields,
    image_address_split,
    mode_fields,
    mode_of,
    parse_swizzle,
    register_counts,
    saddr_off,
    tables,
)
from .operands import parse_register, parse_src

_ATTR = re.compile(r"^attr(\d+)\.([xyzw])$")


class _NoMatch(Exception):
    """The tokens do not fit this template (another opcode or mode may fit)."""


def assemble_memory(cands: list, ops: list[str], mods: list[str], ctx) -> bytes:
    """Bytes of the first (encoding, opcode, mode) whose template fits the operand and modifier tokens."""
    tabs = tables(ctx.arch)
    why = "operands do not match any form of this instruction"
    for enc, key, entry in cands:
        try:
            mf = _parse_mods(enc, key, entry, mods, tabs, ctx)
            if enc == "EXP":
                return _assemble_exp(ops, mf, tabs, ctx.arch)
            for mk in entry["t"]:
                try:
                    return _assemble_mode(enc, key, entry, mk, ops, mf, ctx.arch)
                except _NoMatch as e:
                    why = str(e) or why
        except _NoMatch as e:
            why = str(e) or why
    raise ctx.error(why, " ".join(ops + mods))


def _int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise _NoMatch(f"expected an integer, got {text!r}") from None


def _parse_mods(enc: str, key: dict, entry: dict, mods: list[str], tabs: dict, ctx) -> dict[str, int]:
    f: dict[str, int] = {}
    arch = ctx.arch
    cp = [t for t in mods if t.startswith(("th:", "scope:"))]
    if cp:  # gfx12's cache policy: the th spelling depends on the scope
        if "th" not in entry:
            raise _NoMatch("this instruction takes no th/scope")
        _, f["th"], f["scope"] = cpol.parse_cpol(tabs["names"]["cpol"], entry["th"], cp, ctx)
        mods = [t for t in mods if t not in cp]
    for tok in mods:
        name, _, val = tok.partition(":")
        if not val:
            if name not in FLAGS[enc] and MOD_FIELDS.get(name) not in FLAGS[enc]:
                raise _NoMatch(f"modifier {name} is not valid here")
            f[MOD_FIELDS.get(name, name)] = 1
        elif name == "offset" and entry.get("swz") and parse_swizzle(val) is not None:
            f.update(_offset(enc, key, entry, parse_swizzle(val), tabs, arch))
        elif name == "offset":
            f.update(_offset(enc, key, entry, _int(val), tabs, arch))
        elif name == "dmask":
            f["dmask"] = _ranged(_int(val), 0, 15, name)
        elif name == "dim":
            f["dim"] = _dim(val, tabs["names"]["dim"])
        elif name == "format":
            f["format"] = _format_code(val, tabs["names"]["format"])
        else:
            f[MOD_FIELDS.get(name, name)] = _ranged(_int(val), 0, (1 << _width(enc, name, arch)) - 1, name)
    return f


def _width(enc: str, name: str, arch: str) -> int:
    field = MOD_FIELDS.get(name, name)
    layout = get_arch(arch).encodings[enc]
    if field not in layout.field_names:
        raise _NoMatch(f"{enc} instructions take no {name} modifier")
    return layout.field(field).width


def _ranged(v: int, lo: int, hi: int, name: str) -> int:
    if not lo <= v <= hi:
        raise _NoMatch(f"{name} out of range [{lo}, {hi}]")
    return v


def _offset(enc: str, key: dict, entry: dict, v: int, tabs: dict, arch: str) -> dict[str, int]:
    if enc == "DS":
        if "offset" not in entry["mods"]:
            raise _NoMatch("this DS instruction takes offset0/offset1")
        v = _ranged(v, 0, 0xFFFF, "offset")
        return {"offset0": v & 0xFF, "offset1": v >> 8}
    if enc == "FLAT" and tabs["flat_signed"][key["seg"]]:
        return {"offset": _ranged(v, -0x1000, 0xFFF, "offset") & 0x1FFF}
    width = _width(enc, "offset", arch)
    if enc in tabs.get("signed_offset", ()):
        return {"offset": _ranged(v, -(1 << (width - 1)), (1 << (width - 1)) - 1, "offset") & ((1 << width) - 1)}
    return {"offset": _ranged(v, 0, (1 << width) - 1, "offset")}


def _dim(val: str, names: list[str]) -> int:
    for i, n in enumerate(names):
        if val in (n, n.removeprefix("SQ_RSRC_IMG_")):
            return i
    raise _NoMatch(f"unknown dim {val}")


def _format_code(val: str, names: list[str]) -> int:
    if val in names and val:
        return names.index(val)
    return _ranged(_int(val), 0, 127, "format")


def _assemble_mode(enc: str, key: dict, entry: dict, mk: str, ops: list[str], mf: dict[str, int],
                   arch: str) -> bytes:
    off = saddr_off(arch)
    implied = mode_fields(enc, mk, off)
    for name, v in implied.items():
        if name in FLAGS[enc] and mf.get(name, 0) != v:
            raise _NoMatch()
    layout = get_arch(arch).encodings[enc]
    f = {n: 0 for n in layout.field_names} | _defaults(enc, entry, arch) | key | mf | implied
    allowed = set(entry["ok"][mk]) | set(implied) | {"dim"} | ({"th"} if mk[:1] == "1" and "th" in entry else set())
    if any(n not in allowed for n in mf):
        raise _NoMatch("modifier not accepted by this instruction")
    tmpl = entry["t"][mk]
    if len(ops) != len(tmpl):
        raise _NoMatch(f"expected {len(tmpl)} operands")
    counts = register_counts(enc, entry, f, arch, mk)
    if counts is None:
        raise _NoMatch("invalid dmask/d16/tfe/dim combination")
    extra = b""
    for spec, tok in zip(tmpl, ops, strict=True):
        accf = frozenset(entry.get("accf", ACC_FIELDS))
        extra += _operand(enc, spec, tok, f, counts, get_arch(arch).family, off, accf)
    if mode_of(enc, f, off) != mk:
        raise _NoMatch()
    return layout.pack(f).to_bytes(layout.size, "little") + extra


def _defaults(enc: str, entry: dict, arch: str) -> dict[str, int]:
    """Fields whose absent modifier means a nonzero value: the buffer format that llvm does not print (MTBUF,
    and gfx12's tbuffer_* in VBUFFER)."""
    if enc != "MTBUF" and not (enc == "VBUFFER" and any("format" in ok for ok in entry["ok"].values())):
        return {}
    return {"format": tables(arch)["names"]["format"].index("")}


def _operand(enc: str, spec: str, tok: str, f: dict[str, int], counts: dict[str, int], family: str = "gfx11",
             off: int = SADDR_OFF, accf: frozenset = ACC_FIELDS) -> bytes:
    """Set the field(s) of one operand token; returns NSA extension bytes for a MIMG address list."""
    if ":" not in spec:
        if tok != spec:
            raise _NoMatch(f"expected {spec}")
        return b""
    name = spec.split(":")[0]
    n = counts[name]
    if name == "attr":
        m = _ATTR.match(tok)
        if not m or int(m.group(1)) > 63:
            raise _NoMatch("expected attrN.[xyzw]")
        f["attr"], f["attr_chan"] = int(m.group(1)), "xyzw".index(m.group(2))
    elif name == "soffset":
        code = parse_src(tok, 1, family)
        if code is None or code > 255:
            raise _NoMatch("invalid soffset")
        f[name] = code
    elif name in SCALAR_FIELDS:
        f[name] = _scalar(tok, n, SCALED.get(name, 1), family, off)
    elif name == "vaddr" and enc in IMAGES12:
        _image_addresses(enc, tok, n, f)
    elif name == "vaddr" and tok.startswith("["):
        return _nsa(tok, n, f)
    elif name in accf and "acc" in f and tok.startswith("a"):  # gfx9: AGPR data
        f[name], f["acc"] = _vgpr(tok, n, "a"), 1
    else:
        f[name] = _vgpr(tok, n)
    return b""


def _scalar(tok: str, n: int, scale: int, family: str = "gfx11", off: int = SADDR_OFF) -> int:
    code = parse_src(tok, n, family)
    if code is None or code >= 128 or code % scale or code == off and scale == 1:
        raise _NoMatch(f"invalid scalar operand {tok}")
    return code // scale


def _vgpr(tok: str, n: int, file: str = "v") -> int:
    reg = parse_register(tok)
    if reg is None or reg[0] != file or reg[2] != n or reg[1] + n > 256:
        raise _NoMatch(f"expected {n} VGPRs, got {tok}")
    return reg[1]


def _image_addresses(enc: str, tok: str, count: int, f: dict[str, int]) -> None:
    """gfx12's image address operand: one VGPR, or a list, one entry per address field."""
    parts = [p.strip() for p in tok[1:-1].split(",")] if tok.startswith("[") else [tok]
    sizes = image_address_split(enc, count)
    if len(parts) != len(sizes) or (count > 1) != tok.startswith("["):
        raise _NoMatch("address list has the wrong length")
    for name, p, n in zip(image_address_fields(enc), parts, sizes, strict=False):
        f[name] = _vgpr(p, n)


def _nsa(tok: str, count: int, f: dict[str, int]) -> bytes:
    sizes = image_address_split("MIMG", count)
    parts = [p.strip() for p in tok[1:-1].split(",")]
    if count < 2 or len(parts) != len(sizes):
        raise _NoMatch("NSA address list has the wrong length")
    regs = [_vgpr(p, n) for p, n in zip(parts, sizes, strict=True)]
    f["vaddr"], f["nsa"] = regs[0], (len(regs) + 2) // 4
    extra = bytes(regs[1:])
    return extra + bytes(4 * f["nsa"] - len(extra))


def _assemble_exp(ops: list[str], mf: dict[str, int], tabs: dict, arch: str) -> bytes:
    targets = tabs["names"]["target"]
    if len(ops) != 5 or ops[0] not in targets or ops[0].startswith("invalid"):
        raise _NoMatch("expected an export target and four sources")
    f = {"target": targets.index(ops[0]), **mf, "en": 0}
    for i, tok in enumerate(ops[1:]):
        if tok != "off":
            f[f"vsrc{i}"] = _vgpr(tok, 1)
            f["en"] |= 1 << i
    return get_arch(arch).encodings["EXP"].pack(f).to_bytes(8, "little")
