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


def settle(fn, limit: int = 12, tolerance: float = 0.25, busy=None) -> int:
    """Call `fn` until its wall time stops falling (a call within `tolerance` of the one before) and `busy()` (if
    given) is false, at most `limit` times; the number of calls. On the simulated GPU a kernel runs interpreted
    until the shader JIT tier has compiled it, in a background thread once the kernel is hot
    (simgpu.shader.jit.policy): on a busy machine that takes several calls, and a 'warm' figure taken before it is
    the interpreter's (shader_jit_busy)."""
    last = float("inf")
    for n in range(1, limit + 1):
        t0 = time.perf_counter()
        fn()
        t = time.perf_counter() - t0
        if t > (1 - tolerance) * last and not (busy is not None and busy()):
            return n
        last = t
    return limit


def shader_jit_busy(gpu) -> bool:
    """Whether the simulated GPU's shader JIT tier is compiling a kernel or has one queued (simgpu.GPU `gpu`)."""
    tier = getattr(gpu.engine, "jit", None)
    if tier is None:
        return False
    return any(s.deferred or (s.future is not None and not s.future.done()) for s in tier.kernels.values())


def shader_jit_pending(gpu) -> bool:
    """Whether a kernel the simulated GPU has run is still interpreted: compiling or queued (shader_jit_busy), or
    not hot yet (the tier compiles a kernel once the interpreter has spent SIMGPU_JIT_HOT ms on it: a small
    kernel of a training step, a millisecond a launch, gets there after about 20 steps). A loop's warm figure
    is the one after that: its later steps run every kernel natively."""
    tier = getattr(gpu.engine, "jit", None)
    if tier is None:
        return False
    return shader_jit_busy(gpu) or any(s.compiled is None and not s.idle and s.failed is None
                                       for s in tier.kernels.values())
