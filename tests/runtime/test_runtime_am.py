"""The runtime's AM backend (runtime.Device(..., driver="am")): the runtime boots the emulated PCI function itself
and runs the same HCQ queues over it. Every corpus kernel gives the bytes and the virtual GPU time KFD gives, on PM4
and AQL; a page fault arrives as an IH entry and a GPUFault, and the device runs again; bad bring-up is named."""

from functools import cache

import numpy as np
import pytest

import runtime
from mockgpu import MockOS
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
    assert t == kfd_t  # the same packets on the same virtual clock


def test_am_device_is_the_pci_function_it_booted():
    dev = _device("pm4", "am")
    assert dev.bdf == "0000:03:00.0" and dev.arch == "gfx1100"
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
