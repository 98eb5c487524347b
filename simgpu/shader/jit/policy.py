"""Compile policy: when a kernel is compiled, and whether a dispatch may run its code. SIMGPU_JIT=eager compiles at a
kernel's first dispatch; by default a kernel is compiled once the interpreter has spent SIMGPU_JIT_HOT ms of CPU time
on it over its dispatches (default 20), beside the launch only when that pays within it (_pays_now), else when the
dispatch ends. The launching thread only walks the kernel's code; translation and LLVM run in the JIT's worker process
(jit.remote), and the launching thread loads the result (take-up) when that pays within the launch (_take_now), else
at the kernel's next dispatch: no launch waits for a compile, and a kernel that never gets hot never pays.
"""

from __future__ import annotations

import os
import time

from simgpu import settings
from simgpu.fault import HardwareFault
from simgpu.shader.jit import build as bd
from simgpu.shader.jit import costs as hc
from simgpu.shader.jit import remote, worker
from simgpu.shader.jit.build import CompiledRegion, Source
from simgpu.shader.setup import initial_mode
from simgpu.shader.tier_exec import TierExec

# Lanes of a batch from which a VALU operation's numpy loop releases the GIL long enough for a background
# translation to run beside the launching thread (numpy releases it for loops of more than 500 elements)
GIL_FREE_LANES = 8192
# The payoff rule (CompilePolicy._pays_now): a compile beside a launch must win back PAYOFF times the CPU it takes
# from the launching thread, counting on native code to need at most NATIVE_SHARE of the interpreter's time
PAYOFF, NATIVE_SHARE = 2.0, 0.25
# A dispatch that has run this long (CPU seconds) with no progress to go by (one batch, or a batch under way far
# longer than the last: `_measured`) compiles beside itself whatever the rules below say, once it has also run as long
# as the worker's part would take (`_worker_cpu`: its start while none runs, the translation and LLVM). Ski rental:
# what was spent interpreting covers what the compile takes from it. A long loop (a hang that the wave-instruction
# budget must end among them) would otherwise stay in the interpreter until the dispatch ends, for hours on a busy
# machine, and a one-wave serial loop of a test for seconds: tinygrad's test_softmax_argmax launches two such (1.4 and
# 1.6 s of CPU in the interpreter; the test's engine CPU 3.0 -> 1.0 s with this rule, disk cache warm; it was 2.0 s).
# The rule compiled at 0.25 s whenever a CPU was free, and on a quiet host bench_jit's matmul (one batch) and saxpy
# (0.5-0.6 s launches) then paid the worker's contention (CONTENTION) for code that could not arrive before they ended
# (the worker's start alone is ~0.5 CPU-s): first launches 2-10% slower (issue 29). Now a launch that ends before the
# code could be ready has compiled nothing beside itself, and one that ends between then and the code's arrival loses
# at most CONTENTION of the worker's CPU against at least as much spent (under 8%); a dispatch whose batches tell what
# is ahead is left to the payoff rule. (A test suite's long one-wave loops, whose worker runs, start their compile
# once they have run as long as its translation and LLVM would take, a little later than at 0.25 s.)
LONG_DISPATCH = 0.25
# The launching thread's CPU grows by this share of the worker's CPU while the worker runs beside it on the other CPU
# (shared caches and memory, the host's other hyperthread): a compile beside a launch costs the launch that, besides
# the take-up. Measured on the project's 2-CPU VM (docs/shader.md, "The first launch"): bench_jit's host matmul, its
# first launch with the worker starting and compiling beside it at 0.25-0.3 s (the code arriving after the launch)
# against the same launch with the compile after it, 12 interleaved pairs: launching thread CPU median 663 against
# 627 ms, best 628 against 572, for ~0.35-0.45 s of the worker's CPU within the launch: 0.09-0.14
CONTENTION = 0.15
# What a take-up costs the launching thread per reachable instruction before this host has measured one (costs.py:
# take): the region's rebuild and the object's loading (jit.elfload: no llvmlite), 0.010-0.012 CPU-ms measured on the
# project's host, several times that for a slower one
TAKE_GUESS = 80e-6
# The worker's start (Python's, jit.remote's imports, the translators' registration and the sources' hash) before
# this host has measured one (costs.spawn): 0.45 CPU-s on the project's host
SPAWN_GUESS = 0.45


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


