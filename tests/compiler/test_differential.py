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


def _fresh_records(monkeypatch):
    """No records of the tests before (the same launches, kept for the next test, would be compared at once)."""
    monkeypatch.setattr(differential, "_records", {})
    monkeypatch.setattr(differential, "_generation", {})


def test_a_deferred_launch_is_checked_by_the_next_tests_launch_or_at_its_end(monkeypatch):
    """defer (the next test is the case with the other backend): a launch that test repeats is compared as it
    happens; one it does not is run by the other backend on the recorded bytes at its end."""
    _fresh_records(monkeypatch)
    on_bytes = []
    real = differential._run_on_bytes
    monkeypatch.setattr(differential, "_run_on_bytes", lambda *a: on_bytes.append(a[1]) or real(*a))
    x = np.arange(8, dtype=np.float32)
    before = differential.stats["compared"]
    with backends.using("llvm"), differential.watch("llvm", "native", defer=True):
        np.testing.assert_equal((Tensor(x) + 1).numpy(), x + 1)
        np.testing.assert_equal((Tensor(x) * 3).numpy(), x * 3)
    assert differential.stats["compared"] == before and not on_bytes  # both wait for the next test
    with backends.using("native"), differential.watch("native", "llvm"):
        np.testing.assert_equal((Tensor(x) + 1).numpy(), x + 1)  # repeats the first launch, not the second
        assert differential.stats["compared"] == before + 1 and not on_bytes
    assert len(on_bytes) == 1 and differential.stats["compared"] == before + 2


def test_a_deferred_disagreement_fails_the_next_test(monkeypatch):
    def wrong(dev, ast, be, ins, before, compile_ast):
        return [bytes(len(b)) for b in before]  # all zeros: not what the kernels compute
    _fresh_records(monkeypatch)
    monkeypatch.setattr(differential, "_run_on_bytes", wrong)
    with backends.using("llvm"), differential.watch("llvm", "native", defer=True):
        (Tensor(np.arange(8, dtype=np.float32)) + 1).numpy()
    with pytest.raises(AssertionError, match="output 0: native vs llvm"):
        with backends.using("native"), differential.watch("native", "llvm"):
            pass  # launches nothing: the deferred launch runs with native at the end
