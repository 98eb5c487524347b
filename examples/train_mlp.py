"""Train a small MLP with the compiler's frontend (docs/compiler.md, "Using the compiler"): nn layers, Adam, a
TinyJit step, and the weights saved and loaded in the safetensors format.

    MOCKGPU=1 python examples/train_mlp.py
"""

import pathlib
import tempfile

import numpy as np

from compiler import Tensor, nn
from compiler.jit import TinyJit
from compiler.nn.optim import Adam
from compiler.nn.state import get_parameters, get_state_dict, load_state_dict, safe_load, safe_save


class MLP:
    def __init__(self):
        self.l1, self.l2 = nn.Linear(64, 32), nn.Linear(32, 10)

    def __call__(self, x: Tensor) -> Tensor:
        return self.l2(self.l1(x).relu())


def main() -> None:
    Tensor.manual_seed(0)
    model = MLP()
    opt = Adam(get_parameters(model), lr=1e-2)

    @TinyJit
    def step(x: Tensor, y: Tensor) -> Tensor:
        opt.zero_grad()
        loss = model(x).sparse_categorical_crossentropy(y)
        loss.backward()
        loss.realize()  # the loss of these weights, before the step changes them
        opt.step()      # assigns the new weights, the moments and the step count, and realizes them
        return loss

    rng = np.random.default_rng(0)
    losses = []
    for _ in range(12):
        x = rng.standard_normal((32, 64)).astype(np.float32)
        y = x[:, :10].argmax(1).astype(np.int32)  # a rule the model can learn
        losses.append(step(Tensor(x), Tensor(y)).item())
    print(f"loss {losses[0]:.3f} -> {losses[-1]:.3f}: {'fell' if losses[-1] < losses[0] else 'did not fall'}")

    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "mlp.safetensors"
        safe_save(get_state_dict(model), path)
        copy = MLP()
        load_state_dict(copy, safe_load(path), verbose=False)
    x = Tensor(rng.standard_normal((4, 64)).astype(np.float32))
    same = np.array_equal(model(x).numpy(), copy(x).numpy())
    print("reloaded model gives the same logits" if same else "reloaded model differs")


if __name__ == "__main__":
    main()
