"""PCI configuration space (Linux include/uapi/linux/pci_regs.h): offsets, bits and capability ids of the type-0
header a GPU function presents, and the sysfs `resource` line format.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

VENDOR_ID, DEVICE_ID, COMMAND, STATUS = 0x00, 0x02, 0x04, 0x06
REVISION_ID, CLASS_PROG, CLASS_DEVICE = 0x08, 0x09, 0x0A  # class code: prog-if 0x09, sub-class 0x0a, class 0x0b
CACHE_LINE_SIZE, HEADER_TYPE = 0x0C, 0x0E
BASE_ADDRESS_0 = 0x10  # six 32-bit BAR registers, 0x10..0x27
SUBSYSTEM_VENDOR_ID, SUBSYSTEM_ID = 0x2C, 0x2E
CAPABILITY_LIST = 0x34
INTERRUPT_LINE, INTERRUPT_PIN = 0x3C, 0x3D
CONFIG_SIZE = 4096  # PCIe extended configuration space

COMMAND_IO, COMMAND_MEMORY, COMMAND_MASTER, COMMAND_INTX_DISABLE = 0x1, 0x2, 0x4, 0x400
STATUS_CAP_LIST = 0x10

BAR_SPACE_IO = 0x1
BAR_MEM_TYPE_64 = 0x4
BAR_MEM_PREFETCH = 0x8

CAP_ID_PM, CAP_ID_MSI, CAP_ID_EXP = 0x01, 0x05, 0x10
EXP_FLAGS, EXP_DEVCAP, EXP_DEVCTL, EXP_LNKCAP, EXP_LNKCTL = 0x2, 0x4, 0x8, 0xC, 0x10  # offsets within the PCIe cap
EXP_DEVCAP2 = 0x24  # within the PCIe cap
DEVCAP2_ATOMIC_COMP32, DEVCAP2_ATOMIC_COMP64 = 0x80, 0x100  # AtomicOp completer (32-, 64-bit operands)
LNKCTL_ASPMC = 0x3  # ASPM L0s / L1 enables

# sysfs `resource`: one line per resource (6 BARs, the ROM, then bridge windows), "start end flags" in hex.
RESOURCE_LINES = 13
IORESOURCE_IO, IORESOURCE_MEM, IORESOURCE_PREFETCH, IORESOURCE_MEM_64 = 0x100, 0x200, 0x2000, 0x100000


def resource_line(start: int, size: int, flags: int) -> str:
    """One line of the sysfs `resource` file (zeros for an absent resource)."""
    end = start + size - 1 if size else 0
    return f"0x{start:016x} 0x{end:016x} 0x{flags:016x}"
