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

from bench import settle, shader_jit_pending
from bench.bench_train import LR, SETTLE_LIMIT, WARM, _make_step, data

os.environ.setdefault("MOCKGPU", "1")

from compiler import Tensor  # noqa: E402 - after MOCKGPU is set
from compiler import device as devices  # noqa: E402
from compiler.jit import TinyJit  # noqa: E402
from compiler.nn.optim import SGD  # noqa: E402
from simgpu.cp.pm4 import PM4Processor  # noqa: E402
from simgpu.shader.engine import ShaderEngine  # noqa: E402
from simgpu.shader.jit.native import NativeCall  # noqa: E402


def warm_step(jit: bool):
    """bench_train's step, settled: (one step as a function, the simulated GPU)."""
    d = data()
    step, _params = _make_step()(Tensor, SGD, d, LR)
    if jit:
        step = TinyJit(step)
    x, y = Tensor(d["x"]).realize(), Tensor(d["y"]).realize()
    dev = devices.get(x.device)
    gpu = dev.rt.os.simulator(dev.rt.gpu_id)

    def once():
        step(x, y)
        dev.synchronize()

    settle(once, limit=SETTLE_LIMIT, busy=lambda: shader_jit_pending(gpu))
    for _ in range(WARM):
        once()
    return once, gpu


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
    once, _gpu = warm_step(args.jit)
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
