"""The JIT tier against the interpreter and against the CPU, on kernels from real compilers.

    python -m bench.bench_jit [--arch gfx1100] [--profiles host,avx2] [--repeats 5] [--no-warm]
                              [--no-first-launch] [--no-compile-times] [--busy N]

`--arch gfx1201` runs every row on a simulated gfx1201 with the corpus clang-19 compiled for it
(tests/data/opencl/corpus_gfx1201.so; the compile-time rows then leave out the llvmlite corpus, which is gfx1100's).

Each row runs per *profile*: `host` (the JIT and the C loop compiled for this CPU) and `avx2` (both compiled
for an AVX2-only CPU, LLVM's `haswell`: SIMGPU_JIT_CPU for the JIT, -march for clang), which reproduces on an
AVX-512 machine what most laptops and CI runners get (EXEC then is no mask register); skipped on a host
without AVX2 and FMA.

- A naive 256^3 f32 matmul and a 4M-element saxpy compiled by clang-19 from OpenCL
  (tests/data/opencl/corpus.cl): warm launches in the interpreter and in the JIT tier, and the same
  matmul loop compiled by clang-19 -O2 -march=native (or the profile's CPU), run through ctypes, side by side.
- First launches, each in a fresh process with an empty disk cache but for the host's measured compile
  costs (simgpu/shader/jit/costs.py; left by two earlier processes, as a user's machine has them): the
  interpreter alone, and the default tier (compiled when hot: translation and LLVM in the JIT's worker
  process, beside the launch when the measured costs say that pays or the dispatch has run long, else after
  it; the launching thread loads the code when that pays) - the second must never be slower. The matmul,
  the saxpy, and one 16x16 tile of the matmul (8 waves: Python-bound), each as a process's first kernel, and
  the matmul and the saxpy as its second ("@2": the tile's compile ran, its worker started).
  Wall time, the launching thread's CPU time and the process's, best of --repeats, the two interleaved.
- Compile time per kernel over the corpora (llvmlite corpus and OpenCL corpus): cold (empty disk
  cache) and from the disk cache (a fresh process's memory cache).

`--busy N` runs N processes that only spin beside the whole run (issue 29's "load 2 on 2 cores: two other busy
processes"): run it once without and once with `--busy 2` to compare a quiet host with a loaded one.

Times are the best of several warm launches, in this process's CPU time (time.process_time: other
processes' work on a shared machine is not counted; the first-launch rows add wall time and the launching
thread's CPU time, because the compile then works in other threads). Ratios are measured in the same run.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from simgpu.shader.jit import build as jit_build
from simgpu.shader.jit import jit_tier
from simgpu.testbed import Testbed

ROOT = Path(__file__).resolve().parent.parent
ARCH = "gfx1100"  # the simulated GPU's architecture (--arch)


def corpus_path(arch: str) -> Path:
    """The OpenCL corpus clang-19 compiled for `arch` (tools/gen_opencl_corpus.py)."""
    name = "corpus.so" if arch == "gfx1100" else f"corpus_{arch}.so"
    return ROOT / "tests" / "data" / "opencl" / name
CLANG = "/usr/lib/llvm-19/bin/clang"
N_MATMUL, N_SAXPY = 256, 1 << 22
# profile -> (SIMGPU_JIT_CPU, clang's -march for the C loop)
PROFILES = {"host": ("", "native"), "avx2": ("haswell", "haswell")}

NATIVE_MATMUL = r"""
void matmul(float *c, const float *a, const float *b, int n) {
  for (int row = 0; row < n; row++)
    for (int col = 0; col < n; col++) {
      float acc = 0.0f;
      for (int k = 0; k < n; k++) acc += a[row * n + k] * b[k * n + col];
      c[row * n + col] = acc;
    }
}
"""


def best_cpu(fn, repeats: int = 5) -> float:
    """Best process CPU time of `repeats` calls after one warm-up."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def testbed(mode: str) -> Testbed:
    tb = Testbed(vram_size=1 << 30, arch=ARCH)
    tb.engine.jit = jit_tier(mode) if mode != "off" else None
    return tb


