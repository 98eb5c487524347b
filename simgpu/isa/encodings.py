"""Bit layouts of the gfx11 (RDNA3), gfx12 (RDNA4) and gfx9 (CDNA3, gfx942) instruction encodings: gfx11's from the
RDNA3 ISA reference, gfx12's and gfx9's found bit by bit with llvm-mc -mcpu=gfx1201 / gfx942 (`python -m tools.isatab
bits --arch gfx1201 LINE` flips each bit of an encoding and shows what llvm-mc makes of it), named as the RDNA3
fields they correspond to (gfx9's as LLVM's gfx9 fields).

An encoding is a list of fields over its base words (32, 64 or 96 bits, little-endian); which encoding a
word belongs to is decided by its fixed high bits (`identify`). Extension dwords (32-bit literal,
DPP16/DPP8 control, MIMG NSA addresses) are not part of the base layout; the codec appends them.

`ENCODINGS` is gfx11's set; `ENCODING_SETS` holds each family's set and identification order, gfx12's as
gfx11's with the encodings RDNA4 changed or added (GFX12_CHANGES) and without those it dropped; gfx9's
(GFX9_ENCODINGS) is a set of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from simgpu.hw import bits


class Field(bits.Field):
    """A named bit field of an instruction: `width` bits at bit `lo` of the (up to 64-bit) base word."""

    __slots__ = ("name",)

    def __init__(self, lo: int, width: int, name: str):
        super().__init__(lo, width)
        self.name = name

    def __repr__(self) -> str:
        return f"Field({self.lo}, {self.width}, {self.name!r})"


@dataclass(frozen=True)
class Encoding:
    """One instruction encoding: its name, base size in bytes, fixed bits and fields."""

    name: str
    size: int
    fixed_lo: int  # the fixed "encoding" bits sit at [fixed_lo, 32) of the first dword
    fixed_value: int
    fields: tuple[Field, ...]

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name}")

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def fixed_word(self) -> int:
        return self.fixed_value << self.fixed_lo

    def unpack(self, word: int) -> dict[str, int]:
        """Split a base word into named field values."""
        return {f.name: f.get(word) for f in self.fields}

    def pack(self, values: dict[str, int]) -> int:
        """Build a base word from named field values (missing fields are zero)."""
        word = self.fixed_word
        for f in self.fields:
            word = f.put(word, values.get(f.name, 0))
        return word


def _enc(name: str, size: int, fixed_lo: int, fixed_value: int, *fields: tuple[str, int, int]) -> Encoding:
    return Encoding(name, size, fixed_lo, fixed_value, tuple(Field(lo, w, n) for n, lo, w in fields))


# Field positions in 64/96-bit encodings count from bit 0 of the first dword; bits 32..63 are the second.
ENCODINGS: dict[str, Encoding] = {e.name: e for e in [
    _enc("SOP2", 4, 30, 0b10, ("ssrc0", 0, 8), ("ssrc1", 8, 8), ("sdst", 16, 7), ("op", 23, 7)),
    _enc("SOPK", 4, 28, 0b1011, ("simm16", 0, 16), ("sdst", 16, 7), ("op", 23, 5)),
    _enc("SOP1", 4, 23, 0b101111101, ("ssrc0", 0, 8), ("op", 8, 8), ("sdst", 16, 7)),
    _enc("SOPC", 4, 23, 0b101111110, ("ssrc0", 0, 8), ("ssrc1", 8, 8), ("op", 16, 7)),
    _enc("SOPP", 4, 23, 0b101111111, ("simm16", 0, 16), ("op", 16, 7)),
    _enc("SMEM", 8, 26, 0b111101, ("sbase", 0, 6), ("sdata", 6, 7), ("dlc", 13, 1), ("glc", 14, 1),
         ("op", 18, 8), ("offset", 32, 21), ("soffset", 57, 7)),
    _enc("VOP2", 4, 31, 0b0, ("src0", 0, 9), ("vsrc1", 9, 8), ("vdst", 17, 8), ("op", 25, 6)),
    _enc("VOP1", 4, 25, 0b0111111, ("src0", 0, 9), ("op", 9, 8), ("vdst", 17, 8)),
    _enc("VOPC", 4, 25, 0b0111110, ("src0", 0, 9), ("vsrc1", 9, 8), ("op", 17, 8)),
    _enc("VOPD", 8, 26, 0b110010, ("src0x", 0, 9), ("vsrc1x", 9, 8), ("opy", 17, 5), ("opx", 22, 4),
         ("src0y", 32, 9), ("vsrc1y", 41, 8), ("vdsty", 49, 7), ("vdstx", 56, 8)),
    _enc("VOP3", 8, 26, 0b110101, ("vdst", 0, 8), ("abs", 8, 3), ("op_sel", 11, 4), ("clamp", 15, 1),
         ("op", 16, 10), ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9), ("omod", 59, 2), ("neg", 61, 3)),
    # VOP3 with a scalar destination (carry-out or VCC-like result): sdst replaces abs/op_sel.
    _enc("VOP3SD", 8, 26, 0b110101, ("vdst", 0, 8), ("sdst", 8, 7), ("clamp", 15, 1), ("op", 16, 10),
         ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9), ("omod", 59, 2), ("neg", 61, 3)),
    _enc("VOP3P", 8, 24, 0b11001100, ("vdst", 0, 8), ("neg_hi", 8, 3), ("op_sel", 11, 3), ("op_sel_hi2", 14, 1),
         ("clamp", 15, 1), ("op", 16, 7), ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9),
         ("op_sel_hi", 59, 2), ("neg", 61, 3)),
    _enc("VINTERP", 8, 24, 0b11001101, ("vdst", 0, 8), ("waitexp", 8, 3), ("op_sel", 11, 4), ("clamp", 15, 1),
         ("op", 16, 7), ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9), ("neg", 61, 3)),
    _enc("LDSDIR", 4, 24, 0b11001110, ("vdst", 0, 8), ("attr_chan", 8, 2), ("attr", 10, 6), ("waitvdst", 16, 4),
         ("op", 20, 2)),
    _enc("DS", 8, 26, 0b110110, ("offset0", 0, 8), ("offset1", 8, 8), ("gds", 17, 1), ("op", 18, 8),
         ("addr", 32, 8), ("data0", 40, 8), ("data1", 48, 8), ("vdst", 56, 8)),
    _enc("FLAT", 8, 26, 0b110111, ("offset", 0, 13), ("dlc", 13, 1), ("glc", 14, 1), ("slc", 15, 1),
         ("seg", 16, 2), ("op", 18, 7), ("addr", 32, 8), ("data", 40, 8), ("saddr", 48, 7), ("sve", 55, 1),
         ("vdst", 56, 8)),
    _enc("MUBUF", 8, 26, 0b111000, ("offset", 0, 12), ("slc", 12, 1), ("dlc", 13, 1), ("glc", 14, 1),
         ("op", 18, 8), ("vaddr", 32, 8), ("vdata", 40, 8), ("srsrc", 48, 5), ("tfe", 53, 1), ("offen", 54, 1),
         ("idxen", 55, 1), ("soffset", 56, 8)),
    _enc("MTBUF", 8, 26, 0b111010, ("offset", 0, 12), ("slc", 12, 1), ("dlc", 13, 1), ("glc", 14, 1),
         ("op", 15, 4), ("format", 19, 7), ("vaddr", 32, 8), ("vdata", 40, 8), ("srsrc", 48, 5), ("tfe", 53, 1),
         ("offen", 54, 1), ("idxen", 55, 1), ("soffset", 56, 8)),
    _enc("MIMG", 8, 26, 0b111100, ("nsa", 0, 2), ("dim", 2, 3), ("unorm", 7, 1), ("dmask", 8, 4), ("slc", 12, 1),
         ("dlc", 13, 1), ("glc", 14, 1), ("r128", 15, 1), ("a16", 16, 1), ("d16", 17, 1), ("op", 18, 8),
         ("vaddr", 32, 8), ("vdata", 40, 8), ("srsrc", 48, 5), ("tfe", 53, 1), ("lwe", 54, 1), ("ssamp", 58, 5)),
    _enc("EXP", 8, 26, 0b111110, ("en", 0, 4), ("target", 4, 6), ("done", 11, 1), ("row", 13, 1),
         ("vsrc0", 32, 8), ("vsrc1", 40, 8), ("vsrc2", 48, 8), ("vsrc3", 56, 8)),
]}

# Extension dword layouts. DPP16 follows a VOP1/VOP2/VOPC word whose src0 is 250 (or a VOP3 whose src0 is 250);
# DPP8 follows one whose src0 is 233 (234: fetch-inactive set).
DPP16 = _enc("DPP16", 4, 32, 0, ("src0", 0, 8), ("dpp_ctrl", 8, 9), ("fi", 18, 1), ("bound_ctrl", 19, 1),
             ("src0_neg", 20, 1), ("src0_abs", 21, 1), ("src1_neg", 22, 1), ("src1_abs", 23, 1),
             ("bank_mask", 24, 4), ("row_mask", 28, 4))
DPP8 = _enc("DPP8", 4, 32, 0, ("src0", 0, 8), ("lane_sel", 8, 24))

SRC_DPP16 = 250
SRC_DPP8 = 233
SRC_DPP8_FI = 234
SRC_LITERAL = 255

# Order matters: longer fixed prefixes first, so SOP1/SOPC/SOPP win over SOPK and SOPK over SOP2,
# and VOP1/VOPC over VOP2.
_IDENTIFY_ORDER = ["SOP1", "SOPC", "SOPP", "SOPK", "SOP2", "VOP1", "VOPC", "VOP2", "VOP3P", "VINTERP", "LDSDIR",
                   "VOPD", "VOP3", "DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "SMEM", "EXP"]



# gfx12 (RDNA4): SMEM has a 24-bit offset and th/scope cache policy instead of glc/dlc; DS loses gds; LDSDIR
# (RDNA4's VDSDIR) gains wait_vm_vsrc; the 96-bit VBUFFER (MUBUF and MTBUF in one), VFLAT/VSCRATCH/VGLOBAL
# (FLAT split by segment, which the fixed bits hold), VIMAGE and VSAMPLE (MIMG split, up to five address
# VGPR fields instead of NSA dwords) replace gfx11's memory encodings. The VALU, SOP and EXP layouts are
# unchanged. The codec keeps gfx11's names where RDNA4 renamed an encoding (DS: VDS, LDSDIR: VDSDIR, EXP:
# VEXPORT).
_FLAT12 = (("saddr", 0, 7), ("op", 14, 8), ("vdst", 32, 8), ("scope", 50, 2), ("th", 52, 3), ("data", 55, 8),
           ("addr", 64, 8), ("offset", 72, 24))
GFX12_CHANGES: dict[str, Encoding] = {e.name: e for e in [
    _enc("SMEM", 8, 26, 0b111101, ("sbase", 0, 6), ("sdata", 6, 7), ("op", 13, 8), ("scope", 21, 2), ("th", 23, 2),
         ("offset", 32, 24), ("soffset", 57, 7)),
    _enc("DS", 8, 26, 0b110110, ("offset0", 0, 8), ("offset1", 8, 8), ("op", 18, 8), ("addr", 32, 8),
         ("data0", 40, 8), ("data1", 48, 8), ("vdst", 56, 8)),
    _enc("LDSDIR", 4, 24, 0b11001110, ("vdst", 0, 8), ("attr_chan", 8, 2), ("attr", 10, 6), ("waitvdst", 16, 4),
         ("op", 20, 2), ("waitvsrc", 23, 1)),
    _enc("VBUFFER", 12, 26, 0b110001, ("soffset", 0, 7), ("op", 14, 8), ("tfe", 22, 1), ("vdata", 32, 8),
         ("rsrc", 41, 9), ("scope", 50, 2), ("th", 52, 3), ("format", 55, 7), ("offen", 62, 1), ("idxen", 63, 1),
         ("vaddr", 64, 8), ("offset", 72, 24)),
    _enc("VFLAT", 12, 24, 0b11101100, *_FLAT12),
    _enc("VSCRATCH", 12, 24, 0b11101101, *_FLAT12, ("sve", 49, 1)),
    _enc("VGLOBAL", 12, 24, 0b11101110, *_FLAT12),
    _enc("VIMAGE", 12, 26, 0b110100, ("dim", 0, 3), ("r128", 4, 1), ("d16", 5, 1), ("a16", 6, 1), ("op", 14, 8),
         ("dmask", 22, 4), ("vdata", 32, 8), ("rsrc", 41, 9), ("scope", 50, 2), ("th", 52, 3), ("tfe", 55, 1),
         ("vaddr4", 56, 8), ("vaddr0", 64, 8), ("vaddr1", 72, 8), ("vaddr2", 80, 8), ("vaddr3", 88, 8)),
    _enc("VSAMPLE", 12, 26, 0b111001, ("dim", 0, 3), ("tfe", 3, 1), ("r128", 4, 1), ("d16", 5, 1), ("a16", 6, 1),
         ("unorm", 13, 1), ("op", 14, 8), ("dmask", 22, 4), ("vdata", 32, 8), ("lwe", 40, 1), ("rsrc", 41, 9),
         ("scope", 50, 2), ("th", 52, 3), ("samp", 55, 9), ("vaddr0", 64, 8), ("vaddr1", 72, 8),
         ("vaddr2", 80, 8), ("vaddr3", 88, 8)),
]}
GFX12_DROPPED = ("FLAT", "MUBUF", "MTBUF", "MIMG")
GFX12_ENCODINGS: dict[str, Encoding] = {n: e for n, e in ENCODINGS.items() if n not in GFX12_DROPPED} | GFX12_CHANGES
_IDENTIFY_ORDER_GFX12 = [n for n in _IDENTIFY_ORDER if n not in GFX12_DROPPED] + [
    "VBUFFER", "VFLAT", "VSCRATCH", "VGLOBAL", "VIMAGE", "VSAMPLE"]

# gfx9 (here CDNA3, gfx942; wave64 only): the SOP layouts and VOP1/VOP2/VOPC are gfx11's; SMEM, VOP3 (VOP3A, and
# VOP3B as VOP3SD), VOP3P, DS, FLAT, MUBUF and MTBUF have their own fixed bits and fields. The MFMA/SMFMAC opcodes
# of VOP3P use VOP3PMAI, a layout of the same word (as VOP3SD is of VOP3): cbsz/abid/blgp where VOP3P has its
# neg/op_sel bits, acc_cd (vdst and src2 are AGPRs) for clamp and acc (src0/src1 are AGPRs) for op_sel_hi.
# gfx940's cache policy sc0/nt/sc1 sits in the old glc/slc bits (their field names are kept, the printed names
# are the table's) and one new bit (sc1); the memory encodings' acc bit makes the data/vdst registers AGPRs.
# SMEM's soffset field is used when soe is set; with imm clear the offset field holds an SGPR code instead.
GFX9_ENCODINGS: dict[str, Encoding] = {n: ENCODINGS[n] for n in ("SOP2", "SOPK", "SOP1", "SOPC", "SOPP", "VOP2",
                                                                   "VOP1", "VOPC")} | {e.name: e for e in [
    _enc("SMEM", 8, 26, 0b110000, ("sbase", 0, 6), ("sdata", 6, 7), ("soe", 14, 1), ("nv", 15, 1), ("glc", 16, 1),
         ("imm", 17, 1), ("op", 18, 8), ("offset", 32, 21), ("soffset", 57, 7)),
    _enc("VOP3", 8, 26, 0b110100, ("vdst", 0, 8), ("abs", 8, 3), ("op_sel", 11, 4), ("clamp", 15, 1),
         ("op", 16, 10), ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9), ("omod", 59, 2), ("neg", 61, 3)),
    _enc("VOP3SD", 8, 26, 0b110100, ("vdst", 0, 8), ("sdst", 8, 7), ("clamp", 15, 1), ("op", 16, 10),
         ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9), ("omod", 59, 2), ("neg", 61, 3)),
    _enc("VOP3P", 8, 23, 0b110100111, ("vdst", 0, 8), ("neg_hi", 8, 3), ("op_sel", 11, 3), ("op_sel_hi2", 14, 1),
         ("clamp", 15, 1), ("op", 16, 7), ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9),
         ("op_sel_hi", 59, 2), ("neg", 61, 3)),
    _enc("VOP3PMAI", 8, 23, 0b110100111, ("vdst", 0, 8), ("cbsz", 8, 3), ("abid", 11, 4), ("acc_cd", 15, 1),
         ("op", 16, 7), ("src0", 32, 9), ("src1", 41, 9), ("src2", 50, 9), ("acc", 59, 2), ("blgp", 61, 3)),
    _enc("DS", 8, 26, 0b110110, ("offset0", 0, 8), ("offset1", 8, 8), ("gds", 16, 1), ("op", 17, 8), ("acc", 25, 1),
         ("addr", 32, 8), ("data0", 40, 8), ("data1", 48, 8), ("vdst", 56, 8)),
    _enc("FLAT", 8, 26, 0b110111, ("offset", 0, 13), ("sve", 13, 1), ("seg", 14, 2), ("glc", 16, 1), ("slc", 17, 1),
         ("op", 18, 7), ("sc1", 25, 1), ("addr", 32, 8), ("data", 40, 8), ("saddr", 48, 7), ("acc", 55, 1),
         ("vdst", 56, 8)),
    _enc("MUBUF", 8, 26, 0b111000, ("offset", 0, 12), ("offen", 12, 1), ("idxen", 13, 1), ("glc", 14, 1),
         ("sc1", 15, 1), ("lds", 16, 1), ("slc", 17, 1), ("op", 18, 7), ("vaddr", 32, 8), ("vdata", 40, 8),
         ("srsrc", 48, 5), ("acc", 55, 1), ("soffset", 56, 8)),
    _enc("MTBUF", 8, 26, 0b111010, ("offset", 0, 12), ("offen", 12, 1), ("idxen", 13, 1), ("glc", 14, 1),
         ("op", 15, 4), ("format", 19, 7), ("vaddr", 32, 8), ("vdata", 40, 8), ("srsrc", 48, 5), ("sc1", 53, 1),
         ("slc", 54, 1), ("acc", 55, 1), ("soffset", 56, 8)),
]}
# VOP3P (9 fixed bits) before VOP3 (6), whose opcode space it is a part of.
_IDENTIFY_ORDER_GFX9 = ["SOP1", "SOPC", "SOPP", "SOPK", "SOP2", "VOP1", "VOPC", "VOP2", "VOP3P", "VOP3", "DS", "FLAT",
                        "MUBUF", "MTBUF", "SMEM"]
# SDWA follows a VOP1/VOP2/VOPC word whose src0 is 249 (gfx9); its VOPC form (SDWAB) has sdst where the
# destination selects are.
SDWA = _enc("SDWA", 4, 32, 0, ("src0", 0, 8), ("dst_sel", 8, 3), ("dst_unused", 11, 2), ("clamp", 13, 1),
            ("omod", 14, 2), ("src0_sel", 16, 3), ("src0_sext", 19, 1), ("src0_neg", 20, 1), ("src0_abs", 21, 1),
            ("s0", 23, 1), ("src1_sel", 24, 3), ("src1_sext", 27, 1), ("src1_neg", 28, 1), ("src1_abs", 29, 1),
            ("s1", 31, 1))
SDWAB = _enc("SDWAB", 4, 32, 0, ("src0", 0, 8), ("sdst", 8, 7), ("sd", 15, 1), ("src0_sel", 16, 3),
             ("src0_sext", 19, 1), ("src0_neg", 20, 1), ("src0_abs", 21, 1), ("s0", 23, 1), ("src1_sel", 24, 3),
             ("src1_sext", 27, 1), ("src1_neg", 28, 1), ("src1_abs", 29, 1), ("s1", 31, 1))
SRC_SDWA = 249

# family -> (encoding name -> layout, identification order)
ENCODING_SETS: dict[str, tuple[dict[str, Encoding], tuple[str, ...]]] = {
    "gfx11": (ENCODINGS, tuple(_IDENTIFY_ORDER)),
    "gfx12": (GFX12_ENCODINGS, tuple(_IDENTIFY_ORDER_GFX12)),
    "gfx9": (GFX9_ENCODINGS, tuple(_IDENTIFY_ORDER_GFX9)),
}


def identify(dword0: int, family: str = "gfx11") -> str | None:
    """Name of the encoding a first dword belongs to, or None when no encoding of the family matches."""
    layouts, order = ENCODING_SETS[family]
    for name in order:
        e = layouts[name]
        if (dword0 >> e.fixed_lo) == e.fixed_value:
            return name
    return None
