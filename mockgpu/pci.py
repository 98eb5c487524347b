"""The GPUs as PCI functions, the way a userspace (AM) driver finds and opens them, and the firmware files it loads.

Per GPU i, /sys/bus/pci/devices/<domain>:<03 + i>:00.0/ (the bus number the KFD topology's location_id names; domain
0 in-process, a domain of the run's own under `simgpu run --am`: claim_domain) holds
`vendor`, `device`, `class`, `revision`, `subsystem_vendor`, `subsystem_device`, `irq`, `resource` (text, through
read_text) and the files a driver opens: `config` (pread/pwrite the configuration space of simgpu.soc.pci), `enable`
("1"/"0": pci_enable_device), `resource0` (VRAM: mmap gives the GPU's VRAM at the offset asked for), `resource2`
(doorbells) and `resource5` (registers): MMIO through the seam's mmio_read/mmio_write, which reach the SOC
(simgpu.soc); a plain store into those mappings reaches nothing, as they have no memory behind them here.
/lib/firmware/amdgpu/<file> serves the gfx1100, gfx1201, gfx942 and gfx950 firmware: the files of $SIMGPU_AM_FIRMWARE
when it names a directory (real linux-firmware files work), else simgpu.hw.ucode's synthetic set (valid headers,
filler payloads).
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import stat
import tempfile
from dataclasses import dataclass

from simgpu import settings
from simgpu.hw import ucode

PCI_DEVICES = "/sys/bus/pci/devices"
FIRMWARE_DIR = "/lib/firmware/amdgpu"
OPENABLE = ("config", "enable", "resource0", "resource2", "resource5")


def bus_id(index: int, domain: int = 0) -> str:
    """The PCI address of GPU `index` (bus 3 + index, device 0, function 0 of `domain`)."""
    return f"{domain:04x}:{3 + index:02x}:00.0"


def device_dir(index: int, domain: int = 0) -> str:
    """Its sysfs directory."""
    return f"{PCI_DEVICES}/{bus_id(index, domain)}"


def sysfs(socs, domain: int = 0) -> dict[str, str]:
    """The text files of every GPU's PCI function (absolute path -> contents)."""
    files = {}
    for i, soc in enumerate(socs):
        p, d = soc.pci, device_dir(i, domain)
        files.update({f"{d}/vendor": f"0x{p.config[0] | p.config[1] << 8:04x}\n",
                      f"{d}/device": f"0x{p.config[2] | p.config[3] << 8:04x}\n",
                      f"{d}/class": f"0x{int.from_bytes(p.config[9:12], 'little'):06x}\n",
                      f"{d}/revision": f"0x{p.config[8]:02x}\n",
                      f"{d}/subsystem_vendor": f"0x{int.from_bytes(p.config[0x2C:0x2E], 'little'):04x}\n",
                      f"{d}/subsystem_device": f"0x{int.from_bytes(p.config[0x2E:0x30], 'little'):04x}\n",
                      f"{d}/irq": f"{32 + i}\n", f"{d}/resource": p.resource()})
    return files


def openable(count: int, domain: int = 0) -> list[str]:
    """The paths a driver opens (config, enable, BARs) for `count` GPUs."""
    return [f"{device_dir(i, domain)}/{name}" for i in range(count) for name in OPENABLE]


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


# ---- a PCI domain of the run's own -------------------------------------------------------------------------------
# A userspace driver keys its device lock by the bus address: tinygrad's PCIDevice holds an flock on
# $TMPDIR/am_<domain:bus:dev.fn>.lock for as long as it drives the device and refuses a device whose lock is taken.
# Two `simgpu run --am` at once (pytest-xdist workers) that presented the same addresses would refuse each other's
# GPUs, so each run presents its GPUs in a PCI domain no concurrent run uses. The domain is allocated by an flock
# of our own, held for the run's life, on <tempdir>/simgpu-pci-domain-<DDDD>.lock: the same temporary directory the
# program's driver resolves (the program inherits TMPDIR), so two runs whose drivers could meet on a lock file also
# meet here. Domains start at 0x100, clear of the low domains a real multi-socket host numbers its devices in, so a
# simgpu run beside tinygrad on a real GPU does not take the real GPU's lock file either.
FIRST_DOMAIN, LAST_DOMAIN = 0x100, 0xFFFF
DOMAIN_LOCK = "simgpu-pci-domain-{:04x}.lock"


class DomainError(RuntimeError):
    """Every PCI domain is held by another run (or cannot be locked)."""


@dataclass
class DomainClaim:
    """PCI domain `number`, held while `fd` (an flock on its lock file) is open."""

    number: int
    fd: int

    def release(self) -> None:
        """Give the domain back (closing the descriptor drops the flock)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _lock_file(path: str) -> int | None:
    """An open descriptor of the regular file at `path`, created if absent; None when it cannot be one of ours to
    lock (a symlink, a FIFO or a device planted there, a file another user keeps unreadable)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a planted FIFO must not hang us
    for _ in range(3):
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            try:  # O_EXCL: in a sticky /tmp, O_CREAT on another user's existing file is refused (protected_regular)
                fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                continue  # another run created it between the two opens: open it as it is
            except OSError:
                return None
        except OSError:
            return None
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)
        return None
    return None


def claim_domain(directory: str | None = None, first: int = FIRST_DOMAIN, last: int = LAST_DOMAIN) -> DomainClaim:
    """The lowest PCI domain in [first, last] no other run holds, held until released (or this process exits).
    `directory`: where the lock files live (default: the temporary directory, tempfile.gettempdir())."""
    directory = directory or tempfile.gettempdir()
    for number in range(first, last + 1):
        fd = _lock_file(os.path.join(directory, DOMAIN_LOCK.format(number)))
        if fd is None:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return DomainClaim(number, fd)
    raise DomainError(f"no free PCI domain in [{first:#06x}, {last:#06x}]: every lock file "
                      f"{os.path.join(directory, DOMAIN_LOCK.format(first))} ... is held by another run or unusable")


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
