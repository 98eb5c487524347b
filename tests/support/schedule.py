"""pytest plugin: every xdist worker starts on its share of the files holding the suite's longest tests, so a parallel
run ends on short tests with no worker idle.

Under `--dist worksteal` (`make test`) xdist hands each of the n workers a contiguous slice of the collection (the
first len/n items, then the next ...), and a worker that runs dry steals the back half of the longest queue left.
A long test at the back of a slice keeps its worker going at the end while the other has nothing left; long tests all
in one slice run one after another there. So the collection is laid out slice by slice: each slice begins with the
files given to it (longest test first; each file to the slice with the least work so far, by the files' sums, that
has room), then pytest's order of everything else fills the slices to xdist's sizes; stealing then only moves short
tests. Whole files move (their order inside and their module-scoped fixtures stay as pytest arranged them).

The figures are a cold whole-suite run's, per file: its tests' seconds summed and its longest test's, committed in
tests/data/suite_durations.json (tools/suite_durations.py writes it from a run's --junitxml). A file is placed when its
longest test is at least LONG_SHARE of a worker's share of the run (the figures' total seconds over the workers):
a test that long, left at the back of a slice, keeps its worker going while the others have run dry. The threshold
is the run's own figures', not a number of seconds: figures from a busy host are inflated by a similar factor for
every file, and a quiet host's place the same files (an absolute 30 s, from a run at load 15-26, placed nothing on a
quiet one). The rest keep pytest's order. Without xdist the placed files run first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DURATIONS = Path(__file__).resolve().parent.parent / "data" / "suite_durations.json"
LONG_SHARE = 0.01  # of a worker's share of the run's seconds: a file with a test this long begins a slice


def file_seconds(path: Path = DURATIONS) -> dict[str, dict[str, float]]:
    """Per test file of the committed run, {"seconds": all its tests, "longest": its longest test} (none when the
    file is missing: pytest's order stands)."""
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


def long_threshold(figures: dict[str, dict[str, float]], workers: int) -> float:
    """The seconds from which a file's longest test places it: LONG_SHARE of each worker's share of the figures'
    total (inf without figures: nothing is placed)."""
    total = sum(f["seconds"] for f in figures.values())
    return LONG_SHARE * total / workers if total > 0 else float("inf")


def arrange(items: list, figures: dict[str, dict[str, float]], workers: int) -> list:
    """items laid out in worker slices, each beginning with the files of long tests given to it (module docstring)."""
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    longest = {p: figures[p]["longest"] for p in files if p in figures}
    threshold = long_threshold(figures, workers)
    long = sorted((p for p, t in longest.items() if t >= threshold), key=lambda p: -longest[p])
    sizes = slice_sizes(len(items), workers)
    heads: list[list] = [[] for _ in sizes]
    work = [0.0] * len(sizes)
    for path in long:
        room = [w for w in range(len(sizes)) if len(heads[w]) + len(files[path]) <= sizes[w]]
        w = min(room or range(len(sizes)), key=lambda w: work[w])
        heads[w] += files[path]
        work[w] += figures[path]["seconds"]
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
