"""Generate simgpu/isa/data/memory.json, the tables of the memory codec (with --arch, another architecture's
delta of it), by probing llvm-mc.

For every opcode of DS, FLAT (three segments), MUBUF, MTBUF, MIMG, LDSDIR and for EXP, designed probe
encodings are disassembled by llvm-mc. Operand fields get distinctive register numbers so that each printed
operand can be traced back to its field and its register count read off (v[20:23] is 4 dwords). Per
"mode" (the field values that change the operand list: glc/saddr/sve for FLAT, tfe/offen/idxen for
buffers, gds for DS) the tables record the operand template; the modifiers an opcode accepts and their
printed order; MIMG data/address widths for every dmask/d16/tfe/lwe and dim/a16; the names of the MTBUF
formats, MIMG dims and EXP targets. For gfx12 the same is done over DS, VBUFFER, VFLAT/VSCRATCH/VGLOBAL, VIMAGE,
VSAMPLE and LDSDIR, plus the cache-policy spellings of each opcode (names["cpol"], an entry's "th"), which
encodings print their offset signed ("signed_offset"), which print a lone address VGPR when the other address
fields are zero ("single_address") and the export mnemonic (names["exp"]).

    python -m tools.isatab_memory [--arch gfx1201]
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys

from simgpu.isa.arch import get_arch
from simgpu.isa.codec import split_operands
from simgpu.isa.memory_fmt import (
    ACC_FIELDS,
    FLAGS,
    FLATS12,
    IMAGES12,
    SCALAR_FIELDS,
    SCALED,
    is_modifier,
    mode_of,
    swizzle_text,
)
from tools import isatab, oracle

# Distinctive values of the operand fields: vector ranges far apart, scalar fields distinct after scaling.
PROBE = {
    "DS": {"addr": 10, "data0": 40, "data1": 70, "vdst": 100},
    "FLAT": {"addr": 10, "data": 40, "vdst": 100},
    "MUBUF": {"vaddr": 10, "vdata": 40, "srsrc": 3, "soffset": 5},
    "MTBUF": {"vaddr": 10, "vdata": 40, "srsrc": 3, "soffset": 5},
    "MIMG": {"vaddr": 10, "vdata": 100, "srsrc": 3, "ssamp": 20},
    "LDSDIR": {"vdst": 100, "attr": 3, "attr_chan": 2},
    "VBUFFER": {"vaddr": 10, "vdata": 40, "rsrc": 12, "soffset": 5},
    "VFLAT": {"addr": 10, "data": 40, "vdst": 100},
    "VSCRATCH": {"addr": 10, "data": 40, "vdst": 100},
    "VGLOBAL": {"addr": 10, "data": 40, "vdst": 100},
    "VIMAGE": {"vaddr0": 10, "vdata": 100, "rsrc": 12},
    "VSAMPLE": {"vaddr0": 10, "vdata": 100, "rsrc": 12, "samp": 20},
}
# Nonzero values of valued modifiers, distinct so a printed number identifies its field. th 2 keeps an atomic's
# TH_ATOMIC_RETURN bit (the mode) as the probe has it.
MOD_PROBE = {"offset": 0x123, "offset0": 3, "offset1": 5, "dmask": 1, "waitvdst": 4, "format": 2, "waitvsrc": 1,
             "th": 2, "scope": 1}
# Fields whose values select an operand template ("mode"), and their probe values per mode bit.
MODES = {
    "DS": [("gds", (0, 1))],
    "FLAT": [("glc", (0, 1)), ("saddr", (6, 124)), ("sve", (0, 1))],
    "MUBUF": [("tfe", (0, 1)), ("offen", (0, 1)), ("idxen", (0, 1)), ("lds", (0, 1))],
    "MTBUF": [("tfe", (0, 1)), ("offen", (0, 1)), ("idxen", (0, 1))],
    "MIMG": [],
    "LDSDIR": [],
    "VBUFFER": [("tfe", (0, 1)), ("offen", (0, 1)), ("idxen", (0, 1))],
    "VFLAT": [("th", (0, 1)), ("saddr", (6, 124)), ("sve", (0, 1))],
    "VSCRATCH": [("th", (0, 1)), ("saddr", (6, 124)), ("sve", (0, 1))],
    "VGLOBAL": [("th", (0, 1)), ("saddr", (6, 124)), ("sve", (0, 1))],
    "VIMAGE": [],
    "VSAMPLE": [],
}
ENCODINGS_BY_FAMILY = {"gfx11": ("DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "LDSDIR"),
                       "gfx9": ("DS", "FLAT", "MUBUF", "MTBUF"),
                       "gfx12": ("DS", "VBUFFER", "VFLAT", "VSCRATCH", "VGLOBAL", "VIMAGE", "VSAMPLE", "LDSDIR")}
IMAGES = ("MIMG", *IMAGES12)


def raw_disassemble(words: list[bytes]) -> list[tuple[str, bytes] | None]:
    """llvm-mc's (text, re-encoded bytes) for each probe, or None where it does not decode exactly one."""
    return oracle.probe_outputs(words)


