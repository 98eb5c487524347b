"""The whole x86-64 pipeline of one kernel: unroll small accumulation loops (compiler.ir.unroll, as the native
backend does: fewer loop branches and budget checks; row sums of 4096x256 ran 4.5x faster), select
(compiler.backend.x86.select and its rule modules; compiler.backend.x86.vector for packed code), coalesce copies,
allocate registers (the shared linear scan, compiler.backend.regalloc, with the GPR and XMM files and spills to
stack slots of 8 and 16 bytes), expand to real instructions, add the budget checks, lay out the grid walk or the
fiber scheduler, assemble, and wrap it in a CPU code object (runtime.cpu.image).

Register files: GPRs rbx rbp rsi rdi r8-r15 (rax, rcx and rdx are the expansions' scratch, rsp the stack
pointer) and xmm0-xmm13 (xmm14 and xmm15 are scratch).

Kernels without barriers are one function: the grid loops the selector put around the body. Kernels with
barriers run each workgroup's work-items as fibers (runtime.cpu.abi: fiber stacks and scheduler words): the
entry walks the group ids; per workgroup it clears the fiber table and starts fiber 0; a fiber runs the body
(`call .Lbody`) until it returns or reaches a barrier: there it pushes the registers live across the barrier
(the allocation says which) onto its own stack and calls `.Lbarrier`, which records its stack pointer and
switches to the next fiber (starting it if it never ran; after the last one,
back to the first). The workgroup is done when the last fiber returns. Work-items therefore pass each barrier
in order 0, 1, ..., n-1, one phase after another, exactly as the barrier semantics allow.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler.backend import coalesce, regalloc
from compiler.backend.mir import MInst
from compiler.backend.x86 import alu, convert, memory, vector  # noqa: F401 - rule modules register in RULES
from compiler.backend.x86.encode import assemble
from compiler.backend.x86.expand import FUEL, Ctx, expand
from compiler.backend.x86.isa import RAX, RCX, RDX, RSP, Imm, Inst, Label, Mem, gpr
from compiler.backend.x86.select import SCHED_CUR, SCHED_GROUP, SCHED_RSP, X86Selector, copy_of, imm
from compiler.ir.linearize import LinearKernel
from compiler.ir.ops import Ops
from compiler.ir.unroll import unroll
from runtime.cpu import abi
from runtime.cpu.image import write_image

GPR_RESERVED = frozenset({RAX, RCX, RDX, RSP})
XMM_RESERVED = frozenset({14, 15})
FIBER_HEADROOM = 512  # per fiber beyond the body's frame: return addresses and the barrier's saved registers


def _spill(rc: str):
    return lambda part, slot: [MInst(f"spill.{rc}", [part, imm(slot)], 0, comment="spill")]


def _reload(rc: str):
    return lambda part, slot: [MInst(f"reload.{rc}", [part, imm(slot)], 1, comment="reload")]


@dataclass
class Compiled:
    """One kernel compiled for the CPU device: the code object and what went into it."""

    binary: bytes
    code: bytes
    meta: dict
    symbols: list[tuple[int, str]]
    spilled: dict[str, int]
    rules: dict[str, int]
    scalar_why: str = ""  # why the kernel runs one work-item per pass ('' when vectorized)


def I(op: str, *ops) -> Inst:  # noqa: E743 - short constructor, as in compiler.backend.x86.expand
    return Inst(op, tuple(ops))


def q(addr: int) -> Mem:
    """The qword at an absolute address (kernarg page, fiber table)."""
    return Mem(8, None, None, 1, addr)


def compile_kernel(k: LinearKernel) -> Compiled:
    """The module docstring's pipeline for one linearized kernel."""
    k = unroll(k)
    fibers = any(u.op is Ops.BARRIER for u in k.uops)
    plan = vector.Plan(why="barriers") if fibers else vector.plan(k)
    sel = vector.VectorSelector(k, plan) if plan else X86Selector(k, fibers)
    code = coalesce.coalesce(sel.run(), copy_of)
    files = [regalloc.RegFile("g", 16, lambda n: 1, _spill("g"), _reload("g"), reserved=GPR_RESERVED),
             regalloc.RegFile("x", 16, lambda n: 1, _spill("x"), _reload("x"), reserved=XMM_RESERVED,
                              slot_units=2)]  # 16-byte slots: four lanes
    alloc = regalloc.allocate(code, files, sel.regs)
    if fibers:
        alloc.code = _barrier_saves(alloc.code)
    gslots, xslots = alloc.slots.get("g", 0), alloc.slots.get("x", 0)
    frame = 8 * (gslots + xslots)
    frame += -frame % 16
    body = expand(alloc.code, Ctx(gslots))
    framed = ([I("sub", gpr(RSP), Imm(frame))] if frame else []) + body + \
             ([I("add", gpr(RSP), Imm(frame))] if frame else []) + [I("ret")]
    g = k.geometry
    workitems = g.block[0] * g.block[1] * g.block[2]
    fiber_bytes = 0
    if fibers:
        stack = frame + FIBER_HEADROOM
        table = abi.pages(8 * workitems)
        items = [k.name, *_fiber_driver(g.grid, workitems, table, stack), ".Lbody", *framed]
        fiber_bytes = table + workitems * stack
    else:
        items = [k.name, *framed]
    meta = {"name": k.name, "entry": 0, "params": len(k.params), "lds": sel.lds_bytes, "fibers": fiber_bytes,
            "workitems": workitems, "lanes": vector.WIDTH if plan else 1,
            "grid": list(g.grid), "block": list(g.block), "frame": frame}
    binary, code, symbols = link(items, meta)
    return Compiled(binary, code, meta, symbols, dict(alloc.spilled), sel.used_rules, plan.why)


