"""One MLP training step (784-128-10, batch 64, SGD): warm wall time on the simulated gfx1100, with and without
the JIT (compiler.jit.TinyJit), beside tinygrad 0.14's CPU device on the same step in a subprocess.

    python -m bench.bench_train

The step: zero the gradients, forward (x @ w1 + b1, relu, @ w2 + b2, log_softmax), the mean cross-entropy against
one-hot labels, backward, the loss realized, SGD update. Warm: the best of STEPS steps after the steps that
compile, cache, capture (the JIT) and let the simulator's shader JIT compile every kernel of the step
(bench.settle until bench.shader_jit_pending is false: the small kernels get hot after about 20 steps, and
before, their compiles ran beside the timed steps), and WARM more; tinygrad's after WARM. tinygrad runs with
DEV=CPU and LLVM 19's clang on PATH; its row is absent (and says why) when tinygrad or clang is missing. Issue
28's goal: ours warm no slower than tinygrad's CPU. Wall and CPU seconds (the process's, threads included) are
both printed: on a shared machine the wall time of a step depends on the load, its CPU time much less.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

from bench import settle, shader_jit_pending

os.environ.setdefault("MOCKGPU", "1")

SHAPE = (64, 784, 128, 10)  # batch, inputs, hidden, classes
WARM, STEPS = 3, 8
SETTLE_LIMIT = 80  # steps until every kernel of the step runs natively (bench.shader_jit_pending)
LR = 0.01
LLVM_BIN = "/usr/lib/llvm-19/bin"


def data(seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs, one-hot labels and initial weights of the step (float32)."""
    batch, n_in, hidden, n_out = SHAPE
    rng = np.random.default_rng(seed)
    f = np.float32
    return {"x": rng.standard_normal((batch, n_in)).astype(f),
            "y": np.eye(n_out, dtype=f)[rng.integers(0, n_out, batch)],
            "w1": (rng.uniform(-1, 1, (n_in, hidden)) / np.sqrt(n_in)).astype(f),
            "b1": np.zeros(hidden, f),
            "w2": (rng.uniform(-1, 1, (hidden, n_out)) / np.sqrt(hidden)).astype(f),
            "b2": np.zeros(n_out, f)}


# The step, written once against the API both frameworks share (Tensor, log_softmax, backward, SGD's step).
STEP_SOURCE = '''
def make_step(Tensor, SGD, d, lr):
    params = [Tensor(d[k]) for k in ("w1", "b1", "w2", "b2")]  # SGD marks them as requiring grad
    w1, b1, w2, b2 = params
    opt = SGD(params, lr=lr)

    def step(x, y):
        opt.zero_grad()
        logits = (x @ w1 + b1).relu() @ w2 + b2
        loss = -(logits.log_softmax() * y).sum(1).mean()
        loss.backward()
        loss.realize()  # from the weights before the update, in both frameworks (tinygrad updates in place)
        opt.step()
        return loss
    return step, params
'''


def _make_step():
    namespace: dict = {}
    exec(STEP_SOURCE, namespace)  # noqa: S102 (our own source, shared with the tinygrad subprocess)
    return namespace["make_step"]


def settled_step(jit: bool):
    """Our step on the simulated GPU, settled (every kernel compiled by the shader JIT) and warmed: (one step as a
    function, the simulated GPU, the steps run so far, the first step's loss)."""
    from compiler import Tensor
    from compiler import device as devices
    from compiler.jit import TinyJit
    from compiler.nn.optim import SGD
    d = data()
    step, params = _make_step()(Tensor, SGD, d, LR)
    if jit:
        step = TinyJit(step)
    x, y = Tensor(d["x"]).realize(), Tensor(d["y"]).realize()
    dev = devices.get(x.device)
    gpu = dev.rt.os.simulator(dev.rt.gpu_id)
    out, first = [], []

    def once():
        out[:] = [step(x, y)]
        dev.synchronize()
        if not first:
            first.append(float(out[0].item()))

    warm = settle(once, limit=SETTLE_LIMIT, busy=lambda: shader_jit_pending(gpu)) + WARM
    for _ in range(WARM):
        once()
    return once, gpu, warm, first[0]