def pack(enc: str, vals: dict[str, int], extra: bytes = b"") -> bytes:
    e = isatab.layouts()[enc]
    return e.pack(vals).to_bytes(e.size, "little") + extra


def split_text(text: str) -> tuple[str, list[str], list[str]]:
    """(mnemonic, operand tokens, modifier tokens) of an llvm-mc line."""
    parts = text.split(None, 1)
    toks = split_operands(parts[1]) if len(parts) > 1 else []
    return parts[0], [t for t in toks if not is_modifier(t)], [t for t in toks if is_modifier(t)]


_REG = re.compile(r"^(v|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])$")


def operand_spec(enc: str, tok: str, probe: dict[str, int]) -> str | None:
    """Template entry of a printed operand: "field:count", a constant word ("off"), or None."""
    m = _REG.match(tok)
    if m:
        first = int(m.group(2) or m.group(3))
        count = 1 if m.group(2) else int(m.group(4)) - first + 1
        vector = m.group(1) == "v"
        for name, val in probe.items():
            if _is_vector(name) == vector and val * SCALED.get(name, 1) == first:
                return "vaddr:*" if name == "vaddr0" else f"{name}:{count}"  # gfx12 images: counted per dim
        return None
    m = re.match(r"^attr(\d+)\.[xyzw]$", tok)
    if m and "attr" in probe:
        return "attr:1"
    if tok.startswith("[") and ("vaddr" in probe or "vaddr0" in probe):
        return "vaddr:*"
    return tok if tok == "off" else None


def _is_vector(name: str) -> bool:
    return name not in SCALAR_FIELDS and name not in ("attr", "attr_chan")


def op_keys(enc: str) -> list[dict[str, int]]:
    """Every opcode key of an encoding (FLAT's segment is part of its key)."""
    n = 1 << isatab.layouts()[enc].field("op").width
    if enc == "FLAT":
        return [{"seg": s, "op": op} for s in range(3) for op in range(n)]
    return [{"op": op} for op in range(n)]


def key_name(key: dict[str, int]) -> str:
    return f"{key['seg']}.{key['op']}" if "seg" in key else str(key["op"])


SADDR_OFF = [124]  # the saddr code the architecture prints `off` (learn_saddr_off)


def learn_saddr_off() -> int:
    """The FLAT saddr code llvm prints `off` (gfx9: 0x7f; 124 from gfx10 on)."""
    words = [pack("FLAT", {"op": 20, "seg": 2, "saddr": c, "addr": 10, "vdst": 100}) for c in (124, 127)]
    res = raw_disassemble(words)
    return next(c for c, r in zip((124, 127), res, strict=True) if r and ", off" in r[0])


def modes(enc: str) -> list[dict[str, int]]:
    """All combinations of the mode fields' probe values (the fields the architecture's layout has)."""
    spec = [(f, tuple(SADDR_OFF[0] if f == "saddr" and x == 124 else x for x in v)) for f, v in MODES[enc]
            if f in isatab.layouts()[enc].field_names]
    if SADDR_OFF[0] != 124:  # gfx9's flat segment has no saddr: the field must be 0
        spec = [(f, v + (0,) if f == "saddr" else v) for f, v in spec]
    return [dict(zip([f for f, _ in spec], combo, strict=True)) for combo in itertools.product(*[v for _, v in spec])]


