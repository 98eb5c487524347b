"""Generate simgpu/isa/data/valu.json, the vector-ALU tables of the codec (with --arch, another architecture's
delta of it), by probing llvm-mc.

For every opcode of VOP1, VOP2, VOPC, VOP3 (incl. VOP3SD), VOP3P, VOPD and VINTERP a probe with
distinctive register numbers (vdst 8, src0 40, src1 52, src2 68, sdst 20) is disassembled; the printed
text gives the mnemonic, the operand order, which field each operand comes from and its register width.
Single modifier bits are then set one at a time to learn how each prints (a `-`/`|..|` on a source, a
position in an `op_sel:[...]`-style array, `clamp`, an output modifier, a share of a valued modifier such as
gfx12's `byte_sel:N`). Each 9-bit source is probed with
inline constants and literals; sources that print alike share an operand class whose full
constant/literal spelling is recorded once. DPP16/DPP8 forms are probed for their mnemonics. Everything
is probed twice: in llvm-mc's default mode and with -mattr=+real-true16 (True16 syntax and encodings);
the second sweep is stored as its differences from the first ("ops16", "no16", "vopd16"). Another
architecture's sweep continues the base table's operand classes and notes, so that what it shares with the base
is stored once.

    python -m tools.isatab_valu [--arch gfx1201]     # writes simgpu/isa/data/[<arch>/]valu.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor

from simgpu.isa.arch import get_arch
from simgpu.isa.encodings import DPP8, DPP16, SDWA, SDWAB, SRC_SDWA
from simgpu.isa.valu import literal_spelling
from tools import isatab, oracle

# Distinctive register numbers of the probes: a printed register names the field it came from.
VDST, SDST, SRC = 8, 20, {"src0": 40, "src1": 52, "src2": 68}
NUM_FIELD = {VDST: "vdst", SDST: "sdst", 40: "src0", 52: "src1", 68: "src2"}
KLIT = 0x11223344  # the literal of probes that need one (fmamk/fmaak K)
INLINE_CODES = list(range(128, 209)) + list(range(240, 249))
# Every non-register source code but the literal: inline constants, reserved codes, special registers.
CONST_CODES = INLINE_CODES + [c for c in range(209, 255) if not 240 <= c <= 248]
LITERALS = [0x12345678, 0x00003C00, 0x3F800000, 0xFFFFFFF0, 0x40, 0x3E22F983, 0x3118, 0xFFFF, 0x80000000,
            0x3FF00000, 0xC0000000, 0x00010000, 0xBF800000]
E32 = ("VOP1", "VOP2", "VOPC")
SRC_FIELDS = {"VOP1": ["src0"], "VOP2": ["src0", "vsrc1"], "VOPC": ["src0", "vsrc1"]}

_REG = re.compile(r"^(v|s|ttmp|a)(?:(\d+)|\[(\d+):(\d+)\])(\.[lh])?$")
_NOTE = re.compile(r"/\*(.*?)\*/")  # llvm's note after a register outside the operand's class
_MOD = re.compile(r"^(-)?(neg\()?(-)?(\|)?(.*?)\|?\)?$")


# ---------------------------------------------------------------- llvm-mc access

def mc(words: list[bytes], notes: bool = False) -> list[str | None]:
    """llvm-mc's text for each probe (re-encoding need not match), None if it is not one valid instruction.
    Texts with an llvm comment (/*Invalid register...*/) count as invalid unless `notes`. Batches run in
    parallel llvm-mc processes."""
    return [r[0] if r is not None else None for r in mc_encoded(words, notes)]


def mc_encoded(words: list[bytes], notes: bool = False) -> list[tuple[str, bytes] | None]:
    """Like mc(), with llvm-mc's re-encoding of each probe: (text, bytes) or None."""
    chunks = [words[base:base + 0x4000] for base in range(0, len(words), 0x4000)]
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return [t for part in pool.map(lambda c: _mc_batch(c, notes), chunks) for t in part]


def _mc_batch(words: list[bytes], notes: bool = False) -> list[tuple[str, bytes] | None]:
    # A shorter re-encoding is a literal llvm-mc turned into an inline constant; a longer one took sentinel bytes.
    return [g if g is not None and len(g[1]) <= len(w) and (notes or "/*" not in g[0]) else None
            for g, w in zip(oracle.probe_outputs(words), words, strict=True)]


def word(enc: str, vals: dict[str, int], ext: list[int] = ()) -> bytes:
    """Pack a probe: base word of `enc` plus extension dwords (DPP control, literal)."""
    e = isatab.layouts()[enc]
    return e.pack(vals).to_bytes(e.size, "little") + b"".join(x.to_bytes(4, "little") for x in ext)


# ---------------------------------------------------------------- text parsing

