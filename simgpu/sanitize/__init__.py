"""simgpu.sanitize: memcheck, initcheck, racecheck and a gfx11 hazard checker for the shader engine.

A `Sanitizer` belongs to one GPU (or testbed) and is off unless created: `ShaderEngine.sanitizer` is None
by default and the interpreter then runs unobserved. Its owner tells it what memory is allocated
(`Sanitizer.allocations`, an AllocationTable: the driver knows every buffer), which kernel lives where
(`name_kernel`), and what the host wrote (`host_wrote`). Each dispatch gets a DispatchObserver; findings
end up in `Sanitizer.findings` and go to every callback in `listeners`; fatal ones (memcheck errors)
stop the dispatch with a SanitizerFault. docs/shader.md ("Sanitizers") describes the checks.

May import: simgpu.shader, simgpu.fault, simgpu.isa (it observes the shader engine).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from simgpu import settings
from simgpu.sanitize.allocations import Allocation, AllocationTable
from simgpu.sanitize.observer import DispatchObserver
from simgpu.sanitize.report import ERROR, WARNING, Finding, SanitizerFault

CHECKS = ("memcheck", "initcheck", "racecheck", "hazards")
FINDINGS_KEPT = 4096  # findings a Sanitizer keeps (oldest dropped; listeners see every one)
ENV = "SIMGPU_SANITIZE"  # the checks a process asks for: "memcheck,initcheck,racecheck,hazards" or "all"
# Tools watching a whole process (the pytest plugin's --sanitize, `simgpu run --sanitize`) hear every finding
# of every Sanitizer here, besides each Sanitizer's own listeners.
reporters: list[Callable[[Finding], None]] = []


def printer(stream) -> Callable[[Finding], None]:
    """A listener that writes each finding's text to `stream` (what a process serving another program's
    GPU, `simgpu run --sanitize`, adds to `reporters`: that program cannot take Python warnings)."""
    def emit(f: Finding) -> None:
        stream.write(f"simgpu sanitizer: {f.text()}\n")
        stream.flush()
    return emit


def requested(environ=None) -> frozenset[str]:
    """The checks SIMGPU_SANITIZE asks for (none when unset): what MockOS and Testbed use by default."""
    return parse_checks(settings.get(ENV, environ))


def parse_checks(spec: str | list | tuple | set | None) -> frozenset[str]:
    """The checks a selection names: "memcheck,initcheck", "all", "" / None / "0" / "none" (no check), or a
    collection of names; ValueError naming the unknown ones."""
    if spec is None:
        return frozenset()
    names = [s.strip().lower() for s in (spec.split(",") if isinstance(spec, str) else spec)]
    names = [n for n in names if n and n not in ("0", "none", "off")]
    if "all" in names or "1" in names:
        return frozenset(CHECKS)
    unknown = sorted(set(names) - set(CHECKS))
    if unknown:
        raise ValueError(f"unknown sanitizer check(s) {', '.join(unknown)}; choose from {', '.join(CHECKS)} or all")
    return frozenset(names)


class Sanitizer:
    """The checks of one GPU: which are on, the allocations they check against, what they found."""

    def __init__(self, checks="all"):
        self.checks = parse_checks(checks)
        self.allocations = AllocationTable()
        self.findings: deque[Finding] = deque(maxlen=FINDINGS_KEPT)
        self.listeners: list[Callable[[Finding], None]] = []
        self._kernels: dict[int, str] = {}
        self.count = 0  # findings collected so far
        self.taken = 0  # ... of which take() handed out

    def observe(self, ex):
        """The observer of a dispatch starting on the engine (simgpu.shader.engine.Exec)."""
        return DispatchObserver(self, ex)

    def name_kernel(self, code_address: int, name: str) -> None:
        """Name the kernel whose code starts at `code_address` (reports say which kernel)."""
        self._kernels[code_address] = name

    def kernel_name(self, code_address: int, engine=None, vmid: int = 0) -> str:
        """The name given (name_kernel), else what `engine` finds (the driver's note, the code object's symbol)."""
        name = self._kernels.get(code_address)
        if name is None:
            name = engine.kernel_name(vmid, code_address) if engine is not None else f"at {code_address:#x}"
        return name

    def host_wrote(self, vmid: int, va: int, nbytes: int) -> None:
        """The host (or a copy engine) wrote [va, va + nbytes): initcheck counts those bytes as written."""
        if "initcheck" not in self.checks or nbytes <= 0:
            return
        end = va + nbytes
        a = self.allocations.find(vmid, va)
        if a is not None and end <= a.va + a.size:  # the usual case: inside one allocation
            a.written()[va - a.va:end - a.va] = True
            return
        for a in self.allocations.live(vmid):
            if a.va < end and va < a.va + a.size:
                lo, hi = max(va, a.va) - a.va, min(end, a.va + a.size) - a.va
                a.written()[lo:hi] = True

    def host_mapped(self, alloc: Allocation) -> None:
        """The CPU mapped `alloc`: its plain stores cannot be seen, so initcheck counts it as written."""
        alloc.host_visible = True
        if alloc.shadow is not None:
            alloc.shadow[:] = True

    def collect(self, found: list[Finding]) -> None:
        """Findings of a finished dispatch: kept and told to every listener."""
        for f in found:
            self.findings.append(f)
            self.count += 1
            for listener in (*self.listeners, *reporters):
                listener(f)

    def take(self) -> list[Finding]:
        """The findings not taken before (for a driver that forwards them to its user once each)."""
        fresh = min(self.count - self.taken, len(self.findings))
        self.taken = self.count
        return list(self.findings)[len(self.findings) - fresh:] if fresh else []


__all__ = ["CHECKS", "ERROR", "WARNING", "Allocation", "AllocationTable", "Finding", "Sanitizer", "SanitizerFault",
           "parse_checks", "printer", "reporters", "requested"]
