"""Random initialisers with tinygrad 0.14's names and signatures (issue 28): uniform, normal, scaled_uniform,
glorot_uniform, kaiming_uniform, kaiming_normal, randint, randperm, multinomial. We draw tinygrad's bit stream, so
a seed gives tinygrad's numbers: checked value for value against tinygrad's CPU device (one subprocess), and the
distributions against their own CDFs (Kolmogorov-Smirnov, chi-square) at fixed seeds."""

import inspect
import math

import numpy as np
import pytest

from compiler import Tensor, dtypes
from tests.support.tinygrad_cpu import run_tinygrad

SHAPE = (64, 256)
N = SHAPE[0] * SHAPE[1]
CALLS = {
    "uniform": "Tensor.uniform(64, 256, low=-2.0, high=3.0)",
    "normal": "Tensor.normal(64, 256, mean=1.5, std=0.5)",
    "scaled_uniform": "Tensor.scaled_uniform(64, 256)",
    "glorot_uniform": "Tensor.glorot_uniform(64, 256)",
    "kaiming_uniform": "Tensor.kaiming_uniform(64, 256, a=0.5)",
    "kaiming_normal": "Tensor.kaiming_normal(64, 256)",
    "randint": "Tensor.randint(64, 256, low=-3, high=5)",
    "randint_default": "Tensor.randint(N)",
}
SEQ = {  # more draws after CALLS, in this order: every dtype of rand, randn, randperm, multinomial
    "rand_half": "Tensor.rand(5, dtype=dtypes.half)", "rand_bf16": "Tensor.rand(3, dtype=dtypes.bfloat16)",
    "rand_f64": "Tensor.rand(2, 3, dtype=dtypes.float64)", "randn": "Tensor.randn(4, 3)",
    "randn_half": "Tensor.randn(3, dtype=dtypes.half)", "randperm": "Tensor.randperm(9)",
    "mult_r": "Tensor([1.0, 2.0, 3.0, 4.0]).multinomial(6, replacement=True)",
    "mult": "Tensor([[1.0, 2.0, 3.0], [3.0, 0.5, 1.0]]).multinomial(2)", "rand_0": "Tensor.rand(0)",
    "rand_like": "Tensor.ones(2, 2).rand_like()", "randn_like": "Tensor.ones(3).randn_like()",
    "normal_half": "Tensor.normal(4, mean=2.0, std=3.0, dtype=dtypes.half)",
}
_SCRIPT = """
import json, sys
import numpy as np
from tinygrad import Tensor, dtypes
Tensor.manual_seed(7)
out = {}
for k, e in list(CALLS.items()) + list(SEQ.items()):
    x = eval(e).numpy()
    out[k] = {"values": x.astype(np.float64).tolist(), "dtype": str(x.dtype)}
X64 = [0, 1, 2**32, 2**64 - 1, 0x0123456789ABCDEF, 12345]
seed64 = Tensor(0xFEDCBA9876543210, dtype=dtypes.uint64)
out["threefry"] = Tensor(X64, dtype=dtypes.uint64).threefry(seed64).numpy().tolist()
key, ctr = Tensor([7, 0xDEADBEEF], dtype=dtypes.uint32), Tensor([0xFFFFFFF0, 3], dtype=dtypes.uint32)
out["random_bits"] = Tensor.random_bits(key, ctr, 37).numpy().tolist()
out["random_bits_1"] = Tensor.random_bits(key, ctr, 1).numpy().tolist()
out["sig"] = {n: [p for p in __import__("inspect").signature(getattr(Tensor, n)).parameters] for n in NAMES}
json.dump(out, sys.stdout)
"""
NAMES = ["threefry", "random_bits", "uniform", "normal", "scaled_uniform", "glorot_uniform", "kaiming_uniform",
         "kaiming_normal", "randint", "randperm", "multinomial", "rand", "randn"]


