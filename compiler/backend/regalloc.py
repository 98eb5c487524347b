"""Linear-scan register allocation over machine IR (compiler.backend.mir), parametrised by register classes.

A target describes each register file with a `RegFile`: how many registers it has (minus reserved ones), how a
tuple of n registers must be aligned, and how to spill: `spill(reg, slot, units)` and `reload(reg, slot, units)`
build the store after a definition and the load before a use. Classes are allocated in the order given, so a
class whose spills need registers of another (SGPRs spilled into VGPR lanes) comes first.

Live intervals are computed on the linear order: from the first definition to the last use, in half steps (a
use at 2i, a definition at 2i+1, so an instruction may write the register its last use read; an 'early'
instruction's definitions start at 2i and may not). A loop is the range from a label to a backward branch to
it; a register live into the loop (defined before it and used inside) stays live to the branch, because the
next iteration reads it again. Nested loops are extended from the inside out.

Scan: intervals by start; expired ones free their registers; the current one takes the lowest aligned block of
free registers that no fixed-register interval (the hardware's inputs: kernel arguments, work-item ids) occupies
at any point of its own interval: a register live through the whole kernel (SGPR spill lanes) starts before the
entry defines the work-item id in v0, and must not be given v0. When none is free, the interval that ends last
among the active ones and the current one is spilled (tuples: as many as it takes). Spilled registers are
rewritten, each definition followed by a store and each use preceded by a reload into a short-lived register
that is never spilled, and the scan runs again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from compiler.backend.mir import MInst, RegFactory, Sub, VReg


@dataclass
class RegFile:
    """One register class of a target (module docstring)."""

    name: str
    count: int  # allocatable registers 0..count-1
    align: Callable[[int], int]  # tuple size -> alignment of its first register
    spill: Callable[[Sub, int], list[MInst]]  # (register part, slot) -> store instructions
    reload: Callable[[Sub, int], list[MInst]]  # (register part, slot) -> load instructions
    slot_units: int = 1  # slot numbers per register of this class
    reserved: frozenset = frozenset()


@dataclass
class Allocation:
    """The result: code with spill code inserted (registers carry .phys), registers used per class, spill
    slots per class."""

    code: list[MInst]
    used: dict[str, int] = field(default_factory=dict)  # highest register index used + 1
    slots: dict[str, int] = field(default_factory=dict)
    spilled: dict[str, int] = field(default_factory=dict)  # registers spilled (count of virtual registers)


class AllocationError(Exception):
    """No allocation exists (an instruction needs more registers of a class than the file has)."""


def loops(code: list[MInst]) -> list[tuple[int, int]]:
    """(label index, backward branch index) of every loop, innermost first."""
    where = {m.target: i for i, m in enumerate(code) if m.is_label()}
    out = [(where[m.target], i) for i, m in enumerate(code)
           if m.target is not None and not m.is_label() and m.target in where and where[m.target] < i]
    return sorted(out, key=lambda r: r[1] - r[0])


def intervals(code: list[MInst], rc: str) -> dict[VReg, list[int]]:
    """[start, end] in half steps of every virtual register of class rc (module docstring)."""
    span: dict[VReg, list[int]] = {}
    for i, m in enumerate(code):
        for r, _ in m.vuses():
            if r.rc == rc:
                s = span.get(r)
                if s is None:
                    span[r] = [2 * i, 2 * i]
                else:
                    s[1] = 2 * i
        early = "early" in m.flags
        for r, _ in m.vdefs():
            if r.rc == rc:
                d = 2 * i + (0 if early else 1)
                s = span.get(r)
                if s is None:
                    span[r] = [d, d]
                else:
                    s[0], s[1] = min(s[0], d), max(s[1], d)
    last = 2 * len(code)
    for r, s in span.items():
        if r.whole:
            s[0], s[1] = 0, last
    changed = True
    rng = loops(code)
    while changed:  # a loop extension may make a register live into an enclosing loop
        changed = False
        for lo, hi in rng:
            a, b = 2 * lo, 2 * hi
            for s in span.values():
                if s[0] < a <= s[1] < b:
                    s[1] = b
                    changed = True
    return span


def _scan(span: dict[VReg, list[int]], rf: RegFile) -> tuple[dict[VReg, int], list[VReg], int]:
    """Assign registers; returns (assignment, registers to spill, registers used)."""
    n = rf.count
    owner_end = [-1] * n  # end of the interval occupying each register
    for r in rf.reserved:
        owner_end[r] = 1 << 60
    assign: dict[VReg, int] = {}
    active: list[VReg] = []
    spill: list[VReg] = []
    used = 0
    pinned = _pinned(span, n)
    order = sorted(span, key=lambda r: (span[r][0], r.fixed is None, -r.size, r.id))
    for r in order:
        start, end = span[r]
        if r.fixed is not None:
            base = r.fixed
        else:
            base = _find(owner_end, start, end, r.size, rf.align(r.size), pinned)
            while base is None:
                victims = [a for a in active if a.fixed is None and not a.no_spill and span[a][1] >= start]
                cand = max(victims, key=lambda a: (span[a][1], a.size), default=None)
                if cand is None or (not r.no_spill and span[cand][1] <= end):
                    if r.no_spill:
                        raise AllocationError(f"class {rf.name}: no {r.size} free registers at {start // 2}")
                    spill.append(r)
                    break
                spill.append(cand)
                active.remove(cand)
                b = assign.pop(cand)
                for k in range(b, b + cand.size):
                    owner_end[k] = -1
                base = _find(owner_end, start, end, r.size, rf.align(r.size), pinned)
            if base is None:
                continue
        assign[r] = base
        active.append(r)
        for k in range(base, base + r.size):
            owner_end[k] = end
        used = max(used, base + r.size)
    return assign, spill, used


def _pinned(span: dict[VReg, list[int]], n: int) -> list[list[tuple[int, int]]]:
    """Per physical register, the intervals of the fixed registers that occupy it."""
    out: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for r, (s, e) in span.items():
        if r.fixed is not None:
            for k in range(r.fixed, min(r.fixed + r.size, n)):
                out[k].append((s, e))
    return out


def _find(owner_end: list[int], start: int, end: int, size: int, align: int,
          pinned: list[list[tuple[int, int]]]) -> int | None:
    """The lowest aligned block of size registers free over [start, end]."""
    n = len(owner_end)
    b = 0
    while b + size <= n:
        for k in range(b, b + size):
            if owner_end[k] >= start or any(s <= end and start <= e for s, e in pinned[k]):
                b = (k // align + 1) * align
                break
        else:
            return b
    return None


def _rewrite(code: list[MInst], spilled: list[VReg], rf: RegFile, regs: RegFactory, slots: dict[VReg, int],
             next_slot: int) -> tuple[list[MInst], int]:
    """Code with every spilled register stored after its definitions and reloaded before its uses."""
    for r in spilled:
        if r not in slots:
            slots[r] = next_slot
            next_slot += r.size * rf.slot_units
    spill_set = set(spilled)
    out: list[MInst] = []
    for m in code:
        pre: list[MInst] = []
        post: list[MInst] = []
        fresh: dict[VReg, VReg] = {}
        ops = list(m.ops)
        for k, o in enumerate(ops):
            if isinstance(o, Sub) and o.reg in spill_set:
                r = o.reg
                if r not in fresh:
                    t = regs.new(r.rc, r.size, name=f"reload{r.id}")
                    t.no_spill = True
                    fresh[r] = t
                    reads = m.rmw or any(isinstance(u, Sub) and u.reg is r for u in m.ops[m.ndef:])
                    written = [u for u in m.ops[:m.ndef] if isinstance(u, Sub) and u.reg is r]
                    if reads:
                        pre += _whole(rf.reload, t, slots[r], rf.slot_units, _read_units(m, r))
                    if written:
                        units = sorted({x for u in written for x in u.units()})
                        post += _whole(rf.spill, t, slots[r], rf.slot_units, units)
                ops[k] = Sub(fresh[r], o.off, o.n, o.neg, o.abs)
        if fresh:
            m = MInst(m.op, ops, m.ndef, m.mods, m.target, m.flags, m.rmw, m.comment)
        out += pre
        out.append(m)
        out += post
    return out, next_slot


def _read_units(m: MInst, r: VReg) -> list[int]:
    units = set()
    for o in (m.ops if m.rmw else m.ops[m.ndef:]):
        if isinstance(o, Sub) and o.reg is r:
            units.update(o.units())
    if m.rmw:
        for o in m.ops[:m.ndef]:
            if isinstance(o, Sub) and o.reg is r:
                units.update(o.units())
    return sorted(units)


def _whole(fn, t: VReg, slot: int, slot_units: int, units: list[int]) -> list[MInst]:
    """Spill or reload code for the given units of t, in runs of consecutive registers."""
    out: list[MInst] = []
    i = 0
    while i < len(units):
        j = i
        while j + 1 < len(units) and units[j + 1] == units[j] + 1:
            j += 1
        out += fn(t.part(units[i], j - i + 1), slot + units[i] * slot_units)
        i = j + 1
    return out


def allocate(code: list[MInst], files: list[RegFile], regs: RegFactory, max_rounds: int = 8) -> Allocation:
    """Assign a physical register to every virtual register of `files`' classes (module docstring)."""
    result = Allocation(code)
    for rf in files:
        slots: dict[VReg, int] = {}
        next_slot = 0
        spilled_total: set[VReg] = set()
        for _ in range(max_rounds):
            span = intervals(result.code, rf.name)
            assign, spill, used = _scan(span, rf)
            if not spill:
                for r, p in assign.items():
                    r.phys = p
                result.used[rf.name] = used
                break
            spilled_total.update(spill)
            result.code, next_slot = _rewrite(result.code, spill, rf, regs, slots, next_slot)
        else:
            raise AllocationError(f"class {rf.name}: spilling did not converge in {max_rounds} rounds")
        result.slots[rf.name] = next_slot
        result.spilled[rf.name] = len(spilled_total)
    return result
