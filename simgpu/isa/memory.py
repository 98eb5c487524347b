"""The memory instruction family of the codec: gfx11's DS, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF, MIMG, EXP, LDSDIR and
gfx12's DS, VFLAT/VSCRATCH/VGLOBAL, VBUFFER, VIMAGE, VSAMPLE, EXP, LDSDIR.

Everything per instruction comes from data/memory.json (generated from llvm-mc by `python -m tools.isatab_memory
[--arch A]`): for each opcode its mnemonic, one operand template per "mode" (the field values that change the
operand list, see memory_fmt.mode_of), the modifiers it accepts and their printed order, and for images the data
and address register counts. This module only knows how each kind of operand and modifier is spelled.
"""

from __future__ import annotations

import struct
from functools import cache

from . import cpol
from .arch import DEFAULT, get_arch
from .encodings import SRC_LITERAL
from .errors import DecodeError
from .inst import Family, Inst, register
from .memory_asm import assemble_memory
from .memory_fmt import (
    ACC_FIELDS,
    FIELD_MODS,
    IMAGES12,
    MOD_FIELDS,
    SCALAR_FIELDS,
    SCALED,
    VALUED,
    image_address_fields,
    image_address_split,
    is_modifier,
    mode_fields,
    mode_of,
    register_counts,
    saddr_off,
    swizzle_text,
    tables,
)
from .operands import INV_2PI_32, REGS, TTMP0, inline_constant, reg_range, scalar_name, src_name

ENCODINGS_OWNED = ("DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "EXP", "LDSDIR", "VBUFFER", "VFLAT", "VSCRATCH", "VGLOBAL",
                   "VIMAGE", "VSAMPLE")
_CHANNELS = "xyzw"
# Bit patterns of the float inline constants, which llvm prints for a literal of the same value.
_FLOAT_BITS = {struct.unpack("<I", struct.pack("<f", float(t)))[0]: t
               for code in range(240, 248) if (t := inline_constant(code))} | {0x3E22F983: INV_2PI_32}


class _Bad(Exception):
    """An operand or field that does not fit: a DecodeError when decoding, a mismatch when assembling."""


def exp_mnemonic(arch: str = DEFAULT) -> str:
    """The export instruction's mnemonic (gfx11: exp, gfx12: export)."""
    return tables(arch)["names"].get("exp", "exp")


@cache
def _by_mnemonic(arch: str = DEFAULT) -> dict[str, list[tuple[str, dict[str, int], dict]]]:
    out: dict[str, list] = {}
    for enc, ops in tables(arch)["ops"].items():
        for kname, entry in ops.items():
            seg, _, op = kname.rpartition(".")
            key = {"op": int(op)} | ({"seg": int(seg)} if seg else {})
            out.setdefault(entry["m"], []).append((enc, key, entry))
    if "EXP" in get_arch(arch).encodings:
        out[exp_mnemonic(arch)] = [("EXP", {}, {})]
    return out


def _kname(enc: str, f: dict[str, int]) -> str:
    return f"{f['seg']}.{f['op']}" if enc == "FLAT" else str(f["op"])


# ---------------------------------------------------------------------------------------------- widths

def _counts(enc: str, entry: dict, f: dict[str, int], arch: str = DEFAULT, mode: str | None = None) -> dict[str, int]:
    """Register count of each operand field (memory_fmt.register_counts, of the template of `mode`, default the
    fields' mode), or _Bad for an image width that does not exist."""
    counts = register_counts(enc, entry, f, arch, mode)
    if counts is None:
        raise _Bad("no such data/address width")
    return counts


def _nsa_split(count: int) -> list[int]:
    """Register count of each NSA address: one each, the fifth and last takes the rest."""
    return image_address_split("MIMG", count)


# ------------------------------------------------------------------------------------------- operands

def _scalar_text(code: int, n: int, family: str) -> str | None:
    """An SGPR/TTMP range, or None when it runs past the end of its register class."""
    if code <= REGS[family].sgpr_max < code + n - 1 or TTMP0 <= code < TTMP0 + 16 < code + n:
        return None
    return scalar_name(code, n, family)


def _literal_text(value: int | None) -> str | None:
    """A literal soffset as llvm prints it: as the inline constant of the same value if there is one."""
    if value is None:
        return None
    signed = value - (1 << 32) if value >> 31 else value
    if -16 <= signed <= 64:
        return str(signed)
    return _FLOAT_BITS.get(value, f"0x{value:x}")


def _operand_text(enc: str, spec: str, f: dict[str, int], counts: dict[str, int], extra: bytes,
                  literal: int | None = None, arch: str = DEFAULT, accf: frozenset = ACC_FIELDS) -> str:
    if ":" not in spec:
        return spec
    name = spec.split(":")[0]
    n = counts[name]
    if name == "attr":
        return f"attr{f['attr']}.{_CHANNELS[f['attr_chan']]}"
    fam = get_arch(arch).family
    if name == "soffset":
        text = src_name(f[name], 1, 32, fam) if f[name] != SRC_LITERAL else _literal_text(literal)
    elif name in SCALAR_FIELDS:
        text = _scalar_text(f[name] * SCALED.get(name, 1), n, fam)
    elif name == "vaddr" and enc in IMAGES12:
        return _image_address_text(enc, f, n, arch)
    elif name == "vaddr" and enc == "MIMG" and f["nsa"]:
        return _nsa_text(f, n, extra)
    else:  # gfx9's acc bit: the data registers are AGPRs
        file = "a" if f.get("acc") and name in accf else "v"
        text = reg_range(file, f[name], n) if f[name] + n <= 256 else None
    if text is None:
        raise _Bad(f"invalid {name} operand")
    return text


