"""The CPU device against the simulated GPU, case by case: the same program runs with the x86 backend under
unicorn and with each GPU backend on the simulated gfx1100, and the results are compared.

Both sides run the same kernel IR (the same loops, reduction orders, LDS trees), so (docs/compiler.md,
"CPU device"):
- integers and bools are identical, including the IR's edge cases (division by zero, INT_MIN // -1, shifts by
  the width or more);
- IEEE-exact float operations (+ - * / sqrt fma min max compares trunc, conversions, and whatever is built
  from them: sums, means, matrix products of one strategy, random numbers from integer bits) are identical,
  bit for bit, with inf, NaN (any NaN equals any NaN), -0 (equal to +0) and float32 subnormals among the
  inputs;
- transcendentals differ: the GPU computes float32 exp2/log2 with its approximate v_exp/v_log (1 ulp), the CPU
  with the IR polynomials: float32 within 4e-7 relative (TRANSCENDENTAL_F32), float16/bfloat16 within one
  unit of their last place, float64 identical (both use the IR polynomials);
- float16/bfloat16 matrix products differ where the GPU uses matrix cores (exact products, one rounding) and
  the CPU the loop (a rounding per step).
"""

import numpy as np
import pytest

from compiler import Tensor, dtypes
from compiler import backend as backends
from compiler import device as devices
from tests.support.ops import FLOATS, INTS

GPU_BACKENDS = backends.available("AMD")
TRANSCENDENTAL_F32 = 4e-7  # relative, plus 1e-30 absolute (docstring)
ULP16 = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def _inputs(dt: str, n: int, seed: int, special: bool = True) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dt == "bool":
        return rng.random(n) < 0.5
    if dt in INTS:
        info = np.iinfo(dt)
        edge = [min(max(e, info.min), info.max) for e in (0, 1, -1, info.min, info.max, info.min + 1, 2, 3)]
        v = [int(x) for x in rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True)]
        return np.array(edge + v[len(edge):], dtype=dt)
    v = rng.uniform(-8, 8, n)
    if special:
        v[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 0.5, -2.5]
    return v.astype(np.float32 if dt == "bfloat16" else dt)


def _t(a: np.ndarray, dt: str) -> Tensor:
    return Tensor(a, dtype=getattr(dtypes, dt))


def _run(fn, kind: str, backend: str) -> np.ndarray:
    old = devices.DEFAULT
    devices.DEFAULT = kind
    try:
        with backends.using(backend):
            out = fn()
            return out.numpy() if isinstance(out, Tensor) else out
    finally:
        devices.DEFAULT = old


def _both(fn, gpu: str) -> tuple[np.ndarray, np.ndarray]:
    return _run(fn, "CPU", "x86"), _run(fn, "AMD", gpu)


def _same(cpu: np.ndarray, gpu: np.ndarray, what: str) -> None:
    assert cpu.dtype == gpu.dtype and cpu.shape == gpu.shape, what
    if cpu.dtype.kind == "f":
        np.testing.assert_array_equal(cpu, gpu, err_msg=what)  # NaN == NaN, -0 == +0
    else:
        assert np.array_equal(cpu, gpu), f"{what}: CPU {cpu} GPU {gpu}"


INT_BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
              "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "max": lambda a, b: a.maximum(b),
              "min": lambda a, b: a.minimum(b), "lt": lambda a, b: a < b, "eq": lambda a, b: a == b,
              "ne": lambda a, b: a != b, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
              "xor": lambda a, b: a ^ b}
FLOAT_BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                "div": lambda a, b: a / b, "max": lambda a, b: a.maximum(b), "min": lambda a, b: a.minimum(b),
                "lt": lambda a, b: a < b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
                "where": lambda a, b: (a < b).where(a, b), "mod": lambda a, b: a % b}


@pytest.mark.parametrize("gpu", GPU_BACKENDS)
@pytest.mark.parametrize("dt", INTS + ["bool"])
def test_integer_ops_are_identical(gpu, dt):
    a, b = _inputs(dt, 24, 1), _inputs(dt, 24, 2)
    ops = {k: f for k, f in INT_BINARY.items() if dt != "bool" or k in ("and", "or", "xor", "eq", "ne", "max")}

    def program():
        x, y = _t(a, dt), _t(b, dt)
        outs = [f(x, y) for f in ops.values()]
        if dt != "bool":
            outs += [-x, ~x, x.abs(), x.sum(), x.max(), (x * y).sum(0)]
        return outs

    cpu, gpu_out = _run(lambda: [o.numpy() for o in program()], "CPU", "x86"), \
        _run(lambda: [o.numpy() for o in program()], "AMD", gpu)
    for name, c, g in zip([*ops, "neg", "invert", "abs", "sum", "max", "dot"], cpu, gpu_out, strict=False):
        _same(c, g, f"{dt} {name}")


@pytest.mark.parametrize("gpu", GPU_BACKENDS)
@pytest.mark.parametrize("dt", ["int8", "uint8", "int16", "int32", "uint32", "int64", "uint64"])
def test_shifts_by_any_amount_are_identical(gpu, dt):
    bits = np.dtype(dt).itemsize * 8
    a = _inputs(dt, bits + 4, 3)
    n = np.arange(bits + 4).astype(dt)
    cpu, g = _both(lambda: (_t(a, dt) << _t(n, dt)) ^ (_t(a, dt) >> _t(n, dt)), gpu)
    _same(cpu, g, f"{dt} shifts")