@pytest.fixture(scope="module")
def tiny():
    return run_tinygrad(f"N = {N}\nCALLS = {CALLS!r}\nSEQ = {SEQ!r}\nNAMES = {NAMES!r}\n" + _SCRIPT)


def test_signatures_are_tinygrads(tiny):
    """tinygrad's named parameters (its **kwargs aside) are ours, in the same order."""
    for name in NAMES:
        theirs = [p for p in tiny["sig"][name] if p not in ("kwargs", "self", "cls")]
        ours = [p for p in inspect.signature(getattr(Tensor, name)).parameters if p not in ("kw", "self", "cls")]
        assert [p for p in ours if p in theirs] == theirs, (name, theirs, ours)


def test_values_match_tinygrad(tiny):
    """The same seed and sequence of draws give tinygrad's numbers (randn through our cos/log: float tolerance)."""
    Tensor.manual_seed(7)
    for k, e in CALLS.items():
        x = eval(e).numpy()
        ref = np.array(tiny[k]["values"])
        assert x.shape == ref.shape and str(x.dtype) == tiny[k]["dtype"], k
        np.testing.assert_allclose(x, ref, rtol=1e-5, atol=1e-6, err_msg=k)
    for k, e in SEQ.items():
        x = eval(e).numpy()
        assert x.shape == np.array(tiny[k]["values"]).shape and str(x.dtype) == tiny[k]["dtype"], k
        tol = 2e-3 if x.dtype == np.float16 else 1e-5  # float16 arithmetic after the draw: a rounding apart
        np.testing.assert_allclose(x, tiny[k]["values"], rtol=tol, atol=tol / 10, err_msg=k)


