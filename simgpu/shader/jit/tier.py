"""The JIT tier in the engine: JitTier is an engine's (kernels, windows, statistics), JitRun a dispatch's. JitRun sees
the dispatch only through tier_exec.TierExec and hands each job to its class: CompilePolicy (policy.py), FusedLaunch
(fused.py), Intervals (barrier.py), Rounds (rounds.py), NativeCall (native.py); docs/shader.md has the map."""

from __future__ import annotations

import importlib.util
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from simgpu import settings
from simgpu.mem.windows import TierWindows
from simgpu.shader.jit import region as rg
from simgpu.shader.jit.barrier import Intervals
from simgpu.shader.jit.build import CompiledRegion
from simgpu.shader.jit.fused import FusedLaunch, UndoLog
from simgpu.shader.jit.native import Helpers, NativeCall
from simgpu.shader.jit.policy import CompilePolicy
from simgpu.shader.jit.rounds import Rounds
from simgpu.shader.tier_exec import TierExec

MAX_KERNELS = 4096  # kernel entries an engine's tier remembers (the oldest is forgotten)
STATS_KEPT = 1024  # compile times and failures kept in Stats


def jit_mode() -> str:
    """SIMGPU_JIT: 'off' (0), 'eager', or 'hot' (the default)."""
    return settings.get("SIMGPU_JIT")


def jit_tier(mode: str | None = None):
    """The engine's JIT tier for `mode` (default: SIMGPU_JIT), or None when it is off or llvmlite is not
    installed (the tier loads llvmlite only when it compiles: simgpu.shader.jit.compile)."""
    mode = mode or jit_mode()
    return None if mode == "off" or importlib.util.find_spec("llvmlite") is None else JitTier(mode)


@dataclass
class KernelState:
    """What the tier knows about one kernel entry (VMID, PC) of an engine."""

    interpreted: float = 0.0  # CPU seconds the interpreter has spent on it (every 32 steps, batch, dispatch end)
    steps: int = 0  # scheduler steps the interpreter ran for it
    future: Future | None = None
    built: object = None  # a background compile's result not loaded yet (jit.remote.Built: CompilePolicy._take_up)
    compiled: CompiledRegion | None = None
    failed: str | None = None
    idle: bool = False  # nothing in it the tier would run (its code is a few instructions to s_endpgm)
    deferred: bool = False  # hot, not compiled beside its launch: compiled after a dispatch of it ends (see `end`)
    dispatches: int = 0
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
    """The JIT tier of one ShaderEngine: kernels' states, memory windows, the fused batches' undo log, statistics."""

    def __init__(self, mode: str):
        self.mode = mode
        self.kernels: dict[tuple[int, int], KernelState] = {}
        self.stats = Stats()
        self.windows = TierWindows()
        self.undo = UndoLog()
        self.helpers = Helpers()  # the native helpers' C entry points (native.py)

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


class JitRun:
    """One dispatch under the JIT tier: the engine's scheduler asks `step` before interpreting and `fused_batch`
    before each batch, and says `end`."""

    def __init__(self, tier: JitTier, ex: TierExec):
        self.ex, self.stats = ex, tier.stats
        self.state = tier.kernel((ex.d.vmid, ex.d.code_address))
        self.state.dispatches += 1
        self.policy = CompilePolicy(tier.mode, ex, self.state, tier.stats)  # (first: its clock counts the setup)
        self._helpers = tier.helpers
        self.native = NativeCall(ex, tier.stats, tier.windows, tier.helpers)
        self.rounds = Rounds(ex, tier.stats, self.native)
        self.fused = FusedLaunch(ex, tier.stats, self.native, tier.windows, tier.undo, self.state)
        self.intervals: Intervals | None = None  # barrier-to-barrier intervals (barrier.py): kernels with LDS stores
        self.cr: CompiledRegion | None = None
        self.paused = False  # the rest of the dispatch runs in the interpreter
        self._seen = None  # the WaveState of the batch the tier has seen a step of
        tier.windows.for_dispatch(ex.mem, ex.d.vmid)
        self.policy.start()

    def _compiled(self) -> CompiledRegion | None:
        """The code this dispatch may run (CompilePolicy.compiled); code changed since its compile pauses it."""
        self.cr = self.policy.compiled()
        self.paused = self.policy.stale
        return self.cr

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
                self.policy.hot_check()
            return False
        blk = cr.by_start.get(pc - self.ex.d.code_address)
        if blk is not None and blk.index in cr.short_tails:
            return False  # a few instructions to s_endpgm: the interpreter's batch ops beat a round's setup
        if blk is None or blk.kind in (rg.SYNC, rg.MISSING):
            self.stats.sync_steps += 1
            if self.intervals is not None and blk is not None and blk.start in cr.barriers:
                self.intervals.off = False  # (a failed interval's rounds got to a barrier: try again after it)
            self.ex.run(pc, w, False)  # one instruction in the interpreter, for exactly these waves
            return True
        if self.intervals is None and cr.lds_stores:
            self.intervals = Intervals(self.rounds)
        if self.intervals is not None and self.intervals.step(cr, pc, w, fresh):
            return True
        if not self.rounds.run(cr, pc, w, fresh):
            self.paused = self.rounds.at_limit  # (rolled back: the interpreter finds the watchdog's instruction)
            self.ex.run(pc, w, False)
        return True

    def fused_batch(self, count: int) -> bool:
        """Run the batch of `count` workgroups (from ex.groups_before on) as one fused launch (fused.py) if the
        kernel allows it; False when it does not, or when the launch could not finish (then it is undone: the
        batch runs as usual)."""
        self.policy.batch_started()
        if self.paused or self.fused.off or self.state.nofuse:
            return False
        cr = self.cr or self._compiled()
        if cr is None and self.state.compiled is None:
            self.policy.hot_check()  # (also per batch: a kernel of a few long steps per batch gets hot in time)
        return cr is not None and self.fused.run(cr, count)

    def end(self) -> None:
        """The dispatch ended (or faulted): CompilePolicy.end; the helpers let go of its NativeCall (and its state)."""
        self.policy.end()
        if self._helpers.current is self.native:
            self._helpers.current = None
