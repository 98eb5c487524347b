"""An MNIST-style MLP (64 -> 32 -> 10 on 8x8 synthetic digits) trained a few steps with Adam, written against
tinygrad's API; nnlib picks the library (its docstring says how to run this)."""

import json

import numpy as np
from nnlib import Context, Tensor, load_numpy_weights, nn


def synthetic_digits(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n 8x8 images (flattened): a class-dependent pattern plus noise, and their labels."""
    rng = np.random.default_rng(seed)
    patterns = rng.standard_normal((10, 64)).astype(np.float32)
    y = rng.integers(0, 10, n)
    x = patterns[y] + 0.5 * rng.standard_normal((n, 64)).astype(np.float32)
    return x.astype(np.float32), y.astype(np.int32)


class MLP:
    def __init__(self):
        self.l1 = nn.Linear(64, 32)
        self.l2 = nn.Linear(32, 10)

    def __call__(self, x: Tensor) -> Tensor:
        return self.l2(self.l1(x).relu())


def cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    return -(logits.log_softmax(-1) * labels.one_hot(10)).sum(-1).mean()


def main(steps: int = 5) -> dict:
    """Train; the loss before each step and the accuracy after."""
    x_np, y_np = synthetic_digits(32, seed=0)
    x, y = Tensor(x_np), Tensor(y_np)
    model = MLP()
    load_numpy_weights(model, seed=1)
    opt = nn.optim.Adam(nn.state.get_parameters(model), lr=0.01)
    losses = []
    with Context(TRAINING=1):
        for _ in range(steps):
            opt.zero_grad()
            loss = cross_entropy(model(x), y)
            loss.backward()
            losses.append(loss.item())  # before step(): tinygrad would compute a lazy loss from the new weights
            opt.step()
    accuracy = float((model(x).argmax(-1) == y).float().mean().item())
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    print(json.dumps(main()))
