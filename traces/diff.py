"""`simgpu trace diff a b`: the first records where two traces differ, with context."""

from __future__ import annotations

import collections
import itertools
import sys

from traces.format import TraceError, TraceReader
from traces.show import format_record

_MISSING = {"t": "(end of trace)"}


def _key_diff(a: dict, b: dict) -> str:
    """Which fields of two records differ."""
    keys = [k for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
    return ", ".join(keys)


def first_differences(a, b, limit: int = 1) -> list[tuple[int, dict | None, dict | None, str]]:
    """Up to `limit` (record number, record of a, record of b, differing fields), and the header difference
    as record -1."""
    out = []
    with TraceReader(a) as ra, TraceReader(b) as rb:
        ha, hb = ({k: v for k, v in h.items() if k != "format"} for h in (ra.header, rb.header))
        if ha != hb:
            out.append((-1, ha, hb, _key_diff(ha, hb)))
        for (n, ea, eb) in ((i, x, y) for i, (x, y) in enumerate(itertools.zip_longest(ra.records(), rb.records()))):
            if ea != eb:
                out.append((n, ea, eb, _key_diff(ea or {}, eb or {})))
                if len(out) >= limit:
                    break
    return out


def diff_main(a: str, b: str, context: int = 3, limit: int = 1, out=None) -> int:
    """CLI: 0 when identical, 1 when they differ (first differences printed with context), 2 unreadable."""
    out = out or sys.stdout
    try:
        diffs = first_differences(a, b, limit)
        if not diffs:
            print("traces are identical record for record", file=out)
            return 0
        for n, ea, eb, keys in diffs:
            if n < 0:
                print(f"headers differ in {keys}: {ea} vs {eb}", file=out)
                continue
            print(f"first difference at record {n} (fields: {keys})", file=out)
            for line in _context(a, n, context):
                print(f"  {line}", file=out)
            print(f"- {n:6d} {format_record(ea) if ea else _MISSING['t']}", file=out)
            print(f"+ {n:6d} {format_record(eb) if eb else _MISSING['t']}", file=out)
    except TraceError as e:
        print(f"simgpu trace diff: {e.path}: {e}" if e.path else f"simgpu trace diff: {e}", file=sys.stderr)
        return 2
    return 1


def _context(path: str, n: int, context: int) -> list[str]:
    prev = collections.deque(maxlen=context)
    with TraceReader(path) as r:
        for number, _, rec in r:
            if number >= n:
                break
            prev.append(f"{number:6d} {format_record(rec)}")
    return list(prev)
