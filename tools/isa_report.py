"""Report how many golden pairs the codec gets right, per encoding, with sample failures, and how much of
llvm-mc's instruction set the golden pairs cover.

    python -m tools.isa_report [ENCODING ...] [--arch gfx1201] [--show N]
    python -m tools.isa_report --diff gfx1100 gfx1201     # forms per encoding: shared, only in one

Per encoding: pairs the codec decodes, prints, re-encodes and assembles exactly as llvm-mc does / golden pairs;
then forms covered / forms llvm-mc decodes. A form is a mnemonic as llvm-mc prints it (v_add_f32_e32,
v_add_f32_e64_dpp, ...; a VOPD half counts as x:/y: plus its mnemonic); the forms llvm-mc decodes are those of
the codec's tables, which tools/isatab_* found by disassembling every opcode value of every encoding. A form is
covered when the golden file has a pair of it and every pair of it agrees. With --show, the forms not covered
are listed.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from simgpu.isa.arch import DEFAULT, get_arch
from simgpu.isa.memory import exp_mnemonic
from simgpu.isa.memory import tables as memory_tables
from simgpu.isa.scalar import tables as scalar_tables
from simgpu.isa.valu import tables as valu_tables
from tests.support.isa_golden import check_pair, pairs_by_encoding

SCALAR = ("SOP1", "SOP2", "SOPC", "SOPK", "SOPP", "SMEM")


def known_forms(arch: str = DEFAULT) -> dict[str, set[str]]:
    """Encoding -> every form (mnemonic) llvm-mc decodes, from the codec's tables (llvm-mc's default mode)."""
    out: dict[str, set[str]] = defaultdict(set)
    st = scalar_tables(arch)
    for enc in SCALAR:
        out[enc] |= {e["name"] for e in st[enc].values()}
    vt = valu_tables(arch)
    for enc, entries in vt["ops"].items():
        for e in entries.values():
            # a VOP3 opcode with a scalar destination is still VOP3 by its fixed bits
            out[enc] |= {e[k] for k in ("m", "dpp16", "dpp8", "sdwa") if k in e}
    for side in ("x", "y"):
        if vt["vopd"][side]:  # gfx942 has no VOPD
            out["VOPD"] |= {f"{side}:{e['m']}" for e in vt["vopd"][side].values()}
    mt = memory_tables(arch)
    for enc, entries in mt["ops"].items():
        out[enc] |= {e["m"] for e in entries.values()}
    if "EXP" in get_arch(arch).encodings:  # gfx942 has no exports
        out["EXP"] = {exp_mnemonic(arch)}
    return dict(out)


def pair_forms(enc: str, text: str) -> list[str]:
    """The forms a golden pair's text shows (two for a VOPD pair)."""
    if enc == "VOPD":
        x, y = text.split(" :: ")
        return [f"x:{x.split()[0]}", f"y:{y.split()[0]}"]
    return [text.split()[0]]


def coverage(arch: str = DEFAULT, encodings: list[str] | None = None) -> list[tuple[str, int, int, set, set, list]]:
    """Per encoding: (name, pairs that agree, pairs, forms covered, forms known, failures)."""
    known = known_forms(arch)
    by_enc = pairs_by_encoding(arch=arch)
    rows = []
    for enc in sorted(set(known) | set(by_enc)):
        if encodings and enc not in encodings:
            continue
        pairs = by_enc.get(enc, [])
        fails = [(d, t, why) for d, t in pairs if (why := check_pair(d, t, arch=arch))]
        seen, bad = set(), set()
        for _, t in pairs:
            seen.update(pair_forms(enc, t))
        for _, t, _ in fails:
            bad.update(pair_forms(enc, t))
        rows.append((enc, len(pairs) - len(fails), len(pairs), (seen - bad) & known.get(enc, set()),
                     known.get(enc, set()), fails))
    return rows


def diff(a: str, b: str, show: int) -> None:
    """Per encoding: forms both architectures' tables have, and those only one has."""
    fa, fb = known_forms(a), known_forms(b)
    print(f"{'encoding':9s} {'shared':>6s} {'only ' + a:>13s} {'only ' + b:>13s}")
    for enc in sorted(set(fa) | set(fb)):
        x, y = fa.get(enc, set()), fb.get(enc, set())
        print(f"{enc:9s} {len(x & y):6d} {len(x - y):13d} {len(y - x):13d}")
        for name, only in ((a, x - y), (b, y - x)):
            if only and show:
                names = sorted(only)
                print(f"    only {name}: {' '.join(names[:show * 8])}{' ...' if len(names) > show * 8 else ''}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("encodings", nargs="*")
    ap.add_argument("--arch", default=DEFAULT)
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("--diff", nargs=2, metavar=("ARCH_A", "ARCH_B"))
    args = ap.parse_args()
    if args.diff:
        diff(get_arch(args.diff[0]).name, get_arch(args.diff[1]).name, args.show)
        return
    arch = get_arch(args.arch).name
    tot_ok = tot = cov = kn = 0
    print(f"{arch}: pairs agreeing / golden pairs, forms covered / forms llvm-mc decodes")
    for enc, ok, n, covered, known, fails in coverage(arch, args.encodings):
        tot_ok, tot, cov, kn = tot_ok + ok, tot + n, cov + len(covered), kn + len(known)
        print(f"{enc:8s} {ok:6d}/{n:<6d}  forms {len(covered):4d}/{len(known):<4d}")
        for d, t, why in fails[:args.show]:
            print(f"    {d.hex():24s} {t}\n        -> {why}")
        missing = sorted(known - covered)
        if missing and args.show:
            more = " ..." if len(missing) > args.show * 8 else ""
            print(f"    not covered: {' '.join(missing[:args.show * 8])}{more}")
    print(f"total    {tot_ok}/{tot} pairs ({100 * tot_ok / max(tot, 1):.2f}%), "
          f"forms {cov}/{kn} ({100 * cov / max(kn, 1):.2f}%)")


if __name__ == "__main__":
    main()
