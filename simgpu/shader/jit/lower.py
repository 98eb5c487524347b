"""Lowering of a region to one LLVM function per wave, and the round driver that runs a list of waves.

`@wave(ctx, w, row)` runs wave `w` from its PC until it parks: it loads the registers the region uses
from the engine's register file (SGPRs by operand code, VGPR planes [vgpr, waves, lanes], SCC) into
locals, enters the block at its PC through a switch, and on exit stores them back with the PC and the
reason (EXIT_*). `@round(ctx)` runs the waves listed in ctx in order, calls back into Python for
instructions the translator does not cover and for the engine's tick, and lowers the bound as waves
park (see rounds.py).

Per block the native code checks the bound (a block whose last instruction lies at or past it is not
entered) and the budget (ctx C_BUDGET: wave-instructions until the engine's next tick, shared by the
waves of the round), then counts the block's execution in the wave's row of the counts matrix (the
per-opcode histogram, wave-instructions and the clock are derived from those counts). A wave that finds
the budget too small for its next block exits with EXIT_BUDGET and the round calls the tick (native.py):
it checks the deadline and tells the progress hooks and gives a new budget, and the wave goes on; or the
tick stops the round (the watchdog's budget is spent, the deadline passed, Ctrl-C).

Instruction translators register per mnemonic (without encoding suffix) in TRANSLATORS, grouped by unit
in the lower_* modules; a translator raises Unsupported for operand forms it does not handle, and the
instruction is then run by the interpreter through the callback.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from simgpu.shader.jit.ir import Builder
from simgpu.shader.operand import APERTURE_LIMIT_LO, PRIVATE_BASE_HI, SHARED_BASE_HI, constant, literal64
from simgpu.shader.semantics import base_name, family_of, shared_meaning
from simgpu.shader.state import EXEC_LO, HW_MODE, VCC_LO, null_and_m0

# Why a wave stopped (ctx exits[row]); every code but DONE leaves the wave RUNNING at its PC.
# EXIT_READ: stopped mid-block before a memory read the memory helper could not do (it faults): the rest
# of that block was counted but did not run.
# EXIT_CONFLICT and EXIT_WRITE end a fused batch only (fused.py): a memory access that could
# order differently from the interpreter's, and a store with no writable window.
(EXIT_DONE, EXIT_SYNC, EXIT_BOUND, EXIT_CALLBACK, EXIT_BUDGET, EXIT_NOENTRY, EXIT_FAULT, EXIT_READ, EXIT_CONFLICT,
 EXIT_WRITE) = range(10)
TICK_GO_ON, TICK_STOP = range(2)  # what the tick callback tells the round

# ctx: an int64 array shared by Python and the native code (native.NativeCall's, filled per call).
(C_SGPR, C_VGPR, C_PLANE, C_SCC, C_PC, C_STATUS, C_HWREG, C_BASE, C_BOUND, C_BUDGET, C_WINDOWS, C_NWINDOWS,
 C_COUNTS, C_LANEOPS, C_WAVES, C_COUNT, C_EXITS, C_CALLBACK, C_LDS, C_LDS_BYTES, C_GROUP, C_MEMORY,
 C_MAXLAST, C_HINTS, C_TICK,
 # the fused launch (fused.py): whether it runs, whether @wave stores registers back at its exit, the memory sites'
 # hulls, the undo log, the batch's workgroups (count, waves each, ids, the SGPRs that hold them), the template
 # rows' status, the wave running now
 C_FUSED, C_KEEP, C_HULLS, C_UNDO, C_UNDO_N, C_NGROUPS, C_WPG, C_GIDS, C_GID_X, C_GID_Y, C_GID_Z, C_TSTATUS,
 C_CURRENT,
 # barrier-to-barrier intervals (barrier.py): whether one runs (LDS stores native, the bound never lowered), the
 # LDS order check's store tags (int64 per LDS dword of each group's row) and per-group hulls (lower_lds), the
 # interval's epoch, the dwords of a row
 C_B2B, C_WRITERS, C_GROUP_HULLS, C_EPOCH, C_LDS_DWORDS) = range(43)
CTX_SIZE = 43
DONE_STATUS = 2  # state.DONE


class Unsupported(Exception):
    """The translator does not cover this instruction (or operand form): the interpreter runs it."""


TRANSLATORS: dict[str, Callable] = {}  # shared mnemonic -> translator (the semantics table's shared entries)
FAMILY_TRANSLATORS: dict[str, dict[str, Callable]] = {}  # ISA family -> its own mnemonics' translators


def translates(*names: str, family: str | None = None):
    """Register the decorated function `fn(lw, inst)` as the translator of the given mnemonics: of their shared
    semantics, or, with `family`, of that ISA family's own entries (semantics.register(..., family=))."""
    table = TRANSLATORS if family is None else FAMILY_TRANSLATORS.setdefault(family, {})

    def deco(fn):
        for n in names:
            table[n] = fn
        return fn
    return deco


