"""Generate gfx950's (CDNA4) golden (bytes, text) pairs from LLVM 22 (tools/llvm22.py): llvm-mc 19, which
tools/gen_isa_golden.py drives for the other architectures, does not know gfx950.

    PYTHONPATH=$PWD python -m tools.gen_isa_golden_gfx950 [--per-op N] [--seed S]

Two sources, both into tests/data/isa/gfx950_golden.tsv.gz ("hexbytes<TAB>text", sorted):
- compiled: every instruction llvmlite's LLVM 22 emits for the gfx950 IR kernels (tests/data/kernels/cdna4_*.ll, the
  float corpus vf_*.ll, saxpy.ll): the text as LLVM's printer writes it, the bytes of the same compile
  (tools.llvm22.compiled_pairs), for every opcode of the kernels, old and new;
- assembled: the line of each new instruction tools/isatab_gfx950.py names (TEMPLATES and FORM_LINES: the f8f6f4
  MFMAs' format widths, the scaled MFMAs) and the forms LINES names (the loads into LDS no intrinsic selects, the
  transposing reads into AccVGPRs, standalone v_mfma_ld_scale_b32s), with LLVM's bytes of it; and for each
  opcode gfx950 adds (the keys of simgpu/isa/data/gfx950/), N random words of its encoding
  (tools.gen_isa_golden.build: random fields, biased to valid operands, with DPP/SDWA dwords) that the codec decodes;
  the codec's text is assembled by Triton's LLVM, and the pair is kept when LLVM encodes it to the same word. A word
  LLVM encodes otherwise, or rejects, is judged against the gfx942 template's (`judged`); a disagreement is printed
  and fails the tool (exit 1). Words the codec does not decode are not judged (no LLVM here disassembles).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import sys

from simgpu.isa import DecodeError, assemble, decode
from simgpu.isa.arch import get_arch, table_path
from tools import gen_isa_golden, isatab, isatab_gfx950
from tools.llvm22 import assembler, compiled_pairs

ARCH = "gfx950"
KERNELS = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "kernels")


# forms the compiles do not hold: the signed sub-dword loads into LDS (no intrinsic selects them), the other
# operand forms of the loads into LDS, the transposing reads into AccVGPRs, v_mfma_ld_scale_b32 standing alone (an
# SGPR or constant scale, op_sel_hi's default ones); each as the codec prints LLVM's bytes of it
LINES = (
    "global_load_lds_sbyte v0, s[6:7] offset:4", "global_load_lds_sshort v[2:3], off",
    "global_load_lds_ubyte v[2:3], off offset:-8", "global_load_lds_ushort v1, s[2:3] offset:4095 sc0 nt sc1",
    "buffer_load_sbyte v1, s[0:3], 0 offen offset:8 lds", "buffer_load_sshort v0, s[4:7], s2 idxen lds",
    "buffer_load_ushort off, s[8:11], 0 lds", "buffer_load_dword v1, s[0:3], 0 offen offset:4095 lds",
    "ds_read_b64_tr_b4 a[2:3], v5 offset:64", "ds_read_b96_tr_b6 a[0:2], v3 offset:12",
    "v_mfma_ld_scale_b32 v20, 64", "v_mfma_ld_scale_b32 s4, v21", "v_mfma_ld_scale_b32 v20, v21",
    "v_mfma_ld_scale_b32 v20, v21 op_sel:[1,0] op_sel_hi:[0,1]", "v_mfma_ld_scale_b32 -1, 0.5",
)


def checked_lines(asm) -> set[tuple[bytes, str]]:
    """LINES with LLVM's bytes, each decoding to itself and assembling to them (SystemExit naming one that does
    not)."""
    out = set()
    for line in LINES:
        data = asm.encode(line)
        if data is None or decode(data, arch=ARCH).text() != line or assemble(line, arch=ARCH) != data:
            raise SystemExit(f"{line!r}: LLVM {data and data.hex()}, the codec does not print and assemble it alike")
        out.add((data, line))
    return out


def corpus_files() -> list[str]:
    names = sorted(n for n in os.listdir(KERNELS) if n.endswith(".ll") and (n.startswith(("cdna4_", "vf_")) or
                                                                            n == "saxpy.ll"))
    return [os.path.join(KERNELS, n) for n in names]


def compiled() -> set[tuple[bytes, str]]:
    pairs = set()
    for path in corpus_files():
        with open(path) as f:
            pairs |= set(compiled_pairs(f.read(), ARCH))
    return pairs


def new_keys() -> list[tuple[str, dict[str, int]]]:
    """(encoding, opcode fields) of every entry gfx950's table deltas add or change."""
    out = []
    for name in ("valu", "memory"):
        with open(table_path(ARCH, name)) as f:
            delta = json.load(f)
        for enc, ops in delta.get("ops", {}).items():
            for key in ops:
                if enc == "FLAT":
                    seg, op = key.split(".")
                    out.append((enc, {"seg": int(seg), "op": int(op)}))
                else:
                    out.append((enc, {"op": int(key)}))
    return out


def templates(asm) -> dict[tuple[str, str], tuple[str, str]]:
    """(encoding, key) of each new gfx950 opcode -> (encoding, key) of the gfx942 opcode its entry was made from."""
    out = {}
    for line, tmpl in isatab_gfx950.TEMPLATES.items():
        table = get_arch("gfx942").table("valu" if not line.startswith(("ds_", "global_", "buffer_")) else "memory")
        enc, key, _ = isatab_gfx950._find(table, tmpl)
        out[isatab_gfx950._key(asm.encode(line))] = (enc, key)
    mem = get_arch("gfx942").table("memory")
    word = isatab_gfx950._find(mem, "buffer_load_dword")  # the LDS forms gfx950 gives buffer_load_dwordx3/x4
    for name in isatab_gfx950.LDS_LOADS:
        enc, key, _ = isatab_gfx950._find(mem, name)
        out[(enc, key)] = word[:2]
    return out


