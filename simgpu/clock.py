"""The device's virtual clock and its documented cost model.

One clock per GPU, shared by the command processors, the SDMA engines and the shader engine (which
advances it by CYCLES_PER_WAVE_INSTRUCTION per wave-instruction). It counts core (shader) clock cycles
at CORE_CLOCK_MHZ; timestamps (RELEASE_MEM / COPY_DATA GPU clock, SDMA TIMESTAMP, AQL signal
start_ts/end_ts, s_sendmsg_rtn MSG_RTN_GET_REALTIME) read the 100 MHz timestamp counter derived from it.
Nothing reads the host's wall clock: the same packets give the same timestamps on every run and machine.

May import: nothing (simgpu.shader and simgpu.cp share it).
"""

from __future__ import annotations

from enum import StrEnum

CORE_CLOCK_MHZ = 2500  # Navi 31 boost shader clock
TIMESTAMP_MHZ = 100  # GPU timestamp / "system clock" counter (RLC refclk)

# Cost model, in core cycles (documented in docs/device.md).
CYCLES_PER_WAVE_INSTRUCTION = 1  # each wave-instruction the shader engine issues
PM4_PACKET_CYCLES = 50  # each PM4 packet the CP parses (type-2 fillers: 1 cycle)
PM4_DWORD_CYCLES = 1  # plus one per dword of data written/copied by WRITE_DATA
AQL_PACKET_CYCLES = 50  # each AQL packet
DISPATCH_CYCLES = 1000  # launching a dispatch (on top of the wave-instructions it executes)
WORKGROUP_CYCLES = 4  # per workgroup of a dispatch
SDMA_PACKET_CYCLES = 50  # each SDMA packet


class Link(StrEnum):
    """What carries the bytes of one end of a DMA transfer (SDMA copies and fills, CP DMA_DATA)."""

    VRAM = "vram"  # this GPU's own memory
    PCIE = "pcie"  # system memory, across the PCIe link to the host
    PEER_PCIE = "peer-pcie"  # another GPU's VRAM through its BAR, peer-to-peer over PCIe
    PEER_XGMI = "peer-xgmi"  # another GPU's VRAM over an XGMI (Infinity Fabric) link


# Per link: (bandwidth in MB/s per direction, latency per transfer in ns). Sources in docs/device.md:
# RX 7900 XTX GDDR6 960 GB/s; PCIe 4.0 x16 16 GT/s * 16 lanes * 128/130 = 31.5 GB/s per direction;
# one XGMI link 16 lanes * 32 GT/s = 64 GB/s per direction (MI300X, the one chip with XGMI here; amdgpu reports the
# same per link in the KFD topology); latencies are the model's round figures.
LINKS: dict[Link, tuple[int, int]] = {
    Link.VRAM: (960_000, 500),
    Link.PCIE: (31_500, 1_000),
    Link.PEER_PCIE: (31_500, 1_500),
    Link.PEER_XGMI: (64_000, 1_000),
}


def transfer_cycles(nbytes: int, dst: Link, src: Link | None = None) -> int:
    """Core cycles of one DMA transfer of nbytes into `dst` from `src` (None: the data came with the packet):
    the slowest end's bytes / bandwidth, plus the largest latency. A VRAM-to-VRAM copy reads and writes every
    byte through the same memory, so it moves 2 * nbytes there."""
    ends = [dst] if src is None else [dst, src]
    busiest = 0
    for link in set(ends):
        mbps = LINKS[link][0]
        moved = nbytes * ends.count(link) if link is Link.VRAM else nbytes
        busiest = max(busiest, -(-moved * CORE_CLOCK_MHZ // mbps))  # bytes / (MB/s) * MHz = cycles
    latency_ns = max(LINKS[link][1] for link in ends)
    return busiest + -(-latency_ns * CORE_CLOCK_MHZ // 1000)


class Clock:
    """Core-cycle counter plus the derived 100 MHz timestamp."""

    core_mhz = CORE_CLOCK_MHZ
    timestamp_mhz = TIMESTAMP_MHZ

    def __init__(self) -> None:
        self.cycles = 0

    def advance(self, cycles: int) -> None:
        """Charge `cycles` core cycles."""
        self.cycles += int(cycles)

    def advance_transfer(self, nbytes: int, dst: Link, src: Link | None = None) -> None:
        """Charge a DMA transfer of nbytes (transfer_cycles)."""
        self.advance(transfer_cycles(int(nbytes), dst, src))

    def timestamp(self) -> int:
        """The 64-bit timestamp counter (100 MHz ticks since the device was created)."""
        return self.cycles * self.timestamp_mhz // self.core_mhz
