"""The files of the mock driver and its sysfs: /dev/kfd, the DRM render nodes, each GPU's PCI function files
(config space, enable, the BARs' resource files) and the firmware files, opened as file descriptors; the sysfs
tree's text and directory listings (mockgpu.topology, mockgpu.pci). Reads and writes of config space and `enable`
reach the GPU's PCI function (simgpu.soc)."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from mockgpu import pci, topology
from mockgpu.kfd_node import Node
from simgpu.soc import SOC


@dataclass
class File:
    """An open file of the mock: /dev/kfd, a render node, a PCI function's file or a firmware file."""

    kind: str  # "kfd", "render", "pci" or "firmware"
    path: str
    node: Node | None = None
    name: str = ""  # pci: "config", "enable", "resource0/2/5"; firmware: the file name


class DeviceFiles:
    """The open files of one MockOS by fd, and the paths it has (module docstring)."""

    def __init__(self, nodes: list[Node], socs: list[SOC], firmware: pci.FirmwareStore, sysfs: dict[str, str]):
        self.nodes, self.socs, self.firmware, self.sysfs = nodes, socs, firmware, sysfs
        self.open_files: dict[int, File] = {}
        self._next_fd = 100
        self.devices = {"/dev/kfd": None} | {f"/dev/dri/renderD{128 + i}": nd for i, nd in enumerate(self.nodes)}
        firmware_files = [f"{pci.FIRMWARE_DIR}/{name}" for name in self.firmware.names()]
        self.dirs = topology.listing(self.sysfs, list(self.devices) + pci.openable(len(nodes)) + firmware_files)

    def get(self, fd: int) -> File | None:
        """The open file of fd (None if fd is not open)."""
        return self.open_files.get(fd)

    def open(self, path: str, flags: int = os.O_RDWR) -> int:
        if path in self.devices:
            f = File("kfd" if path == "/dev/kfd" else "render", path, self.devices[path])
        elif (where := pci.parse(path)) is not None and where[0] < len(self.nodes):
            f = File("pci", path, self.nodes[where[0]], where[1])
        elif path.rpartition("/")[0] == pci.FIRMWARE_DIR and path.rpartition("/")[2] in self.firmware.names():
            f = File("firmware", path, None, path.rpartition("/")[2])
        else:
            raise OSError(errno.ENOENT, f"{path}: no such device or file", path)
        fd = self._next_fd
        self._next_fd += 1
        self.open_files[fd] = f
        return fd

    def pread(self, fd: int, length: int, offset: int) -> bytes:
        f = self._file(fd)
        if length < 0 or offset < 0:
            raise OSError(errno.EINVAL, f"pread of {length} bytes at {offset}")
        if f.kind == "firmware":
            return self.firmware.read(f.name)[offset:offset + length]
        soc = self._soc(f, ("config", "enable"))
        if f.name == "config":
            return soc.pci.read(offset, length)
        return (b"1\n" if soc.pci.enabled else b"0\n")[offset:offset + length]

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        f = self._file(fd)
        soc = self._soc(f, ("config", "enable"))
        if f.name == "config":
            return soc.pci.write(offset, bytes(data))
        try:
            soc.pci.enable(bool(int(bytes(data).strip() or b"0")))
        except ValueError:
            raise OSError(errno.EINVAL, f"{f.path}: write '0' or '1'") from None
        return len(data)

    def _file(self, fd: int) -> File:
        f = self.open_files.get(fd)
        if f is None:
            raise OSError(errno.EBADF, f"fd {fd} is not open")
        return f

    def _soc(self, f: File, names: tuple[str, ...]) -> SOC:
        if f.kind != "pci" or f.name not in names:
            raise OSError(errno.EINVAL, f"{f.path}: not a file this call applies to")
        return self.socs[f.node.index]

    def close(self, fd: int) -> None:
        if self.open_files.pop(fd, None) is None:
            raise OSError(errno.EBADF, f"fd {fd} is not open")

    def read_text(self, path: str) -> str:
        if path not in self.sysfs:
            raise OSError(errno.ENOENT, f"{path}: no such file", path)
        return self.sysfs[path]

    def listdir(self, path: str) -> list[str]:
        path = path.rstrip("/") or "/"
        if path not in self.dirs:
            raise OSError(errno.ENOENT, f"{path}: no such directory", path)
        return sorted(self.dirs[path])

    def exists(self, path: str) -> bool:
        path = path.rstrip("/") or "/"
        return path in self.sysfs or path in self.dirs or path in self.devices
