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


@pytest.fixture(params=_backends())
def backend(request):
    """Compile with each registered backend in turn (and default to its device kind); kernels are checked
    against the partner backend (module docstring)."""
    from compiler import backend as backends
    from compiler import device
    from tests.support import differential
    be = backends.get(request.param)
    old = device.DEFAULT
    device.DEFAULT = be.device_kind
    try:
        with backends.using(request.param), differential.watch(request.param, _partner(request.param)):
            yield request.param
    finally:
        device.DEFAULT = old


def pytest_terminal_summary(terminalreporter):
    from tests.support import differential
    if differential.stats["compared"]:
        terminalreporter.write_line(f"differential: {differential.stats['compared']} kernel launches compared "
                                    f"between backends in {differential.stats['tests']} tests (this process)")
