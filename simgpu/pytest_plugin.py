"""pytest plugin (registered through the pytest11 entry point): `--mockgpu` runs the session on the
simulated GPU by setting MOCKGPU=1."""

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
