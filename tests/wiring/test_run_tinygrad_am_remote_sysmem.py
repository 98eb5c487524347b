"""System memory over `simgpu run --am --remote-pci` is freed (issue 26): tinygrad's remote-PCI protocol at the
version served has no request that frees a host buffer, so the service frees a program's system memory when the
program's connection closes, as the kernel frees a process's memory at exit. tinygrad programs run one after the other
in one run, each allocating, writing (plain CPU stores at va_addr), copying (SDMA) and freeing host buffers: after
each, the service holds what it held before. (UNMAP_SYSMEM, the explicit request, is tested on the protocol in
tests/mockgpu/test_mockgpu_remote_pci.py.) Skipped without tinygrad, libLLVM 19 or a C compiler."""

import sys
from pathlib import Path

import pytest

from tests.support.clients import json_checks, simgpu_run, tinygrad_cachedb, tinygrad_client


@pytest.fixture(scope="module")
def checks():
    _, lib = tinygrad_client()
    env = {"DEV": "PCI+AMD:LLVM", "LLVM_PATH": str(lib), "CACHEDB": tinygrad_cachedb(), "PYTHONUNBUFFERED": "1"}
    script = Path(__file__).with_name("tinygrad_am_remote_sysmem_checks.py")
    r = simgpu_run([sys.executable, str(script)], "--am", "--remote-pci", env=env)
    return json_checks(r, "sysmem_lifetime")


def test_each_program_drives_the_remote_device_and_the_gpu_reads_its_host_buffers(checks):
    assert checks["child"]["pci_dev"] == "RemotePCIDevice"
    assert checks["child"]["gpu_saw"]
    assert checks["child"]["held"][0] > 0  # while a program runs, the service holds its system memory


def test_a_programs_system_memory_is_freed_when_it_exits(checks):
    lifetime = checks["sysmem_lifetime"]
    # three programs came and went: the service's mappings of system buffers are what they were before the first
    assert lifetime["after"] == [lifetime["base"]] * 3, lifetime
