"""`simgpu stats -- CMD`: what the simulated GPUs did while CMD ran: dispatches, wave-instructions, lane-ops,
the virtual clock and the per-opcode histogram of the shader engine (simgpu.shader.Counters).

CMD runs with MOCKGPU=1 and SIMGPU_STATS=<file>; every MockOS that the wiring layer makes in it (the process's
OS, the demo's) writes its GPUs' counters there when the process exits.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile

from simgpu import settings

STATS_ENV = "SIMGPU_STATS"
_watched: list = []


def watch(mock) -> None:
    """Write `mock`'s GPU counters to $SIMGPU_STATS at exit (nothing when it is not set)."""
    if not settings.get(STATS_ENV):
        return
    if not _watched:
        atexit.register(_dump)
    _watched.append(mock)


def snapshot(mock) -> list[dict]:
    """The counters and clock of every GPU of a MockOS."""
    out = []
    for node in mock.nodes:
        gpu = node.gpu
        out.append({"gpu": gpu.name, "gpu_id": node.gpu_id, **gpu.engine.counters.snapshot(),
                    "cycles": gpu.clock.cycles, "timestamp": gpu.clock.timestamp()})
    return out


def _dump() -> None:
    with open(settings.get(STATS_ENV), "a") as f:
        for mock in _watched:
            for gpu in snapshot(mock):
                f.write(json.dumps(gpu) + "\n")


def format_stats(gpus: list[dict], top: int = 20) -> str:
    """A table per GPU: totals, then the `top` opcodes by wave-instructions (top=0: all of them)."""
    lines = []
    for g in gpus:
        wi, lo = g["wave_instructions"], g["lane_ops"]
        valu = sum(n for name, n in g["per_opcode"].items() if name.startswith("v_"))
        lines.append(f"{g['gpu']} (gpu_id {g['gpu_id']}): {g['dispatches']} dispatches, {wi} wave-instructions "
                     f"({valu} VALU), {lo} lane-ops ({lo / valu if valu else 0:.1f} active lanes per VALU "
                     f"instruction), {g['cycles']} cycles = {g['timestamp'] / 100:.2f} us of virtual GPU time")
        ops = sorted(g["per_opcode"].items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ops[:top] if top else ops
        width = max((len(name) for name, _ in shown), default=0)
        for name, n in shown:
            lines.append(f"  {name:<{width}}  {n:>12}  {100 * n / wi if wi else 0:5.1f}%")
        if len(shown) < len(ops):
            rest = sum(n for _, n in ops[len(shown):])
            lines.append(f"  {f'({len(ops) - len(shown)} more opcodes)':<{width}}  {rest:>12}  "
                         f"{100 * rest / wi if wi else 0:5.1f}%")
    return "\n".join(lines) if lines else "no simulated GPU was used"


def stats_main(cmd: list[str], top: int = 20, out=None) -> int:
    """Run `cmd` on the simulated GPU and print its GPUs' counters; the command's exit status."""
    out = out or sys.stdout
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    if not cmd:
        print("simgpu stats: nothing to run (usage: simgpu stats -- python script.py)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stats.jsonl")
        rc = subprocess.call(cmd, env=dict(os.environ, MOCKGPU="1", **{STATS_ENV: path}))
        gpus = [json.loads(line) for line in open(path)] if os.path.exists(path) else []
    print(format_stats(gpus, top), file=out)
    return rc
