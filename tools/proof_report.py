#!/usr/bin/env python3
"""Summarise the z3 index proofs of a run: kernels proven, total and median seconds per kernel, the slowest.

    SIMGPU_CACHE_DIR=$(mktemp -d) SIMGPU_PROOF_LOG=/tmp/proofs.log .venv/bin/python -m pytest -n 2 -q tests/compiler
    .venv/bin/python tools/proof_report.py /tmp/proofs.log

SIMGPU_PROOF_LOG makes every proof append "kernel seconds" to the file (compiler.kernel); a fresh cache
directory makes every distinct kernel be proven (cached kernels carry their proof and are not proven again).
"""

from __future__ import annotations

import statistics
import sys


def main(path: str) -> int:
    rows = []
    with open(path) as f:
        for line in f:
            name, _, secs = line.strip().rpartition(" ")
            if name:
                rows.append((name, float(secs)))
    if not rows:
        print(f"{path}: no proofs logged")
        return 1
    times = [s for _, s in rows]
    print(f"{len(rows)} kernels proven: total {sum(times):.2f} s, median {statistics.median(times) * 1e3:.1f} ms, "
          f"mean {statistics.fmean(times) * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms")
    for name, s in sorted(rows, key=lambda r: -r[1])[:5]:
        print(f"  {s * 1e3:8.1f} ms  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/proofs.log"))
