"""initcheck: reads of bytes nobody wrote, in global memory and LDS.

Global memory: each allocation has a shadow bit per byte (Allocation.written). Bytes count as written
when the GPU stores them (shader stores and atomics, the command processor's and SDMA's writes, e.g. a
copy-in) or the host may have: an allocation mapped into the CPU is written as a whole (plain CPU stores
cannot be observed, so a mapping counts as initialising it). LDS: a shadow per workgroup of the batch,
empty when the workgroup starts. Atomics read too: an atomic on never-written bytes is reported.
Scratch is not tracked (compilers spill and reload partially written stack slots legally).
"""

from __future__ import annotations

import numpy as np

from simgpu.sanitize.context import Where, first_lane
from simgpu.sanitize.footprint import GLOBAL, LDS, READ, WRITE, Access
from simgpu.sanitize.report import WARNING

U64 = np.uint64
CHECK = "initcheck"


class Initcheck:
    """The shadow updates and checks above, for one dispatch."""

    def __init__(self, obs):
        self.obs = obs
        self.lds: np.ndarray | None = None  # [groups of the batch, LDS bytes] bool

    def batch(self) -> None:
        """A new batch of workgroups: their LDS starts unwritten."""
        self.lds = np.zeros(self.obs.ex.st.lds.shape, bool)

    def access(self, where: Where, acc: Access) -> None:
        """Check reads (and atomics) of unwritten bytes; mark writes (and atomics) as written."""
        if acc.space == GLOBAL:
            self._global(where, acc)
        elif acc.space == LDS:
            self._lds(where, acc)

    def _global(self, where: Where, acc: Access) -> None:
        live = self.obs.sanitizer.allocations.live(self.obs.ex.vmid)
        if not live or not acc.mask.any():
            return
        starts, _ = self.obs.allocation_arrays()
        addr = acc.addr.astype(U64)
        which = np.searchsorted(starts, addr, "right").astype(np.int64) - 1
        for i in np.unique(which[acc.mask]).tolist():
            if i < 0:
                continue
            a = live[i]
            lanes = acc.mask & (which == i)
            off = (addr[lanes] - U64(a.va)).astype(np.int64)[:, None] + np.arange(acc.size)
            ok = off < a.size  # memcheck has vetted the rest; bytes past the mapping are not shadowed
            shadow = a.written()
            if acc.kind != WRITE:
                unwritten = ~np.where(ok, shadow[np.minimum(off, a.size - 1)], True).all(axis=1)
                if unwritten.any():
                    bad = np.zeros(lanes.shape, bool)
                    bad[lanes] = unwritten
                    row, lane = first_lane(bad)
                    va = int(addr[row, lane])
                    self.obs.report(where.finding(
                        CHECK, "uninitialized global " + ("read" if acc.kind == READ else "atomic"),
                        f"{acc.size}-byte {acc.kind} at {va:#x}, {va - a.va} bytes into {a.describe()}, of bytes "
                        "neither the host nor the GPU wrote",
                        row, None if acc.scalar else lane, va, WARNING, int(bad.sum())))
            if acc.kind != READ:
                shadow[off[ok]] = True

    def _lds(self, where: Where, acc: Access) -> None:
        lds = self.lds
        if lds is None or not acc.mask.any() or lds.shape[1] == 0:
            return
        rows = np.broadcast_to(self.obs.ex.st.group[where.w][:, None], acc.mask.shape)[acc.mask]
        off = acc.addr.astype(np.int64)[acc.mask][:, None] + np.arange(acc.size)
        ok = (off >= 0) & (off < lds.shape[1])
        r2 = np.broadcast_to(rows[:, None], off.shape)
        if acc.kind != WRITE:
            unwritten = ~np.where(ok, lds[r2, np.clip(off, 0, lds.shape[1] - 1)], True).all(axis=1)
            if unwritten.any():
                bad = np.zeros(acc.mask.shape, bool)
                bad[acc.mask] = unwritten
                row, lane = first_lane(bad)
                at = int(acc.addr[row, lane])
                self.obs.report(where.finding(
                    CHECK, "uninitialized LDS " + ("read" if acc.kind == READ else "atomic"),
                    f"{acc.size}-byte {acc.kind} at LDS offset {at:#x} of bytes no wave of the workgroup wrote",
                    row, lane, at, WARNING, int(bad.sum())))
        if acc.kind != READ:
            lds[r2[ok], off[ok]] = True
