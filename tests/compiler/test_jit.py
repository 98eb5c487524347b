"""TinyJit (compiler.jit): a JITed MLP training step gives bit-identical parameters to the same steps without it
(its first loss matches NumPy, its losses and parameters tinygrad 0.14's TinyJit on its CPU device), with inputs
swapped per call; a replay launches the captured kernels as one
runtime graph without scheduling or compiling; inputs that differ from the capture raise JitError; functions
that never realize are captured. On the simulated GPU (PM4 and AQL queues) and on the CPU device."""

import json

import numpy as np
import pytest

import runtime
from compiler import Tensor, kernel
from compiler import device as devices
from compiler import schedule as scheduler
from compiler.jit import JitError, TinyJit
from compiler.nn.optim import LAMB, SGD, Adam, AdamW
from tests.support import tinygrad_golden

SHAPE = (8, 16, 12, 4)  # batch, inputs, hidden, classes
LR = 0.1
LLVM_BIN = "/usr/lib/llvm-19/bin"


def _data(seed: int):
    batch, n_in, hidden, n_out = SHAPE
    rng = np.random.default_rng(seed)
    w = {"w1": rng.uniform(-0.5, 0.5, (n_in, hidden)), "b1": rng.uniform(-0.1, 0.1, hidden),
         "w2": rng.uniform(-0.5, 0.5, (hidden, n_out)), "b2": rng.uniform(-0.1, 0.1, n_out)}
    batches = [(rng.standard_normal((batch, n_in)), np.eye(n_out)[rng.integers(0, n_out, batch)]) for _ in range(5)]
    f32 = np.float32
    return {k: v.astype(f32) for k, v in w.items()}, [(x.astype(f32), y.astype(f32)) for x, y in batches]


def _train(jit: bool, device: str, make_opt=None):
    """Five steps of a 2-layer MLP (SGD unless make_opt); (losses, parameters as arrays, the step)."""
    w, batches = _data(0)
    params = [Tensor(w[k], device=device) for k in ("w1", "b1", "w2", "b2")]
    w1, b1, w2, b2 = params
    opt = (make_opt or (lambda ps: SGD(ps, lr=LR)))(params)

    def step(x, y):
        opt.zero_grad()
        loss = -(((x @ w1 + b1).relu() @ w2 + b2).log_softmax() * y).sum(1).mean()
        loss.backward()
        loss.realize()
        opt.step()
        return loss

    step = TinyJit(step) if jit else step
    losses = []
    for x, y in batches:
        losses.append(step(Tensor(x, device=device), Tensor(y, device=device)).item())
    return losses, [p.numpy() for p in params], step


def _loss_numpy(w, x, y) -> float:
    h = np.maximum(x @ w["w1"] + w["b1"], 0)
    z = h @ w["w2"] + w["b2"]
    z = z - z.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return float(-(logp * y).sum(1).mean())


@pytest.mark.parametrize("device", ["AMD", "CPU"])
def test_a_jitted_training_step_gives_the_same_bits_as_without(device):
    losses, params, _ = _train(False, device)
    jit_losses, jit_params, step = _train(True, device)
    assert step.captured is not None and step.cnt == 5
    assert jit_losses == losses
    assert all(a.tobytes() == b.tobytes() for a, b in zip(params, jit_params, strict=True))
    w, batches = _data(0)
    np.testing.assert_allclose(losses[0], _loss_numpy({k: v.astype(np.float64) for k, v in w.items()},
                                                      *batches[0]), rtol=1e-5)
    assert losses[-1] != losses[0]  # the parameters moved


_TINYGRAD = """
import json, sys
import numpy as np
from tinygrad import Context, Tensor, TinyJit
from tinygrad.nn.optim import SGD
d = json.loads(sys.stdin.read())
params = [Tensor(np.array(d["w"][k], np.float32)) for k in ("w1", "b1", "w2", "b2")]
w1, b1, w2, b2 = params
opt = SGD(params, lr=d["lr"])

@TinyJit
def step(x, y):
    opt.zero_grad()
    loss = -(((x @ w1 + b1).relu() @ w2 + b2).log_softmax() * y).sum(1).mean()
    loss.backward()
    loss.realize()
    opt.step()
    return loss

losses = []
with Context(TRAINING=1):
    for x, y in d["batches"]:
        losses.append(step(Tensor(np.array(x, np.float32)), Tensor(np.array(y, np.float32))).item())
json.dump({"losses": losses, "params": [p.numpy().tolist() for p in params]}, sys.stdout)
"""


def test_the_jitted_step_matches_tinygrads_jitted_step_on_its_cpu_device():
    """The oracle: the same five steps under tinygrad 0.14's TinyJit on its CPU device (DEV=CPU, clang 19)."""
    w, batches = _data(0)
    payload = json.dumps({"lr": LR, "w": {k: v.tolist() for k, v in w.items()},
                          "batches": [(x.tolist(), y.tolist()) for x, y in batches]})
    theirs = json.loads(tinygrad_golden.output(_TINYGRAD, stdin=payload.encode()))
    losses, params, _ = _train(True, "AMD")
    np.testing.assert_allclose(losses, theirs["losses"], rtol=1e-5)
    for ours, ref in zip(params, theirs["params"], strict=True):
        np.testing.assert_allclose(ours, np.array(ref, np.float32), rtol=1e-5, atol=1e-6)


