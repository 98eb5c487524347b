"""Per-kernel profiling through the GPU's own profiling hardware: performance counters (PMC) and the SQ thread
trace (SQTT), programmed with PM4 around each launch exactly as on a real gfx11 part (simgpu.hw.perfmon_pm4).

    prof = dev.profile(lambda: k(a, b, grid=..., block=...))         # every modelled counter, replayed in passes
    prof = dev.profile(fn, counters=["SQ_WAVES", "SQ_INSTS_VALU"], sqtt=True)
    print(prof.table())                                                # one row per kernel launch
    SIMGPU_PROFILE=1 python app.py       # every launch of every Device counted (one pass), table printed at exit
    SIMGPU_SQTT=1 python app.py          # every launch thread-traced as well

A pass counts at most 8 SQ and 2 GRBM counters (the hardware's limit); `Device.profile` runs the callable once
per pass, as rocprof replays an application per counter pass, so a kernel whose work depends on data it changes
is measured on different inputs in later passes. While profiling, each launch waits for its results.
On an AQL queue the PM4 runs as AMD vendor-specific PM4-IB packets on the same queue. A gfx9 device (gfx942,
gfx950) counts through gfx9's registers (simgpu.hw.perfmon_gfx9_pm4: 64-bit values per SE of each XCC) the counters
gfx942 has a select for (GFX9_COUNTERS); its thread trace is gfx9's format, which this profiler does not collect.
"""

from __future__ import annotations

import atexit
import struct
import sys
from dataclasses import dataclass, field

from runtime.profile_export import write_perfetto
from simgpu import settings
from simgpu.hw import aql, perfmon
from simgpu.hw import perfmon_gfx9 as pm9
from simgpu.hw import perfmon_gfx9_pm4 as pp9
from simgpu.hw import perfmon_pm4 as pp
from simgpu.hw import pm4 as hw
from simgpu.isa.arch import get_arch

SE_COUNT = pp.SE_COUNT
SQTT_BYTES = 1 << 20  # per shader engine
# Counters one pass can hold, in the order Device.profile fills passes.
ALL_COUNTERS = [n for n, c in perfmon.COUNTERS.items() if c.block == "SQ"] + \
    [n for n, c in perfmon.COUNTERS.items() if c.block == "GRBM"]
# gfx9: the counters gfx942 has a select for, by the names used here (simgpu.hw.perfmon's) -> gfx942's names.
GFX9_NAMES = {c.model: n for n, c in pm9.COUNTERS.items()} | \
    {n: n for n, c in perfmon.COUNTERS.items() if c.block == "GRBM"}
GFX9_COUNTERS = [n for n in ALL_COUNTERS if n in GFX9_NAMES]
# What SIMGPU_PROFILE=1 counts (one pass: the launch cannot be replayed).
DEFAULT_COUNTERS = ["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_SMEM", "SQ_INSTS_LDS", "SQ_INSTS_FLAT",
                    "SQ_BUSY_CYCLES", "SQC_LDS_BANK_CONFLICT", "GRBM_GUI_ACTIVE", "GRBM_COUNT"]


def passes(names: list[str]) -> list[list[str]]:
    """Split counters into passes of at most 8 SQ and 2 GRBM counters."""
    out: list[list[str]] = []
    for name in names:
        block = perfmon.COUNTERS[name].block
        limit = perfmon.SQ_COUNTERS if block == "SQ" else perfmon.GRBM_COUNTERS
        for p in out:
            if sum(perfmon.COUNTERS[n].block == block for n in p) < limit:
                p.append(name)
                break
        else:
            out.append([name])
    return out


