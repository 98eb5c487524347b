"""An MNIST-style CNN (conv -> batchnorm -> relu -> maxpool, twice, then a linear layer, on 12x12 synthetic
images) trained a few steps with SGD and momentum, written against tinygrad's API; nnlib picks the library."""

import json

import numpy as np
from nnlib import Context, Tensor, load_numpy_weights, nn


def synthetic_images(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n 1x12x12 images: a class-dependent pattern plus noise, and their labels."""
    rng = np.random.default_rng(seed)
    patterns = rng.standard_normal((10, 1, 12, 12)).astype(np.float32)
    y = rng.integers(0, 10, n)
    x = patterns[y] + 0.5 * rng.standard_normal((n, 1, 12, 12)).astype(np.float32)
    return x.astype(np.float32), y.astype(np.int32)


class CNN:
    def __init__(self):
        self.c1, self.bn1 = nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4)
        self.c2, self.bn2 = nn.Conv2d(4, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 2 * 2, 10)

    def __call__(self, x: Tensor) -> Tensor:
        x = self.bn1(self.c1(x)).relu().max_pool2d(2)          # 10x10 -> 5x5
        x = self.bn2(self.c2(x)).relu().max_pool2d(2)          # 5x5 -> 2x2
        return self.fc(x.flatten(1))


def main(steps: int = 3) -> dict:
    """Train; the loss before each step, and the loss of the trained model in inference mode."""
    x_np, y_np = synthetic_images(8, seed=2)
    x, y = Tensor(x_np), Tensor(y_np)
    model = CNN()
    load_numpy_weights(model, seed=3)
    opt = nn.optim.SGD(nn.state.get_parameters(model), lr=0.05, momentum=0.9)
    losses = []
    with Context(TRAINING=1):
        for _ in range(steps):
            opt.zero_grad()
            loss = -(model(x).log_softmax(-1) * y.one_hot(10)).sum(-1).mean()
            loss.backward()
            losses.append(loss.item())  # before step(): tinygrad would compute a lazy loss from the new weights
            opt.step()
    eval_loss = -(model(x).log_softmax(-1) * y.one_hot(10)).sum(-1).mean().item()
    return {"losses": losses, "eval_loss": eval_loss,
            "running_mean": model.bn1.running_mean.numpy().tolist()}


if __name__ == "__main__":
    print(json.dumps(main()))
