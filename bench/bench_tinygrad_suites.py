"""tinygrad's own tests, timed on three devices in the same run (issue 29): simgpu (`DEV=KFD+AMD:LLVM` under
`simgpu run`), tinygrad's GPU-free mock (`DEV=MOCKKFD+AMD:LLVM`) and tinygrad's CPU device (`DEV=CPU`, which
simulates no GPU: the floor of tinygrad's own compile and scheduling work). Same source tree, same tests; only
the device differs.

    python -m bench.bench_tinygrad_suites --tinygrad DIR [--python PY] [--suites ops60,tiny,hcq] [--sides ...]

DIR is a tinygrad source checkout (its tests are what runs; nothing of it is copied here); PY a Python with
tinygrad's test dependencies (pytest, hypothesis, torch, numpy). Prints each suite's wall time per side, the
pytest summary, and the ratios simgpu/CPU and mock/simgpu. Skips a suite's CPU side where the suite needs an
AMD device (test_hcq).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

LLVM_BIN = Path("/usr/lib/llvm-19/bin")
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


def command(side: str, py: str, suite: str, cases: list[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that run the cases on one side."""
    _, extra, ndev, _, _ = SUITES[suite]
    env = dict(os.environ, **extra, PATH=f"{LLVM_BIN}:{os.environ.get('PATH', '')}")
    if lib := _libllvm():
        env["LLVM_PATH"] = lib
    pytest = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *cases]
    if side == "simgpu":
        simgpu = shutil.which("simgpu") or str(Path(sys.executable).parent / "simgpu")
        return [simgpu, "run", "--devices", str(ndev), "--", *pytest], dict(env, DEV="KFD+AMD:LLVM")
    if side == "mock":
        return pytest, dict(env, DEV="MOCKKFD+AMD:LLVM")
    return pytest, dict(env, DEV="CPU")


def run_side(side: str, py: str, tg: Path, suite: str, cases: list[str]) -> tuple[float, str]:
    """Wall seconds and pytest's summary line of the cases on one side."""
    argv, env = command(side, py, suite, cases)
    env["PYTHONPATH"] = str(tg)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=tg, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    lines = [ln.strip("= ") for ln in proc.stdout.splitlines() if SUMMARY.search(ln)]
    return wall, lines[-1] if lines else f"no summary (exit {proc.returncode})"


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
    print(f"{'suite':<10} {'side':<7} {'wall s':>8}  summary")
    for suite in args.suites.split(","):
        file, _, _, on_cpu, n = SUITES[suite]
        cases = select_cases(args.python, tg, file, n)
        times = {}
        for side in args.sides.split(","):
            if side == "cpu" and not on_cpu:
                continue
            wall, summary = run_side(side, args.python, tg, suite, cases)
            times[side] = wall
            print(f"{suite:<10} {side:<7} {wall:8.1f}  {summary}", flush=True)
        ratios = []
        if "simgpu" in times and "cpu" in times:
            ratios.append(f"simgpu/cpu {times['simgpu'] / times['cpu']:.2f}")
        if "simgpu" in times and "mock" in times:
            ratios.append(f"mock/simgpu {times['mock'] / times['simgpu']:.2f}")
        if ratios:
            print(f"{suite:<10} {'ratios':<7} {'':>8}  {', '.join(ratios)}")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
