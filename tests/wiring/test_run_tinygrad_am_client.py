"""`simgpu run --am` asks nothing of the program's environment, and host-visible memory is real memory at the
address the program uses (issue 26, items 6 and 7). The program is tinygrad from PyPI run by a Python that cannot
import simgpu: the base interpreter (no venv) with -I (no PYTHON* variables, so no PYTHONPATH either), tinygrad's
package directory the one path it adds. Its AM backend gets the synthetic firmware (the interposer runs
wiring/am_client.py in it) and boots; ctypes.memset on a host buffer's va_addr reaches what the GPU's SDMA copies, and
what the GPU writes there is what the CPU reads at va_addr (mockgpu.hostmap, mockgpu/csrc/hostmem.c). Skipped without
tinygrad, libLLVM 19 or a C compiler."""

import sys
from functools import cache
from pathlib import Path

import pytest

from tests.support.clients import json_checks, simgpu_run, tinygrad_cachedb, tinygrad_client


@cache
def _run(tmp: str) -> dict:
    tinygrad, lib = tinygrad_client()
    only_tinygrad = Path(tmp) / "path"
    only_tinygrad.mkdir()
    (only_tinygrad / "tinygrad").symlink_to(Path(tinygrad.__file__).parent)
    env = {"DEV": "PCI+AMD:LLVM", "LLVM_PATH": str(lib), "CACHEDB": tinygrad_cachedb()}
    script = Path(__file__).with_name("tinygrad_am_hostmem_checks.py")
    r = simgpu_run([sys._base_executable, "-I", str(script), str(only_tinygrad)], "--am", env=env)
    checks = json_checks(r, "gpu_to_cpu_cpu_access")
    checks["stderr"] = r.stderr
    return checks


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    return _run(str(tmp_path_factory.mktemp("tinygrad-am-client")))


def test_a_client_that_cannot_import_simgpu_gets_its_firmware_and_runs(checks):
    assert checks["isolation"] == {"simgpu": False, "flags_isolated": 1}
    assert (checks["device"]["arch"], checks["device"]["iface"]) == ("gfx1100", "PCIIface")
    assert checks["add"]["value"] == [2, 3, 4]


@pytest.mark.parametrize("spec", ["host", "cpu_access"])
def test_cpu_stores_at_a_host_buffers_address_reach_the_gpu(checks, spec):
    assert checks[f"cpu_to_gpu_{spec}"]["ok"], checks[f"cpu_to_gpu_{spec}"]
    assert "Fatal Python error" not in checks["stderr"]  # the faults mapped memory: the program's handler never ran


@pytest.mark.parametrize("spec", ["host", "cpu_access"])
def test_gpu_writes_to_a_host_buffer_are_what_the_cpu_reads_at_its_address(checks, spec):
    assert checks[f"gpu_to_cpu_{spec}"]["ok"], checks[f"gpu_to_cpu_{spec}"]


STRAY = "import ctypes, faulthandler; {} ctypes.string_at(0x10, 1)"


@pytest.mark.parametrize("handler", ["faulthandler.enable();", ""], ids=["programs-handler", "default-action"])
def test_a_stray_pointer_still_ends_the_program_as_without_simgpu(handler):
    """A fault no GPU mapping explains goes to the program's own SIGSEGV handler, or the default action."""
    r = simgpu_run([sys.executable, "-c", STRAY.format(handler)], "--am")
    assert r.returncode == 128 + 11, (r.returncode, r.stderr[-2000:])
    assert ("Fatal Python error: Segmentation fault" in r.stderr) == bool(handler), r.stderr[-2000:]
