"""Where the CPU time of bench_train's warm step goes (docs/compiler.md, "Profiling the training step").

    python -m bench.profile_train [--steps 20] [--top 40] [--jit] [--cprofile out.prof]

After the step has settled (bench_train's warm-up: every kernel compiled by the shader JIT), the split of STEPS
steps by thread CPU time: per kernel, the shader engine's time and, inside it, native code's (NativeCall.call);
the command processor's packet work around the engine; the rest (frontend, scheduler, runtime). Then a cProfile of
the same number of steps with a CPU-time timer (time.thread_time): its default timer is the wall clock, which on a
loaded host charges the waits for a CPU to whatever made a system call (time.process_time showed 5 ms a call).
Timings under cProfile are inflated for Python-heavy code; the split above is not (one clock read per call).
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import time

from bench.bench_train import settled_step

os.environ.setdefault("MOCKGPU", "1")

from simgpu.cp.pm4 import PM4Processor  # noqa: E402 - after MOCKGPU is set
from simgpu.shader.engine import ShaderEngine  # noqa: E402
from simgpu.shader.jit.native import NativeCall  # noqa: E402


class Split:
    """Thread CPU seconds per kernel (engine, native code) and of the CP's packet work, by wrapping three methods."""

    def __init__(self):
        self.kernels = collections.defaultdict(lambda: [0.0, 0.0, 0])  # name -> [engine, native, dispatches]
        self.cp = 0.0
        self._current = None
        self._saved = (ShaderEngine.run, NativeCall.call, PM4Processor.execute)

    def __enter__(self):
        run, call, execute = self._saved
        split = self

        def engine_run(engine, d):
            split._current = entry = split.kernels[engine.kernel_name(d.vmid, d.code_address)]
            t0 = time.thread_time()
            try:
                return run(engine, d)
            finally:
                entry[0] += time.thread_time() - t0
                entry[2] += 1

        def native_call(native, fn):
            t0 = time.thread_time()
            try:
                return call(native, fn)
            finally:
                split._current[1] += time.thread_time() - t0

        def cp_execute(cp, *args):
            t0 = time.thread_time()
            try:
                return execute(cp, *args)
            finally:
                split.cp += time.thread_time() - t0

        ShaderEngine.run, NativeCall.call, PM4Processor.execute = engine_run, native_call, cp_execute
        return self

    def __exit__(self, *exc):
        ShaderEngine.run, NativeCall.call, PM4Processor.execute = self._saved

    def report(self, total: float, steps: int) -> None:
        ms = 1e3 / steps
        engine = sum(e for e, _n, _c in self.kernels.values())
        native = sum(n for _e, n, _c in self.kernels.values())
        print(f"per step (thread CPU, {steps} steps): {total * ms:.2f} ms; shader engine {engine * ms:.2f} (native "
              f"code {native * ms:.2f}), CP packets {(self.cp - engine) * ms:.2f}, the rest (frontend, scheduler, "
              f"runtime) {(total - self.cp) * ms:.2f}")
        print(f"  {'kernel':<24}{'launches':>9}{'engine ms':>11}{'native ms':>11}")
        for name, (e, n, c) in sorted(self.kernels.items(), key=lambda kv: -kv[1][0]):
            print(f"  {name:<24}{c / steps:>9.1f}{e * ms:>11.3f}{n * ms:>11.3f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--top", type=int, default=40, help="functions of the cProfile listing (by own time)")
    p.add_argument("--jit", action="store_true", help="the TinyJit step (one PM4 submission a step)")
    p.add_argument("--cprofile", help="also write the cProfile statistics to this file")
    args = p.parse_args()
    once, _gpu, _steps, _loss = settled_step(args.jit)
    with Split() as split:
        t0 = time.thread_time()
        for _ in range(args.steps):
            once()
        total = time.thread_time() - t0
    split.report(total, args.steps)
    prof = cProfile.Profile(time.thread_time)
    prof.enable()
    for _ in range(args.steps):
        once()
    prof.disable()
    if args.cprofile:
        prof.dump_stats(args.cprofile)
    pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
