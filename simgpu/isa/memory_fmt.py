"""Operand and modifier kinds of the memory encodings (gfx11's DS, FLAT, MUBUF, MTBUF, MIMG, EXP, LDSDIR; gfx12's
DS, VFLAT/VSCRATCH/VGLOBAL, VBUFFER, VIMAGE, VSAMPLE, EXP, LDSDIR), shared by the codec's decoder and printer
(memory.py), its assembler (memory_asm.py) and its table generator.

Per-instruction facts (mnemonics, operand templates, accepted modifiers, widths, names) live in
data/memory.json, generated from llvm-mc by `python -m tools.isatab_memory`; this module reads them (`tables`) and
knows how each kind of operand or modifier is spelled and how many registers an operand spans.
"""

from __future__ import annotations

from functools import cache

from .arch import DEFAULT, get_arch

# Flag modifiers of each encoding: printed as their name when the field is 1.
FLAGS = {
    "DS": ("gds", "acc"),
    "FLAT": ("glc", "slc", "dlc", "sc1", "acc"),
    "MUBUF": ("offen", "idxen", "glc", "slc", "dlc", "tfe", "sc1", "acc", "lds"),
    "MTBUF": ("offen", "idxen", "glc", "slc", "dlc", "tfe", "sc1", "acc"),
    "MIMG": ("unorm", "glc", "slc", "dlc", "r128", "a16", "tfe", "lwe", "d16"),
    "EXP": ("done", "row"),
    "LDSDIR": (),
    "VBUFFER": ("offen", "idxen", "tfe"),
    "VFLAT": (),
    "VSCRATCH": (),
    "VGLOBAL": (),
    "VIMAGE": ("r128", "a16", "tfe", "d16"),
    "VSAMPLE": ("unorm", "r128", "a16", "tfe", "lwe", "d16"),
}
FLATS12 = ("VFLAT", "VSCRATCH", "VGLOBAL")  # gfx12's FLAT, one encoding per segment
IMAGES12 = {"VIMAGE": 5, "VSAMPLE": 4}  # gfx12's image encodings and their number of address VGPR fields
# Printed modifier name -> field, where they differ (gfx940's sc0 and nt are the glc and slc bits).
MOD_FIELDS = {"row_en": "row", "wait_vdst": "waitvdst", "wait_va_vdst": "waitvdst", "wait_vm_vsrc": "waitvsrc",
              "sc0": "glc", "nt": "slc"}
FIELD_MODS = {v: k for k, v in MOD_FIELDS.items()}
# Modifiers printed name:value (decimal).
VALUED = ("offset", "offset0", "offset1", "wait_vdst", "wait_va_vdst", "wait_vm_vsrc")
MOD_NAMES = frozenset({"offset", "offset0", "offset1", "gds", "glc", "slc", "dlc", "offen", "idxen", "tfe", "lwe",
                       "d16", "a16", "r128", "unorm", "dmask", "dim", "format", "done", "row_en", "wait_vdst",
                       "wait_va_vdst", "wait_vm_vsrc", "th", "scope", "sc0", "sc1", "nt", "lds"})
# gfx9: the acc bit makes these register fields AGPRs (a0-a255; an entry's "accf" where they differ, ds_gws_*'s
# addr); it is not printed as a modifier.
ACC_FIELDS = frozenset({"vdst", "data", "data0", "data1", "vdata"})
# Scalar register fields counted in units of 4 SGPRs (gfx11's 5-bit srsrc/ssamp).
SCALED = {"srsrc": 4, "ssamp": 4}
# Fields holding a scalar operand (gfx12's rsrc/samp are 9-bit source codes).
SCALAR_FIELDS = frozenset({"srsrc", "ssamp", "soffset", "saddr", "rsrc", "samp"})
SADDR_OFF = 124  # FLAT saddr code meaning "no scalar address" (printed off); gfx9's is the table's "saddr_off"
B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


@cache
def tables(arch: str = DEFAULT) -> dict:
    """The generated tables of an architecture (ops per encoding, names, offset signedness)."""
    return get_arch(arch).table("memory")


def saddr_off(arch: str = DEFAULT) -> int:
    """The FLAT saddr code printed `off` (gfx9's 0x7f, else SADDR_OFF)."""
    return tables(arch).get("saddr_off", SADDR_OFF)


def is_modifier(tok: str) -> bool:
    """True for a modifier token (glc, offset:16, dim:SQ_RSRC_IMG_2D, ...), False for an operand."""
    return tok.split(":", 1)[0] in MOD_NAMES


def mode_of(enc: str, f: dict[str, int], saddr_off: int = SADDR_OFF) -> str:
    """Key of the field values that select an operand template (see tools/isatab_memory.MODES). gfx12's FLAT
    encodings: th's low bit (an atomic's TH_ATOMIC_RETURN) takes the place of glc. gfx9's MUBUF adds its lds bit
    (the data goes to LDS: no vdata)."""
    if enc == "DS":
        return str(f.get("gds", 0))
    if enc == "FLAT":
        return f"{f.get('glc', 0)}{int(f.get('saddr', 0) == saddr_off)}{f.get('sve', 0)}"
    if enc in FLATS12:
        return f"{f.get('th', 0) & 1}{int(f.get('saddr', 0) == saddr_off)}{f.get('sve', 0)}"
    if enc in ("MUBUF", "MTBUF", "VBUFFER"):
        return f"{f.get('tfe', 0)}{f.get('offen', 0)}{f.get('idxen', 0)}" + (str(f["lds"]) if "lds" in f else "")
    return ""


