"""racecheck: accesses to the same bytes, within one dispatch, that nothing orders.

- LDS: two different waves of a workgroup touch a byte between the same two barriers (a wave's phase is
  the number of s_barrier it has executed: waves of a workgroup pass a barrier together, so accesses in
  different phases are ordered), at least one of them writes, and they are not both atomic.
- Global memory: two different workgroups touch a byte during the dispatch (nothing orders workgroups),
  at least one writes, and they are not both atomic. Ordering built from atomics and fences (a "last
  workgroup" reduction) is not modelled: such code is reported.
- In both, a plain read racing only with atomics is not reported: compilers expand an atomic they have
  no instruction for (umax on some types, float atomics on LDS) into a compare-and-swap loop seeded by a
  plain load, which is correct whatever value that load sees. A plain write racing with an atomic is.

Each byte's shadow keeps the last writer and the readers since then (one reader, or "several"), with a
tag naming the access (record of the instruction, wave, lane), so a report names both accesses. Lanes of
one wave never race with each other (they execute together). Global shadows exist only for allocations
the dispatch touches, and only while it runs.
"""

from __future__ import annotations

import numpy as np

from simgpu.sanitize.context import Where
from simgpu.sanitize.footprint import ATOMIC, GLOBAL, LDS, READ, WRITE, Access
from simgpu.sanitize.report import WARNING

U64 = np.uint64
CHECK = "racecheck"
NONE, MANY = -1, -2
_KIND = {READ: "read", WRITE: "write", ATOMIC: "atomic"}


class _Shadow:
    """Per byte: last writer (who, phase, atomic, tag) and readers since (who or MANY, phase, tag)."""

    def __init__(self, shape):
        self.w_who = np.full(shape, NONE, np.int32)
        self.w_phase = np.zeros(shape, np.int32)
        self.w_atomic = np.zeros(shape, bool)
        self.w_tag = np.zeros(shape, np.int64)
        self.r_who = np.full(shape, NONE, np.int32)
        self.r_phase = np.zeros(shape, np.int32)
        self.r_tag = np.zeros(shape, np.int64)


