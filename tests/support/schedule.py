"""pytest plugin: the files holding the suite's longest tests run first, so that a parallel run ends on short ones.

Under xdist (`make test` runs `-n auto --dist worksteal`) a run lasts as long as its busiest worker: a two-minute
test started near the end keeps one worker going while the other has nothing left. Run first, the long tests
overlap the bulk of the short ones, and a worker that runs dry steals half of the other's remaining queue. Whole
files move (their order inside and their module-scoped fixtures stay as pytest arranged them); files not listed
keep pytest's order after them. tests/compiler/test_ops_reduce.py (6.6%, a 35 s case) stays in
place: its x86 cases run before tests/compiler/test_cpu_device.py in one process fail that file's SIMGPU_DEBUG=3
test (one kernel cached, not two), an order dependence the default order hides. The list: the longest files of
`--durations` / `--junitxml` runs on a busy 2-core machine (the share of the run's test time in the comment;
measured 2026-12-06, 5,633 tests), longest first.
"""

import pytest

LONGEST_FIRST = (
    "tests/wiring/test_run_sdist.py",  # 6.1%: tinygrad's own test_tiny under simgpu run, KFD then AM (one test 137 s)
    "tests/compiler/test_training.py",  # 10.0%: an MLP trained on three backends (one test 129 s)
    "tests/wiring/test_run_tinygrad.py",  # 3.8%: tinygrad client runs (a recorded run replayed: 48 s)
    "tests/simgpu/shader/test_jit_ops.py",  # 4.5%: random native instructions, one LLVM compile each (61 s)
    "tests/runtime/test_runtime_memory_flat.py",  # 2.0%: thousands of launches, twice (33 s at 10,000)
    "tests/wiring/test_foundation.py",  # 2.2%: the demo in-process (39 s)
    "tests/wiring/test_examples.py",  # 1.8%: the trace workflow (28 s)
    "tests/simgpu/shader/test_jit_fuzz.py",  # 1.1% (27 s)
    "tests/traces/test_traces.py",  # 0.9%: record, replay, show, diff through the CLI (26 s)
    "tests/simgpu/shader/test_sem_vmem.py",  # 1.9%: LLVM global atomics (24 s)
    "tests/runtime/test_runtime_demo.py",  # 0.7%: four demo processes (22 s)
    "tests/wiring/test_pytest_plugin.py",  # 1.8%: pytester runs under xdist (21 s)
    "tests/wiring/test_run.py",  # 2.9%: simgpu run clients (14 s)
)


def _rank(item: pytest.Item) -> int:
    path = item.nodeid.split("::", 1)[0]
    try:
        return LONGEST_FIRST.index(path)
    except ValueError:
        return len(LONGEST_FIRST)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Stable sort: listed files first, in the list's order; the rest as collected."""
    items.sort(key=_rank)