def _nsa_text(f: dict[str, int], count: int, extra: bytes) -> str:
    parts = _nsa_split(count)
    if count < 2 or f["nsa"] != (len(parts) + 2) // 4:
        raise _Bad("NSA address count does not match the nsa field")
    regs = [f["vaddr"], *extra[:len(parts) - 1]]
    return "[" + ", ".join(reg_range("v", r, n) for r, n in zip(regs, parts, strict=True)) + "]"


def _image_address_text(enc: str, f: dict[str, int], count: int, arch: str) -> str:
    """gfx12's image addresses: one VGPR (range) per address field, a list when there are two or more. As llvm
    does, a VIMAGE word whose address fields but the first are all zero prints that first VGPR alone (which
    llvm's assembler then rejects: such a word is no canonical encoding); the table's "single_address" lists
    the encodings that do this."""
    if enc in tables(arch).get("single_address", ()) and all(not f[n] for n in image_address_fields(enc)[1:]):
        count = 1
    parts = image_address_split(enc, count)
    regs = [f[name] for name in image_address_fields(enc)[:len(parts)]]
    if any(r + n > 256 for r, n in zip(regs, parts, strict=True)):
        raise _Bad("address VGPR range runs past v255")
    texts = [reg_range("v", r, n) for r, n in zip(regs, parts, strict=True)]
    return texts[0] if count == 1 else "[" + ", ".join(texts) + "]"


def _operands(inst: Inst) -> list[str]:
    enc, f = inst.encoding, inst.fields
    if enc == "EXP":
        return _exp_operands(f, inst.arch)
    entry = inst.info
    tmpl = entry["t"].get(mode_of(enc, f, saddr_off(inst.arch)))
    if tmpl is None:
        raise _Bad("operand combination llvm does not decode")
    counts = _counts(enc, entry, f, inst.arch)
    accf = frozenset(entry.get("accf", ACC_FIELDS))
    return [_operand_text(enc, s, f, counts, inst.extra, inst.literal, inst.arch, accf) for s in tmpl]


def _exp_operands(f: dict[str, int], arch: str) -> list[str]:
    target = tables(arch)["names"]["target"][f["target"]]
    if not target:
        raise _Bad("invalid export target")
    srcs = [reg_range("v", f[f"vsrc{i}"], 1) if f["en"] >> i & 1 else "off" for i in range(4)]
    return [target, *srcs]


# ------------------------------------------------------------------------------------------ modifiers

def offset_value(enc: str, f: dict[str, int], arch: str = DEFAULT) -> int:
    """The byte offset an instruction's offset field (DS: offset0/offset1) holds, signed where llvm prints
    it signed (gfx11's GLOBAL/SCRATCH, gfx12's VFLAT/VSCRATCH/VGLOBAL/VBUFFER)."""
    if enc == "DS":
        return f["offset0"] | f["offset1"] << 8
    v = f["offset"]
    if enc == "FLAT":
        return v - 0x2000 if tables(arch)["flat_signed"][f["seg"]] and v & 0x1000 else v
    width = get_arch(arch).encodings[enc].field("offset").width
    if enc in tables(arch).get("signed_offset", ()) and v >> (width - 1):
        v -= 1 << width
    return v


def _mod_value(enc: str, name: str, f: dict[str, int], arch: str) -> int:
    if name == "offset":
        return offset_value(enc, f, arch)
    return f[MOD_FIELDS.get(name, name)]


def inst_swizzles(enc: str, f: dict[str, int], arch: str = DEFAULT) -> bool:
    """Whether this opcode prints its offset as a swizzle pattern (ds_swizzle_b32)."""
    return enc == "DS" and bool(tables(arch)["ops"]["DS"].get(str(f["op"]), {}).get("swz"))


def _mod_text(enc: str, name: str, f: dict[str, int], entry: dict, arch: str) -> str | None:
    names = tables(arch)["names"]
    if name in ("th", "scope"):  # gfx12's cache policy: th spelled per instruction kind and scope
        toks = cpol.format_cpol(names["cpol"], entry["th"], f["th"], f["scope"])
        return next((t for t in toks if t.startswith(name + ":")), None)
    v = _mod_value(enc, name, f, arch)
    if name == "format":
        return f"format:{names['format'][v]}" if names["format"][v] else None
    if not v and name not in entry.get("always", ()):
        return None
    if name == "dim":
        return f"dim:{names['dim'][v]}"
    if name == "dmask":
        return f"dmask:0x{v:x}"
    if name == "offset" and inst_swizzles(enc, f, arch):
        return f"offset:{swizzle_text(v)}"
    if name in VALUED:
        return f"{name}:{v}"
    return name