def learn_templates(enc: str) -> dict[str, dict]:
    """Per opcode key: mnemonic, operand template per valid mode, learned by subset search over operands."""
    probe = PROBE[enc]
    names = list(probe)
    subsets = [c for r in range(len(names), -1, -1) for c in itertools.combinations(names, r)]
    jobs, words = [], []
    for key in op_keys(enc):
        for mode in modes(enc):
            for sub in subsets:
                vals = {**mode, **{n: probe[n] for n in sub}, **key}
                jobs.append((key_name(key), mode, sub))
                words.append(pack(enc, vals))
    res = raw_disassemble(words)
    table: dict[str, dict] = {}
    done: set[tuple[str, str]] = set()
    for (kname, mode, sub), r in zip(jobs, res, strict=True):
        mk = mode_of(enc, mode, SADDR_OFF[0])
        if r is None or (kname, mk) in done:
            continue
        mnem, ops, _ = split_text(r[0])
        off = SADDR_OFF[0]
        regs = {n: probe[n] for n in sub} | ({"saddr": mode["saddr"]} if mode.get("saddr", off) != off else {})
        spec = [operand_spec(enc, t, regs) for t in ops]
        if None in spec:
            continue
        done.add((kname, mk))
        entry = table.setdefault(kname, {"m": mnem, "t": {}})
        if entry["m"] != mnem:
            continue  # a different instruction under this mode: llvm has no such pairing
        entry["t"][mk] = spec
        if len(sub) < len(names):  # llvm rejected the probe with every operand field set: unused must be 0
            entry["strict"] = 1
        entry.setdefault("probe", {})[mk] = ({**mode, **{n: probe[n] for n in sub}})
    return table


def learn_modifiers(enc: str, table: dict[str, dict]) -> None:
    """Per opcode: the modifiers it accepts (flags tried one at a time), their printed order, and which
    are printed even when zero."""
    names = isatab.layouts()[enc].field_names
    mods = [f for f in FLAGS.get(enc, ()) if f not in dict(MODES[enc]) and f in names] + list(
        f for f in MOD_PROBE if f in names)
    jobs, words = [], []
    for kname, entry in table.items():
        key = _key_of(kname)
        for mk, vals in entry["probe"].items():
            for f in [None, *mods]:
                v = dict(vals, **key)
                if f is not None:
                    v[f] = _probe_value(f, v)
                jobs.append((kname, mk, f))
                words.append(pack(enc, v))
    res = raw_disassemble(words)
    ok: dict[tuple[str, str], list[str]] = {}
    always: dict[str, set[str]] = {}
    for (kname, mk, f), r in zip(jobs, res, strict=True):
        if r is None:
            continue
        if f is None:
            names = set(_mod_names(split_text(r[0])[2]))  # printed although zero, in every mode
            always[kname] = always[kname] & names if kname in always else names
        else:
            ok.setdefault((kname, mk), []).append(f)
    _learn_order(enc, table, ok, always)


def _learn_order(enc: str, table: dict[str, dict], ok: dict, always: dict) -> None:
    jobs, words = [], []
    for kname, entry in table.items():
        for mk, vals in entry["probe"].items():
            v = dict(vals, **_key_of(kname))
            for f in ok.get((kname, mk), []):
                v[f] = _probe_value(f, v)
            jobs.append((kname, mk))
            words.append(pack(enc, v))
    res = raw_disassemble(words)
    seen = []
    for (kname, mk), r in zip(jobs, res, strict=True):
        entry = table[kname]
        seen.append((kname, _mod_names(split_text(r[0])[2]) if r else []))
        if r and "offset:swizzle(" in r[0]:
            entry["swz"] = 1
        entry["always"] = sorted(always.get(kname, set()))
        entry.setdefault("ok", {})[mk] = sorted(ok.get((kname, mk), []))
    for kname, names in sorted(seen, key=lambda s: -len(s[1])):  # the richest probe fixes the order
        _merge(table[kname].setdefault("mods", []), names)


def learn_acc_fields(enc: str, table: dict[str, dict]) -> None:
    """gfx9: the operand fields the acc bit makes AGPRs, where they are not memory_fmt.ACC_FIELDS ("accf")."""
    jobs, words = [], []
    for kname, entry in table.items():
        for mk, vals in entry["probe"].items():
            if "acc" in entry["ok"].get(mk, ()):
                jobs.append((kname, mk))
                words.append(pack(enc, dict(vals, **_key_of(kname), acc=1)))
    for (kname, mk), r in zip(jobs, raw_disassemble(words), strict=True):
        if r is None:
            continue
        tmpl = table[kname]["t"][mk]
        ops = split_text(r[0])[1]
        accf = sorted(s.split(":")[0] for s, t in zip(tmpl, ops, strict=False) if ":" in s and t.startswith("a"))
        if set(accf) != ACC_FIELDS & {s.split(":")[0] for s in tmpl}:
            table[kname]["accf"] = accf