def link(items: list, meta: dict) -> tuple[bytes, bytes, list[tuple[int, str]]]:
    """Instructions and labels (entry first) -> (CPU code object, code, symbols): budget checks added, assembled,
    wrapped with the metadata (its "traps" filled in)."""
    items, traps = _budget_checks(items)
    asm = assemble(items)
    meta["traps"] = {asm.labels[t]: asm.offsets[_inst_index(items, b)] for t, b in traps.items()}
    symbols = sorted((off, name) for name, off in asm.labels.items())
    return write_image(asm.code, meta, symbols), asm.code, symbols


def raw_kernel(name: str, items: list, params: int, lds: int = 0) -> bytes:
    """A CPU code object of hand-written x86-64 (compiler.backend.x86.isa instructions and labels) run once, as
    one work-item: for tests of the device's containment. Backward jumps get budget checks as compiled loops do
    (a conditional one needs the FUEL marker before its compare)."""
    meta = {"name": name, "entry": 0, "params": params, "lds": lds, "fibers": 0, "workitems": 1,
            "grid": [1, 1, 1], "block": [1, 1, 1], "frame": 0}
    return link([name, *items], meta)[0]


def _barrier_saves(code: list[MInst]) -> list[MInst]:
    """Every barrier told which physical registers are live across it (its expansion saves just those)."""
    spans = {rc: regalloc.intervals(code, rc) for rc in ("g", "x")}
    out = []
    for i, m in enumerate(code):
        if m.op == "call.barrier":
            live = {rc: sorted({r.phys for r, (lo, hi) in span.items() if lo < 2 * i and hi > 2 * i + 1})
                    for rc, span in spans.items()}
            m = MInst(m.op, [], 0, ";".join(f"{rc}:{','.join(map(str, regs))}" for rc, regs in live.items()))
        out.append(m)
    return out


def _inst_index(items: list, pos: int) -> int:
    """The index among instructions (labels skipped) of items[pos]."""
    return sum(1 for it in items[:pos] if isinstance(it, Inst))


