"""The runtime's AM backend (runtime.Device(..., driver="am")): the runtime boots the emulated PCI function itself
and runs the same HCQ queues over it. Every corpus kernel gives the bytes and the virtual GPU time KFD gives, on PM4
and AQL; a page fault arrives as an IH entry and a GPUFault, and the device runs again; bad bring-up is named."""

from functools import cache

import numpy as np
import pytest

import runtime
from mockgpu import MockOS
from simgpu.clock import TIMESTAMP_MHZ
from tests.runtime.test_runtime_kernels import KERNELS, run_corpus


@cache
def _device(queue: str, driver: str) -> runtime.Device:
    return runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 30), driver=driver)


def _bytes(values) -> list:
    return [v.tobytes() if isinstance(v, np.ndarray) else v for v in values]


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_corpus_kernel_over_am_matches_kfd(name, queue):
    args, after, t = run_corpus(_device(queue, "am"), name, seed=5)
    assert KERNELS[name].mismatch(args, after) is None
    kfd_args, kfd_after, kfd_t = run_corpus(_device(queue, "kfd"), name, seed=5)
    assert _bytes(after) == _bytes(kfd_after)
    # The same kernel on the same virtual clock; its time is read from 100 MHz timestamps, whose phase follows all
    # that ran before (the uploads, charged by simgpu.clock's bandwidth model by the links their memory is on, which
    # the two drivers choose apart): the two readings may round one tick apart.
    assert abs(t - kfd_t) <= 1 / (TIMESTAMP_MHZ * 1e6) + 1e-12


def test_am_device_is_the_pci_function_it_booted():
    dev = _device("pm4", "am")
    assert dev.driver.bdf == dev.gpu_id == "0000:03:00.0" and dev.arch == "gfx1100"
    soc = dev.os.socs[0]
    assert soc.psp.autoloaded and soc.gchub.enabled[8] and soc.smu.features
    assert {q.name for q in soc.gpu.queues} == {"hqd1.0.0", "sdma0.0"}
    assert dev.memory_info()["vram_used"] > 0


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_the_demo_over_am_prints_kfds_gpu_side_numbers(queue):
    from wiring.demo import run
    tables = {}
    for driver in ("kfd", "am"):
        lines: list[str] = []
        assert run(queue, out=lines.append, compiled=False, driver=driver)
        rows = lines[lines.index(next(x for x in lines if x.startswith("kernel"))) + 1:][:2]
        tables[driver] = [row[:row.index("us") + 2] for row in rows]  # up to the GPU time (then: host time)
        assert all(row.endswith("ok") for row in rows), lines
    assert tables["am"] == tables["kfd"] and len(tables["am"]) == 2


# ---- faults ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_a_page_fault_over_am_arrives_through_the_ih_ring_and_the_device_runs_again(queue):
    from tests.runtime.test_runtime_memory import STORE, _asm_kernel, _ok
    m = MockOS(devices=1, vram_size=1 << 30)
    dev = runtime.Device("AMD:0", queue=queue, os=m, driver="am")
    with pytest.raises(runtime.GPUFault) as e:
        _asm_kernel(dev, STORE)(None, grid=(1,), block=(32,))
    assert e.value.kind == "page_fault" and e.value.address == 0 and e.value.device_usable
    report = e.value.report
    assert report.startswith("AMD:0 (0000:03:00.0): GPU page fault at 0x0 (UTCL2, vmid 8, "
                             "GCVM_L2_PROTECTION_FAULT_STATUS"), report
    assert "[global_store_b32 v1, v2, s[4:5]]" in report  # the driver's report: wave, PC, instruction
    assert m.socs[0].ih.posted and not m.socs[0].regs.get("GCVM_L2_PROTECTION_FAULT_STATUS")  # read and cleared
    _ok(dev)


# ---- bad bring-up ------------------------------------------------------------------------------------------------
def test_firmware_with_a_bad_header_is_named_before_the_psp_sees_it(tmp_path, monkeypatch):
    from simgpu.hw import ucode
    for name, data in ucode.synthetic_set().items():
        (tmp_path / name).write_bytes(data)
    bad = bytearray((tmp_path / "sdma_6_0_0.bin").read_bytes())
    bad[8] = 9  # header_version_major
    (tmp_path / "sdma_6_0_0.bin").write_bytes(bytes(bad))
    monkeypatch.setenv("SIMGPU_AM_FIRMWARE", str(tmp_path))
    m = MockOS(devices=1, vram_size=1 << 30)
    with pytest.raises(ucode.FirmwareError, match=r"sdma_6_0_0.bin: header version 9.0 \(bytes 8-11\), expected 2.0"):
        runtime.Device("AMD:0", os=m, driver="am")
    assert not m.socs[0].psp.components  # nothing reached the PSP


def _pci(m):
    from runtime.am.pci import PCIFunction
    dev = PCIFunction(m, "0000:03:00.0")
    dev.discover()
    return dev


def test_a_queue_activated_before_its_mqd_is_valid_fails_naming_the_register():
    m = MockOS(devices=1, vram_size=1 << 30)
    runtime.Device("AMD:0", os=m, driver="am")  # booted: the MEC runs
    pci = _pci(m)
    pci.wreg_fields("GRBM_GFX_CNTL", meid=1, pipeid=3, queueid=7)
    with pytest.raises(OSError, match=r"CP_HQD_ACTIVE \(ME 1 pipe 3 queue 7\): queue activated before its MQD is "
                                      r"valid: CP_MQD_BASE_ADDR is 0"):
        pci.wreg("CP_HQD_ACTIVE", 1)


def test_a_vm_context_without_a_page_table_fails_naming_the_register():
    m = MockOS(devices=1, vram_size=1 << 30)
    pci = _pci(m)
    with pytest.raises(OSError, match=r"GCVM_CONTEXT9_CNTL: VM context 9 enabled without a page table: "
                                      r"GCVM_CONTEXT9_PAGE_TABLE_BASE_ADDR_LO32/HI32 = 0x0"):
        pci.wreg_fields("GCVM_CONTEXT9_CNTL", enable_context=1, page_table_depth=3)


def test_the_runtimes_am_backend_refuses_a_gfx12_part_naming_what_it_found():
    with pytest.raises(NotImplementedError, match=r"GC 11.0 \(gfx1100\) only, not GC 12.0.1"):
        runtime.Device("AMD:0", os=MockOS(devices=1, vram_size=1 << 28, arch="gfx1201"), driver="am")