def split_top(s: str, sep: str) -> list[str]:
    """Split at `sep` outside brackets/parentheses."""
    out, cur, depth, i = [], "", 0, 0
    while i < len(s):
        ch = s[i]
        depth += ch in "[(" and 1 or 0
        depth -= ch in "])" and 1 or 0
        if depth == 0 and s.startswith(sep, i):
            out.append(cur)
            cur, i = "", i + len(sep)
            continue
        cur += ch
        i += 1
    return out + [cur]


def parse(text: str) -> tuple[str, list[str], list[str]]:
    """(mnemonic, operand texts, trailing modifier tokens) of one instruction's text."""
    mnem, _, rest = text.partition(" ")
    if not rest:
        return mnem, [], []
    ops = split_top(rest, ", ")
    tail = split_top(ops[-1], " ")
    ops[-1] = tail[0]
    return mnem, ops, tail[1:]


def strip_mods(tok: str) -> tuple[str, set[str]]:
    """Core operand text and its modifiers ('neg', 'abs')."""
    mods = set()
    for name in ("neg", "sext"):
        if tok.startswith(name + "(") and tok.endswith(")"):
            return tok[len(name) + 1:-1], {name}
    if tok.startswith("-") and (tok[1:2] == "|" or _REG.match(tok[1:]) or tok[1:].startswith("src_")
                                or tok[1:] in ("vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "m0", "null", "vcc",
                                               "exec")):
        mods.add("neg")
        tok = tok[1:]
    if tok.startswith("|") and tok.endswith("|"):
        mods.add("abs")
        tok = tok[1:-1]
    return tok, mods


def reg_of(tok: str) -> tuple[str, int, int] | None:
    m = _REG.match(tok)
    if not m:
        return None
    if m.group(5):  # a 16-bit half (true16 syntax): width 0
        return m.group(1), int(m.group(2)), 0
    if m.group(2) is not None:
        return m.group(1), int(m.group(2)), 1
    return m.group(1), int(m.group(3)), int(m.group(4)) - int(m.group(3)) + 1


# ---------------------------------------------------------------- templates

def template(ops: list[str], numfield: dict[int, str], sfields: set[str]) -> list | None:
    """Operand specs [field, kind, count] from a probe's printed operands; None if one is unexplained."""
    spec = []
    for tok in ops:
        core, _ = strip_mods(tok)
        r = reg_of(core)
        if core == f"0x{KLIT:x}":
            spec.append(["K", "lit", 1])
        elif r and r[1] in numfield:
            f = numfield[r[1]]
            kind = "src" if f in sfields else ("s" if r[0] == "s" else "v")
            if r[0] == "a":  # gfx9's AGPRs: a register field (a) or a source whose VGPR codes are AGPRs (asrc)
                kind = "asrc" if f in sfields else "a"
            spec.append([f, kind, r[2]])
        elif r is None and re.fullmatch(r"[a-z_]+", core):
            spec.append([core, "imp", 1])
        else:
            return None
    return spec


def e32_variants(enc: str, op: int) -> list[tuple[str, dict, list[int]]]:
    """Probe variants of a VOP1/VOP2/VOPC opcode: src0 VGPR or SGPR, with or without a literal K."""
    out = []
    for s0, lit in itertools.product((256 + 40, 40), (None, KLIT)):
        out.append((enc, {"op": op, "src0": s0, "vsrc1": 52, "vdst": VDST}, [lit] if lit is not None else []))
    return out + [(enc, {"op": op}, [])]  # operand-less opcodes (v_nop) need every field zero


E32_NUMS = {VDST: "vdst", 40: "src0", 52: "vsrc1"}
VOP3_SRCS = ("src0", "src1", "src2")


def vop3_variants(enc: str, op: int) -> list[tuple[str, dict, list[int]]]:
    """Probe variants of a 64-bit opcode: every VGPR/SGPR choice of the sources, with/without sdst."""
    out = []
    layouts = [enc, "VOP3SD"] if enc == "VOP3" else [enc]
    if enc == "VOP3P" and "VOP3PMAI" in isatab.layouts():
        layouts.append("VOP3PMAI")
    for layout in layouts:
        # Unused source fields must be zero, so each source is a VGPR, an SGPR or absent (code 0).
        for kinds in sorted(itertools.product((256, 0, None), repeat=3), key=lambda k: k.count(None)):
            vals = {"op": op, "vdst": VDST} | {f: 0 if k is None else k + SRC[f]
                                               for f, k in zip(VOP3_SRCS, kinds, strict=True)}
            if layout == "VOP3SD":
                vals["sdst"] = SDST
            if layout == "VOP3P":
                vals |= {"op_sel_hi": 3, "op_sel_hi2": 1}
            out.append((layout, vals, []))
    return out


