"""Every dispatch of a GPU counted (and thread-traced) for the host, without the program programming the counters:
what a profiler that intercepts dispatches (rocprof) gives a program that does not profile itself, and what
`simgpu run --profile/--sqtt` shows of a client it did not write.

A dispatch the program itself counts or traces is left to the program's own PMC/SQTT (simgpu.profile.monitor);
any other gets an observer of its own here with every SQ counter counting, and (with `sqtt`) a thread trace per
shader engine kept in host memory, not in a buffer of the program's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simgpu.fault import HardwareFault
from simgpu.hw import perfmon as pm
from simgpu.profile.counters import SQ_INDEX, PerfCounters
from simgpu.profile.observer import Observer
from simgpu.profile.placement import SHADER_ENGINES
from simgpu.profile.thread_trace import EngineTrace

# The thread-trace mask of a host trace: compute waves, instruction tokens of SA 0 / WGP 0 / SIMD 0.
_HOST_TT_MASK = pm.TT_MASK.pack(wtype_include=pm.WTYPE_INCLUDE_CS)
CODE_BYTES = 64 << 10  # of a traced kernel's code kept to decode its trace's instructions
_PAGE = 4096


@dataclass
class DispatchRecord:
    """One profiled dispatch: the kernel (named by the engine: the runtime's note or the code object's symbol),
    its queue, GPU timestamps (100 MHz ticks) around it, its counters and per-SE thread-trace streams."""

    name: str
    queue: str
    start: int
    end: int
    counters: dict[str, int] = field(default_factory=dict)
    sqtt: list[bytes] = field(default_factory=list)
    code_va: int = 0
    wave_size: int = 32
    code: bytes = b""  # the kernel's code from its entry on, as far as it is mapped (CODE_BYTES at most)


class HostTrace(EngineTrace):
    """The thread trace of one SE into host memory: the stream stays in the writer (no GPU buffer, never full)."""

    def __init__(self, gpu, se: int, vmid: int):
        super().__init__(gpu, se)
        self.regs[pm.SQ_THREAD_TRACE_MASK] = _HOST_TT_MASK
        self.start(vmid)

    def flush(self) -> None:
        if self.writer is not None:
            self.writer.pad(pm.TT_WPTR_UNIT)

    def stream(self) -> bytes:
        return bytes(self.writer.data) if self.writer is not None else b""


class DispatchProfiler:
    """Counts (and with `sqtt` traces) each dispatch of `gpu` the program does not profile; `records` in order."""

    def __init__(self, gpu, sqtt: bool = False):
        self.gpu, self.sqtt = gpu, sqtt
        self.records: list[DispatchRecord] = []
        self._open: dict[int, tuple] = {}  # id(observer) -> (dispatch, queue, start timestamp, counters)

    def begin(self, q, d) -> Observer:
        counters = PerfCounters(self.gpu)
        counters.start()
        traces = {se: HostTrace(self.gpu, se, q.vmid) for se in range(SHADER_ENGINES)} if self.sqtt else {}
        obs = Observer(counters, True, traces)
        self._open[id(obs)] = (d, q, self.gpu.clock.timestamp(), counters)
        return obs

    def end(self, obs: Observer) -> bool:
        """The dispatch of `obs` ended: its record (False: `obs` is not one of this profiler's)."""
        opened = self._open.pop(id(obs), None)
        if opened is None:
            return False
        d, q, start, counters = opened
        counters.stop()
        values = {name: int(counters.latched[i].sum()) for name, i in SQ_INDEX.items()}
        values["GRBM_GUI_ACTIVE"] = values["GRBM_COUNT"] = counters.grbm_latched
        self.records.append(DispatchRecord(
            self.gpu.engine.kernel_name(d.vmid, d.code_address), q.name, start, self.gpu.clock.timestamp(),
            values, [t.stream() for t in obs.traces.values()], d.code_address, d.wave_size,
            self._code(d) if self.sqtt else b""))
        return True

    def _code(self, d) -> bytes:
        """The kernel's code from its entry to the end of what is mapped there (CODE_BYTES at most)."""
        out = bytearray()
        va = d.code_address
        while len(out) < CODE_BYTES:
            n = min(_PAGE - va % _PAGE, CODE_BYTES - len(out))
            try:
                out += self.gpu.mmu.read(d.vmid, va, n)
            except HardwareFault:  # the end of the mapping (a read has no side effect: no fault is raised to anyone)
                break
            va += n
        return bytes(out)
