"""The compiler's costs and the speed of what it generates.

    python -m bench.bench_compiler

1. Compile time per kernel for a set of kernels from Tensor programs (elementwise, reductions, softmax,
   matmul, conv2d, layernorm, attention): cold (lowering + linearizing, the z3 proof, LLVM) and cached
   (the disk cache of a previous process: the kernel is lowered and linearized to find its key, then
   loaded), median and mean over the set.
2. A 256x256x256 f32 matrix product on the simulated gfx1100: the compiler's own kernel (tiled through LDS)
   against the hand-written naive OpenCL C kernel (bench/kernels/matmul_naive.cl, clang-19 -O2), both run
   through runtime.Device: GPU virtual time, wall time (best of 3 warm launches), wave-instructions and
   lane-ops from the simulator's counters, and their ratios.

Runs on the simulator (it sets MOCKGPU=1): the counters and the virtual clock are the simulator's.
"""

from __future__ import annotations

import os
import pathlib
import statistics
import subprocess
import tempfile
import time

import numpy as np

os.environ.setdefault("MOCKGPU", "1")

HERE = pathlib.Path(__file__).resolve().parent
CLANG = pathlib.Path("/usr/lib/llvm-19/bin")


def _programs():
    from compiler import Tensor
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((32, 64)).astype(np.float32))
    w = Tensor(rng.standard_normal((64, 64)).astype(np.float32))
    img = Tensor(rng.standard_normal((2, 4, 16, 16)).astype(np.float32))
    k = Tensor(rng.standard_normal((8, 4, 3, 3)).astype(np.float32))
    q = Tensor(rng.standard_normal((16, 32)).astype(np.float32))
    return {"elementwise": (x * 2 + 1).exp(), "sum rows": x.sum(1), "sum all": x.sum(), "softmax": x.softmax(),
            "matmul 32x64x64": x @ w, "conv2d 3x3": img.conv2d(k, padding=1), "layernorm": x.layernorm(),
            "attention": q.scaled_dot_product_attention(q, q, is_causal=True), "max_pool2d": img.max_pool2d(2)}


def compile_times(backend_name: str = "llvm") -> dict:
    """Per-kernel seconds with one backend: cold (split into lowering, proof, backend: the 'llvm' key) and cached."""
    from compiler import backend, cache, kernel
    from compiler.schedule import schedule
    be = backend.get(backend_name)
    asts = []
    for t in _programs().values():
        asts += [i.ast for i in schedule([t.lazydata.base]) if i.kind == "kernel"]
    cold, cached, lowering, proof, llvm = [], [], [], [], []
    saved = {k: os.environ.get(k) for k in ("SIMGPU_CACHE_DIR", "SIMGPU_CHECK_OOB", "SIMGPU_CACHE")}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(SIMGPU_CACHE_DIR=tmp, SIMGPU_CHECK_OOB="1", SIMGPU_CACHE="1")
        for ast in asts:
            kernel._by_ast.clear()
            cache.clear_memory()
            s0 = (kernel.stats.lowering_s, len(kernel.stats.proof_s), kernel.stats.backend_s)
            t0 = time.perf_counter()
            kernel.compile_ast(ast, be)
            cold.append(time.perf_counter() - t0)
            lowering.append(kernel.stats.lowering_s - s0[0])
            proof.append(sum(kernel.stats.proof_s[s0[1]:]))
            llvm.append(kernel.stats.backend_s - s0[2])
            kernel._by_ast.clear()
            cache.clear_memory()
            t0 = time.perf_counter()
            kernel.compile_ast(ast, be)
            cached.append(time.perf_counter() - t0)
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    return {"kernels": len(asts), "cold": cold, "cached": cached, "lowering": lowering, "proof": proof, "llvm": llvm}


def _naive_program() -> bytes | None:
    """The naive OpenCL matmul as a linked code object (None without clang-19)."""
    if not (CLANG / "clang").exists():
        return None
    with tempfile.TemporaryDirectory() as tmp:
        obj, so = pathlib.Path(tmp) / "m.o", pathlib.Path(tmp) / "m.so"
        subprocess.run([CLANG / "clang", "-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-nogpulib",
                        "-O2", "-c", HERE / "kernels" / "matmul_naive.cl", "-o", obj], check=True)
        subprocess.run([CLANG / "ld.lld", "-shared", obj, "-o", so], check=True)
        return so.read_bytes()


