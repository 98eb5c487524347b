"""Where an instruction runs, for reports: the dispatch in flight, its waves and their workgroups."""

from __future__ import annotations

import numpy as np

from simgpu.sanitize.report import Finding


class Where:
    """Turns (waves `w` of the batch, row, lane) into a located Finding; one per instruction checked."""

    def __init__(self, obs, w: np.ndarray, pc: int, inst):
        self.obs, self.w, self.pc, self.inst = obs, w, pc, inst

    def wave(self, row: int) -> int:
        """The batch index of the wave in row `row` of [n, lanes] arrays."""
        return int(self.w[row])

    def finding(self, check: str, what: str, message: str, row: int, lane: int | None, address: int | None = None,
                severity: str = "error", lanes: int = 1, other: dict | None = None) -> Finding:
        """A Finding for the wave in `row` (lane None for scalar instructions)."""
        ex, wave = self.obs.ex, self.wave(row)
        return Finding(check, what, message, severity, self.obs.kernel, self.obs.dispatch_no,
                       self.obs.workgroup_of(wave), int(ex.st.wave_in_group[wave]), lane, self.pc,
                       self.obs.text(self.inst), address, lanes, 1, other or {})

    def describe(self, row: int, lane: int | None) -> dict:
        """The access as the other half of a race names it."""
        wave = self.wave(row)
        return {"workgroup": list(self.obs.workgroup_of(wave)), "wave": int(self.obs.ex.st.wave_in_group[wave]),
                "lane": lane, "pc": self.pc, "instruction": self.obs.text(self.inst)}


def first_lane(bad: np.ndarray) -> tuple[int, int]:
    """(row, lane) of the first True of an [n, lanes] mask, in wave then lane order."""
    flat = int(np.argmax(bad.reshape(-1)))
    return divmod(flat, bad.shape[1])
