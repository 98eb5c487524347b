"""The CPU device (x86 backend under unicorn) next to the simulated gfx1100 on the same compiler kernels.

    python -m bench.bench_cpu

For each Tensor program (an elementwise kernel over 1M elements, the same over a transposed view, a row
reduction, the 256x256x256 f32 matrix
product, exp(x)*sin(x): the transcendental polynomials), the compiler makes one kernel per device: the x86
backend's for the CPU device and the AMD default backend's (native; SIMGPU_BACKEND=llvm for LLVM's) for the
simulated GPU. Each runs once to warm up (unicorn translates, the simulator decodes),
then the best of three launches is reported as this process's CPU time (time.process_time: both are
single-threaded, and the machine is shared). Counted in one extra launch each:

- CPU: x86 instructions executed (a unicorn block hook adds each translated block's instruction count, from
  capstone) -> instructions/s; work-items/s; where the x86 backend vectorized the kernel (SSE packed, four
  work-items per pass), the same kernel compiled with SIMGPU_X86_VECTOR=0 is measured too (the "scalar" line);
- GPU: the simulator's wave-instructions and lane-ops -> wave-instructions/s, lane-ops/s.

The last column is the CPU device's time over the simulator's for the same result (both checked against
numpy). Last, the CPU device's cost of one launch of a tiny kernel (mapping, registers, emulator entry).
"""

from __future__ import annotations

import os
import time

import numpy as np

os.environ.setdefault("MOCKGPU", "1")


def _programs(rng):
    """name -> (function of Tensor inputs, input arrays, numpy reference)."""
    big = rng.standard_normal(1 << 20).astype(np.float32)
    rows = rng.standard_normal((4096, 256)).astype(np.float32)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    s = rng.standard_normal(1 << 18).astype(np.float32)
    sq = rng.standard_normal((1024, 1024)).astype(np.float32)
    return {
        "elementwise 1M (x*3+1).relu()": (lambda x: (x * 3 + 1).relu(), [big],
                                          lambda x: np.maximum(x * np.float32(3) + 1, 0)),
        "transpose 1024^2 x.T*2+1": (lambda x: x.T * 2 + 1, [sq], lambda x: x.T * np.float32(2) + 1),
        "row sums 4096x256": (lambda x: x.sum(1), [rows], lambda x: x.sum(1)),
        "matmul 256^3 f32": (lambda x, y: x @ y, [a, b], lambda x, y: x.astype(np.float64) @ y),
        "exp(x)*sin(x) 256K": (lambda x: x.exp() * x.sin(), [s], lambda x: np.exp(x) * np.sin(x)),
    }


def _kernel(fn, arrays, kind: str, backend: str):
    """(device, program, output buffer, input buffers, output shape, input tensors: keep them, they own the
    buffers) of the program's one kernel on a device kind."""
    from compiler import Tensor
    from compiler import backend as backends
    from compiler import device as devices
    from compiler.kernel import compile_ast
    from compiler.schedule import schedule
    dev = devices.get(kind)
    with backends.using(backend):
        ins = [Tensor(a, device=kind).realize() for a in arrays]
        items = [i for i in schedule([fn(*ins).lazydata.base]) if i.kind == "kernel"]
        assert len(items) == 1, [i.ast.arg for i in items]
        prog = compile_ast(items[0].ast, dev.backend)
    out = dev.alloc(items[0].out.st.size() * items[0].out.dtype.itemsize)
    return dev, prog, out, [i.buffer for i in items[0].inputs], items[0].out.shape, ins


def gpu_backend() -> str:
    """The GPU side's backend: the AMD default (SIMGPU_BACKEND may name another)."""
    from compiler import backend as backends
    return backends.for_device("AMD").name


def _best(launch, reps: int = 3) -> float:
    launch()
    best = float("inf")
    for _ in range(reps):
        t0 = time.process_time()
        launch()
        best = min(best, time.process_time() - t0)
    return best


def count_x86_instructions(dev, prog, buffers) -> int:
    """Instructions one launch executes: a block hook summing each block's instruction count (capstone)."""
    import capstone
    from unicorn import UC_HOOK_BLOCK
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    uc = dev.rt.uc
    sizes: dict[tuple[int, int], int] = {}
    total = [0]

    def on_block(uc, address, size, _):
        n = sizes.get((address, size))
        if n is None:
            n = sizes[(address, size)] = len(list(md.disasm_lite(bytes(uc.mem_read(address, size)), address)))
        total[0] += n
    uc.ctl_flush_tb()  # hooks are compiled into translated blocks: translate again with it, and without after
    h = uc.hook_add(UC_HOOK_BLOCK, on_block)
    try:
        dev.launch(prog, buffers)
    finally:
        uc.hook_del(h)
        uc.ctl_flush_tb()
    return total[0]


def _lanes(prog) -> int:
    from runtime.cpu import read_image
    return read_image(prog.binary).meta.get("lanes", 1)


