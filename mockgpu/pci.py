"""The GPUs as PCI functions, the way a userspace (AM) driver finds and opens them, and the firmware files it loads.

Per GPU i, /sys/bus/pci/devices/0000:<03 + i>:00.0/ (the bus number the KFD topology's location_id names) holds
`vendor`, `device`, `class`, `revision`, `subsystem_vendor`, `subsystem_device`, `irq`, `resource` (text, through
read_text) and the files a driver opens: `config` (pread/pwrite the configuration space of simgpu.soc.pci), `enable`
("1"/"0": pci_enable_device), `resource0` (VRAM: mmap gives the GPU's VRAM at the offset asked for), `resource2`
(doorbells) and `resource5` (registers): MMIO through the seam's mmio_read/mmio_write, which reach the SOC
(simgpu.soc); a plain store into those mappings reaches nothing, as they have no memory behind them here.
/lib/firmware/amdgpu/<file> serves the gfx1100 firmware: the files of $SIMGPU_AM_FIRMWARE when it names a
directory (real linux-firmware files work), else simgpu.hw.ucode's synthetic set (valid headers, filler payloads).
"""

from __future__ import annotations

import errno
import functools
import os
from dataclasses import dataclass

from simgpu import settings
from simgpu.hw import ucode

PCI_DEVICES = "/sys/bus/pci/devices"
FIRMWARE_DIR = "/lib/firmware/amdgpu"
OPENABLE = ("config", "enable", "resource0", "resource2", "resource5")


def bus_id(index: int) -> str:
    """The PCI address of GPU `index` (domain 0, bus 3 + index, device 0, function 0)."""
    return f"0000:{3 + index:02x}:00.0"


def device_dir(index: int) -> str:
    """Its sysfs directory."""
    return f"{PCI_DEVICES}/{bus_id(index)}"


def sysfs(socs) -> dict[str, str]:
    """The text files of every GPU's PCI function (absolute path -> contents)."""
    files = {}
    for i, soc in enumerate(socs):
        p, d = soc.pci, device_dir(i)
        files.update({f"{d}/vendor": f"0x{p.config[0] | p.config[1] << 8:04x}\n",
                      f"{d}/device": f"0x{p.config[2] | p.config[3] << 8:04x}\n",
                      f"{d}/class": f"0x{int.from_bytes(p.config[9:12], 'little'):06x}\n",
                      f"{d}/revision": f"0x{p.config[8]:02x}\n",
                      f"{d}/subsystem_vendor": f"0x{int.from_bytes(p.config[0x2C:0x2E], 'little'):04x}\n",
                      f"{d}/subsystem_device": f"0x{int.from_bytes(p.config[0x2E:0x30], 'little'):04x}\n",
                      f"{d}/irq": f"{32 + i}\n", f"{d}/resource": p.resource()})
    return files


def openable(count: int) -> list[str]:
    """The paths a driver opens (config, enable, BARs) for `count` GPUs."""
    return [f"{device_dir(i)}/{name}" for i in range(count) for name in OPENABLE]


def parse(path: str) -> tuple[int, str] | None:
    """(GPU index, file name) of an openable PCI path, else None."""
    head, _, name = path.rpartition("/")
    if name not in OPENABLE or not head.startswith(PCI_DEVICES + "/"):
        return None
    bdf = head[len(PCI_DEVICES) + 1:]
    try:
        domain, bus, rest = bdf.split(":")
        index = int(bus, 16) - 3
    except ValueError:
        return None
    return (index, name) if bdf == bus_id(index) and index >= 0 else None


@dataclass
class FirmwareStore:
    """The firmware files of /lib/firmware/amdgpu."""

    directory: str | None = None  # a real directory to serve, else the synthetic set

    @classmethod
    def from_environment(cls) -> FirmwareStore:
        """$SIMGPU_AM_FIRMWARE's directory if set, else the synthetic set."""
        return cls(settings.get("SIMGPU_AM_FIRMWARE") or None)

    def names(self) -> list[str]:
        """The files it holds."""
        if self.directory:
            return sorted(n for n in os.listdir(self.directory) if n.endswith(".bin"))
        return sorted(_synthetic())

    def read(self, name: str) -> bytes:
        """A file's bytes (OSError ENOENT if absent)."""
        if self.directory:
            with open(os.path.join(self.directory, name), "rb") as f:
                return f.read()
        data = _synthetic().get(name)
        if data is None:
            raise OSError(errno.ENOENT, f"{FIRMWARE_DIR}/{name}: no such firmware file")
        return data


@functools.cache
def _synthetic() -> dict[str, bytes]:
    return ucode.synthetic_set()