def _probe_value(field: str, vals: dict[str, int]) -> int:
    """The value a modifier probe sets: MOD_PROBE's (th keeps the mode's return bit), 1 for a flag."""
    if field == "th":
        return MOD_PROBE["th"] | vals.get("th", 0)
    return MOD_PROBE.get(field, 1)


def _mod_names(toks: list[str]) -> list[str]:
    return [t.split(":", 1)[0] for t in toks]


def _merge(order: list[str], names: list[str]) -> None:
    """Insert unseen names into `order` after their predecessor in `names` (orders agree across modes)."""
    prev = -1
    for n in names:
        if n in order:
            prev = order.index(n)
        else:
            order.insert(prev + 1, n)
            prev += 1


def _key_of(kname: str) -> dict[str, int]:
    if "." in kname:
        seg, op = kname.split(".")
        return {"seg": int(seg), "op": int(op)}
    return {"op": int(kname)}


def check_swizzle(table: dict[str, dict]) -> None:
    """Compare memory_fmt.swizzle_text with llvm-mc on every offset of each swizzle-printing DS opcode."""
    for kname, entry in table.items():
        if not entry.get("swz"):
            continue
        vals = [v for v in range(1, 0x10000)]
        res = raw_disassemble([pack("DS", {"op": int(kname), "offset0": v & 0xFF, "offset1": v >> 8}) for v in vals])
        bad = [(v, r[0]) for v, r in zip(vals, res, strict=True)
               if r is None or r[0].split("offset:", 1)[1] != swizzle_text(v)]
        if bad:
            raise SystemExit(f"{entry['m']}: swizzle_text disagrees with llvm-mc, e.g. {bad[:3]}")


def learn_mimg_widths(enc: str, table: dict[str, dict], rows: dict[str, int]) -> None:
    """Register counts of vdata and vaddr for every dim/a16 and dmask/d16/tfe/lwe, per opcode.

    The two do not factor: where llvm finds a combination inconsistent it keeps its default widths, so the
    whole product is probed. Each (dim, a16) row of 128 counts is interned in the returned row list; an
    opcode stores 16 row indices for vdata ("vdr") and 16 for vaddr ("var"). `rows` (row -> index) is extended."""
    combos = [(dim, a16, dm, d16, tfe, lwe) for dim in range(8) for a16 in (0, 1)
              for lwe in (0, 1) for tfe in (0, 1) for d16 in (0, 1) for dm in range(16)]
    order = list(table)
    words = []
    # gfx12: llvm prints one VIMAGE address VGPR when every other address field is zero, so those get distinct
    # VGPRs, but the last (llvm rejects it set where it is not used).
    more = {f"vaddr{i}": 10 + i for i in range(1, IMAGES12[enc] - 1)} if enc in IMAGES12 else {}
    for kname in order:
        vals = dict(table[kname]["probe"][""], **_key_of(kname), **more)
        words += [pack(enc, dict(vals, dim=c[0], a16=c[1], dmask=c[2], d16=c[3], tfe=c[4], lwe=c[5]))
                  for c in combos]
    res = raw_disassemble(words)
    for i, kname in enumerate(order):
        chunk = res[i * len(combos):(i + 1) * len(combos)]
        for field, key in (("vdata", "vdr"), ("vaddr", "var")):
            counts = "".join(_width(r, field) for r in chunk)
            table[kname][key] = [rows.setdefault(counts[j:j + 128], len(rows)) for j in range(0, len(counts), 128)]


def _width(r: tuple[str, bytes] | None, field: str) -> str:
    """Register count of `field` in a MIMG probe's text as one base-36 digit ("-" if invalid)."""
    if r is None:
        return "-"
    _, ops, _ = split_text(r[0])
    tok = ops[0] if field == "vdata" else ops[1]
    n = 0
    for part in (tok[1:-1].split(", ") if tok.startswith("[") and field == "vaddr" else [tok]):  # gfx12: a list
        m = _REG.match(part)
        if not m:
            return "-"
        n += 1 if m.group(2) else int(m.group(4)) - int(m.group(3)) + 1
    return "0123456789abcdefghijklmnopqrstuvwxyz"[n]


