"""pytest plugin: every xdist worker starts on its share of the suite's longest files, so a parallel run ends on short
tests with no worker idle.

Under `--dist worksteal` (`make test`) xdist hands each of the n workers a contiguous slice of the collection (the
first len/n items, then the next ...), and a worker that runs dry steals the back half of the longest queue left.
A long test at the back of a slice keeps its worker going at the end while the other has nothing left; long tests all
in one slice run one after another there. So the collection is laid out slice by slice: each slice begins with the
long files given to it (longest first, each to the slice with the least work so far that has room), then pytest's
order of everything else fills the slices to xdist's sizes; stealing then only moves short tests. Whole files move
(their order inside and their module-scoped fixtures stay as pytest arranged them).

The figures are a cold whole-suite run's seconds per file, committed in tests/data/suite_durations.json (regenerate
with tools/suite_durations.py from a run's --junitxml). Files under LONG seconds keep pytest's order, and so does
tests/compiler/test_ops_reduce.py: its x86 cases run before tests/compiler/test_cpu_device.py in one process fail that
file's SIMGPU_DEBUG=3 test (one kernel cached, not two), an order dependence pytest's order hides. Without xdist the
long files run first, longest first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DURATIONS = Path(__file__).resolve().parent.parent / "data" / "suite_durations.json"
LONG = 8.0  # seconds of a cold run: a file at least this long is placed at the front of a worker's slice
STAY = frozenset({"tests/compiler/test_ops_reduce.py"})


def file_seconds(path: Path = DURATIONS) -> dict[str, float]:
    """Seconds per test file of the committed run (none when the file is missing: pytest's order stands)."""
    try:
        return json.loads(path.read_text())["files"]
    except (OSError, ValueError, KeyError):
        return {}


def slice_sizes(n: int, workers: int) -> list[int]:
    """How many of n pending tests worksteal sends each idle worker at the start (xdist's check_schedule)."""
    sizes, left = [], n
    for i in range(workers):
        sizes.append(left // (workers - i))
        left -= sizes[-1]
    return sizes


def arrange(items: list, seconds: dict[str, float], workers: int) -> list:
    """items laid out in worker slices, each beginning with its long files (module docstring)."""
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    long = sorted((p for p in files if seconds.get(p, 0.0) >= LONG and p not in STAY), key=lambda p: -seconds[p])
    sizes = slice_sizes(len(items), workers)
    heads: list[list] = [[] for _ in sizes]
    work = [0.0] * len(sizes)
    for path in long:
        room = [w for w in range(len(sizes)) if len(heads[w]) + len(files[path]) <= sizes[w]]
        w = min(room or range(len(sizes)), key=lambda w: work[w])
        heads[w] += files[path]
        work[w] += seconds[path]
    placed = set(long)
    rest = iter(item for item in items if item.nodeid.split("::", 1)[0] not in placed)
    out = []
    for head, size in zip(heads, sizes, strict=True):
        out += head
        out += [item for _, item in zip(range(size - len(head)), rest, strict=False)]
    out += list(rest)
    return out


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """In each xdist worker (all collect the same and must order alike) and in a run without xdist."""
    workers = config.workerinput["workercount"] if hasattr(config, "workerinput") else 1
    items[:] = arrange(items, file_seconds(), workers)
