"""What the runtime does with the simulator's sanitizer findings (docs/shader.md "Sanitizers").

`Device(sanitize="memcheck,initcheck,racecheck,hazards" | "all")` turns them on through the seam
(OS.sanitize; on a real GPU that is an error); SIMGPU_SANITIZE turns them on for a whole process. Fatal
findings (memcheck errors) stop the dispatch and arrive like any GPU fault, as a `SanitizerError` (runtime.fault:
a GPUFault whose `kind` is the check). Every other finding arrives after the wait that saw its dispatch end: it
is appended to `Device.findings` (dicts: check, severity, what, message, kernel, workgroup, wave, lane,
pc, instruction, address, ..., and `text`) and issued as a `SanitizerWarning`.
"""

from __future__ import annotations

import warnings

from runtime.fault import SANITIZER_KINDS

CHECK_KINDS = SANITIZER_KINDS  # GPUFault.kind of a sanitizer stop


class SanitizerWarning(UserWarning):
    """A non-fatal sanitizer finding (initcheck, racecheck, hazards, dropped buffer accesses)."""


def deliver(findings: list[dict], into: list, stacklevel: int = 3) -> None:
    """Keep `findings` in `into` and warn about each non-fatal one (SanitizerWarning, with its text; a fatal
    one is raised as the SanitizerError of its dispatch instead)."""
    for f in findings:
        into.append(f)
        if f.get("severity") == "error":
            continue
        warnings.warn(SanitizerWarning(f.get("text") or f.get("what", "sanitizer finding")), stacklevel=stacklevel)