def _ks(x, cdf):
    x = np.sort(x.ravel().astype(np.float64))
    f = cdf(x)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def test_distributions_against_their_cdfs():
    """Kolmogorov-Smirnov statistics below the 0.1% critical value (1.95/sqrt(n)), bounds as tinygrad defines them."""
    Tensor.manual_seed(3)
    crit = 1.95 / math.sqrt(N)
    u = Tensor.uniform(*SHAPE, low=-2.0, high=3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0 and _ks(u, lambda v: (v + 2) / 5) < crit
    z = Tensor.normal(*SHAPE, mean=1.5, std=0.5).numpy()
    phi = np.vectorize(lambda v: 0.5 * (1 + math.erf((v - 1.5) / (0.5 * math.sqrt(2)))))
    assert _ks(z, phi) < crit
    bound = math.sqrt(6 / (64 + 256))
    g = Tensor.glorot_uniform(*SHAPE).numpy()
    assert np.abs(g).max() <= bound and _ks(g, lambda v: (v + bound) / (2 * bound)) < crit
    bound = math.sqrt(6 / (1 + 0.5 ** 2) / 256)
    k = Tensor.kaiming_uniform(*SHAPE, a=0.5).numpy()
    assert np.abs(k).max() <= bound and _ks(k, lambda v: (v + bound) / (2 * bound)) < crit
    s = Tensor.scaled_uniform(*SHAPE).numpy()
    assert np.abs(s).max() <= 1 / math.sqrt(N) and _ks(s * math.sqrt(N), lambda v: (v + 1) / 2) < crit
    std = math.sqrt(2 / (1 + 0.01 ** 2) / 256)
    kn = Tensor.kaiming_normal(*SHAPE).numpy()
    assert _ks(kn, np.vectorize(lambda v: 0.5 * (1 + math.erf(v / (std * math.sqrt(2)))))) < crit
    assert Tensor.uniform(4, dtype=dtypes.float16).dtype == dtypes.float16
    assert Tensor.normal(2, 3, requires_grad=True).requires_grad
    leaf = Tensor.scaled_uniform(2, 3, requires_grad=True)
    assert leaf.requires_grad and leaf._ctx is None


def _chi2_ok(counts, probs):
    """Pearson's chi-square below the 0.1% critical value (approximated by Wilson-Hilferty)."""
    n, k = counts.sum(), len(counts)
    stat = float(((counts - n * probs) ** 2 / (n * probs)).sum())
    dof = k - 1
    crit = dof * (1 - 2 / (9 * dof) + 3.09 * math.sqrt(2 / (9 * dof))) ** 3
    return stat < crit


def test_randint_is_uniform_on_its_range():
    Tensor.manual_seed(5)
    r = Tensor.randint(20000, low=-3, high=5).numpy()
    assert r.dtype == np.int32 and r.min() == -3 and r.max() == 4
    assert _chi2_ok(np.bincount(r + 3, minlength=8), np.full(8, 1 / 8))
    assert Tensor.randint(2, 3, high=4, dtype=dtypes.uint8).dtype == dtypes.uint8
    with pytest.raises(TypeError, match="integer"):
        Tensor.randint(3, dtype=dtypes.float32)
    with pytest.raises(ValueError, match="low must be below high"):
        Tensor.randint(3, low=4, high=4)


def test_randperm_is_a_uniform_permutation():
    Tensor.manual_seed(11)
    p = Tensor.randperm(1000).numpy()
    assert p.dtype == np.int32 and sorted(p.tolist()) == list(range(1000))
    assert abs(np.corrcoef(p, np.arange(1000))[0, 1]) < 5 / math.sqrt(1000)
    ascents = int((p[1:] > p[:-1]).sum())  # Eulerian statistics: mean (n-1)/2, variance (n+1)/12
    assert abs(ascents - 999 / 2) < 5 * math.sqrt(1001 / 12)
    assert Tensor.randperm(6, dtype=dtypes.int64).dtype == dtypes.int64


def test_multinomial_frequencies_follow_the_weights():
    Tensor.manual_seed(13)
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    with_r = Tensor(w).multinomial(8000, replacement=True).numpy()
    assert with_r.dtype == np.int32 and with_r.shape == (8000,)
    assert _chi2_ok(np.bincount(with_r, minlength=4), w / w.sum())
    rows = Tensor(np.tile(w, (3000, 1))).multinomial(2).numpy()
    assert rows.shape == (3000, 2) and (rows[:, 0] != rows[:, 1]).all()
    assert _chi2_ok(np.bincount(rows[:, 0], minlength=4), w / w.sum())
    # the second draw without replacement: P(j second) = sum_i w_i/W * w_j/(W - w_i)
    second = np.array([sum(w[i] / 10 * w[j] / (10 - w[i]) for i in range(4) if i != j) for j in range(4)])
    assert _chi2_ok(np.bincount(rows[:, 1], minlength=4), second)
    one = Tensor(w).multinomial().numpy()
    assert one.shape == (1,)
    with pytest.raises(ValueError, match="exceeds 4 categories"):
        Tensor(w).multinomial(5)


def test_threefry_and_random_bits_are_tinygrads_bits(tiny):
    """The same pure functions of their inputs: bit for bit."""
    x64 = np.array([0, 1, 2**32, 2**64 - 1, 0x0123456789ABCDEF, 12345], np.uint64)
    got = Tensor(x64).threefry(Tensor(np.uint64(0xFEDCBA9876543210))).numpy()
    assert got.tolist() == tiny["threefry"]
    key = Tensor(np.array([7, 0xDEADBEEF], np.uint32))
    ctr = Tensor(np.array([0xFFFFFFF0, 3], np.uint32))
    assert Tensor.random_bits(key, ctr, 37).numpy().tolist() == tiny["random_bits"]
    assert Tensor.random_bits(key, ctr, 1).numpy().tolist() == tiny["random_bits_1"]
    assert Tensor.random_bits(key, ctr, 0).shape == (0,)
    with pytest.raises(TypeError, match="seed must be a uint64"):
        Tensor(x64).threefry(Tensor([1, 2]))
