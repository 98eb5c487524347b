"""tinygrad's own tests, timed on three devices in the same run (issue 29): simgpu (`DEV=KFD+AMD:LLVM` under
`simgpu run`), tinygrad's GPU-free mock (`DEV=MOCKKFD+AMD:LLVM`) and tinygrad's CPU device (`DEV=CPU`, which
simulates no GPU: the floor of tinygrad's own compile and scheduling work). Same source tree, same tests; only
the device differs.

    python -m bench.bench_tinygrad_suites --tinygrad DIR [--python PY] [--suites ops60,tiny,hcq] [--sides ...]

DIR is a tinygrad source checkout (its tests are what runs; nothing of it is copied here); PY a Python with
tinygrad's test dependencies (pytest, hypothesis, torch, numpy). Prints each suite's wall time per side, its CPU
time (user + system of the side's processes: on a machine shared with other work the steadier figure), the load
average when it ended, the pytest summary, and the ratios simgpu/CPU and mock/simgpu. Skips a suite's CPU side
where the suite needs an AMD device (test_hcq). The simgpu side runs this checkout's simgpu (`python -m
wiring.cli run`, the checkout on the server's PYTHONPATH after tinygrad's), not whatever `simgpu` is installed.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

LLVM_BIN = Path("/usr/lib/llvm-19/bin")
SIMGPU_SRC = Path(__file__).resolve().parents[1]
HCQ2_ENV = {"HCQ2": "1", "HCQ_RUNTIME_DEV": "PYTHON", "FORWARD_ONLY": "1"}

# suite -> (test file, extra environment, GPUs for simgpu, runs on the CPU device, cases: None = whole file)
SUITES = {
    "ops60": ("test/backend/test_ops.py", {"SKIP_SLOW_TEST": "1"}, 1, True, 60),
    "tiny": ("test/test_tiny.py", {}, 1, True, None),
    "tiny_hcq2": ("test/test_tiny.py", HCQ2_ENV, 1, False, None),
    "hcq": ("test/device/test_hcq.py", {"SKIP_SLOW_TEST": "1"}, 2, False, None),
    "jit": ("test/unit/test_jit.py", HCQ2_ENV, 1, False, None),
    "dtype_alu": ("test/backend/test_dtype_alu.py", {"SKIP_SLOW_TEST": "1"}, 1, True, None),
}
SUMMARY = re.compile(r"\d+ (passed|failed|skipped|error)")


def _libllvm() -> str | None:
    for f in ("/usr/lib/llvm-19/lib/libLLVM.so.19.1", "/usr/lib/llvm-19/lib/libLLVM-19.so",
              "/usr/lib/llvm-19/lib/libLLVM.so"):
        if Path(f).exists():
            return f
    return None


def select_cases(py: str, tg: Path, file: str, n: int | None) -> list[str]:
    """The suite's test ids: the whole file, or n ids spread evenly over its sorted collection (a fixed set)."""
    if n is None:
        return [file]
    out = subprocess.run([py, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", file], cwd=tg,
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(tg), DEV="CPU"))
    ids = sorted(line for line in out.stdout.splitlines() if "::" in line and "masked_select" not in line)
    if not ids:
        raise SystemExit(f"no tests collected from {file}: {out.stderr[-500:]}")
    step = max(1, len(ids) // n)
    return ids[::step][:n]


def command(side: str, py: str, tg: Path, suite: str, cases: list[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that run the cases on one side."""
    _, extra, ndev, _, _ = SUITES[suite]
    env = dict(os.environ, **extra, PATH=f"{LLVM_BIN}:{os.environ.get('PATH', '')}", PYTHONPATH=str(tg))
    if lib := _libllvm():
        env["LLVM_PATH"] = lib
    pytest = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *cases]
    if side == "simgpu":
        # This checkout's simgpu, whatever an installed one points at: the server is `python -m wiring.cli` with
        # the checkout on its PYTHONPATH (after tinygrad's, so the client imports tinygrad from DIR).
        server = [sys.executable, "-m", "wiring.cli", "run", "--devices", str(ndev), "--"]
        return [*server, *pytest], dict(env, DEV="KFD+AMD:LLVM", PYTHONPATH=f"{tg}{os.pathsep}{SIMGPU_SRC}")
    if side == "mock":
        return pytest, dict(env, DEV="MOCKKFD+AMD:LLVM")
    return pytest, dict(env, DEV="CPU")


def run_side(side: str, py: str, tg: Path, suite: str, cases: list[str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of every process of the side that was waited for: pytest, and
    for simgpu the `simgpu run` server too) and pytest's summary line of the cases on one side."""
    argv, env = command(side, py, tg, suite, cases)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=tg, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    lines = [ln.strip("= ") for ln in proc.stdout.splitlines() if SUMMARY.search(ln)]
    return wall, cpu, lines[-1] if lines else f"no summary (exit {proc.returncode})"


def ratios(times: dict[str, tuple[float, float]]) -> str:
    """simgpu/cpu and mock/simgpu, by wall time and by CPU time."""
    out = []
    for a, b in (("simgpu", "cpu"), ("mock", "simgpu")):
        if a in times and b in times:
            (wa, ca), (wb, cb) = times[a], times[b]
            out.append(f"{a}/{b} {wa / wb:.2f} (CPU {ca / cb:.2f})")
    return ", ".join(out)


def main(argv: list[str] | None = None) -> None:
    """Run the chosen suites on the chosen sides and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tinygrad", type=Path, required=True, help="a tinygrad source checkout")
    ap.add_argument("--python", default=sys.executable, help="a Python with tinygrad's test dependencies")
    ap.add_argument("--suites", default="ops60,tiny")
    ap.add_argument("--sides", default="simgpu,mock,cpu")
    args = ap.parse_args(argv)
    tg = args.tinygrad.resolve()
    load = os.getloadavg()[0]
    print(f"tinygrad suites at {tg} (load {load:.1f}, {os.cpu_count()} CPUs)")
    print(f"{'suite':<10} {'side':<7} {'wall s':>8} {'CPU s':>8} {'load':>5}  summary")
    for suite in args.suites.split(","):
        file, _, _, on_cpu, n = SUITES[suite]
        cases = select_cases(args.python, tg, file, n)
        times = {}
        for side in args.sides.split(","):
            if side == "cpu" and not on_cpu:
                continue
            wall, cpu, summary = run_side(side, args.python, tg, suite, cases)
            times[side] = wall, cpu
            print(f"{suite:<10} {side:<7} {wall:8.1f} {cpu:8.1f} {os.getloadavg()[0]:5.1f}  {summary}", flush=True)
        if r := ratios(times):
            print(f"{suite:<10} {'ratios':<7} {'':>8} {'':>8} {'':>5}  {r}")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
