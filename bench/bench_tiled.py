"""The training step's LDS-tiled matrix products alone (issues 28/29): each kernel's warm dispatch on the
simulated gfx1100, with the JIT tier's work on it (rounds, wave-instructions, how many of them native).

    python -m bench.bench_tiled

The step is bench.bench_train's (784-128-10, batch 64, SGD, no TinyJit); the compiler lowers its two big
matrix products (x @ w1 forward: M_64_128_784, 2 workgroups of 8 waves looping 49 times over K; the
gradient of w1: M_128_784_64, 392 workgroups, 4 times over K) to kernels that stage 16-wide tiles in LDS
between two s_barriers. Every dispatch is timed in process CPU time (the machine is shared); the best of the
warm steps is printed per kernel, with the step's own best wall and CPU time.
"""

from __future__ import annotations

import collections
import os
import time

os.environ.setdefault("MOCKGPU", "1")

STEPS = 8


def _counts(tier) -> tuple[int, int, int]:
    """The tier's rounds, native wave-instructions and interpreted sync steps so far (zeros without it)."""
    if tier is None:
        return 0, 0, 0
    return tier.stats.rounds, tier.stats.native_instructions, tier.stats.sync_steps


def main() -> None:
    """Print the table."""
    from bench import bench_train
    from simgpu.shader import engine as shader_engine
    seen: dict = collections.defaultdict(list)
    run = shader_engine.ShaderEngine.run

    def timed(self, d):
        tier = self.jit
        s0 = _counts(tier)
        w0, t0 = self.counters.wave_instructions, time.process_time()
        run(self, d)
        dt = time.process_time() - t0
        s1 = _counts(tier)
        grew = (b - a for a, b in zip(s0, s1, strict=True))
        seen[self.kernel_name(d.vmid, d.code_address)].append(
            (dt, self.counters.wave_instructions - w0, *grew, d.workgroups))

    shader_engine.ShaderEngine.run = timed
    try:
        step = bench_train.ours(False)
    finally:
        shader_engine.ShaderEngine.run = run
    print(f"training step (bench_train, no TinyJit): best {step['best'] * 1e3:.1f} ms wall, "
          f"{step['cpu'] * 1e3:.1f} ms CPU; load average {os.getloadavg()[0]:.2f}")
    print(f"  {'kernel':<16}{'grid':>12}{'best CPU':>10}{'median':>9}{'wave-insns':>12}{'native':>8}"
          f"{'rounds':>8}{'sync':>6}")
    for name, runs in sorted(seen.items(), key=lambda kv: -min(r[0] for r in kv[1][-STEPS:])):
        last = runs[-STEPS:]
        times = sorted(r[0] for r in last)
        dt, wi, rounds, native, sync, grid = last[-1]
        if not name.startswith("M_"):
            continue
        best, median = times[0] * 1e3, times[len(times) // 2] * 1e3
        print(f"  {name:<16}{'x'.join(map(str, grid)):>12}{best:>8.1f}ms{median:>7.1f}ms"
              f"{wi:>12}{native / max(wi, 1):>8.0%}{rounds:>8}{sync:>6}")


if __name__ == "__main__":
    main()
