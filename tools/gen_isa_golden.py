"""Generate the golden (bytes, text) pairs of an architecture (gfx1100 unless --arch) from llvm-mc.

Sweeps every opcode of every encoding: random field values (biased towards valid operands) are packed
with simgpu's bit layouts, disassembled by llvm-mc, and kept only where llvm-mc re-assembles its own
text to the same bytes (LLVM's disassembly is not always canonical). Output:
tests/data/isa/<arch>_golden.tsv.gz, one "hexbytes<TAB>text" line per pair, sorted.

With --true16 the sweep runs llvm-mc with -mattr=+real-true16 (LLVM's True16 mode: 16-bit VGPR halves
written vN.l/vN.h, and encodings only that mode decodes, such as v_mov_b16_e64 and the e32 forms'
high halves) over the vector-ALU encodings, the only ones that mode changes, into
tests/data/isa/gfx1100_true16_golden.tsv.gz. LLVM 19 prints a VOP3 half that op_sel selects as `.l`
and its assembler then drops the op_sel bit; for those the pair's text is llvm-mc's own print of the
assembly that does round-trip (`.h` on the selected operand, as LLVM 20 disassembles), unless LLVM
notes an operand as invalid.

    python -m tools.gen_isa_golden [--per-op N] [--seed S] [--true16] [--arch gfx1201]
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import sys
from collections import defaultdict

from simgpu.isa import memory, scalar, valu
from simgpu.isa.arch import DEFAULT, get_arch
from simgpu.isa.encodings import DPP8, DPP16, SDWA, SDWAB, SRC_DPP8, SRC_DPP8_FI, SRC_DPP16, SRC_LITERAL, SRC_SDWA
from tools import isa_report, isatab, oracle

DATA = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "isa")


def out_path(arch: str = DEFAULT, true16: bool = False) -> str:
    """Where the golden pairs of an architecture (in LLVM's True16 mode) are stored."""
    return os.path.join(DATA, f"{arch}{'_true16' if true16 else ''}_golden.tsv.gz")


OUT, OUT16 = out_path(), out_path(true16=True)
VALU_ENCODINGS = ("VOP2", "VOP1", "VOPC", "VOPD", "VOP3", "VOP3P", "VINTERP")

SPECIAL_SRC = [106, 107, 124, 125, 126, 127, 253, 251, 252, 235, 236, 237, 238, 239]
FLOAT_CONST = list(range(240, 249))


def src9(r: random.Random, vgpr: bool = True) -> int:
    """A source operand code, biased the way compiled code uses them."""
    x = r.random()
    if vgpr and x < 0.45:
        return 256 + r.randrange(256)
    if x < 0.60:
        return r.randrange(106)
    if x < 0.68:
        return r.choice(SPECIAL_SRC)
    if x < 0.72:
        return r.randrange(108, 124)
    if x < 0.82:
        return r.randrange(128, 209)
    if x < 0.90:
        return r.choice(FLOAT_CONST)
    return SRC_LITERAL


def sdst7(r: random.Random) -> int:
    x = r.random()
    if x < 0.8:
        return r.randrange(106)
    return r.choice([106, 107, 124, 125, 126, 127] + list(range(108, 124)))


def literal(r: random.Random) -> int:
    return r.choice([r.randrange(1 << 32), r.randrange(1 << 16), r.randrange(65, 1 << 12),
                     r.randrange(1 << 32) & 0xFFFF0000, 0x3E22F983 + r.randrange(-4, 4)]) & 0xFFFFFFFF


def dpp16_word(r: random.Random, src0: int) -> int:
    ctrl = r.choice([r.randrange(0x100), r.randrange(0x101, 0x130), r.randrange(0x130, 0x170), 0x140, 0x141,
                     r.randrange(0x150, 0x170)])
    vals = {"src0": src0, "dpp_ctrl": ctrl, "fi": r.randrange(2), "bound_ctrl": r.randrange(2),
            "src0_neg": r.randrange(2) * (r.random() < 0.3), "src0_abs": r.randrange(2) * (r.random() < 0.3),
            "src1_neg": r.randrange(2) * (r.random() < 0.3), "src1_abs": r.randrange(2) * (r.random() < 0.3),
            "bank_mask": r.choice([0xF, r.randrange(16)]), "row_mask": r.choice([0xF, r.randrange(16)])}
    return DPP16.pack(vals) & 0xFFFFFFFF


def sdwa_word(r: random.Random, vopc: bool) -> int:
    """A gfx9 SDWA (VOPC: SDWAB) dword: selects mostly DWORD, sources mostly VGPRs. No select 7 or dst_unused 3:
    llvm-mc 19 crashes (SIGSEGV) on a select of 7, which would lose the rest of its batch."""
    sel = lambda: r.choice([6, 6, r.randrange(7)])  # noqa: E731
    vals = {"src0": r.randrange(256), "dst_sel": sel(), "dst_unused": r.choice([2, r.randrange(3)]),
            "src0_sel": sel(), "src1_sel": r.choice([0, sel()]), "s0": int(r.random() < 0.25),
            "s1": int(r.random() < 0.25),
            "sdst": r.randrange(128), "sd": r.randrange(2)}
    for f in ("clamp", "omod", "src0_sext", "src0_neg", "src0_abs", "src1_sext", "src1_neg", "src1_abs"):
        vals[f] = r.randrange(2 if f != "omod" else 4) * (r.random() < 0.2)
    return (SDWAB if vopc else SDWA).pack(vals) & 0xFFFFFFFF


def dpp8_word(r: random.Random, src0: int) -> int:
    return DPP8.pack({"src0": src0, "lane_sel": r.randrange(1 << 24)}) & 0xFFFFFFFF


def maybe_zero(r: random.Random, width: int, p_zero: float = 0.6) -> int:
    return 0 if r.random() < p_zero else r.randrange(1 << width)


def sample_fields(enc: str, r: random.Random) -> dict[str, int]:
    """Random field values for one instruction of encoding `enc` of the architecture being probed (op excluded)."""
    e = isatab.layouts()[enc]
    v: dict[str, int] = {}
    for f in e.fields:
        n = f.name
        if n == "op":
            continue
        if n in ("src0", "src1", "src2", "src0x", "src0y"):
            v[n] = src9(r)
        elif n in ("ssrc0", "ssrc1"):
            v[n] = src9(r, vgpr=False)
        elif n == "sdst":
            v[n] = sdst7(r)
        elif n in ("clamp", "omod", "neg", "abs", "op_sel", "neg_hi", "op_sel_hi2", "op_sel_hi", "glc", "slc",
                   "dlc", "tfe", "lwe", "gds", "sve", "r128", "a16", "d16", "unorm", "row", "done", "waitexp",
                   "waitvdst", "nsa", "th", "scope", "waitvsrc"):
            v[n] = maybe_zero(r, f.width)
        elif n in ("rsrc", "samp"):  # gfx12: an SGPR (range) code, 4-aligned
            v[n] = r.choice([r.randrange(0, 104, 4), r.randrange(108, 124, 4), r.randrange(1 << f.width)])
        elif n.startswith("vaddr") and n != "vaddr":  # gfx12 image addresses: the last is often unused
            last = n == ("vaddr4" if enc == "VIMAGE" else "vaddr3")
            v[n] = r.randrange(256) if r.random() < (0.3 if last else 0.8) else 0
        elif n == "format" and enc == "VBUFFER":  # llvm encodes buffer_* (not tbuffer_*) with format 1
            v[n] = 1 if r.random() < 0.6 else r.randrange(1 << f.width)
        elif n == "offset" and f.width == 24:
            v[n] = r.choice([0, r.randrange(1 << 8), r.randrange(1 << 12), r.randrange(1 << 24)])
        elif n in ("soffset",) and enc == "SMEM":
            v[n] = r.choice([124, r.randrange(106), 106, 125])
        elif n == "soffset":
            v[n] = src9(r, vgpr=False) if r.random() < 0.7 else 128
        elif n == "saddr":
            v[n] = r.choice([124, 125, r.randrange(106) & ~1])
        elif n in ("sbase", "srsrc", "ssamp"):
            v[n] = r.randrange(1 << f.width) & (0x3F if n == "sbase" else 0x1F)
            if n == "sbase":
                v[n] = min(v[n], 52)
            else:
                v[n] = min(v[n], 26)
        elif n == "sdata":
            v[n] = r.randrange(104) & ~r.choice([0, 1, 3])
        elif n == "dmask":
            v[n] = r.choice([1, 3, 7, 15, r.randrange(16)])
        elif n == "offset" and enc == "SMEM":
            v[n] = r.choice([0, r.randrange(1 << 8), r.randrange(1 << 21)])
        else:
            v[n] = r.randrange(1 << f.width) if r.random() < 0.7 else 0
    return v


def op_keys(enc: str) -> list[dict[str, int]]:
    """Every opcode value of an encoding (FLAT's segment counts as part of its opcode)."""
    e = isatab.layouts()[enc]
    if enc == "VOPD":
        return [{"opx": x, "opy": y} for x in range(16) for y in range(32)]
    if enc == "EXP":
        return [{}]
    keys = [{"op": op} for op in range(1 << e.field("op").width)]
    if get_arch(isatab.arch_name()).family == "gfx9":  # gfx9's VOP3 opcodes 0x380 on are VOP3P words
        keys = [k for k in keys if isatab.identify(e.pack(k) & 0xFFFFFFFF) == enc]
    if enc == "FLAT":
        keys = [{"op": k["op"], "seg": seg} for k in keys for seg in range(3)]
    return keys


def build(enc: str, key: dict[str, int], r: random.Random, overrides: dict[str, int] | None = None,
          k_literal: bool = False) -> bytes:
    """One random instruction of `enc` with opcode fields `key`, with extension dwords as needed; `overrides`
    replace sampled fields, `k_literal` appends a literal whatever the sources (v_fmaak's K)."""
    e = isatab.layouts()[enc]
    vals = sample_fields(enc, r)
    if r.random() < 0.5:  # sparse: many encodings require unused fields to be zero
        vals = {k: (0 if r.random() < 0.5 else v) for k, v in vals.items()}
    vals.update(key)
    if overrides:
        vals.update(overrides)
    src0_name = "src0" if "src0" in vals else None
    dpp = None
    gfx9 = get_arch(isatab.arch_name()).family == "gfx9"  # DPP16 and SDWA, both of the e32 encodings only
    mai = gfx9 and enc == "VOP3P" and (valu.entry(enc, vals["op"], arch=isatab.arch_name()) or {}).get("enc")
    if mai == "VOP3PMAI":  # MFMA/SMFMAC: A and B are (A)VGPRs, as
        for n in ("src0", "src1"):  # llvm-mc 19 crashes re-encoding a constant there
            vals[n] = vals[n] if vals[n] >= 256 else 256 + r.randrange(256)
        if r.random() < 0.6:  # register tuples even-aligned (gfx90a on); cbsz/abid/blgp mostly 0
            vals["vdst"] &= ~1
            for n in ("src0", "src1", "src2"):
                vals[n] &= ~1 if vals[n] >= 256 else ~0
            vals["op_sel"] = vals["neg_hi"] = vals["neg"] = 0
    if enc in (("VOP1", "VOP2", "VOPC") if gfx9 else ("VOP1", "VOP2", "VOPC", "VOP3", "VOP3P")) and r.random() < 0.25:
        dpp = r.choice([SRC_DPP16, SRC_SDWA] if gfx9 else [SRC_DPP16, SRC_DPP8, SRC_DPP8_FI])
        vals[src0_name] = dpp
        for other in ("src1", "src2"):
            if vals.get(other) == SRC_LITERAL:
                vals[other] = 256 + r.randrange(256)
    if enc in ("VOP1", "VOP2", "VOPC") and vals.get("src0") == SRC_LITERAL:
        pass
    word = e.pack(vals)
    data = word.to_bytes(e.size, "little")
    srcs = [vals.get(n) for n in ("src0", "src1", "src2", "ssrc0", "ssrc1", "src0x", "src0y")]
    if dpp == SRC_DPP16:
        data += dpp16_word(r, r.randrange(256)).to_bytes(4, "little")
    elif dpp in (SRC_DPP8, SRC_DPP8_FI):
        data += dpp8_word(r, r.randrange(256)).to_bytes(4, "little")
    elif dpp == SRC_SDWA:
        data += sdwa_word(r, enc == "VOPC").to_bytes(4, "little")
    elif SRC_LITERAL in srcs or k_literal:
        data += literal(r).to_bytes(4, "little")
    if enc == "MIMG" and vals.get("nsa"):
        data += bytes(r.randrange(256) for _ in range(4 * vals["nsa"]))
    return data


ENCODING_ORDER = ["SOP2", "SOPK", "SOP1", "SOPC", "SOPP", "SMEM", "VOP2", "VOP1", "VOPC", "VOPD", "VOP3", "VOP3P",
                  "VINTERP", "LDSDIR", "DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "EXP"]
# Per encoding family; gfx12 replaces FLAT/MUBUF/MTBUF/MIMG.
ORDERS = {"gfx11": ENCODING_ORDER,
          "gfx12": ["SOP2", "SOPK", "SOP1", "SOPC", "SOPP", "SMEM", "VOP2", "VOP1", "VOPC", "VOPD", "VOP3", "VOP3P",
                    "VINTERP", "LDSDIR", "DS", "VBUFFER", "VFLAT", "VSCRATCH", "VGLOBAL", "VIMAGE", "VSAMPLE", "EXP"],
          "gfx9": ["SOP2", "SOPK", "SOP1", "SOPC", "SOPP", "SMEM", "VOP2", "VOP1", "VOPC", "VOP3", "VOP3P", "DS",
                   "FLAT", "MUBUF", "MTBUF"]}


def encoding_order() -> list[str]:
    """The encodings of the architecture being probed, in sweep order."""
    return ORDERS[get_arch(isatab.arch_name()).family]


def discover(r: random.Random, tries: int, encodings: list[str]) -> dict[str, list[dict[str, int]]]:
    """The opcode keys of each encoding for which llvm-mc decodes at least one random instance."""
    valid: dict[str, list[dict[str, int]]] = {}
    for enc in encodings:
        keys = op_keys(enc)
        words, owners = [], []
        heavy = enc in ("VOP3", "VOP3P", "VINTERP", "DS", "FLAT", "MIMG", "MUBUF", "SMEM", "VBUFFER", "VFLAT",
                        "VSCRATCH", "VGLOBAL", "VIMAGE", "VSAMPLE")
        for i, k in enumerate(keys):
            for _ in range(tries * (4 if heavy else 1)):
                words.append(build(enc, k, r))
                owners.append(i)
        texts = oracle.disassemble(words)
        ok = sorted({owners[j] for j, t in enumerate(texts) if t is not None})
        valid[enc] = [keys[i] for i in ok]
        print(f"{enc}: {len(ok)} of {len(keys)} opcode keys decode", file=sys.stderr)
    return valid


def mnemonic(text: str) -> str:
    return text.split()[0]


def roundtrip_true16(words: list[bytes]) -> list[str | None]:
    """oracle.roundtrip, plus the VOP3 words whose op_sel selects a high half: LLVM 19 disassembles them with
    `.l` halves that its assembler reads back without the op_sel bit. For those, simgpu's True16 text (`.h`
    on the halves op_sel selects) is offered to llvm-mc; the pair's text is llvm-mc's own print of it, kept
    when it assembles to the same bytes."""
    from simgpu.isa import DecodeError, decode
    arch = isatab.arch_name()
    texts = oracle.roundtrip(words)
    decodes = oracle.disassemble(words)
    retry = []
    for i, (w, t) in enumerate(zip(words, texts, strict=True)):
        if t is not None or decodes[i] is None:
            continue
        try:
            inst = decode(w, true16=True, arch=arch)
        except DecodeError:
            continue
        if inst.fields.get("op_sel") and ".h" in inst.text():
            retry.append((i, inst.text()))
    printed = oracle.assemble_printed([t for _, t in retry]) if retry else []
    for (i, _), p in zip(retry, printed, strict=True):
        # a print with an /*Invalid register*/ note is LLVM doubting its own operand: not golden
        if not isinstance(p, str) and p[1] == words[i] and "/*" not in p[0]:
            texts[i] = p[0]
    return texts


def key_forms(enc: str, key: dict[str, int]) -> tuple[set[str], dict]:
    """The forms (tools.isa_report) the codec's tables give an opcode key, and its VALU table entry ({} else)."""
    arch = isatab.arch_name()
    if enc in ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM"):
        e = scalar.tables(arch)[enc].get(str(key["op"]))
        return ({e["name"]} if e else set()), ({"ops": [["K", "lit"]]} if e and e.get("literal") else {})
    if enc == "VOPD":
        x, y = valu.vopd_half("x", key["opx"], arch=arch), valu.vopd_half("y", key["opy"], arch=arch)
        return ({f"x:{x['m']}", f"y:{y['m']}"} if x and y else set()), {}
    if enc in VALU_ENCODINGS:
        e = valu.entry(enc, key["op"], arch=arch) or {}
        return {e[k] for k in ("m", "dpp16", "dpp8", "sdwa") if k in e}, e
    if enc == "EXP":
        return {memory.exp_mnemonic(arch)}, {}
    kname = f"{key['seg']}.{key['op']}" if "seg" in key else str(key["op"])
    e = memory.tables(arch)["ops"][enc].get(kname)
    return ({e["m"]} if e else set()), {}


def fill(pairs: dict[bytes, str], encodings: list[str], r: random.Random, per_op: int, rounds: int) -> None:
    """Add pairs of the forms the tables know but `pairs` lacks: more random words (twice as many each round) for
    the opcode keys of those forms, with the fields the tables fix (v_cmpx_*_e64's vdst, VOP3P's op_sel_hi
    default, v_fmaak's literal) set more often."""
    known = isa_report.known_forms(isatab.arch_name())
    for enc in encodings:
        have: dict[str, int] = defaultdict(int)
        for w, t in pairs.items():
            if isatab.identify(int.from_bytes(w[:4], "little")) == enc:
                for f in isa_report.pair_forms(enc, t):
                    have[f] += 1
        added = 0
        for rnd in range(rounds):
            missing = known.get(enc, set()) - set(have)
            if not missing:
                break
            jobs = []
            for key in op_keys(enc):
                forms, e = key_forms(enc, key)
                if forms & missing:
                    jobs.append((key, e))
            words = []
            for key, e in jobs:
                fixed = {k: v for k, v in e.get("fixed", {}).items() if k != "op"}
                lit = any(o[1] == "lit" for o in e.get("ops", ()))
                for _ in range(8 << rnd):
                    over = dict(fixed)
                    if e.get("hidef") and r.random() < 0.7:
                        over |= {"op_sel_hi": 3, "op_sel_hi2": 1}
                    words.append(build(enc, key, r, over, lit))
            for w, t in zip(words, oracle.roundtrip(words), strict=True):
                if t is None or w in pairs:
                    continue
                new = [f for f in isa_report.pair_forms(enc, t) if f in missing and have[f] < per_op]
                if new:
                    pairs[w] = t
                    added += 1
                    for f in isa_report.pair_forms(enc, t):
                        have[f] += 1
        left = sorted(known.get(enc, set()) - set(have))
        print(f"{enc}: fill added {added} pairs; forms still without a pair: {len(left)} {' '.join(left[:12])}",
              file=sys.stderr)


def generate(per_op: int, seed: int, true16: bool = False, fill_rounds: int = 0) -> dict[bytes, str]:
    """Golden pairs: about `per_op` round-tripping instances of every decodable opcode key; then, with
    `fill_rounds`, pairs of the forms still missing (fill)."""
    r = random.Random(seed)
    encodings = list(VALU_ENCODINGS) if true16 else encoding_order()
    valid = discover(r, 24, encodings)
    pairs: dict[bytes, str] = {}
    for enc in encodings:
        keys = valid[enc]
        words = [build(enc, k, r) for k in keys for _ in range(per_op * 4)]
        texts = roundtrip_true16(words) if true16 else oracle.roundtrip(words)
        count: dict[str, int] = defaultdict(int)
        for w, t in zip(words, texts, strict=True):
            if t is None or w in pairs:
                continue
            m = mnemonic(t)
            if count[m] >= per_op:
                continue
            count[m] += 1
            pairs[w] = t
        print(f"{enc}: {sum(count.values())} pairs, {len(count)} mnemonics", file=sys.stderr)
    if fill_rounds and not true16:
        fill(pairs, encodings, r, per_op, fill_rounds)
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--per-op", type=int, default=20)
    ap.add_argument("--seed", type=int, default=None, help="default: the architecture's number (1100, 1201)")
    ap.add_argument("--true16", action="store_true", help="LLVM's True16 mode (-mattr=+real-true16)")
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument("--fill", type=int, default=None,
                    help="rounds of the fill phase for forms without a pair (default: 0 for gfx1100, whose golden "
                         "file predates it, 8 for other architectures)")
    isatab.arch_argument(ap)
    args = ap.parse_args()
    args.output = args.output or out_path(args.arch, args.true16)
    args.seed = int(args.arch[3:]) if args.seed is None else args.seed
    args.fill = (0 if args.arch == DEFAULT else 8) if args.fill is None else args.fill
    with isatab.target(args.arch):
        if args.true16:
            with oracle.features("+real-true16"):
                pairs = generate(args.per_op, args.seed, true16=True)
        else:
            pairs = generate(args.per_op, args.seed, fill_rounds=args.fill)
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    lines = sorted(f"{w.hex()}\t{t}\n" for w, t in pairs.items())
    with gzip.GzipFile(args.output, "wb", mtime=0) as f:
        f.write("".join(lines).encode())
    print(f"{len(lines)} pairs, {len({mnemonic(t) for t in pairs.values()})} mnemonics -> {args.output}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