class Workload:
    """The OpenCL matmul and saxpy with their buffers on one testbed."""

    def __init__(self, tb: Testbed):
        rng = np.random.default_rng(0)
        self.tb = tb
        self.k = tb.load(corpus_path(tb.arch).read_bytes())
        n = N_MATMUL
        self.a, self.b = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
        self.va, self.vb, self.vc = tb.upload(self.a), tb.upload(self.b), tb.alloc(4 * n * n)
        self.x, self.y = rng.random(N_SAXPY, np.float32), rng.random(N_SAXPY, np.float32)
        self.vx, self.vy = tb.upload(self.x), tb.upload(self.y)

    def matmul(self) -> None:
        n = N_MATMUL
        self.tb.launch(self.k["matmul"], [self.vc, self.va, self.vb, n], (n // 16, n // 16), (16, 16))

    def tile(self) -> None:
        """The matmul's first 16x16 tile only: one workgroup, 8 waves (the interpreter runs Python for them,
        with vector operations too small for numpy to release the GIL)."""
        n = N_MATMUL
        self.tb.launch(self.k["matmul"], [self.vc, self.va, self.vb, n], (1, 1), (16, 16))

    def saxpy(self) -> None:
        self.tb.launch(self.k["saxpy"], [self.vy, self.vx, np.float32(2.5).view(np.uint32).item(), N_SAXPY],
                       (N_SAXPY // 256,), (256,))

    def result(self) -> bytes:
        return self.tb.read(self.vc, 4 * N_MATMUL * N_MATMUL)


def runs_here(profile: str) -> bool:
    """Whether this CPU runs the code of `profile` (the avx2 profile: AVX2, FMA, BMI2, F16C)."""
    if profile != "avx2":
        return True
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return False
    return {"avx2", "fma", "bmi2", "f16c"} <= set(flags.split())


class Profile:
    """SIMGPU_JIT_CPU set for `profile` while in the block (the JIT compiles for that CPU)."""

    def __init__(self, profile: str):
        self.value = PROFILES[profile][0]

    def __enter__(self):
        self.saved = os.environ.get("SIMGPU_JIT_CPU")
        os.environ["SIMGPU_JIT_CPU"] = self.value
        return self

    def __exit__(self, *exc):
        if self.saved is None:
            os.environ.pop("SIMGPU_JIT_CPU", None)
        else:
            os.environ["SIMGPU_JIT_CPU"] = self.saved


def native_matmul(march: str = "native") -> tuple[float, np.ndarray] | None:
    """(best seconds, C) of the C loop built by clang-19 -O2 -march=`march`, or None without clang-19."""
    if not Path(CLANG).exists():
        return None
    with tempfile.TemporaryDirectory() as d:
        src, lib = Path(d) / "mm.c", Path(d) / "mm.so"
        src.write_text(NATIVE_MATMUL)
        subprocess.run([CLANG, "-O2", f"-march={march}", "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
        so = ctypes.CDLL(str(lib))
    n = N_MATMUL
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
    c = np.zeros((n, n), np.float32)
    fp = ctypes.POINTER(ctypes.c_float)
    args = (c.ctypes.data_as(fp), a.ctypes.data_as(fp), b.ctypes.data_as(fp), ctypes.c_int(n))
    return best_cpu(lambda: so.matmul(*args)), c


def warm_rows(profiles: list[str]) -> None:
    """Warm launches of both tiers and the C loop, per profile (the profiles interleaved: each measurement
    of one next to the same of the other, so both see the same load)."""
    rows = {}
    for p in profiles:
        with Profile(p):
            interp, jit = Workload(testbed("off")), Workload(testbed("eager"))
            wi = {}
            for name in ("matmul", "saxpy"):
                c = interp.tb.engine.counters
                w0 = c.wave_instructions
                getattr(interp, name)()
                getattr(jit, name)()  # (both tiers run every kernel equally often: their results are compared)
                wi[name] = c.wave_instructions - w0
        rows[p] = dict(interp=interp, jit=jit, wi=wi)
    times = {p: {} for p in profiles}
    for key in ("matmul", "saxpy"):
        for p in profiles:
            times[p][key] = best_cpu(getattr(rows[p]["interp"], key), 5), best_cpu(getattr(rows[p]["jit"], key), 5)
        if key == "matmul":
            for p in profiles:
                times[p]["c"] = native_matmul(PROFILES[p][1])
    print(f"warm launches on {ARCH} (best CPU time) interpreter      JIT   speed-up  JIT wave-inst/s")
    for p in profiles:
        interp, jit, wi = rows[p]["interp"], rows[p]["jit"], rows[p]["wi"]
        same = (interp.result() == jit.result()
                and interp.tb.read(interp.vy, 4 * N_SAXPY) == jit.tb.read(jit.vy, 4 * N_SAXPY)
                and interp.tb.engine.counters.snapshot() == jit.tb.engine.counters.snapshot())
        print(f" profile {p} (SIMGPU_JIT_CPU={PROFILES[p][0] or '(host)'})")
        for label, key in (("matmul 256^3 f32 (clang-19 OpenCL)", "matmul"),
                           ("saxpy 4M f32 (clang-19 OpenCL)", "saxpy")):
            ti, tj = times[p][key]
            print(f"  {label:36s} {ti * 1e3:9.1f} ms {tj * 1e3:7.1f} ms  x{ti / tj:6.1f}   {wi[key] / tj / 1e6:7.1f} M")
        native = times[p]["c"]
        if native is not None:
            t_c, c = native
            exact = np.frombuffer(jit.result(), np.float32).reshape(N_MATMUL, N_MATMUL)
            print(f"  matmul loop in C (clang-19 -O2 -march={PROFILES[p][1]}): {t_c * 1e3:.1f} ms;"
                  f" JIT / C = x{times[p]['matmul'][1] / t_c:.2f}"
                  f" (results {'identical' if np.array_equal(exact, c) else 'differ'})")
        print(f"  tiers agree: {'yes' if same else 'NO'}")


def first_launch(name: str, mode: str) -> tuple[float, float, float]:
    """One first launch of workload `name` in this (fresh) process: (wall, launching thread CPU, process
    CPU) seconds. The default tier then waits for a compile it started, so the process's CPU counts what it
    took of this process (the worker's CPU is its own).
    `name` "<kernel>@2": the kernel is the process's second (the tile ran before, in the same tier, compiled beside
    its launch, and its compile ended: the worker runs; nothing was taken up)."""
    name, _, second = name.partition("@")
    if second:
        before = Workload(testbed(mode))
        os.environ["SIMGPU_JIT_BACKGROUND"] = "now"  # (a one-batch 0.25 s launch compiles after itself by default)
        try:
            before.tile()
        finally:
            os.environ.pop("SIMGPU_JIT_BACKGROUND", None)
        for state in (before.tb.engine.jit.kernels.values() if before.tb.engine.jit is not None else ()):
            if state.future is not None:
                state.future.result()
    w = Workload(testbed(mode))
    t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
    getattr(w, name)()
    wall, thread = time.perf_counter() - t0, time.thread_time() - c0
    state = next(iter(w.tb.engine.jit.kernels.values()), None) if w.tb.engine.jit is not None else None
    if state is not None and state.future is not None:
        state.future.result()
    return wall, thread, time.process_time() - p0


def measured_costs(profile: str) -> bytes | None:
    """The host's compile costs (simgpu/shader/jit/costs.py) for `profile` as a fresh process finds them once
    earlier processes compiled: the entry processes that compiled the matmul and the saxpy at once and the tile
    in the background left (None if they left none: no disk cache)."""
    with tempfile.TemporaryDirectory(prefix="simgpu-jit-costs-") as cache:
        env = {**os.environ, "SIMGPU_JIT_CACHE": cache, "SIMGPU_JIT_CPU": PROFILES[profile][0]}
        for name in ("matmul", "saxpy"):  # (the matmul's process measures a start, the saxpy's another)
            subprocess.run([sys.executable, "-m", "bench.bench_jit", "--first-launch", name, "eager", ARCH],
                           cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        # and a background compile, in the JIT's worker: its start (as a user's earlier processes measured it)
        subprocess.run([sys.executable, "-m", "bench.bench_jit", "--first-launch", "tile", "hot", ARCH], cwd=ROOT,
                       env={**env, "SIMGPU_JIT_BACKGROUND": "now"}, capture_output=True, text=True, check=True)
        path = Path(cache) / "host" / "costs.msgpack"
        return path.read_bytes() if path.exists() else None


def first_launch_rows(profiles: list[str], repeats: int = 5) -> None:
    """Each first launch in a fresh process with an empty JIT disk cache (what a program's first kernel pays: the
    worker's start, and the take-up's loading, which needs no llvmlite in this process): the interpreter alone vs
    the default tier
    (compiled when hot), the best of `repeats` (the two interleaved, so both see the same load). The host's
    measured compile costs (costs.py) stay where they are: a user's first launch has them once
    any earlier process compiled."""
    rows = []
    for p in profiles:
        costs = measured_costs(p)
        for name in ("matmul", "saxpy", "tile", "matmul@2", "saxpy@2"):
            best = {mode: [float("inf")] * 3 for mode in ("off", "hot")}
            for _ in range(repeats):
                for mode in ("off", "hot"):
                    with tempfile.TemporaryDirectory(prefix="simgpu-jit-bench-") as cache:
                        if costs is not None:
                            (Path(cache) / "host").mkdir(mode=0o700)
                            (Path(cache) / "host" / "costs.msgpack").write_bytes(costs)
                        env = {**os.environ, "SIMGPU_JIT_CACHE": cache, "SIMGPU_JIT_CPU": PROFILES[p][0]}
                        cmd = [sys.executable, "-m", "bench.bench_jit", "--first-launch", name, mode, ARCH]
                        out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
                    got = [float(x) for x in out.split()[-3:]]
                    best[mode] = [min(a, b) for a, b in zip(best[mode], got, strict=True)]
            rows.append((p, name, best["off"], best["hot"]))
    print(f"first launch on {ARCH} (fresh process, nothing cached, best of {repeats})  wall / launching thread CPU /"
          " process CPU")
    for p, name, a, b in rows:
        print(f"  {p:4s} {name:9s} interpreter  {a[0] * 1e3:7.1f} / {a[1] * 1e3:7.1f} / {a[2] * 1e3:7.1f} ms")
        print(f"  {p:4s} {name:9s} default tier {b[0] * 1e3:7.1f} / {b[1] * 1e3:7.1f} / {b[2] * 1e3:7.1f} ms"
              f"  {'ok' if b[0] <= a[0] * 1.05 and b[1] <= a[1] * 1.05 else 'SLOWER'}")


def _corpus_launches():
    """(name, function launching it on a testbed) for every kernel of the two corpora (on gfx1201: the OpenCL
    corpus's only)."""
    from compiler.samples import corpus
    out = []
    for k in corpus() if ARCH == "gfx1100" else ():
        code = k.code_object()

        def run(tb, k=k, code=code):
            args = k.inputs(np.random.default_rng(0))
            vas = [tb.upload(a) if isinstance(a, np.ndarray) else a for a in args]
            tb.launch(tb.load(code)[k.name], vas, k.grid, k.block, k.shared)
        out.append((k.name, run))
    so = corpus_path(ARCH).read_bytes()

    def ocl(name, args, grid, block):
        def run(tb):
            vas = [tb.upload(a) if isinstance(a, np.ndarray) else a for a in args]
            tb.launch(tb.load(so)[name], vas, grid, block)
        return (f"ocl:{name}", run)
    f = np.random.default_rng(0).random(1024).astype(np.float32)
    u = np.arange(1, 1025, dtype=np.uint32)
    out += [ocl("saxpy", [f.copy(), f, 1, 1024], (4,), (256,)),
            ocl("group_sum", [np.zeros(4, np.int32), u.view(np.int32)], (4,), (256,)),
            ocl("histogram", [np.zeros(16, np.int32), u, 1024], (4,), (256,)),
            ocl("float_ops", [np.zeros(9 * 256, np.float32), f[:256], f[256:512], f[512:768]], (1,), (256,)),
            ocl("collatz", [np.zeros(256, np.int32), u[:256]], (2,), (128,)),
            ocl("matmul", [np.zeros(1024, np.float32), f, f, 32], (2, 4), (16, 8)),
            ocl("wave_ops", [np.zeros(3 * 256, np.uint32), u[:256]], (1,), (256,)),
            ocl("private_array", [np.zeros(256, np.int32), u[:256].view(np.int32)], (2,), (128,))]
    return out


def compile_time_rows(profiles: list[str]) -> None:
    for p in profiles:
        with Profile(p):
            print(f" profile {p}")
            _compile_times()


def _compile_times() -> None:
    launches = _corpus_launches()
    saved = os.environ.get("SIMGPU_JIT_CACHE")
    cache = tempfile.mkdtemp(prefix="simgpu-jit-bench-")
    try:
        os.environ["SIMGPU_JIT_CACHE"] = cache
        results, translate = {}, []
        for phase in ("cold", "disk"):
            jit_build._COMPILED.clear()
            secs = []
            for _name, run in launches:
                tb = testbed("eager")
                run(tb)
                stats = tb.engine.jit.stats
                secs += [a + b for a, b in zip(stats.compile_seconds, stats.translate_seconds, strict=True)]
                translate += stats.translate_seconds if phase == "cold" else []
            results[phase] = secs
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        if saved is None:
            os.environ.pop("SIMGPU_JIT_CACHE", None)
        else:
            os.environ["SIMGPU_JIT_CACHE"] = saved
    print(f"compile time per kernel over {len(launches)} corpus kernels, CPU time (translation to IR, its median"
          f" alone {statistics.median(translate) * 1e3:.1f} ms, + LLVM or the disk cache + loading)")
    for phase, secs in results.items():
        print(f"  {phase:5s}: median {statistics.median(secs) * 1e3:6.1f} ms, max {max(secs) * 1e3:6.1f} ms"
              f" ({len(secs)} regions)")


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_jit")
    ap.add_argument("--arch", default="gfx1100", choices=["gfx1100", "gfx1201", "gfx942"], help="the simulated GPU")
    ap.add_argument("--profiles", default="host,avx2", help="comma-separated: host, avx2")
    ap.add_argument("--repeats", type=int, default=5, help="first launches per row (best of)")
    ap.add_argument("--no-warm", action="store_true")
    ap.add_argument("--no-first-launch", action="store_true")
    ap.add_argument("--no-compile-times", action="store_true")
    ap.add_argument("--busy", type=int, default=0, metavar="N", help="N spinning processes beside the run")
    args = ap.parse_args(argv)
    global ARCH
    ARCH = args.arch
    profiles = [p for p in args.profiles.split(",") if p]
    for p in profiles:
        if p not in PROFILES:
            ap.error(f"--profiles: unknown profile {p!r} (known: {', '.join(PROFILES)})")
    skipped = [p for p in profiles if not runs_here(p)]
    if skipped:
        print(f"(profiles {', '.join(skipped)} skipped: this CPU cannot run their code)")
    profiles = [p for p in profiles if p not in skipped]
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        print(f"{args.busy} busy processes beside this run; load average {os.getloadavg()[0]:.1f} at the start")
        if not args.no_warm:
            warm_rows(profiles)
        if not args.no_first_launch:
            first_launch_rows(profiles, args.repeats)
        if not args.no_compile_times:
            compile_time_rows(profiles)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        for sp in spinners:
            sp.kill()
            sp.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--first-launch"]:  # one measurement of first_launch_rows, in its own process
        ARCH = sys.argv[4]
        print(*first_launch(sys.argv[2], sys.argv[3]))
    else:
        main(sys.argv[1:])
