"""The one line that differs between tinygrad and simgpu's compiler in these examples: where `Tensor`, `nn` and
`Context` come from. The programs say `from nnlib import Tensor, nn, Context` where a tinygrad program says
`from tinygrad import Tensor, nn` and `from tinygrad.helpers import Context`; NNLIB picks the library:

    MOCKGPU=1 python examples/tinygrad_api/mnist_mlp.py                 # compiler, on the simulated GPU
    NNLIB=compiler-cpu python examples/tinygrad_api/mnist_mlp.py        # compiler, on the CPU device
    NNLIB=tinygrad DEV=CPU python examples/tinygrad_api/mnist_mlp.py    # tinygrad 0.14 (CPU device)
"""

import contextlib
import os

LIB = os.environ.get("NNLIB", "compiler")

if LIB == "tinygrad":
    from tinygrad import Tensor, nn
    from tinygrad.helpers import Context
elif LIB in ("compiler", "compiler-cpu"):
    from compiler import Tensor, nn
    from compiler import device as _device

    if LIB == "compiler-cpu":
        _device.DEFAULT = "CPU"

    @contextlib.contextmanager
    def Context(TRAINING=None):  # noqa: N802, N803 - tinygrad's names
        """tinygrad's Context(TRAINING=1): the training flag is Tensor.training in compiler."""
        old = Tensor.training
        Tensor.training = bool(TRAINING) if TRAINING is not None else old
        try:
            yield
        finally:
            Tensor.training = old
else:
    raise SystemExit(f"NNLIB={LIB!r}: use tinygrad, compiler or compiler-cpu")

__all__ = ["Context", "Tensor", "nn"]


def load_numpy_weights(model, seed: int) -> None:
    """Give every tensor of model's state dict seeded NumPy values (uniform +-1/sqrt(fan-in); norm weights near 1,
    running statistics 0 and 1), so both libraries start from the same model."""
    import numpy as np
    rng = np.random.default_rng(seed)
    weights = {}
    for k, v in nn.state.get_state_dict(model).items():
        shape = tuple(v.shape)
        if k.endswith("num_batches_tracked"):
            a = np.zeros(shape, np.int64)
        elif k.endswith("running_var"):
            a = np.ones(shape, np.float32)
        elif k.endswith("running_mean"):
            a = np.zeros(shape, np.float32)
        elif len(shape) == 1 and k.endswith("weight"):
            a = (1 + 0.1 * rng.uniform(-1, 1, shape)).astype(np.float32)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            a = (rng.uniform(-1, 1, shape) / np.sqrt(fan_in)).astype(np.float32)
        weights[k] = Tensor(a)
    nn.state.load_state_dict(model, weights, verbose=False)