def from_definition(spec, fn: Callable) -> Callable:
    """`fn`, marked as the translator generated from `spec`'s definition (the expression form): a test checks that
    every defined opcode's translator is one of these, so no hand-written IR text shadows a definition."""
    fn.spec = spec
    return fn


def translator(inst) -> tuple[Callable, object] | None:
    """The translator of a decoded instruction and the instruction it is given, or None. The lookup follows the
    interpreter's (semantics.lookup): a family's own translator for a mnemonic with its own meaning there, the
    shared one otherwise; a renamed instruction (semantics.alias: gfx12's s_add_co_i32) is given to the shared
    name's translator under that name, its fields unchanged. A family's own meaning without a translator of its
    own has none: the interpreter runs it."""
    name = "__vopd__" if inst.encoding == "VOPD" else base_name(inst.mnemonic)
    family = family_of(inst.arch)
    own = FAMILY_TRANSLATORS.get(family, {}).get(name)
    if own is not None:
        return own, inst
    shared = shared_meaning(name, family)
    fn = None if shared is None else TRANSLATORS.get(shared)
    if fn is None:
        return None
    if shared != name:
        inst = replace(inst, mnemonic=shared + inst.mnemonic[len(name):])
    return fn, inst


class Lowering:
    """The translation of one region: IR builder, register locals used, exit edges."""

    def __init__(self, lanes: int, mode: int, nvgpr: int, arch: str = "gfx1100"):
        self.b = Builder(lanes)
        self.lanes, self.mode, self.nvgpr = lanes, mode, nvgpr
        self.family = family_of(arch)  # the region's ISA family ("gfx11", "gfx12", "gfx9")
        self.null, self.m0 = null_and_m0(self.family)  # their operand codes (gfx9 swaps them: state.null_and_m0)
        self.sgprs: set[int] = set()
        self.sgprs_written: set[int] = set()
        self.vgprs: set[int] = set()
        self.vgprs_written: set[int] = set()
        self.exits: list[tuple[str, int, str]] = []  # (predecessor label, exit code, offset value)
        self.hints: list[str] = []  # the window each memory instruction used last (WLO/WHI/WHOST n), in ctx
        self.dynamic: list[tuple[str, str]] = []  # (label, i64 offset) of jumps through the entry switch
        self.buffers: list[tuple[str, str]] = []  # (name, type) of stack buffers (memory helper arguments)
        self.off = 0  # offset of the instruction being lowered
        self.inst = None
        self.valu = False  # the instruction being lowered counts lane-ops
        self.wrote_vgprs: set[int] = set()  # registers the instruction being lowered writes
        self.wrote_sgprs: set[int] = set()
        self.used_vgprs: set[int] = set()  # registers the instruction being lowered reads or writes
        self.entry_sets = 0  # distinct VGPR sets @wave loads per entry block (0: all; see _entry_classes)
        self.sites: list[tuple[int, bool]] = []  # (offset, is a store) of each memory site (see `site`)
        self.fusable = True  # False once a fragment needs state a fused batch does not have (LDS)

    # ---------------------------------------------------------------------------------------- fragments
    def fragment(self, inst, off: int) -> list[str] | None:
        """The IR lines of one instruction, or None if the translator does not cover it (`self.valu` then
        says whether it counts lane-ops)."""
        found = translator(inst)
        if found is None:
            return None
        fn, inst = found
        b = self.b
        mark, exits = len(b.lines), len(self.exits)
        self.off, self.inst, self.valu = off, inst, False
        self.wrote_vgprs, self.wrote_sgprs, self.used_vgprs = set(), set(), set()
        try:
            fn(self, inst)
        except Unsupported:
            del b.lines[mark:]
            del self.exits[exits:]
            return None
        lines = b.lines[mark:]
        del b.lines[mark:]
        return lines

    def exit_here(self, code: int, off=None) -> None:
        """End the current IR block with an exit (code, PC offset); `off` is an i64 value or int."""
        label = self.b.fresh("x")[1:]
        self.b.raw(f"br label %{label}")
        self.b.label(label)
        self.exits.append((label, code, str(self.off if off is None else off)))
        self.b.raw("br label %exit")

    def branch_exit(self, cond: str, code: int, off=None) -> None:
        """If i1 `cond`: exit with (code, off); else continue in a fresh IR block."""
        b = self.b
        out, cont = b.fresh("x")[1:], b.fresh("c")[1:]
        b.br_rare(cond, out, cont)
        b.label(out)
        self.exits.append((out, code, str(self.off if off is None else off)))
        b.raw("br label %exit")
        b.label(cont)

    def site(self, addr: str, active: str | None, size: int, store: bool) -> None:
        """Mark a memory access for the fused launch's order check: `addr` the lanes' 64-bit addresses
        (<lanes x i64>, with the i1 vector `active`) or one i64 address (`active` None), `size` bytes each.
        translate.build_module expands the mark once every site of the region is known (fused.py)."""
        n = len(self.sites)
        self.sites.append((self.off, store))
        self.b.raw(f";SITE {n} {addr} {active or '-'} {size}")

    def extent(self, addr: str, active: str, size: int) -> tuple[str, str]:
        """[lowest active lane's address, highest one's + size) of <lanes x i64> addresses, as i64 values."""
        b = self.b
        n = self.lanes
        umin, umax = f"@llvm.vector.reduce.umin.v{n}i64", f"@llvm.vector.reduce.umax.v{n}i64"
        low = b.op(f"select {b.vmask} {active}, {b.v64} {addr}, {b.v64} {b.splat('i64', -1)}")
        high = b.op(f"select {b.vmask} {active}, {b.v64} {addr}, {b.v64} zeroinitializer")
        lo = b.call("i64", umin, [(b.v64, low)], f"declare i64 {umin}({b.v64})")
        top = b.call("i64", umax, [(b.v64, high)], f"declare i64 {umax}({b.v64})")
        return lo, b.op(f"add i64 {top}, {size}")

    # ---------------------------------------------------------------------------------------- SGPRs
    def sgpr(self, code: int) -> str:
        """The 32-bit SGPR-file slot `code` (0-127, by operand code)."""
        if not 0 <= code < 128:
            raise Unsupported(f"SGPR code {code}")
        self.sgprs.add(code)
        return self.b.op(f"load i32, ptr %S{code}")

    def set_sgpr(self, code: int, value: str) -> None:
        """Write slot `code` (a write to null or past the file is dropped, as operand.write_sgpr does)."""
        if code == self.null or not 0 <= code < 128:
            return
        self._store_sgpr(code, value)

    def _store_sgpr(self, code: int, value: str) -> None:
        self.sgprs.add(code)
        self.sgprs_written.add(code)
        self.wrote_sgprs.add(code)
        self.b.raw(f"store i32 {value}, ptr %S{code}")

    def sgpr64(self, code: int) -> str:
        if not 0 <= code < 127:
            raise Unsupported(f"SGPR pair at {code}")
        lo, hi = self.sgpr(code), self.sgpr(code + 1)
        return self.join64(lo, hi)

    def set_sgpr64(self, code: int, value: str) -> None:
        """A 64-bit write: the low dword as set_sgpr, the high one to code + 1 when that is in the file."""
        if code == self.null or not 0 <= code < 128:
            return
        lo, hi = self.split64(value)
        self._store_sgpr(code, lo)
        if code + 1 < 128:
            self._store_sgpr(code + 1, hi)

    def join64(self, lo: str, hi: str, ty: str = "i64", half: str = "i32") -> str:
        b = self.b
        lo64 = b.op(f"zext {half} {lo} to {ty}")
        hi64 = b.op(f"zext {half} {hi} to {ty}")
        sh = b.op(f"shl {ty} {hi64}, {32 if ty == 'i64' else b.splat('i64', 32)}")
        return b.op(f"or {ty} {sh}, {lo64}")

    def split64(self, value: str, ty: str = "i64", half: str = "i32") -> tuple[str, str]:
        b = self.b
        lo = b.op(f"trunc {ty} {value} to {half}")
        sh = b.op(f"lshr {ty} {value}, {32 if ty == 'i64' else b.splat('i64', 32)}")
        return lo, b.op(f"trunc {ty} {sh} to {half}")

    # ---- SCC, EXEC, VCC ------------------------------------------------------------------------------
    def scc(self) -> str:
        """SCC as i1."""
        return self.b.op("load i1, ptr %SCC")

    def set_scc(self, cond: str) -> None:
        self.b.raw(f"store i1 {cond}, ptr %SCC")

    def mask(self, code: int) -> str:
        """A lane-mask SGPR (pair in wave64) as the mask integer (i32/i64)."""
        return self.sgpr(code) if self.lanes == 32 else self.sgpr64(code)

    def set_mask(self, code: int, value: str) -> None:
        """Write a mask integer like valu._write_mask / set_mask64 (null and codes past the file dropped)."""
        if self.lanes == 32:
            self.set_sgpr(code, value)
        else:
            self.set_sgpr64(code, value)

    def exec_bits(self) -> str:
        return self.mask(EXEC_LO)

    def exec_lanes(self) -> str:
        return self.b.lane_mask(self.exec_bits())

    def count_lanes(self) -> None:
        """Mark the instruction being lowered as a VALU one: lane-ops += active lanes before it runs. The
        block assembly adds them up per run of instructions under one EXEC (translate.build_module)."""
        self.valu = True

    def add_lanes(self, count: int) -> None:
        """lane-ops += `count` times the active lanes of the current EXEC."""
        if not count:
            return
        b = self.b
        n = b.call(b.mask_int, f"@llvm.ctpop.{b.mask_int}", [(b.mask_int, self.exec_bits())],
                   f"declare {b.mask_int} @llvm.ctpop.{b.mask_int}({b.mask_int})")
        n64 = n if self.lanes == 64 else b.op(f"zext i32 {n} to i64")
        if count != 1:
            n64 = b.op(f"mul i64 {n64}, {count}")
        cur = b.op("load i64, ptr %LANEOPS")
        b.raw(f"store i64 {b.op(f'add i64 {cur}, {n64}')}, ptr %LANEOPS")

    # ---------------------------------------------------------------------------------------- scalar sources
    def scalar_const(self, code: int, wide: bool, literal: int | None) -> int | None:
        """The value of a constant or literal scalar operand, as operand.constant gives it (None if `code`
        is not one); a 32-bit literal in a 64-bit operand zero-extends."""
        if code == 255:
            return literal64(literal or 0, "b64") if wide else literal or 0
        return constant(code, "b64" if wide else "b32")

    def special(self, code: int, wide: bool) -> str:
        """Operands read through operand.scalar_src's specials: apertures, vccz, execz, scc, 239."""
        b = self.b
        ty = "i64" if wide else "i32"
        if code == 235:
            return str(SHARED_BASE_HI)
        if code == 237:
            return str(PRIVATE_BASE_HI)
        if code in (236, 238):
            return str(APERTURE_LIMIT_LO)
        if code == 239:
            return "0"
        if code in (251, 252):
            m = self.mask(VCC_LO if code == 251 else EXEC_LO)
            z = b.op(f"icmp eq {b.mask_int} {m}, 0")
            return b.op(f"zext i1 {z} to {ty}")
        if code == 253:
            return b.op(f"zext i1 {self.scc()} to {ty}")
        raise Unsupported(f"scalar operand {code}")

    def scalar_src(self, code: int, literal: int | None, kind: str = "b32") -> str:
        """A scalar source of one wave as operand.scalar_src (and scalar.alu) read it: SGPRs (null reads 0), the
        literal (extended into a 64-bit `kind` as operand.literal64 says), inline constants of `kind`, specials."""
        wide = kind in ("b64", "f64", "i64")
        if code < 128:
            if code == self.null:
                return "0"
            return self.sgpr64(code) if wide else self.sgpr(code)
        if code == 255:
            return str(literal64(literal or 0, kind) if wide else literal or 0)
        c = constant(code, kind)
        return str(c) if c is not None else self.special(code, wide)

    # ---------------------------------------------------------------------------------------- VGPRs
    def vgpr(self, r: int) -> str:
        if not 0 <= r < self.nvgpr:
            raise Unsupported(f"v{r} past the allocation")
        self.vgprs.add(r)
        self.used_vgprs.add(r)
        return self.b.op(f"load {self.b.v32}, ptr %V{r}")

    def set_vgpr(self, r: int, value: str, lanes: str | None) -> None:
        """Write VGPR r (<L x i32>) in the lanes of the i1 vector `lanes` (None: every lane)."""
        if not 0 <= r < self.nvgpr:
            raise Unsupported(f"v{r} past the allocation")
        b = self.b
        if lanes is not None:
            old = self.vgpr(r)
            value = b.op(f"select {b.vmask} {lanes}, {b.v32} {value}, {b.v32} {old}")
        self.vgprs.add(r)
        self.vgprs_written.add(r)
        self.wrote_vgprs.add(r)
        self.used_vgprs.add(r)
        b.raw(f"store {b.v32} {value}, ptr %V{r}")

    def vgpr64(self, r: int) -> str:
        b = self.b
        return self.join64(self.vgpr(r), self.vgpr(r + 1), b.v64, b.v32)

    def set_vgpr64(self, r: int, value: str, lanes: str | None) -> None:
        b = self.b
        lo, hi = self.split64(value, b.v64, b.v32)
        self.set_vgpr(r, lo, lanes)
        self.set_vgpr(r + 1, hi, lanes)

    def broadcast32(self, scalar: str) -> str:
        if scalar.lstrip("-").isdigit():
            return self.b.splat("i32", int(scalar) & 0xFFFFFFFF)
        return self.b.broadcast("i32", scalar)

    def broadcast64(self, scalar: str) -> str:
        if scalar.lstrip("-").isdigit():
            return self.b.splat("i64", int(scalar) & 0xFFFFFFFFFFFFFFFF)
        return self.b.broadcast("i64", scalar)


