"""The process-level device (`simgpu run`) against the in-process MockOS, measured in the same run:

- launch+wait of the demo's 256-item saxpy through runtime.Device: in-process on MockOS, and from another process
  on HostOS through the interposer and the server (target: at most 2x the in-process cost);
- tinygrad (when installed, DEV=AMD:LLVM on libLLVM 19): a TinyJit function of three kernels replayed as an HCQ
  graph, against the same three kernels run eagerly (the graph must cost about what its kernels cost: no 200 ms
  stall while the graph's kick-off signal waits for the CPU).

    python -m bench.bench_clients

Best of three batches, wall time.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

LAUNCHES = 200

_RUNTIME_CHILD = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import runtime
    from compiler.samples import SAXPY
    dev = runtime.Device("AMD:0")
    k = dev.load(SAXPY.code_object())["saxpy"]
    x = np.ones(256, np.float32)
    bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(x.nbytes).copyin(x)
    launch = lambda: k(by, bx, np.float32(2.0), grid=(1, 1, 1), block=(256, 1, 1))
    launch()
    best = min(_time(launch) for _ in range(3))
    print(json.dumps({"os": type(dev.os).__name__, "launch": best}))
""")

_TINYGRAD_CHILD = textwrap.dedent("""
    import json, time
    import numpy as np
    from tinygrad import Device, Tensor, TinyJit
    def step(v):
        w = (v * 2 + 1).contiguous()
        return w.sum(axis=0).contiguous() + w.max(axis=1).sum()
    jitted = TinyJit(step)
    v = Tensor(np.ones((16, 8), np.float32)).realize()
    dev = Device["AMD"]
    for _ in range(3):
        jitted(v)
    dev.synchronize()
    def graph():
        jitted(v)
        dev.synchronize()
    def eager():
        step(v).realize()
        dev.synchronize()
    eager()
    best = lambda fn: min(_time(fn, 20) for _ in range(3))
    print(json.dumps({"graph": best(graph), "eager": best(eager)}))
""")

_TIMER = textwrap.dedent(f"""
    import time
    def _time(fn, n={LAUNCHES}):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) / n
""")


def _in_process() -> float:
    import numpy as np

    import runtime
    from compiler.samples import SAXPY
    from mockgpu import MockOS
    dev = runtime.Device("AMD:0", os=MockOS(devices=1, vram_size=1 << 28))
    k = dev.load(SAXPY.code_object())["saxpy"]
    x = np.ones(256, np.float32)
    bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(x.nbytes).copyin(x)

    def launch():
        k(by, bx, np.float32(2.0), grid=(1, 1, 1), block=(256, 1, 1))
    launch()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(LAUNCHES):
            launch()
        best = min(best, (time.perf_counter() - t0) / LAUNCHES)
    return best


def _under_simgpu_run(child: str, env: dict | None = None) -> dict | None:
    """Run a child script under `simgpu run`; its JSON line, or None (with the reason printed)."""
    full = dict(os.environ, **(env or {}))
    full.pop("MOCKGPU", None)
    r = subprocess.run([sys.executable, "-m", "wiring.cli", "run", "--vram", str(1 << 30), "--",
                        sys.executable, "-c", _TIMER + child], env=full, capture_output=True, text=True)
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    if r.returncode or not lines:
        print(f"  (not measured: exit {r.returncode}: {r.stderr.strip().splitlines()[-1:] or ''})")
        return None
    return json.loads(lines[-1])


def main() -> None:
    local = _in_process()
    print(f"clients: launch+wait, 256-item saxpy, in-process MockOS:      {local * 1e3:6.2f} ms")
    remote = _under_simgpu_run(_RUNTIME_CHILD)
    if remote:
        print(f"clients: launch+wait, 256-item saxpy, simgpu run ({remote['os']}):  {remote['launch'] * 1e3:6.2f} ms"
              f"  ({remote['launch'] / local:.2f}x in-process; target <= 2x)")
    try:
        import tinygrad  # noqa: F401
    except ImportError:
        print("clients: tinygrad graph launch: not measured (pip install -e '.[test]')")
        return
    found = sorted(glob.glob("/usr/lib/*-linux-gnu/libLLVM.so.19*"))  # Debian's libllvm19 (llvm-19 needs it)
    if not found:
        print("clients: tinygrad graph launch: not measured (needs libLLVM 19: Debian llvm-19)")
        return
    lib = Path(found[0])
    tg = _under_simgpu_run(_TINYGRAD_CHILD, {"DEV": "AMD:LLVM", "LLVM_PATH": str(lib)})
    if tg:
        print(f"clients: tinygrad TinyJit graph of 3 kernels + sync:  {tg['graph'] * 1e3:6.2f} ms"
              f"  (the same kernels eagerly: {tg['eager'] * 1e3:6.2f} ms; ratio {tg['graph'] / tg['eager']:.2f})")


if __name__ == "__main__":
    main()
