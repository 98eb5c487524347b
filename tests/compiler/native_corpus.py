"""A spread of kernels for checks of the native backend's emitted instructions: every dtype through arithmetic,
comparisons, selects, casts to every other dtype, division, shifts, transcendentals, reductions, the tiled and
matrix-core matrix products, gated loads and stores (padding), LDS trees. Built from Tensor programs and
lowered without running anything."""

from __future__ import annotations

import functools

import numpy as np

from compiler import Tensor, dtypes
from compiler.backend import get
from compiler.ir.linearize import LinearKernel
from compiler.ir.printer import format_kernel
from compiler.kernel import linear_kernel
from compiler.schedule import schedule

ALL = [dtypes.bool, dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32,
       dtypes.int64, dtypes.uint64, dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]


def _programs() -> list[Tensor]:
    rng = np.random.default_rng(0)
    out = []
    for dt in ALL:
        a = Tensor(rng.uniform(1, 5, (4, 6)).astype(np.float32)).cast(dt)
        b = Tensor(rng.uniform(1, 5, (4, 6)).astype(np.float32)).cast(dt)
        if dt != dtypes.bool:
            out += [a + b, a - b, a * b, a.maximum(b), -a, (a < b).where(a, b), a.sum(1), a.max(0)]
        out += [a == b, a != b, *(a.cast(t) for t in ALL if t != dt)]
        if dt.is_int:
            out += [a // b, a % b, a // 3, a % 7, a // 8, ~a, a << 2, a >> 1, a << b, a >> b, a & b, a | b, a ^ b]
        if dt.is_float:
            out += [a / b, a.sqrt(), a.exp(), a.log(), a.sin(), a.trunc(), a.reciprocal()]
    x = Tensor(rng.standard_normal((32, 64)).astype(np.float32))
    w = Tensor(rng.standard_normal((64, 64)).astype(np.float32))
    h = Tensor(rng.standard_normal((32, 32)).astype(np.float16))
    out += [x @ w, x.softmax(), x.sum(), x.pad(((1, 1), (2, 0))), h @ h, h.cast(dtypes.bfloat16) @ h.cast(
        dtypes.bfloat16), x[:, :48].sum(1), x.cumsum(1)]
    d = Tensor(rng.standard_normal((4, 64)))  # float64 data: its own conversions, and a bfloat16 LDS tree
    out += [d.cast(dtypes.float16), d.cast(dtypes.bfloat16), x.cast(dtypes.bfloat16).max(1)]
    return out


@functools.cache
def corpus_kernels() -> tuple[LinearKernel, ...]:
    """The corpus, as the native backend receives it (lowered, rewritten, linearized)."""
    be = get("native")
    seen: dict[str, LinearKernel] = {}
    for t in _programs():
        for item in schedule([t.lazydata.base]):
            if item.kind == "kernel":
                k = linear_kernel(item.ast, be)
                seen.setdefault(format_kernel(k), k)
    return tuple(seen.values())