# ---------------------------------------------------------------------------------------------- assembly


def ctx_field(b: Builder, index: int, ty: str = "i64") -> str:
    p = b.op(f"getelementptr i64, ptr %ctx, i64 {index}")
    return b.op(f"load {ty}, ptr {p}")


def wave_function(lw: Lowering, region, body: list[str], entries=None) -> str:
    """The text of @wave: register locals, the entry switch, the blocks (`body`) and the exit. `entries`
    (translate.entry_vgprs, or None: all of them) are the VGPRs to load and store back per entry block."""
    b = Builder(lw.lanes)
    b._n = lw.b._n  # keep SSA names unique against the body's
    L = lw.lanes
    b.raw("%SCC = alloca i1")
    b.raw("%LANEOPS = alloca i64")
    b.raw("%MAXLAST = alloca i64")
    b.raw("%BUDGET = alloca i64")
    for c in sorted(lw.sgprs):
        b.raw(f"%S{c} = alloca i32")
    for r in sorted(lw.vgprs):
        b.raw(f"%V{r} = alloca {b.v32}")
    if lw.hints:  # the windows memory instructions used last, kept across the waves of a dispatch
        b.raw(f"%hintsp = load ptr, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_HINTS}')}")
    for i, h in enumerate(lw.hints):
        b.raw(f"%{h} = alloca i64")
        slot = b.op(f"getelementptr i64, ptr %hintsp, i64 {i}")
        b.raw(f"store i64 {b.op(f'load i64, ptr {slot}')}, ptr %{h}")
    for i in range(len(region.blocks)):
        b.raw(f"%CNT{i} = alloca i64")
    for name, ty in lw.buffers:
        b.raw(f"%{name} = alloca {ty}, align 64")
    b.raw(f"%fused = icmp ne i64 {ctx_field(b, C_FUSED)}, 0")
    b.raw(f"%b2b = icmp ne i64 {ctx_field(b, C_B2B)}, 0")
    sg = ctx_field(b, C_SGPR, "ptr")
    srow = b.op("mul i64 %k, 128")
    b.raw(f"%sgrow = getelementptr i32, ptr {sg}, i64 {srow}")
    vg = ctx_field(b, C_VGPR, "ptr")
    b.raw(f"%plane = load i64, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_PLANE}')}")
    vrow = b.op(f"mul i64 %k, {4 * L}")
    b.raw(f"%vgrow = getelementptr i8, ptr {vg}, i64 {vrow}")
    scc_p = ctx_field(b, C_SCC, "ptr")
    b.raw(f"%sccp = getelementptr i32, ptr {scc_p}, i64 %k")
    pc_p = ctx_field(b, C_PC, "ptr")
    b.raw(f"%pcp = getelementptr i64, ptr {pc_p}, i64 %k")
    st_p = ctx_field(b, C_STATUS, "ptr")
    b.raw(f"%statusp = getelementptr i8, ptr {st_p}, i64 %k")
    b.raw(f"%base = load i64, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_BASE}')}")
    b.raw(f"%boundp = getelementptr i64, ptr %ctx, i64 {C_BOUND}")
    b.raw(f"%budgetp = getelementptr i64, ptr %ctx, i64 {C_BUDGET}")
    b.raw(f"%windows = load ptr, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_WINDOWS}')}")
    b.raw(f"%nwindows = load i64, ptr {b.op(f'getelementptr i64, ptr %ctx, i64 {C_NWINDOWS}')}")
    counts = ctx_field(b, C_COUNTS, "ptr")
    crow = b.op(f"mul i64 %row, {len(region.blocks)}")
    b.raw(f"%countrow = getelementptr i64, ptr {counts}, i64 {crow}")
    for i in range(len(region.blocks)):  # execution counts stay local while the wave runs
        p = b.op(f"getelementptr i64, ptr %countrow, i64 {i}")
        b.raw(f"store i64 {b.op(f'load i64, ptr {p}')}, ptr %CNT{i}")
    lo_p = ctx_field(b, C_LANEOPS, "ptr")
    b.raw(f"%laneopsp = getelementptr i64, ptr {lo_p}, i64 %row")
    b.raw(f"store i64 {b.op('load i64, ptr %laneopsp')}, ptr %LANEOPS")
    ml_p = ctx_field(b, C_MAXLAST, "ptr")
    b.raw(f"%maxlastp = getelementptr i64, ptr {ml_p}, i64 %row")
    b.raw(f"store i64 {b.op('load i64, ptr %maxlastp')}, ptr %MAXLAST")
    b.raw(f"store i64 {b.op('load i64, ptr %budgetp')}, ptr %BUDGET")
    b.raw("%bound = load i64, ptr %boundp")
    b.raw("%boundoff = sub i64 %bound, %base")
    scc = b.op("load i32, ptr %sccp")
    b.raw(f"store i1 {b.op(f'icmp ne i32 {scc}, 0')}, ptr %SCC")
    for c in sorted(lw.sgprs):
        p = b.op(f"getelementptr i32, ptr %sgrow, i64 {c}")
        b.raw(f"store i32 {b.op(f'load i32, ptr {p}')}, ptr %S{c}")
    classes = _entry_classes(entries)
    lw.entry_sets = 0 if classes is None else len(classes[0]) - 1
    if classes is None:
        _load_vgprs(b, lw.vgprs)
    else:  # only the VGPRs the entry block's code can reach (translate.entry_vgprs); %CLS picks the stores
        b.raw("%CLS = alloca i32")
        b.raw("%pcin = load i64, ptr %pcp")
        b.raw("%offin = sub i64 %pcin, %base")
        cases = " ".join(f"i64 {blk.start}, label %ld{classes[1][blk.index]}" for blk in region.blocks)
        b.raw(f"switch i64 %offin, label %ld0 [ {cases} ]")
        for c, (load, _store) in enumerate(classes[0]):
            b.label(f"ld{c}")
            b.raw(f"store i32 {c}, ptr %CLS")
            _load_vgprs(b, load)
            b.raw("br label %loaded")
        b.label("loaded")
    hw = ctx_field(b, C_HWREG, "ptr")
    hrow = b.op("mul i64 %k, 64")
    mp = b.op(f"getelementptr i32, ptr {hw}, i64 {b.op(f'add i64 {hrow}, {HW_MODE}')}")
    mode_ok = b.op(f"icmp eq i32 {b.op(f'load i32, ptr {mp}')}, {lw.mode}")
    b.raw("%pc0 = load i64, ptr %pcp")
    b.raw("%off0 = sub i64 %pc0, %base")
    b.raw(f"br i1 {mode_ok}, label %dispatch, label %badmode")
    b.label("badmode")
    b.raw("br label %exit")
    b.label("dispatch")
    first = "entry" if classes is None else "loaded"  # (the block that branches to %dispatch)
    incoming = ", ".join([f"[%off0, %{first}]"] + [f"[{v}, %{lab}]" for lab, v in lw.dynamic])
    b.raw(f"%off = phi i64 {incoming}")
    cases = " ".join(f"i64 {blk.start}, label %b{blk.start}" for blk in region.blocks)
    b.raw(f"switch i64 %off, label %noentry [ {cases} ]")
    b.label("noentry")
    b.raw("br label %exit")
    text = b.lines + body
    # ---- exit: store the registers back ----
    e = Builder(lw.lanes)
    e._n = b._n + 100000
    e.label("exit")
    edges = [("badmode", EXIT_NOENTRY, "%off0"), ("noentry", EXIT_NOENTRY, "%off")] + lw.exits
    e.raw("%xcode = phi i32 " + ", ".join(f"[{c}, %{lab}]" for lab, c, _ in edges))
    e.raw("%xoff = phi i64 " + ", ".join(f"[{o}, %{lab}]" for lab, _, o in edges))
    # A fused batch from a template (ctx C_KEEP 0) keeps no registers: its rows are the template's
    keep = e.op(f"icmp ne i64 {ctx_field(e, C_KEEP)}, 0")
    e.raw(f"br i1 {keep}, label %keepregs, label %counts")
    e.label("keepregs")
    for c in sorted(lw.sgprs_written):
        p = e.op(f"getelementptr i32, ptr %sgrow, i64 {c}")
        e.raw(f"store i32 {e.op(f'load i32, ptr %S{c}')}, ptr {p}")
    if classes is None:
        _store_vgprs(e, lw.vgprs_written)
    else:
        cls = e.op("load i32, ptr %CLS")
        cases = " ".join(f"i32 {c}, label %st{c}" for c in range(1, len(classes[0])))
        e.raw(f"switch i32 {cls}, label %st0 [ {cases} ]")
        for c, (_load, store) in enumerate(classes[0]):
            e.label(f"st{c}")
            _store_vgprs(e, store)
            e.raw("br label %stored")
        e.label("stored")
    scc = e.op("load i1, ptr %SCC")
    e.raw(f"store i32 {e.op(f'zext i1 {scc} to i32')}, ptr %sccp")
    e.raw(f"store i64 {e.op('add i64 %base, %xoff')}, ptr %pcp")
    done = e.op(f"icmp eq i32 %xcode, {EXIT_DONE}")
    e.raw(f"br i1 {done}, label %setdone, label %counts")
    e.label("setdone")
    e.raw(f"store i8 {DONE_STATUS}, ptr %statusp")
    e.raw("br label %counts")
    e.label("counts")
    e.raw(f"store i64 {e.op('load i64, ptr %LANEOPS')}, ptr %laneopsp")
    e.raw(f"store i64 {e.op('load i64, ptr %MAXLAST')}, ptr %maxlastp")
    for i, h in enumerate(lw.hints):
        e.raw(f"store i64 {e.op(f'load i64, ptr %{h}')}, ptr {e.op(f'getelementptr i64, ptr %hintsp, i64 {i}')}")
    for i in range(len(region.blocks)):
        p = e.op(f"getelementptr i64, ptr %countrow, i64 {i}")
        e.raw(f"store i64 {e.op(f'load i64, ptr %CNT{i}')}, ptr {p}")
    e.raw(f"store i64 {e.op('load i64, ptr %BUDGET')}, ptr %budgetp")
    e.raw("ret i32 %xcode")
    # %w: the wave's index in the batch (memory helper, LDS); %row: its row of the round's counts; %k: its row
    # of the register file (the wave's own in a round, its template row in a fused batch)
    lines = ["define internal i32 @wave(ptr %ctx, i64 %w, i64 %row, i64 %k) {", "entry:"]
    return "\n".join(lines + text + e.lines + ["}"])