def _measure(sim, launch) -> dict:
    """Best of 3 warm launches: wall seconds, GPU seconds, wave-instructions, lane-ops of one launch."""
    launch()  # warm: decode cache, TLB
    c = sim.engine.counters
    best = None
    for _ in range(3):
        w0, l0 = c.wave_instructions, c.lane_ops
        t0 = time.perf_counter()
        gpu = launch()
        wall = time.perf_counter() - t0
        row = {"wall": wall, "gpu": gpu, "wave_instr": c.wave_instructions - w0, "lane_ops": c.lane_ops - l0}
        if best is None or wall < best["wall"]:
            best = row
    return best


def matmul_256() -> dict:
    """The compiler's 256^3 f32 matmul against the naive OpenCL one (module docstring)."""
    from compiler import Tensor, device
    from compiler.kernel import compile_ast
    from compiler.schedule import schedule
    n = 256
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    ta, tb = Tensor(a).realize(), Tensor(b).realize()
    dev = device.get("AMD")
    sim = dev.rt.os.simulator(dev.rt.gpu_id)  # the MockOS behind the device (MOCKGPU=1)
    (item,) = [i for i in schedule([(ta @ tb).lazydata.base]) if i.kind == "kernel"]
    prog = compile_ast(item.ast, dev.backend)
    out = dev.alloc(n * n * 4)
    ins = [i.buffer for i in item.inputs]
    rows = {"compiler (" + prog.name + ")": _measure(sim, lambda: dev.launch(prog, [out, *ins]).wait())}
    ref = a.astype(np.float64) @ b
    got = out.copyout(np.empty((n, n), np.float32))
    rows["compiler (" + prog.name + ")"]["max_err"] = float(np.abs(got - ref).max())
    code = _naive_program()
    if code is not None:
        k = dev.rt.load(code)["matmul_naive"]
        c = dev.rt.alloc(n * n * 4)
        rows["naive OpenCL (clang-19 -O2)"] = _measure(sim, lambda: k(c, ins[0].handle, ins[1].handle, n,
                                                                      grid=(n // 16, n // 16, 1), block=(16, 16, 1)))
        rows["naive OpenCL (clang-19 -O2)"]["max_err"] = float(np.abs(c.copyout(np.empty((n, n), np.float32))
                                                                      - ref).max())
        c.free()
    out.release()
    return rows


def main() -> None:
    """Print both tables."""
    t = compile_times()
    med = {k: statistics.median(v) * 1e3 for k, v in t.items() if k != "kernels"}
    mean = {k: statistics.fmean(v) * 1e3 for k, v in t.items() if k != "kernels"}
    print(f"compile time per kernel ({t['kernels']} kernels from 9 Tensor programs), ms: median / mean")
    for k in ("cold", "lowering", "proof", "llvm", "cached"):
        label = {"cold": "cold (all steps)", "lowering": "  lower+linearize", "proof": "  z3 proof",
                 "llvm": "  LLVM (llvmlite)", "cached": "cached (disk)"}[k]
        print(f"  {label:<20} {med[k]:8.2f} / {mean[k]:8.2f}")
    print("\n256x256x256 f32 matmul on the simulated gfx1100 (best of 3 warm launches)")
    rows = matmul_256()
    print(f"  {'kernel':<34}{'GPU time':>11}{'wall':>9}{'wave-instr':>12}{'lane-ops':>13}{'wave-instr/s':>14}"
          f"{'max err':>10}")
    for name, r in rows.items():
        print(f"  {name:<34}{r['gpu'] * 1e6:>9.1f}us{r['wall']:>8.2f}s{r['wave_instr']:>12}{r['lane_ops']:>13}"
              f"{r['wave_instr'] / r['wall'] / 1e6:>12.1f}M{r['max_err']:>10.1e}")
    if len(rows) == 2:
        (c, rc), (_, rn) = rows.items()
        print(f"  compiler / naive: GPU time {rc['gpu'] / rn['gpu']:.2f}x, wall {rc['wall'] / rn['wall']:.2f}x, "
              f"wave-instructions {rc['wave_instr'] / rn['wave_instr']:.2f}x")
    else:
        print("  (clang-19 not found: the naive OpenCL row needs /usr/lib/llvm-19/bin/clang)")


if __name__ == "__main__":
    main()