def _budget_checks(items: list) -> tuple[list, dict[str, int]]:
    """Fill in every loop's budget check (`sub qword ptr [FUEL], n; jb trap`, n = the loop's own instructions:
    those not inside a nested loop, which charges its own) and append the traps. Returns the items and
    {trap label: position of the loop's branch in the new items}."""
    where = {it: i for i, it in enumerate(items) if isinstance(it, str)}
    marked = []  # an unconditional backward jmp needs no marker: its check cannot disturb a comparison
    for i, it in enumerate(items):
        if isinstance(it, Inst) and it.mnemonic == "jmp" and isinstance(it.ops[0], Label) and \
                where.get(it.ops[0].name, len(items)) <= i and (not marked or marked[-1] is not FUEL):
            marked.append(FUEL)
        marked.append(it)
    items = marked
    where = {it: i for i, it in enumerate(items) if isinstance(it, str)}
    loops = []
    for i, it in enumerate(items):
        if it is FUEL:
            j = next(k for k in range(i + 1, len(items)) if isinstance(items[k], Inst)
                     and any(isinstance(o, Label) for o in items[k].ops))
            target = next(o.name for o in items[j].ops if isinstance(o, Label))
            loops.append((where[target], i, j))
    owner: dict[int, int] = {}
    for n, (lo, _, hi) in sorted(enumerate(loops), key=lambda e: e[1][0] - e[1][2]):  # outermost first
        for p in range(lo, hi + 1):
            owner[p] = n
    own = [0] * len(loops)
    for p, n in owner.items():
        if isinstance(items[p], Inst):
            own[n] += 2 if items[p] is FUEL else 1
    out, traps, tail = [], {}, []
    for i, it in enumerate(items):
        if it is FUEL:
            n = next(k for k, lp in enumerate(loops) if lp[1] == i)
            trap = f".Ltrap{n}"
            out += [I("sub", q(abi.FUEL), Imm(own[n])), I("jb", Label(trap))]
            traps[trap] = len(out) + (loops[n][2] - i - 1)
            tail += [trap, I("ud2")]
        else:
            out.append(it)
    return out + tail, traps


def _fiber_driver(grid: tuple[int, int, int], n: int, table: int, stack: int) -> list:
    """The entry of a kernel with barriers (module docstring): group walk, fiber start/finish, barrier switch."""
    rax, rcx, eax = gpr(RAX), gpr(RCX), gpr(RAX, 4)
    fiber_slot = Mem(8, None, rax, 8, abi.FIBER_BASE)
    out: list = [I("mov", q(SCHED_GROUP + 8 * a), Imm(0)) for a in range(3)]
    out += [".Lgroup", I("mov", q(SCHED_RSP), gpr(RSP)), I("xor", eax, eax),
            ".Lclear", I("mov", fiber_slot, Imm(0)), I("add", eax, Imm(1)), FUEL, I("cmp", eax, Imm(n)),
            I("jb", Label(".Lclear")), I("mov", q(SCHED_CUR), Imm(0)), I("jmp", Label(".Lstart")),
            ".Lgroup_done", I("mov", gpr(RSP), q(SCHED_RSP))]
    for a in range(3):
        if grid[a] > 1:
            out += [I("add", q(SCHED_GROUP + 8 * a), Imm(1)), FUEL, I("cmp", q(SCHED_GROUP + 8 * a), Imm(grid[a])),
                    I("jb", Label(".Lgroup")), I("mov", q(SCHED_GROUP + 8 * a), Imm(0))]
    out += [I("ret"),
            ".Lstart", I("mov", rax, q(SCHED_CUR)), I("imul", rax, rax, Imm(stack)),
            I("lea", gpr(RSP), Mem(8, rax, None, 1, abi.FIBER_BASE + table + stack)), I("call", Label(".Lbody")),
            I("mov", rax, q(SCHED_CUR)), I("add", rax, Imm(1)), I("cmp", rax, Imm(n)), I("jae", Label(".Lgroup_done")),
            I("mov", q(SCHED_CUR), rax), I("jmp", Label(".Lresume")),
            ".Lbarrier", I("mov", rax, q(SCHED_CUR)), I("mov", fiber_slot, gpr(RSP)), I("add", rax, Imm(1)),
            I("cmp", rax, Imm(n)), I("jb", Label(".Lnext")), I("xor", eax, eax),
            ".Lnext", I("mov", q(SCHED_CUR), rax),
            ".Lresume", I("mov", rcx, fiber_slot), I("test", rcx, rcx), I("je", Label(".Lstart")),
            I("mov", gpr(RSP), rcx), I("ret")]
    return out


def describe(c: Compiled) -> str:
    """One comment line of a compiled kernel's resources."""
    m = c.meta
    return (f"; {m['name']}: {len(c.code)} bytes, frame {m['frame']} B, spilled {c.spilled.get('g', 0)} GPR / "
            f"{c.spilled.get('x', 0)} XMM, LDS {m['lds']} B, fibers {m['fibers']} B, "
            + (f"{m['lanes']} work-items per pass (SSE packed)" if m["lanes"] > 1 else f"scalar: {c.scalar_why}"))