def base_probes(enc: str, ops: list[int]) -> dict[int, tuple]:
    """op -> (text, spec, layout, vals, ext) of the first decodable probe variant of each opcode."""
    e32 = enc in E32
    variants = [(op, v) for op in ops for v in (e32_variants(enc, op) if e32 else vop3_variants(enc, op))]
    # Opcodes whose word another encoding claims (VOP2 62/63 are VOPC/VOP1) are not this encoding's.
    variants = [(op, v) for op, v in variants
                if isatab.identify(int.from_bytes(word(v[0], v[1])[:4], "little")) == enc]
    found: dict[int, tuple] = {}
    mai = mai_opcodes(enc, ops)
    variants = [(op, v) for op, v in variants if (v[0] == "VOP3PMAI") == (op in mai)]
    for (op, (lay, vals, ext)), r in zip(variants, mc_encoded([word(*v) for _, v in variants]), strict=True):
        if r is None:
            continue
        t = r[0]
        _, ops_, _ = parse(t)
        spec = template(ops_, E32_NUMS if e32 else NUM_FIELD, {"src0"} if e32 else set(VOP3_SRCS))
        if spec is None:
            continue
        has_sdst = any(s[0] == "sdst" for s in spec)
        if lay == "VOP3SD" and not has_sdst:
            continue
        if op not in found or (has_sdst and found[op][2] != "VOP3SD"):
            found[op] = (t, spec, lay, vals, ext, fixed_fields(lay, word(lay, vals, ext), r[1], spec))
    return found


def mai_opcodes(enc: str, ops: list[int]) -> set[int]:
    """gfx9's VOP3P opcodes of the VOP3PMAI layout (MFMA, SMFMAC): those whose bit 15 (VOP3P's clamp, their
    acc_cd) makes the destination an AGPR."""
    if enc != "VOP3P" or "VOP3PMAI" not in isatab.layouts():
        return set()
    vals = {"vdst": VDST, "src0": 256 + 40, "src1": 256 + 52, "src2": 256 + 68}
    texts = mc([word("VOP3PMAI", vals | {"op": op, "acc_cd": 1}) for op in ops])
    return {op for op, t in zip(ops, texts, strict=True) if t is not None and parse(t)[1][:1] and
            parse(t)[1][0].startswith("a")}


def fixed_fields(layout: str, probe: bytes, again: bytes, spec: list) -> dict[str, int]:
    """Fields that are no operand but that llvm-mc encodes with a fixed value (v_cmpx_*_e64 writes exec:
    vdst is 126 whatever the probe had)."""
    e = isatab.layouts()[layout]
    a, b = (e.unpack(int.from_bytes(w[:e.size], "little")) for w in (probe, again))
    used = {item[0] for item in spec}
    return {k: b[k] for k in a if a[k] != b[k] and k not in used}


# ---------------------------------------------------------------- modifier bits

def mod_bits(layout: str) -> list[tuple[str, int]]:
    """The single modifier bits (field, value) to probe in an encoding layout."""
    if layout == "VOP3":
        return [("neg", 1), ("neg", 2), ("neg", 4), ("abs", 1), ("abs", 2), ("abs", 4), ("op_sel", 1),
                ("op_sel", 2), ("op_sel", 4), ("op_sel", 8), ("clamp", 1), ("omod", 1)]
    if layout == "VOP3SD":
        return [("neg", 1), ("neg", 2), ("neg", 4), ("clamp", 1), ("omod", 1)]
    if layout == "VOP3P":
        return [("neg", 1), ("neg", 2), ("neg", 4), ("neg_hi", 1), ("neg_hi", 2), ("neg_hi", 4), ("op_sel", 1),
                ("op_sel", 2), ("op_sel", 4), ("op_sel_hi", 1), ("op_sel_hi", 2), ("op_sel_hi2", 1), ("clamp", 1)]
    if layout == "VOP3PMAI":
        return [("cbsz", 1), ("cbsz", 2), ("cbsz", 4), ("abid", 1), ("abid", 2), ("abid", 4), ("abid", 8),
                ("acc_cd", 1), ("acc", 1), ("acc", 2), ("blgp", 1), ("blgp", 2), ("blgp", 4)]
    if layout == "VINTERP":
        return [("neg", 1), ("neg", 2), ("neg", 4), ("op_sel", 1), ("op_sel", 2), ("op_sel", 4), ("op_sel", 8),
                ("clamp", 1)]
    return [("src0_neg", 1), ("src0_abs", 1), ("src1_neg", 1), ("src1_abs", 1)]  # DPP16


def arrays(mods: list[str]) -> dict[str, list[int]]:
    out = {}
    for m in mods:
        name, _, val = m.partition(":")
        if val.startswith("["):
            out[name] = [int(x) for x in val[1:-1].split(",")]
    return out


