"""Compiled examples: a 2-layer MLP trained with Adam and a transformer block (attention + MLP + layernorm),
written with Tensor and checked against NumPy. `demo()` is what `simgpu demo` shows next to its hand-written
kernels; the tests run the same functions."""

from __future__ import annotations

import math
import time

import numpy as np

from compiler import Tensor
from compiler.kernel import stats
from compiler.nn.optim import Adam


def synthetic_regression(n: int = 64, features: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets of a smooth nonlinear function plus a little noise."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features)).astype(np.float32)
    w = rng.standard_normal((features, 1)).astype(np.float32)
    y = np.tanh(x @ w) + 0.1 * np.sin(3 * x[:, :1]) + 0.01 * rng.standard_normal((n, 1)).astype(np.float32)
    return x, y.astype(np.float32)


class MLP:
    """Linear -> ReLU -> Linear, initialised from the seeded random generator (Kaiming-uniform bounds)."""

    def __init__(self, inputs: int, hidden: int, outputs: int):
        def uniform(shape, fan_in):
            bound = 1 / math.sqrt(fan_in)
            return Tensor(((Tensor.rand(*shape) * 2 - 1) * bound).numpy(), requires_grad=True)
        self.w1, self.b1 = uniform((hidden, inputs), inputs), uniform((hidden,), inputs)
        self.w2, self.b2 = uniform((outputs, hidden), hidden), uniform((outputs,), hidden)

    def parameters(self) -> list[Tensor]:
        """The trainable tensors."""
        return [self.w1, self.b1, self.w2, self.b2]

    def __call__(self, x: Tensor) -> Tensor:
        return x.linear(self.w1.T, self.b1).relu().linear(self.w2.T, self.b2)


def train_mlp(steps: int = 50, seed: int = 0, hidden: int = 32,
              lr: float = 1e-2) -> tuple[list[float], list[np.ndarray]]:
    """Train an MLP on synthetic_regression with Adam; (losses per step, final weights as arrays)."""
    Tensor.manual_seed(seed)
    x_np, y_np = synthetic_regression(seed=seed)
    x, y = Tensor(x_np), Tensor(y_np)
    model = MLP(x_np.shape[1], hidden, 1)
    opt = Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.numpy() for p in model.parameters()]


def transformer_block(x: Tensor, p: dict[str, Tensor], heads: int) -> Tensor:
    """Pre-norm block: x + attn(ln1(x)), then + mlp(ln2(.)); causal multi-head attention, GELU MLP."""
    t, d = x.shape[-2], x.shape[-1]
    hd = d // heads
    h = x.layernorm(weight=p["ln1_w"], bias=p["ln1_b"])
    q, k, v = (h.linear(p[f"w{n}"].T, p[f"b{n}"]).reshape(t, heads, hd).transpose(0, 1) for n in "qkv")
    att = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(0, 1).reshape(t, d)
    x = x + att.linear(p["wo"].T, p["bo"])
    h = x.layernorm(weight=p["ln2_w"], bias=p["ln2_b"])
    return x + h.linear(p["w1"].T, p["b1"]).gelu(approximate="none").linear(p["w2"].T, p["b2"])


def transformer_block_numpy(x: np.ndarray, p: dict[str, np.ndarray], heads: int) -> np.ndarray:
    """The same block in float64 NumPy."""
    def ln(v, w, b):
        m, s = v.mean(-1, keepdims=True), v.var(-1, keepdims=True)
        return (v - m) / np.sqrt(s + 1e-5) * w + b

    def erf(v):
        return np.vectorize(math.erf)(v)
    t, d = x.shape
    hd = d // heads
    h = ln(x, p["ln1_w"], p["ln1_b"])
    q, k, v = ((h @ p[f"w{n}"].T + p[f"b{n}"]).reshape(t, heads, hd).transpose(1, 0, 2) for n in "qkv")
    s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
    s = np.where(np.tril(np.ones((t, t), bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    att = (e / e.sum(-1, keepdims=True) @ v).transpose(1, 0, 2).reshape(t, d)
    x = x + att @ p["wo"].T + p["bo"]
    h = ln(x, p["ln2_w"], p["ln2_b"])
    f = h @ p["w1"].T + p["b1"]
    f = 0.5 * f * (1 + erf(f / math.sqrt(2)))
    return x + f @ p["w2"].T + p["b2"]


def block_parameters(d: int, hidden: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random parameters of transformer_block (float32)."""
    rng = np.random.default_rng(seed)
    shapes = {"ln1_w": (d,), "ln1_b": (d,), "ln2_w": (d,), "ln2_b": (d,), "wo": (d, d), "bo": (d,),
              "w1": (hidden, d), "b1": (hidden,), "w2": (d, hidden), "b2": (d,)}
    shapes |= {f"w{n}": (d, d) for n in "qkv"} | {f"b{n}": (d,) for n in "qkv"}
    return {k: (rng.standard_normal(s) / math.sqrt(s[-1])).astype(np.float32) for k, s in shapes.items()}


def demo(out=print) -> bool:
    """The compiled example of `simgpu demo`: train the MLP for 50 steps and run a transformer block, each
    checked (loss falls; block output within 1e-4 of NumPy). Prints one line per example; True if both pass."""
    t0, c0 = time.perf_counter(), stats.compiled
    losses, _ = train_mlp(steps=50)
    ok_mlp = losses[-1] < 0.5 * losses[0]
    out(f"  compiled MLP (8-32-1, Adam, 50 steps): loss {losses[0]:.4f} -> {losses[-1]:.4f} "
        f"({stats.compiled - c0} kernels compiled, {time.perf_counter() - t0:.1f} s) "
        f"{'ok' if ok_mlp else 'FAILED: loss did not fall'}")
    t1 = time.perf_counter()
    d, heads, tokens = 32, 4, 16
    p = block_parameters(d, 4 * d)
    x = np.random.default_rng(1).standard_normal((tokens, d)).astype(np.float32)
    ours = transformer_block(Tensor(x), {k: Tensor(v) for k, v in p.items()}, heads).numpy()
    err = float(np.abs(ours - transformer_block_numpy(x.astype(np.float64), p, heads)).max())
    ok_block = err < 1e-4
    out(f"  compiled transformer block (16 tokens, d=32, 4 heads): max |error| vs numpy {err:.2e} "
        f"({time.perf_counter() - t1:.1f} s) {'ok' if ok_block else 'FAILED'}")
    return ok_mlp and ok_block
