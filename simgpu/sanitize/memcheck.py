"""memcheck: every global, flat, buffer, image, scalar and scratch access against what may be touched.

- global bytes must lie inside one live allocation of the dispatch's VMID, up to the size its owner asked
  for (AllocationTable): anything else is an out-of-bounds access, or a use after free when a freed
  allocation held the address; reported with the nearest live allocation and the distance to it.
- atomics must be naturally aligned (the hardware faults otherwise; memcheck names the lane first).
- LDS bytes must lie inside the workgroup's LDS allocation, scratch bytes inside the lane's private
  segment (the hardware drops or zeroes such accesses: a bug all the same).
- buffer lanes that the V#'s range check drops are warnings (hardware discards them silently; code that
  relies on it, as bounds-checked buffer loads do, is legal).
"""

from __future__ import annotations

import numpy as np

from simgpu.sanitize.context import Where, first_lane
from simgpu.sanitize.footprint import ATOMIC, GLOBAL, LDS, Access
from simgpu.sanitize.report import WARNING

U64 = np.uint64
CHECK = "memcheck"


class Memcheck:
    """The checks above, for one dispatch."""

    def __init__(self, obs):
        self.obs = obs

    def access(self, where: Where, acc: Access) -> None:
        """Check one access of the lanes in its mask; raise SanitizerFault on the first bad lane."""
        if not acc.mask.any():
            return
        if acc.kind == ATOMIC:
            self._alignment(where, acc)
        if acc.space == GLOBAL:
            self._global(where, acc)
        else:
            self._segment(where, acc)

    def dropped(self, where: Where, lanes: np.ndarray) -> None:
        """Buffer lanes the range check discards: a warning."""
        row, lane = first_lane(lanes)
        self.obs.report(where.finding(CHECK, "buffer access outside num_records",
                                      "the V#'s range check drops it (hardware ignores the access silently)",
                                      row, lane, severity=WARNING, lanes=int(lanes.sum())))

    def _alignment(self, where: Where, acc: Access) -> None:
        bad = acc.mask & ((acc.addr.astype(U64) & U64(acc.size - 1)) != 0)
        if bad.any():
            row, lane = first_lane(bad)
            addr = int(acc.addr[row, lane])
            self.obs.fail(where.finding(CHECK, "misaligned atomic",
                                        f"{acc.size}-byte atomic at {addr:#x} ({addr % acc.size} bytes off)",
                                        row, None if acc.scalar else lane, addr, lanes=int(bad.sum())))

    def _global(self, where: Where, acc: Access) -> None:
        starts, ends = self.obs.allocation_arrays()
        addr = acc.addr.astype(U64)
        i = np.searchsorted(starts, addr, "right").astype(np.int64) - 1
        inside = (i >= 0) & (addr + U64(acc.size) <= ends[np.maximum(i, 0)]) if len(starts) else \
            np.zeros(addr.shape, bool)
        bad = acc.mask & ~inside
        if not bad.any():
            return
        row, lane = first_lane(bad)
        va = int(addr[row, lane])
        table, vmid = self.obs.sanitizer.allocations, self.obs.ex.vmid
        freed = table.freed_at(vmid, va)
        verb = {"read": "read", "write": "write", "atomic": "atomic"}[acc.kind]
        if freed is not None and table.find(vmid, va) is None:
            what = "use after free"
            message = f"{acc.size}-byte {verb} at {va:#x} in {freed.describe()}, freed or unmapped"
        else:
            _, near = table.nearest(vmid, va, acc.size)
            what, message = f"out-of-bounds {verb}", f"{acc.size}-byte {verb} at {va:#x}: {near}"
        self.obs.fail(where.finding(CHECK, what, message, row, None if acc.scalar else lane, va,
                                    lanes=int(bad.sum())))

    def _segment(self, where: Where, acc: Access) -> None:
        ex = self.obs.ex
        limit = ex.st.lds.shape[1] if acc.space == LDS else (0 if ex.scratch is None else ex.scratch.shape[2])
        addr = acc.addr.astype(np.int64)
        bad = acc.mask & ((addr < 0) | (addr + acc.size > limit))
        if not bad.any():
            return
        row, lane = first_lane(bad)
        off = int(addr[row, lane])
        seg = ("the workgroup's LDS allocation" if acc.space == LDS else "the lane's private (scratch) segment")
        self.obs.fail(where.finding(CHECK, f"out-of-bounds {acc.space} {acc.kind}",
                                    f"{acc.size}-byte {acc.kind} at offset {off:#x} outside {seg} of {limit} bytes",
                                    row, lane, off, lanes=int(bad.sum())))
