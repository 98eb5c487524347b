"""Loading the golden pairs of an architecture (made by llvm-mc; regenerate: python -m tools.gen_isa_golden
[--arch gfx1201] [--true16])."""

from __future__ import annotations

import gzip
import os
from collections import defaultdict
from functools import cache

from simgpu.isa.arch import DEFAULT, get_arch
from tests import DATA

GOLDEN = os.path.join(DATA, "isa", "gfx1100_golden.tsv.gz")
# llvm-mc with -mattr=+real-true16 (regenerate: python -m tools.gen_isa_golden --true16)
GOLDEN16 = os.path.join(DATA, "isa", "gfx1100_true16_golden.tsv.gz")


def golden_path(arch: str = DEFAULT, true16: bool = False) -> str:
    """The golden file of an architecture (its True16 one when `true16`)."""
    return os.path.join(DATA, "isa", f"{arch}{'_true16' if true16 else ''}_golden.tsv.gz")


@cache
def golden_pairs(true16: bool = False, arch: str = DEFAULT) -> list[tuple[bytes, str]]:
    """Every (bytes, text) pair of the golden file (the True16 one when `true16`)."""
    with gzip.open(golden_path(arch, true16), "rt") as f:
        rows = [line.rstrip("\n").split("\t", 1) for line in f]
    return [(bytes.fromhex(h), t) for h, t in rows]


@cache
def pairs_by_encoding(true16: bool = False, arch: str = DEFAULT) -> dict[str, list[tuple[bytes, str]]]:
    """The golden pairs grouped by the encoding of their first dword."""
    out: dict[str, list[tuple[bytes, str]]] = defaultdict(list)
    a = get_arch(arch)
    for data, text in golden_pairs(true16, arch):
        out[a.identify(int.from_bytes(data[:4], "little")) or "?"].append((data, text))
    return dict(out)


def check_pair(data: bytes, text: str, true16: bool = False, arch: str = DEFAULT) -> str | None:
    """None when the codec agrees with LLVM on this pair (in LLVM's True16 mode when `true16`), else
    what differs."""
    from simgpu.isa import assemble, decode, fetch_size
    try:
        inst = decode(data, true16=true16, arch=arch)
        got = inst.text()
    except Exception as e:  # noqa: BLE001 - a report, not control flow
        return f"decode: {type(e).__name__}: {e}"
    if inst.size != len(data):
        return f"size {inst.size} != {len(data)}"
    fetch = fetch_size(int.from_bytes(data[:4], "little"), arch)
    if fetch < inst.size:  # the shader engine fetches that many bytes
        return f"fetch_size {fetch} < size {inst.size}"
    if got != text:
        return f"text {got!r} != {text!r}"
    if inst.encode() != data:
        return f"encode {inst.encode().hex()} != {data.hex()}"
    try:
        back = assemble(text, arch=arch)
    except Exception as e:  # noqa: BLE001
        return f"assemble: {type(e).__name__}: {e}"
    if back != data:
        return f"assemble {back.hex()} != {data.hex()}"
    return None


def _opkeys(enc: str, arch: str) -> list[tuple]:
    """The opcode fields (op, seg, opx, opy: those the encoding has) of every golden pair of encoding `enc`."""
    layout = get_arch(arch).encodings[enc]
    keys = set()
    for data, _ in pairs_by_encoding(arch=arch)[enc]:
        f = layout.unpack(int.from_bytes(data[:layout.size], "little"))
        keys.add(tuple(sorted((k, f[k]) for k in ("op", "seg", "opx", "opy") if k in f)))
    return sorted(keys)


def check_fresh_random_words(enc: str, arch: str = DEFAULT, count: int = 1000) -> None:
    """`count` fresh random words of encoding `enc` (random fields, opcodes seen in the golden set), a new draw each
    call (the seed is in the failure message): those llvm-mc decodes and re-assembles to the same bytes must agree
    with the codec (check_pair); at least 10 must be kept. Needs llvm-mc (the caller skips without it)."""
    import random

    from tools import gen_isa_golden, isatab, oracle
    r = random.Random()
    seed = r.randrange(1 << 30)
    r.seed(seed)
    with isatab.target(arch):
        keys = _opkeys(enc, arch)
        words = [gen_isa_golden.build(enc, dict(r.choice(keys)), r) for _ in range(count)]
        texts = oracle.roundtrip(words)
    kept = [(w, t) for w, t in zip(words, texts, strict=True) if t is not None]
    assert len(kept) >= 10, f"seed {seed}: only {len(kept)} words kept"
    fails = [(w.hex(), t, why) for w, t in kept if (why := check_pair(w, t, arch=arch))]
    assert not fails, f"seed {seed}: {len(fails)}/{len(kept)} differ, e.g. {fails[:3]}"


def check_form_coverage(arch: str = DEFAULT) -> None:
    """Every form (mnemonic as printed) of every opcode llvm-mc decodes for `arch`, as the table sweep found them,
    has golden pairs (with the pairs' agreement: tools.isa_report's 100% form coverage)."""
    from tools.isa_report import known_forms, pair_forms
    for enc, known in known_forms(arch).items():
        seen = {f for _, t in pairs_by_encoding(arch=arch).get(enc, []) for f in pair_forms(enc, t)}
        assert known <= seen, f"{enc}: no golden pair of {sorted(known - seen)[:10]}"
