"""Thousands of launches keep memory flat: no list, dict, set or deque anywhere in the runtime's Device, the
mock driver (MockOS, KfdProcess) or the simulated GPU grows once the rings have wrapped (GPU.events used to
gain an entry per interrupt forever)."""

from collections import deque

import pytest

import runtime
from mockgpu import MockOS
from runtime.launch import FencedRing
from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor

OURS = ("simgpu.", "runtime.", "mockgpu.")
# Every ring wraps within 1,024 launches: the stamp ring's 1,024 slots, the AQL queue's 1,024 packets, the PM4
# queue's 64 KiB (a few hundred launches) and the kernarg ring as set below (64). So the warm-up sees each wrap
# at least once, and the 3,000 launches after it wrap each ring at least twice more: a container that grows per
# launch or per wrap grows in that window (the run was 10,000 launches, 8,000 after the warm-up; half the time).
LAUNCHES, WARM_UP = 5_000, 2_000


def _ours(obj) -> bool:
    return type(obj).__module__.startswith(OURS) and hasattr(obj, "__dict__")


def container_sizes(**roots) -> dict[str, int]:
    """len() of every list, dict, set and deque reachable from `roots` through our objects' attributes
    (and the elements of those containers that are our objects), by attribute path."""
    sizes: dict[str, int] = {}
    seen: set[int] = set()

    def walk(obj, path: str) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, list | dict | set | deque):
            sizes[path] = len(obj)
            items = obj.items() if isinstance(obj, dict) else enumerate(obj)
            for key, value in list(items):
                if _ours(value):
                    walk(value, f"{path}[{key}]")
        elif _ours(obj):
            for name, value in vars(obj).items():
                walk(value, f"{path}.{name}")

    for name, root in roots.items():
        walk(root, name)
    return sizes


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_thousands_of_launches_keep_every_container_bounded(queue):
    mock = MockOS(devices=1, vram_size=1 << 30)
    dev = runtime.Device(queue=queue, os=mock)
    dev.kernarg_ring = FencedRing(64 * 64, 64)  # wraps every 64 launches (the default ring: every 16384)
    co = write_code_object([("k", assemble("s_endpgm"), make_descriptor(8, kernarg_size=0), {".args": []})])
    k = dev.load(co)["k"]  # the cheapest launch: one wave that ends at once
    early: dict[str, int] = {}
    for i in range(1, LAUNCHES + 1):
        k(grid=(1,), block=(32,))
        if i % 1000 == 0 and i <= WARM_UP:
            for path, n in container_sizes(device=dev, mock=mock).items():
                early[path] = max(n, early.get(path, 0))
    final = container_sizes(device=dev, mock=mock)
    grown = {path: (early.get(path, 0), n) for path, n in final.items() if n > early.get(path, 0)}
    assert not grown, f"grew between launch {WARM_UP} and {LAUNCHES}: {grown}"
    watched = ("device.os.gpus[0].interrupt_log", "device.os.gpus[0].engine.decoded",
               "device.os.process.event_manager.events", "device.stamp_ring.live", "device.kernarg_ring.live",
               "device.os.space._areas")
    assert set(watched) <= set(final) and dev.launches == LAUNCHES
