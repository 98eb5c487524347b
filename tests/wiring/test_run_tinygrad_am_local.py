"""tinygrad's AM backend on LOCAL PCI functions under `simgpu run --am --local-pci` (REMOTE unset): its PCIDevice
finds the GPU in /sys/bus/pci/devices, its register and doorbell loads and stores are trapped and emulated, and it
maps a CPU-device buffer into the GPU through mlock and /proc/self/pagemap -- which over the remote transport it
refuses ("P2P mapping not supported for remote devices"). The GPU's SDMA engine copies through the mapping both ways;
numpy compares the bytes. Skipped without tinygrad, libLLVM 19 or a C compiler."""

import os
import shutil
import sys
from functools import cache
from pathlib import Path

import pytest

from tests.support.clients import json_checks, simgpu_run, tinygrad_client


@cache
def _run(tmp: str) -> dict:
    _, lib = tinygrad_client()
    path = f"/usr/lib/llvm-19/bin{os.pathsep}{os.environ.get('PATH', '')}"  # Debian's LLVM 19 clang: the CPU device's
    if shutil.which("clang", path=path) is None:
        pytest.skip("tinygrad's CPU device compiles with clang (Debian: clang-19)")
    env = {"DEV": "PCI+AMD:LLVM", "LLVM_PATH": str(lib), "CACHEDB": f"{tmp}/tinygrad-cache.db",
           "XDG_CACHE_HOME": f"{tmp}/cache", "PYTHONUNBUFFERED": "1", "PATH": path}
    script = Path(__file__).with_name("tinygrad_am_local_checks.py")
    r = simgpu_run([sys.executable, str(script)], "--am", "--local-pci", env=env)
    return json_checks(r, "to_cpu")


@pytest.fixture(scope="module")
def checks(tmp_path_factory):
    return _run(str(tmp_path_factory.mktemp("tinygrad-am-local")))


def test_tinygrad_drives_a_local_pci_device(checks):
    assert checks["device"] == {"iface": "PCIIface", "pci_dev": "PCIDevice"}


def test_a_cpu_buffer_mapped_into_the_gpu_is_read_by_sdma(checks):
    assert checks["to_gpu"]["equal"]


def test_the_gpu_writes_the_mapped_cpu_buffer(checks):
    assert checks["to_cpu"]["equal"]


def test_an_access_the_bar_trap_cannot_emulate_stops_the_program_with_a_message():
    client = Path(__file__).with_name("bar_trap_client.py")
    r = simgpu_run([sys.executable, str(client)], "--am", "--local-pci")
    assert "register 0\n" in r.stdout  # a plain load of a register is emulated
    assert "memmove returned" not in r.stdout
    assert "accessing BAR5 of GPU 0 at offset 0x7f000: not a move the BAR trap emulates" in r.stderr, r.stderr
    assert r.returncode == 128 + 7  # SIGBUS, the default action once the trap refuses
