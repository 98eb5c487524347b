"""The suite's scheduling plugin (tests/support/schedule.py): each xdist worker's slice begins with its long files,
the slices are the sizes xdist's worksteal scheduler actually sends (checked against xdist's own scheduler), every
test is kept exactly once, the files it does not place keep pytest's order, and which files are long is relative to
the run's own figures (the same files from a quiet host's figures and a loaded one's)."""

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
    # long1 has the longest test, long2 the most work; a.py and b.py have no test long enough to be placed (the
    # threshold: 1% of each worker's half of 941 s, 4.7 s)
    figures = _figures({"tests/long1.py": 100.0, "tests/long2.py": 80.0, "tests/long3.py": 40.0, "tests/a.py": 2.0,
                        "tests/b.py": 1.0}, {"tests/long2.py": 300.0, "tests/a.py": 500.0})
    items = _items(counts)
    assert schedule.long_threshold(figures, 2) == pytest.approx(4.705)
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
    out = schedule.arrange(items, _figures({"tests/long.py": 50.0, "tests/other.py": 0.2}, {}), 1)
    assert [_path(i) for i in out] == ["tests/long.py"] * 2 + ["tests/short.py"] * 3 + ["tests/other.py"] * 4
    assert schedule.arrange(items, {}, 2) == items


def test_the_threshold_is_the_runs_own_so_a_loaded_hosts_figures_place_the_same_files():
    counts = {"tests/a.py": 6, "tests/b.py": 4, "tests/c.py": 5, "tests/d.py": 3}
    quiet = _figures({"tests/a.py": 0.3, "tests/b.py": 6.0, "tests/c.py": 0.4, "tests/d.py": 9.0},
                     {"tests/a.py": 40.0, "tests/b.py": 30.0, "tests/c.py": 20.0, "tests/d.py": 10.0})
    loaded = {p: {k: 12.5 * t for k, t in f.items()} for p, f in quiet.items()}  # every figure 12.5 times longer
    items = _items(counts)
    out = schedule.arrange(items, quiet, 2)
    assert out == schedule.arrange(items, loaded, 2)
    # 1% of each worker's 50 s is 0.5 s: d (the longest test) and b begin the slices; a and c keep pytest's order
    assert [_path(i) for i in out] == ["tests/d.py"] * 3 + ["tests/a.py"] * 6 + ["tests/b.py"] * 4 + ["tests/c.py"] * 5
    # more workers, shorter shares: shorter tests matter (1% of 25 s at 4 workers, 0.25 s: a's and c's too)
    assert schedule.long_threshold(quiet, 4) == pytest.approx(0.25)
    files = list(dict.fromkeys(_path(i) for i in schedule.arrange(items, quiet, 4)))
    assert files == ["tests/d.py", "tests/b.py", "tests/c.py", "tests/a.py"]  # all placed, longest test first
    assert schedule.long_threshold({}, 2) == float("inf")


def test_the_committed_figures_place_a_few_test_files_of_this_suite():
    figures = schedule.file_seconds()
    assert figures, "tests/data/suite_durations.json is missing: tools/suite_durations.py writes it"
    threshold = schedule.long_threshold(figures, 2)  # make test's 2 workers on a 2-core host
    placed = [p for p, f in figures.items() if f["longest"] >= threshold]
    # the files of the longest tests, not none (nothing would be scheduled) and not most (pytest's order is kept)
    assert 0 < len(placed) <= len(figures) // 4, (len(placed), len(figures))
    assert all(file_of(p[:-3].replace("/", ".")) == p for p in placed)
    assert all(f["seconds"] >= f["longest"] > 0 for f in figures.values() if f["longest"])