def learn_nsa_spacing(table: dict[str, dict]) -> None:
    """The spaces after the mnemonic of each MIMG opcode's NSA form (llvm pads some with two): "nsasp"."""
    combos = [(dim, a16) for dim in range(8) for a16 in (0, 1)]
    words = [pack("MIMG", dict(table[k]["probe"][""], **_key_of(k), dim=dim, a16=a16, nsa=1), bytes([11, 12, 13, 14]))
             for k in table for dim, a16 in combos]
    res = iter(raw_disassemble(words))
    for entry in table.values():
        texts = [r[0] for r in (next(res) for _ in combos) if r is not None and ", [" in r[0]]
        if texts:
            mnem = texts[0].split(" ", 1)[0]
            entry["nsasp"] = len(texts[0][len(mnem):]) - len(texts[0][len(mnem):].lstrip(" "))


def learn_names() -> dict[str, list[str]]:
    """MTBUF format names (128), MIMG dim names (8), EXP target names (64) and modifier order, as printed."""
    fmt = raw_disassemble([pack("MTBUF", {"op": 0, "vdata": 1, "srsrc": 1, "format": f}) for f in range(128)])
    dims = raw_disassemble([pack("MIMG", {"op": 0, "dmask": 1, "dim": d}) for d in range(8)])
    return _names(fmt, dims)


def learn_names12(table: dict[str, dict]) -> dict[str, list[str]]:
    """gfx12: the format names (of a tbuffer_* in VBUFFER), dim names (of an image_load in VIMAGE), EXP target
    names, export modifiers and mnemonic."""
    tbuf = next(int(k) for k, e in table["VBUFFER"].items() if e["m"].startswith("tbuffer_load_format"))
    load = next(int(k) for k, e in table["VIMAGE"].items() if e["m"] == "image_load")
    fmt = raw_disassemble([pack("VBUFFER", {"op": tbuf, "vdata": 1, "rsrc": 4, "soffset": 124, "format": f})
                           for f in range(128)])
    dims = raw_disassemble([pack("VIMAGE", {"op": load, "dmask": 1, "dim": d}) for d in range(8)])
    out = _names(fmt, dims)
    exp = raw_disassemble([pack("EXP", {"en": 15})])
    out["exp"] = split_text(exp[0][0])[0]
    return out


def _names(fmt: list, dims: list) -> dict:
    tgts = raw_disassemble([pack("EXP", {"en": 15, "target": t}) for t in range(64)])
    exp = raw_disassemble([pack("EXP", {"en": 15, "done": 1, "row": 1})])
    return {
        "format": [next((m.split(":", 1)[1] for m in split_text(r[0])[2] if m.startswith("format:")), "")
                   if r else "" for r in fmt],
        "dim": [next(m.split(":", 1)[1] for m in split_text(r[0])[2] if m.startswith("dim:")) for r in dims],
        "target": [split_text(r[0])[1][0] if r else "" for r in tgts],
        "exp_mods": _mod_names(split_text(exp[0][0])[2]),
    }


def learn_names9() -> dict[str, list[str]]:
    """gfx9: the MTBUF format names (dfmt and nfmt, 128), no images or exports."""
    fmt = raw_disassemble([pack("MTBUF", {"op": 0, "vdata": 1, "srsrc": 1, "format": f}) for f in range(128)])
    return {"format": [next((m.split(":", 1)[1] for m in split_text(r[0])[2] if m.startswith("format:")), "")
                       if r else "" for r in fmt]}


def learn_flat_offsets() -> list[bool]:
    """Whether each FLAT segment prints its 13-bit offset as signed."""
    res = raw_disassemble([pack("FLAT", {"op": 20, "seg": s, "saddr": sa, "offset": 0x1FFF})
                           for s in range(3) for sa in (SADDR_OFF[0], 0)])  # gfx9's flat: saddr 0
    return ["offset:-1" in (res[2 * s] or res[2 * s + 1] or ("",))[0] for s in range(3)]


