"""Generate simgpu/isa/data/valu.json, the vector-ALU tables of the gfx11 codec, by probing llvm-mc.

For every opcode of VOP1, VOP2, VOPC, VOP3 (incl. VOP3SD), VOP3P, VOPD and VINTERP a probe with
distinctive register numbers (vdst 8, src0 40, src1 52, src2 68, sdst 20) is disassembled; the printed
text gives the mnemonic, the operand order, which field each operand comes from and its register width.
Single modifier bits are then set one at a time to learn how each prints (a `-`/`|..|` on a source, a
position in an `op_sel:[...]`-style array, `clamp`, an output modifier). Each 9-bit source is probed with
inline constants and literals; sources that print alike share an operand class whose full
constant/literal spelling is recorded once. DPP16/DPP8 forms are probed for their mnemonics.

    python tools/isatab_valu.py            # writes simgpu/isa/data/valu.json
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import oracle  # noqa: E402

from simgpu.isa.encodings import DPP8, DPP16, ENCODINGS, identify  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "simgpu", "isa", "data", "valu.json")

# Distinctive register numbers of the probes: a printed register names the field it came from.
VDST, SDST, SRC = 8, 20, {"src0": 40, "src1": 52, "src2": 68}
NUM_FIELD = {VDST: "vdst", SDST: "sdst", 40: "src0", 52: "src1", 68: "src2"}
KLIT = 0x11223344  # the literal of probes that need one (fmamk/fmaak K)
INLINE_CODES = list(range(128, 209)) + list(range(240, 249))
LITERALS = [0x12345678, 0x00003C00, 0x3F800000, 0xFFFFFFF0, 0x40, 0x3E22F983, 0x3118, 0xFFFF, 0x80000000,
            0x3FF00000, 0xC0000000, 0x00010000, 0xBF800000]
E32 = ("VOP1", "VOP2", "VOPC")
SRC_FIELDS = {"VOP1": ["src0"], "VOP2": ["src0", "vsrc1"], "VOPC": ["src0", "vsrc1"]}

_REG = re.compile(r"^(v|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])(\.[lh])?$")
_MOD = re.compile(r"^(-)?(neg\()?(-)?(\|)?(.*?)\|?\)?$")


# ---------------------------------------------------------------- llvm-mc access

def mc(words: list[bytes]) -> list[str | None]:
    """llvm-mc's text for each probe (re-encoding need not match), None if it is not one valid instruction."""
    out: list[str | None] = []
    for base in range(0, len(words), 0x4000):
        out += _mc_batch(words[base:base + 0x4000])
    return out


def _mc_batch(words: list[bytes]) -> list[str | None]:
    lines = []
    for i, w in enumerate(words):
        lines.append(" ".join(f"0x{b:02x}" for b in w))
        lines.append(" ".join(f"0x{b:02x}" for b in oracle._sentinel(i) * 3))
    outl, diags = oracle._run_mc(["--disassemble"], "\n".join(lines) + "\n")
    groups: dict[int, list[tuple[str, bytes]]] = {}
    group: list[tuple[str, bytes]] = []
    nxt = 0
    parsed = [oracle._parse_encoded(line) for line in outl]
    for text, data in parsed:
        idx = oracle._sentinel_index(text, data)
        if idx is not None and idx == nxt:
            groups[idx], nxt, group = group, idx + 1, []
        elif idx is None or idx != nxt - 1:
            group.append((text, data))
    res: list[str | None] = []
    # A shorter re-encoding is a literal llvm-mc turned into an inline constant; a longer one took sentinel bytes.
    for i, w in enumerate(words):
        g = groups.get(i, [])
        ok = (2 * i + 1) not in diags and len(g) == 1 and len(g[0][1]) <= len(w) and "/*" not in g[0][0]
        res.append(g[0][0] if ok else None)
    return res


def word(enc: str, vals: dict[str, int], ext: list[int] = ()) -> bytes:
    """Pack a probe: base word of `enc` plus extension dwords (DPP control, literal)."""
    e = ENCODINGS[enc]
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
    for layout in layouts:
        # Unused source fields must be zero, so each source is a VGPR, an SGPR or absent (code 0).
        for kinds in sorted(itertools.product((256, 0, None), repeat=3), key=lambda k: k.count(None)):
            vals = {"op": op, "vdst": VDST} | {f: 0 if k is None else k + SRC[f]
                                               for f, k in zip(VOP3_SRCS, kinds, strict=True)}
            if layout == "VOP3SD":
                vals["sdst"] = SDST
            if enc == "VOP3P":
                vals |= {"op_sel_hi": 3, "op_sel_hi2": 1}
            out.append((layout, vals, []))
    return out


