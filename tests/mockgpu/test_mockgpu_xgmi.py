"""An MI300X-class node: gfx942 GPUs in one XGMI hive beside PCIe GPUs (issue 31).

The topology is read as a client reads it (the sysfs text of nodes/N/properties, io_links/N, p2p_links/N) and checked
against amdkfd's rules as Linux states them, written out here rather than taken from the mock's modules:
- kfd_crat.c / kfd_topology.c: a GPU's first io_link goes to the CPU over PCIe (CRAT_IOLINK_TYPE_PCIEXPRESS = 2,
  weight 20), the CPU gets the reverse link; GPUs of one hive (same non-zero hive_id) get an XGMI link
  (CRAT_IOLINK_TYPE_XGMI = 11) each way, weight KFD_CRAT_XGMI_WEIGHT (15) times the hops (1), min_bandwidth one
  link's, max_bandwidth the links' (1); GPUs not in one hive that can reach each other's BAR get p2p_links whose
  weight is the sum of both CPU links' and bandwidths the smaller; XGMI links carry no NO_ATOMICS or NON_COHERENT
  flags, PCIe links between GPUs are NON_COHERENT;
- amdgpu_xgmi.c: GC 9.4.3 links are 16 lanes at 32 GT/s: 16 * 32 * 1000 / 8 MB/s;
- kfd_device.c / kfd_device_queue_manager.c: an XGMI GPU keeps min(engines, 2) SDMA engines for PCIe, the rest are
  XGMI engines (MI300X: 16 SDMA 4.4.2 instances, 8 queues each); SDMA_XGMI queues go round-robin over the XGMI
  engines; an XGMI queue on a GPU without XGMI engines is ENOMEM, SDMA_BY_ENG_ID past the last engine EINVAL.
"""

from __future__ import annotations

import errno

import numpy as np
import pytest

import runtime
from mockgpu.driver import MockOS
from mockgpu.kfd_node import VMID
from runtime import peer
from runtime.os import TOPOLOGY
from runtime.uapi import kfd
from simgpu.clock import Link

PCIE, XGMI = 2, 11
ENABLED, NON_COHERENT, NO_ATOMICS = 1, 2, 4 | 8
MI300X_LINK_MBYTES = 16 * 32 * 1000 // 8


def _props(text: str) -> dict[str, int]:
    """A sysfs properties file as a client parses it: one "name value" pair a line."""
    return {k: int(v) for k, v in (line.split() for line in text.splitlines() if line.strip())}


def _topology(os) -> dict[int, dict]:
    """Every node: its properties and its io_links / p2p_links, read through the OS seam."""
    nodes = {}
    for n in sorted(int(d) for d in os.listdir(f"{TOPOLOGY}/nodes")):
        base = f"{TOPOLOGY}/nodes/{n}"
        node = {"props": _props(os.read_text(f"{base}/properties"))}
        for kind in ("io_links", "p2p_links"):
            entries = sorted(int(e) for e in os.listdir(f"{base}/{kind}")) if os.exists(f"{base}/{kind}") else []
            assert entries == list(range(len(entries)))
            node[kind] = [_props(os.read_text(f"{base}/{kind}/{e}/properties")) for e in entries]
        nodes[n] = node
    return nodes


@pytest.fixture(scope="module")
def mixed():
    """Two MI300Xs around a Radeon RX 7900 XTX: nodes 1 and 3 form a hive, node 2 is a PCIe GPU."""
    return MockOS(devices=3, vram_size=1 << 28, arch="gfx942,gfx1100,gfx942")


def test_the_gfx942s_share_one_hive_and_the_gfx1100_none(mixed):
    t = _topology(mixed)
    hive = {n: t[n]["props"]["hive_id"] for n in (1, 2, 3)}
    assert hive[1] == hive[3] != 0 and hive[2] == 0
    assert [t[n]["props"]["gfx_target_version"] for n in (1, 2, 3)] == [90402, 110000, 90402]


