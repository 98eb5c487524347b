"""From a region to an LLVM module: classification of each instruction, the blocks' IR (bound and budget
checks, execution counts, instruction fragments, control flow) and the module text.

TRANSLATOR_VERSION is part of every cache key, with a hash of the engine's and the codec's source files
(the translator, and the interpreter semantics and decodes it mirrors), so changed code never loads
what an older version left in the disk cache.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

# The instruction translators register themselves in lower.TRANSLATORS when imported (lower_mem brings
# lower_lds, whose DS stores register with it); the VALU's are registered by load_translators.
from simgpu.shader.jit import lower_gfx9, lower_mem, lower_salu, lower_store, lower_vint, lower_vopd  # noqa: F401
from simgpu.shader.jit import region as rg
from simgpu.shader.jit import unmasked as um
from simgpu.shader.jit.lower import (
    C_HULLS,
    EXIT_BOUND,
    EXIT_BUDGET,
    EXIT_CALLBACK,
    EXIT_CONFLICT,
    EXIT_DONE,
    EXIT_NOENTRY,
    EXIT_SYNC,
    RARE_WEIGHTS,
    ROUND,
    Lowering,
    fused_driver,
    wave_function,
)
from simgpu.shader.jit.lower_valu import register_all
from simgpu.shader.operand import highest_vgpr
from simgpu.shader.state import EXEC_LO, VCC_LO
from simgpu.shader.vector.valu import definitions_tag

TRANSLATOR_VERSION = 3


def translator_key() -> str:
    """TRANSLATOR_VERSION and a hash of the sources of simgpu/shader (the translator and the semantics it
    mirrors), simgpu/isa (decoding) and simgpu/mem/windows.py (the window table's rows the IR reads)."""
    global _KEY
    if _KEY is None:
        h = hashlib.sha256(str(TRANSLATOR_VERSION).encode())
        simgpu = Path(__file__).resolve().parent.parent.parent
        for path in sorted([*simgpu.glob("shader/**/*.py"), *simgpu.glob("isa/**/*.py"), simgpu / "mem/windows.py"]):
            h.update(str(path.relative_to(simgpu)).encode())
            h.update(path.read_bytes())
        _KEY = h.hexdigest()[:16]
    return _KEY + definitions_tag()  # (a definition overridden at run time: vector.valu.override)


_KEY: str | None = None


_loaded = False


def translators_loaded() -> bool:
    """Whether the VALU translators are registered in this process (load_translators ran)."""
    return _loaded


def load_translators() -> None:
    """Register a translator for every VALU opcode with a spec and an emitter and every SALU definition: this loads
    every semantics module (valu.SPECS and scalar.define.SPECS complete; a process's first compile, unless the
    interpreter has loaded them already)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    register_all()
    lower_salu.register_all()
    lower_gfx9.register_all()


def classifier(lw: Lowering, nvgpr: int, callback_ok):
    """classify(inst, off) -> (kind, fragment, may exit mid-block) for region.discover; a native
    fragment is (IR lines, counts lane-ops, writes EXEC, (VGPRs written, SGPRs written, VGPRs read or
    written)). A sync store the translator covers has one too, with the VGPRs it reads and the labels of its
    exits: a global store runs only in a fused batch, an LDS store only in a barrier-to-barrier interval."""
    load_translators()

    def classify(inst, off: int):
        m = inst.mnemonic
        if m in rg.CONTROLS:
            return (rg.CONTROL if control_ok(inst) else rg.SYNC), None, False
        if highest_vgpr(inst) >= nvgpr:
            return rg.SYNC, None, False
        if rg.is_sync(inst):
            mark = len(lw.exits)
            frag = lw.fragment(inst, off) if "_store_" in m or m.startswith("ds_write") else None  # (gfx9's)
            if frag is None:
                return rg.SYNC, None, False
            return (rg.SYNC, (frag, False, False, (frozenset(), frozenset(), frozenset(lw.used_vgprs)),
                              [e[0] for e in lw.exits[mark:]]), False)
        mark = len(lw.exits)
        frag = lw.fragment(inst, off)
        if frag is not None:
            writes = (frozenset(lw.wrote_vgprs), frozenset(lw.wrote_sgprs), frozenset(lw.used_vgprs))
            return rg.NATIVE, (frag, lw.valu, writes_exec(inst), writes), len(lw.exits) > mark
        return (rg.CALLBACK if callback_ok(inst) else rg.SYNC), None, False
    return classify


_DEST_FIELDS = ("sdst", "vdst", "sdata")


def writes_exec(inst) -> bool:
    """Whether an instruction may write EXEC (then lane-ops are counted before it; conservative)."""
    m = inst.mnemonic
    if "exec" in m or "cmpx" in m:
        return True
    if inst.encoding in ("VOP1", "VOP2", "VOPD") or (inst.encoding == "VOPC" and "cmpx" not in m):
        return False  # VGPR destinations (VOPC e32 writes VCC)
    for name in _DEST_FIELDS:
        code = inst.fields.get(name)
        if code is not None and 124 <= code + 1 and code <= EXEC_LO + 1:
            return True
    return False


def _target(lw: Lowering, region: rg.Region, off: int) -> str:
    """The label of the block at `off`, or of an exit there (the wave parks at a PC outside the region)."""
    if off in region.by_start:
        return f"b{off}"
    label = lw.b.fresh("out")[1:]
    lw.pending.append((label, off))
    return label


def _prologue(lw: Lowering, blk: rg.Block, count: int) -> None:
    """Bound, budget and execution count at the head of a block of `count` instructions (one branch on
    the fast path; the exit decides which of the two stopped the wave)."""
    b = lw.b
    lw.off = blk.start
    beyond = b.op(f"icmp sge i64 {blk.last}, %boundoff")
    left = b.op(f"sub i64 {b.op('load i64, ptr %BUDGET')}, {count}")
    stop = b.op(f"or i1 {beyond}, {b.op(f'icmp slt i64 {left}, 0')}")
    out, cont = b.fresh("x")[1:], b.fresh("c")[1:]
    b.br_rare(stop, out, cont)
    b.label(out)
    code = b.op(f"select i1 {beyond}, i32 {EXIT_BOUND}, i32 {EXIT_BUDGET}")
    lw.exits.append((out, code, str(blk.start)))
    b.raw("br label %exit")
    b.label(cont)
    b.raw(f"store i64 {left}, ptr %BUDGET")
    most = b.op("load i64, ptr %MAXLAST")  # the highest PC the wave ran in this round (rounds.py's check)
    higher = b.call("i64", "@llvm.smax.i64", [("i64", most), ("i64", str(blk.last))],
                    "declare i64 @llvm.smax.i64(i64, i64)")
    b.raw(f"store i64 {higher}, ptr %MAXLAST")
    cur = b.op(f"load i64, ptr %CNT{blk.index}")
    b.raw(f"store i64 {b.op(f'add i64 {cur}, 1')}, ptr %CNT{blk.index}")


def control_ok(inst) -> bool:
    """Whether the translator runs this control instruction (s_setpc & co. need a readable source)."""
    if inst.mnemonic not in rg.DYNAMIC or inst.mnemonic == "s_call_b64":
        return True
    code = inst.fields.get("ssrc0", 0)
    return code < 127 or 128 <= code <= 208 or 240 <= code <= 248 or code == 255


def _branch_cond(lw: Lowering, m: str) -> str | None:
    b = lw.b
    if m == "s_cbranch_scc0":
        return b.op(f"xor i1 {lw.scc()}, true")
    if m == "s_cbranch_scc1":
        return lw.scc()
    if m in ("s_cbranch_vccz", "s_cbranch_vccnz", "s_cbranch_execz", "s_cbranch_execnz"):
        code = VCC_LO if "vcc" in m else EXEC_LO
        pred = "eq" if m.endswith("z") and not m.endswith("nz") else "ne"
        return b.op(f"icmp {pred} {b.mask_int} {lw.mask(code)}, 0")
    return None  # the debugger branches: no debugger, never taken


def _control(lw: Lowering, region: rg.Region, insn: rg.Insn) -> None:
    b, inst, off = lw.b, insn.inst, insn.off
    m = inst.mnemonic
    lw.off, lw.inst = off, inst
    nxt = off + inst.size
    if m in rg.ENDS:
        lw.exit_here(EXIT_DONE)
        return
    if m == "s_branch":
        b.raw(f"br label %{_target(lw, region, nxt + 4 * rg.simm16(inst))}")
        return
    if m in rg.BRANCHES:
        cond = _branch_cond(lw, m)
        if cond is None:
            b.raw(f"br label %{_target(lw, region, nxt)}")
            return
        taken = _target(lw, region, nxt + 4 * rg.simm16(inst))
        b.raw(f"br i1 {cond}, label %{taken}, label %{_target(lw, region, nxt)}")
        return
    if m == "s_call_b64":
        lw.set_sgpr64(inst.fields["sdst"], b.op(f"add i64 %base, {off + 4}"))
        b.raw(f"br label %{_target(lw, region, off + 4 + 4 * rg.simm16(inst))}")
        return
    # s_setpc/s_swappc/s_rfe: through the entry switch (a PC outside the region parks the wave there)
    target = lw.scalar_src(inst.fields["ssrc0"], inst.literal, "b64")
    if m == "s_swappc_b64":
        lw.set_sgpr64(inst.fields["sdst"], b.op(f"add i64 %base, {nxt}"))
    new = b.op(f"sub i64 {target}, %base")
    label = b.fresh("dyn")[1:]
    b.raw(f"br label %{label}")
    b.label(label)
    lw.dynamic.append((label, new))
    b.raw("br label %dispatch")


def lds_store(blk: rg.Block) -> bool:
    """A DS store block the translator covers: native in a barrier-to-barrier interval (barrier.py), a park
    in a round."""
    first = blk.insns[0]
    return blk.kind == rg.SYNC and first.fragment is not None and first.inst.mnemonic.startswith("ds_")


def _passes(region: rg.Region, blk: rg.Block) -> list[int]:
    """The block after an LDS store (an interval's waves go on there)."""
    return [region.by_start[blk.end].index] if lds_store(blk) and blk.end in region.by_start else []


def reachable_writes(region: rg.Region) -> list[tuple[frozenset, frozenset] | None]:
    """For each block: the VGPRs and SGPR slots that native code may write from it on, to the end of the
    region (None: callbacks, which may write anything, are reachable). A round saves only those."""
    blocks = region.blocks
    own, succ = [], []
    everything = list(range(len(blocks)))
    for blk in blocks:
        v, s, unknown = set(), set(), blk.kind == rg.CALLBACK
        nxt: list[int] = []
        for insn in blk.insns:
            if insn.kind == rg.NATIVE:
                v |= insn.fragment[3][0]
                s |= insn.fragment[3][1]
            elif insn.kind == rg.CONTROL and insn.inst.mnemonic in ("s_swappc_b64", "s_call_b64"):
                s |= {insn.inst.fields["sdst"], insn.inst.fields["sdst"] + 1}
        last = blk.insns[-1]
        if blk.kind in (rg.NATIVE, rg.CALLBACK):
            if last.kind == rg.CONTROL and last.inst.mnemonic in rg.DYNAMIC - {"s_call_b64"}:
                nxt = everything
            elif last.kind == rg.CONTROL:
                nxt = [region.by_start[o].index for o in rg.successors(last) if o in region.by_start]
            elif blk.end in region.by_start:
                nxt = [region.by_start[blk.end].index]
        else:
            nxt = _passes(region, blk)
        own.append((v, s, unknown))
        succ.append(nxt)
    out: list[tuple[frozenset, frozenset] | None] = []
    for start in range(len(blocks)):  # small regions: a walk per block is cheap
        seen, todo = {start}, [start]
        v, s, unknown = set(), set(), False
        while todo:
            i = todo.pop()
            v |= own[i][0]
            s |= own[i][1]
            unknown |= own[i][2]
            for j in succ[i]:
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
        out.append(None if unknown else (frozenset(v), frozenset(s)))
    return out


def entry_vgprs(region: rg.Region) -> list[tuple[frozenset, frozenset] | None]:
    """For each block: the VGPRs native code may read or write, and those it may write, from entering @wave
    there until the wave leaves it (it leaves before a sync, missing or callback block, and a callback
    enters @wave again at the next block), or None when a jump through the entry switch (s_setpc & co.) is
    reachable. @wave loads only the first set from the register file and stores back only the second: a
    round between two LDS stores of a tiled matmul need not move the loop's accumulators."""
    blocks = region.blocks
    own, succ, dynamic = [], [], []
    for blk in blocks:
        used, wrote, nxt = set(), set(), []
        last = blk.insns[-1]
        if blk.kind == rg.NATIVE:
            for insn in blk.insns:
                if insn.kind == rg.NATIVE:
                    wrote |= insn.fragment[3][0]
                    used |= insn.fragment[3][2]
            if last.kind == rg.CONTROL:
                nxt = [region.by_start[o].index for o in rg.successors(last) if o in region.by_start]
            elif blk.end in region.by_start:
                nxt = [region.by_start[blk.end].index]
        elif lds_store(blk):
            used |= last.fragment[3][2]
            nxt = _passes(region, blk)
        own.append((used, wrote))
        succ.append(nxt)
        dynamic.append(blk.kind == rg.NATIVE and last.kind == rg.CONTROL
                       and last.inst.mnemonic in rg.DYNAMIC - {"s_call_b64"})
    out: list[tuple[frozenset, frozenset] | None] = []
    for start in range(len(blocks)):
        seen, todo = {start}, [start]
        used, wrote, jumps = set(), set(), False
        while todo:
            i = todo.pop()
            used |= own[i][0]
            wrote |= own[i][1]
            jumps |= dynamic[i]
            for j in succ[i]:
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
        out.append(None if jumps else (frozenset(used | wrote), frozenset(wrote)))
    return out


def fusable(lw: Lowering, region: rg.Region) -> bool:
    """Whether the region can run as a fused batch (fused.py): all its code is native but for
    stores the translator covers, control only goes forward (so the interpreter runs its instructions in PC
    order, each once per wave) and nothing in it needs LDS."""
    if not lw.fusable:
        return False
    for blk in region.blocks:
        if blk.kind == rg.SYNC and blk.insns[0].fragment is not None:
            continue
        if blk.kind != rg.NATIVE:
            return False
        for insn in blk.insns:
            if insn.kind == rg.CONTROL and (insn.inst.mnemonic in rg.DYNAMIC
                                            or any(t <= insn.off for t in rg.successors(insn))):
                return False
    return True


def _site_pairs(sites: list[tuple[int, bool]]) -> tuple[list[list[int]], set[int]]:
    """For each memory site: the later sites (higher PC) its access must not overlap for earlier waves (where
    either is a store); and the sites whose hull some check reads."""
    later = [[q for q, (oq, sq) in enumerate(sites) if oq > op and (sp or sq)] for op, sp in sites]
    return later, {q for qs in later for q in qs}


def _expand_site(lw: Lowering, line: str, later: list[list[int]], read: set[int]) -> None:
    """The order check of a site mark (Lowering.site), in a fused batch only: the access's extent must not
    overlap what earlier waves accessed at the later sites (their hulls, ctx C_HULLS: [lo, hi) per site,
    unsigned); then this site's hull grows by it."""
    _, n, addr, active, size = line.split()
    n, size = int(n), int(size)
    if not later[n] and n not in read:
        return
    b = lw.b
    lw.off = lw.sites[n][0]
    check, cont = b.fresh("hull")[1:], b.fresh("hulldone")[1:]
    b.raw(f"br i1 %fused, label %{check}, label %{cont}")
    b.label(check)
    if active == "-":
        lo = addr
        hi = b.op(f"add i64 {addr}, {size}")
    else:
        lo, hi = lw.extent(addr, active, size)
    hulls = b.op(f"load ptr, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_HULLS}')}")
    clash = "false"
    for q in later[n]:
        qlo = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr {hulls}, i64 {2 * q}')}")
        qhi = b.op(f"load i64, ptr {b.op(f'getelementptr i64, ptr {hulls}, i64 {2 * q + 1}')}")
        over = b.op(f"and i1 {b.op(f'icmp ult i64 {lo}, {qhi}')}, {b.op(f'icmp ult i64 {qlo}, {hi}')}")
        clash = b.op(f"or i1 {clash}, {over}")
    if later[n]:
        lw.branch_exit(clash, EXIT_CONFLICT)
    if n in read:
        for k, (fn, v) in enumerate((("umin", lo), ("umax", hi))):
            p = b.op(f"getelementptr i64, ptr {hulls}, i64 {2 * n + k}")
            grown = b.call("i64", f"@llvm.{fn}.i64", [("i64", b.op(f"load i64, ptr {p}")), ("i64", v)],
                           f"declare i64 @llvm.{fn}.i64(i64, i64)")
            b.raw(f"store i64 {grown}, ptr {p}")
    b.raw(f"br label %{cont}")
    b.label(cont)


def _emit(lw: Lowering, lines: list[str], sites) -> None:
    """A fragment's lines into the function, site marks expanded (`sites`: _site_pairs, None: dropped)."""
    b = lw.b
    for line in lines:
        if line.startswith("  ;SITE"):
            if sites is not None:
                _expand_site(lw, line, *sites)
            continue
        b.lines.append(line)


def _body(lw: Lowering, region: rg.Region, blk: rg.Block, sites) -> int | None:
    """A native block's instructions (or a fused batch's store) after its prologue; the index (in lw.b.lines)
    where the first instruction that may write EXEC starts, or None if none does."""
    b = lw.b
    pending = 0  # VALU instructions since EXEC last changed: lane-ops added in one go
    first_write = None
    for insn in blk.insns:
        if insn.kind == rg.CONTROL:
            lw.add_lanes(pending)
            if first_write is None and insn.inst.mnemonic in ("s_swappc_b64", "s_call_b64"):
                first_write = len(b.lines)  # (they write an SGPR pair: EXEC, for all the translator knows)
            _control(lw, region, insn)
            break
        lines, valu, exec_write = insn.fragment[:3]  # (a store's, in a fused batch: neither VALU nor EXEC)
        pending += valu
        if exec_write or insn.exits:
            lw.add_lanes(pending)
            pending = 0
        if exec_write and first_write is None:
            first_write = len(b.lines)
        _emit(lw, lines, sites)
    else:
        lw.add_lanes(pending)
        b.raw(f"br label %{_target(lw, region, blk.end)}")
    return first_write


def _native_body(lw: Lowering, region: rg.Region, blk: rg.Block, sites) -> None:
    """A native block's body, and its unmasked version (unmasked.py) when it reads EXEC before any write
    of it: one compare of EXEC with all ones at entry picks the one to run."""
    b = lw.b
    head = len(b.lines)
    masked, full = f"m{blk.start}", f"m{blk.start}{um.SUFFIX}"
    b.raw("br label %PICK")  # (a placeholder: replaced below once the body is known)
    b.label(masked)
    start, dynamic = len(b.lines), len(lw.dynamic)
    first_write = _body(lw, region, blk, sites)
    body = b.lines[start - 1:]  # (from the masked body's label)
    until = len(body) if first_write is None else first_write - start + 1
    if not um.reads_exec(body[:until], lw.lanes):
        b.lines[head] = f"  br label %{masked}"
        return
    copy, rename = um.unmasked_copy(body, until, lw.lanes)
    b.lines.append(copy)
    # (the fragments' exits were listed when they were translated, before this block's assembly)
    lw.exits += [(rename[lab], um.renamed(code, rename) if isinstance(code, str) else code, um.renamed(v, rename))
                 for lab, code, v in lw.exits if lab in rename]
    lw.dynamic += [(rename[lab], um.renamed(v, rename)) for lab, v in lw.dynamic[dynamic:] if lab in rename]
    lw.sgprs.update(um.exec_slots(lw.lanes))  # (the body may read one half of EXEC only: exec_hi in wave64)
    test = [f"load i32, ptr %S{s}" for s in um.exec_slots(lw.lanes)]
    mark = len(b.lines)
    ones = [b.op(f"icmp eq i32 {b.op(t)}, -1") for t in test]
    cond = ones[0] if len(ones) == 1 else b.op(f"and i1 {ones[0]}, {ones[1]}")
    pick = b.lines[mark:]
    del b.lines[mark:]
    b.lines[head:head + 1] = pick + [f"  br i1 {cond}, label %{full}, label %{masked}"]


def build_module(lw: Lowering, region: rg.Region) -> tuple[str, bool]:
    """The module text: @wave over the region's blocks, the @round driver, and @fused when the region is
    fusable (which it says)."""
    b = lw.b
    b.lines = []
    lw.pending = []
    fuse = fusable(lw, region)
    sites = _site_pairs(lw.sites) if fuse else None
    if not fuse:  # the global stores' fragments are not emitted: neither are their exits
        dropped = {lab for blk in region.blocks if blk.kind == rg.SYNC and blk.insns[0].fragment is not None
                   and not lds_store(blk) for lab in blk.insns[0].fragment[4]}
        lw.exits = [e for e in lw.exits if e[0] not in dropped]
    for blk in region.blocks:
        b.label(f"b{blk.start}")
        lw.off = blk.start
        first = blk.insns[0]
        if blk.kind == rg.SYNC and fuse and first.fragment is not None:  # a store: native in a fused batch
            run, park = b.fresh("fusedst")[1:], b.fresh("syncst")[1:]
            b.raw(f"br i1 %fused, label %{run}, label %{park}")
            b.label(park)
            lw.exit_here(EXIT_SYNC)
            b.label(run)
            _prologue(lw, blk, 1)
            _native_body(lw, region, blk, sites)
            continue
        if lds_store(blk):  # native in a barrier-to-barrier interval, a park in a round
            run, park = b.fresh("ldsst")[1:], b.fresh("syncst")[1:]
            b.raw(f"br i1 %b2b, label %{run}, label %{park}")
            b.label(park)
            lw.exit_here(EXIT_SYNC)
            b.label(run)
            _prologue(lw, blk, 1)
            _native_body(lw, region, blk, sites)
            continue
        if blk.kind in (rg.SYNC, rg.MISSING):
            lw.exit_here(EXIT_SYNC)
            continue
        if blk.kind == rg.CALLBACK:
            _prologue(lw, blk, 1)
            lw.add_lanes(1 if first.inst.mnemonic.startswith("v_") else 0)
            lw.exit_here(EXIT_CALLBACK)
            continue
        _prologue(lw, blk, len(blk.insns))
        _native_body(lw, region, blk, sites)
    for label, off in lw.pending:
        b.label(label)
        lw.exits.append((label, EXIT_NOENTRY, str(off)))
        b.raw("br label %exit")
    body = list(b.lines)
    decls = "\n".join(sorted(b.decls))
    driver = fused_driver(sum(len(blk.insns) for blk in region.blocks)) if fuse else ""
    entries = None if fuse else entry_vgprs(region)
    return f"{decls}\n\n{wave_function(lw, region, body, entries)}\n{ROUND}\n{driver}\n{RARE_WEIGHTS}\n", fuse
