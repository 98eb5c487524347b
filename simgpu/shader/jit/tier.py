"""The JIT tier in the engine: when to compile, and how compiled waves keep the interpreter's order.

Order. The interpreter always runs the lowest PC among runnable waves, all waves there together. Only
instructions whose effect reaches other waves or the engine can tell one order from another; the
translator makes those *sync* instructions (region.is_sync) and never runs them. So the tier runs a
*round*: for the waves standing at the lowest PC, each wave alone in native code (registers local),
until it parks before a sync instruction, before a block reaching the *bound*, or at an instruction the
region does not cover. The bound is the lowest PC any other wave stands at (waves outside the round,
and the parks of the waves already run in it): in the interpreter no wave could pass a wave waiting
there before that one moved, and no write happens while every wave runs sync-free code. A wave that
ran past a PC where a later wave of the round parked is rolled back (registers restored: its code wrote
no memory) and run again with that bound. The interpreter then runs the sync instruction for exactly
the waves it would have run it for. Each round's counters and clock are those of the instructions run.

Fused launch. A kernel whose region has no loops (every branch goes forward) and is native but for
stores the translator covers (translate.fusable) runs each batch in one native call, @fused: workgroup
after workgroup, each wave from its start to its end, in wave order. Registers come from a template, one
workgroup's initial state with the group's ids written in (setup.py: only the ids differ between whole
workgroups), and nothing is stored back; with registers kept for tests (ShaderEngine.exit_states) or
partial workgroups at the grid's edge, each wave starts from and ends in its own row of the batch's
initial state, as in a round. No batch-sized register file is built. Stores run natively (lower_store)
and keep the old dwords in an undo log. Why the order is the interpreter's: with forward branches only,
the interpreter runs a batch's instructions in PC order, each once for every wave that reaches it, in
wave order; a fused batch runs them wave after wave. The two orders differ only for an access at a PC p
by wave k and one at a PC q > p by an earlier wave, so each memory site checks its access's VA extent
against the extents the earlier waves had at every later site where one of the two is a store (hulls,
Lowering.site); VAs stand for memory because every access of a fused batch goes through a window and no
two windows reach the same memory through different VAs (TierWindows.aliased). A failed check, a store or
read without a window (a fault), the watchdog's limit or an exception ends the call: its stores are
undone from the log and the batch runs in rounds (the kernel's later batches too after a failed check).
Counters and the clock come from block counts, as for rounds.

Intervals. A kernel with LDS stores runs barrier to barrier where it can (barrier.py): when every runnable wave
of a batch stands at one PC, one native call runs each wave to its next s_barrier, LDS stores native and
checked for races between waves (lower_lds); JitRun.step asks it before a round, and a failed interval is
undone and runs in rounds.

Tiers. SIMGPU_JIT=0 turns the JIT off; `eager` compiles a kernel at its first dispatch; the default
compiles a kernel once the interpreter has spent SIMGPU_JIT_HOT milliseconds of CPU time on it over its
dispatches (default 20). Then the launching thread only walks the kernel's reachable code (the decode
cache's entries) and reads its bytes; translation to IR and loading run in a background thread, LLVM's
code generation (no GIL held) in another, while the interpreter goes on: no
launch waits for a compile. A compile beside the launch takes some of its CPU (the translation's Python,
llvmlite's import for a process's first), so it starts at once only when it pays within the launch
(JitRun._pays_now: a free CPU, large batches whose numpy loops release the GIL, enough interpretation
still ahead); otherwise it starts when the dispatch ends, and the launch that found the kernel hot runs
as the interpreter alone would. A kernel that never gets hot never pays for compiling.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import threading
import time
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from simgpu import settings
from simgpu.fault import HardwareFault
from simgpu.mem.windows import TierWindows
from simgpu.shader.engine import TICK
from simgpu.shader.jit import compile as jc
from simgpu.shader.jit import costs as hc
from simgpu.shader.jit import lower as lo
from simgpu.shader.jit import region as rg
from simgpu.shader.jit import worker
from simgpu.shader.jit.barrier import Intervals
from simgpu.shader.jit.lower_mem import MEM_FLAT, MEM_GLOBAL, MEM_LDS, MEM_SMEM, MEM_WRITABLE
from simgpu.shader.jit.lower_store import undo_words
from simgpu.shader.jit.translate import (
    build_module,
    classifier,
    lds_store,
    load_translators,
    reachable_writes,
    translator_key,
    translators_loaded,
)
from simgpu.shader.jit.unraisable import kept_by
from simgpu.shader.lds.ds_mem import lds_read
from simgpu.shader.memory.vmem import flat_read, global_read
from simgpu.shader.setup import _mode_bits, workgroup_id_sgprs, workgroup_ids
from simgpu.shader.state import DONE, RUNNING, WaveState, wsel
from simgpu.shader.tier_exec import TierExec

INT64_MAX = (1 << 63) - 1
MAX_COMPILED = 512  # regions kept in the process's memory cache (the disk cache keeps the rest)
MAX_KERNELS = 4096  # kernel entries an engine's tier remembers (the oldest is forgotten)
# Kernels with more reachable instructions stay in the interpreter. LLVM's time grows faster than the code: a
# Triton corpus kernel of thousands of instructions (tests/data/triton: spills, attention) held LLVM for minutes, and
# llvmlite's one lock held every other LLVM call of the process with it. The corpora's clang and LLVM
# kernels stay far under it (a few hundred); Triton's big matmuls and attention go over.
MAX_REGION_INSNS = 2000
STATS_KEPT = 1024  # compile times and failures kept in Stats
SHORT_TAIL = 6  # a kernel's last few instructions run in the interpreter (see JitRun.step)
CALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64)
MEMORY_TYPE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_uint64,
                               ctypes.c_int64, ctypes.c_void_p)
ROUND_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)
FUSED_TYPE = ROUND_TYPE
U64_MAX = (1 << 64) - 1
# Lanes of a batch from which a VALU operation's numpy loop releases the GIL long enough for a background
# translation to run beside the launching thread (numpy releases it for loops of more than 500 elements)
GIL_FREE_LANES = 8192
# The payoff rule (JitRun._pays_now): a compile beside a launch must win back PAYOFF times the CPU it takes
# from the launching thread, counting on native code to need at most NATIVE_SHARE of the interpreter's time
PAYOFF, NATIVE_SHARE = 2.0, 0.25
# A dispatch that has run this long (CPU seconds) compiles beside itself whatever the rules below say: the compile
# takes at most a few percent of it, and a long loop (a hang that the wave-instruction budget must end among them)
# would otherwise stay in the interpreter until the dispatch ends, for hours on a busy machine
LONG_DISPATCH = 2.0
MAX_UNDO_WORDS = 32 << 20  # a fused batch's undo log at most 256 MB (its worst case: every lane of every store)
_POOL: ThreadPoolExecutor | None = None  # translation and loading, in the background (LLVM: jit.worker's process)
_DROPS = 0  # drop_queued_compiles so far: a background compile started before one ends as CompileDropped
_COMPILED: dict[str, CompiledRegion] = {}  # by cache key: shared by every engine of the process


def _pool(name: str) -> ThreadPoolExecutor:
    """A one-thread pool whose queued compiles are dropped when the process exits: Python joins pool threads
    before atexit, and a queue of background compiles on a busy machine held a finished process for minutes,
    for code nobody would run (only the compile under way still finishes)."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
    # threading's exit hooks run before the join, the latest first: this one before concurrent.futures' own
    threading._register_atexit(lambda: pool.shutdown(wait=False, cancel_futures=True))
    return pool


