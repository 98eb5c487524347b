"""tinygrad from PyPI drives the emulated PCI function with its own AM backend under `simgpu run --am [--arch]`: AMDev
boots the device (IP discovery, GMC, IH, PSP with the synthetic firmware set installed where tinygrad looks for it,
SMU, RLC/MEC, SDMA), sets up its queues by MQD/HQD and ring registers, and runs `Tensor([1,2,3]).add(1)`, a 64x64
matmul and reductions checked against numpy, a TinyJit graph, and a kernel that stores 1 TiB past its buffer (a GPU
page fault tinygrad reads back from the IH ring and the GCVM fault registers). On gfx1100 (Navi 31), gfx1201
(Navi 48: GC 12.0.1's registers, gfx12 page tables, the psp_14_0_3 / sdma_7_0_1 / gc_12_0_1 firmware names) and gfx942
(MI300X: eight XCCs sharing one AQL queue, sixteen SDMA 4.4.2 engines, gfx9 translate-further page tables, SOC15 IH
client ids, the psp_13_0_6 / smu_13_0_6 / sdma_4_4_2 / gc_9_4_3 v1 and v2.1 containers). Both
transports: the default, local PCI functions (tinygrad's own PCIDevice; BAR2/BAR5 loads and stores trapped,
mockgpu.localpci), and `--remote-pci`, tinygrad's remote-PCI transport (REMOTE=host:port, one message per access,
mockgpu.remote_pci). Its code is unmodified; its firmware hash table is told the synthetic files' hashes
(wiring/am_client.py). Skipped without tinygrad, libLLVM 19 or a C compiler."""

import sys
from functools import cache
from pathlib import Path

import pytest

from mockgpu.native import cache_dir
from tests.support.clients import assert_am_page_fault, json_checks, simgpu_run, tinygrad_cachedb, tinygrad_client

TRANSPORTS = {"local": ("--am",), "remote": ("--am", "--remote-pci")}
PCI_DEVICE = {"local": "PCIDevice", "remote": "RemotePCIDevice"}  # tinygrad's class for each
# the GC version each part's discovery table lists
ARCHES = {"gfx1100": "(11, 0, 0)", "gfx1201": "(12, 0, 1)", "gfx942": "(9, 4, 3)"}


@cache
def _run(tmp: str, transport: str, arch: str) -> dict:
    _, lib = tinygrad_client()
    # The user's XDG cache is the run's own (the firmware test looks into it); simgpu's cache directory is this
    # process's, which it would otherwise derive from that XDG_CACHE_HOME when SIMGPU_CACHE_DIR is unset: a fresh
    # one per run, where the server built the interposer again (about 1 CPU-s) and compiled its JIT kernels cold.
    env = {"DEV": "PCI+AMD:LLVM", "LLVM_PATH": str(lib), "CACHEDB": tinygrad_cachedb(),
           "XDG_CACHE_HOME": f"{tmp}/cache", "SIMGPU_CACHE_DIR": str(cache_dir()), "PYTHONUNBUFFERED": "1"}
    r = simgpu_run([sys.executable, str(Path(__file__).with_name("tinygrad_am_checks.py"))], *TRANSPORTS[transport],
                   "--arch", arch, env=env)
    return json_checks(r, "fault") | {"stdout": r.stdout}


@pytest.fixture(scope="module", params=sorted(TRANSPORTS))
def transport(request):
    return request.param


@pytest.fixture(scope="module", params=sorted(ARCHES))
def arch(request):
    return request.param


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, transport, arch):
    return tmp_path_factory.mktemp(f"tinygrad-am-{transport}-{arch}")


@pytest.fixture(scope="module")
def checks(run_dir, transport, arch):
    return _run(str(run_dir), transport, arch)


def test_tinygrad_boots_the_device_with_its_am_backend(checks, transport, arch):
    d = checks["device"]
    assert d["pci_dev"] == PCI_DEVICE[transport]
    assert (d["arch"], d["iface"]) == (arch, "PCIIface")
    assert ARCHES[arch] in d["ip"]  # the GC version from the discovery table it read out of VRAM


def test_add(checks):
    assert checks["add"]["value"] == [2, 3, 4]


def test_matmul_64x64_matches_numpy(checks):
    assert checks["matmul"]["max_error"] < 1e-4


def test_reductions_match_numpy(checks):
    r = checks["reductions"]
    assert abs(r["sum"] - r["ref_sum"]) < 1e-4 and r["max"] == r["ref_max"]
    assert max(abs(x - y) for x, y in zip(r["rows"], r["ref_rows"], strict=True)) < 1e-5


def test_tinyjit_replays_as_an_hcq_graph(checks):
    j = checks["jit"]
    assert j["results"] == [[float(32 * (2 * i + 1))] * 8 for i in range(5)]  # w = 2i + 1, summed over 16 rows twice
    assert j["captured"] and "HCQGraph" in j["graphs"]


def test_a_page_fault_reaches_tinygrad_through_the_ih_ring_with_its_address(checks):
    assert_am_page_fault(checks)


def test_the_synthetic_firmware_stays_out_of_the_users_tinygrad_cache(checks, run_dir):
    tmp = run_dir
    assert not (tmp / "cache" / "tinygrad").exists()  # the program's own XDG cache: simgpu's am-client directory
    simgpu_cache = cache_dir()  # simgpu's cache directory, the run's (_run); the XDG derivation: test_run.py
    fw = list(simgpu_cache.glob("am-client/tinygrad/downloads/fw/*"))
    assert fw, "the firmware was installed somewhere else"