def ours(jit: bool) -> dict:
    """Best warm seconds of our step on the simulated GPU, with or without the JIT."""
    once, _gpu, warm, loss = settled_step(jit)
    times, cpu = [], []
    for _ in range(STEPS):
        t0, c0 = time.perf_counter(), time.process_time()
        once()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"best": min(times), "median": float(np.median(times)), "cpu": min(cpu), "loss": loss, "warm": warm}


_TINYGRAD = STEP_SOURCE + '''
import json, sys, time
import numpy as np
from tinygrad import Context, Tensor, TinyJit
from tinygrad.nn.optim import SGD
Context(TRAINING=1).__enter__()  # tinygrad's optimizers step only in training mode
args = json.loads(sys.argv[1])
d = {k: np.load(v) for k, v in args["data"].items()}
out = {}
for jit in (False, True):
    step, params = make_step(Tensor, SGD, d, args["lr"])
    if jit:
        step = TinyJit(step)
    x, y = Tensor(d["x"]).realize(), Tensor(d["y"]).realize()
    times, cpu, first = [], [], None
    for i in range(args["warm"] + args["steps"]):
        t0, c0 = time.perf_counter(), time.process_time()
        loss = step(x, y)
        Tensor.realize(loss)
        if i >= args["warm"]:
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        first = float(loss.item()) if first is None else first
    out["jit" if jit else "plain"] = {"best": min(times), "median": float(np.median(times)), "cpu": min(cpu),
                                      "loss": first}
print(json.dumps(out))
'''


def tinygrad_cpu(tmp: pathlib.Path) -> dict | str:
    """tinygrad's best warm seconds on its CPU device (plain and TinyJit), or why it could not run."""
    d = data()
    paths = {}
    for k, v in d.items():
        paths[k] = str(tmp / f"{k}.npy")
        np.save(paths[k], v)
    env = dict(os.environ, DEV="CPU", PATH=f"{LLVM_BIN}:{os.environ.get('PATH', '')}")
    env.pop("MOCKGPU", None)
    args = json.dumps({"data": paths, "lr": LR, "warm": WARM, "steps": STEPS})
    r = subprocess.run([sys.executable, "-c", _TINYGRAD, args], env=env, capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        return f"tinygrad did not run: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    """Print the table."""
    import tempfile
    batch, n_in, hidden, n_out = SHAPE
    print(f"MLP training step {n_in}-{hidden}-{n_out}, batch {batch}, SGD (warm: best of {STEPS}); "
          f"load average {os.getloadavg()[0]:.2f}")
    rows = {"ours, simulated gfx1100": ours(False), "ours, simulated gfx1100, TinyJit": ours(True)}
    with tempfile.TemporaryDirectory() as tmp:
        tg = tinygrad_cpu(pathlib.Path(tmp))
    if isinstance(tg, dict):
        rows["tinygrad 0.14 CPU"] = tg["plain"]
        rows["tinygrad 0.14 CPU, TinyJit"] = tg["jit"]
    print(f"  {'':<36}{'best':>10}{'median':>10}{'CPU best':>10}{'1st loss':>10}")
    for name, r in rows.items():
        print(f"  {name:<36}{r['best'] * 1e3:>8.1f}ms{r['median'] * 1e3:>8.1f}ms{r['cpu'] * 1e3:>8.1f}ms"
              f"{r['loss']:>10.4f}")
    if isinstance(tg, str):
        print(f"  ({tg})")
        return
    for mine, theirs in (("ours, simulated gfx1100", "tinygrad 0.14 CPU"),
                         ("ours, simulated gfx1100, TinyJit", "tinygrad 0.14 CPU, TinyJit"),
                         ("ours, simulated gfx1100, TinyJit", "tinygrad 0.14 CPU")):
        print(f"  {mine} / {theirs}: wall {rows[mine]['best'] / rows[theirs]['best']:.2f}x, "
              f"CPU {rows[mine]['cpu'] / rows[theirs]['cpu']:.2f}x")


if __name__ == "__main__":
    main()