def learn_signed_offsets(tables: dict[str, dict]) -> list[str]:
    """gfx12: the encodings that print an offset with its top bit set as negative."""
    out = []
    for enc in ("VBUFFER", *FLATS12):
        kname, entry = next(iter(tables[enc].items()))
        mk, vals = next(iter(entry["probe"].items()))
        width = isatab.layouts()[enc].field("offset").width
        r = raw_disassemble([pack(enc, dict(vals, **_key_of(kname), offset=(1 << width) - 1))])[0]
        if r and "offset:-1" in r[0]:
            out.append(enc)
    return out


def learn_single_address(tables: dict[str, dict]) -> list[str]:
    """gfx12: the image encodings whose words with every address field but the first zero llvm prints with that
    one address VGPR (image_load v0, v10, ... for a 2D image)."""
    out = []
    for enc in IMAGES12:
        kname, entry = next((k, e) for k, e in tables[enc].items() if e["m"].startswith(("image_load", "image_sample")))
        vals = dict(entry["probe"][""], **_key_of(kname), dim=1, dmask=1)  # 2D: two addresses
        r = raw_disassemble([pack(enc, vals)])[0]
        if r and "[" not in split_text(r[0])[1][1]:
            out.append(enc)
    return out


def learn_cpol(enc: str, table: dict[str, dict], names: dict) -> None:
    """gfx12: per opcode, the printed th of every (th, scope) pair, interned in names["cpol"]["th"] (entry "th":
    its index), and the scope names. Probed in the opcode's first mode without an atomic's return bit."""
    e = isatab.layouts()[enc]
    th_n, scope_n = 1 << e.field("th").width, 1 << e.field("scope").width
    cp = names.setdefault("cpol", {"th": [], "scope": [""] * scope_n})
    order = list(table)
    words = []
    for kname in order:
        probes = table[kname]["probe"]
        mk = next((m for m in probes if not m.startswith("1")), next(iter(probes)))
        words += [pack(enc, dict(probes[mk], **_key_of(kname), th=th, scope=sc))
                  for th in range(th_n) for sc in range(scope_n)]
    res = iter(raw_disassemble(words))
    for kname in order:
        row = []
        for _th in range(th_n):
            for sc in range(scope_n):
                r = next(res)
                mods = split_text(r[0])[2] if r else []
                row.append(next((m[3:] for m in mods if m.startswith("th:")), ""))
                scope = next((m[6:] for m in mods if m.startswith("scope:")), None)
                if scope:
                    cp["scope"][sc] = scope
        if row not in cp["th"]:
            cp["th"].append(row)
        table[kname]["th"] = cp["th"].index(row)


def generate() -> dict:
    """All tables of the memory codec of the architecture being probed."""
    family = get_arch(isatab.arch_name()).family
    out: dict = {"ops": {}, "names": {}}
    rows: dict[str, int] = {}
    SADDR_OFF[0] = learn_saddr_off() if family != "gfx12" else 124
    if SADDR_OFF[0] != 124:
        out["saddr_off"] = SADDR_OFF[0]
    for enc in ENCODINGS_BY_FAMILY[family]:
        table = learn_templates(enc)
        learn_modifiers(enc, table)
        if enc in IMAGES:
            learn_mimg_widths(enc, table, rows)
        if enc == "MIMG":
            learn_nsa_spacing(table)
        if enc == "DS":
            check_swizzle(table)
        if "th" in isatab.layouts()[enc].field_names:
            learn_cpol(enc, table, out["names"])
        if "acc" in isatab.layouts()[enc].field_names:
            learn_acc_fields(enc, table)
        out["ops"][enc] = table
        print(f"{enc}: {len(table)} opcodes", file=sys.stderr)
    out["mimg_rows"] = list(rows)
    if family == "gfx11":
        out["names"] |= learn_names()
        out["flat_signed"] = learn_flat_offsets()
    elif family == "gfx9":
        out["names"] |= learn_names9()
        out["flat_signed"] = learn_flat_offsets()
    else:
        out["names"] |= learn_names12(out["ops"])
        out["signed_offset"] = learn_signed_offsets(out["ops"])
        out["single_address"] = learn_single_address(out["ops"])
    for table in out["ops"].values():
        for entry in table.values():
            entry.pop("probe")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    isatab.arch_argument(ap)
    args = ap.parse_args()
    with isatab.target(args.arch):
        isatab.write_table("memory", generate())


if __name__ == "__main__":
    main()
