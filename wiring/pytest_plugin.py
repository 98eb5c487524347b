"""pytest plugin (registered through the pytest11 entry point): `--mockgpu` runs the session on the
simulated GPU by setting MOCKGPU=1; `--mockgpu-arch=gfx1201` does so with GPUs of that architecture
(SIMGPU_ARCH; comma-separated: one per device); `--sanitize=CHECKS` runs it under the simulator's sanitizers
(SIMGPU_SANITIZE) and fails every test during which one reported something; the `amd_device` fixture;
the `hardware` marker (skipped on the simulator)."""

import os

from simgpu import settings

_findings: list = []  # sanitizer findings of the running test (--sanitize)


def pytest_addoption(parser):
    """Add --mockgpu."""
    group = parser.getgroup("simgpu")
    group.addoption("--mockgpu", action="store_true", default=False,
                    help="run on the simulated gfx1100 (sets MOCKGPU=1 for the session)")
    group.addoption("--mockgpu-arch", default=None, metavar="ARCH",
                    help="run on simulated GPUs of this architecture, gfx1100, gfx1201, gfx942 or gfx950 "
                         "(comma-separated: one "
                         "per device; sets MOCKGPU=1 and SIMGPU_ARCH for the session)")
    group.addoption("--sanitize", default=None, metavar="CHECKS",
                    help="run the simulator's sanitizers (memcheck,initcheck,racecheck,hazards or all; sets "
                         "SIMGPU_SANITIZE): a test fails if any of them reports something while it runs")


def pytest_configure(config):
    """Set MOCKGPU=1 before any test imports the runtime, when --mockgpu is given."""
    if config.getoption("--mockgpu", default=False):
        os.environ["MOCKGPU"] = "1"
    arch = config.getoption("--mockgpu-arch", default=None)
    if arch:
        os.environ["MOCKGPU"] = "1"
        os.environ["SIMGPU_ARCH"] = arch
        settings.get("SIMGPU_ARCH")  # ValueError now for a malformed list, not in the first test
    checks = config.getoption("--sanitize", default=None)
    if checks:
        from simgpu import sanitize
        os.environ[sanitize.ENV] = ",".join(sorted(sanitize.parse_checks(checks)))  # ValueError: unknown names
        sanitize.reporters.append(_findings.append)
    config.addinivalue_line("markers", "hardware: needs a real AMD GPU (skipped under MOCKGPU)")


def pytest_collection_modifyitems(config, items):
    """Skip tests marked `hardware` when running on the simulator."""
    if not settings.get("MOCKGPU"):
        return
    import pytest
    skip = pytest.mark.skip(reason="needs real hardware (MOCKGPU is set)")
    for item in items:
        if "hardware" in item.keywords:
            item.add_marker(skip)


try:
    import pytest as _pytest

    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(item):
        """Under --sanitize: fail the test if a sanitizer reported anything while it ran."""
        _findings.clear()
        outcome = yield
        found, _findings[:] = list(_findings), []
        if found and outcome.excinfo is None:
            shown = "\n".join(f.text() for f in found[:10])
            more = f"\n... and {len(found) - 10} more" if len(found) > 10 else ""
            _pytest.fail(f"{len(found)} sanitizer finding(s):\n{shown}{more}", pytrace=False)
except ImportError:  # pragma: no cover - pytest is what loads this plugin
    pass


def _amd_device():
    """A runtime.Device on the process's OS: the simulated gfx1100 under --mockgpu / MOCKGPU=1 (or the architecture
    --mockgpu-arch / SIMGPU_ARCH names), the real GPU otherwise (the same test runs on both). Closed after the test;
    recorded when SIMGPU_TRACE is set."""
    from runtime import Device
    dev = Device("AMD:0")
    try:
        yield dev
    finally:
        dev.close()


try:
    import pytest as _pytest
    amd_device = _pytest.fixture(_amd_device, name="amd_device")
except ImportError:  # pragma: no cover - pytest is what loads this plugin
    pass
