"""The suite's scheduling plugin (tests/support/schedule.py): each xdist worker's slice begins with its long files,
the slices are the sizes xdist's worksteal scheduler actually sends (checked against xdist's own scheduler), every
test is kept exactly once, and the files it does not place keep pytest's order."""

from types import SimpleNamespace

import pytest
from xdist.scheduler.worksteal import WorkStealingScheduling

from tests.support import schedule
from tools.suite_durations import file_of


class _Node:
    """What xdist's scheduler asks of a worker controller: its sends are recorded."""

    def __init__(self, name: str):
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices):
        self.sent += indices

    def shutdown(self):  # a worker left with nothing to run
        self.shutting_down = True


def _items(counts: dict[str, int]) -> list:
    return [SimpleNamespace(nodeid=f"{path}::test_{i}") for path, n in counts.items() for i in range(n)]


def _path(item) -> str:
    return item.nodeid.split("::", 1)[0]


@pytest.mark.parametrize(("n", "workers"), [(5633, 2), (7, 2), (10, 3), (1, 2)])
def test_slices_are_what_worksteal_sends_at_the_start(n, workers):
    config = SimpleNamespace(getvalue=lambda name: [f"{workers}*popen"] if name == "tx" else None)
    sched = WorkStealingScheduling(config)
    nodes = [_Node(f"gw{i}") for i in range(workers)]
    ids = [f"t{i}" for i in range(n)]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, ids)
    sched.schedule()
    assert [len(node.sent) for node in nodes] == schedule.slice_sizes(n, workers)
    assert [i for node in nodes for i in node.sent] == list(range(n))  # contiguous slices, in the nodes' order


def _figures(longest: dict[str, float], seconds: dict[str, float]) -> dict:
    return {p: {"longest": t, "seconds": seconds.get(p, t)} for p, t in longest.items()}


def test_each_slice_starts_with_its_long_files_longest_first():
    counts = {"tests/a.py": 40, "tests/long1.py": 3, "tests/b.py": 30, "tests/long2.py": 5, "tests/long3.py": 2,
              "tests/c.py": 20}
    # long1 has the longest test, long2 the most work; a.py and b.py have no test long enough to be placed
    figures = _figures({"tests/long1.py": 100.0, "tests/long2.py": 80.0, "tests/long3.py": 40.0, "tests/a.py": 5.0,
                        "tests/b.py": 1.0}, {"tests/long2.py": 300.0, "tests/a.py": 500.0})
    items = _items(counts)
    out = schedule.arrange(items, figures, 2)
    assert sorted(i.nodeid for i in out) == sorted(i.nodeid for i in items)
    first, second = out[:50], out[50:]
    # long1 to one slice, long2 to the other, long3 to the one with less work (long1's: 100 s against 300 s)
    assert [_path(i) for i in first[:5]] == ["tests/long1.py"] * 3 + ["tests/long3.py"] * 2
    assert [_path(i) for i in second[:5]] == ["tests/long2.py"] * 5
    # the rest in pytest's order, filling the first slice, then the second
    rest = [i for i in items if _path(i) in ("tests/a.py", "tests/b.py", "tests/c.py")]
    assert first[5:] + second[5:] == rest


def test_without_xdist_placed_files_run_first_and_without_figures_nothing_moves():
    counts = {"tests/short.py": 3, "tests/long.py": 2, "tests/other.py": 4}
    items = _items(counts)
    out = schedule.arrange(items, _figures({"tests/long.py": 50.0, "tests/other.py": 1.0}, {}), 1)
    assert [_path(i) for i in out] == ["tests/long.py"] * 2 + ["tests/short.py"] * 3 + ["tests/other.py"] * 4
    assert schedule.arrange(items, {}, 2) == items


def test_the_committed_figures_name_test_files_of_this_suite():
    figures = schedule.file_seconds()
    assert figures, "tests/data/suite_durations.json is missing: tools/suite_durations.py writes it"
    placed = [p for p, f in figures.items() if f["longest"] >= schedule.LONG]
    assert placed and all(file_of(p[:-3].replace("/", ".")) == p for p in placed)
    assert all(f["seconds"] >= f["longest"] > 0 for f in figures.values() if f["longest"])
