"""The native gfx1100 backend against the LLVM backend, on the simulated gfx1100.

    python -m bench.bench_native [--kernels N] [--table path.tsv] [--markdown path.md]

1. Cold start: `from compiler import Tensor; (Tensor([1,2,3])+1).numpy()` in a fresh process with the native
   backend and an empty kernel cache (bytecode cached, as on a user's machine): wall and CPU seconds, and
   whether llvmlite was imported.
2. Compile time per kernel with each backend (the kernels of bench.bench_compiler's Tensor programs): lower +
   linearize + backend with no cache and no proof, as a user's first call; CPU and wall time, median and mean;
   and (part 3) the backend's CPU time for every ops-suite kernel.
3. Dynamic wave-instructions per ops-suite kernel: the compiler's ops suite (tests/compiler/test_ops_*.py and
   test_training.py) runs once in this process with the LLVM backend, recording every distinct linearized
   kernel; each is then compiled by both backends and launched on the same random inputs, and the simulator's
   counter gives the wave-instructions each executed. Reported: the geometric mean of native / LLVM per kernel
   family (E elementwise, R serial reduction, G group reduction, M tiled matmul, W matrix cores) and overall,
   the extremes, and (--table) every kernel.

Runs on the simulator (it sets MOCKGPU=1).
"""

from __future__ import annotations

import argparse
import math
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("MOCKGPU", "1")

ROOT = pathlib.Path(__file__).resolve().parents[1]
COLD = "import sys; from compiler import Tensor; print((Tensor([1,2,3])+1).numpy()); print('llvmlite' in sys.modules)"


def cold_start(runs: int = 3) -> dict:
    """Best wall and CPU seconds of the cold-start program (module docstring) over a few runs."""
    import resource
    import tempfile
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "SIMGPU_CHECK_OOB")}
    env.update(MOCKGPU="1", SIMGPU_BACKEND="native")
    subprocess.run([sys.executable, "-c", "import compiler, runtime, mockgpu"], env=env, cwd=ROOT, check=True)
    best = None
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            env["SIMGPU_CACHE_DIR"] = tmp
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", COLD], env=env, cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.split()
            wall = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        row = {"wall": wall, "cpu": cpu, "llvmlite": out[-1] == "True", "output": " ".join(out[:-1])}
        if best is None or wall < best["wall"]:
            best = row
    return best


def compile_times(repeat: int = 3) -> dict[str, dict]:
    """Per backend, per kernel of bench.bench_compiler's Tensor programs: seconds to lower + linearize and to
    compile with the backend, as a user's first call does (no cache, no proof), wall and CPU time (the CPU time of
    this process: on a shared machine wall time also counts other jobs), the best of `repeat` runs."""
    from bench.bench_compiler import _programs
    from compiler import backend
    from compiler.kernel import linear_kernel
    from compiler.schedule import schedule
    asts = [i.ast for t in _programs().values() for i in schedule([t.lazydata.base]) if i.kind == "kernel"]
    out = {}
    for name in backend.available("AMD"):
        be = backend.get(name)
        rows = {"lower": [], "backend": [], "wall": [], "cpu": []}
        for ast in asts:
            best = None
            for _ in range(repeat):
                w0, c0 = time.perf_counter(), time.process_time()
                k = linear_kernel(ast, be)
                c1 = time.process_time()
                be.compile(k)
                w2, c2 = time.perf_counter(), time.process_time()
                if best is None or c2 - c0 < best[3]:
                    best = (c1 - c0, c2 - c1, w2 - w0, c2 - c0)
            for key, v in zip(rows, best, strict=True):
                rows[key].append(v)
        out[name] = rows | {"kernels": len(asts)}
    return out


# ---- dynamic instruction counts -----------------------------------------------------------------------------------
class _Collector:
    """A pytest plugin recording every linearized kernel the compiler makes while the ops suite runs."""

    def __init__(self):
        self.kernels: dict[str, object] = {}

    def pytest_sessionstart(self, session):
        import compiler.kernel as kernel
        from compiler.ir.printer import format_kernel
        real = kernel.linear_kernel

        def record(ast, be):
            k = real(ast, be)
            self.kernels.setdefault(format_kernel(k), k)
            return k
        kernel.linear_kernel = record