def _entry_classes(entries) -> tuple[list, list[int]] | None:
    """The distinct (load, store) VGPR sets of the entry blocks, the first empty (an entry at no block
    start runs nothing), and each block's index among them; None: every entry loads all (`entries` None,
    a jump through the switch reachable, or so many distinct sets that the IR would grow past MAX_ENTRY_LOADS
    register moves)."""
    if entries is None or any(x is None for x in entries):
        return None
    sets: list = [(frozenset(), frozenset())]
    index, of = {sets[0]: 0}, []
    for x in entries:
        if x not in index:
            index[x] = len(sets)
            sets.append(x)
        of.append(index[x])
    if sum(len(a) + len(w) for a, w in sets) > MAX_ENTRY_LOADS:
        return None
    return sets, of


def _vgpr_ptr(b: Builder, r: int) -> str:
    off = b.op(f"mul i64 %plane, {r}")
    return b.op(f"getelementptr i8, ptr %vgrow, i64 {off}")


def _load_vgprs(b: Builder, regs) -> None:
    """Copy VGPRs regs from the wave's register rows into their locals %V<r>."""
    for r in sorted(regs):
        p = _vgpr_ptr(b, r)
        b.raw(f"store {b.v32} {b.op(f'load {b.v32}, ptr {p}, align 4')}, ptr %V{r}")


