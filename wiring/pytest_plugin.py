"""pytest plugin (registered through the pytest11 entry point): `--mockgpu` runs the session on the
simulated GPU by setting MOCKGPU=1; the `amd_device` fixture; the `hardware` marker (skipped on the simulator)."""

import os


def pytest_addoption(parser):
    """Add --mockgpu."""
    group = parser.getgroup("simgpu")
    group.addoption("--mockgpu", action="store_true", default=False,
                    help="run on the simulated gfx1100 (sets MOCKGPU=1 for the session)")


def pytest_configure(config):
    """Set MOCKGPU=1 before any test imports the runtime, when --mockgpu is given."""
    if config.getoption("--mockgpu", default=False):
        os.environ["MOCKGPU"] = "1"
    config.addinivalue_line("markers", "hardware: needs a real AMD GPU (skipped under MOCKGPU)")


def pytest_collection_modifyitems(config, items):
    """Skip tests marked `hardware` when running on the simulator."""
    if os.environ.get("MOCKGPU", "") in ("", "0"):
        return
    import pytest
    skip = pytest.mark.skip(reason="needs real hardware (MOCKGPU is set)")
    for item in items:
        if "hardware" in item.keywords:
            item.add_marker(skip)


def _amd_device():
    """A runtime.Device on the process's OS: the simulated gfx1100 under --mockgpu / MOCKGPU=1, the real GPU
    otherwise (the same test runs on both). Closed after the test; recorded when SIMGPU_TRACE is set."""
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
