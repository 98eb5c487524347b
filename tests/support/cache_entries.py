"""Damaged cache entries for the fuzz tests of the disk caches (simgpu.diskcache, the JIT's, the kernel cache): random
bytes, truncations, bit flips, bytes appended, and whole entries of other keys put in an entry's place."""

from __future__ import annotations

from hypothesis import strategies as st


def flip(data: bytes, bit: int) -> bytes:
    """`data` with one bit inverted."""
    out = bytearray(data)
    out[bit // 8] ^= 1 << bit % 8
    return bytes(out)


def damaged(data: bytes, others: list[bytes]) -> st.SearchStrategy[tuple[str, bytes]]:
    """(what was done, the bytes) for an entry `data`, `others` being entries stored under other keys."""
    n = len(data)
    return st.one_of(
        st.tuples(st.just("random bytes"), st.binary(max_size=n + 64)),
        st.tuples(st.just("truncated"), st.integers(0, n - 1).map(lambda i: data[:i])),
        st.tuples(st.just("bit flip"), st.integers(0, 8 * n - 1).map(lambda b: flip(data, b))),
        st.tuples(st.just("bytes appended"), st.binary(min_size=1, max_size=16).map(lambda tail: data + tail)),
        st.tuples(st.just("another key's entry"), st.sampled_from(others)),
    )