def _cpu(fn, arrays, expect, row: dict, prefix: str) -> int:
    """The CPU device's figures of the program's kernel into row[prefix + ...]; its lanes per pass."""
    dev, prog, out, ins, _, keep = _kernel(fn, arrays, "CPU", "x86")
    bufs = [out, *ins]
    row[prefix + "s"] = _best(lambda: dev.launch(prog, bufs))
    row[prefix + "instr"] = count_x86_instructions(dev, prog, bufs)
    g = prog.geometry
    row["items"] = int(np.prod(g.grid) * np.prod(g.block))
    row[prefix + "ok"] = np.allclose(out.copyout(np.empty(expect.size, np.float32)), expect, rtol=1e-4, atol=1e-4)
    row[prefix + "kernel"] = prog.name
    del keep
    return _lanes(prog)


def measure(name: str, fn, arrays, ref) -> dict:
    """One row: CPU and GPU seconds, counts, and whether both match numpy."""
    row = {"name": name}
    expect = ref(*arrays).reshape(-1)
    row["lanes"] = _cpu(fn, arrays, expect, row, "cpu_")
    row["x86_instr"] = row["cpu_instr"]
    if row["lanes"] > 1:
        old = os.environ.get("SIMGPU_X86_VECTOR")
        os.environ["SIMGPU_X86_VECTOR"] = "0"
        try:
            _cpu(fn, arrays, expect, row, "scalar_")
        finally:
            if old is None:
                del os.environ["SIMGPU_X86_VECTOR"]
            else:
                os.environ["SIMGPU_X86_VECTOR"] = old
    gdev, gprog, gout, gins, _, gkeep = _kernel(fn, arrays, "AMD", gpu_backend())
    gbufs = [gout, *gins]
    row["gpu_s"] = _best(lambda: gdev.launch(gprog, gbufs).wait())
    c = gdev.rt.os.simulator(gdev.rt.gpu_id).engine.counters
    w0, l0 = c.wave_instructions, c.lane_ops
    gdev.launch(gprog, gbufs).wait()
    row["wave_instr"], row["lane_ops"] = c.wave_instructions - w0, c.lane_ops - l0
    row["gpu_ok"] = np.allclose(gout.copyout(np.empty(expect.size, np.float32)), expect, rtol=1e-4, atol=1e-4)
    row["kernels"] = (row["cpu_kernel"], gprog.name)
    del gkeep
    return row


def launch_overhead() -> float:
    """Process seconds per launch of a 16-work-item elementwise kernel on the CPU device (best of 3 x 500)."""
    from compiler import Tensor
    x = np.arange(16, dtype=np.float32)
    dev, prog, out, ins, _, keep = _kernel(lambda t: t * 2, [x], "CPU", "x86")
    bufs = [out, *ins]
    best = float("inf")
    dev.launch(prog, bufs)
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(500):
            dev.launch(prog, bufs)
        best = min(best, (time.process_time() - t0) / 500)
    del keep, Tensor
    return best


def main() -> None:
    """Print the table (module docstring)."""
    rng = np.random.default_rng(0)
    print(f"CPU device (x86 backend, unicorn) vs simulated gfx1100 ({gpu_backend()} backend): best of 3 warm launches, "
          "process CPU time")
    print(f"  {'program':<32}{'CPU':>9}{'x86 instr':>12}{'instr/s':>10}{'items/s':>10}   "
          f"{'GPU sim':>9}{'wave-instr':>12}{'wave-i/s':>10}{'lane-ops/s':>11}{'CPU/GPU':>9}")
    for name, (fn, arrays, ref) in _programs(rng).items():
        r = measure(name, fn, arrays, ref)
        ok = "" if r["cpu_ok"] and r["gpu_ok"] and r.get("scalar_ok", True) else "  MISMATCH"
        print(f"  {name:<32}{r['cpu_s'] * 1e3:>7.1f}ms{r['x86_instr']:>12}{r['x86_instr'] / r['cpu_s'] / 1e6:>9.1f}M"
              f"{r['items'] / r['cpu_s'] / 1e6:>9.2f}M   {r['gpu_s'] * 1e3:>7.1f}ms{r['wave_instr']:>12}"
              f"{r['wave_instr'] / r['gpu_s'] / 1e6:>9.2f}M{r['lane_ops'] / r['gpu_s'] / 1e6:>10.1f}M"
              f"{r['cpu_s'] / r['gpu_s']:>8.2f}x{ok}")
        if r["lanes"] > 1:
            print(f"  {'  scalar (SIMGPU_X86_VECTOR=0)':<32}{r['scalar_s'] * 1e3:>7.1f}ms{r['scalar_instr']:>12}"
                  f"{r['scalar_instr'] / r['scalar_s'] / 1e6:>9.1f}M{r['items'] / r['scalar_s'] / 1e6:>9.2f}M   "
                  f"SSE packed: {r['scalar_s'] / r['cpu_s']:.2f}x faster, "
                  f"{r['scalar_instr'] / r['cpu_instr']:.2f}x fewer instructions")
        print(f"  {'':<32}kernels: {r['kernels'][0]} (CPU, {r['lanes']} work-item{'s' if r['lanes'] > 1 else ''} "
              f"per pass), {r['kernels'][1]} (GPU)")
    print(f"  CPU device launch of a 16-work-item kernel: {launch_overhead() * 1e6:.1f} us")


if __name__ == "__main__":
    main()
