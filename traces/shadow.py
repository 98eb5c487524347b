"""Shadow copies of GPU-visible mappings: which pages changed since the last look (vectorized with numpy)."""

from __future__ import annotations

import bisect

import numpy as np

PAGE = 4096
_WORDS = PAGE // 8


def changed_pages(cur: np.ndarray, shadow: np.ndarray) -> np.ndarray:
    """Indices of the pages (4 KiB; the last may be partial) where cur differs from shadow."""
    full = cur.size // PAGE
    parts = []
    if full:
        a = cur[:full * PAGE].view(np.uint64).reshape(full, _WORDS)
        s = shadow[:full * PAGE].view(np.uint64).reshape(full, _WORDS)
        parts.append(np.flatnonzero((a != s).any(axis=1)))
    if cur.size > full * PAGE and not np.array_equal(cur[full * PAGE:], shadow[full * PAGE:]):
        parts.append(np.array([full]))
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def runs(pages: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive page indices grouped into (first, count) runs."""
    if pages.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(pages) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [pages.size]))
    return [(int(pages[s]), int(e - s)) for s, e in zip(starts, ends, strict=True)]


class Shadows:
    """Tracked mappings by id: their current bytes (a view) and the bytes last seen."""

    def __init__(self):
        self.cur: dict[int, np.ndarray] = {}
        self.shadow: dict[int, np.ndarray] = {}
        self._index: tuple[list[int], list[tuple[int, int]]] | None = None  # see seen()

    def track(self, mid: int, view) -> None:
        """Start tracking a mapping; the shadow starts as zeros, so the first diff shows its initial content."""
        arr = np.frombuffer(view, np.uint8) if len(view) else np.zeros(0, np.uint8)
        self.cur[mid] = arr
        self.shadow[mid] = np.zeros(arr.size, np.uint8)
        self._index = None

    def untrack(self, mid: int) -> None:
        """Forget a mapping (drops our view before the mapping is closed)."""
        self.cur.pop(mid, None)
        self.shadow.pop(mid, None)
        self._index = None

    def seen(self, host: np.ndarray) -> bytes | None:
        """The bytes last seen where `host` (a view of some memory) lies inside a tracked mapping, else None:
        what the shadow holds of memory someone else (the GPU) reads. Mappings are found by host address; several
        may show the same memory (a buffer mapped twice), any of them will do: each collect() updates all."""
        if self._index is None:
            spans = sorted((a.ctypes.data, a.size, mid) for mid, a in self.cur.items() if a.size)
            self._index = ([s for s, _, _ in spans], [(n, mid) for _, n, mid in spans])
        starts, rest = self._index
        addr, n = host.ctypes.data, host.size
        for i in range(bisect.bisect_right(starts, addr) - 1, -1, -1):  # nearest start first (nested mappings)
            size, mid = rest[i]
            if addr + n <= starts[i] + size:
                lo = addr - starts[i]
                return self.shadow[mid][lo:lo + n].tobytes()
        return None

    def collect(self, mids=None) -> list[list]:
        """Changes since the last collect as [mapping id, first page, bytes] runs; updates the shadows."""
        out = []
        for mid in (sorted(self.cur) if mids is None else mids):
            cur, sh = self.cur[mid], self.shadow[mid]
            pages = changed_pages(cur, sh)
            for first, count in runs(pages):
                lo, hi = first * PAGE, min((first + count) * PAGE, cur.size)
                sh[lo:hi] = cur[lo:hi]
                out.append([mid, first, sh[lo:hi].tobytes()])
        return out

    def changes(self) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
        """(mapping id, page, bytes before, bytes now) of every page that changed since the last look; updates the
        shadows (like collect, with the old contents)."""
        out = []
        for mid in sorted(self.cur):
            cur, sh = self.cur[mid], self.shadow[mid]
            for page in changed_pages(cur, sh).tolist():
                lo, hi = page * PAGE, min((page + 1) * PAGE, cur.size)
                out.append((mid, page, sh[lo:hi].copy(), cur[lo:hi].copy()))
                sh[lo:hi] = cur[lo:hi]
        return out

    def apply(self, writes: list[list], seen: bool = False) -> None:
        """Write recorded runs into the mappings (replay); with `seen`, into the shadows too (the writes are known,
        so no later collect() has to find them)."""
        for mid, first, data in writes:
            lo, src = first * PAGE, np.frombuffer(data, np.uint8)
            self.cur[mid][lo:lo + src.size] = src
            if seen:
                self.shadow[mid][lo:lo + src.size] = src


def hex_at(data: bytes, at: int, n: int = 16) -> str:
    """A few dwords of a page from the one holding byte `at` (for divergence messages)."""
    lo = max(0, at - at % 4)
    return data[lo:lo + n].hex(" ", 4) if data else "(not written)"


def unmatched_write(shadows: Shadows, recorded: list[list]) -> tuple[int, int, bytes, bytes] | None:
    """The first byte changed since the last look that does not hold its value in the recorded runs, as (mapping id,
    byte offset, recorded page, page now), or None; updates the shadows. A concurrent recording's pages may also hold
    the caller's stores, so every byte the replay changed must match, not every recorded byte."""
    want_pages = by_page(recorded)
    for mid, page, old, new in shadows.changes():
        want = np.frombuffer(want_pages.get((mid, page), b""), np.uint8)
        changed = np.flatnonzero(old != new)
        inside = changed[changed < want.size]
        bad = np.concatenate([inside[want[inside] != new[inside]], changed[changed >= want.size]])
        if bad.size:
            return mid, page * PAGE + int(bad[0]), want.tobytes(), new.tobytes()
    return None


def differing_write(shadows: Shadows, recorded: list[list]) -> tuple[int, int, bytes, bytes] | None:
    """The first byte where the pages changed since the last look differ from the recorded runs (each page as a
    whole: a recording with no concurrent caller holds exactly what its GPU and driver wrote), as unmatched_write
    gives it, or None; updates the shadows."""
    want, got = by_page(recorded), by_page(shadows.collect())
    for key in sorted(want.keys() | got.keys()):
        a, b = want.get(key, b""), got.get(key, b"")
        if a != b:
            at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            return key[0], key[1] * PAGE + at, a, b
    return None


def by_page(writes: list[list]) -> dict[tuple[int, int], bytes]:
    """Runs split into {(mapping id, page): bytes}."""
    out = {}
    for mid, first, data in writes:
        for i in range(0, len(data), PAGE):
            out[(mid, first + i // PAGE)] = bytes(data[i:i + PAGE])
    return out