@dataclass
class KernelProfile:
    """One profiled launch: counters (summed over instances), their per-instance values, GPU time, traces."""

    name: str
    queue: str
    start: int  # GPU timestamps (100 MHz ticks) around the dispatch
    end: int
    counters: dict[str, int] = field(default_factory=dict)
    per_instance: dict[str, list[int]] = field(default_factory=dict)
    sqtt: list[bytes] = field(default_factory=list)  # one thread-trace stream per SE (empty without SQTT)
    code_va: int = 0  # the kernel's entry; the code object's image and where it is loaded (for mapping traces)
    code: bytes = b""
    code_base: int = 0
    wave_size: int = 32

    def metrics(self) -> dict[str, float]:
        """Derived figures: instruction mix, VALU utilisation, occupancy, LDS bank-conflict rate."""
        c = self.counters
        waves = c.get("SQ_WAVES", 0)
        valu = c.get("SQ_INSTS_VALU", 0)
        out: dict[str, float] = {}
        if "SQ_INSTS_TEX_LOAD" in c or "SQ_INSTS_FLAT" in c:
            out["SQ_INSTS_VMEM"] = c.get("SQ_INSTS_FLAT", 0) + c.get("SQ_INSTS_TEX_LOAD", 0) + \
                c.get("SQ_INSTS_TEX_STORE", 0)
        if valu and "SQ_INSTS_VALU_ACTIVE_LANES" in c:
            out["VALU_UTILIZATION"] = 100.0 * c["SQ_INSTS_VALU_ACTIVE_LANES"] / (valu * self.wave_size)
        if waves and "SQ_WAVE_CYCLES" in c and "SQ_BUSY_CYCLES" in c and c["SQ_BUSY_CYCLES"]:
            out["AVG_RESIDENT_WAVES"] = c["SQ_WAVE_CYCLES"] / c["SQ_BUSY_CYCLES"]
        if c.get("SQC_LDS_IDX_ACTIVE"):
            out["LDS_BANK_CONFLICT_PCT"] = 100.0 * c.get("SQC_LDS_BANK_CONFLICT", 0) / c["SQC_LDS_IDX_ACTIVE"]
        return out


