"""numpy helpers for per-lane memory access: unique keys with inverse, distinct slots, last-writer-wins selection."""

from __future__ import annotations

import numpy as np


def unique_inverse(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique keys and, per key, its index in them (like np.unique(return_inverse=True))."""
    if keys.size <= 1:
        return keys.copy(), np.zeros(keys.size, dtype=np.intp)
    lo, hi = keys.min(), keys.max()
    if lo == hi:  # a coalesced wave: every lane in one page
        return keys[:1].copy(), np.zeros(keys.size, dtype=np.intp)
    span = int(hi - lo) + 1
    if span > 4 * keys.size + 4096:
        uniq, inv = np.unique(keys, return_inverse=True)
        return uniq, inv.reshape(-1)
    # dense keys (the pages of one buffer): a presence map is O(n + span) instead of a sort
    rel = (keys - lo).astype(np.intp)
    present = np.zeros(span, dtype=bool)
    present[rel] = True
    rank = np.cumsum(present, dtype=np.intp) - 1
    return (np.flatnonzero(present) + int(lo)).astype(keys.dtype), rank[rel]


def all_distinct(slots: np.ndarray, span: int) -> bool:
    """Whether no two of `slots` (non-negative intp, each below `span`) are equal: counted when the span is at most
    a few times the slots or 128 Ki (a column block of a row-major matrix, lanes a row apart: counting 128 Ki slots
    costs less than sorting 4 Ki), else sorted."""
    if span <= max(8 * slots.size, 1 << 17):
        return int(np.bincount(slots, minlength=span).max()) <= 1
    ordered = np.sort(slots)
    return bool((ordered[1:] != ordered[:-1]).all())


def stable_order(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, keys[order]) with equal keys kept in lane order, like argsort(kind="stable")."""
    n = keys.size
    lo = keys.min() if n else 0
    rel = (keys - lo).astype(np.int64)
    shift = max(n - 1, 1).bit_length()
    if n and int(rel.max()) < (1 << (62 - shift)):
        # (key, lane) packed in one int64 is unique, so numpy's fast (SIMD, unstable) sort is stable here:
        # about 10x quicker than a stable argsort of 1M keys
        packed = np.sort((rel << shift) | np.arange(n, dtype=np.int64))
        return packed & ((1 << shift) - 1), keys[packed & ((1 << shift) - 1)]
    order = np.argsort(keys, kind="stable")
    return order, keys[order]


def last_wins(keys: np.ndarray) -> np.ndarray | None:
    """Positions to keep so that each key is written once, by its last (highest-lane) writer.

    Returns None when the keys are already distinct. numpy does not promise an order for fancy
    assignment with repeated indices, so duplicates are removed explicitly to stay deterministic.
    """
    if keys.size <= 1 or (keys[1:] > keys[:-1]).all():  # strictly increasing: the usual coalesced store
        return None
    order, sk = stable_order(keys)
    last = np.empty(keys.size, dtype=bool)
    last[:-1] = sk[1:] != sk[:-1]
    last[-1] = True
    return None if last.all() else order[last]
