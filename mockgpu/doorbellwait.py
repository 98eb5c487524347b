"""The session worker's wait for its client (mockgpu/csrc/doorbellwait.c): until a doorbell in the shared doorbell
pages changes, a request arrives on one of the client's sockets, or a timeout passes -- looking at the pages every
`period` without Python and without the GIL. A client's doorbell store is seen within the period at a few
microseconds of CPU a look (a look in Python costs ~40 us), so the worker can keep looking while the client is
busy elsewhere (compiling its next kernel) instead of backing off to IDLE_POLL and seeing the launch late.

Built with the system C compiler like the interposer (mockgpu.native); where none is found, `Waiter.open` gives
None and the session polls in Python as before.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from mockgpu import native, protocol

SOURCE = native.CSRC / "doorbellwait.c"
DOORBELL = 1  # what simgpu_doorbell_wait returns: a doorbell changed
READABLE = 2  # ... a descriptor is readable (or hung up)


@functools.cache
def _library() -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL(str(native.build(SOURCE, "libsimgpu-doorbellwait",
                                           ["-fvisibility=hidden", *protocol.c_definitions()], shared=True)))
    except (native.BuildError, OSError):
        return None
    fn = lib.simgpu_doorbell_wait
    fn.restype = ctypes.c_int
    fn.argtypes = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
    pending = lib.simgpu_doorbell_pending
    pending.restype = ctypes.c_int
    pending.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    return lib


class _Watch(ctypes.Structure):
    """doorbellwait.c's struct simgpu_watch: what one wait passes on to the next (filled once, the fds when they
    change)."""

    _fields_ = [("pages", ctypes.c_void_p), ("seen", ctypes.c_void_p), ("fds", ctypes.c_void_p),
                ("spins", ctypes.c_void_p), ("slots", ctypes.c_int32), ("npages", ctypes.c_int32),
                ("nfds", ctypes.c_int32), ("pad", ctypes.c_int32)]


class Waiter:
    """The doorbell pages of one machine's GPUs and, for each, its values last acted on (GPU.doorbell_arrays)."""

    def __init__(self, lib: ctypes.CDLL, arrays: list[tuple[np.ndarray, np.ndarray]]):
        self._fn, self._pending = lib.simgpu_doorbell_wait, lib.simgpu_doorbell_pending
        self._arrays = arrays  # (kept: the pointers below are into them)
        self._pages = (ctypes.c_void_p * len(arrays))(*(page.ctypes.data for page, _ in arrays))
        self._seen = (ctypes.c_void_p * len(arrays))(*(seen.ctypes.data for _, seen in arrays))
        self._slots = min(min(len(page), len(seen)) for page, seen in arrays)
        self._spins = ctypes.c_int64(0)
        self._fds: list[int] = []  # the descriptors of the last wait, and their array (made again when they change)
        self._fd_array = (ctypes.c_int * 0)()
        self._watch = _Watch(ctypes.addressof(self._pages), ctypes.addressof(self._seen), 0,
                             ctypes.addressof(self._spins), self._slots, len(arrays), 0, 0)
        self._watch_ref = ctypes.byref(self._watch)
        self._out = (ctypes.c_uint64 * (3 * self._slots * len(arrays)))()  # (room for every doorbell at once)

    @property
    def spins(self) -> int:
        """SPIN messages the waits took off the sockets so far: the client announces the doorbells it waits on."""
        return self._spins.value

    @classmethod
    def open(cls, arrays: list[tuple[np.ndarray, np.ndarray]]) -> Waiter | None:
        """A waiter on these doorbells, or None without the native library (or without GPUs)."""
        lib = _library()
        return cls(lib, arrays) if lib is not None and arrays else None

    def wait(self, fds: list[int], timeout: float, period: float, since: float | None = None,
             max_period: float = 0.0, growth: int = 0) -> int:
        """0 after `timeout` seconds, DOORBELL as soon as a doorbell differs from what was acted on, READABLE as
        soon as one of `fds` is readable; looks at the doorbells every `period` seconds, or, with `growth` and
        `since` (time.monotonic() of the client's last activity), every (now - since) / growth seconds, from
        `period` up to `max_period` (time.monotonic is CLOCK_MONOTONIC, the C side's clock)."""
        if fds != self._fds:  # (a session's descriptors change when a thread connects or goes: not every turn)
            self._fds, self._fd_array = list(fds), (ctypes.c_int * len(fds))(*fds)
            self._watch.fds, self._watch.nfds = ctypes.addressof(self._fd_array), len(fds)
        grow = growth > 0 and since is not None
        r = self._fn(self._watch_ref, max(0, int(timeout * 1e6)), max(1, int(period * 1e6)),
                     int(since * 1e6) if grow else 0, max(1, int(max(max_period, period) * 1e6)), growth if grow else 0)
        if r < 0:
            raise OSError(-r, "ppoll failed in simgpu_doorbell_wait")
        return r

    def pending(self) -> list[tuple[int, int, int]]:
        """(GPU, slot, value) of each doorbell whose value differs from the one its GPU last acted on (the GPUs in
        the order of the arrays given, each one's slots in order): every GPU's pending_doorbells, in one C call."""
        out = self._out
        n = self._pending(self._watch_ref, out)
        if not n:
            return []
        found = out[:3 * n]
        return list(zip(found[0::3], found[1::3], found[2::3], strict=True))