def test_a_replay_launches_the_captured_kernels_without_scheduling_or_compiling(monkeypatch):
    _, _, step = _train(True, "AMD")  # captured on call 2, replayed on calls 3-5
    rt = devices.get("AMD").rt
    _, batches = _data(1)
    counts = (kernel.stats.compiled, kernel.stats.cache_hits)

    def refuse(*a, **k):
        raise AssertionError("a replay scheduled")

    inputs = [(Tensor(x).realize(), Tensor(y).realize()) for x, y in batches]  # (copies in: scheduled)
    monkeypatch.setattr(scheduler, "schedule", refuse)
    for x, y in inputs:
        before = rt.launches
        step(x, y).numpy()
        assert rt.launches - before == step.captured.kernels
    assert (kernel.stats.compiled, kernel.stats.cache_hits) == counts


def test_inputs_unlike_the_capture_raise_naming_the_argument():
    f = TinyJit(lambda a, b: (a * b + 1).sum(0))
    x, y = np.ones((4, 3), np.float32), np.full((4, 3), 2, np.float32)
    for _ in range(3):
        f(Tensor(x), Tensor(y))
    with pytest.raises(JitError, match="argument 1: shape"):
        f(Tensor(x), Tensor(np.ones((5, 3), np.float32)))
    with pytest.raises(JitError, match="argument 0: dtype"):
        f(Tensor(x.astype(np.int32)), Tensor(y))
    with pytest.raises(JitError, match="captured with Tensor inputs"):
        f(Tensor(x), b=Tensor(y))
    with pytest.raises(JitError, match="share a buffer"):
        t = Tensor(x)
        f(t, t)
    f.reset()  # a new shape is captured afresh
    z = np.arange(10, dtype=np.float32).reshape(5, 2)
    for _ in range(3):
        out = f(Tensor(z), Tensor(z))
    np.testing.assert_array_equal(out.numpy(), (z * z + 1).sum(0))


def test_a_function_that_never_realizes_is_captured_and_returns_the_same_tensor():
    f = TinyJit(lambda a: {"y": (a * 2 + 1).exp2()})
    rng = np.random.default_rng(3)
    outs = []
    for _ in range(5):
        x = rng.standard_normal(7).astype(np.float32)
        out = f(Tensor(x))
        np.testing.assert_allclose(out["y"].numpy(), np.exp2(x * 2 + 1), rtol=1e-6)
        outs.append(out["y"])
    assert outs[2] is outs[3] is outs[4]  # replays return the captured outputs, overwritten (tinygrad's contract)


def test_a_function_that_launches_nothing_or_returns_a_number_is_refused():
    f = TinyJit(lambda a: a)
    f(Tensor([1.0]))
    with pytest.raises(JitError, match="no kernel"):
        f(Tensor([1.0]))
    g = TinyJit(lambda a: ((a + 1).realize(), 2.5))
    g(Tensor([1.0]))
    with pytest.raises(JitError, match="returned a float"):
        g(Tensor([1.0]))


def test_assigned_state_alternates_between_two_buffers_and_reads_its_latest_value():
    """`acc.assign(acc + x)`: each replay reads what the previous one wrote (NumPy's running sum), and an assign
    made between calls is what the next replay reads."""
    acc = Tensor(np.zeros(6, np.float32)).realize()
    f = TinyJit(lambda x: acc.assign(acc + x))
    rng = np.random.default_rng(4)
    total = np.zeros(6, np.float32)
    for i in range(6):
        x = rng.standard_normal(6).astype(np.float32)
        total = total + x
        f(Tensor(x))
        np.testing.assert_array_equal(acc.numpy(), total)
        if i == 3:
            acc.assign(Tensor(np.full(6, 10, np.float32)))
            acc.realize()
            total = np.full(6, 10, np.float32)


@pytest.mark.parametrize("name", ["momentum", "nesterov", "adam", "adamw", "lamb"])
def test_optimizer_state_replays_bit_for_bit(name):
    """compiler.nn.optim keeps its state (momentum, moments, step counts) through assign, so a replay updates it."""
    make = {"momentum": lambda ps: SGD(ps, lr=LR, momentum=0.9),
            "nesterov": lambda ps: SGD(ps, lr=LR, momentum=0.9, nesterov=True, weight_decay=0.01),
            "adam": lambda ps: Adam(ps, lr=0.01), "adamw": lambda ps: AdamW(ps, lr=0.01),
            "lamb": lambda ps: LAMB(ps, lr=0.01)}[name]
    losses, params, _ = _train(False, "AMD", make)
    jit_losses, jit_params, step = _train(True, "AMD", make)
    assert step.captured is not None
    assert jit_losses == losses
    assert all(a.tobytes() == b.tobytes() for a, b in zip(params, jit_params, strict=True))


def test_state_kept_in_a_python_name_is_refused():
    """State rebound to a new tensor (`self.buf = ...`), not assigned: a replay would read the captured buffer
    again, so the capture raises rather than train wrongly."""
    w = Tensor(np.ones((4, 3), np.float32))
    state = {"buf": Tensor(np.zeros((4, 3), np.float32))}

    def step(x):
        state["buf"] = (state["buf"] * 0.9 + x.sum(0).reshape(4, 1)).realize()
        w.assign(w - 0.1 * state["buf"])
        w.realize()
        return w

    f = TinyJit(step)
    f(Tensor(np.ones((2, 4), np.float32)))
    with pytest.raises(JitError, match="without assign"):
        f(Tensor(np.ones((2, 4), np.float32)))


def test_a_jit_on_the_aql_queue(monkeypatch):
    """The same step on a device whose compute queue takes AQL packets (one batch per replay)."""
    rt = runtime.Device("AMD:0", queue="aql")
    monkeypatch.setitem(devices._OPEN, "AMD:0", devices.DeviceAdapter("AMD:0", rt=rt))
    losses, params, step = _train(True, "AMD")
    monkeypatch.undo()
    ref_losses, ref_params, _ = _train(False, "AMD")
    assert losses == ref_losses
    assert all(a.tobytes() == b.tobytes() for a, b in zip(params, ref_params, strict=True))