def _store_vgprs(e: Builder, regs) -> None:
    """Copy the locals %V<r> of VGPRs regs back to the wave's register rows."""
    for r in sorted(regs):
        p = _vgpr_ptr(e, r)
        e.raw(f"store {e.v32} {e.op(f'load {e.v32}, ptr %V{r}')}, ptr {p}, align 4")


MAX_ENTRY_LOADS = 4096  # register moves over @wave's entry classes (_entry_classes) before it loads all at once
RARE_WEIGHTS = '!0 = !{!"branch_weights", i32 1, i32 1000000}'


def _ctx_fields(fields: list[tuple[str, int, str | None]]) -> str:
    """A driver's entry lines: for each (name, ctx index, type), %<name>p the field's address and, with a
    type, %<name> its value."""
    out = []
    for name, index, ty in fields:
        out.append(f"  %{name}p = getelementptr i64, ptr %ctx, i64 {index}")
        if ty is not None:
            out.append(f"  %{name} = load {ty}, ptr %{name}p")
    return "\n".join(out)


_ROUND_FIELDS = _ctx_fields([("count", C_COUNT, "i64"), ("waves", C_WAVES, "ptr"), ("exits", C_EXITS, "ptr"),
                             ("cb", C_CALLBACK, "ptr"), ("tick", C_TICK, "ptr"), ("pcs", C_PC, "ptr"),
                             ("bound", C_BOUND, None), ("b2b", C_B2B, "i64")])
