"""Copy coalescing on machine IR before register allocation: a copy `d <- t` disappears when t can be d from its
definition on (t renamed to d), which is what makes an accumulator update `acc = acc + x` one instruction.

Conditions, checked per register unit: t is defined only in the straight-line stretch ending at the copy (no
label between its first definition and the copy), t is not read after the copy, d is neither written in that
stretch nor read there after the unit it maps to was written (an instruction that reads d and writes t in one
step is fine: sources are read first, unless it is 'early'), the copies cover t whole, and neither register is
precolored. Targets say what a copy is.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.backend.mir import MInst, Sub, VReg

CopyOf = Callable[[MInst], tuple[Sub, Sub] | None]


def _occurrences(code: list[MInst]) -> dict[VReg, list[int]]:
    occ: dict[VReg, list[int]] = {}
    for i, m in enumerate(code):
        for o in m.ops:
            if isinstance(o, Sub):
                lst = occ.setdefault(o.reg, [])
                if not lst or lst[-1] != i:
                    lst.append(i)
    return occ


def coalesce(code: list[MInst], copy_of: CopyOf) -> list[MInst]:
    """Code with removable copies removed and their sources renamed (module docstring)."""
    code = list(code)
    occ = _occurrences(code)
    dead: set[int] = set()
    i = 0
    while i < len(code):
        c = copy_of(code[i])
        if c is None:
            i += 1
            continue
        d, t = c
        group = [i]
        j = i + 1
        while j < len(code):  # the other copies of a multi-register value
            c2 = copy_of(code[j])
            if c2 is None or c2[0].reg is not d.reg or c2[1].reg is not t.reg:
                break
            group.append(j)
            j += 1
        if _try(code, occ, group, copy_of):
            dead.update(group)
        i = j
    return [m for k, m in enumerate(code) if k not in dead]


def _try(code: list[MInst], occ: dict[VReg, list[int]], group: list[int], copy_of: CopyOf) -> bool:
    pairs = [copy_of(code[k]) for k in group]
    d, t = pairs[0][0].reg, pairs[0][1].reg
    if d is t or d.fixed is not None or t.fixed is not None or d.rc != t.rc or d.size != t.size or d.whole or t.whole:
        return False
    delta = pairs[0][0].off - pairs[0][1].off
    covered = set()
    for dd, tt in pairs:
        if dd.off - tt.off != delta or dd.n != tt.n or dd.neg or dd.abs or tt.neg or tt.abs:
            return False
        covered.update(tt.units())
    if delta != 0 or covered != set(range(t.size)):
        return False
    last = group[-1]
    t_occ = occ.get(t, [])
    if not t_occ or t_occ[-1] > last:
        return False  # t is read later
    first = t_occ[0]
    written: set[int] = set()
    for k in range(first, group[0]):
        m = code[k]
        if m.is_label() or m.target is not None:
            return False
        reads_d = set()
        for o in (m.ops if m.rmw else m.ops[m.ndef:]):
            if isinstance(o, Sub) and o.reg is d:
                reads_d.update(o.units())
        if reads_d & written or (reads_d and "early" in m.flags and any(
                isinstance(o, Sub) and o.reg is t for o in m.ops[:m.ndef])):
            return False
        for o in m.ops[:m.ndef]:
            if isinstance(o, Sub):
                if o.reg is d:
                    return False
                if o.reg is t:
                    written.update(o.units())
        if k == first and not written:
            return False  # t is read before it is written here: it holds a value from elsewhere
    for k in t_occ:
        code[k] = _rename(code[k], t, d)
    occ.setdefault(d, [])
    occ[d] = sorted(set(occ[d]) | set(t_occ))
    occ[t] = []
    return True


def _rename(m: MInst, old: VReg, new: VReg) -> MInst:
    ops = [Sub(new, o.off, o.n, o.neg, o.abs) if isinstance(o, Sub) and o.reg is old else o for o in m.ops]
    return MInst(m.op, ops, m.ndef, m.mods, m.target, m.flags, m.rmw, m.comment)