def drop_queued_compiles() -> None:
    """Cancel the background compiles that have not started, and end the one under way in LLVM (jit.worker; a
    translation under way finishes): a program that moves on to other work, like a test suite's next test, stops
    paying, in CPU and in the GIL translation holds, for code compiled for launches that may never come. A
    kernel whose compile was dropped is compiled again once it is hot again."""
    global _POOL, _DROPS
    _DROPS += 1
    pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
    worker.stop()  # the compile under way in LLVM too (its kernel gets CompileDropped: compiled again when hot)


def jit_mode() -> str:
    """SIMGPU_JIT: 'off' (0), 'eager', or 'hot' (the default)."""
    return settings.get("SIMGPU_JIT")


def hot_seconds() -> float:
    """SIMGPU_JIT_HOT in seconds: the interpreter time after which a kernel is compiled."""
    return settings.get("SIMGPU_JIT_HOT") / 1e3


def background_policy() -> str:
    """SIMGPU_JIT_BACKGROUND: `now` (a hot kernel is compiled beside its launch), `after` (once the launch
    ends) or `auto` (the default: beside it when that pays, JitRun._pays_now)."""
    return settings.get("SIMGPU_JIT_BACKGROUND")


def core_free() -> bool:
    """Whether a CPU this process may use is idle: the 1-minute load average (which counts the launching
    thread itself) under the CPUs less a half."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    try:
        return os.getloadavg()[0] < cpus - 0.5
    except OSError:  # no load average here: assume a free CPU
        return True


def jit_tier(mode: str | None = None):
    """The engine's JIT tier for `mode` (default: SIMGPU_JIT), or None when it is off or llvmlite is not
    installed (the tier loads llvmlite only when it compiles: simgpu.shader.jit.compile)."""
    mode = mode or jit_mode()
    return None if mode == "off" or importlib.util.find_spec("llvmlite") is None else JitTier(mode)



@dataclass
class CompiledRegion:
    """A region's native code and what the tier needs to account for it."""

    round: object  # ctypes function ROUND_TYPE
    engine: object  # the llvmlite execution engine holding the code (alive as long as this region)
    lanes: int
    mode: int
    nvgpr: int
    blocks: list  # region.Block
    by_start: dict
    block_last: np.ndarray  # offset of each block's last instruction
    block_len: np.ndarray  # instructions counted per execution of each block
    hist: list[Counter]
    insns: dict  # offset -> region.Insn
    tails: dict  # offset of a native instruction -> mnemonics from it to the end of its block
    writes: list  # per block: (VGPRs, SGPR slots) native code may write from it on, or None (translate)
    span: tuple[int, int]  # code offsets [lo, hi) the region was read from
    code: bytes  # the bytes of that span when compiled
    compile_seconds: float = 0.0
    start_seconds: float = 0.0  # of compile_seconds: llvmlite's import and LLVM's start (a process's first)
    from_disk: bool = False
    nhints: int = 0  # window-hint slots of the memory instructions (lower_mem.find_window)
    short_tails: frozenset = frozenset()  # blocks of at most SHORT_TAIL instructions ending in s_endpgm
    fused: object = None  # ctypes function FUSED_TYPE when the region is fusable (translate.fusable), else None
    nsites: int = 0  # memory sites of the order check (Lowering.site)
    stores: int = 0  # store blocks (a fused batch's undo log holds at most stores x lanes entries per wave)
    entry_sets: int = 0  # distinct VGPR sets @wave moves per entry block (lower._entry_classes), 0: all at once
    lds_stores: frozenset = frozenset()  # blocks of LDS stores native in a barrier-to-barrier interval (barrier.py)
    barriers: frozenset = frozenset()  # offsets of the region's s_barrier instructions


@dataclass
class KernelState:
    """What the tier knows about one kernel entry (VMID, PC) of an engine."""

    interpreted: float = 0.0  # CPU seconds the interpreter has spent on it (every 32 steps, batch, dispatch end)
    steps: int = 0  # scheduler steps the interpreter ran for it
    future: Future | None = None
    compiled: CompiledRegion | None = None
    failed: str | None = None
    idle: bool = False  # nothing in it the tier would run (its code is a few instructions to s_endpgm)
    deferred: bool = False  # hot, not compiled beside its launch: compiled after a dispatch of it ends (see `end`)
    dispatches: int = 0
    rollbacks: int = 0
    nofuse: bool = False  # a fused batch of it failed the order check: its batches run in rounds


@dataclass
class Stats:
    """What the tier did (for tests and benchmarks)."""

    compiles: int = 0
    disk_hits: int = 0
    # LLVM + loading, and discovery + translation to IR: CPU seconds per region (the last STATS_KEPT)
    compile_seconds: deque = field(default_factory=lambda: deque(maxlen=STATS_KEPT))
    translate_seconds: deque = field(default_factory=lambda: deque(maxlen=STATS_KEPT))
    rounds: int = 0
    sync_steps: int = 0  # interpreter steps at a sync instruction (LDS store, barrier) or outside the region
    native_instructions: int = 0
    callbacks: int = 0
    reruns: int = 0
    budget_rollbacks: int = 0
    fused_batches: int = 0
    fused_aborts: int = 0
    intervals: int = 0  # barrier-to-barrier intervals run natively (barrier.py)
    interval_aborts: int = 0  # intervals undone and run in rounds
    failures: deque = field(default_factory=lambda: deque(maxlen=STATS_KEPT))  # (kernel, reason) not compiled


class JitTier:
    """The JIT tier of one ShaderEngine: kernels' states, memory windows (TierWindows), statistics."""

    def __init__(self, mode: str):
        self.mode = mode
        self.kernels: dict[tuple[int, int], KernelState] = {}
        self.stats = Stats()
        self.windows = TierWindows()
        self._undo: np.ndarray | None = None

    def kernel(self, key: tuple[int, int]) -> KernelState:
        """The state of the kernel entry `key` (VMID, code address)."""
        state = self.kernels.get(key)
        if state is None:
            if len(self.kernels) >= MAX_KERNELS:
                del self.kernels[next(iter(self.kernels))]
            state = self.kernels[key] = KernelState()
        return state

    def begin(self, ex: TierExec) -> JitRun:
        """The tier's view of a dispatch starting."""
        return JitRun(self, ex)

    def undo_log(self, words: int) -> np.ndarray:
        """The fused batches' undo log, at least `words` int64 long (kept: its pages are touched once)."""
        if self._undo is None or self._undo.size < words:
            self._undo = np.empty(max(words, 1), np.int64)
        return self._undo


@dataclass
class _Fused:
    """A dispatch's fused batches (JitRun.fused_batch): registers kept at exit or not, the register file the
    waves start from (the batch's own, or the template of one workgroup), per-batch buffers."""

    keep: bool
    counts: np.ndarray  # [1, blocks]: the batch's block executions
    laneops: np.ndarray
    maxlast: np.ndarray
    hulls: np.ndarray  # [lo, hi) per memory site (Lowering.site), unsigned
    ids: np.ndarray  # [groups, 3] workgroup ids of the batch (template only)
    st: WaveState | None = None
    rows: int = 0  # waves per template group (the batch's waves when kept)
    ngroups: int = 1
    slots: tuple = (-1, -1, -1)  # the SGPRs of the workgroup ids x, y, z (template only)


