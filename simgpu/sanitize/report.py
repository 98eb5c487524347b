"""What a sanitizer reports: a `Finding` (one bug, located to the lane and instruction), and the fault
that stops a dispatch on a fatal one (`SanitizerFault`, a HardwareFault: it takes the path every shader fault
takes, a queue error and a KFD exception event, so the runtime raises it as its own HardwareFault).

Severity: "error" findings of memcheck (an access outside every live allocation, a use after free, a
misaligned atomic, an LDS or scratch access outside its segment) are fatal: the access is not performed
and the dispatch stops, as compute-sanitizer aborts the kernel. Everything else (initcheck, racecheck,
hazards, buffer accesses that the V# range check drops) is collected and the dispatch goes on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from simgpu.fault import HardwareFault

ERROR, WARNING = "error", "warning"


@dataclass
class Finding:
    """One report: which check, what it found, and where (kernel, workgroup, wave, lane, PC, instruction)."""

    check: str  # "memcheck", "initcheck", "racecheck", "hazards"
    what: str  # "out-of-bounds read", "use after free", "uninitialized LDS read", "LDS write-after-read race", ...
    message: str  # the details: address, allocation and distance; the other access of a race
    severity: str = ERROR
    kernel: str = ""
    dispatch: int = 0  # the engine's dispatch counter (1 = first)
    workgroup: tuple[int, int, int] = (0, 0, 0)
    wave: int = 0  # wave within its workgroup
    lane: int | None = None  # None for scalar (SMEM, SALU) instructions
    pc: int = 0
    instruction: str = ""
    address: int | None = None
    lanes: int = 1  # how many lanes (of this instruction, this time) did the same
    count: int = 1  # how many times this report repeated in the dispatch (reports are de-duplicated)
    other: dict = field(default_factory=dict)  # racecheck: the earlier access (wave, lane, pc, instruction)

    def where(self) -> str:
        """'kernel saxpy, workgroup (3, 0, 0), wave 1, lane 7, pc 0x... [global_load_b32 ...]'."""
        lane = "" if self.lane is None else f", lane {self.lane}"
        return (f"kernel {self.kernel or '?'}, workgroup {tuple(self.workgroup)}, wave {self.wave}{lane}, "
                f"pc {self.pc:#x} [{self.instruction}]")

    def text(self) -> str:
        """The report as a few lines of text."""
        head = f"{self.check} {self.severity}: {self.what}"
        extra = []
        if self.lanes > 1:
            extra.append(f"{self.lanes} lanes")
        if self.count > 1:
            extra.append(f"{self.count} times in this dispatch")
        if extra:
            head += f" ({', '.join(extra)})"
        return f"{head}\n  at {self.where()}\n  {self.message}"

    def as_dict(self) -> dict:
        """Plain data (for traces and the driver seam)."""
        d = asdict(self)
        d["workgroup"] = list(self.workgroup)
        d["text"] = self.text()
        return d


class SanitizerFault(HardwareFault):
    """A fatal sanitizer finding: the dispatch stopped before the access. `kind` is the check's name."""

    def __init__(self, finding: Finding, vmid: int | None = None):
        self.finding = finding
        super().__init__(finding.check, f"{finding.what}: {finding.message} ({finding.where()})",
                         address=finding.address, vmid=vmid, wave=None, pc=finding.pc,
                         instruction=finding.instruction)