class Profiler:
    """Counts (and traces) the launches of one Device; `records` holds a KernelProfile per launch."""

    def __init__(self, dev, counters: list[str] | None = None, sqtt: bool = False, sqtt_bytes: int = SQTT_BYTES):
        self.dev = dev
        names = DEFAULT_COUNTERS if counters is None else list(counters)
        if len(passes(names)) > 1:
            raise ValueError(f"{len(names)} counters need {len(passes(names))} passes; a Profiler counts one "
                             "(Device.profile replays the call per pass)")
        self.gfx9 = _gfx9(dev)
        if self.gfx9:
            if sqtt:
                raise ValueError(f"{dev.arch}'s thread trace is gfx9's format, which runtime.profile does not "
                                 "collect (tinygrad's PROFILE=1 SQTT=1 does; docs/device.md)")
            if missing := [n for n in names if n not in GFX9_NAMES]:
                raise ValueError(f"{dev.arch} has no modelled select for {', '.join(missing)}; gfx9 counts "
                                 f"{', '.join(GFX9_COUNTERS)}")
            self.schedule = pp9.pmc_schedule([GFX9_NAMES[n] for n in names])
            self.names = dict(zip((s.name for s in self.schedule), names, strict=True))
        else:
            self.schedule = pp.pmc_schedule(names)
            self.names = {n: n for n in names}
        self.results = dev.alloc_system(max(4096, sum(8 * s.count for s in self.schedule) + 64))
        self.sqtt = sqtt
        self.records: list[KernelProfile] = []
        self.ib = dev.alloc_system(1 << 16) if dev.queue_kind == "aql" else None
        if sqtt:
            size = -(-sqtt_bytes // perfmon.TT_BUFFER_ALIGN) * perfmon.TT_BUFFER_ALIGN
            self.trace_buffers = [dev.alloc(size) for _ in range(SE_COUNT)]
            self.wptrs = dev.alloc_system(4096)

    # ---- around a launch -------------------------------------------------------------------------------
    def before(self, kernel) -> list[int]:
        """PM4 that starts counting (and tracing) for the next dispatch."""
        if self.gfx9:
            return pp9.pmc_start(self.schedule, {n: perfmon.COUNTERS[n].select for n in self.names.values()
                                                 if n.startswith("GRBM_")})
        out = pp.pmc_start(self.schedule)
        if self.sqtt:
            out += pp.sqtt_start([(b.va, b.size) for b in self.trace_buffers])
            out += pp.sqtt_userdata(*_marker(kernel.name))
        return out

    def after(self) -> list[int]:
        """PM4 that stops tracing and copies the counters out."""
        if self.gfx9:
            return pp9.pmc_read(self.schedule, self.results.va)
        out = pp.sqtt_stop(SE_COUNT, self.wptrs.va) if self.sqtt else []
        return out + pp.pmc_read(self.schedule, self.results.va)

    def submit_aql(self, packets: list[int]) -> int:
        """Run PM4 from an AQL queue: an AMD vendor-specific packet calling an indirect buffer."""
        data = struct.pack(f"<{len(packets)}I", *packets)
        self.ib.view[:len(data)] = data
        pkt = aql.VendorPM4IBPacket(header=aql.make_header(aql.PacketType.VENDOR_SPECIFIC),
                                    ib_jump_cmd=tuple(hw.indirect_buffer(self.ib.va, len(packets))))
        value = self.dev.compute.submit(pkt.pack())
        self.dev.wait(self.dev.compute, value)
        return value

    def collect(self, kernel, start: int, end: int) -> KernelProfile:
        """Read the launch's counters (and traces) after it completed."""
        raw = bytes(self.results.view)
        wave_size = 32 if kernel.descriptor.enable_wavefront_size32 else 64
        rec = KernelProfile(kernel.name, self.dev.queue_kind, start, end, code_va=kernel.code_va,
                            code=kernel.module.code_image, code_base=kernel.module.code.va, wave_size=wave_size)
        for s in self.schedule:
            if self.gfx9:  # 64-bit values per XCC and SE (one per XCC for GRBM: XCC 0's counts the device)
                values = list(struct.unpack_from(f"<{s.count}Q", raw, s.offset))
                values = values if s.block == "SQ" else values[:1]
            elif s.block == "SQ":
                values = list(struct.unpack_from(f"<{s.count}I", raw, s.offset))
            else:
                values = [struct.unpack_from("<Q", raw, s.offset)[0]]
            name = self.names[s.name]
            rec.per_instance[name], rec.counters[name] = values, sum(values)
        if self.sqtt:
            wptrs = struct.unpack_from(f"<{SE_COUNT}I", self.wptrs.view)
            for buf, wptr in zip(self.trace_buffers, wptrs, strict=True):
                n = max(0, min(pp.trace_bytes(wptr, buf.va), buf.size))
                out = bytearray(n)
                if n:
                    self.dev.copy_to_host(memoryview(out), buf.va)
                rec.sqtt.append(bytes(out))
        self.records.append(rec)
        return rec

    def free(self) -> None:
        """Release the profiler's buffers."""
        for b in [self.results, *([self.ib] if self.ib else []),
                  *(self.trace_buffers + [self.wptrs] if self.sqtt else [])]:
            b.free()


def _marker(name: str) -> list[int]:
    """A user-data marker naming the kernel in the trace (its name's bytes, at most 16, as dwords)."""
    raw = name.encode()[:16].ljust(16, b"\0")
    return list(struct.unpack("<4I", raw))


@dataclass
class Profile:
    """What Device.profile collected: one KernelProfile per launch (passes merged)."""

    kernels: list[KernelProfile]

    def table(self) -> str:
        """The per-kernel summary table."""
        return summary_table(self.kernels)


def merge_passes(runs: list[list[KernelProfile]]) -> list[KernelProfile]:
    """Launch i of every pass is the same launch: one record with all its counters (traces from the first)."""
    merged = runs[0]
    for run in runs[1:]:
        if len(run) != len(merged):
            raise RuntimeError(f"a profiling pass launched {len(run)} kernels, the first {len(merged)}: the call is "
                               "not repeatable")
        for rec, other in zip(merged, run, strict=True):
            rec.counters.update(other.counters)
            rec.per_instance.update(other.per_instance)
            rec.sqtt = rec.sqtt or other.sqtt
    return merged


def profile(dev, fn, counters: list[str] | None = None, sqtt: bool = False) -> Profile:
    """Run `fn` once per counter pass with the device's launches profiled; the merged per-launch records."""
    names = (GFX9_COUNTERS if _gfx9(dev) else ALL_COUNTERS) if counters is None else counters
    runs = []
    for i, names_pass in enumerate(passes(names)):
        prof = Profiler(dev, names_pass, sqtt=sqtt and i == 0)
        previous, dev.profiler = dev.profiler, prof
        try:
            fn()
        finally:
            dev.profiler = previous
            prof.free()
        runs.append(prof.records)
    return Profile(merge_passes(runs))


COLUMNS = [("waves", "SQ_WAVES"), ("VALU", "SQ_INSTS_VALU"), ("SALU", "SQ_INSTS_SALU"), ("SMEM", "SQ_INSTS_SMEM"),
           ("VMEM", "SQ_INSTS_VMEM"), ("LDS", "SQ_INSTS_LDS"), ("BRANCH", "SQ_INSTS_BRANCH"),
           ("VALU%", "VALU_UTILIZATION"), ("waves/cyc", "AVG_RESIDENT_WAVES"),
           ("LDS bank cf", "SQC_LDS_BANK_CONFLICT"), ("busy cyc", "SQ_BUSY_CYCLES"), ("GPU cyc", "GRBM_GUI_ACTIVE")]


def summary_table(records: list[KernelProfile]) -> str:
    """One row per launch: time, counters, instruction mix, VALU utilisation, occupancy, LDS bank conflicts."""
    if not records:
        return "no kernel was profiled"
    rows = [["kernel", "queue", "time us", *(h for h, _ in COLUMNS)]]
    for r in records:
        values = {**r.counters, **r.metrics()}
        cells = [r.name, r.queue, f"{(r.end - r.start) / 100:.2f}"]
        for _, key in COLUMNS:
            v = values.get(key)
            cells.append("-" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v))
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in rows]
    return "\n".join([lines[0], "-" * len(lines[0]), *lines[1:]])


