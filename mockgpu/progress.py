"""Progress of long dispatches on a terminal: workgroups done of all, wave-instructions/s, elapsed time.

The shader engine reports a running dispatch every TICK wave-instructions (simgpu.shader.Progress); a bar
appears once a dispatch has run for a second, on stderr, only when stderr is a terminal (so never in a pipe,
a log or under pytest's capture), and SIMGPU_PROGRESS=0 turns it off. tqdm draws it.
"""

from __future__ import annotations

import sys
import time

from tqdm import tqdm

from simgpu import settings

DELAY = 1.0  # seconds a dispatch runs before its bar appears


def enabled() -> bool:
    """Whether MockOS shows dispatch progress: stderr is a terminal and SIMGPU_PROGRESS is not 0."""
    return settings.get("SIMGPU_PROGRESS") and sys.stderr.isatty()


class DispatchProgress:
    """A progress hook for a simgpu.GPU's shader engine: one tqdm bar per long dispatch."""

    def __init__(self, name: str, file=None, delay: float = DELAY):
        self.name, self.file, self.delay = name, file, delay
        self.bar: tqdm | None = None
        self.dispatch = None
        self.start = 0.0

    def __call__(self, p) -> None:
        if p.dispatch is not self.dispatch:
            self._close()
            self.dispatch, self.start = p.dispatch, time.monotonic()
            self.bar = tqdm(total=p.groups_total, unit="wg", desc=f"{self.name} dispatch", delay=self.delay,
                            leave=False, file=self.file or sys.stderr, dynamic_ncols=True)
        rate = p.wave_instructions / max(time.monotonic() - self.start, 1e-9)
        self.bar.set_postfix_str(f"{rate / 1e6:.2f}M wave-inst/s", refresh=False)
        self.bar.update(p.groups_done - self.bar.n)
        if p.finished:
            if time.monotonic() - self.start >= self.delay:  # a bar is showing: draw the finished dispatch
                self.bar.refresh()  # (tqdm redraws at most every 0.1 s, so its last update may not have drawn)
            self._close()

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.bar, self.dispatch = None, None