def test_every_link_follows_amdkfds_rules(mixed):
    t = _topology(mixed)
    gpus = [n for n in t if n != 0]
    hive = {n: t[n]["props"]["hive_id"] for n in gpus}
    for n in gpus:
        p, io = t[n]["props"], t[n]["io_links"]
        assert p["io_links_count"] == len(io) and p["p2p_links_count"] == len(t[n]["p2p_links"])
        cpu = io[0]  # the first io_link: to the CPU node, PCIe
        assert (cpu["type"], cpu["node_from"], cpu["node_to"], cpu["weight"]) == (PCIE, n, 0, 20)
        back = [link for link in t[0]["io_links"] if link["node_to"] == n]
        assert len(back) == 1 and back[0]["flags"] & NON_COHERENT  # the CPU's link back: PCIe into a CPU
        assert {k: back[0][k] for k in ("type", "weight", "min_bandwidth", "max_bandwidth")} == \
            {k: cpu[k] for k in ("type", "weight", "min_bandwidth", "max_bandwidth")}
        peers = [m for m in gpus if m != n]
        in_hive = [m for m in peers if hive[n] and hive[m] == hive[n]]
        xgmi = {link["node_to"]: link for link in io[1:]}
        assert sorted(xgmi) == in_hive  # an XGMI io_link to each member of the hive, nothing else
        for link in xgmi.values():
            assert (link["type"], link["node_from"], link["weight"]) == (XGMI, n, 15)
            assert link["min_bandwidth"] == link["max_bandwidth"] == MI300X_LINK_MBYTES
            assert link["flags"] == ENABLED  # XGMI: atomics, coherent
        p2p = {link["node_to"]: link for link in t[n]["p2p_links"]}
        assert sorted(p2p) == [m for m in peers if m not in in_hive]  # PCIe peer-to-peer with the others
        for m, link in p2p.items():
            their_cpu = t[m]["io_links"][0]
            assert (link["type"], link["node_from"]) == (PCIE, n)
            assert link["weight"] == cpu["weight"] + their_cpu["weight"]
            assert link["max_bandwidth"] == min(cpu["max_bandwidth"], their_cpu["max_bandwidth"])
            assert link["flags"] & (ENABLED | NON_COHERENT) == ENABLED | NON_COHERENT
    # the links of a pair agree, each way
    for n in gpus:
        for link in t[n]["io_links"][1:]:
            other = [x for x in t[link["node_to"]]["io_links"] if x["node_to"] == n]
            assert len(other) == 1 and other[0]["max_bandwidth"] == link["max_bandwidth"]


def test_sdma_engines_split_into_pcie_and_xgmi_engines(mixed):
    t = _topology(mixed)
    mi300x, navi31 = t[1]["props"], t[2]["props"]
    assert (mi300x["num_sdma_engines"], mi300x["num_sdma_xgmi_engines"]) == (2, 16 - 2)
    assert mi300x["num_sdma_queues_per_engine"] == 8  # SDMA 4.4.2: 8 queues, none reserved
    assert (navi31["num_sdma_engines"], navi31["num_sdma_xgmi_engines"]) == (2, 0)
    xgmi_mask = sum(1 << e for e in range(2, 16))
    assert all(link["recommended_sdma_engine_id_mask"] == xgmi_mask for link in t[1]["io_links"][1:])
    assert t[1]["io_links"][0]["recommended_sdma_engine_id_mask"] == 0b11  # to the CPU: the PCIe engines


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_rdna_gpus_stay_pcie(arch):
    t = _topology(MockOS(devices=2, vram_size=1 << 28, arch=arch))
    for n in (1, 2):
        p = t[n]["props"]
        assert p["hive_id"] == 0 and p["num_sdma_xgmi_engines"] == 0
        assert [link["type"] for link in t[n]["io_links"]] == [PCIE]
        assert [link["node_to"] for link in t[n]["p2p_links"]] == [3 - n]


def _queue(mock, dev, queue_type: int, engine: int = 0, percentage: int = 100):
    """CREATE_QUEUE of a queue type on dev's GPU with a ring of its own; the simulator's queue."""
    ring = dev.alloc_system(4096)
    a = dev.driver.kfd_ioctl(kfd.AMDKFD_IOC_CREATE_QUEUE, kfd.kfd_ioctl_create_queue_args(
        ring_base_address=ring.va, ring_size=4096, gpu_id=dev.gpu_id, queue_type=queue_type,
        queue_percentage=percentage,
        queue_priority=7, read_pointer_address=ring.va, write_pointer_address=ring.va + 8, sdma_engine_id=engine))
    return next(q for q in mock.simulator(dev.gpu_id).queues if q.name.endswith(f"-q{a.queue_id}"))


