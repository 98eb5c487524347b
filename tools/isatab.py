"""What the isatab_* generators share: the architecture a run probes, where simgpu's codec tables live and how a
table is written (whole for gfx1100 and gfx942; as its differences from its base for gfx1201, see
simgpu/isa/arch.py).

    python -m tools.isatab bits [--arch gfx1201] 'global_load_b32 v4, v1, s[8:9] offset:-8'

prints what llvm-mc makes of the instruction with each of its bits flipped: how the encoding layouts of
simgpu/isa/encodings.py were checked.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from simgpu.isa.arch import DEFAULT, get_arch, make_delta, table_path
from tools import oracle

ARCH = [DEFAULT]  # the architecture the generators probe (set by `target`)


def arch_name() -> str:
    return ARCH[0]


def layouts() -> dict:
    """Encoding name -> layout of the architecture being probed."""
    return get_arch(ARCH[0]).encodings


def identify(dword0: int) -> str | None:
    return get_arch(ARCH[0]).identify(dword0)


@contextlib.contextmanager
def target(arch: str):
    """Probe `arch` (llvm-mc -mcpu) and write its tables inside the block."""
    saved = ARCH[0]
    ARCH[0] = get_arch(arch).name
    try:
        with oracle.target(ARCH[0]):
            yield
    finally:
        ARCH[0] = saved


def arch_argument(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--arch", default=DEFAULT, help="the architecture to probe (llvm-mc -mcpu), default gfx1100")


def base_of() -> str | None:
    """The architecture whose tables the probed architecture's are stored as deltas of (None: stored whole)."""
    return get_arch(ARCH[0]).base


def base_table(name: str) -> dict:
    """The base architecture's table `name` as stored."""
    with open(table_path(base_of() or DEFAULT, name)) as f:
        return json.load(f)


def write_table(name: str, tables: dict, indent: int | None = None) -> None:
    """Write generated table `name` of the architecture being probed as key-sorted JSON (compact unless `indent`
    is given): the whole table for the base architecture, its delta from the base table for another."""
    path = table_path(ARCH[0], name)
    if base_of() is not None:
        tables = make_delta(base_table(name), json.loads(json.dumps(tables)))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(tables, f, indent=indent, separators=(",", ":") if indent is None else None, sort_keys=True)
        f.write("\n")
    print(f"{os.path.getsize(path)} bytes -> {path}", file=sys.stderr)


def bits(line: str) -> None:
    """Print llvm-mc's text for the assembled `line` with each bit flipped (None: not one valid instruction)."""
    r = oracle.assemble_printed([line])[0]
    if isinstance(r, str):
        raise SystemExit(r)
    text, data = r
    word = int.from_bytes(data, "little")
    flipped = [(word ^ (1 << b)).to_bytes(len(data), "little") for b in range(8 * len(data))]
    print(f"{data.hex()}  {text}")
    for b, (w, out) in enumerate(zip(flipped, oracle.probe_outputs(flipped), strict=True)):
        note = "" if out is None or out[1] == w else f"   [re-encodes as {out[1].hex()}]"
        print(f"bit {b:3d}: {out[0] if out else None}{note}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["bits"])
    ap.add_argument("line")
    arch_argument(ap)
    args = ap.parse_args()
    with target(args.arch):
        bits(args.line)


if __name__ == "__main__":
    main()
