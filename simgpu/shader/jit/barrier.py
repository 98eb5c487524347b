"""Barrier-to-barrier intervals: the waves of a batch run natively from one s_barrier to the next (gfx12's
workgroup barrier is the pair s_barrier_signal -1, s_barrier_wait -1: region.workgroup_barriers).

A tiled kernel (LDS tiles between two s_barriers per K step) stops every round at each LDS store and each
barrier: a Python round and an interpreter step per store. Here, when every runnable wave of the batch stands
at one PC (a batch's start, or right after a barrier's release), one native call (@round with ctx C_B2B set)
runs each of them alone, in wave order, until it parks; LDS stores run natively into its group's row
(lower_lds), and the bound is never lowered, so a wave runs past the PCs where earlier waves parked. The
interval is kept if every wave ended (s_endpgm) or parked at an s_barrier and the LDS order check passed;
then the barrier itself runs here as the interpreter runs it (each wave at it counted as one s_barrier, then
Exec's release), and the next interval starts in the same call. Otherwise the registers and LDS go back to
where the interval found them and the interval runs in rounds, which this module leaves alone until the
interpreter has run an s_barrier again (a kernel whose intervals keep failing costs one try per barrier).

Why the result is the interpreter's. From a point where every runnable wave stands at one PC (the others
wait at a barrier or have ended) to the point where every live wave waits at a barrier, the interpreter
interleaves the waves' instructions (lowest PC first, each wave in its program order); the interval runs the
same instructions wave after wave. Within a wave, each register value is a function of the wave's earlier
instructions and of what its memory reads return, so the two orders agree if every read returns the same
bytes and the memory left behind is the same. The only writes in a kept interval are LDS stores: a wave that
reaches a global store, an atomic or any other sync instruction parks there and the interval is undone. So
global memory is not written by any wave of the batch while the interval runs (other batches run before or
after it), and its reads see the same bytes in either order. LDS is the group's own; the order check
(lower_lds) makes sure no two waves of a group touched one LDS dword in the interval with one of them
storing, and accesses without a common dword commute. Neither argument asks where the code branches, so
the K loop's back edge through the barrier, divergent waves reaching different barriers or s_endpgm, and
waves that end early need nothing of their own; what the loop changes is only which PCs an interval covers.
Counters and the clock are sums over the instructions run, the same in either order. The barrier's release
waits in the interpreter until no wave of the batch is runnable, which is where a kept interval ends.

An interval whose waves park at a global store (or another sync instruction) rather than at an s_barrier is
kept too when it passes the rounds' order check (no wave ran at or past a PC where another parked; rounds.py):
the tail after a kernel's last barrier, which ends at the stores of its results, would otherwise be undone and
run again in rounds. The interpreter then runs the parked instructions, as after a round.

What stays with rounds: an interval that passes neither check, an LDS access outside the row, not
naturally aligned or racing (the check fails), an LDS read through the memory helper or a callback, a fault,
the watchdog's slice, or more than MAX_INTERVAL wave-instructions (a wave that waits in a loop for another
wave's LDS store would otherwise spin until the watchdog's limit before the rounds took over).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.jit import lower as lo
from simgpu.shader.jit import region as rg
from simgpu.shader.jit.lower_lds import HULL_FIELDS, OWNER, WAVE_BITS
from simgpu.shader.jit.rounds import Rounds
from simgpu.shader.state import RUNNING, wsel

MAX_INTERVAL = 1 << 22  # wave-instructions an interval may run before it is given to rounds
INT64_MAX = (1 << 63) - 1
PARKED = "parked"  # an interval kept with waves parked at a sync instruction other than s_barrier (_round_order)


class Intervals:
    """The barrier-to-barrier intervals of one dispatch under the JIT tier (JitRun.step asks `step` first)."""

    def __init__(self, rounds: Rounds):
        self.rounds = rounds  # the dispatch's rounds: their native call, register saves and commit
        self.off = False  # an interval of this batch failed: rounds until the interpreter runs an s_barrier
        self.epoch = 0
        self._st = None  # the batch (WaveState) the buffers below are for
        self._tags: np.ndarray | None = None  # the stores' tags: [groups, LDS dwords] (lower_lds)
        self._hulls: np.ndarray | None = None  # [groups, HULL_FIELDS]: owner and hulls (lower_lds)
        self._lds: np.ndarray | None = None  # the LDS as the interval found it
        self._lds_saved = False  # whether _lds holds it (not for a batch's first interval: the LDS is zeros)
        self._barrier_cr, self._barrier_offsets = None, None  # the region's s_barrier offsets, sorted

    def step(self, cr, pc: int, w: np.ndarray, fresh: bool) -> bool:
        """Run intervals from `pc`, where the waves `w` stand, while every runnable wave stands at one PC;
        False when none was kept (the caller runs a round)."""
        st = self.rounds.ex.st
        if st is not self._st:
            self._batch(st)
        if self.off:
            return False
        base, ran = self.rounds.ex.d.code_address, False
        while len(w) == int(np.count_nonzero(st.status == RUNNING)):
            kept = self._interval(cr, pc, w, fresh)
            if not kept:
                self.off = True
                break
            ran, fresh = True, False
            if kept is PARKED or not self._barrier(cr):
                break
            running = np.flatnonzero(st.status == RUNNING)
            if not len(running):
                break
            pc = int(st.pc[running].min())
            w = running[st.pc[running] == pc]
            blk = cr.by_start.get(pc - base)
            if blk is None or blk.kind != rg.NATIVE or blk.index in cr.short_tails:
                break
        return ran

    def _batch(self, st) -> None:
        """Buffers for a new batch: the LDS snapshot and the order check's tags (kept while the shape holds:
        the epoch goes on, so old tags count as none)."""
        self._st, self.off = st, False
        if self._lds is None or self._lds.shape != st.lds.shape:
            self._lds = np.empty_like(st.lds)
            dwords = max((st.lds.shape[1] + 3) // 4, 1)
            self._tags = np.zeros((st.lds.shape[0], dwords), np.int64)
            self._hulls = np.empty((st.lds.shape[0], HULL_FIELDS), np.int64)

    def _interval(self, cr, pc: int, w: np.ndarray, fresh: bool):
        """One interval for the waves `w` at `pc`: kept (counted; PARKED when some wave parked at a sync
        instruction other than s_barrier, True otherwise) or undone (False)."""
        rounds, native = self.rounds, self.rounds.native
        ex, ctx = rounds.ex, native.ctx
        st, n = ex.st, len(w)
        ix = wsel(w)
        saved = None if fresh else rounds.save(cr, ix, pc)
        self._lds_saved = not fresh  # (a batch's LDS starts zeroed: _undo clears it again)
        if self._lds_saved:
            np.copyto(self._lds, st.lds)
        counts, laneops, exits, maxlast = rounds.buffers(n, len(cr.blocks))
        self.epoch += 1
        ctx[lo.C_EPOCH] = self.epoch << WAVE_BITS
        self._hulls[:, 1::2] = -1  # every hull [U64_MAX, 0): empty (lower_lds: lo, hi from field 1 on)
        self._hulls[:, 2::2] = 0
        self._hulls[:, OWNER] = -1  # no wave yet
        ctx[lo.C_WRITERS], ctx[lo.C_GROUP_HULLS] = self._tags.ctypes.data, self._hulls.ctypes.data
        ctx[lo.C_LDS_DWORDS] = self._tags.shape[1]
        ctx[lo.C_B2B] = 1
        try:
            rounds.run_native(cr, w, np.arange(n), counts, laneops, exits, maxlast, INT64_MAX,
                              min(ex.allowed(), MAX_INTERVAL))
        finally:
            ctx[lo.C_B2B] = 0
        if native.pending is not None:  # the deadline, Ctrl-C, a progress hook's exception
            self._undo(cr, saved, ix, w)
            native.raise_pending(w, pc)
        parks = st.pc[ix] - ex.d.code_address
        kept = ((exits == lo.EXIT_DONE) | ((exits == lo.EXIT_SYNC) & self._at_barrier(cr, parks))).all() or \
            (PARKED if self._round_order(parks, exits, maxlast) else False)
        if not kept:
            self._undo(cr, saved, ix, w)
            rounds.stats.interval_aborts += 1
            return False
        rounds.commit(cr, counts, laneops, w)
        rounds.stats.intervals += 1
        return kept

    @staticmethod
    def _round_order(parks: np.ndarray, exits: np.ndarray, maxlast: np.ndarray) -> bool:
        """Whether an interval whose waves ended or parked at sync instructions, some not at an s_barrier (the
        tail after a kernel's last barrier parks at its global stores), is also what the interpreter would
        have run: no wave ran an instruction at or past the PC where another wave parked (rounds.py's order
        check; PC offsets). Then every parked instruction runs after all the instructions the interval ran in
        the interpreter's lowest-PC order too, and the LDS order check covers those: the interval is kept
        as a round would be, and the interpreter runs the parked instructions from there."""
        if not ((exits == lo.EXIT_DONE) | (exits == lo.EXIT_SYNC)).all():
            return False
        park = np.where(exits == lo.EXIT_SYNC, parks, INT64_MAX)
        if len(park) == 1:
            return True
        two = np.partition(park, 1)[:2]
        others_min = np.where(park == two[0], two[1], two[0])  # the lowest park of any other wave
        return not ((maxlast >= 0) & (maxlast >= others_min)).any()

    def _at_barrier(self, cr, parks: np.ndarray) -> np.ndarray:
        """Which PC offsets `parks` are s_barrier instructions of the region (np.isin took 50 us an interval)."""
        if self._barrier_cr is not cr:
            self._barrier_cr, self._barrier_offsets = cr, np.array(sorted(cr.barriers) or [-1], np.int64)
        offsets = self._barrier_offsets
        return offsets[np.minimum(np.searchsorted(offsets, parks), len(offsets) - 1)] == parks

    def _undo(self, cr, saved, ix, w: np.ndarray) -> None:
        """The waves' registers and the LDS back to where the interval found them."""
        self.rounds.restore(cr, saved, ix, np.arange(len(w)), w)
        if self._lds_saved:
            np.copyto(self.rounds.ex.st.lds, self._lds)
        else:
            self.rounds.ex.st.lds.fill(0)

    def _barrier(self, cr) -> bool:
        """Every live wave of the batch stands at a workgroup barrier (region.workgroup_barriers): run its
        instructions in the interpreter (gfx11's s_barrier; gfx12's signal, then wait), for the waves at each
        barrier, lowest PC first, then Exec's release of the workgroups; unless the watchdog's slice ends in them
        (then the interpreter runs them, ticking where it must)."""
        ex = self.rounds.ex
        st = ex.st
        running = np.flatnonzero(st.status == RUNNING)
        if not len(running):
            return False
        base, pcs = ex.d.code_address, st.pc[running]
        at = {pc: cr.barriers[pc - base] for pc in np.unique(pcs).tolist()}
        if ex.budget < sum(int(np.count_nonzero(pcs == pc)) * len(offs) for pc, offs in at.items()):
            return False
        for pc, offs in at.items():  # (np.unique: in PC order)
            w = running[pcs == pc]
            for off in offs:
                ex.run(base + off, w, False)  # (within the slice: no tick)
        return ex.release_barriers()
