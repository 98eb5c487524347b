"""The GPU's PCI function as a userspace driver opens it through the OS seam: sysfs identity, `enable`, `config`, the
BARs (resource0: VRAM, resource2: doorbells, resource5: registers), and register access by the amdgpu header names
(simgpu.hw.soc21) at the base addresses of the IP discovery table the device keeps at the top of its VRAM."""

from __future__ import annotations

import time

from runtime.os import MAP_SHARED, OS, PROT_READ, PROT_WRITE
from simgpu.hw import discovery, pci
from simgpu.hw.mmio import RegisterMap
from simgpu.hw.soc21 import REGISTERS

PCI_DEVICES = "/sys/bus/pci/devices"
AMD_VENDOR = 0x1002
MEMSIZE_DWORD = 0xDE3  # RCC_CONFIG_MEMSIZE: readable before the discovery table gives any base (VRAM size in MiB)
POLL_SECONDS = 5.0  # how long a register wait polls before it is a bring-up failure


class BringUpError(RuntimeError):
    """The device did not do what a bring-up step needs; the message names the register or packet."""


def amd_gpus(os_: OS) -> list[str]:
    """PCI bus ids of the AMD display-class functions, in bus order."""
    if not os_.exists(PCI_DEVICES):
        return []
    out = []
    for bdf in sorted(os_.listdir(PCI_DEVICES)):
        d = f"{PCI_DEVICES}/{bdf}"
        if not os_.exists(f"{d}/vendor") or not os_.exists(f"{d}/class"):
            continue
        if int(os_.read_text(f"{d}/vendor"), 16) == AMD_VENDOR and int(os_.read_text(f"{d}/class"), 16) >> 16 == 3:
            out.append(bdf)
    return out


class PCIFunction:
    """One GPU's PCI function: enabled, its BARs mapped, its registers named (after `discover()`)."""

    def __init__(self, os_: OS, bdf: str):
        self.os, self.bdf, self.dir = os_, bdf, f"{PCI_DEVICES}/{bdf}"
        fd = os_.open(f"{self.dir}/enable")
        os_.pwrite(fd, b"1", 0)
        os_.close(fd)
        self.config_fd = os_.open(f"{self.dir}/config")
        self.write_config(pci.COMMAND, self.read_config(pci.COMMAND, 2) | pci.COMMAND_MEMORY | pci.COMMAND_MASTER, 2)
        self.bars: dict[int, object] = {}
        self.bar_fds: dict[int, int] = {}
        sizes = [int(e, 16) - int(s, 16) + 1 if int(e, 16) else 0
                 for s, e, _ in (line.split() for line in os_.read_text(f"{self.dir}/resource").splitlines())]
        for index in (2, 5):
            self.bar_fds[index] = os_.open(f"{self.dir}/resource{index}")
            self.bars[index] = os_.mmap(self.bar_fds[index], sizes[index], PROT_READ | PROT_WRITE, MAP_SHARED, 0)
        self.bar_fds[0] = os_.open(f"{self.dir}/resource0")
        self.bar0_size = sizes[0]
        self.regs: RegisterMap | None = None
        self.vram_size = self.rreg_dword(MEMSIZE_DWORD) << 20

    # ---- configuration space ------------------------------------------------------------------------------
    def read_config(self, offset: int, size: int) -> int:
        """A configuration-space read."""
        return int.from_bytes(self.os.pread(self.config_fd, size, offset), "little")

    def write_config(self, offset: int, value: int, size: int) -> None:
        """A configuration-space write."""
        self.os.pwrite(self.config_fd, value.to_bytes(size, "little"), offset)

    # ---- BARs ---------------------------------------------------------------------------------------------
    def map_vram(self, offset: int, size: int, addr: int | None = None, flags: int = MAP_SHARED):
        """A CPU mapping of VRAM bytes [offset, offset + size) through BAR0 (at `addr` with MAP_FIXED)."""
        return self.os.mmap(self.bar_fds[0], size, PROT_READ | PROT_WRITE, flags, offset, addr)

    def rreg_dword(self, dword: int) -> int:
        """A read of the register at an absolute dword address (BAR5)."""
        return self.os.mmio_read(self.bars[5], dword * 4, 4)

    def wreg_dword(self, dword: int, value: int) -> None:
        """A write of the register at an absolute dword address (BAR5)."""
        self.os.mmio_write(self.bars[5], dword * 4, value & 0xFFFFFFFF, 4)

    def ring_doorbell(self, offset: int, value: int) -> None:
        """A 64-bit doorbell write at byte `offset` of BAR2."""
        self.os.mmio_write(self.bars[2], offset, value, 8)

    # ---- registers by name --------------------------------------------------------------------------------
    def discover(self) -> discovery.Discovery:
        """Read the IP discovery table 64 KiB below the top of VRAM; name the registers at its bases."""
        m = self.map_vram(self.vram_size - discovery.DISCOVERY_TMR_OFFSET, discovery.DISCOVERY_TMR_OFFSET)
        try:
            table = discovery.parse_table(bytes(m.view))
        finally:
            self.os.munmap(m)
        self.regs = RegisterMap(REGISTERS, discovery.block_bases(table.blocks))
        return table

    def rreg(self, name: str) -> int:
        """A register's value."""
        return self.rreg_dword(self.regs[name])

    def wreg(self, name: str, value: int) -> None:
        """Write a register."""
        self.wreg_dword(self.regs[name], value)

    def wreg64(self, lo: str, hi: str, value: int) -> None:
        """Write a 64-bit value as its LO/HI register pair."""
        self.wreg(lo, value & 0xFFFFFFFF)
        self.wreg(hi, value >> 32)

    def wreg_fields(self, name: str, **fields: int) -> None:
        """Write a register built from its declared fields (the others 0)."""
        self.wreg(name, REGISTERS[name].pack(**fields))

    def wait_reg(self, name: str, mask: int, value: int, what: str) -> int:
        """Poll a register until (reg & mask) == value; BringUpError naming it and `what` was awaited."""
        deadline = time.monotonic() + POLL_SECONDS
        while True:
            got = self.rreg(name)
            if got & mask == value:
                return got
            if time.monotonic() > deadline:
                raise BringUpError(f"{self.bdf}: {what}: {name} = {got:#010x}, waited for (& {mask:#x}) == "
                                   f"{value:#x}")

    def close(self) -> None:
        """Unmap the BARs and close the files."""
        for m in self.bars.values():
            self.os.munmap(m)
        for fd in (*self.bar_fds.values(), self.config_fd):
            self.os.close(fd)