@pytest.mark.parametrize("gpu", GPU_BACKENDS)
@pytest.mark.parametrize("dt", FLOATS)
def test_exact_float_ops_are_identical(gpu, dt):
    a, b = _inputs(dt, 40, 4), _inputs(dt, 40, 5)[::-1].copy()

    def program():
        x, y = _t(a, dt), _t(b, dt)
        outs = [f(x, y) for f in FLOAT_BINARY.values()]
        return [o.numpy() for o in outs + [-x, x.abs(), x.sqrt(), x.trunc(), x.floor(), x.round(), x * y + x,
                                           x.relu(), (x * x).sum(), x.max()]]

    names = [*FLOAT_BINARY, "neg", "abs", "sqrt", "trunc", "floor", "round", "muladd", "relu", "sumsq", "max"]
    for name, c, g in zip(names, _run(program, "CPU", "x86"), _run(program, "AMD", gpu), strict=True):
        _same(c, g, f"{dt} {name}")


CAST_TYPES = ["bool", *INTS, *FLOATS]


@pytest.mark.parametrize("gpu", GPU_BACKENDS)
@pytest.mark.parametrize("src", CAST_TYPES)
def test_casts_are_identical(gpu, src):
    """Every conversion from src, with values every destination holds (float -> int in range: the IR leaves
    NaN and out-of-range conversions to the backend)."""
    rng = np.random.default_rng(6)
    if src in FLOATS:
        a = rng.uniform(-100, 100, 32).astype(np.float32)
        a[:4] = [0.0, -0.0, 99.5, -99.5]
    else:
        a = _inputs(src, 32, 6).astype(np.int64) % 100 if src != "bool" else _inputs(src, 32, 6)
    dsts = [d for d in CAST_TYPES if d != src]

    def program():
        x = _t(a.astype(np.float32) if src == "bfloat16" else a.astype(src) if src != "bool" else a, src)
        return [(x.abs() if dst.startswith("u") and src in FLOATS else x).cast(getattr(dtypes, dst)).numpy()
                for dst in dsts]

    for dst, c, g in zip(dsts, _run(program, "CPU", "x86"), _run(program, "AMD", gpu), strict=True):
        _same(c, g, f"{src} -> {dst}")


@pytest.mark.parametrize("gpu", GPU_BACKENDS)
def test_float_edge_conversions_are_identical(gpu):
    """float64 -> float16/bfloat16/float32 at rounding midpoints and overflow edges, integers -> floats."""
    m = np.array([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 65519.99, 65520.0, 2.0 ** -25, 3 * 2.0 ** -26, 1e300, -1e-300,
                  1 + 2.0 ** -8 + 2.0 ** -40, 3.4028235e38, np.nan, -np.inf], np.float64)
    ints = np.array([2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 12345678901234567, 1, 0], np.uint64)

    def program():
        x, n = _t(m, "float64"), _t(ints, "uint64")
        return [x.cast(dtypes.float16).numpy(), x.cast(dtypes.bfloat16).numpy(), x.cast(dtypes.float32).numpy(),
                n.cast(dtypes.float32).numpy(), n.cast(dtypes.float64).numpy(),
                n.cast(dtypes.int64).cast(dtypes.float32).numpy()]

    for k, (c, g) in enumerate(zip(_run(program, "CPU", "x86"), _run(program, "AMD", gpu), strict=True)):
        _same(c, g, f"conversion {k}")


@pytest.mark.parametrize("gpu", GPU_BACKENDS)
def test_reductions_matmul_and_random_are_identical(gpu):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    b = rng.standard_normal((64, 48)).astype(np.float32)
    big = rng.standard_normal((8, 1000)).astype(np.float32)

    def program():
        Tensor.manual_seed(5)
        x, y, z = Tensor(a), Tensor(b), Tensor(big)
        return [(x @ y).numpy(), z.sum(1).numpy(), z.max(1).numpy(), z.mean(0).numpy(), z.argmax(1).numpy(),
                x.cumsum(1).numpy(), x.softmax(1).sum(1).numpy() * 0 + x.max(1).numpy(),
                Tensor.rand(50).numpy(), Tensor.randint(50, low=-5, high=9).numpy()]

    for k, (c, g) in enumerate(zip(_run(program, "CPU", "x86"), _run(program, "AMD", gpu), strict=True)):
        _same(c, g, f"case {k}")


@pytest.mark.parametrize("gpu", GPU_BACKENDS)
@pytest.mark.parametrize("dt", FLOATS)
def test_transcendentals_agree_within_the_documented_tolerance(gpu, dt):
    a = _inputs(dt, 48, 8)
    pos = np.abs(a)

    def program():
        x, p = _t(a, dt), _t(pos, dt)
        return [x.exp2().numpy(), p.log2().numpy(), x.sin().numpy(), x.exp().numpy(), p.log().numpy(),
                x.tanh().numpy(), x.sigmoid().numpy()]

    for k, (c, g) in enumerate(zip(_run(program, "CPU", "x86"), _run(program, "AMD", gpu), strict=True)):
        c64, g64 = c.astype(np.float64), g.astype(np.float64)
        assert np.array_equal(np.isnan(c64), np.isnan(g64)), f"{dt} case {k}"
        ok = ~np.isnan(c64)
        if dt == "float64":
            np.testing.assert_array_equal(c64[ok], g64[ok], err_msg=f"{dt} case {k}")
        elif dt == "float32":
            np.testing.assert_allclose(c64[ok], g64[ok], rtol=TRANSCENDENTAL_F32, atol=1e-30, err_msg=f"case {k}")
        else:
            np.testing.assert_allclose(c64[ok], g64[ok], rtol=ULP16[dt], atol=2.0 ** -24, err_msg=f"{dt} case {k}")
