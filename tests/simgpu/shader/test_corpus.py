"""The kernel corpus (compiler/samples/corpus.py) runs on the shader engine and matches numpy, in both tiers
(the interpreter, and the JIT tier compiling each kernel at once); the two tiers end with the same
memory, registers, counters and clock; each kernel run twice gives identical bytes and counters."""


import numpy as np
import pytest

from compiler.samples import corpus
from tests.support import tiers

KERNELS = {k.name: k for k in corpus()}


def run_kernel(name: str, seed: int = 0, tier: str = "interpreter", keep: list | None = None):
    """Run a corpus kernel on a fresh testbed: (arguments after the run, counters, clock)."""
    k = KERNELS[name]
    tb = tiers.testbed(tier, vram_size=1 << 30)
    if keep is not None:
        keep.append(tb)
    loaded = tb.load(k.code_object())[name]
    args = k.inputs(np.random.default_rng(seed))
    vas = [tb.upload(a) if isinstance(a, np.ndarray) else a for a in args]
    tb.launch(loaded, vas, k.grid, k.block, k.shared)
    after = [tb.download(va, a.dtype, a.size) if isinstance(a, np.ndarray) else a
             for va, a in zip(vas, args, strict=True)]
    return args, after, tb.engine.counters.snapshot(), tb.engine.clock.cycles


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_corpus_kernel_matches_numpy(name):
    args, after, counters, _ = run_kernel(name)
    assert KERNELS[name].mismatch(args, after) is None
    assert counters["wave_instructions"] > 0


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_corpus_kernel_tiers_agree(name):
    """The JIT tier's results match numpy too, and both tiers end in the same state."""
    testbeds = []
    run_kernel(name, seed=2, keep=testbeds)
    for tier in ("jit", "jit-lean"):
        args, after, counters, _ = run_kernel(name, seed=2, tier=tier, keep=testbeds)
        assert KERNELS[name].mismatch(args, after) is None
        tiers.assert_same(testbeds[0], testbeds[-1])


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_corpus_kernel_is_deterministic(name):
    first, second = run_kernel(name, seed=1), run_kernel(name, seed=1)
    assert [a.tobytes() if isinstance(a, np.ndarray) else a for a in first[1]] == \
        [a.tobytes() if isinstance(a, np.ndarray) else a for a in second[1]]
    assert first[2:] == second[2:]