ROUND = f"""
define i64 @round(ptr %ctx) {{
entry:
{_ROUND_FIELDS}
  br label %head
head:
  %i = phi i64 [0, %entry], [%i1, %next]
  %more = icmp slt i64 %i, %count
  br i1 %more, label %body, label %out
body:
  %wp = getelementptr i64, ptr %waves, i64 %i
  %w = load i64, ptr %wp
  br label %again
again:
  %code = call i32 @wave(ptr %ctx, i64 %w, i64 %i, i64 %w)
  switch i32 %code, label %record [ i32 {EXIT_CALLBACK}, label %callback
                                    i32 {EXIT_BUDGET}, label %ticked ]
callback:
  %r = call i32 %cb(i64 %i, i64 %w)
  %ok = icmp eq i32 %r, 0
  br i1 %ok, label %again, label %fault
fault:
  br label %record
ticked:
  %t = call i32 %tick(i64 %i, i64 %w)
  %goon = icmp eq i32 %t, {TICK_GO_ON}
  br i1 %goon, label %again, label %stopped
stopped:
  br label %record
record:
  %c = phi i32 [%code, %again], [{EXIT_FAULT}, %fault], [{EXIT_BUDGET}, %stopped]
  %c64 = zext i32 %c to i64
  %ep = getelementptr i64, ptr %exits, i64 %i
  store i64 %c64, ptr %ep
  %isdone = icmp eq i32 %c, {EXIT_DONE}
  br i1 %isdone, label %next, label %park
park:
  %pcp = getelementptr i64, ptr %pcs, i64 %w
  %pc = load i64, ptr %pcp
  %b = load i64, ptr %boundp
  %lower = icmp slt i64 %pc, %b
  %lowered = select i1 %lower, i64 %pc, i64 %b
  %keepbound = icmp ne i64 %b2b, 0
  %nb = select i1 %keepbound, i64 %b, i64 %lowered
  store i64 %nb, ptr %boundp
  %isbudget = icmp eq i32 %c, {EXIT_BUDGET}
  br i1 %isbudget, label %stop, label %next
stop:
  %i2 = add i64 %i, 1
  ret i64 %i2
next:
  %i1 = add i64 %i, 1
  br label %head
out:
  ret i64 %count
}}
"""


