"""XGMI hives: which GPUs of the machine share an Infinity Fabric hive, and what amdgpu derives from it.

Facts from amdgpu/amdkfd (amdgpu_xgmi.c, kfd_device.c, kfd_device_queue_manager.c):
- a GPU whose GC IP has XGMI (`gmc.xgmi.supported`: here a chip with `xgmi_gts`, i.e. gfx942) always joins a hive,
  alone if need be: the PSP hands it a non-zero 64-bit hive id, the same for every GPU wired to it; chips without
  XGMI report hive id 0. The mock puts every GPU of one architecture with XGMI into one hive (an MI300X platform
  wires all eight OAMs to each other); GPUs of different architectures never share one;
- each GPU of a hive has a physical node id (its place in the hive, 0..n-1) and reaches every other member over one
  direct link (one hop: the fully connected MI300X platform);
- a link is 16 lanes at the chip's rate (32 GT/s for GC 9.4.3): rate * lanes * 1000 / 8 MB/s per link;
- on an XGMI-capable GPU amdkfd keeps at most two SDMA engines for PCIe traffic (kfd_get_num_sdma_engines) and
  calls the rest XGMI engines (kfd_get_num_xgmi_sdma_engines): MI300X's 16 are 2 + 14. Engine ids count the PCIe
  engines first, then the XGMI ones.

Where a peer's VRAM sits for a GPU of the hive (the "hive aperture"): the mock registers each member's VRAM with
every other member's physical memory at HIVE_APERTURE + physical node id * HIVE_SEGMENT, carried by Link.PEER_XGMI
(simgpu.clock), and kfd_memory points the page tables there. amdgpu instead writes a local (non-system) PTE into the
hive's aggregated frame buffer; the simulator's MMU reaches memory that is not the GPU's own only through its system
aperture, so the PTE has the SYSTEM bit. Clients never see PTEs; docs/device.md ("XGMI hives") says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from simgpu.hw.chips import Chip

XGMI_LANES = 16  # every XGMI link amdgpu knows is 16 lanes wide (amdgpu_xgmi_early_init)
PCIE_SDMA_ENGINES = 2  # at most this many SDMA engines serve PCIe on an XGMI GPU (kfd_get_num_sdma_engines)
HIVE_ID_BASE = 0x5A11_71FE_0000_0000  # hive ids come from the PSP: any non-zero 64-bit value; ours are fixed
HIVE_APERTURE = 1 << 45  # where a hive member's VRAM appears to its peers (above every PCIe BAR, 1 << 43..44)
HIVE_SEGMENT = 1 << 37  # one member's window: as large as a BAR0 window (simgpu.soc.pci.PEER_BAR_STRIDE)


def xgmi_supported(chip: Chip) -> bool:
    return chip.xgmi_gts > 0


def link_mbytes(chip: Chip) -> int:
    """MB/s of one XGMI link of the chip, one direction (amdgpu_xgmi_get_bandwidth, per link)."""
    return chip.xgmi_gts * XGMI_LANES * 1000 // 8


def sdma_engines(chip: Chip) -> tuple[int, int]:
    """(PCIe SDMA engines, XGMI SDMA engines) as amdkfd splits the chip's engines."""
    if not xgmi_supported(chip):
        return chip.sdma_engines, 0
    pcie = min(chip.sdma_engines, PCIE_SDMA_ENGINES)
    return pcie, chip.sdma_engines - pcie


@dataclass(frozen=True)
class Hive:
    """One XGMI hive: its id and its members (GPU indices, in physical node id order)."""

    hive_id: int
    members: tuple[int, ...]

    def physical_node_id(self, gpu: int) -> int:
        return self.members.index(gpu)

    def window(self, gpu: int) -> int:
        """The system-aperture address where member `gpu`'s VRAM appears to the other members."""
        return HIVE_APERTURE + self.physical_node_id(gpu) * HIVE_SEGMENT


def hives(chips: list[Chip]) -> list[Hive]:
    """The hives of a machine whose GPU i is `chips[i]`: one per architecture with XGMI, in device order."""
    by_arch: dict[str, list[int]] = {}
    for i, c in enumerate(chips):
        if xgmi_supported(c):
            by_arch.setdefault(c.arch, []).append(i)
    return [Hive(HIVE_ID_BASE + n + 1, tuple(members)) for n, members in enumerate(by_arch.values())]


def hive_of(all_hives: list[Hive], gpu: int) -> Hive | None:
    return next((h for h in all_hives if gpu in h.members), None)


def same_hive(all_hives: list[Hive], a: int, b: int) -> bool:
    """amdgpu_xgmi_same_hive: two different GPUs with the same non-zero hive id."""
    h = hive_of(all_hives, a)
    return a != b and h is not None and b in h.members
