"""What the vector-ALU family's decoder and printer (valu.py) and its assembler (valu_asm.py) both read: the
generated tables of an architecture (data/valu.json, from `python -m tools.isatab_valu [--arch A]`) and the spellings
of the modifier fields they print and parse. valu.py registers the family with the assembler's entry points, so it
imports valu_asm; neither is imported by this module.
"""

from __future__ import annotations

from functools import cache

from .arch import DEFAULT, get_arch

OMOD = {1: "mul:2", 2: "mul:4", 3: "div:2"}
DPP_ROWS = {0x100: "row_shl", 0x110: "row_shr", 0x120: "row_ror", 0x150: "row_share", 0x160: "row_xmask"}
SDWA_SEL = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD")  # gfx9's SDWA operand selects
SDWA_UNUSED = ("UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE")
E32 = ("VOP1", "VOP2", "VOPC")
OP_SEL_BIT = {"src0": 0, "src1": 1, "src2": 2, "vdst": 3}  # VOP3: the op_sel bit choosing an operand's half


@cache
def tables(arch: str = DEFAULT) -> dict:
    """The generated tables of an architecture (opcode entries per encoding, VOPD halves, operand classes,
    True16 entries)."""
    t = dict(get_arch(arch).table("valu"))
    for key in ("ops", "ops16"):
        t[key] = {enc: {int(k): v for k, v in d.items()} for enc, d in t.get(key, {}).items()}
    for key in ("vopd", "vopd16"):
        t[key] = {side: {int(k): v for k, v in d.items()} for side, d in t.get(key, {}).items()}
    t["no16"] = {enc: set(ops) for enc, ops in t.get("no16", {}).items()}
    return t


# gfx950's f8f6f4 MFMAs: A's and B's format code (the entry's "fmt": {"src0": "cbsz", "src1": "blgp"}) sets how many
# VGPRs hold a lane's 32 values: FP8 / BF8 (0, 1) 8, FP6 / BF6 (2, 3) 6, FP4 (4) 4; LLVM 22 takes 8 for the codes 5-7.
FORMAT_REGS = {0: 8, 1: 8, 2: 6, 3: 6, 4: 4}


def sized(spec: list, e: dict, fields: dict[str, int]) -> list:
    """An operand spec with its width set by the format field the entry names for it (unchanged otherwise)."""
    field = e.get("fmt", {}).get(spec[0])
    if field is None:
        return spec
    return [spec[0], spec[1], FORMAT_REGS.get(fields.get(field, 0), 8), *spec[3:]]
