"""The device's virtual clock and its documented cost model.

One clock per GPU, shared by the command processors, the SDMA engines and the shader engine (which
advances it by CYCLES_PER_WAVE_INSTRUCTION per wave-instruction). It counts core (shader) clock cycles
at CORE_CLOCK_MHZ; timestamps (RELEASE_MEM / COPY_DATA GPU clock, SDMA TIMESTAMP, AQL signal
start_ts/end_ts, s_sendmsg_rtn MSG_RTN_GET_REALTIME) read the 100 MHz timestamp counter derived from it.
Nothing reads the host's wall clock: the same packets give the same timestamps on every run and machine.

May import: nothing (simgpu.shader and simgpu.cp share it).
"""

from __future__ import annotations

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
DMA_BYTES_PER_CYCLE = 64  # copy/fill bandwidth of SDMA and CP DMA_DATA


class Clock:
    """Core-cycle counter plus the derived 100 MHz timestamp."""

    core_mhz = CORE_CLOCK_MHZ
    timestamp_mhz = TIMESTAMP_MHZ

    def __init__(self) -> None:
        self.cycles = 0

    def advance(self, cycles: int) -> None:
        """Charge `cycles` core cycles."""
        self.cycles += int(cycles)

    def advance_bytes(self, nbytes: int) -> None:
        """Charge a DMA transfer of nbytes."""
        self.advance(-(-int(nbytes) // DMA_BYTES_PER_CYCLE))

    def timestamp(self) -> int:
        """The 64-bit timestamp counter (100 MHz ticks since the device was created)."""
        return self.cycles * self.timestamp_mhz // self.core_mhz