def take_cost(costs: hc.HostCosts | None, insns: int) -> float:
    """CPU seconds a take-up of a compile of `insns` reachable instructions takes from the launching thread (the
    region's rebuild and the object's loading, by jit.elfload: the same in a process's first take-up, which
    needs no llvmlite), by the host's measured `costs` or the guess while none is measured."""
    take = costs.take if costs is not None and costs.takes else TAKE_GUESS
    return insns * take


def compile_cost(costs: hc.HostCosts, insns: int, free: bool = True) -> tuple[float, float]:
    """(CPU seconds a compile of `insns` reachable instructions takes from the launching thread, seconds
    until its code is ready) by the host's measured `costs`: the worker translates and compiles (and starts,
    while this process has none), slowing the launching thread by CONTENTION of that beside it on a `free` CPU, and
    sharing the launch's CPUs with no CPU free (all of it, then); the launching thread takes the result up."""
    worker_cpu = _spawn(costs) + insns * (costs.translate + costs.llvm)
    taken = take_cost(costs, insns)
    return taken + worker_cpu * (CONTENTION if free else 1.0), worker_cpu + taken


def _spawn(costs: hc.HostCosts) -> float:
    """CPU seconds until the worker can translate: none while it runs, else its measured start (SPAWN_GUESS
    while only eager compiles have been measured: an in-process start is a tenth of it)."""
    return 0.0 if worker.running() else costs.spawn if costs.spawns else SPAWN_GUESS


