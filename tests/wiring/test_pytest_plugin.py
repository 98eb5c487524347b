"""The pytest plugin as a user meets it (issue 12, items 7 and 9): the `amd_device` fixture follows
--mockgpu / MOCKGPU like the rest of the runtime, is documented in `pytest --fixtures`, is recorded by
SIMGPU_TRACE, and under pytest-xdist every worker records to its own trace file."""

import os

from traces.format import read_trace
from traces.replay import replay

USES_DEVICE = """
import numpy as np
import pytest

@pytest.mark.parametrize("n", range(4))
def test_copy(amd_device, n):
    b = amd_device.alloc(64).copyin(np.full(16, n, np.uint32))
    assert list(b.copyout(np.zeros(16, np.uint32))) == [n] * 16
"""


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MOCKGPU", "SIMGPU_TRACE", "PYTEST_XDIST_WORKER")}
    return env | extra


def test_fixture_is_documented(pytester):
    result = pytester.runpytest_subprocess("--fixtures")
    text = result.stdout.str()
    assert "amd_device" in text and "simulated gfx1100 under --mockgpu / MOCKGPU=1" in text


def test_fixture_follows_mockgpu_and_never_falls_back_to_the_simulator(pytester, monkeypatch):
    pytester.makepyfile(USES_DEVICE)
    monkeypatch.setattr(os, "environ", _env())
    if not os.path.exists("/dev/kfd"):  # no GPU here: without --mockgpu the fixture must say so, not simulate
        result = pytester.runpytest_subprocess("-k", "test_copy[0]")
        result.assert_outcomes(errors=1)
        assert "Set MOCKGPU=1" in result.stdout.str()
    pytester.runpytest_subprocess("--mockgpu").assert_outcomes(passed=4)


def test_mockgpu_arch_runs_the_session_on_gpus_of_that_architecture(pytester, monkeypatch):
    pytester.makepyfile("""
def test_arch(amd_device):
    assert amd_device.arch == "gfx1201" and amd_device.properties["gfx_target_version"] == 120001
""")
    monkeypatch.setattr(os, "environ", _env())
    pytester.runpytest_subprocess("--mockgpu-arch", "gfx1201").assert_outcomes(passed=1)


def test_fixture_is_recorded_by_simgpu_trace(pytester, monkeypatch):
    pytester.makepyfile(USES_DEVICE)
    path = pytester.path / "session.trace"
    monkeypatch.setattr(os, "environ", _env(SIMGPU_TRACE=str(path)))
    pytester.runpytest_subprocess("--mockgpu").assert_outcomes(passed=4)
    header, records = read_trace(path.read_bytes())
    assert header["os"] == "MockOS"
    assert sum(r["t"] == "ioctl" and r["name"] == "AMDKFD_IOC_CREATE_QUEUE" for r in records) == 8  # 2 per Device
    assert replay(str(path), out=open(os.devnull, "w"))[0] is None


def test_each_xdist_worker_records_its_own_trace(pytester, monkeypatch):
    pytester.makepyfile(USES_DEVICE)
    path = pytester.path / "run.trace"
    monkeypatch.setattr(os, "environ", _env(SIMGPU_TRACE=str(path)))
    pytester.runpytest_subprocess("--mockgpu", "-p", "xdist", "-n", "2").assert_outcomes(passed=4)
    files = sorted(p.name for p in pytester.path.glob("run.*trace"))
    assert files == ["run.gw0.trace", "run.gw1.trace"]
    for name in files:
        assert replay(str(pytester.path / name), out=open(os.devnull, "w"))[0] is None
