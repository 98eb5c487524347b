"""HardwareFault: what the simulated GPU raises when a wave, a queue or a memory access goes wrong.

A fault carries enough to debug without a GPU: the kind, the virtual address and access for memory
faults, the VMID, queue, wave and PC, the disassembled instruction and a register snapshot. It never leaves the
simulated device: it stops a queue and rides on the queue's `queue_error` interrupt to the driver, which reports it
the way amdkfd does (exception events; mockgpu's device report). What a runtime user catches is runtime.GPUFault.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class HardwareFault(Exception):
    """A fault of the simulated GPU (page fault, illegal instruction, s_trap, watchdog, queue error)."""

    kind: str  # "page_fault", "illegal_instruction", "trap", "watchdog", "queue_error", ...
    message: str = ""
    address: int | None = None  # faulting virtual address (memory faults)
    access: str | None = None  # "read", "write", "execute", "atomic"
    vmid: int | None = None
    queue: str | None = None
    kernel: str | None = None  # the dispatch's kernel: its symbol name, or "at 0x..." when nobody named it
    wave: int | None = None
    pc: int | None = None
    instruction: str | None = None
    registers: dict = field(default_factory=dict)
    waves: list[str] = field(default_factory=list)  # hangs: where every unfinished wave is and what it waits for

    def __post_init__(self):
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [f"GPU fault ({self.kind})"]
        if self.message:
            parts.append(self.message)
        if self.address is not None:
            parts.append(f"{self.access or 'access'} at VA {self.address:#x}")
        for name in ("kernel", "vmid", "queue", "wave"):
            v = getattr(self, name)
            if v is not None:
                parts.append(f"{name} {v}")
        if self.pc is not None:
            parts.append(f"pc {self.pc:#x}")
        if self.instruction:
            parts.append(f"[{self.instruction}]")
        return ": ".join(parts[:2]) + (", " + ", ".join(parts[2:]) if len(parts) > 2 else "")

    def report_lines(self) -> list[str]:
        """The register snapshot, then (for a hang) every unfinished wave's PC, instruction and EXEC."""
        return self.register_lines() + (["waves:"] + ["  " + line for line in self.waves] if self.waves else [])

    def register_lines(self, sgprs: int = 16, vgprs: int = 8) -> list[str]:
        """The faulting wave's register snapshot as text: EXEC and SCC, the first SGPRs, the first VGPRs of
        lane 0 (no lines when there is no snapshot)."""
        r = self.registers
        if not r:
            return []
        lines = [f"exec {r.get('exec', 0):#018x} scc {r.get('scc', 0)}"]
        if r.get("sgpr") is not None:
            s = [int(v) & 0xFFFFFFFF for v in r["sgpr"][:sgprs]]
            lines.append(f"s[0:{len(s) - 1}] " + " ".join(f"{v:08x}" for v in s))
        if r.get("vgpr") is not None and len(r["vgpr"]):
            v = [int(x[0]) & 0xFFFFFFFF for x in r["vgpr"][:vgprs]]
            lines.append(f"v[0:{len(v) - 1}] lane 0 " + " ".join(f"{x:08x}" for x in v))
        return lines