def effect(base: str, probe: str | None, spec: list) -> list | None:
    """How one set modifier bit shows in the text: ['pre', 'neg'|'abs', field], ['arr', name, pos],
    ['flag', text], or None when it does not show (or does not decode)."""
    if probe is None or probe == base:
        return None
    _, bops, bmods = parse(base)
    _, pops, pmods = parse(probe)
    if len(bops) != len(pops):
        return None
    moved = [s[0] for s, b, p in zip(spec, bops, pops, strict=True) if b != p]
    if moved and all(b.replace("v", "a", 1) == p for b, p in zip(bops, pops, strict=True) if b != p):
        return ["acc", moved]  # gfx9's acc_cd/acc bits: these operands are AGPRs
    for s, b, p in zip(spec, bops, pops, strict=True):
        if b != p:
            _, bm = strip_mods(b)
            _, pm = strip_mods(p)
            new = pm - bm
            return ["pre", new.pop(), s[0]] if len(new) == 1 else None
    ba, pa = arrays(bmods), arrays(pmods)
    for name, vals in pa.items():
        old = [1] * len(vals) if name == "op_sel_hi" else ba.get(name, [0] * len(vals))
        diff = [i for i, (a, b) in enumerate(zip(old, vals, strict=True)) if a != b]
        if len(diff) == 1:
            return ["arr", name, diff[0], len(vals)]
    for name, vals in ba.items():
        if name not in pa:  # the bit made the array its default (op_sel_hi all ones)
            diff = [i for i, v in enumerate(vals) if v == 0]
            if len(diff) == 1:
                return ["arr", name, diff[0], len(vals)]
    extra = [m for m in pmods if m not in bmods and ":[" not in m]
    if len(extra) != 1:
        return None
    name, _, val = extra[0].partition(":")
    if val.isdigit() and name not in ("mul", "div"):  # a share of a valued modifier (byte_sel:2)
        return ["val", name, int(val)]
    return ["flag", extra[0]]


def mod_probes(layout: str, vals: dict, ext: list[int]) -> list[tuple[str, bytes]]:
    """(key, probe) for each single modifier bit of a base probe."""
    out = []
    for f, v in mod_bits(layout):
        if layout == "DPP16":
            ctrl = dpp16_vals(vals.get("_ctrl", 0xE4))
            out.append((f"{f}:{v}", word(vals["_enc"], strip(vals), [DPP16.pack(ctrl | {f: v})])))
        elif f.startswith("op_sel_hi"):  # the base probe has every op_sel_hi bit set: clear one
            out.append((f"{f}:{v}", word(layout, vals | {f: vals.get(f, 0) & ~v}, ext)))
        else:
            out.append((f"{f}:{v}", word(layout, vals | {f: vals.get(f, 0) | v}, ext)))
    return out


def strip(vals: dict) -> dict:
    return {k: v for k, v in vals.items() if not k.startswith("_")}


def dpp16_vals(ctrl: int = 0xE4) -> dict:
    return {"src0": 40, "dpp_ctrl": ctrl, "row_mask": 0xF, "bank_mask": 0xF}


# gfx90a on: 64-bit DPP operands take row_newbcast only, so a second DPP16 probe uses row_newbcast:1
DPP16_CTRLS = (0xE4, 0x151)


DPP8_IDENTITY = sum(i << (3 * i) for i in range(8))


def learn_mods(jobs: list[tuple[dict, str, list, list[tuple[str, bytes]]]], slot: str = "mods") -> None:
    """Fill entry[slot] = {"field:value": effect} for each (entry, base text, spec, probes) job."""
    words = [w for job in jobs for _, w in job[3]]
    texts = iter(mc(words))
    for entry, base, spec, probes in jobs:
        for key, _ in probes:
            eff = effect(base, next(texts), spec)
            if eff is not None:
                entry.setdefault(slot, {})[key] = eff


# ---------------------------------------------------------------- operand classes

def operand_at(text: str | None, pos: int, side: str | None = None) -> str | None:
    """The printed operand at position `pos` (of VOPD half `side`), modifiers stripped (None if not there)."""
    if text is None:
        return None
    if side is not None:
        halves = text.split(" :: ")
        text = halves[side == "y"] if len(halves) == 2 else None
        if text is None:
            return None
    _, ops, _ = parse(text)
    return strip_mods(ops[pos])[0] if pos < len(ops) else None


def learn_classes(jobs: list[tuple[list, int, object]], out: dict | None = None, names: dict | None = None) -> dict:
    """Give each job's spec item a class name (appended); return the class tables.

    A job is (spec item, its printed position, maker(code, literal) -> probe bytes). Every item is probed
    with every inline constant and every literal value that prints as a constant for some operand type
    (VALUE_PROBES); items whose spellings all agree share a class. `out`/`names` continue the tables of
    an earlier call (the True16 sweep shares the default sweep's class names)."""
    full = FULL_PROBES
    # Register-class notes (learned by learn_notes) are dropped here: the class records the bare spelling.
    texts = [_NOTE.sub("", t) if t is not None else None
             for t in mc([make(c, lit) for _, _, make in jobs for c, lit in full], notes=True)]
    out = {} if out is None else out
    names = {} if names is None else names
    for j, (item, pos, make) in enumerate(jobs):
        got = [operand_at(t, pos, getattr(make, "side", None)) for t in texts[j * len(full):(j + 1) * len(full)]]
        table = class_table(got)
        name = names.setdefault(json.dumps(table, sort_keys=True), f"c{len(names)}")
        out[name] = table
        item.append(name)
    return out