def mode_fields(enc: str, key: str, saddr_off: int = SADDR_OFF) -> dict[str, int]:
    """The field values a mode key implies (the inverse of mode_of, minus what operands and the th modifier
    supply)."""
    bits = [int(c) for c in key]
    if enc == "DS":
        return {"gds": bits[0]}
    if enc == "FLAT":
        return {"glc": bits[0], "sve": bits[2]} | ({"saddr": saddr_off} if bits[1] else {})
    if enc in FLATS12:
        return ({"sve": bits[2]} if enc == "VSCRATCH" else {}) | ({"saddr": saddr_off} if bits[1] else {})
    if enc in ("MUBUF", "MTBUF", "VBUFFER"):
        return dict(zip(("tfe", "offen", "idxen", "lds"), bits, strict=False))
    return {}


def register_counts(enc: str, entry: dict, f: dict[str, int], arch: str = DEFAULT,
                    mode: str | None = None) -> dict[str, int] | None:
    """Register count of each operand field (of the template of `mode`, default the fields' mode); image
    data/address counts depend on dmask/d16/tfe/lwe, dim/a16: None when that width does not exist."""
    counts = {}
    for spec in entry["t"].get(mode_of(enc, f, saddr_off(arch)) if mode is None else mode, []):
        if ":" in spec:
            name, n = spec.split(":")
            counts[name] = int(n) if n != "*" else 1
    if enc == "MIMG" or enc in IMAGES12:
        rows, row = tables(arch)["mimg_rows"], 2 * f["dim"] + f["a16"]
        col = f["dmask"] + 16 * (f["d16"] + 2 * f["tfe"] + 4 * f.get("lwe", 0))
        vd, va = rows[entry["vdr"][row]][col], rows[entry["var"][row]][col]
        if "-" in (vd, va):
            return None
        counts.update(vdata=B36.index(vd), vaddr=B36.index(va))
    return counts


def image_address_split(enc: str, count: int) -> list[int]:
    """Register count of each address VGPR field of a MIMG NSA form or a gfx12 image instruction: one each, the
    last field takes the rest."""
    n = min(count, IMAGES12.get(enc, 5))
    return [1] * (n - 1) + [count - (n - 1)]


def image_address_fields(enc: str) -> list[str]:
    """gfx12's address VGPR fields in printed order (VIMAGE's fifth sits in the first dword's top byte)."""
    return [f"vaddr{i}" for i in range(IMAGES12[enc])]


# ds_swizzle_b32's offset is printed as a swizzle pattern: QUAD_PERM (bits 15:8 = 0x80) or, with bit 15
# clear, an and/or/xor lane mask (5 bits each at 0/5/10) shown as SWAP, REVERSE, BROADCAST or BITMASK_PERM.
def swizzle_text(v: int) -> str:
    """The printed form of a nonzero ds_swizzle offset (offset:<this>)."""
    if v & 0xFF00 == 0x8000:
        return "swizzle(QUAD_PERM," + ",".join(str(v >> (2 * i) & 3) for i in range(4)) + ")"
    if v & 0x8000:
        return str(v)
    and_m, or_m, xor_m = v & 0x1F, v >> 5 & 0x1F, v >> 10 & 0x1F
    if and_m == 0x1F and or_m == 0 and xor_m and xor_m & (xor_m - 1) == 0:
        return f"swizzle(SWAP,{xor_m})"
    if and_m == 0x1F and or_m == 0 and xor_m and (xor_m + 1) & xor_m == 0:
        return f"swizzle(REVERSE,{xor_m + 1})"
    group = 0x20 - and_m
    if group > 1 and group & (group - 1) == 0 and or_m < group and xor_m == 0:
        return f"swizzle(BROADCAST,{group},{or_m})"
    p0, p1 = or_m ^ xor_m, (and_m | or_m) ^ xor_m
    bits = "".join(_BITMASK_CHAR[p0 >> b & 1, p1 >> b & 1] for b in range(4, -1, -1))
    return f'swizzle(BITMASK_PERM,"{bits}")'


# (lane bit when the source bit is 0, when it is 1) -> pattern character: constant, pass-through, inverted.
_BITMASK_CHAR = {(0, 0): "0", (1, 1): "1", (0, 1): "p", (1, 0): "i"}


def parse_swizzle(text: str) -> int | None:
    """The offset value of a swizzle(...) pattern, or None when it is not one."""
    if not (text.startswith("swizzle(") and text.endswith(")")):
        return None
    kind, *args = [a.strip() for a in text[8:-1].split(",")]
    try:
        if kind == "QUAD_PERM" and len(args) == 4:
            return 0x8000 | sum((int(a) & 3) << (2 * i) for i, a in enumerate(args))
        if kind == "SWAP" and len(args) == 1:
            return 0x1F | int(args[0]) << 10
        if kind == "REVERSE" and len(args) == 1:
            return 0x1F | (int(args[0]) - 1) << 10
        if kind == "BROADCAST" and len(args) == 2:
            return (0x20 - int(args[0])) | int(args[1]) << 5
        if kind == "BITMASK_PERM" and len(args) == 1 and len(args[0]) == 7:
            return _parse_bitmask(args[0].strip('"'))
    except ValueError:
        return None
    return None


def _parse_bitmask(mask: str) -> int | None:
    and_m = or_m = xor_m = 0
    for ch in mask:
        if ch not in "01pi":
            return None
        and_m, or_m, xor_m = and_m << 1 | (ch in "pi"), or_m << 1 | (ch == "1"), xor_m << 1 | (ch == "i")
    return and_m | or_m << 5 | xor_m << 10