def _as(word: bytes, enc: str, key: str) -> bytes:
    """`word` with its opcode fields set to gfx942's `key` (the template's opcode)."""
    layout = get_arch("gfx942").encodings[enc]
    f = layout.unpack(int.from_bytes(word[:layout.size], "little"))
    if enc == "FLAT":
        f["seg"], f["op"] = map(int, key.split("."))
    else:
        f["op"] = int(key)
    return layout.pack(f).to_bytes(layout.size, "little") + word[layout.size:]


def _llvm_agrees(asm, word: bytes, arch: str) -> tuple[str | None, bytes | None, str | None]:
    """(the codec's text of `word`, LLVM's bytes of that text, LLVM's error): text None when the codec refuses."""
    try:
        inst = decode(word, arch=arch)
        text = inst.text()
    except (DecodeError, ValueError):
        return None, None, None
    got = asm.encode(text)
    return text, got, None if got is not None else asm.error(text)


def judged(words: list[bytes], asm, tmpl) -> tuple[list[tuple[bytes, str]], list[tuple[str, str, str]], int]:
    """(pairs LLVM agrees with, disagreements (bytes, codec text, LLVM's bytes or error), words not judged) of the
    words the codec decodes. A word whose print LLVM encodes otherwise (or rejects) is judged by its control: the
    same word with the gfx942 template's opcode, printed by the codec for gfx942 and assembled by LLVM 22 for
    gfx942. When the control fares alike the word is not canonical, or LLVM 22 differs from the LLVM 19 the gfx942
    tables were made with: not gfx950's difference, not judged; likewise when LLVM and the codec assemble the print
    alike (the word has bits set that neither prints: a modifier of the template that LLVM refuses for the new
    opcode), and when it names an odd-aligned register tuple (_odd_tuple). Otherwise the new entry is wrong: a
    disagreement."""
    asm942 = assembler("gfx942")
    keep, bad, skipped = [], [], 0
    for w in words:
        text, got, err = _llvm_agrees(asm, w, ARCH)
        if text is None:
            continue
        size = decode(w, arch=ARCH).size
        w = w[:size]
        if got == w:
            keep.append((w, text))
            continue
        if _odd_tuple(text):  # LLVM 22 requires even-aligned register tuples on gfx950; the codec prints them
            skipped += 1
            continue
        enc, key = isatab_gfx950._key(w)
        lds = enc == "MUBUF" and get_arch(ARCH).encodings[enc].unpack(int.from_bytes(w, "little"))["lds"]
        control_key = tmpl.get((enc, key))
        if enc == "MUBUF" and not lds and key in get_arch("gfx942").table("memory")["ops"][enc]:
            control_key = (enc, key)  # buffer_load_dwordx3/x4 but not their new LDS forms: gfx942's own
        control = _as(w, *control_key) if control_key else None
        ctext, cgot, cerr = _llvm_agrees(asm942, control, "gfx942") if control else (None, None, None)
        if ctext is not None and cgot != control:
            skipped += 1
            continue
        if got is not None and assemble(text, arch=ARCH) == got:  # bits the codec does not print, LLVM neither
            skipped += 1
            continue
        bad.append((w.hex(), text, got.hex() if got is not None else err))
    return keep, bad, skipped


def _odd_tuple(text: str) -> bool:
    """Whether an instruction names a register tuple starting at an odd register (LLVM 22 refuses those for gfx950,
    LLVM 19, whose gfx942 tables the codec follows, accepted them: not gfx950's difference, not judged)."""
    return any(int(a) % 2 and int(b) > int(a) for a, b in re.findall(r"[vsa]\[(\d+):(\d+)\]", text))


def random_words(per_op: int, r: random.Random) -> list[bytes]:
    words = []
    with isatab.target(ARCH):
        for enc, key in new_keys():
            words += [gen_isa_golden.build(enc, dict(key), r) for _ in range(per_op)]
    return words


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-op", type=int, default=60)
    ap.add_argument("--seed", type=int, default=950)
    args = ap.parse_args()
    asm = assembler(ARCH)
    comp = compiled()
    keep, bad, skipped = judged(random_words(args.per_op, random.Random(args.seed)), asm, templates(asm))
    for b in bad[:40]:
        print("disagree", *b, file=sys.stderr)
    lines = {(asm.encode(line), line) for line in (*isatab_gfx950.TEMPLATES, *isatab_gfx950.FORM_LINES)}  # each new
    # form as the tables' tool wrote it
    pairs = sorted(comp | set(keep) | lines | checked_lines(asm))
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "isa", f"{ARCH}_golden.tsv.gz")
    text = "".join(f"{d.hex()}\t{t}\n" for d, t in pairs)
    with open(path, "wb") as f:
        f.write(gzip.compress(text.encode(), mtime=0))  # no timestamp: the same pairs, the same bytes
    new = {t.split()[0] for _, t in keep}
    print(json.dumps({"llvm": asm.revision, "compiled": len(comp), "assembled": len(keep), "disagree": len(bad),
                      "not judged": skipped, "pairs": len(pairs), "new mnemonics": len(new)}))
    if bad:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
