"""The GPU's PCI function: its configuration space and BARs (simgpu.hw.pci for the offsets).

A Navi 31 function: vendor 0x1002, device 0x744C (Radeon RX 7900 XTX), revision 0xC8, class 0x030000 (VGA); another
chip's function carries its own device id and revision (simgpu.hw.chips), the rest is the same. BAR0
(64-bit prefetchable) is the VRAM aperture, as large as VRAM (resizable BAR at its maximum); BAR2 (64-bit
prefetchable, 2 MiB) the doorbells; BAR4 I/O ports (256); BAR5 (32-bit) the 1 MiB MMIO register aperture. A BAR's
bus address is where other devices reach it: BAR0 at bar0_address(index), the same system address the mock driver
maps a peer's VRAM at, inside the 44 bits of system address a gfx11 GPU reaches (amdgpu's gmc v11 DMA mask; tinygrad's
AM driver refuses a page-table entry beyond it), so a peer's VRAM is reachable. Capabilities: power management
(0x48) -> PCI Express (0x58, its link control writable) -> MSI (0xA0).

Writes honour each register's writable bits (command, BARs, cache line, interrupt line, link control, the MSI
control's enable); a BAR written with all ones reads back its size mask, as PCI sizing expects. `enabled` follows
sysfs `enable` (pci_enable_device turns memory decoding on).
"""

from __future__ import annotations

from dataclasses import dataclass

from simgpu.hw import pci

VENDOR, DEVICE, REVISION, CLASS = 0x1002, 0x744C, 0xC8, 0x030000
SUBSYSTEM_VENDOR, SUBSYSTEM = 0x1002, 0x0E3B
SYSTEM_ADDRESS_BITS = 44  # the system (bus) addresses a gfx11 GPU reaches
PEER_BAR_BASE = 1 << 43  # BAR0 bus address of GPU 0
PEER_BAR_STRIDE = 1 << 37  # GPU i's BAR0 is i strides on: 64 GPUs of up to 128 GiB of VRAM fit below 1 << 44
DOORBELL_BAR_SIZE = 2 << 20
MMIO_BAR_SIZE = 1 << 20
IO_BAR_SIZE = 256
_PM, _EXP, _MSI = 0x48, 0x58, 0xA0


def bar0_address(index: int) -> int:
    """The bus address of GPU `index`'s BAR0 (its VRAM seen from the system)."""
    return PEER_BAR_BASE + index * PEER_BAR_STRIDE


@dataclass(frozen=True)
class Bar:
    """One BAR: its index, bus address, size and kind."""

    index: int
    address: int
    size: int
    is_64bit: bool
    prefetchable: bool
    io: bool = False

    def flags(self) -> int:
        """The low bits of its BAR register."""
        if self.io:
            return pci.BAR_SPACE_IO
        return (pci.BAR_MEM_TYPE_64 if self.is_64bit else 0) | (pci.BAR_MEM_PREFETCH if self.prefetchable else 0)

    def resource_flags(self) -> int:
        """The flags of its line in sysfs `resource`."""
        if self.io:
            return pci.IORESOURCE_IO
        return pci.IORESOURCE_MEM | (pci.IORESOURCE_PREFETCH if self.prefetchable else 0) | \
            (pci.IORESOURCE_MEM_64 if self.is_64bit else 0)


