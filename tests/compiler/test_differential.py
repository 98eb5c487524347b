"""The differential harness itself (tests/support/differential.py): inside the ops suite's `backend` fixture,
every launch is run by the other GPU backend too and compared, and a disagreement fails the case."""

import numpy as np
import pytest

from compiler import Tensor, device
from compiler import backend as backends
from tests.support import differential

pytestmark = pytest.mark.skipif("llvm" not in backends.available("AMD"), reason="needs both GPU backends")


def _program() -> list[np.ndarray]:
    x = Tensor(np.arange(48, dtype=np.float32).reshape(6, 8))
    return [(x + 1).numpy(), x.sum(1).numpy(), (x @ x.T).numpy(), x.cast("int32").max().numpy()]


def test_every_launch_is_compared_with_the_other_backend(monkeypatch):
    launches = []
    real = device.DeviceAdapter.launch
    monkeypatch.setattr(device.DeviceAdapter, "launch", lambda dev, prog, bufs: launches.append(prog.name) or
                        real(dev, prog, bufs))
    before = differential.stats["compared"]
    with backends.using("native"), differential.watch("native", "llvm"):
        _program()
    # each launch of the case runs natively and again with LLVM (on copies of its outputs), and is compared
    assert len(launches) >= 8 and len(launches) % 2 == 0
    assert differential.stats["compared"] - before == len(launches) // 2


def test_a_disagreement_fails_the_case(monkeypatch):
    def wrong(dev, ast, be, buffers, n, before, *rest):
        return [bytes(len(b)) for b in before]  # all zeros: not what the kernels compute
    monkeypatch.setattr(differential, "_run_other", wrong)
    with pytest.raises(AssertionError, match="output 0: llvm vs native"):
        with backends.using("native"), differential.watch("native", "llvm"):
            (Tensor(np.arange(8, dtype=np.float32)) + 1).numpy()
