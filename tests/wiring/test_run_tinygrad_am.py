"""tinygrad from PyPI drives the emulated PCI function with its own AM backend under `simgpu run --am`: AMDev boots
the device (IP discovery, GMC, IH, PSP with the synthetic firmware set installed where tinygrad looks for it, SMU,
RLC/MEC, SDMA), sets up its queues by MQD/HQD and ring registers, and runs `Tensor([1,2,3]).add(1)` and a 64x64
matmul checked against numpy. Both transports: the default, local PCI functions (tinygrad's own PCIDevice; BAR2/BAR5
loads and stores trapped, mockgpu.localpci), and `--remote-pci`, tinygrad's remote-PCI transport (REMOTE=host:port,
one message per access, mockgpu.remote_pci). Its code is unmodified; its firmware hash table is told the synthetic
files' hashes (wiring/am_client.py). Skipped without tinygrad, libLLVM 19 or a C compiler."""

import os
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.support.clients import json_checks, simgpu_run, tinygrad_client

TRANSPORTS = {"local": ("--am",), "remote": ("--am", "--remote-pci")}
PCI_DEVICE = {"local": "PCIDevice", "remote": "RemotePCIDevice"}  # tinygrad's class for each


@cache
def _run(tmp: str, transport: str) -> dict:
    _, lib = tinygrad_client()
    env = {"DEV": "PCI+AMD:LLVM", "LLVM_PATH": str(lib), "CACHEDB": f"{tmp}/tinygrad-cache.db",
           "XDG_CACHE_HOME": f"{tmp}/cache", "PYTHONUNBUFFERED": "1"}
    r = simgpu_run([sys.executable, str(Path(__file__).with_name("tinygrad_am_checks.py"))], *TRANSPORTS[transport],
                   env=env)
    return json_checks(r, "matmul")


@pytest.fixture(scope="module", params=sorted(TRANSPORTS))
def transport(request):
    return request.param


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, transport):
    return tmp_path_factory.mktemp(f"tinygrad-am-{transport}")


@pytest.fixture(scope="module")
def checks(run_dir, transport):
    return _run(str(run_dir), transport)


def test_tinygrad_boots_the_device_with_its_am_backend(checks, transport):
    d = checks["device"]
    assert d["pci_dev"] == PCI_DEVICE[transport]
    assert (d["arch"], d["iface"]) == ("gfx1100", "PCIIface")
    assert "(11, 0, 0)" in d["ip"]  # GC 11.0.0 from the discovery table it read out of VRAM


def test_add(checks):
    assert checks["add"]["value"] == [2, 3, 4]


def test_matmul_64x64_matches_numpy(checks):
    assert checks["matmul"]["max_error"] < 1e-4


def test_the_synthetic_firmware_stays_out_of_the_users_tinygrad_cache(checks, run_dir):
    tmp = run_dir
    assert not (tmp / "cache" / "tinygrad").exists()  # the program's own XDG cache: simgpu's am-client directory
    # simgpu's cache directory: $SIMGPU_CACHE_DIR when the user set one (the child inherits it), else under XDG's
    simgpu_cache = Path(os.environ.get("SIMGPU_CACHE_DIR") or tmp / "cache" / "simgpu")
    fw = list(simgpu_cache.glob("am-client/tinygrad/downloads/fw/*"))
    assert fw, "the firmware was installed somewhere else"
