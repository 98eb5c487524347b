"""Launch handles and the fenced rings that hold per-launch data (kernel arguments, timestamps, signals).

`kernel(..., wait=False)` returns a `Launch`: `.wait()` blocks until the kernel finished and returns its
GPU time in seconds (from the GPU timestamps its dispatch wrote), `.done()` polls. The memory a launch
reads or the GPU writes for it lives in `FencedRing`s: a region is handed out again only after the
launch that last used it completed (a per-region fence on the compute queue's timeline), so reuse is
safe however far the GPU lags behind the CPU.
"""

from __future__ import annotations

import struct
from collections import deque


class Launch:
    """A kernel launch in flight: its compute-queue timeline value and its timestamp slot."""

    def __init__(self, dev, name: str, value: int, slot: int, start_off: int, end_off: int):
        self.device, self.name, self.value = dev, name, value
        self._slot, self._offs = slot, (start_off, end_off)
        self._time: float | None = None
        self._retired = False
        self.epoch = dev.sync_epoch

    def done(self) -> bool:
        """Whether the GPU finished the launch (never blocks)."""
        return self._retired or self.device.compute.completed() >= self.value

    def wait(self, timeout_ms: int | None = None) -> float:
        """Block until the launch finished; its GPU time in seconds. GPUFault if a fault aborted it."""
        self._retire(timeout_ms)
        if self._time is None:
            raise self.device.aborted_by(self.value, self.name)
        return self._time

    @property
    def time(self) -> float | None:
        """The GPU time once the launch was waited for (or its slot reclaimed); None before or if aborted."""
        return self._time

    def retire(self) -> None:
        """Wait for completion and read the timestamps out of the slot, which may then be reused."""
        self._retire(None)

    def _retire(self, timeout_ms: int | None) -> None:
        if self._retired:
            return
        dev = self.device
        dev.wait(dev.compute, self.value, timeout_ms)
        self._retired = True
        if dev.aborted_by(self.value, self.name) is None:
            start, end = (struct.unpack_from("<Q", dev.stamps.view, self._slot + o)[0] for o in self._offs)
            self._time = (end - start) / dev.counter_hz
            if self.epoch == dev.sync_epoch:
                dev.sync_time += self._time

    def __repr__(self) -> str:
        state = f"{self._time * 1e6:.2f}us" if self._time is not None else ("done" if self.done() else "pending")
        return f"<Launch {self.name} #{self.value} on {self.device.name}: {state}>"


class FencedRing:
    """Sub-allocates a buffer as a ring of `align`-byte aligned regions, oldest reused first. Every region is
    claimed by an owner with `retire()` (a Launch); handing the region out again first retires its owner."""

    def __init__(self, size: int, align: int = 64):
        self.size, self.align = size, align
        self.pos = 0
        self.live: deque[tuple[int, int, object]] = deque()  # (start, end, owner), oldest first

    def alloc(self, nbytes: int) -> int:
        """Offset of a free region of at least nbytes (waiting only for the launches that used it)."""
        size = -(-max(nbytes, 1) // self.align) * self.align
        if size > self.size:
            raise ValueError(f"{nbytes} bytes do not fit in a {self.size}-byte ring")
        if self.pos + size > self.size:
            # Wrap: the skipped tail holds the oldest regions; they must be done before anything newer.
            tail = self.pos
            self._retire_front(lambda s: s >= tail)
            self.pos = 0
        start = self.pos
        # Regions of the previous lap are ahead of pos and oldest first; retire those the new region covers.
        self._retire_front(lambda s: start <= s < start + size)
        self.pos += size
        return start

    def claim(self, start: int, nbytes: int, owner) -> None:
        """Record that `owner` uses the region at start until it retires."""
        self.live.append((start, start + nbytes, owner))

    def retire_all(self) -> None:
        """Retire every owner (after which the whole ring is free)."""
        self._retire_front(lambda s: True)

    def _retire_front(self, covered) -> None:
        while self.live and covered(self.live[0][0]):
            self.live.popleft()[2].retire()
