"""What `simgpu run --stats/--profile/--sqtt` collects of its clients' GPUs, and how it reports it.

The server runs a machine per client process (mockgpu/session.py); each is watched from its making to its end:
with `stats`, its GPUs' shader-engine counters and clocks (wiring.stats.snapshot) when the session ends; with
`profile`, every dispatch its GPUs run counted (and with `sqtt` thread-traced) by the device for the host
(simgpu.profile.dispatches), each kernel named from the client's own code object in GPU memory (mockgpu.symbols).
After the program exits the run prints what `simgpu stats` / `simgpu profile` print for in-process programs.

The outer commands compose: under `simgpu stats -- simgpu run -- CMD` (SIMGPU_STATS set) the counters go to the
outer command's file and it prints them; under `simgpu profile [--sqtt] -- simgpu run -- CMD` (SIMGPU_PROFILE /
SIMGPU_SQTT / SIMGPU_PROFILE_OUT) the run profiles as if given --profile [--sqtt] [--perfetto OUT].
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field

from simgpu import settings
from wiring import stats as wstats

# What an outer `simgpu profile` sets (runtime.profile's PROFILE_ENV and SQTT_ENV, by name: `simgpu run` reads them
# before it starts its program, and runtime.profile -- the packet and counter definitions -- is loaded only when a
# profile is reported)
PROFILE_ENV, SQTT_ENV = "SIMGPU_PROFILE", "SIMGPU_SQTT"
_ENV = (wstats.STATS_ENV, PROFILE_ENV, SQTT_ENV, "SIMGPU_PROFILE_OUT")


@dataclass
class Observe:
    """What to collect of every client's machine, and what was collected (sessions end in their own threads)."""

    stats: bool = False
    profile: bool = False
    sqtt: bool = False
    perfetto: str | None = None
    stats_file: str | None = None  # an outer `simgpu stats`' file: the counters go there, it prints them
    gpus: list[dict] = field(default_factory=list)
    kernels: list = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def requested(cls, stats: bool, profile: bool, sqtt: bool, perfetto: str | None) -> Observe:
        """The options, with what an outer `simgpu stats` / `simgpu profile` asks through the environment."""
        stats_file = settings.get(wstats.STATS_ENV) or None
        sqtt = sqtt or settings.get(SQTT_ENV)
        perfetto = perfetto or settings.get("SIMGPU_PROFILE_OUT") or None
        profile = profile or sqtt or bool(perfetto) or settings.get(PROFILE_ENV)
        return cls(stats or bool(stats_file), profile, sqtt, perfetto, stats_file)

    def child_env(self, env: dict) -> None:
        """The program must not act on the outer request itself (a runtime of ours would profile twice)."""
        for name in _ENV:
            env.pop(name, None)

    def attach(self, mock, pid: int):
        """Watch a new session's machine; the function to call when the session ends."""
        if self.profile:
            from simgpu.profile.dispatches import DispatchProfiler  # (it brings the shader engine: see wiring.run)
            for g in mock.gpus:
                g.perfmon.dispatches = DispatchProfiler(g, sqtt=self.sqtt)
        return lambda: self._collect(mock, pid)

    def _collect(self, mock, pid: int) -> None:
        gpus = [dict(g, pid=pid) for g in wstats.snapshot(mock)] if self.stats else []
        kernels = [_kernel_profile(r) for g in mock.gpus if g.perfmon.dispatches is not None
                   for r in g.perfmon.dispatches.records]
        with self._lock:
            self.gpus += gpus
            self.kernels += kernels

    def report(self, out) -> None:
        """After the program: the stats (or into the outer command's file), the profile table, the Perfetto file."""
        if self.stats_file:
            with open(self.stats_file, "a") as f:
                for g in self.gpus:
                    f.write(json.dumps(g) + "\n")
        elif self.stats:
            print(f"\nsimgpu run --stats:\n{wstats.format_stats(_labelled(self.gpus))}", file=out, flush=True)
        if self.profile:  # (the profile's definitions load only here: most runs exit without one)
            from runtime.profile import summary_table
            print(f"\nsimgpu run --profile:\n{summary_table(self.kernels)}", file=out, flush=True)
        if self.perfetto and self.kernels:
            from runtime.profile_export import write_perfetto
            write_perfetto(self.kernels, self.perfetto)


def _labelled(gpus: list[dict]) -> list[dict]:
    """GPU names with the client process they belong to, when more than one process used GPUs."""
    if len({g["pid"] for g in gpus}) <= 1:
        return gpus
    return [dict(g, gpu=f"pid {g['pid']} {g['gpu']}") for g in gpus]


def _kernel_profile(r):
    from runtime.profile import KernelProfile
    return KernelProfile(r.name, r.queue, r.start, r.end, counters=dict(r.counters), sqtt=list(r.sqtt),
                         code_va=r.code_va, code=r.code, code_base=r.code_va, wave_size=r.wave_size)
