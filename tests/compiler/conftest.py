"""The compiler's tests run on the device the session selects: `--mockgpu`/MOCKGPU=1 (the project's addopts) the
simulated gfx1100, a real GPU otherwise; the choice is printed in the header. Every kernel is proven in
bounds (SIMGPU_CHECK_OOB=1) unless the environment says otherwise.

The `backend` fixture runs a test once per registered backend (compiler.backend.available()), making that
backend and its device kind the defaults inside the test: the ops suite is written once for every backend.
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
    return backend.available()


@pytest.fixture(params=_backends())
def backend(request):
    """Compile with each registered backend in turn (and default to its device kind)."""
    from compiler import backend as backends
    from compiler import device
    be = backends.get(request.param)
    old = device.DEFAULT
    device.DEFAULT = be.device_kind
    try:
        with backends.using(request.param):
            yield request.param
    finally:
        device.DEFAULT = old
