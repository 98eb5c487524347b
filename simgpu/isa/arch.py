"""The architectures the codec knows, and the generated tables of each.

An `Arch` names a processor (what llvm-mc's -mcpu takes), its encoding layouts (encodings.py) and where its
tables live. gfx1100 is the default: its tables are data/scalar.json, valu.json and memory.json. gfx1201 stores
only its differences from gfx1100's (data/gfx1201/<table>.json, made by the same generators with --arch gfx1201,
see tools/isatab.py): a delta is a JSON object mirroring the base table, whose key "~" lists the keys this
architecture drops at that level, whose objects recurse into the base's objects and whose other values replace
the base's. Every function of the codec takes `arch` (a name, an Arch, or None for the default, gfx1100).

gfx942 (CDNA3, family gfx9) stores its tables whole (data/gfx942/), a base of their own: gfx9's opcode numbers
differ from gfx11's in every encoding (s_mov_b32 is SOP1 0 there, 0 is s_mov_b32 here but VOP1 1 is v_mov_b32
on both, v_add_f32 is VOP2 1 / 3, ...), so a delta of gfx1100's tables would replace nearly every entry and list
all of gfx1100's as dropped: larger than the table, and no clearer about what the two share.

gfx950 (CDNA4) stores its differences from gfx942's tables (data/gfx950/): the opcodes CDNA4 adds. LLVM 19's llvm-mc
does not know gfx950, so they are not probed as gfx942's were: tools/isatab_gfx950.py writes them from gfx942's
entries of the same operand shape and checks each against LLVM 22's assembler (docs/isa.md, "gfx950").
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache

from .encodings import ENCODING_SETS, Encoding, identify

DATA = os.path.join(os.path.dirname(__file__), "data")
DEFAULT = "gfx1100"
DELETED = "~"  # in a delta: the keys of the base object this architecture drops


@dataclass(frozen=True)
class Arch:
    """One processor the codec decodes and assembles for."""

    name: str  # llvm-mc's -mcpu
    family: str  # "gfx11", "gfx12", "gfx9": the encoding set (encodings.ENCODING_SETS)
    delta: str | None  # subdirectory of data/ with this architecture's tables; None: data/ itself
    base: str | None = None  # the architecture whose tables the stored ones are deltas of; None: stored whole
    encodings: dict[str, Encoding] = field(init=False, repr=False, compare=False)  # encoding name -> layout

    def __post_init__(self) -> None:
        object.__setattr__(self, "encodings", ENCODING_SETS[self.family][0])

    def identify(self, dword0: int) -> str | None:
        """Name of the encoding a first dword belongs to, or None when none of this architecture's matches."""
        return identify(dword0, self.family)

    def table(self, name: str) -> dict:
        """The generated table `name` (scalar, valu, memory) of this architecture, deltas applied."""
        return _table(self.name, name)


ARCHES: dict[str, Arch] = {a.name: a for a in (
    Arch("gfx1100", "gfx11", None),
    Arch("gfx1201", "gfx12", "gfx1201", DEFAULT),
    Arch("gfx942", "gfx9", "gfx942"),
    Arch("gfx950", "gfx9", "gfx950", "gfx942"),
)}


def get_arch(arch: str | Arch | None = None) -> Arch:
    """The Arch of a name (None: the default, gfx1100)."""
    a = ARCHES.get(arch or DEFAULT)  # the common case first: a name (on the decoder's path)
    if a is not None:
        return a
    if isinstance(arch, Arch):
        return arch
    raise ValueError(f"unknown architecture {arch!r}; the codec knows {', '.join(ARCHES)}")


def apply_delta(base: dict, delta: dict) -> dict:
    """`base` with `delta` applied (see the module doc); neither is modified."""
    out = {k: v for k, v in base.items() if k not in delta.get(DELETED, ())}
    for k, v in delta.items():
        if k == DELETED:
            continue
        out[k] = apply_delta(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def make_delta(base: dict, full: dict) -> dict:
    """The delta that turns `base` into `full` (apply_delta(base, make_delta(base, full)) == full)."""
    out: dict = {}
    gone = sorted(k for k in base if k not in full)
    if gone:
        out[DELETED] = gone
    for k, v in full.items():
        if k not in base or base[k] != v:
            out[k] = make_delta(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def table_path(arch: str | Arch | None, name: str) -> str:
    """Where the table `name` of an architecture is stored (the base table, or the architecture's delta)."""
    a = get_arch(arch)
    return os.path.join(DATA, *([a.delta] if a.delta else []), f"{name}.json")


@cache
def _table(arch: str, name: str) -> dict:
    a = get_arch(arch)
    with open(table_path(a, name)) as f:
        stored = json.load(f)
    return stored if a.base is None else apply_delta(_table(a.base, name), stored)
