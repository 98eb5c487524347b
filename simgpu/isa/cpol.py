"""gfx12's cache-policy modifiers: the th (temporal hint) and scope fields of SMEM and the VMEM encodings,
printed `th:TH_LOAD_NT scope:SCOPE_SYS`.

How llvm spells a th value depends on the instruction (load, store or atomic names) and on the scope (th 3
with SCOPE_SYS is TH_LOAD_BYPASS, not TH_LOAD_LU), so the generated tables hold, per kind of instruction, the
printed th of every (th, scope) pair: names["cpol"]["th"][kind][4 * th + scope] ("" where no th: is printed)
and names["cpol"]["scope"][scope]. An entry's "th" is the index of its kind.
"""

from __future__ import annotations

from .errors import AsmError


def format_cpol(names: dict, kind: int, th: int, scope: int) -> list[str]:
    """The th:/scope: modifier tokens of these field values."""
    out = []
    text = names["th"][kind][4 * th + scope]
    if text:
        out.append(f"th:{text}")
    if scope:
        out.append(f"scope:{names['scope'][scope]}")
    return out


def parse_cpol(names: dict, kind: int, toks: list[str], ctx) -> tuple[list[str], int, int]:
    """(the other tokens, th, scope) of an operand list with th:/scope: modifiers (absent: 0)."""
    rest, th_text, scope = [], None, 0
    for tok in toks:
        if tok.startswith("scope:"):
            scope = _index(names["scope"], tok[6:], tok, ctx)
        elif tok.startswith("th:"):
            th_text = tok[3:]
        else:
            rest.append(tok)
    if th_text is None:
        return rest, 0, scope
    row = names["th"][kind]
    for th in range(len(row) // 4):
        if row[4 * th + scope] == th_text:
            return rest, th, scope
    raise AsmError("th value not valid for this instruction and scope", line=ctx.line, column=ctx.column,
                   token=f"th:{th_text}")


def _index(names: list[str], text: str, tok: str, ctx) -> int:
    if text in names and text:
        return names.index(text)
    try:
        v = int(text, 0)
    except ValueError:
        v = -1
    if not 0 <= v < len(names):
        raise AsmError("unknown scope", line=ctx.line, column=ctx.column, token=tok)
    return v