def ops_suite_kernels() -> list:
    """The distinct kernels of the ops suite (module docstring), in the order they were first made."""
    import pytest
    tests = sorted(str(p) for p in (ROOT / "tests" / "compiler").glob("test_ops_*.py"))
    tests.append(str(ROOT / "tests" / "compiler" / "test_training.py"))
    saved = {k: os.environ.get(k) for k in ("SIMGPU_CHECK_OOB", "SIMGPU_DIFFERENTIAL")}
    os.environ.update(SIMGPU_CHECK_OOB="0", SIMGPU_DIFFERENTIAL="0")
    col = _Collector()
    try:
        pytest.main(["-qq", "-p", "no:xdist", "-p", "no:cacheprovider", "-k", "llvm", "--no-header", "-rN",
                     "--tb=no", "-W", "ignore::pytest.PytestAssertRewriteWarning", *tests], plugins=[col])
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return list(col.kernels.values())


def _inputs(k, rng: np.random.Generator) -> list[np.ndarray]:
    """Random bytes for every buffer of k: floats in [0.5, 2), integers in [1, 4], bools either way."""
    out = []
    for p in k.params:
        n = max(p.size, 1)
        dt = p.base
        if dt.is_float:
            vals = rng.uniform(0.5, 2.0, n)
            if dt.name == "bfloat16":
                arr = (vals.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            else:
                arr = vals.astype(dt.storage)
        elif dt.kind == "b":
            arr = rng.integers(0, 2, n).astype(np.uint8)
        else:
            arr = rng.integers(1, 5, n).astype(dt.storage)
        out.append(arr)
    return out


def instruction_counts(kernels: list) -> list[dict]:
    """Per kernel: name, wave-instructions with each backend (None when it faulted on random inputs)."""
    from compiler import backend, device
    from compiler.kernel import Program
    dev = device.get("AMD")
    counters = dev.rt.os.simulator(dev.rt.gpu_id).engine.counters
    rng = np.random.default_rng(0)
    rows = []
    for n, k in enumerate(kernels):
        data = _inputs(k, rng)
        bufs = [dev.alloc(a.nbytes) for a in data]
        row = {"name": k.name}
        for name in ("llvm", "native"):
            for b, a in zip(bufs, data, strict=True):
                b.copyin(a)
            c0 = time.process_time()
            binary = backend.get(name).compile(k)
            row[f"{name}_ms"] = (time.process_time() - c0) * 1e3
            prog = Program(k.name, binary, k.geometry, len(k.params), name, f"bench{n}-{name}")
            w0 = counters.wave_instructions
            try:
                dev.launch(prog, bufs).wait()
                row[name] = counters.wave_instructions - w0
            except Exception:  # noqa: BLE001 - a kernel whose random inputs fault (a gather): left out
                row[name] = None
        for b in bufs:
            b.release()
        rows.append(row)
    return rows


def geomean(xs: list[float]) -> float:
    """Geometric mean."""
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else float("nan")


def summarize(rows: list[dict]) -> dict:
    """Geometric mean ratio native/LLVM per kernel family and overall; the extremes."""
    ok = [r | {"ratio": r["native"] / r["llvm"]} for r in rows if r.get("llvm") and r.get("native")]
    fams: dict[str, list[float]] = {}
    for r in ok:
        fams.setdefault(r["name"][0], []).append(r["ratio"])
    return {"kernels": len(ok), "skipped": len(rows) - len(ok), "geomean": geomean([r["ratio"] for r in ok]),
            "families": {f: (len(v), geomean(v)) for f, v in sorted(fams.items())},
            "worst": sorted(ok, key=lambda r: -r["ratio"])[:8], "best": sorted(ok, key=lambda r: r["ratio"])[:5],
            "native_total": sum(r["native"] for r in ok), "llvm_total": sum(r["llvm"] for r in ok),
            "compile_ms": {b: (statistics.median(v), max(v)) for b in ("native", "llvm")
                           if (v := [r[f"{b}_ms"] for r in rows if f"{b}_ms" in r])}}


def markdown_table(rows: list[dict]) -> str:
    """Per kernel name (the ops suite has several kernels of one name): kernels, wave-instructions with each
    backend (summed) and the geometric mean of native / LLVM, as a markdown table."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("llvm") and r.get("native"):
            by.setdefault(r["name"], []).append(r)
    out = ["| kernel | n | LLVM | native | native / LLVM (geo. mean) |", "|---|---|---|---|---|"]
    for name, rs in sorted(by.items()):
        out.append(f"| {name} | {len(rs)} | {sum(r['llvm'] for r in rs)} | {sum(r['native'] for r in rs)} | "
                   f"{geomean([r['native'] / r['llvm'] for r in rs]):.3f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    """Print the three parts."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", type=int, default=0, help="measure only the first N ops-suite kernels")
    ap.add_argument("--table", help="write every kernel's counts to this TSV file")
    ap.add_argument("--markdown", help="write the counts per kernel name to this file as a markdown table")
    args = ap.parse_args(argv)
    c = cold_start()
    print(f"cold start, native backend, empty kernel cache: {c['wall']:.2f} s wall, {c['cpu']:.2f} s CPU "
          f"(llvmlite imported: {c['llvmlite']}; printed {c['output']})")
    print("\ncompile time per kernel (lower + linearize + backend, no cache, no proof), ms: median / mean / max")
    for name, t in compile_times().items():
        med = {k: statistics.median(v) * 1e3 for k, v in t.items() if k != "kernels"}
        mean = {k: statistics.fmean(v) * 1e3 for k, v in t.items() if k != "kernels"}
        print(f"  {name:<7} CPU {med['cpu']:6.2f} / {mean['cpu']:6.2f} / {max(t['cpu']) * 1e3:6.1f}   wall "
              f"{med['wall']:6.2f} / {mean['wall']:6.2f}   (of the CPU: lower+linearize {med['lower']:.2f}, backend "
              f"{med['backend']:.2f} / {mean['backend']:.2f}; {t['kernels']} kernels of bench.bench_compiler)")
    t0 = time.perf_counter()
    kernels = ops_suite_kernels()
    if args.kernels:
        kernels = kernels[:args.kernels]
    rows = instruction_counts(kernels)
    s = summarize(rows)
    print(f"\ndynamic wave-instructions per ops-suite kernel, native / LLVM ({s['kernels']} kernels, {s['skipped']} "
          f"left out: faulted on random inputs; {time.perf_counter() - t0:.0f} s)")
    for fam, (n, g) in s["families"].items():
        print(f"  {fam}: {n:5d} kernels, geometric mean {g:.3f}")
    print(f"  all: geometric mean {s['geomean']:.3f}; total {s['native_total']} / {s['llvm_total']} = "
          f"{s['native_total'] / s['llvm_total']:.3f}")
    for b, (med, mx) in s["compile_ms"].items():
        print(f"  backend compile CPU time per ops-suite kernel, {b}: median {med:.2f} ms, max {mx:.1f} ms")
    print("  largest ratios: " + ", ".join(f"{r['name']} {r['native']}/{r['llvm']}" for r in s["worst"]))
    print("  smallest ratios: " + ", ".join(f"{r['name']} {r['native']}/{r['llvm']}" for r in s["best"]))
    if args.markdown:
        pathlib.Path(args.markdown).write_text(markdown_table(rows) + "\n")
    if args.table:
        with open(args.table, "w") as f:
            f.write("kernel\tllvm\tnative\tllvm_ms\tnative_ms\n")
            for r in rows:
                f.write(f"{r['name']}\t{r.get('llvm')}\t{r.get('native')}\t{r.get('llvm_ms', 0):.2f}\t"
                        f"{r.get('native_ms', 0):.2f}\n")


if __name__ == "__main__":
    main()