def base_probes(enc: str, ops: list[int]) -> dict[int, tuple]:
    """op -> (text, spec, layout, vals, ext) of the first decodable probe variant of each opcode."""
    e32 = enc in E32
    variants = [(op, v) for op in ops for v in (e32_variants(enc, op) if e32 else vop3_variants(enc, op))]
    # Opcodes whose word another encoding claims (VOP2 62/63 are VOPC/VOP1) are not this encoding's.
    variants = [(op, v) for op, v in variants
                if identify(int.from_bytes(word(v[0], v[1])[:4], "little")) == enc]
    texts = mc([word(lay, vals, ext) for _, (lay, vals, ext) in variants])
    found: dict[int, tuple] = {}
    for (op, (lay, vals, ext)), t in zip(variants, texts, strict=True):
        if t is None:
            continue
        _, ops_, _ = parse(t)
        spec = template(ops_, E32_NUMS if e32 else NUM_FIELD, {"src0"} if e32 else set(VOP3_SRCS))
        if spec is None:
            continue
        has_sdst = any(s[0] == "sdst" for s in spec)
        if lay == "VOP3SD" and not has_sdst:
            continue
        if op not in found or (has_sdst and found[op][2] != "VOP3SD"):
            found[op] = (t, spec, lay, vals, ext)
    return found


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
    return ["flag", extra[0]] if len(extra) == 1 else None


def mod_probes(layout: str, vals: dict, ext: list[int]) -> list[tuple[str, bytes]]:
    """(key, probe) for each single modifier bit of a base probe."""
    out = []
    for f, v in mod_bits(layout):
        if layout == "DPP16":
            out.append((f"{f}:{v}", word(vals["_enc"], strip(vals), [DPP16.pack(dpp16_vals() | {f: v})])))
        elif f.startswith("op_sel_hi"):  # the base probe has every op_sel_hi bit set: clear one
            out.append((f"{f}:{v}", word(layout, vals | {f: vals.get(f, 0) & ~v}, ext)))
        else:
            out.append((f"{f}:{v}", word(layout, vals | {f: vals.get(f, 0) | v}, ext)))
    return out


def strip(vals: dict) -> dict:
    return {k: v for k, v in vals.items() if not k.startswith("_")}


def dpp16_vals() -> dict:
    return {"src0": 40, "dpp_ctrl": 0xE4, "row_mask": 0xF, "bank_mask": 0xF}


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


def learn_classes(jobs: list[tuple[list, int, object]]) -> dict:
    """Give each job's spec item a class name (appended); return the class tables.

    A job is (spec item, its printed position, maker(code, literal) -> probe bytes). Items whose few
    signature probes print alike share a class; one representative per class is then probed in full."""
    sig_codes = [(242, None), (248, None), (193, None), (255, LITERALS[0]), (255, LITERALS[1])]
    words = [make(c, lit) for _, _, make in jobs for c, lit in sig_codes]
    texts = mc(words)
    by_sig: dict[tuple, str] = {}
    reps: dict[str, tuple] = {}
    for j, (item, pos, make) in enumerate(jobs):
        mine = texts[j * len(sig_codes):(j + 1) * len(sig_codes)]
        sig = tuple(operand_at(t, pos, getattr(make, "side", None)) for t in mine)
        name = by_sig.setdefault(sig, f"c{len(by_sig)}")
        item.append(name)
        reps.setdefault(name, (pos, make))
    full = [(c, None) for c in INLINE_CODES] + [(255, v) for v in LITERALS] + [(255, v) for v in VALUE_PROBES]
    words = [make(c, lit) for pos, make in reps.values() for c, lit in full]
    texts = mc(words)
    out = {}
    for k, (name, (pos, make)) in enumerate(reps.items()):
        got = [operand_at(t, pos, getattr(make, "side", None)) for t in texts[k * len(full):(k + 1) * len(full)]]
        out[name] = class_table(got)
    return out


def _f16(x: float) -> int:
    import struct
    return int.from_bytes(struct.pack("<e", x), "little")


def _f32(x: float) -> int:
    import struct
    return int.from_bytes(struct.pack("<f", x), "little")


_FLOATS = [0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0]
# Literal values that may print as an inline constant: ints, f16/f32 bit patterns, f64 high halves.
VALUE_PROBES = sorted({v & 0xFFFFFFFF for v in range(-16, 65)} | {_f16(x) for x in _FLOATS}
                      | {_f32(x) for x in _FLOATS} | {_f16(0.15915494), 0x3E22F983, 0x3FC45F30}
                      | {(int.from_bytes(__import__("struct").pack("<d", x), "little") >> 32) for x in _FLOATS})


