"""The compiler's tests run on the device the session selects: `--mockgpu`/MOCKGPU=1 (the project's addopts) the
simulated gfx1100, a real GPU otherwise; the choice is printed in the header. Every kernel is proven in
bounds (SIMGPU_CHECK_OOB=1) unless the environment says otherwise.

The `backend` fixture runs a test once per registered backend (compiler.backend.available()), making that
backend and its device kind the defaults inside the test: the ops suite is written once for every backend. The
GPU backends run in reverse order of preference (the default last), and every kernel a case launches is
checked against the other GPU backend on the same inputs (tests/support/differential.py; the first run of a
case records, the second compares, or runs the other backend itself when the first ran elsewhere).
"""

import os

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("SIMGPU_CHECK_OOB", "1")

# Each hypothesis example compiles and runs kernels: few examples, no deadline, and the same examples on every
# run (SIMGPU_HYPOTHESIS=explore draws new ones).
settings.register_profile("compiler", max_examples=12, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("explore", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("explore" if os.environ.get("SIMGPU_HYPOTHESIS") == "explore" else "compiler")


def pytest_report_header(config):
    return f"compiler tests: MOCKGPU={os.environ.get('MOCKGPU')} SIMGPU_CHECK_OOB={os.environ.get('SIMGPU_CHECK_OOB')}"


def _backends():
    from compiler import backend
    return list(reversed(backend.available()))


def _partner(name: str) -> str | None:
    """The backend a case's kernels are compared with: another GPU backend of the same device kind."""
    from compiler import backend as backends
    kind = backends.get(name).device_kind
    others = [n for n in backends.available(kind) if n != name]
    return others[0] if kind == "AMD" and others else None


def pytest_collection_modifyitems(items):
    """A case's runs with each backend one after the other (pytest orders a function's cases by the first
    parameter, `backend` here: every x86 case, then every llvm case...): the second run then compares with the
    first's records (tests/support/differential.py) instead of running the other backend again."""
    groups: dict[tuple, list] = {}
    for item in items:
        params = getattr(item, "callspec", None) and item.callspec.params
        key = (id(item.parent), item.originalname, tuple((k, id(v)) for k, v in params.items() if k != "backend")) \
            if params and "backend" in params else (id(item),)
        groups.setdefault(key, []).append(item)
    items[:] = [item for group in groups.values() for item in group]


_NEXT: list = [None]  # the test that runs after the current one in this process (None: none, or not known)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _NEXT[0] = nextitem
    yield


def _next_is_with(request, partner: str | None) -> bool:
    """Whether the next test is this case with the partner backend (the same function and other parameters)."""
    nxt, me = _NEXT[0], request.node
    if partner is None or nxt is None or not hasattr(nxt, "callspec") or nxt.parent is not me.parent \
            or nxt.originalname != me.originalname:
        return False
    mine, theirs = me.callspec.params, nxt.callspec.params
    return theirs.get("backend") == partner and mine.keys() == theirs.keys() and \
        all(theirs[k] is v for k, v in mine.items() if k != "backend")


@pytest.fixture(params=_backends())
def backend(request):
    """Compile with each registered backend in turn (and default to its device kind); kernels are checked
    against the partner backend (module docstring): when the next test is the same case with the partner, by
    that test's own launches."""
    from compiler import backend as backends
    from compiler import device
    from tests.support import differential
    be = backends.get(request.param)
    old = device.DEFAULT
    device.DEFAULT = be.device_kind
    partner = _partner(request.param)
    try:
        with backends.using(request.param), \
                differential.watch(request.param, partner, defer=_next_is_with(request, partner)):
            yield request.param
    finally:
        device.DEFAULT = old


def pytest_sessionfinish(session):
    """Launches deferred to a next test that did not run (the end of a worker's share) are checked now."""
    from tests.support import differential
    differential.flush()


def pytest_terminal_summary(terminalreporter):
    from tests.support import differential
    if differential.stats["compared"]:
        terminalreporter.write_line(f"differential: {differential.stats['compared']} kernel launches compared "
                                    f"between backends in {differential.stats['tests']} tests (this process)")