def _f16(x: float) -> int:
    import struct
    return int.from_bytes(struct.pack("<e", x), "little")


def _f32(x: float) -> int:
    import struct
    return int.from_bytes(struct.pack("<f", x), "little")


def _bf16(x: float) -> int:
    return _f32(x) >> 16


def _f64_hi(x: float) -> int:
    import struct
    return int.from_bytes(struct.pack("<d", x), "little") >> 32


_FLOATS = [0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0]
_INV_2PI = 0.15915494309189532
# Literal values that may print as an inline constant for some operand type: 32-bit and 16-bit integers
# -16..64, the f16/bf16/f32 bit patterns of the float constants and 1/(2*pi), f64 high halves.
VALUE_PROBES = sorted({v & 0xFFFFFFFF for v in range(-16, 65)} | {v & 0xFFFF for v in range(-16, 0)}
                      | {f(x) for f in (_f16, _bf16, _f32, _f64_hi) for x in [*_FLOATS, _INV_2PI]}
                      | {0x3E22F983, 0x3FC45F30})


# The 16-bit values again with a high half set: whether an operand folds on its low 16 bits only.
HIGH_PROBES = [0xABCD0000 | v for v in VALUE_PROBES if v < 0x10000]
FULL_PROBES = ([(c, None) for c in CONST_CODES] + [(255, v) for v in LITERALS] + [(255, v) for v in VALUE_PROBES]
               + [(255, v) for v in HIGH_PROBES])


def class_table(got: list[str | None]) -> dict:
    """Class record from the texts of FULL_PROBES: non-register code -> text ("inline"); the literal style
    ("lit": hex of all 32 bits or of the low 16, None if no literal is allowed); the values printed as a
    constant; and "fold16" when only the low 16 bits are compared with the constants. Checked against
    every probe."""
    n, m, k = len(CONST_CODES), len(LITERALS), len(VALUE_PROBES)
    inl = {str(c): t for c, t in zip(CONST_CODES, got[:n], strict=True) if t is not None}
    lit = dict(zip(LITERALS, got[n:n + m], strict=True))
    if lit[0x12345678] is None and lit[0x3C00] is None:
        style = None  # no literal allowed
    elif lit[0x12345678] == "0x5678" or lit[0x3C00] == "0x3c00" and lit[0x12345678] is None:
        style = "lo16"
    else:
        style = "hex32"
    high = got[n + m + k:]
    fold16 = any(t is not None and not t.startswith("0x") for t in high)
    val = {}
    for v, t in zip(VALUE_PROBES, got[n + m:n + m + k], strict=True):
        if t is not None and not t.startswith("0x") and (v < 0x10000 or not fold16):
            val[f"{v:x}"] = t
    rec = {"inline": inl, "lit": style, "value": val} | ({"fold16": 1} if fold16 else {})
    if style is not None:
        for (_, v), t in zip(FULL_PROBES[n:], got[n:], strict=True):
            if t is not None and literal_spelling(rec, v) != t:
                raise SystemExit(f"literal 0x{v:x} prints as {t!r}, the class record predicts "
                                 f"{literal_spelling(rec, v)!r}: {rec}")
    return rec


# ---------------------------------------------------------------- register-class notes

# Source codes probed for notes: all, but src0's DPP markers (233, 234, 250), which need a DPP dword (and MFMA's A
# and B constants, on which llvm-mc 19 crashes).
NOTE_SRC_CODES = list(range(512))
MAI_AB = ("src0", "src1")
NOT_AN_INSTRUCTION = b"\xff\xff\xff\xff"  # no gfx9 encoding has these fixed bits
NOTE_LITERAL = 0x12345678


def note_jobs(enc: str, entries: dict) -> list[tuple[dict, str, object, list[int]]]:
    """(entry, key, maker(code) -> probe, codes) for each register operand of each opcode: the base
    form's fields by name, the DPP forms' source VGPR (an index in the DPP dword) as 'dpp16:src0'/'dpp8:src0'."""
    jobs = []
    for entry in entries.values():
        lay, vals, ext = entry["_probe"]
        for item in entry["ops"]:
            name, kind = item[0], item[1]
            if kind not in ("v", "s", "src") or name not in isatab.layouts()[lay].field_names:
                continue
            width = isatab.layouts()[lay].field(name).width
            codes = range(256) if kind == "v" else [c for c in NOTE_SRC_CODES if c < 1 << width and not (
                name == "src0" and c in (233, 234, 250)) and not (lay == "VOP3PMAI" and name in MAI_AB and
                                                                   128 <= c < 256)]
            jobs.append((entry, name, _field_maker(lay, vals, ext, name, kind), list(codes)))
        for kind, v in entry.get("_dpp", {}).items():
            if not any(item[0] == "src0" for item in entry["ops"]):
                continue
            jobs.append((entry, f"{kind}:src0", _dpp_src_maker(lay, v, kind), list(range(256))))
    return jobs


