"""The RDNA3 shader engine: runs a `Dispatch` over simulated memory, waves batched by PC.

Waves of a dispatch that stand at the same PC execute together: each instruction is one numpy
operation over [waves, lanes] with EXEC as a mask (a lone wave's scalar instructions use Python ints,
see svalue.py). The scheduler always runs the lowest PC among runnable waves (a fixed order:
deterministic, and waves that fell behind catch up and reconverge); while they all stand at one PC,
`Exec.run` keeps executing until an instruction branches or changes their status. Instructions are
decoded once per code address per dispatch (and once per instruction bytes across engines) and cached
with their semantic function. Large grids run in batches of workgroups so register files stay bounded.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from simgpu.clock import CYCLES_PER_WAVE_INSTRUCTION, Clock
from simgpu.fault import HardwareFault
from simgpu.hw.gmc import PAGE_SIZE
from simgpu.interrupt import Interrupt
from simgpu.isa import DecodeError, decode, fetch_size
from simgpu.isa.arch import DEFAULT as DEFAULT_ARCH
from simgpu.isa.arch import get_arch
from simgpu.shader import semantics
from simgpu.shader.dispatch import Dispatch
from simgpu.shader.jit import jit_tier
from simgpu.shader.operand import highest_agpr, highest_vgpr
from simgpu.shader.setup import initial_state
from simgpu.shader.state import BARRIER, DONE, EXEC_LO, HW_MODE, RUNNING, WaveState, null_and_m0, wsel
from simgpu.shader.tier_exec import TICK

MAX_BATCH_WAVES = 4096
# The default watchdog: wave-instructions one dispatch may execute before it is declared hung. A limit of
# instructions, not of host time, so that it fires at the same instruction on every machine under any load; sized
# far above real workloads (a 1024^3 f32 matmul is ~0.7G: 64x bench_shader's 256^3 one), so only a kernel that
# does not end meets it (after ~5-25 s in the JIT tier, minutes in the interpreter; an explicit wait timeout or
# Ctrl-C stops one sooner).
DEFAULT_WATCHDOG = 1 << 32
BATCH_VGPR_BYTES = 64 << 20  # register-file budget of one batch (large kernels run in smaller batches)
_FETCH_AHEAD = 16  # bytes an instruction fetch reads at once (a scaled MFMA's pair; most take 4-12)
_ONE_WAVE = np.zeros(1, np.int64)  # the wave a fault is located at when no wave asked (Exec.decoded)


@dataclass
class Counters:
    """What the engine did: wave-instructions, lane-ops (active lanes summed), dispatches, per opcode."""

    wave_instructions: int = 0
    lane_ops: int = 0
    dispatches: int = 0
    per_opcode: Counter = field(default_factory=Counter)

    def snapshot(self) -> dict:
        return {"wave_instructions": self.wave_instructions, "lane_ops": self.lane_ops,
                "dispatches": self.dispatches, "per_opcode": dict(self.per_opcode)}


@dataclass
class Progress:
    """Where a running dispatch is, for progress reports: workgroups finished of all, wave-instructions so far."""

    dispatch: Dispatch
    groups_done: int
    groups_total: int
    wave_instructions: int
    finished: bool = False  # the last report of a dispatch (ended or faulted)


class ShaderEngine:
    """Executes dispatches on simulated memory (an MMU with gather/scatter/atomic/read/write)."""

    def __init__(self, mem, clock: Clock | None = None, watchdog: int = DEFAULT_WATCHDOG):
        self.mem = mem
        self.clock = clock or Clock()
        self.counters = Counters()
        self.watchdog = watchdog  # wave-instruction budget per dispatch before a hang is declared
        self.watchdog_setting = "ShaderEngine.watchdog"  # how the owner lets a user raise it (said in the fault)
        self.kernel_names: dict[int, str] = {}  # code address -> symbol name, told by the owner (faults name it)
        # The owner's lookup of a kernel nobody named (e.g. from the code object in memory): (vmid, code address)
        # -> symbol name or None.
        self.find_kernel_name: Callable[[int, int], str | None] | None = None
        # (monotonic time, fault kind, message): the owner stops a dispatch still running then (None: no limit)
        self.deadline: tuple[float, str, str] | None = None
        self.progress_hooks: list[Callable[[Progress], None]] = []  # told every TICK wave-instructions
        self.interrupt_hooks: list[Callable[[Interrupt], None]] = []  # who hears s_sendmsg MSG_INTERRUPT
        # Sees every instruction while performance counters count or the thread trace traces (simgpu.profile);
        # None otherwise, and then nothing of it runs. While it is set, waves run in the interpreter.
        self.observer = None
        self.sanitizer = None  # a simgpu.sanitize.Sanitizer checks every dispatch when set (off: None)
        self.jit = jit_tier()  # the JIT tier (simgpu.shader.jit), None when SIMGPU_JIT=0
        self.exit_states: list | None = None  # when a list: each batch's final (WaveState, scratch), for tests
        # Decoded instructions by (vmid, pc), with the bytes they were decoded from: a dispatch re-reads
        # the bytes (once per PC) and decodes again only if they changed.
        self.decoded: dict[tuple[int, int], tuple[bytes, tuple]] = {}

    def interrupt(self, intr: Interrupt) -> None:
        """A wave's interrupt (s_sendmsg MSG_INTERRUPT), raised at once to every hook (the device), in issue order."""
        for hook in self.interrupt_hooks:
            hook(intr)

    def kernel_name(self, vmid: int, code_address: int) -> str:
        """The symbol name of the kernel at `code_address` (what the owner named, or found), else "at 0x..."."""
        name = self.kernel_names.get(code_address)
        if name is None and self.find_kernel_name is not None:
            try:
                name = self.find_kernel_name(vmid, code_address)
            except Exception:  # noqa: BLE001 - a fault report must not fail on naming the kernel
                name = None
            if name is not None:
                self.kernel_names[code_address] = name
        return name if name is not None else f"at {code_address:#x}"

    def run(self, d: Dispatch) -> None:
        """Run every workgroup of the dispatch to completion (or raise HardwareFault)."""
        self.counters.dispatches += 1
        ex = Exec(self, d)
        total = ex.group_count()
        wave_bytes = d.vgpr_count * d.wave_size * 4 + d.private_segment_size * d.wave_size
        waves = min(MAX_BATCH_WAVES, max(1, BATCH_VGPR_BYTES // max(wave_bytes, 1)))
        per_batch = max(1, waves // ex.waves_per_group)
        # Float exceptions are results on a GPU (NaN, inf, flushed denormals), never errors: one
        # error-state switch for the whole dispatch instead of one per instruction.
        try:
            with np.errstate(all="ignore"):
                for start in range(0, total, per_batch):
                    ex.groups_before = start
                    ex.run_batch(start, min(per_batch, total - start))
        finally:
            if ex.sanitizer is not None:
                ex.sanitizer.end()
            if ex.jit is not None:
                ex.jit.end()
            if self.progress_hooks:
                done = Progress(d, total, total, ex.used + ex.slice - ex.budget, finished=True)
                for hook in self.progress_hooks:
                    hook(done)


# Decoded instructions by the bytes fetched at their PC, shared by every engine: the same kernel loaded
# again (each test's fresh device, another address) decodes once. A decoded instruction and what
# semantics cache on it are functions of its bytes alone (and of the architecture: one cache for each).
# Emptied when full, like a cache would be.
_DECODED: dict[bytes, tuple] = {}
_DECODED_BY_ARCH: dict[str, dict[bytes, tuple]] = {DEFAULT_ARCH: _DECODED}
_DECODED_CAPACITY = 1 << 15  # about 2 KB each: at most ~64 MB
# The same, by the instruction's own bytes, for instructions one dword shorter than their fetch: a fetch reads as
# much as the encoding could take (a literal may follow), so one instruction followed by different bytes (another
# kernel's next instruction) is another key above; here it is found again instead of decoded (a third of the
# decodes of tinygrad's test_ops kernels). Only a dword short: decoding reads nothing past such an instruction (its
# extension dwords are chosen by its own fields), unlike gfx950's scaled-MFMA pair, which looks two dwords on.
_EXACT_BY_ARCH: dict[str, dict[bytes, tuple]] = {}


def _wave_range(waves: np.ndarray) -> str:
    """'wave 3' or 'waves 0-63 (64)' or 'waves 0, 5, 9 (3)' for sorted wave indices."""
    if len(waves) == 1:
        return f"wave {waves[0]}"
    if int(waves[-1]) - int(waves[0]) + 1 == len(waves):
        return f"waves {waves[0]}-{waves[-1]} ({len(waves)})"
    shown = ", ".join(str(int(i)) for i in waves[:4])
    return f"waves {shown}{', ...' if len(waves) > 4 else ''} ({len(waves)})"


def _decode_entry(data: bytes, arch: str = DEFAULT_ARCH) -> tuple | None:
    """(inst, semantic function, is VALU) for instruction bytes of `arch`, or None if they do not decode to an
    implemented instruction (the caller then reports why)."""
    cache = _DECODED if arch == DEFAULT_ARCH else _DECODED_BY_ARCH.setdefault(arch, {})
    entry = cache.get(data)
    if entry is None:
        exact = _EXACT_BY_ARCH.setdefault(arch, {})
        entry = exact.get(data[:-4])
        if entry is None:
            try:
                # LLVM's default encodings, or its True16 ones (v_mov_b16_e64)
                inst = decode(data, true16=None, arch=arch)
            except DecodeError:
                return None
            fn = semantics.lookup(inst)
            if fn is None:
                return None
            entry = (inst, fn, inst.mnemonic.startswith("v_"))
            if inst.size == len(data) - 4:
                if len(exact) >= _DECODED_CAPACITY:
                    exact.clear()
                exact[data[:-4]] = entry
        if len(cache) >= _DECODED_CAPACITY:
            cache.clear()
        cache[data] = entry
    return entry


class Exec:
    """One dispatch in flight: its decode cache, the current batch's wave state, and operand access. An
    execution tier uses only what tier_exec.TierExec names (the methods under "for a tier" among them)."""

    def __init__(self, engine: ShaderEngine, d: Dispatch):
        self.engine, self.d, self.mem, self.vmid = engine, d, engine.mem, d.vmid
        self.arch = d.arch  # the machine code's architecture: instructions decode and execute as its
        self.family = get_arch(d.arch).family  # "gfx11", "gfx12", "gfx9"
        self.null, self.m0 = null_and_m0(self.family)  # their operand codes (gfx9 swaps them)
        self.lanes = d.wave_size
        wg = d.workgroup
        self.group_items = wg[0] * wg[1] * wg[2]
        self.waves_per_group = -(-self.group_items // self.lanes)
        self.cache: dict[int, tuple] = {}
        # The watchdog's budget is spent in slices of at most TICK; the end of a slice (budget < 0) is when the
        # engine looks at the wall clock and reports progress, so the hot loop tests one counter only.
        self.remaining = engine.watchdog
        self.slice = self.budget = min(TICK, self.remaining)
        self.used = 0  # wave-instructions of this dispatch in finished slices
        self.groups_before = 0  # workgroups of earlier batches (all finished)
        self.batch_count = 0  # workgroups in the current batch
        self.st: WaveState | None = None
        self.uniform_mode: int | None = None  # MODE of every wave of the batch, None once any wave wrote it
        self.scratch: np.ndarray | None = None
        # Sanitizers check through checked semantic functions (wrapped at fetch): the interpreter tier only,
        # and nothing is wrapped or tested per instruction when they are off.
        self.sanitizer = engine.sanitizer.observe(self) if engine.sanitizer is not None else None
        # The JIT tier runs waves natively unless an observer or a sanitizer needs to see every instruction (its
        # translators follow the semantics table per ISA family: jit.lower.translator).
        self.jit = engine.jit.begin(self) if engine.jit is not None and engine.observer is None \
            and self.sanitizer is None else None

    def batch_groups(self, start: int, count: int) -> list[tuple[int, int, int]]:
        """The coordinates of workgroups start .. start + count - 1 of the grid, x fastest (the order batches
        take them in)."""
        gx, gy, _gz = self.d.workgroups
        return [(g % gx, g // gx % gy, g // (gx * gy)) for g in range(start, start + count)]

    def group_count(self) -> int:
        """The grid's workgroups."""
        gx, gy, gz = self.d.workgroups
        return gx * gy * gz

    # ---------------------------------------------------------------------------------- scheduling

    def run_batch(self, start: int, count: int) -> None:
        """Run workgroups start .. start + count - 1 of the grid (a batch) to their end."""
        self.batch_count = count
        if self.jit is not None and self.engine.observer is None and self.jit.fused_batch(count):
            # the JIT tier ran the whole batch (jit/fused.py); self.st: its registers if kept, else None
            if self.engine.exit_states is not None:
                self.engine.exit_states.append((self.st, self.scratch))
            return
        groups = self.batch_groups(start, count)
        self.st = initial_state(self.d, groups, self.waves_per_group)
        # Every wave starts with the descriptor's MODE; until one writes MODE, float ops read it as one int.
        self.uniform_mode = int(self.st.hwreg[0, HW_MODE])
        priv = self.d.private_segment_size
        self.scratch = np.zeros((self.st.n, self.lanes, priv), np.uint8) if priv else None
        if self.sanitizer is not None:
            self.sanitizer.batch(groups)
        st, observer = self.st, self.engine.observer
        jit = self.jit if observer is None else None
        run = self.run
        if observer is not None:
            observer.batch_start(self)
            run = self.run_observed
        one = np.zeros(1, np.int64) if st.n == 1 else None
        while True:
            if one is not None:  # a single wave: no search at all
                if st.status[0] != RUNNING:
                    if not self.release_barriers():
                        break
                    continue
                pc = int(st.pc[0])
                if jit is None or not jit.step(pc, one):
                    run(pc, one, True)
                continue
            runnable = st.status == RUNNING
            if not runnable.any():
                if not self.release_barriers():
                    break
                continue
            pc = int(st.pc[runnable].min())
            w = np.nonzero(runnable & (st.pc == pc))[0]
            if jit is not None and jit.step(pc, w):  # the JIT tier ran these waves (jit/tier.py)
                continue
            # When every runnable wave stands at this PC they stay together while instructions fall through.
            run(pc, w, len(w) == int(np.count_nonzero(runnable)))
        if observer is not None:
            observer.batch_end(self)
        if self.engine.exit_states is not None:
            self.engine.exit_states.append((st, self.scratch))

    def run(self, pc: int, w: np.ndarray, straight: bool, observer=None) -> None:
        """Execute the instruction at `pc` for waves `w` and, when `straight`, the following ones for as
        long as they fall through (a fall-through instruction moves all its waves to the next PC and
        changes no status, so they stay one group). Locals hold what every instruction touches. An
        `observer` (simgpu.profile) is shown each instruction as the waves issue it and after it ran."""
        counters, clock, per_opcode = self.engine.counters, self.engine.clock, self.engine.counters.per_opcode
        cache, pcs = self.cache, self.st.pc
        n = len(w)
        ix = w.item(0) if n == 1 else wsel(w)
        while True:
            inst, fn, is_valu = cache.get(pc) or self.fetch(pc, w)
            if observer is not None:
                time = clock.cycles
                kind = observer.before(self, w, pc, inst)
            counters.wave_instructions += n
            per_opcode[inst.mnemonic] += n
            if is_valu:
                counters.lane_ops += self.active_lanes(w)
            clock.cycles += n * CYCLES_PER_WAVE_INSTRUCTION
            self.budget -= n
            if self.budget < 0:
                self.tick(w, pc, inst)
            try:
                nxt = fn(self, w, inst)
            except HardwareFault as f:
                self._locate(f, w, pc, inst)
                raise
            except Exception as e:  # noqa: BLE001 - a simulator bug must surface as a fault, not a crash
                raise self._unexpected(w, pc, inst, e) from e
            if observer is not None:
                observer.after(self, w, pc, inst, kind, time)
            if nxt is not None:  # the instruction set the PC (a branch) or the status itself
                return
            pc += inst.size
            pcs[ix] = pc
            if not straight:
                return

    def run_observed(self, pc: int, w: np.ndarray, straight: bool) -> None:
        """`run` with the engine's observer shown every instruction (the same schedule as without it)."""
        self.run(pc, w, straight, self.engine.observer)

    def active_lanes(self, w: np.ndarray) -> int:
        """EXEC's set bits summed over waves `w` (Python's int.bit_count for one wave: no numpy call)."""
        sg = self.st.sgpr
        if len(w) == 1:
            w0 = w.item(0)
            lanes = int(sg[w0, EXEC_LO]).bit_count()
            return lanes + int(sg[w0, EXEC_LO + 1]).bit_count() if self.lanes == 64 else lanes
        ix = wsel(w)
        lanes = int(np.bitwise_count(sg[ix, EXEC_LO]).sum())
        return lanes + int(np.bitwise_count(sg[ix, EXEC_LO + 1]).sum()) if self.lanes == 64 else lanes

    def fetch(self, pc: int, w: np.ndarray):
        hit = self.cache.get(pc)
        if hit is not None:
            return hit
        try:
            # One read for most instructions: as many bytes as the longest encoding takes, within pc's page
            # (access is granted page by page, so bytes past the instruction in its page cannot fault).
            ahead = min(_FETCH_AHEAD, PAGE_SIZE - (pc & (PAGE_SIZE - 1)))
            data = self.mem.read(self.vmid, pc, ahead, access="execute")
            size = fetch_size(int.from_bytes(data[:4], "little"), self.arch)
            if size > ahead:
                data += self.mem.read(self.vmid, pc + ahead, size - ahead, access="execute")
            data = data[:size]
        except HardwareFault as f:
            self._locate(f, w, pc, None)
            raise
        known = self.engine.decoded.get((self.vmid, pc))
        if known is not None and known[0] == data and known[1][0].arch == self.arch:  # as an earlier dispatch's
            entry = known[1]
        else:
            entry = _decode_entry(data, self.arch) or self._decode_fault(w, pc, data)
            self.engine.decoded[(self.vmid, pc)] = (data, entry)
        if self.sanitizer is not None:
            entry = self.sanitizer.wrap(entry)
        self.cache[pc] = entry
        return entry

    def _decode_fault(self, w: np.ndarray, pc: int, data: bytes):
        try:
            inst = decode(data, true16=None, arch=self.arch)
        except DecodeError as e:
            raise self.illegal_inst(w, None, f"cannot decode: {e}", pc) from None
        raise self.illegal_inst(w, inst, f"{inst.mnemonic} is not implemented", pc)

    def _unexpected(self, w: np.ndarray, pc: int, inst, e: Exception) -> HardwareFault:
        """The fault for an exception a semantic function did not mean to raise. An index past the VGPR
        file from an instruction that names a VGPR beyond the kernel descriptor's allocation is the
        program's error (compilers never emit one; what hardware does is not documented); anything
        else is a simulator bug, reported as an internal error."""
        top, allocated = highest_vgpr(inst), self.st.vgpr.shape[0]
        if isinstance(e, IndexError) and top >= allocated:
            return self.illegal_inst(w, inst, f"v{top} is past the {allocated} VGPRs the kernel descriptor allocates",
                                     pc)
        top_a = highest_agpr(inst)  # gfx942: aN is entry ACCUM_OFFSET + N of the unified file
        if isinstance(e, IndexError) and top_a >= 0 and self.d.accum_offset + top_a >= allocated:
            return self.illegal_inst(w, inst, f"a{top_a} is past the {allocated - self.d.accum_offset} AccVGPRs the "
                                              f"kernel descriptor allocates", pc)
        return self.fault(w, pc, inst, "internal_error", f"{type(e).__name__}: {e}")

    def release_barriers(self) -> bool:
        st = self.st
        waiting = st.status == BARRIER
        if not waiting.any():
            return False
        live = st.status != DONE
        per_group_live = np.bincount(st.group[live], minlength=len(st.lds))
        per_group_wait = np.bincount(st.group[waiting], minlength=len(st.lds))
        ready = (per_group_live == per_group_wait) & (per_group_wait > 0)
        release = waiting & ready[st.group]
        if not release.any():
            raise self.fault(np.nonzero(waiting)[0][:1], int(st.pc[waiting][0]), None, "deadlock",
                             "waves wait at s_barrier forever")
        st.status[release] = RUNNING
        st.pc[release] += 4
        return True

    def tick(self, w, pc: int, inst) -> None:
        """The end of a budget slice: the watchdog, the owner's deadline, progress hooks; then a new slice."""
        used = self.slice - self.budget
        self.used += used
        self.remaining -= used
        if self.remaining < 0:
            e = self.engine
            raise self.hang(w, pc, inst, "watchdog", f"wave-instruction budget of {e.watchdog} exceeded (a kernel "
                                                     f"that does not end? {e.watchdog_setting} raises the budget)")
        overdue = self.overdue()
        if overdue is not None:
            raise self.hang(w, pc, inst, *overdue)
        if self.engine.progress_hooks:
            st = self.st  # (None after a fused batch: all its waves ended)
            self.report_progress(int(np.count_nonzero(st.status == DONE)) if st is not None else
                                 self.batch_count * self.waves_per_group)
        self.slice = self.budget = min(TICK, self.remaining)

    # ---------------------------------------------------------------------------------- for a tier

    def allowed(self) -> int:
        """Wave-instructions the watchdog still allows this dispatch."""
        return self.remaining - self.slice + self.budget

    def decoded(self, pc: int):
        """The instruction at `pc` through the decode cache; None when it cannot be fetched or decoded."""
        try:
            return self.fetch(pc, _ONE_WAVE)[0]
        except HardwareFault:
            return None

    def initial_state(self, start: int, count: int) -> WaveState:
        """Setup's registers for workgroups start .. start + count - 1, as run_batch builds a batch's."""
        return initial_state(self.d, self.batch_groups(start, count), self.waves_per_group)

    def charge(self, n: int, lanes: int, w: np.ndarray | None = None) -> None:
        """Count, clock and take from the watchdog's budget `n` wave-instructions (`lanes` lane-ops) a tier ran,
        as `run` does its own; a slice ending in them ticks at the first wave of `w` where it stands (None: at
        the kernel's entry, for a fused batch, whose waves have all ended)."""
        c = self.engine.counters
        c.wave_instructions += n
        c.lane_ops += lanes
        self.engine.clock.cycles += n * CYCLES_PER_WAVE_INSTRUCTION
        self.budget -= n
        if self.budget >= 0:
            return
        if w is None:
            self.tick(np.zeros(1, np.int64), self.d.code_address, None)
            return
        pc = int(self.st.pc[w[0]])
        entry = self.cache.get(pc)
        self.tick(w[:1], pc, entry[0] if entry else None)

    def overdue(self) -> tuple[str, str] | None:
        """(fault kind, message) once the owner's deadline has passed, else None."""
        deadline = self.engine.deadline
        if deadline is not None and time.monotonic() > deadline[0]:
            return deadline[1], deadline[2]
        return None

    def report_progress(self, waves_done: int, ran: int = 0) -> None:
        """Tell the progress hooks where the dispatch is: `waves_done` waves of the batch ended, `ran`
        wave-instructions of the current slice run (the finished slices' are `used`)."""
        p = Progress(self.d, self.groups_before + waves_done // self.waves_per_group, self.group_count(),
                     self.used + ran)
        for hook in self.engine.progress_hooks:
            hook(p)

    def hang(self, w, pc: int, inst, kind: str, message: str) -> HardwareFault:
        """A fault for a dispatch that did not end: the wave at hand, and where every wave of the batch is."""
        f = self.fault(w, pc, inst, kind, message)
        f.waves = self.describe_waves()
        return f

    def describe_waves(self, limit: int = 16) -> list[str]:
        """One line per group of waves at the same PC and status: PC, instruction, EXEC, what they wait for."""
        st, out = self.st, []
        if st is None:
            return out
        keys = sorted({(int(st.status[i]), int(st.pc[i])) for i in range(st.n) if st.status[i] != DONE})
        for status, pc in keys[:limit]:
            waves = np.nonzero((st.status == status) & (st.pc == pc))[0]
            entry = self.cache.get(pc)
            text = entry[0].text() if entry else "?"
            execs = sorted({int(m) for m in st.mask64(waves, 126)})
            exec_text = f"exec {execs[0]:#x}" if len(execs) == 1 else f"exec {len(execs)} different masks"
            one = len(waves) == 1
            what = (f"{'waits' if one else 'wait'} at s_barrier for the rest of {'its' if one else 'their'} workgroup"
                    if status == BARRIER else "running")
            out.append(f"{_wave_range(waves)}: pc {pc:#x} [{text}] {exec_text}, {what}")
        if len(keys) > limit:
            out.append(f"... and {len(keys) - limit} more groups of waves")
        done = int(np.count_nonzero(st.status == DONE))
        if done:
            out.append(f"{done} of {st.n} waves of the batch have ended")
        return out

    # ---------------------------------------------------------------------------------- faults

    def fault(self, w, pc: int, inst, kind: str, message: str) -> HardwareFault:
        f = HardwareFault(kind, message, vmid=self.vmid)
        self._locate(f, w, pc, inst)
        return f

    def illegal_inst(self, w, inst, why: str, pc: int | None = None) -> HardwareFault:
        """The fault to raise when waves `w` meet an instruction they cannot execute: the wave's ILLEGAL_INST
        exception (SQ_WAVE_TRAPSTS.ILLEGAL_INST; the SQ reports it to the driver as an ILLEGAL_INST error), kind
        "illegal_instruction", `why` its message, located at `pc` (default the first wave's) and `inst` (None when
        the caller does not have it: the run loop then names the instruction)."""
        return self.fault(w, int(self.st.pc[w[0]]) if pc is None else pc, inst, "illegal_instruction", why)

    def _locate(self, f: HardwareFault, w, pc: int, inst) -> None:
        w0 = w.item(0) if len(w) else 0
        if f.kernel is None:
            f.kernel = self.engine.kernel_name(self.vmid, self.d.code_address)
        f.wave = w0 if f.wave is None else f.wave
        f.pc = pc if f.pc is None else f.pc
        if f.instruction is None and inst is not None:
            try:
                f.instruction = inst.text()
            except Exception:  # noqa: BLE001 - a fault report must not fail on printing
                f.instruction = inst.mnemonic
        if not f.registers and self.st is not None:
            f.registers = {"sgpr": self.st.sgpr[w0].copy(), "vgpr": self.st.vgpr[:, w0].copy(),
                           "scc": int(self.st.scc[w0]), "exec": int(self.st.mask64(np.array([w0]), 126)[0])}
        f.args = (str(f),)
