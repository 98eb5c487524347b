"""tinygrad from PyPI drives an emulated MI350X (gfx950, GC 9.5.0) with its own AM backend under
`simgpu run --am --arch gfx950`: AMDev boots it (MI350X's discovery table, NBIO 7.9, GC 9.5.0's eight XCCs, PSP and
SMU 13.0.12, SDMA 4.4.4 with the synthetic psp_13_0_12_sos / sdma_4_4_4 / gc_9_5_0 firmware installed where tinygrad
looks for it) and its HCQ runtime runs code objects it did not compile (it cannot compile for gfx950 here: its AMD:LLVM
renderer needs a libLLVM that knows gfx950) -- the committed Triton gfx950 kernels and llvmlite-compiled LLVM IR,
loaded with its own program class and dispatched on its AQL queue (tests/wiring/tinygrad_am_gfx950_checks.py; a
kernel with 152 KiB of LDS among them, which tinygrad admits from the table's gc_info), each
result checked against numpy; then a store 1 TiB past a buffer faults and tinygrad reads the fault back from the IH
ring and the GCVM fault registers. Both transports (local PCI functions; `--remote-pci`, tinygrad's remote-PCI
transport). Skipped without tinygrad, llvmlite or the preload shim."""

import sys
from functools import cache
from pathlib import Path

import pytest

from tests.support.clients import assert_am_page_fault, json_checks, simgpu_run, tinygrad_cachedb

TRANSPORTS = {"local": ("--am",), "remote": ("--am", "--remote-pci")}
PCI_DEVICE = {"local": "PCIDevice", "remote": "RemotePCIDevice"}  # tinygrad's class for each
ROOT = Path(__file__).resolve().parents[2]


@cache
def _run(transport: str) -> dict:
    pytest.importorskip("tinygrad")
    pytest.importorskip("llvmlite")
    env = {"DEV": "PCI+AMD", "CACHEDB": tinygrad_cachedb(),
           "PYTHONUNBUFFERED": "1"}
    r = simgpu_run([sys.executable, str(Path(__file__).with_name("tinygrad_am_gfx950_checks.py"))],
                   *TRANSPORTS[transport], "--arch", "gfx950", env=env, cwd=str(ROOT))
    return json_checks(r, "fault") | {"stdout": r.stdout}


@pytest.fixture(scope="module", params=sorted(TRANSPORTS))
def transport(request):
    return request.param


@pytest.fixture(scope="module")
def checks(transport):
    return _run(transport)


def test_tinygrad_boots_mi350x_with_its_am_backend(checks, transport):
    d = checks["device"]
    assert d["pci_dev"] == PCI_DEVICE[transport]
    assert (d["arch"], d["iface"], d["xccs"], d["lds_kb"]) == ("gfx950", "PCIIface", 8, 160)
    # the versions it read from the discovery table: GC 9.5.0 (1), SDMA 4.4.4 (3), MMHUB 1.8.1 (12), MP0/MP1 13.0.12
    assert "1: (9, 5, 0)" in d["ip"] and "3: (4, 4, 4)" in d["ip"] and "12: (1, 8, 1)" in d["ip"]
    assert "15: (13, 0, 12)" in d["ip"] and "16: (13, 0, 12)" in d["ip"]


def test_a_triton_add_matches_numpy(checks):
    assert checks["add"]["n"] == 1001 and checks["add"]["max_error"] == 0.0


def test_a_triton_row_reduction_matches_numpy(checks):
    r = checks["reduction"]
    assert r["sum_error"] < 1e-5 and r["max_equal"] and r["argmax_equal"]


def test_a_triton_matmul_matches_numpy(checks):
    assert checks["matmul"]["rel_error"] < 1e-5


def test_cdna4s_bf16_mfma_through_tinygrads_runtime_matches_numpy(checks):
    m = checks["mfma_dot"]
    assert m["isa"] == ["v_mfma_f32_32x32x16_bf16"] and m["rel_error"] < 1e-5


def test_a_kernel_that_spills_runs_on_tinygrads_scratch(checks):
    s = checks["scratch"]
    assert s["private_segment"] == 720 and s["max_error"] <= s["bound"]


def test_llvm_22s_saxpy_matches_numpy(checks):
    assert checks["saxpy"]["max_error"] == 0.0


def test_a_kernel_with_152_kib_of_lds_runs_as_the_discovery_tables_gc_info_allows(checks):
    b = checks["big_lds"]
    assert b["group_segment"] == 152 << 10 and b["mirrored"]


def test_a_page_fault_reaches_tinygrad_through_the_ih_ring_with_its_address(checks):
    assert_am_page_fault(checks)
