"""Accuracy of the compiler's transcendentals, per function, dtype and GPU backend, in ULP of the result type.

    MOCKGPU=1 python -m tools.ulp_report [--n 4096] [--backends native,llvm]

Each function runs as one kernel over n inputs drawn on its range (log-uniform where the function spans
magnitudes) on the simulated gfx1100, and is compared with NumPy's long double (x87 80-bit: 64-bit
significand) result: the error of each element is |got - exact| / ulp(exact), the ulp being the spacing of the
result type at the exact value (subnormal spacing below the smallest normal). Reported: the maximum over the
inputs. docs/compiler.md ("Transcendentals") holds the table this prints; tests/compiler/test_native.py checks
the native backend against the bounds stated there.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

# name -> (Tensor method, NumPy long double reference, input range (lo, hi, log-uniform?))
FUNCTIONS = {
    "exp2": (lambda t: t.exp2(), np.exp2, (-60.0, 60.0, False)),
    "exp": (lambda t: t.exp(), np.exp, (-40.0, 40.0, False)),
    "log2": (lambda t: t.log2(), np.log2, (1e-30, 1e30, True)),
    "log": (lambda t: t.log(), np.log, (1e-30, 1e30, True)),
    "sin": (lambda t: t.sin(), np.sin, (-100.0, 100.0, False)),
    "cos": (lambda t: t.cos(), np.cos, (-100.0, 100.0, False)),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, (1e-30, 1e30, True)),
    "rsqrt": (lambda t: t.rsqrt(), lambda x: 1 / np.sqrt(x), (1e-30, 1e30, True)),
    "reciprocal": (lambda t: t.reciprocal(), lambda x: 1 / x, (1e-30, 1e30, True)),
    "tanh": (lambda t: t.tanh(), np.tanh, (-10.0, 10.0, False)),
    "sigmoid": (lambda t: t.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), (-20.0, 20.0, False)),
    "asin": (lambda t: t.asin(), np.arcsin, (-1.0, 1.0, False)),
    "acos": (lambda t: t.acos(), np.arccos, (-1.0, 1.0, False)),
    "atan": (lambda t: t.atan(), np.arctan, (-1e4, 1e4, False)),
    "sinh": (lambda t: t.sinh(), np.sinh, (-80.0, 80.0, False)),
    "cosh": (lambda t: t.cosh(), np.cosh, (-80.0, 80.0, False)),
    "asinh": (lambda t: t.asinh(), np.arcsinh, (-1e4, 1e4, False)),
    "acosh": (lambda t: t.acosh(), np.arccosh, (1.0, 1e30, True)),
    "atanh": (lambda t: t.atanh(), np.arctanh, (-1.0, 1.0, False)),
    "log10": (lambda t: t.log10(), np.log10, (1e-30, 1e30, True)),
}
# significand bits and smallest normal exponent of each result type; the ranges each type can hold
FORMATS = {"float64": (53, -1022), "float32": (24, -126), "float16": (11, -14), "bfloat16": (8, -126)}
LIMIT = {"float16": 1e4, "float64": 1e300}
DTYPES = ("float32", "float16", "bfloat16", "float64")


def _inputs(dt: str, lo: float, hi: float, log: bool, n: int, rng: np.random.Generator) -> np.ndarray:
    limit = LIMIT.get(dt, 1e30)
    if log:
        x = np.exp(rng.uniform(np.log(max(lo, 1 / limit)), np.log(min(hi, limit)), n))
    else:
        span = 10.0 if dt == "float16" else hi
        x = rng.uniform(max(lo, -span), min(hi, span), n)
    storage = np.float32 if dt == "bfloat16" else dt
    x = x.astype(storage)
    if dt == "bfloat16":  # exactly representable inputs (truncated to the top 16 bits)
        x = (x.view(np.uint32) & 0xFFFF0000).view(np.float32)
    return x


def _ulp(exact: np.ndarray, dt: str) -> np.ndarray:
    p, emin = FORMATS[dt]
    _, e = np.frexp(np.abs(exact))  # |exact| = m * 2^e, m in [0.5, 1)
    e = np.maximum(e.astype(np.int64) - 1, emin)
    return np.ldexp(np.ones_like(exact), (e - p + 1).astype(np.int32))


def measure(backend: str, n: int = 4096, seed: int = 0, dtypes_=DTYPES, functions=None) -> dict:
    """{(function, dtype): max ULP error} with one backend (module docstring)."""
    from compiler import Tensor, dtypes
    from compiler import backend as backends
    out = {}
    with backends.using(backend):
        for name, (fn, ref, (lo, hi, log)) in FUNCTIONS.items():
            if functions and name not in functions:
                continue
            for dt in dtypes_:
                x = _inputs(dt, lo, hi, log, n, np.random.default_rng(seed))
                got = fn(Tensor(x, dtype=getattr(dtypes, dt))).numpy().astype(np.longdouble)
                exact = ref(x.astype(np.longdouble))
                ok = np.isfinite(exact) & (np.abs(exact) < LIMIT.get(dt, 3e38))
                err = np.abs(got[ok] - exact[ok]) / _ulp(exact[ok], dt)
                out[(name, dt)] = float(np.max(err)) if err.size else float("nan")
    return out


def main() -> None:
    """Print the table (markdown) for the chosen backends."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--backends", default="native,llvm")
    args = ap.parse_args()
    os.environ.setdefault("MOCKGPU", "1")
    names = args.backends.split(",")
    res = {b: measure(b, args.n) for b in names}
    print("| function | " + " | ".join(f"{dt} {b}" for dt in DTYPES for b in names) + " |")
    print("|---|" + "---|" * (len(DTYPES) * len(names)))
    for fn in FUNCTIONS:
        print(f"| {fn} | " + " | ".join(f"{res[b][(fn, dt)]:.2f}" for dt in DTYPES for b in names) + " |")


if __name__ == "__main__":
    main()