# ---- SIMGPU_PROFILE / SIMGPU_SQTT: every Device profiles its launches ----------------------------------------
PROFILE_ENV, SQTT_ENV = "SIMGPU_PROFILE", "SIMGPU_SQTT"
_profiled: list[Profiler] = []


def from_environment(dev) -> Profiler | None:
    """A Profiler for a new Device if SIMGPU_PROFILE=1 or SIMGPU_SQTT=1; its table is printed at exit."""
    counting, tracing = settings.get(PROFILE_ENV), settings.get(SQTT_ENV)
    if not counting and not tracing:
        return None
    if tracing and _gfx9(dev):
        print(f"simgpu: {SQTT_ENV}=1 on {dev.arch}: counting only (runtime.profile does not collect gfx9's thread "
              "trace)", file=sys.stderr)
        tracing = False
    prof = Profiler(dev, sqtt=tracing)
    if not _profiled:
        atexit.register(_report)
    _profiled.append(prof)
    return prof


def _gfx9(dev) -> bool:
    return get_arch(dev.arch).family == "gfx9"


def _report() -> None:
    records = [r for p in _profiled for r in p.records]
    if records:
        print(f"\nsimgpu profile ({PROFILE_ENV}/{SQTT_ENV}):\n{summary_table(records)}", flush=True)
    out = settings.get("SIMGPU_PROFILE_OUT")
    if out and records:
        write_perfetto(records, out)