class JitRun:
    """One dispatch under the JIT tier: the engine's scheduler asks `step` before interpreting."""

    def __init__(self, tier: JitTier, ex: TierExec):
        self.tier, self.ex = tier, ex
        d = ex.d
        self.key = (d.vmid, d.code_address)
        self.state = tier.kernel(self.key)
        self.state.dispatches += 1
        self.started = self.dispatch_started = time.process_time()
        self._batch_starts: list[float] = []  # process time at each batch's start (the payoff estimate)
        self.policy = background_policy()
        self._walked: _Source | None = None  # the kernel's reachable code, walked for the payoff rule
        self.cr: CompiledRegion | None = None
        self.paused = False
        self.ctx = np.zeros(lo.CTX_SIZE, np.int64)
        self.callback = CALLBACK_TYPE(self._callback)
        self.memory = MEMORY_TYPE(self._memory)
        self.ticker = CALLBACK_TYPE(self._tick)
        self._callback_address = ctypes.cast(self.callback, ctypes.c_void_p).value
        self._memory_address = ctypes.cast(self.memory, ctypes.c_void_p).value
        self._tick_address = ctypes.cast(self.ticker, ctypes.c_void_p).value
        # The budget of a round (see _tick): wave-instructions the watchdog still allows, the stretch given
        # to native code until its next tick, whether that stretch is all the watchdog allows.
        self._allowance = self._stretch = 0
        self._final = False
        # What stopped a round from inside a callback, raised once its waves are rolled back: an exception
        # (Ctrl-C's KeyboardInterrupt, a progress hook's error) or (fault kind, message) of the deadline.
        self.pending: BaseException | tuple[str, str] | None = None
        self._bufs = None
        self._seen = None  # the WaveState of the batch the tier has seen a step of
        self._hint_table: np.ndarray | None = None
        self._pointed: WaveState | None = None  # the batch ctx's register pointers are set for (_point_at)
        self._buf_ptrs: tuple = ()  # data pointers of self._bufs
        self._hint_ptr = 0  # of self._hint_table
        self.corrections: list = []
        self.checked = False
        self.fusing = False  # a fused batch is running (tier.py, "Fused launch")
        self.nofuse = False  # a fused batch of this dispatch could not finish: the rest runs in rounds
        self._fused: _Fused | None = None
        self.intervals: Intervals | None = None  # barrier-to-barrier intervals (barrier.py): kernels with LDS stores
        tier.windows.for_dispatch(ex.mem, d.vmid)
        if tier.mode == "eager" and self.state.compiled is None and self.state.failed is None and not self.state.idle:
            self._compile(sync=True)

    # ---------------------------------------------------------------------------------------- compile
    def _compiled(self) -> CompiledRegion | None:
        st = self.state
        if st.compiled is None and st.future is not None and st.future.cancelled():
            st.future = None  # dropped before it started (drop_queued_compiles): hot again, compiled again
            return None
        if st.compiled is None and st.future is not None and st.future.done():
            try:
                self._compiled_as(st.future.result())
            except worker.CompileDropped:
                pass  # stopped under way (drop_queued_compiles): hot again, compiled again
            except Exception as e:  # noqa: BLE001 - a translator bug must not stop the interpreter
                self._failed(e)
            st.future = None
        cr = st.compiled
        if cr is None:
            return None
        if not self.checked:  # once per dispatch: the same code, wave size, VGPRs and MODE
            self.checked = True
            d, ex = self.ex.d, self.ex
            try:
                code = ex.mem.read(d.vmid, d.code_address + cr.span[0], cr.span[1] - cr.span[0], access="execute")
            except HardwareFault:
                code = None
            ok = (code == cr.code and cr.lanes == d.wave_size and cr.nvgpr == max(d.vgpr_count, 1)
                  and cr.mode == _mode_bits(d.descriptor))
            if not ok:
                st.compiled = None
                self.paused = True
                self._compile(sync=self.tier.mode == "eager")
                return None
            self.cr = cr
        return self.cr

    def _failed(self, e: Exception) -> None:
        """A kernel the tier could not compile runs in the interpreter; the reason is kept (tests fail on it)."""
        self.state.failed = f"{type(e).__name__}: {e}"
        self.tier.stats.failures.append((self.key, self.state.failed))

    def _compile(self, sync: bool, source: _Source | None = None) -> None:
        """Compile the kernel: at once (sync: discovery, translation and LLVM on this thread), or with only
        the walk of its reachable code here (a decode-cache lookup per instruction) and translation and LLVM
        in the background, which read only the walk's result (decoded instructions and the code's bytes,
        never the dispatch's state or memory): a launch never waits for a compile. A process that exits
        while LLVM compiles waits for that compile (concurrent.futures joins its threads)."""
        global _POOL
        try:
            source = source or _source(self.ex)
        except Exception as e:  # noqa: BLE001 - the interpreter stays the fallback
            self._failed(e)
            return
        if sync:
            try:
                self._compiled_as(_build(source, self.tier, background=False))
            except Exception as e:  # noqa: BLE001 - the interpreter stays the fallback
                self._failed(e)
            return
        if _POOL is None:
            _POOL = _pool("simgpu-jit")
        self.state.future = _POOL.submit(_build, source, self.tier)

    def _compiled_as(self, got) -> None:
        """What a compile gave: a CompiledRegion, or None (nothing in the kernel the tier would run)."""
        if got is None:
            self.state.idle = True
        else:
            self.state.compiled = got

    def _hot_check(self) -> None:
        """Add the interpreter's time on the kernel since the last check; once it is hot, compile it in the
        background: at the end of this dispatch, or at once if that pays within this launch (`_pays_now`).
        A compile beside the launch costs it CPU the launching thread would have had: the translation is
        Python (the GIL), and so is the first kernel's import of llvmlite."""
        st = self.state
        if self.tier.mode != "hot" or st.future is not None or st.failed is not None or st.idle:
            return
        now = time.process_time()
        if not st.deferred:
            st.interpreted += now - self.started
        self.started = now
        if st.deferred or st.interpreted >= hot_seconds():
            st.deferred = True  # (compiled by `end` unless it pays to start sooner)
            if self._pays_now(now):
                st.deferred = False
                self._compile(sync=False, source=self._walked)

    def _pays_now(self, now: float) -> bool:
        """Whether a compile started now should help this launch, not slow it: a CPU is free for it
        (core_free), the launching thread leaves the GIL often (batches of at least GIL_FREE_LANES lanes,
        whose numpy loops release it), and what native code would save of the interpretation this dispatch
        still has ahead, once the compile is done, is at least PAYOFF times the CPU the compile takes from the
        launching thread. What is ahead: the batches left times the last one's time (not the first's, which
        pays for decoding and first touches: none is estimated before a second batch ended), or, in a
        dispatch of one batch, half as long again as it has run. The compile's costs are this host's,
        measured (costs.py) for the kernel's reachable instructions: its Python (translation, and the imports
        of a process's first compile) is taken from the launch, and native code runs only after LLVM too.
        Until this host has measured a compile, none starts beside a launch. A dispatch that has run
        LONG_DISPATCH already compiles now in any case."""
        if self.policy != "auto":
            return self.policy == "now"
        if now - self.dispatch_started >= LONG_DISPATCH:
            return True
        ex = self.ex
        if ex.batch_count * ex.waves_per_group * ex.lanes < GIL_FREE_LANES:
            return False
        starts, total = self._batch_starts, ex.group_count()
        if ex.batch_count >= total:  # one batch: half as long again as it ran (no progress to go by)
            ahead = (now - self.dispatch_started) / 2
        elif len(starts) >= 3:
            ahead = (starts[-1] - starts[-2]) * (total - ex.groups_before) / ex.batch_count
        else:
            return False
        costs = hc.current()
        if costs is None:
            return False
        if self._walked is None:
            try:
                self._walked = _source(ex)
            except Exception:  # noqa: BLE001 - the compile after the launch reports it
                return False
        taken, ready = compile_cost(costs, len(self._walked.found))
        saved = (ahead - ready) * (1 - NATIVE_SHARE)
        return saved >= PAYOFF * taken and core_free()  # (the load average last: it is a file read)

    def end(self) -> None:
        """The dispatch ended (or faulted): a hot kernel not compiled beside its launch is compiled now, in the
        background, for its next launches -- once it has been launched more than once. A compile after the
        launch pays only if the kernel runs again, and a test suite launches most kernels once: each such
        compile took CPU (its translation also the GIL) from the launches that followed, for nothing. A kernel
        run in a loop waits one more launch."""
        st = self.state
        if st.compiled is None:  # the interpreter's time since the last check (a dispatch of a few steps, of
            self._hot_check()  # one batch, has had no check after its start: it would never get hot)
        if st.dispatches < 2:
            return
        if st.deferred and st.future is None and st.compiled is None and st.failed is None:
            st.deferred = False
            self._compile(sync=False, source=self._walked)

    # ---------------------------------------------------------------------------------------- scheduling
    def step(self, pc: int, w: np.ndarray) -> bool:
        """Run the waves `w` standing at `pc` (the lowest PC) if the tier can; False: interpret as usual."""
        if self.paused:
            return False
        st = self.ex.st
        fresh = st is not self._seen  # the batch's first step: every wave stands where setup put it
        self._seen = st
        cr = self.cr or self._compiled()
        if cr is None:
            self.state.steps += 1
            if not self.state.steps & 31:  # every 32 steps of the kernel: a clock read is not free
                self._hot_check()
            return False
        blk = cr.by_start.get(pc - self.ex.d.code_address)
        if blk is not None and blk.index in cr.short_tails:
            return False  # a few instructions to s_endpgm: the interpreter's batch ops beat a round's setup
        if blk is None or blk.kind in (rg.SYNC, rg.MISSING):
            self.tier.stats.sync_steps += 1
            if self.intervals is not None and blk is not None and blk.start in cr.barriers:
                self.intervals.off = False  # (a failed interval's rounds got to a barrier: try again after it)
            self.ex.run(pc, w, False)  # one instruction in the interpreter, for exactly these waves
            return True
        if self.intervals is None and cr.lds_stores:
            self.intervals = Intervals(self)
        if self.intervals is not None and self.intervals.step(cr, pc, w, fresh):
            return True
        if not self._round(cr, pc, w, fresh):
            self.ex.run(pc, w, False)
        return True

    def _round(self, cr: CompiledRegion, pc: int, w: np.ndarray, fresh: bool = False) -> bool:
        """One round for the waves `w` at `pc`; False if no wave got anywhere (then the interpreter steps).
        `fresh`: the batch's first step (nothing has run: a rollback rebuilds the initial registers)."""
        ex, st, tier = self.ex, self.ex.st, self.tier
        tier.stats.rounds += 1
        n = len(w)
        running = st.status == RUNNING
        if fresh or n == int(np.count_nonzero(running)):  # every runnable wave is in the round
            bound0 = INT64_MAX
        else:
            running[w] = False
            bound0 = int(st.pc[running].min()) if running.any() else INT64_MAX
        ix = wsel(w)
        saved = None if fresh else self._save(cr, ix, pc)
        counts, laneops, exits, maxlast = self._buffers(n, len(cr.blocks))
        self.corrections = []
        rows = np.arange(n)
        bound, base = bound0, ex.d.code_address
        allowed = ex.allowed()  # wave-instructions before the watchdog's limit
        for attempt in range(n + 2):
            self._run_native(cr, w, rows, counts, laneops, exits, maxlast, bound,
                             allowed - self._spent(cr, counts) if attempt else allowed)
            if self.pending is not None:  # the deadline passed, Ctrl-C, a progress hook failed
                self._restore(cr, saved, ix, np.arange(n), w)
                self._raise_pending(w, pc)
            ran = exits if attempt == 0 else exits[rows]
            if n > 1 and ((ran == lo.EXIT_BUDGET) | (ran < 0)).any():
                # The watchdog's limit is inside the round: the interpreter, which runs these waves
                # together, finds the exact instruction. (A lone wave ran exactly the instructions the
                # interpreter would have: it keeps them and the interpreter goes on from its block.)
                self._restore(cr, saved, ix, np.arange(n), w)
                tier.stats.budget_rollbacks += 1
                self.paused = True
                return False
            # A wave must not have run at or past a PC where another wave (or a wave outside the round)
            # stands: there the interpreter would have let that one go first.
            park = np.where(exits != lo.EXIT_DONE, st.pc[ix], INT64_MAX)
            if int(maxlast.max()) + base < min(int(park.min()), bound0):
                break  # no wave ran as far as any park (every wave of a tiled loop parks at one LDS store)
            two = np.partition(park, 1)[:2] if n > 1 else np.array([park[0], INT64_MAX])
            others_min = np.minimum(np.where(park == two[0], two[1], two[0]), bound0)
            bad = np.flatnonzero((maxlast >= 0) & (maxlast + base >= others_min))
            if not len(bad):
                break
            tier.stats.reruns += len(bad)
            self._restore(cr, saved, ix, bad, w)
            counts[bad], laneops[bad], maxlast[bad] = 0, 0, -1
            gone = set(w[bad].tolist())
            self.corrections = [c for c in self.corrections if c[0] not in gone]
            keep = np.ones(n, bool)
            keep[bad] = False
            bound = int(min(bound0, park[keep].min() if keep.any() else INT64_MAX))
            rows = bad
        else:
            raise AssertionError("JIT round did not settle")
        # waves stopped before a memory read they could not do: the rest of that block did not run
        for wave in w[exits == lo.EXIT_READ].tolist():
            self.corrections += [(wave, m, 0) for m in cr.tails.get(int(st.pc[wave]) - base, ())]
        return self._commit(cr, counts, laneops, w)

    def _raise_pending(self, w: np.ndarray, pc: int) -> None:
        """Raise what stopped the round (its waves are back where it started)."""
        pending, self.pending = self.pending, None
        if isinstance(pending, BaseException):
            raise pending
        ex = self.ex
        raise ex.hang(w, pc, ex.fetch(pc, w)[0], *pending)

    def _hints(self, cr: CompiledRegion) -> np.ndarray:
        """The window each memory instruction used last, shared by the waves of this dispatch (windows
        are only added during a dispatch): [lo, hi, host] per instruction, starting empty (lo > hi)."""
        if self._hint_table is None:
            self._hint_table = np.tile(np.array([1, 0, 0], np.int64), max(cr.nhints // 3, 1))
        return self._hint_table

    def _buffers(self, n: int, nb: int):
        """Zeroed per-round arrays (reused between rounds): counts [n, blocks], lane-ops, exits, maxlast."""
        if self._bufs is None or self._bufs[0].shape[0] < n or self._bufs[0].shape[1] != nb:
            self._bufs = (np.zeros((n, nb), np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
                          np.zeros(n, np.int64), np.zeros(n, np.int64))  # (the last: the round's waves)
            self._buf_ptrs = tuple(a.ctypes.data for a in self._bufs)
        counts, laneops, exits, maxlast = (a[:n] for a in self._bufs[:4])
        counts[:] = 0
        laneops[:] = 0
        exits[:] = -1
        maxlast[:] = -1
        return counts, laneops, exits, maxlast

    def _save(self, cr: CompiledRegion, ix, pc: int):
        """The registers a round from `pc` may change, for rolling waves back (native code writes no
        memory): the VGPRs and SGPR slots reachable code writes, or all of them after a callback."""
        st = self.ex.st
        writes = cr.writes[cr.by_start[pc - self.ex.d.code_address].index]
        if writes is None:
            return None, st.vgpr[:, ix].copy(), None, st.sgpr[ix].copy(), st.scc[ix].copy(), st.pc[ix].copy(), \
                st.status[ix].copy(), st.hwreg[ix].copy()
        vs, ss = writes
        return (vs, st.vgpr[vs][:, ix] if len(vs) else None, ss, st.sgpr[ix][:, ss] if len(ss) else None,
                st.scc[ix].copy(), st.pc[ix].copy(), st.status[ix].copy(), None)

    def _restore(self, cr: CompiledRegion, saved, ix, rows: np.ndarray, w: np.ndarray) -> None:
        """Waves w[rows] back to where the round found them (`saved`; None: the batch's initial state)."""
        st = self.ex.st
        idx = w[rows]
        if saved is None:  # the round was the batch's first step: setup's registers, rebuilt
            ex = self.ex
            init = ex.initial_state(ex.groups_before, ex.batch_count)
            st.vgpr[:, idx], st.sgpr[idx], st.hwreg[idx] = init.vgpr[:, idx], init.sgpr[idx], init.hwreg[idx]
            st.scc[idx], st.pc[idx], st.status[idx] = init.scc[idx], init.pc[idx], init.status[idx]
            return
        vs, vg, ss, sg, scc, pc, status, hw = saved
        if vs is None:
            st.vgpr[:, idx] = vg[:, rows]
            st.sgpr[idx] = sg[rows]
            st.hwreg[idx] = hw[rows]
        else:
            for k, r in enumerate(vs.tolist()):
                st.vgpr[r, idx] = vg[k, rows]
            if sg is not None:
                st.sgpr[idx[:, None], ss[None, :]] = sg[rows]
        st.scc[idx] = scc[rows]
        st.pc[idx] = pc[rows]
        st.status[idx] = status[rows]

    def _spent(self, cr: CompiledRegion, counts: np.ndarray) -> int:
        return int(counts.sum(axis=0) @ cr.block_len)

    def _run_native(self, cr, w, rows, counts, laneops, exits, maxlast, bound, allowance) -> None:
        """Run the waves w[rows] natively, at most `allowance` wave-instructions (the watchdog's); their
        counts, lane-ops, exits and highest PCs land in those rows."""
        ex, st, ctx = self.ex, self.ex.st, self.ctx
        whole = len(rows) == len(w)
        waves = self._bufs[4]  # (its pointer, and the round buffers', were taken when _buffers made them)
        if whole:
            waves[:len(w)] = w
            sub = (counts, laneops, exits, maxlast)
            ctx[lo.C_COUNTS], ctx[lo.C_LANEOPS], ctx[lo.C_EXITS], ctx[lo.C_MAXLAST] = self._buf_ptrs[:4]
        else:
            waves[:len(rows)] = w[rows]
            sub = (counts[rows], laneops[rows], exits[rows], maxlast[rows])
            ctx[lo.C_COUNTS] = sub[0].ctypes.data
            ctx[lo.C_LANEOPS] = sub[1].ctypes.data
            ctx[lo.C_EXITS] = sub[2].ctypes.data
            ctx[lo.C_MAXLAST] = sub[3].ctypes.data
        self._point_at(st, ex.d.code_address, bound)
        ctx[lo.C_FUSED], ctx[lo.C_KEEP] = 0, 1
        self._allowance = allowance
        self._give_stretch()
        ctx[lo.C_WAVES] = self._buf_ptrs[4]
        ctx[lo.C_COUNT] = len(rows)
        if not self._hint_ptr:
            self._hint_ptr = self._hints(cr).ctypes.data
        ctx[lo.C_HINTS] = self._hint_ptr
        with kept_by(self._unraisable):
            cr.round(ctx.ctypes.data)
        if not whole:
            counts[rows], laneops[rows], exits[rows], maxlast[rows] = sub

    def _give_stretch(self) -> None:
        """Native code's budget until its next tick: TICK wave-instructions, or what the watchdog allows."""
        self._stretch = min(self._allowance, TICK)
        self._final = self._stretch == self._allowance
        self.ctx[lo.C_BUDGET] = self._stretch

    def _commit(self, cr: CompiledRegion, counts: np.ndarray, laneops: np.ndarray, w: np.ndarray) -> bool:
        """Add what the round ran to the counters, the clock and the watchdog's budget (ticking the engine
        when a slice of it is spent: deadline, progress hooks); whether anything ran."""
        ex = self.ex
        per_block = counts.sum(axis=0)
        total = int(per_block @ cr.block_len)
        lanes = int(laneops.sum())
        per_opcode = ex.engine.counters.per_opcode
        for b in np.flatnonzero(per_block).tolist():
            times = int(per_block[b])
            for m, k in cr.hist[b].items():
                per_opcode[m] += k * times
        for _wave, mnemonic, lane_count in self.corrections:  # callbacks that did not run after all
            total -= 1
            lanes -= lane_count
            per_opcode[mnemonic] -= 1
            if per_opcode[mnemonic] == 0:
                del per_opcode[mnemonic]
        self.tier.stats.native_instructions += total
        ex.charge(total, lanes, w)  # (a slice it ends ticks: it cannot pass the watchdog's limit)
        return total > 0

    # ---------------------------------------------------------------------------------------- fused batches
    def fused_batch(self, count: int) -> bool:
        """Run the batch of `count` workgroups (from ex.groups_before on) as one fused launch (the module's
        "Fused launch") if the kernel allows it; False when it does not, or when the launch could not finish
        (then it is undone: the batch runs as usual)."""
        self._batch_starts.append(time.process_time())
        if self.paused or self.nofuse or self.state.nofuse:
            return False
        cr = self.cr or self._compiled()
        ex = self.ex
        if cr is None and self.state.compiled is None:
            self._hot_check()  # (also per batch: a kernel of a few long steps per batch gets hot in time)
        if cr is None or cr.fused is None or ex.d.private_segment_size or self.tier.windows.aliased():
            return False
        f = self._fused if self._fused is not None else self._fused_setup(cr)
        if f.keep:  # each wave from its own row of the batch's initial state (kept at exit)
            f.st = ex.initial_state(ex.groups_before, count)
            f.ngroups, f.rows = 1, f.st.n
        else:  # every group from the template's rows, its ids set by the driver
            f.ngroups, f.ids = count, workgroup_ids(ex.d, ex.groups_before, count)
        words = f.ngroups * f.rows * cr.stores * ex.lanes * undo_words(ex.lanes)  # the undo log's worst case
        if words > MAX_UNDO_WORDS:
            return False
        f.counts[:] = 0
        f.laneops[:] = 0
        f.hulls[0::2], f.hulls[1::2] = U64_MAX, 0
        self._fused_context(cr, f, self.tier.undo_log(words))
        self._allowance = ex.allowed()
        self._give_stretch()
        self.fusing = True
        try:
            with kept_by(self._unraisable):
                code = cr.fused(self.ctx.ctypes.data) - 1
        finally:
            self.fusing = False
        if code >= 0 or self.pending is not None:
            self._abandon(code)
            return False
        self._commit_fused(cr, f.counts[0], int(f.laneops[0]), f.st if f.keep else None)
        return True

    def _fused_setup(self, cr: CompiledRegion) -> _Fused:
        """A dispatch's fused batches: their buffers, and the template (when registers are not kept and
        every workgroup is whole: then one group's initial registers are every group's but for its ids)."""
        ex = self.ex
        d = ex.d
        keep = ex.engine.exit_states is not None or any(g % w for g, w in zip(d.grid, d.workgroup, strict=True))
        f = _Fused(keep=keep, counts=np.zeros((1, len(cr.blocks)), np.int64), laneops=np.zeros(1, np.int64),
                   maxlast=np.full(1, -1, np.int64), hulls=np.zeros(2 * max(cr.nsites, 1), np.uint64),
                   ids=np.zeros((1, 3), np.uint32))
        if not keep:
            f.st = ex.initial_state(0, 1)
            f.rows, f.slots = f.st.n, workgroup_id_sgprs(d)
        self._fused = f
        return f

    def _fused_context(self, cr: CompiledRegion, f: _Fused, undo: np.ndarray) -> None:
        """ctx for the fused driver over `f`'s batch, with the undo log `undo`."""
        ctx = self.ctx
        self._point_at(f.st, self.ex.d.code_address, INT64_MAX)
        for slot, value in ((lo.C_COUNTS, f.counts), (lo.C_LANEOPS, f.laneops), (lo.C_MAXLAST, f.maxlast),
                            (lo.C_HULLS, f.hulls), (lo.C_UNDO, undo), (lo.C_GIDS, f.ids),
                            (lo.C_TSTATUS, f.st.status), (lo.C_HINTS, self._hints(cr))):
            ctx[slot] = value.ctypes.data
        ctx[lo.C_FUSED], ctx[lo.C_KEEP], ctx[lo.C_UNDO_N], ctx[lo.C_CURRENT] = 1, int(f.keep), 0, 0
        ctx[lo.C_NGROUPS], ctx[lo.C_WPG] = f.ngroups, f.rows
        ctx[lo.C_GID_X:lo.C_GID_Z + 1] = f.slots

    def _point_at(self, st: WaveState, base: int, bound: int) -> None:
        """ctx's register file, code base and bound, windows and helpers for native code over `st`. The
        pointers are set once per batch (a WaveState's arrays and the tier's window table are never
        replaced; `.ctypes.data` costs microseconds, and a tiled kernel's few waves run hundreds of rounds)."""
        ctx = self.ctx
        ctx[lo.C_BOUND] = bound
        ctx[lo.C_NWINDOWS] = len(self.tier.windows.views)
        if self._pointed is st and ctx[lo.C_BASE] == base:
            return
        self._pointed = st
        for slot, value in ((lo.C_SGPR, st.sgpr), (lo.C_VGPR, st.vgpr), (lo.C_SCC, st.scc), (lo.C_PC, st.pc),
                             (lo.C_STATUS, st.status), (lo.C_HWREG, st.hwreg), (lo.C_LDS, st.lds),
                             (lo.C_GROUP, st.group), (lo.C_WINDOWS, self.tier.windows.table)):
            ctx[slot] = value.ctypes.data
        ctx[lo.C_PLANE] = st.vgpr.strides[0]
        ctx[lo.C_BASE], ctx[lo.C_BOUND] = base, bound
        ctx[lo.C_NWINDOWS] = len(self.tier.windows.views)
        ctx[lo.C_LDS_BYTES] = st.lds.shape[1]
        ctx[lo.C_CALLBACK], ctx[lo.C_MEMORY], ctx[lo.C_TICK] = (self._callback_address, self._memory_address,
                                                                 self._tick_address)

    def _abandon(self, code: int) -> None:
        """A fused batch that did not finish: its stores undone; an exception that stopped it raised. A failed
        order check keeps the kernel's batches in rounds; anything else only this dispatch's."""
        self._undo()
        self.tier.stats.fused_aborts += 1
        if code == lo.EXIT_CONFLICT:
            self.state.nofuse = True
        else:
            self.nofuse = True
        pending, self.pending = self.pending, None
        if isinstance(pending, BaseException):
            raise pending  # (a deadline is the interpreter's to report: the batch runs again there)

    def _undo(self) -> None:
        """Put back what the fused batch's stores overwrote (ctx C_UNDO_N entries, last first)."""
        n = int(self.ctx[lo.C_UNDO_N])
        if not n:
            return
        lanes = self.ex.lanes
        log = self.tier.undo_log(0)[:n * undo_words(lanes)].reshape(n, -1)
        full = (1 << lanes) - 1
        for entry in log[::-1]:
            ptr, mask, old = int(entry[0]), int(entry[1]), entry[2:].view(np.uint32)
            if mask < 0:  # a byte or short store: -mask bytes
                ctypes.memmove(ptr, old.ctypes.data, -mask)
                continue
            mask &= full
            if mask == full:
                ctypes.memmove(ptr, old.ctypes.data, 4 * lanes)
                continue
            while mask:
                i = (mask & -mask).bit_length() - 1
                ctypes.memmove(ptr + 4 * i, old[i:].ctypes.data, 4)
                mask &= mask - 1

    def _commit_fused(self, cr: CompiledRegion, per_block: np.ndarray, lanes: int, st: WaveState | None) -> None:
        """Counters, clock and budget for a finished fused batch, as the interpreter counts them; the batch's
        registers (`st`, kept at exit) for the engine, or none."""
        ex = self.ex
        per_opcode = ex.engine.counters.per_opcode
        total = int(per_block @ cr.block_len)
        for b in np.flatnonzero(per_block).tolist():
            times = int(per_block[b])
            for m, k in cr.hist[b].items():
                per_opcode[m] += k * times
        self.tier.stats.native_instructions += total
        self.tier.stats.fused_batches += 1
        ex.st = st
        ex.charge(total, lanes)  # (a slice it ends ticks at the kernel's entry: every wave has ended)

    # ---------------------------------------------------------------------------------------- callbacks
    def _callback(self, row: int, wave: int) -> int:
        """Run the instruction at the wave's PC in the interpreter (native code stored its registers)."""
        ex, st = self.ex, self.ex.st
        self.tier.stats.callbacks += 1
        pc = int(st.pc[wave])
        w1 = np.array([wave], np.int64)
        saved = (st.vgpr[:, wave].copy(), st.sgpr[wave].copy(), st.scc[wave], st.status[wave], st.hwreg[wave].copy())
        inst = None
        try:
            inst, fn, is_valu = ex.fetch(pc, w1)
            if self.ctx[lo.C_B2B] and inst.mnemonic.startswith(("ds_", "flat_")):
                raise RuntimeError("LDS unchecked in a barrier-to-barrier interval")  # (undone: rounds run it)
            if fn(ex, w1, inst) is not None:
                raise AssertionError(f"{inst.mnemonic} changed control flow in a callback")
            st.pc[wave] = pc + inst.size
            return 0
        except BaseException as e:  # noqa: BLE001 - the interpreter reports it when the waves get there together
            st.vgpr[:, wave], st.sgpr[wave], st.scc[wave], st.status[wave], st.hwreg[wave] = saved
            st.pc[wave] = pc
            if inst is not None:
                lanes = ex.active_lanes(w1) if inst.mnemonic.startswith("v_") else 0
                self.corrections.append((wave, inst.mnemonic, lanes))
                self.ctx[lo.C_BUDGET] += 1
            if not isinstance(e, Exception):  # Ctrl-C: raised once the round is rolled back
                self.pending = e
            return 1

    def _tick(self, row: int, wave: int) -> int:
        """A wave found the stretch of budget too small for its next block. Every TICK wave-instructions of
        native code this checks the engine's deadline and tells the progress hooks, as the interpreter's
        tick does (Python runs here, so Ctrl-C arrives here too), and gives a new stretch: the wave goes on
        (TICK_GO_ON; a tick changes nothing the tiers must agree on, so the round's order stays). TICK_STOP
        ends the round: the watchdog's limit (the round keeps what a lone wave ran, or is rolled back), or
        what `pending` holds."""
        try:
            if self.pending is not None:
                return lo.TICK_STOP
            self._allowance -= self._stretch - int(self.ctx[lo.C_BUDGET])
            if self._final:
                return lo.TICK_STOP
            ex = self.ex
            overdue = ex.overdue()
            if overdue is not None:
                self.pending = overdue
                return lo.TICK_STOP
            if ex.engine.progress_hooks:
                done = int(self.ctx[lo.C_CURRENT]) if self.fusing else int(np.count_nonzero(ex.st.status == DONE))
                ex.report_progress(done, ex.allowed() - self._allowance)
            self._give_stretch()
            return lo.TICK_GO_ON
        except BaseException as e:  # noqa: BLE001 - raised by the round once its waves are rolled back
            self.pending = e
            return lo.TICK_STOP

    def _unraisable(self, info) -> None:
        """sys.unraisablehook while native code runs: an exception that escaped a callback before its `try`
        (Ctrl-C's KeyboardInterrupt lands at any bytecode) is kept for the round to raise, not printed."""
        if self.pending is None:
            self.pending = info.exc_value if info.exc_value is not None else KeyboardInterrupt()

    def _memory(self, wave: int, kind: int, addrs: int, mask: int, size: int, out: int) -> int:
        """Native code's slow path for a memory read: the lanes of `mask` read `size` bytes each at the
        addresses at `addrs` (the interpreter's routines: MMU, LDS, scratch) into `out` (dword k of every
        lane after the other, or the bytes of sub-dword reads); 1 if the read faults (or cannot be done
        here), and then the wave stops before the instruction. A window is added for next time."""
        ex = self.ex
        try:
            if kind == MEM_SMEM:
                addr = int(np.ctypeslib.as_array((ctypes.c_uint64 * 1).from_address(addrs))[0])
                data = ex.mem.read(ex.vmid, addr, size)
                ctypes.memmove(out, data, size)
                self._add_window(addr, addr + size)
                return int(self.fusing and not self._windowed(addr, addr + size))
            lanes = ex.lanes
            addr = np.ctypeslib.as_array((ctypes.c_uint64 * lanes).from_address(addrs)).copy()[None, :]
            active = ((np.uint64(mask) >> np.arange(lanes, dtype=np.uint64)) & np.uint64(1)).astype(bool)[None, :]
            if kind == MEM_WRITABLE:  # a store found no writable window: one for its lanes, if memory allows
                a = addr[active]
                lo_va, hi_va = int(a.min()), int(a.max()) + size
                return int(not (self._add_window(lo_va, hi_va, "write") and self._windowed(lo_va, hi_va)))
            if self.fusing and kind != MEM_GLOBAL:  # a fused batch has no LDS, scratch or register file here
                return 1
            w1 = np.array([wave], np.int64)
            if kind == MEM_LDS:
                if self.ctx[lo.C_B2B]:  # an interval's LDS read outside the row: undone, rounds run it (barrier.py)
                    return 1
                data = lds_read(ex, w1, addr.astype(np.int64), size, active)
                _planar(data, size, lanes, out)
                return 0
            if kind == MEM_FLAT:
                raw, g = flat_read(ex, w1, addr, size, active)
                if self.ctx[lo.C_B2B] and (active & ~g).any():  # LDS or scratch, unchecked in an interval
                    return 1
            else:
                g = active
                raw = global_read(ex, addr, size, g)
            _planar(raw, size, lanes, out)
            if g.any():
                lo_va, hi_va = int(addr[g].min()), int(addr[g].max()) + size
                self._add_window(lo_va, hi_va)
                return int(self.fusing and not self._windowed(lo_va, hi_va))
            return 0
        except BaseException as e:  # noqa: BLE001 - faults are the interpreter's to report, with every wave there
            if not isinstance(e, Exception):  # Ctrl-C: raised once the round is rolled back
                self.pending = e
            return 1

    def _add_window(self, lo_va: int, hi_va: int, access: str = "read") -> bool:
        ex = self.ex
        if not lo_va < hi_va <= (1 << 47):
            return False
        got = self.tier.windows.add(ex.mem, ex.vmid, lo_va, hi_va, access)
        self.ctx[lo.C_NWINDOWS] = len(self.tier.windows.views)
        return got

    def _windowed(self, lo_va: int, hi_va: int) -> bool:
        """Whether a fused batch's access of [lo_va, hi_va) stays comparable by VA (tier.py, "Fused launch"): one window
        holds it and no two windows reach the same memory through different VAs."""
        return self.tier.windows.covered(lo_va, hi_va) and not self.tier.windows.aliased()


# ---------------------------------------------------------------------------------------------- translation


@dataclass
class _Job:
    key: str
    ir: str
    meta: dict


def _callback_safe(inst) -> bool:
    """Whether the interpreter may run this instruction for one wave inside a round: its result must not
    depend on how waves are grouped. Float ops with two or more float operands are not (numpy's NaN
    choice), unless fpexact fixes their NaNs; those run as sync instructions, for the same group."""
    from simgpu.shader.semantics import base_name
    from simgpu.shader.vector.valu import SPECS
    m = inst.mnemonic
    if not m.startswith("v_"):
        return True  # scalar ops and memory reads (region.is_sync keeps the rest out)
    if inst.encoding in ("VOPD", "VOP3P", "WMMA") or m.startswith(("v_pk_", "v_dot", "v_wmma")):
        return False
    spec = SPECS.get(base_name(m))
    if spec is None:
        return True
    kinds = ("f16", "f32", "f64")
    floats = sum(t in kinds for t in spec.srcs) + (1 if spec.acc and spec.dst in kinds else 0)
    return floats < 2


@dataclass
class _Source:
    """What translating a kernel reads from the dispatch, taken on the launching thread: its reachable
    instructions (region.reachable) and the bytes of their span."""

    base: int
    lanes: int
    mode: int
    nvgpr: int
    found: dict
    span: tuple[int, int]
    code: bytes
    seconds: float = 0.0  # CPU time of the walk (counted with the translation)


def _source(ex: TierExec) -> _Source:
    """The walk of the dispatch's reachable code (through the interpreter's decode cache) and its bytes."""
    d = ex.d
    with jc.Timer() as t:
        found = rg.reachable(d.code_address, ex.decoded)
        span = (min(found), max(o + (i.size if i is not None else 4) for o, i in found.items()))
        code = ex.mem.read(d.vmid, d.code_address + span[0], span[1] - span[0], access="execute")
    return _Source(d.code_address, d.wave_size, _mode_bits(d.descriptor), max(d.vgpr_count, 1), found, span, code,
                   t.seconds)


def _build(source: _Source, tier: JitTier, background: bool = True):
    """Translate and compile (any thread: it reads only `source`): a CompiledRegion, or None when there is
    nothing to compile (or too much: MAX_REGION_INSNS). `background` (a compile for later launches, on the JIT
    thread): LLVM's part in the JIT's worker process (jit.worker); otherwise (an eager compile the launch waits
    for) on this thread, so that it never queues behind the background compiles of other kernels."""
    if len(source.found) > MAX_REGION_INSNS:
        return None
    drops = _DROPS
    with jc.Timer() as t0:  # a process's first compile: the translators' imports and the sources' hash
        first = not (translators_loaded() and jc.ready())  # (llvmlite's import and LLVM's start: in _finish)
        load_translators()
        translator_key()
    with jc.Timer() as t:
        job = _translate(source)
    if not isinstance(job, _Job):
        return job
    tier.stats.translate_seconds.append(source.seconds + t.seconds + t0.seconds)
    if background and drops != _DROPS:  # dropped while it translated: no LLVM (nor disk cache write) for it
        raise worker.CompileDropped("dropped during translation")
    cr = _finish(job, tier.stats, background=background)
    # (the walk is left out: through a warm decode cache it takes microseconds; an eager compile's walk decodes)
    hc.record(len(source.found), t.seconds, None if cr.from_disk else cr.compile_seconds - cr.start_seconds,
              t0.seconds + cr.start_seconds if first else None)
    return cr


def compile_cost(costs: hc.HostCosts, insns: int) -> tuple[float, float]:
    """(CPU seconds a compile of `insns` reachable instructions takes from the launching thread, seconds
    until its code is ready) by the host's measured `costs` (the start's imports while this process has not
    compiled yet)."""
    start = 0.0 if translators_loaded() and jc.ready() else costs.start
    taken = start + insns * costs.translate
    return taken, taken + insns * costs.llvm


def _translate(src: _Source):
    """Classify and translate the region: a _Job for LLVM, a CompiledRegion from the memory cache, or None
    when there is nothing to compile."""
    lanes, mode, nvgpr = src.lanes, src.mode, src.nvgpr
    lw = lo.Lowering(lanes, mode, nvgpr)
    region = rg.classified(src.base, src.found, classifier(lw, nvgpr, _callback_safe))
    if not any(_worth_running(b) for b in region.blocks):
        return None
    span, code = src.span, src.code
    key = jc.key_of("simgpu-jit", translator_key(), lanes, mode, nvgpr, region.code_signature(),
                    jc.cpu_setting())  # (+ host: on disk)
    meta = dict(lanes=lanes, mode=mode, nvgpr=nvgpr, region=region, span=span, code=code)
    hit = _COMPILED.get(key)
    if hit is not None:
        return CompiledRegion(**{**hit.__dict__, "span": span, "code": code})
    ir, fuse = build_module(lw, region)
    meta["nhints"] = len(lw.hints)
    meta["fusable"], meta["nsites"], meta["entry_sets"] = fuse, len(lw.sites), lw.entry_sets
    meta["stores"] = [b.index for b in region.blocks if fuse and b.kind == rg.SYNC and b.insns[0].fragment is not None]
    meta["lds_stores"] = frozenset(b.index for b in region.blocks if lds_store(b))
    meta["barriers"] = frozenset(o for o, i in region.insns.items() if i.inst is not None
                                 and i.inst.mnemonic == "s_barrier")
    meta["writes"] = [None if x is None else (np.array(sorted(x[0]), np.intp), np.array(sorted(x[1]), np.intp))
                      for x in reachable_writes(region)]
    for insn in region.insns.values():  # the IR text is in the module now
        insn.fragment = None
    return _Job(key, ir, meta)


def _worth_running(blk: rg.Block) -> bool:
    """A block native code would run (the interpreter runs short tails: see JitRun.step)."""
    return blk.kind == rg.NATIVE and not _short_tail(blk)


def _short_tail(blk: rg.Block) -> bool:
    return len(blk.insns) <= SHORT_TAIL and blk.insns[-1].inst is not None and blk.insns[-1].inst.mnemonic in rg.ENDS


def _planar(raw: np.ndarray, size: int, lanes: int, out: int) -> None:
    """Bytes read for one wave ([1, lanes, size]) into native code's buffer at `out`: dword k of every lane,
    lane after lane (or the lanes' bytes of a sub-dword read)."""
    dst = np.ctypeslib.as_array((ctypes.c_uint8 * (lanes * max(size, 4))).from_address(out))
    if size >= 4:
        dst[:] = np.ascontiguousarray(raw[0].view(np.uint32).T).view(np.uint8).reshape(-1)
    else:
        dst[:lanes * size] = raw[0].reshape(-1)


def _tails(blocks) -> dict:
    """For each native instruction that may stop a wave before it: the mnemonics from it to its block's end
    (counted with the block, not executed)."""
    out = {}
    for blk in blocks:
        if blk.kind != rg.NATIVE:
            continue
        for i, insn in enumerate(blk.insns):
            if insn.exits:
                out[insn.off] = [x.inst.mnemonic for x in blk.insns[i:]]
    return out


def _object_code_in_worker(job: _Job) -> tuple[bytes, bool, float]:
    """(object file, from the disk cache, the worker process's CPU seconds for it): LLVM in jit.worker's
    process, which drop_queued_compiles may end (CompileDropped)."""
    seconds, drops = [], _DROPS

    def make(ir: str) -> bytes:
        obj, s = worker.compile_object(ir)
        if drops != _DROPS:  # dropped while LLVM ran: no disk cache write (a test's cache directory may be the next
            raise worker.CompileDropped("dropped during code generation")  # test's by now)
        seconds.append(s)
        return obj
    obj, from_disk = jc.object_code(job.ir, job.key, make)
    return obj, from_disk, sum(seconds)


def _finish(job: _Job, stats: Stats, background: bool = False) -> CompiledRegion:
    """LLVM's part (parsing, optimisation, code generation or the disk cache) and loading; `background`:
    code generation in the JIT's worker process, whose CPU time is counted apart (this thread waits for it
    without holding the GIL)."""
    with jc.Timer() as t:
        with jc.Timer() as start:
            jc.prepare()  # llvmlite imported (Python: it holds the GIL) here, for the key and loading
        if background:
            obj, from_disk, llvm_seconds = _object_code_in_worker(job)  # (another process's CPU)
        else:
            obj, from_disk = jc.object_code(job.ir, job.key)
            llvm_seconds = 0.0  # (this thread's: in t.seconds)
        engine, addr = jc.load(obj, "round")
        fused = FUSED_TYPE(engine.get_function_address("fused")) if job.meta["fusable"] else None
    region, m = job.meta["region"], job.meta
    blocks = region.blocks
    counted = {b.index for b in blocks if b.kind in (rg.NATIVE, rg.CALLBACK)} | set(m["stores"]) | m["lds_stores"]
    cr = CompiledRegion(
        round=ROUND_TYPE(addr), engine=engine, lanes=m["lanes"], mode=m["mode"], nvgpr=m["nvgpr"], blocks=blocks,
        by_start=region.by_start, block_last=np.array([b.last for b in blocks], np.int64),
        block_len=np.array([len(b.insns) if b.index in counted else 0 for b in blocks], np.int64),
        hist=[b.histogram() if b.index in counted else Counter() for b in blocks],
        insns=region.insns, tails=_tails(blocks), writes=m["writes"], span=m["span"], code=m["code"],
        nhints=m["nhints"], fused=fused, nsites=m["nsites"], stores=len(m["stores"]), entry_sets=m["entry_sets"],
        lds_stores=m["lds_stores"], barriers=m["barriers"],
        compile_seconds=t.seconds + llvm_seconds, from_disk=from_disk, start_seconds=start.seconds)
    cr.short_tails = frozenset(b.index for b in blocks if b.kind == rg.NATIVE and _short_tail(b))
    if len(_COMPILED) >= MAX_COMPILED:  # the oldest goes (engines still used by a dispatch stay alive)
        del _COMPILED[next(iter(_COMPILED))]
    _COMPILED[job.key] = cr
    stats.compiles += 1
    stats.disk_hits += from_disk
    stats.compile_seconds.append(cr.compile_seconds)
    return cr