class PCIEndpoint:
    """The device side of GPU number `index`'s PCI function: its configuration space and BARs (its VRAM `vram_size`
    bytes). (The driver's side, which opens it through sysfs, is runtime.am.pci.PCIFunction.)"""

    def __init__(self, index: int, vram_size: int, device: int = DEVICE, revision: int = REVISION):
        self.index, self.device, self.revision = index, device, revision
        vram_bar = 1 << (vram_size - 1).bit_length()  # BAR sizes are powers of two
        if vram_bar > PEER_BAR_STRIDE:
            raise ValueError(f"VRAM of {vram_size:#x} bytes: at most {PEER_BAR_STRIDE:#x} (the BAR0 window of a GPU)")
        self.bars = {0: Bar(0, bar0_address(index), vram_bar, True, True),
                     2: Bar(2, 0xE000_0000 + 2 * index * DOORBELL_BAR_SIZE, DOORBELL_BAR_SIZE, True, True),
                     4: Bar(4, 0xE000 + index * IO_BAR_SIZE, IO_BAR_SIZE, False, False, io=True),
                     5: Bar(5, 0xFC00_0000 + index * MMIO_BAR_SIZE, MMIO_BAR_SIZE, False, False)}
        self.reset()

    def reset(self) -> None:
        """Power-on contents."""
        c = bytearray(pci.CONFIG_SIZE)
        self.config = c
        self._writable = bytearray(pci.CONFIG_SIZE)  # per byte, the bits a write may change
        self._put(pci.VENDOR_ID, VENDOR, 2)
        self._put(pci.DEVICE_ID, self.device, 2)
        self._put(pci.STATUS, pci.STATUS_CAP_LIST, 2)
        self._put(pci.REVISION_ID, self.revision, 1)
        self._put(pci.CLASS_PROG, CLASS, 3)
        self._put(pci.SUBSYSTEM_VENDOR_ID, SUBSYSTEM_VENDOR, 2)
        self._put(pci.SUBSYSTEM_ID, SUBSYSTEM, 2)
        self._put(pci.CAPABILITY_LIST, _PM, 1)
        self._put(pci.INTERRUPT_PIN, 1, 1)
        self._mask(pci.COMMAND, pci.COMMAND_IO | pci.COMMAND_MEMORY | pci.COMMAND_MASTER | pci.COMMAND_INTX_DISABLE, 2)
        self._mask(pci.CACHE_LINE_SIZE, 0xFF, 1)
        self._mask(pci.INTERRUPT_LINE, 0xFF, 1)
        for bar in self.bars.values():
            at = pci.BASE_ADDRESS_0 + 4 * bar.index
            self._put(at, (bar.address & 0xFFFFFFFF) | bar.flags(), 4)
            self._mask(at, ~(bar.size - 1) & 0xFFFFFFFF & ~0xF if not bar.io else ~(bar.size - 1) & 0xFFFFFFFC, 4)
            if bar.is_64bit:
                self._put(at + 4, bar.address >> 32, 4)
                self._mask(at + 4, ~((bar.size - 1) >> 32) & 0xFFFFFFFF, 4)
        # Capabilities: PM -> PCIe -> MSI.
        self._put(_PM, pci.CAP_ID_PM | _EXP << 8 | 0x3 << 16, 4)
        self._put(_EXP, pci.CAP_ID_EXP | _MSI << 8 | 0x2 << 16, 4)  # version 2, endpoint
        self._put(_EXP + pci.EXP_LNKCAP, 0x00477C04, 4)  # x16, 16 GT/s, ASPM L0s/L1 supported
        self._put(_EXP + pci.EXP_LNKCTL, pci.LNKCTL_ASPMC, 2)  # power-on: ASPM enabled (drivers turn it off)
        self._mask(_EXP + pci.EXP_LNKCTL, 0x0FFB, 2)
        self._mask(_EXP + pci.EXP_DEVCTL, 0x7FFF, 2)
        self._put(_MSI, pci.CAP_ID_MSI | 0 << 8 | 0x0080 << 16, 4)  # 64-bit MSI, last capability
        self._mask(_MSI + 2, 0x0071, 2)
        self._mask(_MSI + 4, 0xFFFFFFFC, 4)
        self._mask(_MSI + 8, 0xFFFFFFFF, 4)
        self._mask(_MSI + 12, 0xFFFF, 2)

    def _put(self, at: int, value: int, n: int) -> None:
        self.config[at:at + n] = (value & ((1 << 8 * n) - 1)).to_bytes(n, "little")

    def _mask(self, at: int, mask: int, n: int) -> None:
        self._writable[at:at + n] = (mask & ((1 << 8 * n) - 1)).to_bytes(n, "little")

    def read(self, offset: int, size: int) -> bytes:
        """Configuration bytes (reads past the end give nothing)."""
        return bytes(self.config[offset:offset + size]) if 0 <= offset else b""

    def write(self, offset: int, data: bytes) -> int:
        """Write configuration bytes (only writable bits change); returns how many bytes were taken."""
        if offset < 0 or offset >= pci.CONFIG_SIZE:
            return 0
        data = bytes(data[:pci.CONFIG_SIZE - offset])
        for i, b in enumerate(data):
            m = self._writable[offset + i]
            self.config[offset + i] = (self.config[offset + i] & ~m) | (b & m)
        for bar in self.bars.values():  # keep each BAR's read-only type bits
            at = pci.BASE_ADDRESS_0 + 4 * bar.index
            if at < offset + len(data) and offset < at + 4:
                low = int.from_bytes(self.config[at:at + 4], "little")
                self._put(at, (low & ~0xF if not bar.io else low & ~0x3) | bar.flags(), 4)
        return len(data)

    def command(self) -> int:
        """The COMMAND register."""
        return int.from_bytes(self.config[pci.COMMAND:pci.COMMAND + 2], "little")

    @property
    def enabled(self) -> bool:
        """Whether the device decodes memory (sysfs `enable`, or COMMAND.MEMORY)."""
        return bool(self.command() & pci.COMMAND_MEMORY)

    def enable(self, on: bool) -> None:
        """sysfs `enable`: pci_enable_device / pci_disable_device."""
        cmd = self.command()
        self._put(pci.COMMAND, cmd | pci.COMMAND_MEMORY | pci.COMMAND_IO if on else cmd & ~pci.COMMAND_MEMORY, 2)

    def resource(self) -> str:
        """The sysfs `resource` file."""
        lines = []
        for i in range(pci.RESOURCE_LINES):
            b = self.bars.get(i)
            lines.append(pci.resource_line(b.address, b.size, b.resource_flags()) if b else pci.resource_line(0, 0, 0))
        return "\n".join(lines) + "\n"