def _modifiers(inst: Inst) -> list[str]:
    enc, f = inst.encoding, inst.fields
    if enc == "EXP":
        entry = {"mods": tables(inst.arch)["names"]["exp_mods"]}
    else:
        entry = inst.info
    return [t for name in entry["mods"] if (t := _mod_text(enc, name, f, entry, inst.arch)) is not None]


# --------------------------------------------------------------------------------------------- decode

def _check_fields(enc: str, entry: dict, f: dict[str, int], arch: str = DEFAULT) -> None:
    """Reject field values llvm does not decode: modifiers the opcode refuses, unused operand fields."""
    mk = mode_of(enc, f, saddr_off(arch))
    ok = set(entry["ok"][mk]) | set(mode_fields(enc, mk)) | {"op", "seg", "saddr", "dim", "nsa", "attr_chan"}
    used = {s.split(":")[0] for s in entry["t"][mk] if ":" in s}
    if "vaddr" in used and enc in IMAGES12:
        used |= set(image_address_fields(enc))
    if enc in ("VFLAT", "VSCRATCH", "VGLOBAL") and mk[0] == "1":  # the th bit that chose this mode
        ok.add("th")
    for name, v in f.items():
        if not v or name in ok or name in used:
            continue
        if name in entry["mods"] or name in FIELD_MODS or name in ("offset0", "offset1", "offset", "format"):
            raise _Bad(f"{name} is not accepted by {entry['m']}")
        if entry.get("strict"):
            raise _Bad(f"unused field {name} is not zero")


def _decode(enc: str, data: bytes, offset: int, arch: str = DEFAULT) -> Inst:
    layout = get_arch(arch).encodings[enc]
    word0 = int.from_bytes(data[offset:offset + 4], "little")
    if offset + layout.size > len(data):
        raise DecodeError(f"truncated {enc} instruction", offset, word0)
    f = layout.unpack(int.from_bytes(data[offset:offset + layout.size], "little"))
    entry = {} if enc == "EXP" else tables(arch)["ops"][enc].get(_kname(enc, f))
    if entry is None:
        raise DecodeError(f"unknown {enc} opcode {f['op']}", offset, word0)
    mnemonic = exp_mnemonic(arch) if enc == "EXP" else entry["m"]
    extra = b""
    if enc == "MIMG" and f["nsa"]:
        end = offset + layout.size + 4 * f["nsa"]
        if end > len(data):
            raise DecodeError("truncated MIMG NSA addresses", offset, word0)
        extra = bytes(data[offset + layout.size:end])
    literal = None
    if enc in ("MUBUF", "MTBUF") and f["soffset"] == SRC_LITERAL:  # llvm reads a literal dword after it
        if offset + layout.size + 4 > len(data):
            raise DecodeError("truncated literal", offset, word0)
        literal = int.from_bytes(data[offset + layout.size:offset + layout.size + 4], "little")
    inst = Inst(enc, f["op"] if "op" in f else 0, mnemonic, f, literal=literal, extra=extra,
                size=layout.size + len(extra) + (4 if literal is not None else 0), info=entry, arch=arch)
    try:
        if enc != "EXP":
            if mode_of(enc, f, saddr_off(arch)) not in entry["t"]:
                raise _Bad(f"{mnemonic} has no form with these mode bits")
            _check_fields(enc, entry, f, arch)
        inst.operands = _operands(inst)
        _modifiers(inst)
    except _Bad as e:
        raise DecodeError(str(e), offset, word0) from None
    return inst


def _format(inst: Inst) -> str:
    """The instruction as llvm-mc prints it."""
    try:
        ops = _operands(inst)
        mods = _modifiers(inst)
    except _Bad as e:
        raise ValueError(str(e)) from None
    # llvm pads the mnemonic of some NSA image instructions with one more space (learned per opcode).
    sep = " " * inst.info.get("nsasp", 1) if inst.encoding == "MIMG" and inst.fields.get("nsa") else " "
    if inst.encoding == "EXP":  # the export target is separated from the sources by a space only
        text = f"{inst.mnemonic} {ops[0]} " + ", ".join(ops[1:])
    else:
        text = inst.mnemonic + (sep + ", ".join(ops) if ops else "")
    return " ".join([text, *mods])


# ------------------------------------------------------------------------------------------- assemble

@cache
def _mnemonics(arch: str = DEFAULT) -> frozenset[str]:
    return frozenset(_by_mnemonic(arch))


def _assemble(mnemonic: str, toks: list[str], ctx) -> bytes | None:
    cands = _by_mnemonic(ctx.arch).get(mnemonic)
    if not cands:
        return None
    # without image encodings (gfx9) `a16` is an AGPR, never the a16 flag
    images = any(e in get_arch(ctx.arch).encodings for e in ("MIMG", "VIMAGE", "VSAMPLE"))
    mods = [t for t in toks if is_modifier(t) and (images or t != "a16")]
    return assemble_memory(cands, [t for t in toks if t not in mods], mods, ctx)


register(Family("memory", ENCODINGS_OWNED, _decode, _format, _assemble, _mnemonics))
