"""Hypothesis strategies for a list of per-lane values drawn as one byte string.

`st.lists(st.one_of(...), min_size=n, max_size=n)` makes hypothesis book-keep every element (a span, a choice, a
shrink target): for the 32-64 lanes of a shader test that was most of the test's time. These give the same values
(a list of Python ints, each element as the element strategy would pick it: uniform integers, a sample of a list,
half special values and half random bits) from one `st.binary` draw. Shrinking still works on the bytes: all-zero
bytes are each strategy's simplest list (`lo`, the first sample, the first special value).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st


def _u64(b: np.ndarray) -> np.ndarray:
    """Rows of 8 bytes -> little-endian uint64."""
    return np.ascontiguousarray(b).view("<u8")[:, 0]


def integers(lo: int, hi: int, n: int):
    """n integers in [lo, hi] (a span of at most 2**64), like st.lists(st.integers(lo, hi), n, n)."""
    span = hi - lo + 1
    assert 0 < span <= 1 << 64

    def decode(blob: bytes) -> list[int]:
        raw = _u64(np.frombuffer(blob, np.uint8).reshape(n, 8))
        return [lo + int(x) % span for x in raw]
    return st.binary(min_size=8 * n, max_size=8 * n).map(decode)


def samples(values: list[int], n: int):
    """n values picked from `values`, like st.lists(st.sampled_from(values), n, n)."""
    table = list(values)

    def decode(blob: bytes) -> list[int]:
        picks = np.frombuffer(blob, "<u2") % len(table)
        return [table[i] for i in picks]
    return st.binary(min_size=2 * n, max_size=2 * n).map(decode)


def mixed(bits: int, special: list[int], n: int):
    """n values, each one of the specials or `bits` random bits, half and half, like
    st.lists(st.one_of(st.integers(0, 2**bits - 1), st.sampled_from(special)), n, n)."""
    table = list(special)
    mask = (1 << bits) - 1
    assert bits <= 64

    def decode(blob: bytes) -> list[int]:
        b = np.frombuffer(blob, np.uint8).reshape(n, 11)
        pick = b[:, 1:3].copy().view("<u2")[:, 0] % len(table)
        raw = _u64(b[:, 3:])
        return [int(r) & mask if s & 1 == 0 else table[p] for s, p, r in zip(b[:, 0], pick, raw, strict=True)]
    return st.binary(min_size=11 * n, max_size=11 * n).map(decode)
