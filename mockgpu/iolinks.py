"""The io_links and p2p_links of the KFD topology: what amdkfd builds from each GPU's virtual CRAT and its peers
(kfd_crat.c, kfd_topology.c), node 0 being the CPU and node i + 1 GPU i.

- io_links (direct links). Each GPU has a PCIe link to the CPU (type 2, weight 20), and amdkfd adds the CPU's link
  back to it (the GPU's BAR covers its VRAM: a large BAR). Each GPU of an XGMI hive has one XGMI link (type 11) to
  every other member: weight 15 per hop, min_bandwidth one link's, max_bandwidth the links to that peer times one
  link's (mockgpu.hive). A GPU's list is: the CPU, then its peers in node order.
- p2p_links (indirect links): between two GPUs that are not in one hive, when each can reach the other's BAR
  (amdgpu_device_is_peer_accessible: every GPU here has a large BAR): a copy of the first GPU's CPU link, weight the
  sum of both GPUs' CPU-link weights, bandwidths the smaller.
- flags: ENABLED on every link. amdkfd then marks, when it adds GPU k (in node order), the links towards k that it
  finds on k's peers ("inbound"): a PCIe link into a CPU or between two GPUs is NON_COHERENT (both directions
  between GPUs), and an inbound PCIe link whose target GPU's PCIe capability lacks the AtomicOp completer bits
  (DEVCAP2) gets NO_ATOMICS_32_BIT | NO_ATOMICS_64_BIT; XGMI links always support atomics. So between two PCIe peers
  the link from the earlier GPU to the later one carries the NO_ATOMICS bits and the other does not, as on Linux.
- recommended_sdma_engine_id_mask (direct links): the XGMI SDMA engines for an XGMI link to a GPU, else the PCIe
  engines. Not modelled: the per-pair single-engine map amdkfd uses instead in an 8-GPU MI300X hive in SPX mode
  (rec_sdma_eng_map); p2p_links report 0 (amdkfd copies the value from a CPU link in probe order).
"""

from __future__ import annotations

from collections.abc import Callable

from mockgpu import hive as xgmi
from runtime.uapi import kfd
from simgpu.hw import pci
from simgpu.hw.chips import Chip

IOLINK_TYPE_PCIEXPRESS, IOLINK_TYPE_XGMI = kfd.CRAT_IOLINK_TYPE_PCIEXPRESS, kfd.CRAT_IOLINK_TYPE_XGMI
FLAGS_ENABLED, FLAGS_NON_COHERENT = kfd.CRAT_IOLINK_FLAGS_ENABLED, kfd.CRAT_IOLINK_FLAGS_NON_COHERENT
FLAGS_NO_ATOMICS = kfd.CRAT_IOLINK_FLAGS_NO_ATOMICS_32_BIT | kfd.CRAT_IOLINK_FLAGS_NO_ATOMICS_64_BIT
PCIE_WEIGHT = 20  # kfd_parse_subtype_iolink: every PCIe link
XGMI_WEIGHT = 15  # KFD_CRAT_XGMI_WEIGHT, times the hops
PCIE_MIN_MBYTES, PCIE_MAX_MBYTES = 312, 64000  # what the PCIe link to the CPU always reported here


def _link(kind: int, src: int, dst: int, weight: int, lo: int, hi: int, flags: int, engines: int) -> dict:
    return {"type": kind, "version_major": 0, "version_minor": 0, "node_from": src, "node_to": dst,
            "weight": weight, "min_latency": 0, "max_latency": 0, "min_bandwidth": lo, "max_bandwidth": hi,
            "recommended_transfer_size": 0, "recommended_sdma_engine_id_mask": engines, "flags": flags}


def _mask(first: int, count: int) -> int:
    return ((1 << count) - 1) << first


def build(chips: list[Chip], atomics: list[bool]) -> tuple[dict[int, list[dict]], dict[int, list[dict]]]:
    """(io_links, p2p_links) by node for GPUs `chips` (GPU i is node i + 1); `atomics[i]`: GPU i's PCIe function
    completes AtomicOps (its DEVCAP2)."""
    hives = xgmi.hives(chips)
    io: dict[int, list[dict]] = {0: []}
    p2p: dict[int, list[dict]] = {n: [] for n in range(len(chips) + 1)}
    for i, chip in enumerate(chips):
        pcie_engines, xgmi_engines = xgmi.sdma_engines(chip)
        inbound_pcie = FLAGS_ENABLED | FLAGS_NON_COHERENT | (0 if atomics[i] else FLAGS_NO_ATOMICS)
        sdma = _mask(0, pcie_engines)
        io[i + 1] = [_link(IOLINK_TYPE_PCIEXPRESS, i + 1, 0, PCIE_WEIGHT, PCIE_MIN_MBYTES, PCIE_MAX_MBYTES,
                           FLAGS_ENABLED, sdma)]
        io[0].append(_link(IOLINK_TYPE_PCIEXPRESS, 0, i + 1, PCIE_WEIGHT, PCIE_MIN_MBYTES, PCIE_MAX_MBYTES,
                           inbound_pcie, sdma))
        h = xgmi.hive_of(hives, i)
        per_link = xgmi.link_mbytes(chip)
        for j in range(len(chips)):
            if j == i:
                continue
            if h is not None and j in h.members:  # one hop, one link: the fully connected hive
                io[i + 1].append(_link(IOLINK_TYPE_XGMI, i + 1, j + 1, XGMI_WEIGHT * 1, per_link, per_link,
                                       FLAGS_ENABLED, _mask(pcie_engines, xgmi_engines)))
            else:  # PCIe peer-to-peer through each other's BAR
                # the later GPU's links are marked when it is added: the earlier one's link to it is inbound
                flags = FLAGS_ENABLED | FLAGS_NON_COHERENT | (FLAGS_NO_ATOMICS if j > i and not atomics[j] else 0)
                p2p[i + 1].append(_link(IOLINK_TYPE_PCIEXPRESS, i + 1, j + 1, 2 * PCIE_WEIGHT, PCIE_MIN_MBYTES,
                                        PCIE_MAX_MBYTES, flags, 0))
    return io, p2p


def atomic_completer(read: Callable[[int, int], bytes]) -> bool:
    """Whether a PCI function completes AtomicOps: its PCIe capability's DEVCAP2 (what amdkfd reads with
    pcie_capability_read_dword), found by walking the capability list through `read(offset, size)`."""
    at, seen = read(pci.CAPABILITY_LIST, 1)[0] & 0xFC, set()
    while at and at not in seen:
        seen.add(at)
        if read(at, 1)[0] == pci.CAP_ID_EXP:
            cap2 = int.from_bytes(read(at + pci.EXP_DEVCAP2, 4), "little")
            return bool(cap2 & (pci.DEVCAP2_ATOMIC_COMP32 | pci.DEVCAP2_ATOMIC_COMP64))
        at = read(at + 1, 1)[0] & 0xFC
    return False