def class_table(got: list[str | None]) -> dict:
    """Compact class record: inline code -> text, probe literal -> text, and values printing as inline."""
    n, m = len(INLINE_CODES), len(LITERALS)
    inl = {str(c): t for c, t in zip(INLINE_CODES, got[:n], strict=True) if t is not None}
    lit = dict(zip(LITERALS, got[n:n + m], strict=True))
    if lit[0x12345678] is None and lit[0x3C00] is None:
        style = None  # no literal allowed
    elif lit[0x12345678] == "0x5678" or lit[0x3C00] == "0x3c00" and lit[0x12345678] is None:
        style = "lo16"
    else:
        style = "hex32"
    val = {}
    for v, t in zip(VALUE_PROBES, got[n + m:], strict=True):
        if t is not None and not t.startswith("0x"):
            val[f"{v:x}"] = t
    return {"inline": inl, "lit": style, "value": val}


# ---------------------------------------------------------------- the sweep

def vop_entries(enc: str) -> tuple[dict, list, list]:
    """Entries of a VOP1/VOP2/VOPC/VOP3/VOP3P/VINTERP opcode space, with modifier and class jobs."""
    nops = 1 << ENCODINGS[enc].field("op").width
    found = base_probes(enc, list(range(nops)))
    entries, modjobs, classjobs = {}, [], []
    for op, (text, spec, lay, vals, ext) in sorted(found.items()):
        entry = {"m": parse(text)[0], "ops": spec}
        if lay != enc:
            entry["enc"] = lay
        entries[op] = entry
        if enc not in E32:
            modjobs.append((entry, text, spec, mod_probes(lay, vals, ext)))
        if enc == "VOP3P" and "op_sel_hi:" not in text:
            entry["hidef"] = 1  # op_sel_hi is printed only when not all ones
        for pos, item in enumerate(spec):
            if item[1] in ("src", "lit"):
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
            words.append(word(lay, v | {"src0": 250}, [DPP16.pack(dpp16_vals())]))
            owners.append((op, "dpp16", v))
            words.append(word(lay, v | {"src0": 233}, [DPP8.pack({"src0": 40, "lane_sel": DPP8_IDENTITY})]))
            owners.append((op, "dpp8", v))
    jobs = []
    for (op, kind, v), t in zip(owners, mc(words), strict=True):
        entry = entries[op]
        if t is None or kind in entry:
            continue
        entry[kind] = parse(t)[0]
        if kind == "dpp16" and enc in E32:
            jobs.append((entry, t, entry["ops"], mod_probes("DPP16", v | {"src0": 250, "_enc": enc}, [])))
        elif kind == "dpp8" and enc not in E32:  # VOP3 DPP allows modifiers the plain form lacks (sext)
            dpp8 = [DPP8.pack({"src0": 40, "lane_sel": DPP8_IDENTITY})]
            jobs.append((entry, t, entry["ops"], mod_probes(entry["_probe"][0], v | {"src0": 233}, dpp8)))
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
        v = vals if fieldname == "K" else vals | {fieldname: code}
        return word("VOPD", v, [lv] if lv is not None else ([lit] if lit is not None and code != 255 else []))
    # operand_at() must look at the right half of the text
    def make_side(code: int, lv: int | None) -> bytes:
        return make(code, lv)
    make_side.side = side
    return make_side


def main() -> None:
    tables: dict = {"ops": {}}
    modjobs, classjobs, dppjobs = [], [], []
    for enc in ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VINTERP"):
        entries, mj, cj = vop_entries(enc)
        modjobs += mj
        classjobs += cj
        if enc not in ("VINTERP",):
            dppjobs += dpp_forms(enc, entries)
        tables["ops"][enc] = entries
        print(f"{enc}: {len(entries)} opcodes", file=sys.stderr)
    learn_mods(modjobs)
    learn_mods(dppjobs, "dppmods")
    x, y, cj = vopd_entries()
    tables["vopd"] = {"x": x, "y": y}
    print(f"VOPD: {len(x)} X, {len(y)} Y", file=sys.stderr)
    tables["classes"] = learn_classes(classjobs + cj)
    for entries in tables["ops"].values():
        for e in entries.values():
            e.pop("_probe", None)
    with open(OUT, "w") as f:
        json.dump(tables, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")
    print(f"{len(tables['classes'])} operand classes -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