class CompilePolicy:
    """One dispatch's side of its kernel's compile: hot or not, compiled beside the launch or after it, and the
    compiled code checked against the dispatch (JitRun asks `compiled` before running it)."""

    def __init__(self, mode: str, ex: TierExec, state, stats):
        self.mode, self.ex, self.state, self.stats = mode, ex, state, stats
        self.started = self.dispatch_started = time.process_time()
        self.batch_starts: list[float] = []  # process time at each batch's start (the payoff estimate)
        self.background = settings.get("SIMGPU_JIT_BACKGROUND")  # now, after (the launch) or auto (_pays_now)
        self._walked: Source | None = None  # the kernel's reachable code, walked for the payoff rule
        self._cr: CompiledRegion | None = None
        self._checked = False
        self.stale = False  # the code in memory is not what was compiled: this dispatch stays in the interpreter
        self._looked = False  # whether `compiled` was asked before in this dispatch (it has run)
        self._declined = False  # a take-up this dispatch found not to pay (the next dispatch takes it up)

    def start(self) -> None:
        """The dispatch starts: with SIMGPU_JIT=eager a kernel not compiled yet is compiled now, on this thread."""
        st = self.state
        if self.mode == "eager" and st.compiled is None and st.failed is None and not st.idle:
            self._compile(sync=True)

    def batch_started(self) -> None:
        """A batch of the dispatch starts (the payoff rule's estimate of what is ahead)."""
        self.batch_starts.append(time.process_time())

    def compiled(self) -> CompiledRegion | None:
        """The kernel's code, if this dispatch may run it: a compile that has ended is taken up, and the code is
        checked once per dispatch against the dispatch's (else `stale`, and compiled again)."""
        st = self.state
        if st.compiled is None and st.future is not None and st.future.cancelled():
            st.future = None  # dropped before it started (drop_queued_compiles): hot again, compiled again
            return None
        if st.compiled is None and st.future is not None and st.future.done():
            try:
                got = st.future.result()
            except worker.CompileDropped:
                pass  # stopped under way (drop_queued_compiles): hot again, compiled again
            except Exception as e:  # noqa: BLE001 - a translator bug must not stop the interpreter
                self._failed(e)
            else:
                if isinstance(got, remote.Built):
                    st.built = got  # (loaded below, now or at the kernel's next dispatch)
                else:
                    self._compiled_as(got)
            st.future = None
        if st.compiled is None and st.built is not None and not self._declined:
            self._take_up()
        self._looked = True
        cr = st.compiled
        if cr is None:
            return None
        if not self._checked:  # once per dispatch: the same code, architecture, wave size, VGPRs and MODE
            self._checked = True
            d, ex = self.ex.d, self.ex
            try:
                code = ex.mem.read(d.vmid, d.code_address + cr.span[0], cr.span[1] - cr.span[0], access="execute")
            except HardwareFault:
                code = None
            ok = (code == cr.code and cr.arch == d.arch and cr.lanes == d.wave_size
                  and cr.nvgpr == max(d.vgpr_count, 1) and cr.mode == initial_mode(d))
            if not ok:
                st.compiled = None
                self.stale = True
                self._compile(sync=self.mode == "eager")
                return None
            self._cr = cr
        return self._cr

    def _take_up(self) -> None:
        """Load the compile the worker made (remote.take_up), on the launching thread: at once if this dispatch has
        not run yet (its code is wanted for all of it), else only if that pays within this launch (`_take_now`);
        otherwise the kernel's next dispatch takes it up, and this launch runs on as the interpreter alone would."""
        if self._looked and not self._take_now(time.process_time()):
            self._declined = True  # (asked once per dispatch: what is ahead only shrinks)
            return
        built, self.state.built = self.state.built, None
        try:
            self._compiled_as(remote.take_up(built, self.stats))
        except Exception as e:  # noqa: BLE001 - a malformed reply or a load LLVM refused: the interpreter goes on
            self._failed(e)

    def _take_now(self, now: float) -> bool:
        """Whether loading the compiled code now pays within this launch: what native code would save of the
        interpretation still ahead (`_ahead`; unknown: half as long again as the dispatch has run) is at least
        PAYOFF times what the take-up takes from the launching thread (take_cost)."""
        ahead = self._ahead(now)
        if ahead is None:
            ahead = (now - self.dispatch_started) / 2
        taken = take_cost(hc.current(), len(self.state.built.source.found))
        return ahead * (1 - NATIVE_SHARE) >= PAYOFF * taken

    def _failed(self, e: Exception) -> None:
        """A kernel the tier could not compile runs in the interpreter; the reason is kept (tests fail on it)."""
        self.state.failed = f"{type(e).__name__}: {e}"
        self.stats.failures.append(((self.ex.vmid, self.ex.d.code_address), self.state.failed))

    def _compile(self, sync: bool, source: Source | None = None) -> None:
        """Compile the kernel: at once (sync: discovery, translation and LLVM on this thread), or with only
        the walk of its reachable code here (a decode-cache lookup per instruction) and translation and LLVM
        in the JIT's worker process (jit.remote), which read only the walk's result (the code's offsets and
        bytes, never the dispatch's state or memory): a launch never waits for a compile, and the code is taken
        up by a launch (`_take_up`)."""
        try:
            source = source or bd.source(self.ex)
        except Exception as e:  # noqa: BLE001 - the interpreter stays the fallback
            self._failed(e)
            return
        if sync:
            try:
                self._compiled_as(bd.build(source, self.stats, background=False))
            except Exception as e:  # noqa: BLE001 - the interpreter stays the fallback
                self._failed(e)
            return
        self.state.future = remote.submit(source, self.stats)

    def _compiled_as(self, got) -> None:
        """What a compile gave: a CompiledRegion, or None (nothing in the kernel the tier would run)."""
        if got is None:
            self.state.idle = True
        else:
            self.state.compiled = got

    def hot_check(self) -> None:
        """Add the interpreter's time on the kernel since the last check; once it is hot, compile it in the
        background: at the end of this dispatch, or at once if that pays within this launch (`_pays_now`).
        A compile beside the launch needs a CPU for the worker and costs the launching thread the take-up (the
        load, and llvmlite's import in a process's first)."""
        st = self.state
        if self.mode != "hot" or st.future is not None or st.built is not None or st.failed is not None or st.idle:
            return
        now = time.process_time()
        if not st.deferred:
            st.interpreted += now - self.started
        self.started = now
        if st.deferred or st.interpreted >= settings.get("SIMGPU_JIT_HOT") / 1e3:  # (ms)
            st.deferred = True  # (compiled by `end` unless it pays to start sooner)
            if self._pays_now(now):
                st.deferred = False
                self._compile(sync=False, source=self._walked)

    def _pays_now(self, now: float) -> bool:
        """Whether a compile started now should help this launch, not slow it. What native code would save of the
        interpretation this dispatch still has ahead (`_ahead`; none is estimated before a second batch ended), once
        the code is ready, must be at least PAYOFF times the CPU the compile takes from the launching thread
        (compile_cost: the take-up, and the worker's CPU beside the launch, CONTENTION of it on a free CPU, all of it
        with no CPU free (core_free), which only a dispatch that has run LONG_DISPATCH considers). The compile's costs
        are this host's, measured (costs.py); until this host has measured a compile, none starts beside a launch.
        Batches under GIL_FREE_LANES lanes (a few waves' interpretation is Python all the time, and the reply's
        handling and the take-up are Python too) compile beside themselves only once the dispatch has run
        LONG_DISPATCH. A dispatch that has run LONG_DISPATCH with no
        progress to go by (`_measured`) compiles now in any case once it has run as long as the worker's part would
        take (`_worker_cpu`), a CPU free or not."""
        if self.background != "auto":
            return self.background == "now"
        ran = now - self.dispatch_started
        if ran >= LONG_DISPATCH and not self._measured(now) and ran >= self._worker_cpu():
            return True
        ex = self.ex
        if ex.batch_count * ex.waves_per_group * ex.lanes < GIL_FREE_LANES and ran < LONG_DISPATCH:
            return False
        ahead = self._ahead(now)
        if ahead is None:
            return False
        costs = hc.current()
        if costs is None:
            return False
        if not self._walk():
            return False
        free = core_free()  # (a file read: after the cheaper tests)
        if not free and ran < LONG_DISPATCH:
            return False
        taken, ready = compile_cost(costs, len(self._walked.found), free)
        return (ahead - ready) * (1 - NATIVE_SHARE) >= PAYOFF * taken

    def _measured(self, now: float) -> bool:
        """Whether this dispatch's progress tells what it has ahead (`_ahead`): it has several batches, two of
        them have ended, and the one under way has run at most twice as long as the last (else it may hang)."""
        starts = self.batch_starts
        return (self.ex.batch_count < self.ex.group_count() and len(starts) >= 3
                and now - starts[-1] <= 2 * (starts[-1] - starts[-2]))

    def _worker_cpu(self) -> float:
        """CPU seconds the worker would spend on this kernel's compile (its start, while it runs not, the
        translation and LLVM), by the host's measured costs (LONG_DISPATCH while none are measured): a long dispatch
        compiles beside itself only once it has run as long, so that a launch ending before the code could be ready
        has not paid for it, and one ending later has lost at most a share of what it spent (with no CPU free the
        worker shares the launch's CPUs: all of the worker's CPU, then; CONTENTION of it with a CPU free)."""
        costs = hc.current()
        if costs is None or not self._walk():
            return LONG_DISPATCH
        return _spawn(costs) + len(self._walked.found) * (costs.translate + costs.llvm)

    def _walk(self) -> bool:
        """The kernel's reachable code walked (`_walked`), for the payoff rule; False when the walk failed (the
        compile after the launch reports why)."""
        if self._walked is None:
            try:
                self._walked = bd.source(self.ex)
            except Exception:  # noqa: BLE001 - the compile after the launch reports it
                return False
        return True

    def _ahead(self, now: float) -> float | None:
        """CPU seconds of interpretation this dispatch still has ahead: the batches left times the last one's time
        (not the first's, which pays for decoding and first touches: None before a second batch ended), or, in a
        dispatch of one batch, half as long again as it has run (no progress to go by)."""
        ex = self.ex
        starts, total = self.batch_starts, ex.group_count()
        if ex.batch_count >= total:
            return (now - self.dispatch_started) / 2
        if len(starts) >= 3:
            return (starts[-1] - starts[-2]) * (total - ex.groups_before) / ex.batch_count
        return None

    def end(self) -> None:
        """The dispatch ended (or faulted): a hot kernel not compiled beside its launch is compiled now, in the
        background, for its next launches -- once it has been launched more than once. A compile after the
        launch pays only if the kernel runs again, and a test suite launches most kernels once: each such
        compile took CPU (its translation also the GIL) from the launches that followed, for nothing. A kernel
        run in a loop waits one more launch."""
        st = self.state
        if st.compiled is None:  # the interpreter's time since the last check (a dispatch of a few steps, of
            self.hot_check()  # one batch, has had no check after its start: it would never get hot)
        if st.dispatches < 2:
            return
        if st.deferred and st.future is None and st.built is None and st.compiled is None and st.failed is None:
            st.deferred = False
            self._compile(sync=False, source=self._walked)

