"""Dead-code elimination on machine IR before register allocation: an instruction whose results (virtual
registers) nothing reads is removed, until none is left. Selection computes some values that a fused or
offset-folded user never reads (an index `B + c` once the access reads B with offset c); this drops them.
Targets say which instructions must stay regardless (`keep`: stores, branches, waits, writes of named
registers such as EXEC or VCC, anything with a side effect)."""

from __future__ import annotations

from collections.abc import Callable

from compiler.backend.mir import MInst, Sub


def eliminate(code: list[MInst], keep: Callable[[MInst], bool]) -> list[MInst]:
    """Code without the instructions whose results are never read (module docstring)."""
    while True:
        read = {r for m in code for r, _ in m.vuses()}
        out = [m for m in code if keep(m) or not m.ndef or any(
            not isinstance(o, Sub) or o.reg in read for o in m.ops[:m.ndef])]
        if len(out) == len(code):
            return out
        code = out
