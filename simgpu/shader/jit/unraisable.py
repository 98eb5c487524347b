"""Exceptions that escape a ctypes callback while native code runs, routed to the run on that thread.

Native code calls back into Python (memory helper, ticks); an exception raised there before the callback's own
`try` (Ctrl-C's KeyboardInterrupt lands at any bytecode) cannot propagate through C and goes to
`sys.unraisablehook`. The run keeps it and raises it once native code returns. `sys.unraisablehook` is one per
process, but `simgpu run` serves each client on its own thread, so two runs may be in native code at once:
the hook is installed while any run is inside (a count under a lock) and calls the run of the thread the callback
ran on (ctypes reports it on that thread).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_inside = 0  # native calls in progress, all threads
_previous: Callable | None = None  # the hook before the first of them
_current = threading.local()  # .keep: this thread's run's handler


def _route(info) -> None:
    keep = getattr(_current, "keep", None)
    if keep is not None:
        keep(info)
    elif _previous is not None:
        _previous(info)


@contextmanager
def kept_by(keep: Callable) -> Iterator[None]:
    """While inside, an unraisable exception on this thread goes to `keep(info)`, not to the process's hook."""
    global _inside, _previous
    outer = getattr(_current, "keep", None)
    _current.keep = keep
    with _lock:
        if _inside == 0:
            _previous, sys.unraisablehook = sys.unraisablehook, _route
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                sys.unraisablehook, _previous = _previous, None
        _current.keep = outer
