"""DeviceFault, the base of every device's fault the runtime raises, and GPUFault: a GPU fault, built from what the
driver delivers (the CPU device's is runtime.cpu.CPUFault).

The kernel reports a fault with a KFD exception event: a memory exception (the faulting VA and why) or a
hardware exception (a hang and the reset it caused). The driver may add its own account through the seam
(OS.device_report): on the simulator, every queue's state and, for the queue that stopped, the packet or
the wave, PC, instruction and registers, and the fault's kind. simgpu.fault.HardwareFault is something else:
the simulated device's internal fault, which the runtime never sees (it imports no engine).
"""

from __future__ import annotations

from runtime.os import DeviceReport
from runtime.uapi import kfd

MEMORY, HW = "memory", "hw"  # the two exception events the runtime waits on
SANITIZER_KINDS = frozenset({"memcheck", "initcheck", "racecheck", "hazards"})  # report.fault of a sanitizer stop

_RESET_CAUSE = {kfd.KFD_HW_EXCEPTION_GPU_HANG: "GPU hang", kfd.KFD_HW_EXCEPTION_ECC: "ECC error"}
_RESET_TYPE = {kfd.KFD_HW_EXCEPTION_WHOLE_GPU_RESET: "whole-GPU reset",
               kfd.KFD_HW_EXCEPTION_PER_ENGINE_RESET: "per-engine reset"}


class DeviceFault(Exception):
    """A device stopped a kernel: `report` (text), `kind` (what stopped it: "page_fault", "hang", "watchdog", ...),
    the faulting `address` when there is one, and whether the device is still usable. Catch this for any device."""

    def __init__(self, report: str, kind: str = "", address: int | None = None, device_usable: bool = True):
        super().__init__(report)
        self.report, self.kind, self.address, self.device_usable = report, kind, address, device_usable


class GPUFault(DeviceFault):
    """A GPU fault seen by the runtime: `kind` is "page_fault", "hang", or what the driver's report names ("trap",
    "watchdog", "illegal_instruction", ...), `address` is a memory exception's, `gpu_id` the GPU's."""

    def __init__(self, report: str, kind: str = "", address: int | None = None, gpu_id: int = 0,
                 device_usable: bool = True):
        super().__init__(report, kind, address, device_usable)
        self.gpu_id = gpu_id

    @classmethod
    def from_exception(cls, device: str, gpu_id: int, event: str, data, report: DeviceReport,
                       notes: list[str], usable: bool) -> GPUFault:
        """The fault of a KFD exception event (MEMORY: kfd_hsa_memory_exception_data, HW:
        kfd_hsa_hw_exception_data), with the driver's report and the runtime's own notes appended."""
        kind = report.fault or ("page_fault" if event == MEMORY else "hang")
        exception = describe_exception(event, data)
        if kind in SANITIZER_KINDS and report.summary:  # the finding first: the reset is only what it caused
            lines = [f"{device} (gpu_id {gpu_id}): {report.summary}", exception]
        else:  # what the kernel reports, and the driver's reason for the reset
            lines = [f"{device} (gpu_id {gpu_id}): {exception}" + (f": {report.summary}" if report.summary else "")]
        lines += ([report.text] if report.text else []) + notes
        if kind == "timeout":
            cls = GPUTimeout
        elif kind in SANITIZER_KINDS:  # a sanitizer stopped the dispatch
            cls = SanitizerError
        return cls("\n".join(lines), kind, data.va if event == MEMORY else None, gpu_id, usable)


class GPUTimeout(GPUFault, TimeoutError):
    """A dispatch still running when the wait's timeout expired, stopped by the driver (its queue was reset):
    a GPUFault (with the report of where every wave was) and a TimeoutError."""


class SanitizerError(GPUFault):
    """A dispatch stopped by a fatal sanitizer finding (an invalid access, before it happened); `kind` is the check.
    runtime.sanitize delivers the findings that do not stop a dispatch."""


def describe_exception(event: str, data) -> str:
    """One line for the data of a memory or hardware exception event, in the kernel ABI's terms."""
    if event == MEMORY:
        f = data.failure
        why = [text for flag, text in ((f.NotPresent, "page not present"), (f.ReadOnly, "write to a read-only page"),
                                       (f.NoExecute, "execute on a no-execute page"),
                                       (f.imprecise, "imprecise address")) if flag]
        return f"memory exception at VA {data.va:#x}" + (f" ({', '.join(why)})" if why else "")
    cause = _RESET_CAUSE.get(data.reset_cause, f"cause {data.reset_cause}")
    reset = _RESET_TYPE.get(data.reset_type, f"reset type {data.reset_type}")
    return f"hardware exception: {cause}, {reset}" + (", memory lost" if data.memory_lost else "")