class Racecheck:
    """The LDS and global race checks of one dispatch."""

    def __init__(self, obs):
        self.obs = obs
        self.lds: _Shadow | None = None
        self.phase: np.ndarray | None = None  # s_barrier count per wave of the batch
        self.globals: dict[int, _Shadow] = {}  # by allocation serial
        self.records: list[tuple[int, str, int]] = []  # (pc, instruction, batch) per checked instruction
        self.batches: list[tuple] = []  # (groups, st.group, st.wave_in_group) per batch

    def batch(self, groups) -> None:
        """A new batch: fresh LDS shadows and phases; remember how to name its waves."""
        st = self.obs.ex.st
        self.lds = _Shadow(st.lds.shape)
        self.phase = np.zeros(st.n, np.int32)
        self.batches.append((list(groups), st.group.copy(), st.wave_in_group.copy()))

    def barrier(self, w: np.ndarray) -> None:
        """Waves `w` executed s_barrier: their next accesses are in the next phase."""
        self.phase[w] += 1

    def access(self, where: Where, acc: Access) -> None:
        """Check the access against the shadow and against itself (different waves or workgroups in one
        instruction), then record it."""
        if not acc.mask.any() or acc.space not in (GLOBAL, LDS):
            return
        rec = len(self.records)
        self.records.append((where.pc, self.obs.text(where.inst), len(self.batches) - 1))
        rows, lanes = np.nonzero(acc.mask)
        waves = where.w[rows]
        if acc.space == LDS:
            self._lds(where, acc, rows, lanes, waves, rec)
        else:
            self._global(where, acc, rows, lanes, waves, rec)

    # ---- LDS ----------------------------------------------------------------------------------------
    def _lds(self, where, acc, rows, lanes, waves, rec) -> None:
        sh, width = self.lds, self.lds.w_who.shape[1]
        if width == 0:
            return
        off = acc.addr[rows, lanes].astype(np.int64)[:, None] + np.arange(acc.size)
        ok = (off >= 0) & (off < width)
        group = self.obs.ex.st.group[waves]
        keys = (np.broadcast_to(group[:, None], off.shape)[ok], off[ok])
        who = np.broadcast_to(waves[:, None], off.shape)[ok].astype(np.int32)
        phase = self.phase[who]
        tag = np.broadcast_to(((rec << 18) | (waves.astype(np.int64) << 6) | lanes)[:, None], off.shape)[ok]
        lane_of = np.broadcast_to(np.arange(len(rows))[:, None], off.shape)[ok]
        self._check(where, acc, sh, keys, who, phase, tag, lane_of, rows, lanes, "LDS")

    # ---- global -------------------------------------------------------------------------------------
    def _global(self, where, acc, rows, lanes, waves, rec) -> None:
        obs = self.obs
        live = obs.sanitizer.allocations.live(obs.ex.vmid)
        if not live:
            return
        starts, _ = obs.allocation_arrays()
        addr = acc.addr[rows, lanes].astype(U64)
        which = np.searchsorted(starts, addr, "right").astype(np.int64) - 1
        group_id = obs.group_ids(waves)
        for i in np.unique(which).tolist():
            if i < 0:
                continue
            a = live[i]
            sel = which == i
            off = (addr[sel] - U64(a.va)).astype(np.int64)[:, None] + np.arange(acc.size)
            ok = off < a.size
            sh = self.globals.get(a.serial)
            if sh is None:
                sh = self.globals[a.serial] = _Shadow(a.size)
            who = np.broadcast_to(group_id[sel][:, None], off.shape)[ok].astype(np.int32)
            tag = np.broadcast_to(((rec << 18) | (waves[sel].astype(np.int64) << 6) | lanes[sel])[:, None],
                                  off.shape)[ok]
            lane_of = np.broadcast_to(np.flatnonzero(sel)[:, None], off.shape)[ok]
            self._check(where, acc, sh, (off[ok],), who, np.zeros_like(who), tag, lane_of, rows, lanes,
                        "global", a)

    # ---- shared -------------------------------------------------------------------------------------
    def _check(self, where, acc, sh, keys, who, phase, tag, lane_of, rows, lanes, space, alloc=None) -> None:
        """Conflicts of bytes `keys` accessed by `who` (waves or workgroups) in `phase`, then the update."""
        atomic, kind = acc.kind == ATOMIC, acc.kind
        w_who, w_phase, w_atomic = sh.w_who[keys], sh.w_phase[keys], sh.w_atomic[keys]
        other_writer = (w_who != NONE) & (w_who != who) & (w_phase == phase)
        if kind != WRITE:  # a read or an atomic races only with a plain write
            other_writer &= ~w_atomic
        conflict = other_writer
        earlier = np.where(other_writer, sh.w_tag[keys], 0)
        earlier_kind = np.where(other_writer, np.where(w_atomic, 2, 1), 0)
        if kind == WRITE:  # a plain write also races with the other waves' reads since the last write
            r_who = sh.r_who[keys]
            other_reader = (r_who != NONE) & (r_who != who) & (sh.r_phase[keys] == phase) & ~conflict
            conflict = conflict | other_reader
            earlier = np.where(other_reader, sh.r_tag[keys], earlier)
            earlier_kind = np.where(other_reader, 0, earlier_kind)
        if conflict.any():
            j = int(np.argmax(conflict))
            self._report(where, acc, space, alloc, rows[lane_of[j]], lanes[lane_of[j]], keys, j,
                         int(earlier[j]), ("read", "write", "atomic")[int(earlier_kind[j])], conflict, lane_of)
        elif kind != READ:
            self._within(where, acc, space, alloc, keys, who, tag, lane_of, rows, lanes, atomic)
        self._update(sh, keys, who, phase, tag, kind)

    def _within(self, where, acc, space, alloc, keys, who, tag, lane_of, rows, lanes, atomic) -> None:
        """Different waves (workgroups) writing one byte in the same instruction (atomics excepted)."""
        if atomic or len(who) < 2:
            return
        flat = keys[-1] if len(keys) == 1 else keys[0].astype(np.int64) * (1 << 20) + keys[1]
        order = np.lexsort((who, flat))
        fs, ws = flat[order], who[order]
        clash = (fs[1:] == fs[:-1]) & (ws[1:] != ws[:-1])
        if clash.any():
            k = int(np.argmax(clash))
            j, first = int(order[k + 1]), int(order[k])
            bad = np.zeros(len(who), bool)
            bad[order[1:][clash]] = True
            self._report(where, acc, space, alloc, rows[lane_of[j]], lanes[lane_of[j]], keys, j, int(tag[first]),
                         _KIND[acc.kind], bad, lane_of)

    def _update(self, sh, keys, who, phase, tag, kind) -> None:
        if kind != READ:
            sh.w_who[keys], sh.w_phase[keys], sh.w_tag[keys] = who, phase, tag
            sh.w_atomic[keys] = kind == ATOMIC
            sh.r_who[keys] = NONE
            return
        prev, same = sh.r_who[keys], sh.r_phase[keys] == phase
        new = np.where(same & (prev != NONE) & (prev != who), MANY, who)
        sh.r_who[keys], sh.r_phase[keys], sh.r_tag[keys] = new, phase, tag
        # several waves reading one byte in this instruction: readers are "many"
        flat = keys[-1] if len(keys) == 1 else keys[0].astype(np.int64) * (1 << 20) + keys[1]
        if len(flat) > 1:
            order = np.lexsort((who, flat))
            fs, ws = flat[order], who[order]
            multi = (fs[1:] == fs[:-1]) & (ws[1:] != ws[:-1])
            if multi.any():
                idx = order[1:][multi]
                sel = tuple(k[idx] for k in keys)
                sh.r_who[sel] = MANY

    def _report(self, where, acc, space, alloc, row, lane, keys, j, earlier_tag, earlier_kind, bad,
                lane_of) -> None:
        rec, wave, other_lane = earlier_tag >> 18, (earlier_tag >> 6) & 0xFFF, earlier_tag & 63
        pc, text, batch = self.records[rec]
        groups, group_of, wave_in_group = self.batches[batch]
        other = {"workgroup": list(groups[int(group_of[wave])]), "wave": int(wave_in_group[wave]),
                 "lane": int(other_lane), "pc": pc, "instruction": text, "access": earlier_kind}
        byte = int(keys[-1][j])
        at = f"LDS offset {byte:#x}" if space == "LDS" else \
            f"{alloc.va + byte:#x}, {byte} bytes into {alloc.describe()}"
        now = _KIND[acc.kind]
        what = f"{space} {earlier_kind}-{now} race" if space == "LDS" else f"global {earlier_kind}-{now} race"
        between = "waves of one workgroup between the same barriers" if space == "LDS" else "two workgroups"
        message = (f"{now} of {at} races with the {earlier_kind} by workgroup {tuple(other['workgroup'])}, wave "
                   f"{other['wave']}, lane {other['lane']}, pc {pc:#x} [{text}] ({between}, not both atomic)")
        lanes_hit = len(np.unique(lane_of[bad]))
        self.obs.report(where.finding(CHECK, what, message, int(row), int(lane),
                                      None if space == "LDS" else alloc.va + byte, WARNING, lanes_hit, other))
