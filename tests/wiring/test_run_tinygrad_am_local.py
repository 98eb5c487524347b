"""tinygrad's AM backend on LOCAL PCI functions under `simgpu run --am` (the default; REMOTE unset): its PCIDevice
finds the GPU in /sys/bus/pci/devices, its register and doorbell loads and stores are trapped and emulated, and it
maps a CPU-device buffer into the GPU through mlock and /proc/self/pagemap -- which over the remote transport it
refuses ("P2P mapping not supported for remote devices"). The GPU's SDMA engine copies through the mapping both ways,
for a CPU-device buffer and for CPU buffers over the program's own private memory (an anonymous mapping, the heap);
numpy compares the bytes. Host buffers allocated and freed in a loop leave the service's footprint bounded. Each run
presents its GPUs in a PCI domain of its own, so two runs at once both open their devices (tinygrad locks a device
by its bus address). Skipped without tinygrad, libLLVM 19 or a C compiler."""

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.support.clients import json_checks, preload_or_skip, simgpu_run, tinygrad_cachedb, tinygrad_client


@cache
def _run(arch: str) -> dict:
    _, lib = tinygrad_client()
    path = f"/usr/lib/llvm-19/bin{os.pathsep}{os.environ.get('PATH', '')}"  # Debian's LLVM 19 clang: the CPU device's
    if shutil.which("clang", path=path) is None:
        pytest.skip("tinygrad's CPU device compiles with clang (Debian: clang-19)")
    env = {"DEV": "PCI+AMD:LLVM", "LLVM_PATH": str(lib), "CACHEDB": tinygrad_cachedb(), "PYTHONUNBUFFERED": "1",
           "PATH": path}
    script = Path(__file__).with_name("tinygrad_am_local_checks.py")
    r = simgpu_run([sys.executable, str(script)], "--am", "--arch", arch, env=env)
    return json_checks(r, "sysmem_loop")


@pytest.fixture(scope="module", params=["gfx1100", "gfx1201", "gfx942", "gfx950"])  # Navi 31, Navi 48, MI300X, MI350X
def checks(request):
    return _run(request.param)


def test_tinygrad_drives_a_local_pci_device(checks):
    assert checks["device"]["iface"] == "PCIIface" and checks["device"]["pci_dev"] == "PCIDevice"


def test_the_devices_are_in_a_pci_domain_of_the_runs_own(checks):
    bus, listed = checks["device"]["bus"], checks["device"]["devices"]
    assert listed == [bus] and not bus.startswith("0000:")  # the AM side's GPU alone, not domain 0's
    assert checks["device"]["other_domain"] == "ENOENT"  # the same bus in another domain is no device of the run's


def test_two_runs_at_once_both_open_their_devices_and_compute(tmp_path):
    _, lib = tinygrad_client()
    preload_or_skip()
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    client = Path(__file__).with_name("tinygrad_am_concurrent_client.py")
    runs = []
    for seed in (1, 2):
        env = dict(os.environ, DEV="PCI+AMD:LLVM", LLVM_PATH=str(lib), PYTHONUNBUFFERED="1",
                   CACHEDB=str(tmp_path / f"cache{seed}.db"))
        env.pop("MOCKGPU", None)
        runs.append(subprocess.Popen([sys.executable, "-m", "wiring.cli", "run", "--am", "--",
                                      sys.executable, str(client), str(barrier), str(seed)],
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    for p in runs:
        try:
            out, err = p.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            for q in runs:
                q.kill()
            raise
        results.append(json_checks(subprocess.CompletedProcess(p.args, p.returncode, out, err), "matmul"))
    buses = [r["device"]["bus"] for r in results]
    assert len(set(buses)) == 2, buses  # two PCI domains: two lock files
    for r in results:
        assert r["both_open"]["buses"] == sorted(buses)  # each computed while the other held its device
        assert r["matmul"]["max_error"] < 1e-4


def test_a_cpu_buffer_mapped_into_the_gpu_is_read_by_sdma(checks):
    assert checks["to_gpu"]["equal"]


def test_the_gpu_writes_the_mapped_cpu_buffer(checks):
    assert checks["to_cpu"]["equal"]


@pytest.mark.parametrize("kind", ["mmap", "heap"])
def test_a_cpu_buffer_over_the_programs_private_memory_is_reached_by_the_gpu_both_ways(checks, kind):
    assert checks[f"private_{kind}"] == {"to_gpu": True, "to_cpu": True}


def test_host_buffers_allocated_and_freed_in_a_loop_leave_the_services_footprint_bounded(checks):
    loop = checks["sysmem_loop"]
    assert loop["gpu_saw"]
    # 40 host buffers of over 1 MiB each came and went; what the service maps at the end is what it mapped before,
    # plus at most the last one (collected at the next allocation)
    assert loop["end"][1] - loop["base"][1] <= loop["largest"], loop
    assert loop["mid"][1] - loop["base"][1] <= loop["largest"], loop
    assert loop["mine"][1] <= loop["end"][1]  # the program maps no more of them than the service holds


def test_an_access_the_bar_trap_cannot_emulate_stops_the_program_with_a_message():
    client = Path(__file__).with_name("bar_trap_client.py")
    r = simgpu_run([sys.executable, str(client)], "--am")
    assert "register 0\n" in r.stdout  # a plain load of a register is emulated
    assert "memmove returned" not in r.stdout
    assert "accessing BAR5 of GPU 0 at offset 0x7f000: not a move the BAR trap emulates" in r.stderr, r.stderr
    assert r.returncode == 128 + 7  # SIGBUS, the default action once the trap refuses
