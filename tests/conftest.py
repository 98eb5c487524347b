import gc
import os
import sys

import pytest
from hypothesis import settings

# The suite's property tests draw the same examples on every run (`make test`, CI): a green main stays green, and a
# failure reproduces; no per-example wall-clock deadline (hypothesis's 200 ms failed tests at load 6 on 2 CPUs: a
# test's speed is a benchmark's business, not the suite's). `make fuzz` runs them with fresh random draws and more
# examples, to find new cases (the failures it finds become fixed examples or regression tests).
settings.register_profile("suite", derandomize=True, database=None, deadline=None)
settings.register_profile("fuzz", max_examples=2000)
settings.load_profile(os.environ.get("SIMGPU_HYPOTHESIS", "suite"))

# progress: a line with an ETA at every tenth of a run; schedule: the files of the longest tests run first; bytecode:
# one bytecode cache for the run's processes where the environment turned writing it off.
pytest_plugins = ["pytester", "tests.support.progress", "tests.support.schedule", "tests.support.bytecode"]


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """No garbage collection while the suite is collected, and what collection built (the test modules, their
    tables, 10,000 items) frozen out of every later one. Collection allocates millions of objects that live for the
    whole run, so the collector ran dozens of full passes over a growing heap while it worked (3 of a worker's 12
    CPU-s of collection), and each full collection during the tests walked that heap again (a tenth of the tests'
    CPU in a worker of the whole suite, measured on test_ops_elementwise.py with the suite collected). The
    collector still runs on what the tests allocate, a young collection every GC_YOUNG allocations instead of 700:
    the compiler's tests allocate millions of short-lived objects (graph nodes, schedules, IR), and at Python's
    default a full collection ran every few seconds over the caches that live for the run (7-14% of the CPU of
    test_ops_elementwise.py and test_nn.py; 2-3% at GC_YOUNG). Cyclic garbage waits a little longer for it."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()
        gc.freeze()
        gc.set_threshold(GC_YOUNG, 10, 10)


GC_YOUNG = 20_000


@pytest.fixture(autouse=True)
def _no_background_compiles_carried_over():
    """Each test starts without the JIT compiles an earlier test queued for launches that will not come (in a
    worker of a cold suite they kept a thread translating, holding the GIL, for minutes); a compile under way
    finishes. simgpu.shader.jit.build is not imported for tests that never loaded it."""
    yield
    build = sys.modules.get("simgpu.shader.jit.build")
    if build is not None:
        build.drop_queued_compiles()
