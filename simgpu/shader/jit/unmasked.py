"""Unmasked versions of blocks: a block's body a second time, for waves whose EXEC is all ones.

Every VALU write is a select under EXEC and every load a masked load or gather (lower.py). Where EXEC is a
mask register (AVX-512) that costs little; on AVX2 each use of EXEC first spreads its bits over vector
lanes (several instructions per 8 lanes), selects become blends, and LLVM splits masked loads and
gathers into a branch per lane. Most waves run with every lane active, so a block whose code reads EXEC
gets a second body: at block entry one compare of EXEC with all ones picks it, and in it the reads of
EXEC are the constant all ones up to the first instruction that may write EXEC (translate.writes_exec;
from there both bodies read the register, as the masked one always does). LLVM then folds the selects
away and turns masked loads and stores into plain ones (instcombine), and the lane-op counts into
constants.

The copy is the masked body's IR text with every name it defines renamed (SSA values and labels, `_u`
appended: Builder's names end in digits, so no name can clash). What it shares with the masked body is
what the function's entry defines: the register locals, the window hints, the helpers' buffers, and the
fused launch's site marks (a copy's access grows the same hull as the original's, so the order check
sees either). Exits and jumps through the entry switch are listed again for the copy's labels.
"""

from __future__ import annotations

import re

_NAME = re.compile(r"%([A-Za-z_.][\w.]*)")
_DEFINED = re.compile(r"^\s*%([\w.]+) = ", re.M)
_LABEL = re.compile(r"^([\w.]+):$", re.M)
SUFFIX = "_u"


def exec_slots(lanes: int) -> tuple[int, ...]:
    """The SGPR slots of EXEC that hold the wave's lanes (EXEC_LO; and EXEC_HI in wave64)."""
    return (126,) if lanes == 32 else (126, 127)


def reads_exec(lines: list[str], lanes: int) -> bool:
    """Whether IR lines read EXEC (a slot of exec_slots)."""
    loads = tuple(f"load i32, ptr %S{s}" for s in exec_slots(lanes))
    return any(line.endswith(loads) for line in lines)


def unmasked_copy(lines: list[str], constant_until: int, lanes: int) -> tuple[str, dict[str, str]]:
    """(the copy of a block body's `lines` for a wave with EXEC all ones, as one text; the renaming of its
    names): loads of EXEC in lines[:constant_until] become the constant -1 (all ones); names the lines define
    get SUFFIX."""
    loads = tuple(f"= load i32, ptr %S{s}" for s in exec_slots(lanes))
    head = [line.partition(" = ")[0] + " = add i32 -1, 0" if line.endswith(loads) else line
            for line in lines[:constant_until]]
    text = "\n".join(head + lines[constant_until:])
    rename = {n: n + SUFFIX for n in _DEFINED.findall(text)}
    rename.update((n, n + SUFFIX) for n in _LABEL.findall(text))
    text = _NAME.sub(lambda m: "%" + rename.get(m.group(1), m.group(1)), text)
    return _LABEL.sub(lambda m: rename[m.group(1)] + ":", text), rename


def renamed(value: str, rename: dict[str, str]) -> str:
    """An operand (`%name` or a constant) under the copy's renaming."""
    return _NAME.sub(lambda m: "%" + rename.get(m.group(1), m.group(1)), value)
