"""The sanitizers' hook into one dispatch: checked semantic functions, swapped in only when they are on.

`Exec` (the dispatch in flight) asks the engine's Sanitizer for an observer; the observer wraps each
instruction's semantic function once, when the instruction is fetched (`wrap`): memory instructions get
their footprint checked (memcheck, initcheck, racecheck) before they run, every instruction feeds the
hazard history when hazards are on, s_barrier (gfx12: s_barrier_wait) advances the LDS race phase. The hazard
rules are gfx1100's: a gfx12 dispatch is not checked for hazards. Without a sanitizer nothing is
wrapped and the interpreter runs exactly as before: the checks cost nothing when off.

Sanitizers run on the interpreter tier: a JIT tier must hand waves to the interpreter while one is attached
(`Exec.sanitizer` is not None). They compose with the profiler's observer (`ShaderEngine.observer`, which
runs instructions one at a time through `Exec.run_observed`): that path fetches the same wrapped entries.
"""

from __future__ import annotations

import numpy as np

from simgpu.fault import HardwareFault
from simgpu.sanitize import footprint
from simgpu.sanitize.context import Where
from simgpu.sanitize.hazards import Hazards
from simgpu.sanitize.initcheck import Initcheck
from simgpu.sanitize.memcheck import Memcheck
from simgpu.sanitize.racecheck import Racecheck
from simgpu.sanitize.report import Finding, SanitizerFault
from simgpu.shader.semantics import base_name


class DispatchObserver:
    """The checks of one dispatch (`ex`, an Exec) for the engine's Sanitizer."""

    def __init__(self, sanitizer, ex):
        self.sanitizer, self.ex = sanitizer, ex
        checks = sanitizer.checks
        self.dispatch_no = ex.engine.counters.dispatches
        self.kernel = sanitizer.kernel_name(ex.d.code_address, ex.engine, ex.vmid)
        self.memcheck = Memcheck(self) if "memcheck" in checks else None
        self.initcheck = Initcheck(self) if "initcheck" in checks else None
        self.racecheck = Racecheck(self) if "racecheck" in checks else None
        # (gfx1100's hazard rules: another ISA family's dispatch is not checked for hazards)
        self.hazards = Hazards(self) if "hazards" in checks and getattr(ex, "family", "gfx11") == "gfx11" else None
        self.memory = self.memcheck or self.initcheck or self.racecheck
        self.groups: list = []
        self._arrays: tuple | None = None
        self._texts: dict[int, str] = {}
        self.seen: dict[tuple, Finding] = {}  # de-duplication of this dispatch's findings

    # ---- what the engine calls ----------------------------------------------------------------------
    def wrap(self, entry: tuple) -> tuple:
        """The decode-cache entry (inst, fn, is_valu) with its semantic function checked, if any check cares."""
        inst, fn, is_valu = entry
        # a gfx9 memory instruction runs as the gfx11 one it means (shader.renamed): its footprint is that one's
        view = getattr(fn, "gfx11_view", None)
        rule = footprint.rule(inst.mnemonic if view is None else fn.gfx11_name) if self.memory else None
        barrier = self.racecheck is not None and base_name(inst.mnemonic) in ("s_barrier", "s_barrier_wait")
        hazards = self.hazards
        if rule is None and not barrier and hazards is None:
            return entry

        def checked(ex, w, inst):
            where = Where(self, w, int(ex.st.pc[w[0]]), inst)
            try:
                if hazards is not None:
                    hazards.step(where, inst)
                if rule is not None:
                    self.accesses(where, rule(ex, w, inst if view is None else view(ex, inst)))
                if barrier:
                    self.racecheck.barrier(w)
            except HardwareFault:
                raise
            except Exception as e:  # noqa: BLE001 - a checker's bug is not the program's fault: say whose it is
                raise HardwareFault("internal_error", f"sanitizer internal error: {type(e).__name__}: {e}") from e
            return fn(ex, w, inst)

        return inst, checked, is_valu

    def batch(self, groups) -> None:
        """A new batch of workgroups starts (fresh LDS, wave state)."""
        self.groups = list(groups)
        for check in (self.initcheck, self.hazards):
            if check is not None:
                check.batch()
        if self.racecheck is not None:
            self.racecheck.batch(groups)

    def end(self) -> None:
        """The dispatch ended (or faulted): hand its findings to the sanitizer."""
        self.sanitizer.collect(list(self.seen.values()))

    # ---- checks -------------------------------------------------------------------------------------
    def accesses(self, where: Where, fp) -> None:
        if self.memcheck is not None:
            for acc in fp.accesses:
                self.memcheck.access(where, acc)
            if fp.dropped is not None:
                self.memcheck.dropped(where, fp.dropped)
        for check in (self.initcheck, self.racecheck):
            if check is not None:
                for acc in fp.accesses:
                    check.access(where, acc)

    def report(self, f: Finding) -> None:
        """A non-fatal finding: kept once per (check, what, pc) in this dispatch, counted."""
        key = (f.check, f.what, f.pc, f.other.get("pc"))
        old = self.seen.get(key)
        if old is None:
            self.seen[key] = f
        else:
            old.count += 1
            old.lanes = max(old.lanes, f.lanes)

    def fail(self, f: Finding) -> None:
        """A fatal finding: recorded, then the dispatch stops before the access."""
        self.seen[(f.check, f.what, f.pc, None)] = f
        raise SanitizerFault(f, self.ex.vmid)

    # ---- naming -------------------------------------------------------------------------------------
    def workgroup_of(self, wave: int) -> tuple[int, int, int]:
        """The workgroup id (x, y, z) of a wave of the batch."""
        return tuple(self.groups[int(self.ex.st.group[wave])])

    def group_ids(self, waves: np.ndarray) -> np.ndarray:
        """Dispatch-wide workgroup numbers of waves of the batch (workgroups differ across batches)."""
        return self.ex.groups_before + self.ex.st.group[waves]

    def text(self, inst) -> str:
        t = self._texts.get(id(inst))
        if t is None:
            try:
                t = inst.text()
            except Exception:  # noqa: BLE001 - a report must not fail on printing
                t = inst.mnemonic
            self._texts[id(inst)] = t
        return t

    def allocation_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted starts and accessible ends of the VMID's live allocations (cached until the table changes)."""
        table = self.sanitizer.allocations
        if self._arrays is None or self._arrays[0] != table.version:
            self._arrays = (table.version, *table.arrays(self.ex.vmid))
        return self._arrays[1], self._arrays[2]
