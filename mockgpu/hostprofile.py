"""Where the simgpu server's time goes: `simgpu run --profile-host FILE` (or SIMGPU_PROFILE_HOST=FILE).

Two measurements, both in the server process:
- round trips: every request a client's interposer sends (OPEN, IOCTL by ioctl name, MMAP, MAPPED, MUNMAP...) and
  every call back into the client inside one (MEM_READ, MEM_WRITE, SHARE, FD_HANDLE) is counted and timed, from
  the request's arrival to the reply sent (the server's share of the round trip; the socket hop is not in it);
- CPU: a cProfile of the server's thread and of every session worker, merged at the end and summed by component
  (the engine simgpu/, the server mockgpu/, the driver model runtime/, the rest: stdlib, sockets, poll).
FILE gets the merged pstats (`python -m pstats FILE`); the tables are printed on stderr after the program.
FILE `-`: the round trips only, without cProfile (whose per-call cost inflates the server's times about 3x).
"""

from __future__ import annotations

import cProfile
import pstats
import threading
import time
from collections import defaultdict
from contextlib import contextmanager

from runtime.uapi import kfd

PROFILE_HOST_ENV = "SIMGPU_PROFILE_HOST"
_COMPONENTS = (("/simgpu/", "engine (simgpu/)"), ("/mockgpu/", "server (mockgpu/)"),
               ("/runtime/", "driver model (runtime/)"), ("/traces/", "recorder (traces/)"))
_IOCTL_NAMES = {v & 0xFF: k.removeprefix("AMDKFD_IOC_") for k, v in vars(kfd).items()
                if k.startswith("AMDKFD_IOC_") and isinstance(v, int)}


def ioctl_name(request: int) -> str:
    """The KFD ioctl's name (its number when it is not a KFD one)."""
    if (request >> 8) & 0xFF == ord("K"):
        return _IOCTL_NAMES.get(request & 0xFF, f"KFD_{request & 0xFF:#x}")
    return f"ioctl_{request:#x}"


def component(filename: str) -> str:
    """Which part of simgpu a profiled function's file belongs to."""
    for part, name in _COMPONENTS:
        if part in filename:
            return name
    return "other (stdlib, sockets, poll)"


class HostProfile:
    """Round-trip counters and the per-thread cProfiles of one server; thread-safe where sessions share it."""

    def __init__(self, path: str):
        self.path = path
        self.cpu = path != "-"  # cProfile the threads (FILE "-": round trips only)
        self.started = time.perf_counter()
        self._lock = threading.Lock()
        self.trips: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])  # kind -> [count, seconds]
        self._profiles: list[cProfile.Profile] = []

    def count(self, kind: str, seconds: float) -> None:
        """One round trip of `kind` that took `seconds` on the server."""
        with self._lock:
            t = self.trips[kind]
            t[0] += 1
            t[1] += seconds

    @contextmanager
    def trip(self, kind: str):
        """Count and time the block as one round trip of `kind`."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.count(kind, time.perf_counter() - t0)

    @contextmanager
    def thread(self):
        """cProfile the calling thread while the block runs."""
        if not self.cpu:
            yield
            return
        prof = cProfile.Profile()
        with self._lock:
            self._profiles.append(prof)
        prof.enable()
        try:
            yield
        finally:
            prof.disable()

    def stats(self) -> pstats.Stats | None:
        """The merged profile of every thread so far."""
        profs = [p for p in self._profiles if p.getstats()]
        if not profs:
            return None
        merged = pstats.Stats(profs[0])
        for p in profs[1:]:
            merged.add(p)
        return merged

    def by_component(self, st: pstats.Stats) -> dict[str, float]:
        """Own CPU seconds (tottime) summed by component; the waits in poll(2) and select(2), and the session's
        wait outside Python (mockgpu.doorbellwait: cProfile charges a ctypes call to its caller), are split out as
        idle."""
        out: dict[str, float] = defaultdict(float)
        for (filename, _, func), (_, _, tottime, _, _) in st.stats.items():
            idle = (filename == "~" and ("poll" in func or "select.select" in func)) or (
                filename.endswith("doorbellwait.py") and func == "wait")
            out["idle (waiting in poll, select, doorbellwait)" if idle else component(filename)] += tottime
        return dict(out)

    def report(self, out) -> None:
        """Write FILE (pstats) and print the round-trip and component tables."""
        wall = time.perf_counter() - self.started
        print(f"\nsimgpu run --profile-host: server wall {wall:.3f} s", file=out)
        print(f"{'round trip':<28}{'count':>8}{'total ms':>11}{'mean us':>10}", file=out)
        for kind, (n, s) in sorted(self.trips.items(), key=lambda kv: -kv[1][1]):
            print(f"{kind:<28}{n:>8}{s * 1e3:>11.2f}{s / n * 1e6:>10.1f}", file=out)
        st = self.stats()
        if st is None:
            return
        st.dump_stats(self.path)
        print(f"{'server CPU (cProfile tottime)':<40}{'s':>8}", file=out)
        for name, s in sorted(self.by_component(st).items(), key=lambda kv: -kv[1]):
            print(f"{name:<40}{s:>8.3f}", file=out)
        print(f"pstats written to {self.path} (python -m pstats {self.path})", file=out, flush=True)