def _field_maker(layout: str, vals: dict, ext: list[int], name: str, kind: str):
    """Probe maker for the notes of one field; a source's code 255 gets a literal dword."""
    lit = [NOTE_LITERAL] if kind != "v" and not ext else ext
    return lambda code: word(layout, vals | {name: code}, lit if code == 255 else ext)


def _dpp_src_maker(layout: str, vals: dict, kind: str):
    def make(index: int) -> bytes:
        if kind == "dpp16":
            ctrl = dpp16_vals(vals.get("_ctrl", 0xE4))
            return word(layout, vals | {"src0": 250}, [DPP16.pack(ctrl | {"src0": index})])
        return word(layout, vals | {"src0": 233}, [DPP8.pack({"src0": index, "lane_sel": DPP8_IDENTITY})])
    return make


def learn_notes(jobs: list[tuple[dict, str, object, list[int]]], out: list[dict] | None = None) -> list[dict]:
    """Which register codes llvm prints with a note (/*Invalid register, operand has 'X' register class*/):
    entry["bad"][key] = indices into the returned list of {"note": text, "codes": [[first, last], ...]}
    (`out` continues an earlier call's list)."""
    texts = iter(mc([make(c) for _, _, make, codes in jobs for c in codes], notes=True))
    out = [] if out is None else out
    notes: dict[str, int] = {json.dumps(rec, sort_keys=True): i for i, rec in enumerate(out)}
    for entry, key, _, codes in jobs:
        by_note: dict[str, list[int]] = {}
        for c in codes:
            t = next(texts)
            m = _NOTE.search(t) if t is not None else None
            if m:
                by_note.setdefault(m.group(1), []).append(c)
        for note, bad in sorted(by_note.items()):
            rec = {"note": note, "codes": _ranges(bad)}
            idx = notes.setdefault(json.dumps(rec, sort_keys=True), len(out))
            if idx == len(out):
                out.append(rec)
            entry.setdefault("bad", {}).setdefault(key, []).append(idx)
    return out


