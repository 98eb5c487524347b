"""`make demo`'s command, `simgpu demo`, prints its table with passing checks, and two runs print identical
GPU-side numbers (wave-instructions, lane-ops, GPU time on the virtual clock); only host time may differ."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROW = re.compile(r"^(?P<kernel>.{16})(?P<shape>.{22})\s*(?P<wave_instr>\d+)\s+(?P<lane_ops>\d+)\s+"
                 r"(?P<gpu_time>[\d.]+)us\s+(?P<host_time>[\d.]+)s\s+(?P<check>\S+)$")
GPU_SIDE = ("kernel", "shape", "wave_instr", "lane_ops", "gpu_time")


def _command(queue: str) -> list[str]:
    script = Path(sys.executable).with_name("simgpu")  # the console script `make demo` runs
    base = [str(script)] if script.exists() else [sys.executable, "-m", "wiring.cli"]
    # The compiled examples have tests of their own (tests/compiler/test_training.py); here the kernels repeat.
    return [*base, "demo", "--kernels-only", *(["--queue", queue] if queue != "pm4" else [])]


def _table(stdout: str) -> list[dict]:
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("kernel"))
    assert "wave-instr" in lines[header] and "GPU time" in lines[header] and "host time" in lines[header]
    rows = []
    for line in lines[header + 1:]:
        m = ROW.match(line)
        if m:
            rows.append({k: v.strip() for k, v in m.groupdict().items()})
    return rows


def test_demo_prints_the_table_and_repeats_its_gpu_side_numbers():
    env = {k: v for k, v in os.environ.items() if k != "MOCKGPU"}  # the demo picks MockOS itself
    runs = {(q, i): subprocess.Popen(_command(q), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for q in ("pm4", "aql") for i in range(2)}  # four processes at once: ~one demo's wall time
    tables = {}
    for key, p in runs.items():
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"{key}: {err[-2000:]}"
        assert "SIMULATED gfx1100" in out and f"queue={key[0]}" in out
        tables[key] = _table(out)
        assert [r["kernel"] for r in tables[key]] == ["saxpy", "matmul 256x256"], out
        assert all(r["check"] == "ok" and int(r["wave_instr"]) > 0 and float(r["gpu_time"]) > 0
                   for r in tables[key]), out
    for q in ("pm4", "aql"):
        first, second = ([{k: r[k] for k in GPU_SIDE} for r in tables[q, i]] for i in range(2))
        assert first == second, q
    # Both queues run the same shader code: the same instruction counts (the timestamps bracket different packets).
    assert [(r["wave_instr"], r["lane_ops"]) for r in tables["pm4", 0]] == \
        [(r["wave_instr"], r["lane_ops"]) for r in tables["aql", 0]]
