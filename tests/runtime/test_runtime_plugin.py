"""The pytest plugin: the amd_device fixture and the hardware marker."""

import numpy as np


def test_amd_device_fixture(amd_device):
    assert amd_device.arch == "gfx1100"
    b = amd_device.alloc(16).copyin(np.arange(4, dtype=np.uint32))
    assert list(b.copyout(np.zeros(4, np.uint32))) == [0, 1, 2, 3]


def test_hardware_marker_skipped_under_mockgpu(pytester):
    pytester.makepyfile("""
import pytest
@pytest.mark.hardware
def test_hw():
    raise AssertionError("ran on the simulator")
""")
    result = pytester.runpytest_subprocess("--mockgpu")  # a subprocess: --mockgpu sets MOCKGPU in its environ
    result.assert_outcomes(skipped=1)
