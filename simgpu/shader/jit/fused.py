"""Fused launches: a batch in one native call.

A kernel whose region has no loops (every branch goes forward) and is native but for stores the translator covers
(translate.fusable) runs each batch in one native call, @fused: workgroup after workgroup, each wave from its start to
its end, in wave order. Registers come from a template, one workgroup's initial state with the group's ids written in
(setup.py: only the ids differ between whole workgroups), and nothing is stored back; with registers kept for tests
(ShaderEngine.exit_states) or partial workgroups at the grid's edge, each wave starts from and ends in its own row of
the batch's initial state, as in a round. No batch-sized register file is built. Stores run natively (lower_store) and
keep the old dwords in an undo log. Why the order is the interpreter's: with forward branches only, the interpreter
runs a batch's instructions in PC order, each once for every wave that reaches it, in wave order; a fused batch runs
them wave after wave. The two orders differ only for an access at a PC p by wave k and one at a PC q > p by an earlier
wave, so each memory site checks its access's VA extent against the extents the earlier waves had at every later site
where one of the two is a store (hulls, Lowering.site); VAs stand for memory because every access of a fused batch
goes through a window and no two windows reach the same memory through different VAs (TierWindows.aliased). A failed
check, a store or read without a window (a fault), the watchdog's limit or an exception ends the call: its stores are
undone from the log and the batch runs in rounds (the kernel's later batches too after a failed check). Counters and
the clock come from block counts, as for rounds.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from simgpu.mem.windows import TierWindows
from simgpu.shader.jit import lower as lo
from simgpu.shader.jit.build import CompiledRegion
from simgpu.shader.jit.lower_store import undo_words
from simgpu.shader.jit.native import NativeCall
from simgpu.shader.setup import workgroup_id_sgprs, workgroup_ids
from simgpu.shader.state import WaveState
from simgpu.shader.tier_exec import TierExec

INT64_MAX = (1 << 63) - 1
U64_MAX = (1 << 64) - 1
MAX_UNDO_WORDS = 32 << 20  # a fused batch's undo log at most 256 MB (its worst case: every lane of every store)


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


class UndoLog:
    """One engine's undo log of fused batches' stores (kept between dispatches: its pages are touched once): per
    store, the address, the lanes stored (or minus the bytes of a byte or short store) and the old dwords."""

    def __init__(self):
        self._log: np.ndarray | None = None

    def at_least(self, words: int) -> np.ndarray:
        """The log, at least `words` int64 long."""
        if self._log is None or self._log.size < words:
            self._log = np.empty(max(words, 1), np.int64)
        return self._log

    def undo(self, n: int, lanes: int) -> None:
        """Put back what the log's first `n` entries' stores overwrote, last first."""
        if not n:
            return
        log = self._log[:n * undo_words(lanes)].reshape(n, -1)
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


class FusedLaunch:
    """One dispatch's fused batches (JitRun.fused_batch asks `run` for each batch)."""

    def __init__(self, ex: TierExec, stats, native: NativeCall, windows: TierWindows, undo: UndoLog, state):
        self.ex, self.stats, self.native, self.windows, self.undo, self.state = ex, stats, native, windows, undo, state
        self.off = False  # a fused batch of this dispatch could not finish: the rest runs in rounds
        self._fused: _Fused | None = None

    def run(self, cr: CompiledRegion, count: int) -> bool:
        """Run the batch of `count` workgroups (from ex.groups_before on) as one fused launch if the kernel
        allows it; False when it does not, or when the launch could not finish (then it is undone: the batch
        runs as usual)."""
        ex, native = self.ex, self.native
        if cr.fused is None or ex.d.private_segment_size or self.windows.aliased():
            return False
        f = self._fused if self._fused is not None else self._setup(cr)
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
        self._context(cr, f, self.undo.at_least(words))
        native.allow(ex.allowed())
        native.fusing = True
        try:
            code = native.call(cr.fused) - 1
        finally:
            native.fusing = False
        if code >= 0 or native.pending is not None:
            self._abandon(code)
            return False
        self._commit(cr, f.counts[0], int(f.laneops[0]), f.st if f.keep else None)
        return True

    def _setup(self, cr: CompiledRegion) -> _Fused:
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

    def _context(self, cr: CompiledRegion, f: _Fused, undo: np.ndarray) -> None:
        """ctx for the fused driver over `f`'s batch, with the undo log `undo`."""
        native, ctx = self.native, self.native.ctx
        native.point_at(f.st, INT64_MAX)
        for slot, value in ((lo.C_COUNTS, f.counts), (lo.C_LANEOPS, f.laneops), (lo.C_MAXLAST, f.maxlast),
                            (lo.C_HULLS, f.hulls), (lo.C_UNDO, undo), (lo.C_GIDS, f.ids),
                            (lo.C_TSTATUS, f.st.status)):
            ctx[slot] = value.ctypes.data
        ctx[lo.C_HINTS] = native.hints(cr)
        ctx[lo.C_FUSED], ctx[lo.C_KEEP], ctx[lo.C_UNDO_N], ctx[lo.C_CURRENT] = 1, int(f.keep), 0, 0
        ctx[lo.C_NGROUPS], ctx[lo.C_WPG] = f.ngroups, f.rows
        ctx[lo.C_GID_X:lo.C_GID_Z + 1] = f.slots

    def _abandon(self, code: int) -> None:
        """A fused batch that did not finish: its stores undone; an exception that stopped it raised. A failed
        order check keeps the kernel's batches in rounds; anything else only this dispatch's."""
        self.undo.undo(int(self.native.ctx[lo.C_UNDO_N]), self.ex.lanes)
        self.stats.fused_aborts += 1
        if code == lo.EXIT_CONFLICT:
            self.state.nofuse = True
        else:
            self.off = True
        pending, self.native.pending = self.native.pending, None
        if isinstance(pending, BaseException):
            raise pending  # (a deadline is the interpreter's to report: the batch runs again there)

    def _commit(self, cr: CompiledRegion, per_block: np.ndarray, lanes: int, st: WaveState | None) -> None:
        """Counters, clock and budget for a finished fused batch, as the interpreter counts them; the batch's
        registers (`st`, kept at exit) for the engine, or none."""
        total = cr.count(self.ex.engine.counters.per_opcode, per_block)
        self.stats.native_instructions += total
        self.stats.fused_batches += 1
        self.ex.st = st
        self.ex.charge(total, lanes)  # (a slice it ends ticks at the kernel's entry: every wave has ended)