def _ranges(codes: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for c in sorted(codes):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


# ---------------------------------------------------------------- the sweep

def vop_entries(enc: str) -> tuple[dict, list, list]:
    """Entries of a VOP1/VOP2/VOPC/VOP3/VOP3P/VINTERP opcode space, with modifier and class jobs."""
    nops = 1 << isatab.layouts()[enc].field("op").width
    found = base_probes(enc, list(range(nops)))
    entries, modjobs, classjobs = {}, [], []
    for op, (text, spec, lay, vals, ext, fixed) in sorted(found.items()):
        entry = {"m": parse(text)[0], "ops": spec} | ({"fixed": fixed} if fixed else {})
        if lay != enc:
            entry["enc"] = lay
        entries[op] = entry
        if enc not in E32:
            modjobs.append((entry, text, spec, mod_probes(lay, vals, ext)))
        if lay == "VOP3P" and "op_sel_hi:" not in text:
            entry["hidef"] = 1  # op_sel_hi is printed only when not all ones
        for pos, item in enumerate(spec):
            if lay == "VOP3PMAI" and item[0] in MAI_AB:  # llvm-mc 19 crashes re-encoding a constant A or B:
                classjobs.append((item, pos, lambda code, lit: NOT_AN_INSTRUCTION))  # such a class has none
            elif item[1] in ("src", "lit"):
                classjobs.append((item, pos, maker(lay, vals, ext, item[0])))
        entry["_probe"] = (lay, vals, ext)
    return entries, modjobs, classjobs


def maker(layout: str, vals: dict, ext: list[int], fieldname: str):
    """A function (code, literal) -> probe bytes with the source `fieldname` replaced."""
    def make(code: int, lit: int | None) -> bytes:
        if fieldname == "K":
            return word(layout, vals, [lit] if lit is not None else [])
        return word(layout, vals | {fieldname: code}, [lit] if lit is not None else ext)
    return make


def dpp_forms(enc: str, entries: dict) -> list:
    """Probe DPP16/DPP8 forms of each opcode; record their mnemonics; return DPP16 modifier jobs."""
    words, owners = [], []
    for op, entry in entries.items():
        lay, vals, ext = entry["_probe"]
        if ext:
            continue
        variants = [vals]
        if enc not in E32:
            variants.append(vals | {"src1": 256 + 52, "src2": 256 + 68})
        for v in variants:
            for ctrl in DPP16_CTRLS:
                words.append(word(lay, v | {"src0": 250}, [DPP16.pack(dpp16_vals(ctrl))]))
                owners.append((op, "dpp16", v | {"_ctrl": ctrl}))
            words.append(word(lay, v | {"src0": 233}, [DPP8.pack({"src0": 40, "lane_sel": DPP8_IDENTITY})]))
            owners.append((op, "dpp8", v))
    jobs = []
    for (op, kind, v), t in zip(owners, mc(words), strict=True):
        entry = entries[op]
        if t is None or kind in entry:
            continue
        entry[kind] = parse(t)[0]
        entry.setdefault("_dpp", {})[kind] = v
        if kind == "dpp16" and enc in E32:
            jobs.append((entry, t, entry["ops"], mod_probes("DPP16", v | {"src0": 250, "_enc": enc}, [])))
        elif kind == "dpp8" and enc not in E32:  # VOP3 DPP allows modifiers the plain form lacks (sext)
            dpp8 = [DPP8.pack({"src0": 40, "lane_sel": DPP8_IDENTITY})]
            jobs.append((entry, t, entry["ops"], mod_probes(entry["_probe"][0], v | {"src0": 233}, dpp8)))
    return jobs


SDWA_BITS = [("src0_neg", 1), ("src0_abs", 1), ("src0_sext", 1), ("src1_neg", 1), ("src1_abs", 1), ("src1_sext", 1),
             ("clamp", 1), ("omod", 1)]
SDWA_SELS = ("dst_sel", "dst_unused", "src0_sel", "src1_sel")


def sdwa_forms(enc: str, entries: dict) -> list:
    """gfx9: probe the SDWA form of each e32 opcode (src0 249, every select DWORD (VOP1's unused src1_sel 0),
    dst_unused UNUSED_PRESERVE, VOPC writing VCC); record its mnemonic ("sdwa") and the selects it prints
    ("sdwasel"); return the jobs that learn its modifier bits ("sdwamods")."""
    layout = SDWAB if enc == "VOPC" else SDWA
    base = {"dst_sel": 6, "dst_unused": 2, "src0_sel": 6, "src1_sel": 0 if enc == "VOP1" else 6}
    words, owners = [], []
    for op, entry in entries.items():
        lay, vals, ext = entry["_probe"]
        if ext or "src0" not in vals:
            continue
        sdwa = base | {"src0": vals["src0"] & 0xFF, "s0": int(vals["src0"] < 256)}
        words.append(word(lay, vals | {"src0": SRC_SDWA}, [layout.pack(sdwa)]))
        owners.append((op, vals, sdwa))
    jobs = []
    for (op, vals, sdwa), t in zip(owners, mc(words), strict=True):
        if t is None:
            continue
        entry = entries[op]
        entry["sdwa"] = parse(t)[0]
        entry["sdwasel"] = [m.split(":")[0] for m in parse(t)[2] if m.split(":")[0] in SDWA_SELS]
        probes = [(f"{f}:{v}", word(enc, vals | {"src0": SRC_SDWA}, [layout.pack(sdwa | {f: v})]))
                  for f, v in SDWA_BITS if f in layout.field_names]
        jobs.append((entry, t, entry["ops"], probes))
    return jobs


def vopd_entries() -> tuple[dict, dict, list]:
    """VOPD X and Y halves: templates learned from every (opx, opy) pair llvm-mc decodes."""
    words, owners = [], []
    for opx, opy, lit, v1x, v1y in itertools.product(range(16), range(32), (None, KLIT), (52, 0), (110, 0)):
        vals = {"opx": opx, "opy": opy, "src0x": 256 + 40, "vsrc1x": v1x, "vdstx": VDST, "src0y": 256 + 100,
                "vsrc1y": v1y, "vdsty": 60}
        words.append(word("VOPD", vals, [lit] if lit is not None else []))
        owners.append((opx, opy, vals, lit))
    halves: dict[str, dict] = {"x": {}, "y": {}}
    nums = {"x": {VDST: "vdstx", 40: "src0x", 52: "vsrc1x"}, "y": {121: "vdsty", 100: "src0y", 110: "vsrc1y"}}
    classjobs = []
    for (opx, opy, vals, lit), t in zip(owners, mc(words), strict=True):
        if t is None:
            continue
        for side, op, part in (("x", opx, t.split(" :: ")[0]), ("y", opy, t.split(" :: ")[1])):
            if op in halves[side]:
                continue
            _, ops, _ = parse(part)
            spec = template(ops, nums[side], {"src0x", "src0y"})
            if spec is None:
                continue
            halves[side][op] = {"m": parse(part)[0], "ops": spec}
            for pos, item in enumerate(spec):
                if item[1] in ("src", "lit"):
                    classjobs.append((item, pos, vopd_maker(vals, lit, item[0], side)))
    return halves["x"], halves["y"], classjobs


def vopd_maker(vals: dict, lit: int | None, fieldname: str, side: str):
    def make(code: int, lv: int | None) -> bytes:
        if fieldname == "K":  # the literal itself: a code probe has none (as for VOP2's K)
            return word("VOPD", vals, [lv] if lv is not None else [])
        return word("VOPD", vals | {fieldname: code},
                    [lv] if lv is not None else ([lit] if lit is not None and code != 255 else []))
    # operand_at() must look at the right half of the text
    def make_side(code: int, lv: int | None) -> bytes:
        return make(code, lv)
    make_side.side = side
    return make_side


def sweep(classes: dict, names: dict, notes: list[dict]) -> dict:
    """Probe every opcode space under llvm-mc's current features: {"ops": ..., "vopd": ...}, with class
    names and note indices added to `classes`/`names`/`notes`."""
    tables: dict = {"ops": {}}
    modjobs, classjobs, dppjobs, notejobs, sdwajobs = [], [], [], [], []
    for enc in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VINTERP"):
        if enc not in isatab.layouts():
            continue
        entries, mj, cj = vop_entries(enc)
        modjobs += mj
        classjobs += cj
        if enc not in ("VINTERP",):
            dppjobs += dpp_forms(enc, entries)
        if enc in E32 and get_arch(isatab.arch_name()).family == "gfx9":
            sdwajobs += sdwa_forms(enc, entries)
        notejobs += note_jobs(enc, entries)
        tables["ops"][enc] = entries
        print(f"{enc}: {len(entries)} opcodes {oracle.MATTR}", file=sys.stderr)
    learn_mods(modjobs)
    learn_mods(dppjobs, "dppmods")
    learn_mods(sdwajobs, "sdwamods")
    x, y, cj = vopd_entries() if "VOPD" in isatab.layouts() else ({}, {}, [])
    tables["vopd"] = {"x": x, "y": y}
    print(f"VOPD: {len(x)} X, {len(y)} Y", file=sys.stderr)
    learn_classes(classjobs + cj, classes, names)
    learn_notes(notejobs, notes)
    for entries in tables["ops"].values():
        for e in entries.values():
            e.pop("_probe", None)
            e.pop("_dpp", None)
    return tables


def learn_dpp_ctrl(vop1: dict) -> dict[str, str]:
    """gfx9: the printed DPP16 control of every dpp_ctrl value llvm-mc decodes (v_mov_b32_dpp), whose names differ
    from gfx11's (wave_shl, row_bcast, row_newbcast; no row_share/row_xmask)."""
    op = next(op for op, e in vop1.items() if e["m"] == "v_mov_b32_e32")
    words = [word("VOP1", {"op": op, "vdst": VDST, "src0": 250}, [DPP16.pack(dpp16_vals() | {"dpp_ctrl": c})])
             for c in range(512)]
    out = {}
    for c, t in zip(range(512), mc(words), strict=True):
        tail = parse(t)[2] if t is not None else []
        if tail:
            out[str(c)] = tail[0]
    return out


def true16_differences(default: dict, t16: dict) -> dict:
    """What llvm-mc's +real-true16 mode decodes differently: "ops16" (enc -> op -> entry) for opcodes whose
    entry differs or that only that mode decodes, "no16" (enc -> [op]) for opcodes it does not decode,
    "vopd16" likewise for the dual halves."""
    out: dict = {"ops16": {}, "no16": {}, "vopd16": {}}
    for enc, entries in t16["ops"].items():
        base = default["ops"].get(enc, {})
        diff = {op: e for op, e in entries.items() if base.get(op) != e}
        gone = sorted(op for op in base if op not in entries)
        if diff:
            out["ops16"][enc] = diff
        if gone:
            out["no16"][enc] = gone
    for side in ("x", "y"):
        diff = {op: e for op, e in t16["vopd"][side].items() if default["vopd"][side].get(op) != e}
        if diff:
            out["vopd16"][side] = diff
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    isatab.arch_argument(ap)
    args = ap.parse_args()
    with isatab.target(args.arch):
        generate()


def generate() -> None:
    classes: dict = {}
    names: dict = {}
    notes: list[dict] = []
    if isatab.base_of() is not None:  # continue the base's class names and notes
        base = isatab.base_table("valu")
        classes = dict(base["classes"])
        names = {json.dumps(rec, sort_keys=True): name for name, rec in classes.items()}
        notes = list(base["notes"])
    tables = sweep(classes, names, notes)
    if "VOPD" in isatab.layouts():
        # The same probes under LLVM's True16 mode (real 16-bit registers: v_mov_b16_e64, vN.h halves in the
        # e32 encodings, ...): stored as differences from the default mode's tables. gfx9 has no such mode.
        with oracle.features("+real-true16"):
            t16 = sweep(classes, names, notes)
        tables |= true16_differences(tables, t16)
    else:
        tables["dpp_ctrl"] = learn_dpp_ctrl(tables["ops"]["VOP1"])
    tables["classes"] = classes
    tables["notes"] = notes
    n16 = sum(len(d) for d in tables.get("ops16", {}).values())
    print(f"{len(tables['classes'])} operand classes, {n16} True16 entries", file=sys.stderr)
    isatab.write_table("valu", tables)


if __name__ == "__main__":
    main()
