"""Helpers of the compiler's ops suite: inputs per dtype, comparison with NumPy under per-dtype tolerances,
and gradients checked against central finite differences of the NumPy reference (float64, on the host).

Tolerances (docs/compiler.md, "Testing"): integers and bools exact; float16 rtol=atol=1e-3, bfloat16 2e-2,
float32 rtol 1e-5 / atol 1e-6, float64 1e-12; an op may widen them for its float types (transcendentals,
long reductions), as its test says.
"""

from __future__ import annotations

import numpy as np

from compiler import Tensor, dtypes
from compiler.dtypes import from_bf16_bits, to_bf16_bits

TOL = {"float16": (1e-3, 1e-3), "bfloat16": (2e-2, 2e-2), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def host_dtype(name: str) -> np.dtype:
    """The NumPy dtype reference values are computed in (bfloat16: float32)."""
    return np.dtype(np.float32) if name == "bfloat16" else np.dtype(name)


def rounded(a: np.ndarray, name: str) -> np.ndarray:
    """Values as the dtype holds them (bfloat16 rounding applied to float32)."""
    if name == "bfloat16":
        return from_bf16_bits(to_bf16_bits(a.astype(np.float32)))
    return a.astype(host_dtype(name))


def rand(shape, name: str, rng: np.random.Generator, low=-3.0, high=3.0) -> np.ndarray:
    """Random values of dtype `name` in [low, high) (integers: within the type's range too)."""
    if name == "bool":
        return rng.random(shape) < 0.5
    dt = np.dtype(name) if name != "bfloat16" else None
    if dt is not None and dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(int(low), int(info.min)), min(int(high), int(info.max))
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dt)
    return rounded(rng.uniform(low, high, size=shape), name)


def assert_close(ours: np.ndarray, ref: np.ndarray, name: str, rtol: float | None = None, atol: float | None = None):
    """ours equals ref: exactly for integers and bools, within the dtype's tolerance for floats (NaN == NaN)."""
    ref = np.asarray(ref)
    assert ours.shape == ref.shape, f"shape {ours.shape} != {ref.shape}"
    if name not in TOL:
        assert np.array_equal(ours, ref.astype(ours.dtype)), f"{name}: {ours} != {ref}"
        return
    r, a = TOL[name]
    ref = rounded(ref, name) if name == "bfloat16" else ref
    np.testing.assert_allclose(ours.astype(np.float64), ref.astype(np.float64), rtol=rtol or r, atol=atol if atol
                               is not None else a, equal_nan=True)


def tensor(a: np.ndarray, name: str, requires_grad: bool = False) -> Tensor:
    """A device tensor of dtype name holding a."""
    return Tensor(a, dtype=getattr(dtypes, name), requires_grad=requires_grad)


def numeric_grad(fn, arrays: list[np.ndarray], weight: np.ndarray, eps: float = 1e-6) -> list[np.ndarray]:
    """d sum(fn(*arrays) * weight) / d arrays by central differences in float64."""
    arrays = [a.astype(np.float64) for a in arrays]
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            saved = a[j]
            a[j] = saved + eps
            hi = np.sum(fn(*arrays) * weight)
            a[j] = saved - eps
            lo = np.sum(fn(*arrays) * weight)
            a[j] = saved
            g[j] = (hi - lo) / (2 * eps)
        grads.append(g)
    return grads


def check_grad(tfn, nfn, arrays: list[np.ndarray], rtol: float = 1e-3, atol: float = 1e-4, seed: int = 0):
    """The float32 gradients of tfn (through backward()) match finite differences of nfn."""
    rng = np.random.default_rng(seed)
    ts = [Tensor(a.astype(np.float32), requires_grad=True) for a in arrays]
    out = tfn(*ts)
    weight = rng.uniform(0.5, 1.5, size=out.shape)
    (out * Tensor(weight.astype(np.float32))).sum().backward()
    expected = numeric_grad(nfn, arrays, weight)
    for t, e in zip(ts, expected, strict=True):
        assert t.grad is not None, "no gradient reached an input"
        np.testing.assert_allclose(t.grad.numpy(), e, rtol=rtol, atol=atol)
