"""Benchmarks: `python -m bench` (or `make bench`) runs them all and prints their figures."""

import time


def best_time(fn, reps: int = 3, count: int = 1, warm: bool = False) -> float:
    """Wall seconds per call of `fn`: the best of `reps` timed batches of `count` calls (after one untimed
    call when `warm`). The best, not the mean: other work on a shared machine only ever adds time."""
    if warm:
        fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(count):
            fn()
        best = min(best, (time.perf_counter() - t0) / count)
    return best
