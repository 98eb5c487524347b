"""Rounds: how compiled waves keep the interpreter's order.

The interpreter always runs the lowest PC among runnable waves, all waves there together. Only instructions whose
effect reaches other waves or the engine can tell one order from another; the translator makes those *sync*
instructions (region.is_sync) and never runs them. So the tier runs a *round*: for the waves standing at the lowest
PC, each wave alone in native code (registers local), until it parks before a sync instruction, before a block
reaching the *bound*, or at an instruction the region does not cover. The bound is the lowest PC any other wave stands
at (waves outside the round, and the parks of the waves already run in it): in the interpreter no wave could pass a
wave waiting there before that one moved, and no write happens while every wave runs sync-free code. A wave that ran
past a PC where a later wave of the round parked is rolled back (registers restored: its code wrote no memory) and run
again with that bound. The interpreter then runs the sync instruction for exactly the waves it would have run it for.
Each round's counters and clock are those of the instructions run.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.jit import lower as lo
from simgpu.shader.jit.build import CompiledRegion
from simgpu.shader.jit.native import NativeCall
from simgpu.shader.state import RUNNING, wsel
from simgpu.shader.tier_exec import TierExec

INT64_MAX = (1 << 63) - 1


class Rounds:
    """One dispatch's rounds, and the register saves, native runs and counting they share with intervals."""

    def __init__(self, ex: TierExec, stats, native: NativeCall):
        self.ex, self.stats, self.native = ex, stats, native
        self.at_limit = False  # the watchdog's limit fell inside a round: the interpreter runs the rest
        self._bufs = None
        self._buf_ptrs: tuple = ()  # data pointers of self._bufs

    def run(self, cr: CompiledRegion, pc: int, w: np.ndarray, fresh: bool = False) -> bool:
        """One round for the waves `w` at `pc`; False if no wave got anywhere (then the interpreter steps).
        `fresh`: the batch's first step (nothing has run: a rollback rebuilds the initial registers)."""
        ex, st, native = self.ex, self.ex.st, self.native
        self.stats.rounds += 1
        n = len(w)
        running = st.status == RUNNING
        if fresh or n == int(np.count_nonzero(running)):  # every runnable wave is in the round
            bound0 = INT64_MAX
        else:
            running[w] = False
            bound0 = int(st.pc[running].min()) if running.any() else INT64_MAX
        ix = wsel(w)
        saved = None if fresh else self.save(cr, ix, pc)
        counts, laneops, exits, maxlast = self.buffers(n, len(cr.blocks))
        rows = np.arange(n)
        bound, base = bound0, ex.d.code_address
        allowed = ex.allowed()  # wave-instructions before the watchdog's limit
        for attempt in range(n + 2):
            self.run_native(cr, w, rows, counts, laneops, exits, maxlast, bound,
                            allowed - int(counts.sum(axis=0) @ cr.block_len) if attempt else allowed)
            if native.pending is not None:  # the deadline passed, Ctrl-C, a progress hook failed
                self.restore(cr, saved, ix, np.arange(n), w)
                native.raise_pending(w, pc)
            ran = exits if attempt == 0 else exits[rows]
            if n > 1 and ((ran == lo.EXIT_BUDGET) | (ran < 0)).any():
                # The watchdog's limit is inside the round: the interpreter, which runs these waves
                # together, finds the exact instruction. (A lone wave ran exactly the instructions the
                # interpreter would have: it keeps them and the interpreter goes on from its block.)
                self.restore(cr, saved, ix, np.arange(n), w)
                self.stats.budget_rollbacks += 1
                self.at_limit = True
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
            self.stats.reruns += len(bad)
            self.restore(cr, saved, ix, bad, w)
            counts[bad], laneops[bad], maxlast[bad] = 0, 0, -1
            gone = set(w[bad].tolist())
            native.corrections = [c for c in native.corrections if c[0] not in gone]
            keep = np.ones(n, bool)
            keep[bad] = False
            bound = int(min(bound0, park[keep].min() if keep.any() else INT64_MAX))
            rows = bad
        else:
            raise AssertionError("JIT round did not settle")
        # waves stopped before a memory read they could not do: the rest of that block did not run
        for wave in w[exits == lo.EXIT_READ].tolist():
            native.corrections += [(wave, m, 0) for m in cr.tails.get(int(st.pc[wave]) - base, ())]
        return self.commit(cr, counts, laneops, w)

    def buffers(self, n: int, nb: int):
        """Zeroed per-call arrays (reused between calls): counts [n, blocks], lane-ops, exits, maxlast; and no
        corrections yet."""
        if self._bufs is None or self._bufs[0].shape[0] < n or self._bufs[0].shape[1] != nb:
            self._bufs = (np.zeros((n, nb), np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64),
                          np.zeros(n, np.int64), np.zeros(n, np.int64))  # (the last: the round's waves)
            self._buf_ptrs = tuple(a.ctypes.data for a in self._bufs)
        counts, laneops, exits, maxlast = (a[:n] for a in self._bufs[:4])
        counts[:] = 0
        laneops[:] = 0
        exits[:] = -1
        maxlast[:] = -1
        self.native.corrections = []
        return counts, laneops, exits, maxlast

    def save(self, cr: CompiledRegion, ix, pc: int):
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

    def restore(self, cr: CompiledRegion, saved, ix, rows: np.ndarray, w: np.ndarray) -> None:
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

    def run_native(self, cr, w, rows, counts, laneops, exits, maxlast, bound, allowance) -> None:
        """Run the waves w[rows] natively, at most `allowance` wave-instructions (the watchdog's); their
        counts, lane-ops, exits and highest PCs land in those rows."""
        native, ctx = self.native, self.native.ctx
        whole = len(rows) == len(w)
        waves = self._bufs[4]  # (its pointer, and the round buffers', were taken when buffers made them)
        if whole:
            waves[:len(w)] = w
            sub = (counts, laneops, exits, maxlast)
            ctx[lo.C_COUNTS], ctx[lo.C_LANEOPS], ctx[lo.C_EXITS], ctx[lo.C_MAXLAST] = self._buf_ptrs[:4]
        else:
            waves[:len(rows)] = w[rows]
            sub = (counts[rows], laneops[rows], exits[rows], maxlast[rows])
            ctx[lo.C_COUNTS], ctx[lo.C_LANEOPS], ctx[lo.C_EXITS], ctx[lo.C_MAXLAST] = (a.ctypes.data for a in sub)
        native.point_at(self.ex.st, bound)
        ctx[lo.C_FUSED], ctx[lo.C_KEEP] = 0, 1
        native.allow(allowance)
        ctx[lo.C_WAVES] = self._buf_ptrs[4]
        ctx[lo.C_COUNT] = len(rows)
        ctx[lo.C_HINTS] = native.hints(cr)
        native.call(cr.round)
        if not whole:
            counts[rows], laneops[rows], exits[rows], maxlast[rows] = sub

    def commit(self, cr: CompiledRegion, counts: np.ndarray, laneops: np.ndarray, w: np.ndarray) -> bool:
        """Add what the waves `w` ran to the counters, the clock and the watchdog's budget (ticking the engine
        when a slice of it is spent: deadline, progress hooks); whether anything ran."""
        per_opcode = self.ex.engine.counters.per_opcode
        total = cr.count(per_opcode, counts.sum(axis=0))
        lanes = int(laneops.sum())
        for _wave, mnemonic, lane_count in self.native.corrections:  # callbacks that did not run after all
            total -= 1
            lanes -= lane_count
            per_opcode[mnemonic] -= 1
            if per_opcode[mnemonic] == 0:
                del per_opcode[mnemonic]
        self.stats.native_instructions += total
        self.ex.charge(total, lanes, w)  # (a slice it ends ticks: it cannot pass the watchdog's limit)
        return total > 0