def fused_driver(most: int) -> str:
    """@fused(ctx): every wave of a batch from its start to its end, in wave order (fused.py).
    Workgroup after workgroup: the group's ids go into the template's rows (ctx C_GID_X/Y/Z name the SGPRs,
    -1 when not enabled), then each of its waves the template does not mark DONE runs in @wave from its
    template row. 0 when every wave ended; else the exit code + 1 of the wave (ctx C_CURRENT) that did not:
    the batch is then undone and runs as usual. A wave never stops for the budget midway (it would start
    again from its template row): the tick comes between waves, whenever the budget left is under `most`,
    the most instructions a wave of the region can run (its code has no loops); a wave that finds the budget
    too small all the same has reached the watchdog's limit, and the batch is undone."""
    ids = []
    for d, field in enumerate((C_GID_X, C_GID_Y, C_GID_Z)):
        nxt = f"ids{d + 1}"
        ids.append(f"""ids{d}:
  %slotp{d} = getelementptr i64, ptr %ctx, i64 {field}
  %slot{d} = load i64, ptr %slotp{d}
  %on{d} = icmp sge i64 %slot{d}, 0
  br i1 %on{d}, label %fillhead{d}, label %{nxt}
fillhead{d}:
  %gi{d} = add i64 %g3, {d}
  %idp{d} = getelementptr i32, ptr %gids, i64 %gi{d}
  %id{d} = load i32, ptr %idp{d}
  br label %fill{d}
fill{d}:
  %j{d} = phi i64 [0, %fillhead{d}], [%jn{d}, %fill{d}]
  %jr{d} = mul i64 %j{d}, 128
  %js{d} = add i64 %jr{d}, %slot{d}
  %sp{d} = getelementptr i32, ptr %tsgpr, i64 %js{d}
  store i32 %id{d}, ptr %sp{d}
  %jn{d} = add i64 %j{d}, 1
  %jm{d} = icmp slt i64 %jn{d}, %wpg
  br i1 %jm{d}, label %fill{d}, label %{nxt}""")
    return f"""
define i64 @fused(ptr %ctx) {{
entry:
{_ctx_fields([("ngroups", C_NGROUPS, "i64"), ("wpg", C_WPG, "i64"), ("gids", C_GIDS, "ptr"),
              ("tsgpr", C_SGPR, "ptr"), ("tstatus", C_TSTATUS, "ptr"), ("tick", C_TICK, "ptr"),
              ("cur", C_CURRENT, None), ("budget", C_BUDGET, None)])}
  br label %ghead
ghead:
  %g = phi i64 [0, %entry], [%g1, %gnext]
  %gmore = icmp slt i64 %g, %ngroups
  br i1 %gmore, label %gbody, label %done
gbody:
  %g3 = mul i64 %g, 3
  br label %ids0
{chr(10).join(ids)}
ids3:
  br label %whead
whead:
  %k = phi i64 [0, %ids3], [%k1, %wnext]
  %wmore = icmp slt i64 %k, %wpg
  br i1 %wmore, label %wbody, label %gnext
wbody:
  %gw = mul i64 %g, %wpg
  %w = add i64 %gw, %k
  %tsp = getelementptr i8, ptr %tstatus, i64 %k
  %ts = load i8, ptr %tsp
  %empty = icmp eq i8 %ts, {DONE_STATUS}
  br i1 %empty, label %wnext, label %run
run:
  store i64 %w, ptr %curp
  %left = load i64, ptr %budgetp
  %low = icmp slt i64 %left, {most}
  br i1 %low, label %ticked, label %again
ticked:
  %t = call i32 %tick(i64 0, i64 %w)
  %goon = icmp eq i32 %t, {TICK_GO_ON}
  br i1 %goon, label %again, label %abort
again:
  %code = call i32 @wave(ptr %ctx, i64 %w, i64 0, i64 %k)
  %ended = icmp eq i32 %code, {EXIT_DONE}
  br i1 %ended, label %wnext, label %abort
abort:
  %c = phi i32 [{EXIT_BUDGET}, %ticked], [%code, %again]
  %c64 = zext i32 %c to i64
  %r = add i64 %c64, 1
  ret i64 %r
wnext:
  %k1 = add i64 %k, 1
  br label %whead
gnext:
  %g1 = add i64 %g, 1
  br label %ghead
done:
  ret i64 0
}}
"""
