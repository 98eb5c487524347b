"""The sanitizers' cost on the kernel corpora: the llvmlite corpus (compiler/samples, 53 kernels) and the
clang-19 OpenCL corpus (tests/data/opencl, run through its own test functions), with every check on
(SIMGPU_SANITIZE=all) against none, in the same process.

    python -m bench.bench_sanitize

Only time inside ShaderEngine.run counts (CPU time; the decode cache is warm for both runs because the
unsanitized pass goes first and decodes are shared), so compilation and test set-up do not dilute the
ratio. The target (issue 19) is at most 3x.
"""

from __future__ import annotations

import os
import time

import numpy as np

from simgpu.shader import engine as shader_engine
from simgpu.testbed import Testbed


class _EngineClock:
    """Accumulates CPU time and wave-instructions spent in ShaderEngine.run while installed."""

    def __init__(self):
        self.seconds, self.waves = 0.0, 0
        self._run = shader_engine.ShaderEngine.run

    def __enter__(self):
        clock, run = self, self._run

        def timed(engine, d):
            w0, t0 = engine.counters.wave_instructions, time.process_time()
            try:
                return run(engine, d)
            finally:
                clock.seconds += time.process_time() - t0
                clock.waves += engine.counters.wave_instructions - w0
        shader_engine.ShaderEngine.run = timed
        return self

    def __exit__(self, *exc):
        shader_engine.ShaderEngine.run = self._run


def _llvmlite_corpus() -> None:
    from compiler.samples import corpus
    for k in corpus():
        tb = Testbed(vram_size=1 << 28)
        loaded = tb.load(k.code_object())[k.name]
        args = k.inputs(np.random.default_rng(0))
        vas = [tb.upload(a) if isinstance(a, np.ndarray) else a for a in args]
        tb.launch(loaded, vas, k.grid, k.block, k.shared)


def _opencl_corpus() -> None:
    from tests.simgpu.shader import test_corpus_opencl as m
    for name in sorted(dir(m)):
        if name.startswith("test_") and "committed" not in name:  # that one rebuilds with clang: no kernel run
            getattr(m, name)()


def measure(fn, checks: str) -> _EngineClock:
    """Run `fn` with SIMGPU_SANITIZE=`checks` (Testbed's default); the engine's time and work."""
    old = os.environ.get("SIMGPU_SANITIZE")
    os.environ["SIMGPU_SANITIZE"] = checks
    try:
        with _EngineClock() as c:
            fn()
    finally:
        if old is None:
            os.environ.pop("SIMGPU_SANITIZE", None)
        else:
            os.environ["SIMGPU_SANITIZE"] = old
    return c


def main() -> None:
    print("sanitizer cost on the corpora (engine CPU time, best of 3; all checks vs none)")
    total_off = total_on = 0.0
    for label, fn in (("llvmlite corpus", _llvmlite_corpus), ("OpenCL corpus", _opencl_corpus)):
        measure(fn, "")  # warm: compile caches, decodes
        off = min((measure(fn, "") for _ in range(3)), key=lambda c: c.seconds)
        on = min((measure(fn, "all") for _ in range(3)), key=lambda c: c.seconds)
        total_off, total_on = total_off + off.seconds, total_on + on.seconds
        print(f"  {label:16s} off {off.seconds:6.3f} s ({off.waves / off.seconds / 1e6:5.2f}M wave-instr/s)  "
              f"all {on.seconds:6.3f} s ({on.waves / on.seconds / 1e6:5.2f}M wave-instr/s)  "
              f"ratio {on.seconds / off.seconds:4.2f}x")
    print(f"  {'both':16s} ratio {total_on / total_off:4.2f}x (target <= 3x)")


if __name__ == "__main__":
    main()