def test_sdma_xgmi_queues_run_on_the_xgmi_engines_and_are_refused_without_them():
    mock = MockOS(devices=2, vram_size=1 << 28, arch="gfx942,gfx1100")
    mi300x, navi31 = runtime.Device("AMD:0", os=mock), runtime.Device("AMD:1", os=mock)
    xgmi = [_queue(mock, mi300x, kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI).engine for _ in range(15)]
    assert xgmi == [2 + i % 14 for i in range(15)]  # round-robin over engines 2..15
    assert _queue(mock, mi300x, kfd.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID, 9).engine == 9
    with pytest.raises(OSError) as e:
        _queue(mock, mi300x, kfd.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID, 16)
    assert e.value.errno == errno.EINVAL and "exceeds maximum id of 15" in str(e.value)
    with pytest.raises(OSError) as e:
        _queue(mock, navi31, kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI)
    assert e.value.errno == errno.ENOMEM  # (the MockOS goes with the test: its queues need no DESTROY_QUEUE)


def test_queue_percentage_carries_the_pm4_target_xcc_in_bits_8_to_15():
    # amdkfd checks only bits 0-7 against KFD_MAX_QUEUE_PERCENTAGE: bits 8-15 name a gfx9.4.3 PM4 queue's XCC
    mock = MockOS(devices=1, vram_size=1 << 28, arch="gfx942")
    dev = runtime.Device("AMD:0", os=mock)
    assert _queue(mock, dev, kfd.KFD_IOC_QUEUE_TYPE_COMPUTE, percentage=100 | 7 << 8).fmt == "pm4"
    with pytest.raises(OSError) as e:
        _queue(mock, dev, kfd.KFD_IOC_QUEUE_TYPE_COMPUTE, percentage=101 | 7 << 8)
    assert e.value.errno == errno.EINVAL


def test_the_xgmi_pool_runs_out_like_amdkfds():
    mock = MockOS(devices=1, vram_size=1 << 28, arch="gfx942")
    dev = runtime.Device("AMD:0", os=mock)
    for _ in range(14 * 8):
        _queue(mock, dev, kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI)
    with pytest.raises(OSError) as e:
        _queue(mock, dev, kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI)
    assert e.value.errno == errno.ENOMEM


@pytest.mark.parametrize(("arch", "link"), [("gfx942", Link.PEER_XGMI), ("gfx1100", Link.PEER_PCIE)])
def test_peer_vram_maps_over_xgmi_in_a_hive_and_over_pcie_otherwise(arch, link):
    mock = MockOS(devices=2, vram_size=1 << 28, arch=arch)
    a, b = runtime.Device("AMD:0", os=mock), runtime.Device("AMD:1", os=mock)
    buf = b.alloc(1 << 16)
    a.driver.map_on_peer(buf.handle, a.gpu_id)  # MAP_MEMORY_TO_GPU of AMD:1's VRAM with AMD:0's gpu_id
    assert mock.simulator(a.gpu_id).dma.link(VMID, buf.va, "write") is link
    a.close()
    b.close()


def test_the_runtime_copies_between_hive_members_both_ways_over_xgmi():
    mock = MockOS(devices=2, vram_size=1 << 28, arch="gfx942")
    a, b = runtime.Device("AMD:0", os=mock), runtime.Device("AMD:1", os=mock)
    assert peer.xgmi_peer(a, b) and peer.xgmi_peer(b, a)
    rng = np.random.default_rng(31)
    up, down = rng.standard_normal(1 << 18).astype(np.float32), rng.standard_normal(1 << 18).astype(np.float32)
    on_a, on_b = a.alloc(up.nbytes).copyin(up), b.alloc(down.nbytes).copyin(down)
    to_b, to_a = b.alloc(up.nbytes), a.alloc(down.nbytes)
    a.copy_between(to_b, on_a, up.nbytes)
    b.copy_between(to_a, on_b, down.nbytes)
    assert np.array_equal(to_b.copyout(np.empty_like(up)), up)
    assert np.array_equal(to_a.copyout(np.empty_like(down)), down)
    for dev in (a, b):  # each copy ran on an XGMI engine of the sending GPU, into the peer's VRAM over XGMI
        gpu = mock.simulator(dev.gpu_id)
        assert dev.sdma_xgmi is not None and gpu.queue_by_doorbell(dev.sdma_xgmi.doorbell_offset // 8).engine >= 2
    assert mock.simulator(a.gpu_id).dma.link(VMID, to_b.va, "write") is Link.PEER_XGMI
    a.close()
    b.close()
