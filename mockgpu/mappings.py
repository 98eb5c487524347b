"""mmap of the mock driver's files and of anonymous memory: where each mapping goes in the caller's address space
(mockgpu.addrspace; placed for real over a range the caller reserved, when MockOS(place=True)), and which bytes stand
behind it: a GPU's doorbell or MMIO remap page (/dev/kfd), a buffer object (the render node), VRAM (BAR0), or none
(BAR2/BAR5: MMIO, reached through mmio_read/mmio_write)."""

from __future__ import annotations

import errno

import numpy as np

from mockgpu.addrspace import AddressSpace
from mockgpu.devfiles import DeviceFiles, File
from mockgpu.devmem import DOORBELL_PAGE, MMIO_AREA, MMIO_PAGE, DeviceMemory
from mockgpu.kfd_memory import KfdMemory
from mockgpu.kfd_node import Node
from mockgpu.memory import PAGE, page_align
from runtime.os import MAP_ANONYMOUS, MAP_FIXED, MAP_SHARED, PROT_NONE, Mapping
from simgpu.mem import shared
from simgpu.soc import SOC


class Mappings:
    """The mappings of one MockOS (module docstring)."""

    def __init__(self, files: DeviceFiles, space: AddressSpace, devmem: DeviceMemory, memory: KfdMemory,
                 nodes: list[Node], socs: list[SOC], place: bool):
        self.files, self.space, self.devmem, self.memory = files, space, devmem, memory
        self.nodes, self.socs, self.place = nodes, socs, place
        self._placed: dict[int, int] = {}  # real placements: address -> length

    def mmap(self, fd: int, length: int, prot: int, flags: int, offset: int = 0, addr: int | None = None) -> Mapping:
        if length <= 0 or offset % PAGE or (flags & MAP_FIXED and (not addr or addr % PAGE)):
            raise OSError(errno.EINVAL, f"mmap of {length} bytes at offset {offset:#x}, address {addr or 0:#x}")
        if fd == -1 and flags & MAP_ANONYMOUS:
            buf = None if prot == PROT_NONE else np.zeros(page_align(length), np.uint8)  # zeroed, lazily committed
            a = self._place(length, addr, flags, buf, None, prot)
            return Mapping(a, memoryview(buf)[:length] if buf is not None else memoryview(b""), length, -1, 0,
                           ("anon", a))
        f = self.files.get(fd)
        if f is None:
            raise OSError(errno.EBADF, f"fd {fd} is not open")
        file_offset, arr, handle = self._file_region(f, length, offset)
        a = self._place(length, addr, flags, arr if arr.size else None, file_offset, prot)
        return Mapping(a, memoryview(arr)[:length], length, fd, offset, handle)

    def check_mmap(self, fd: int, length: int, offset: int) -> None:
        """OSError(errno) unless an mmap of fd at offset would succeed (the process-level server asks first)."""
        f = self.files.get(fd)
        if f is None:
            raise OSError(errno.EBADF, f"fd {fd} is not open")
        if length <= 0 or offset % PAGE:
            raise OSError(errno.EINVAL, f"mmap of {length} bytes at offset {offset:#x}")
        self._file_region(f, length, offset)

    def _place(self, length: int, addr: int | None, flags: int, buf, file_offset: int | None, prot: int) -> int:
        """The address of a new mapping in the caller's address space (see MockOS.__init__ on `place`)."""
        if not flags & MAP_FIXED:
            addr = self.space.choose(length, addr)
        elif self.place and file_offset is not None and self.space.area(addr) is None \
                and shared.is_mapped(addr, length):
            shared.mmap(addr, page_align(length), prot, MAP_SHARED | MAP_FIXED, self.devmem.fd, file_offset)
            self._placed[addr] = page_align(length)
        self.space.map(addr, length, buf)
        return addr

    def _node_of_offset(self, offset: int) -> Node | None:
        i = offset // DOORBELL_PAGE if offset < MMIO_AREA else (offset - MMIO_AREA) // MMIO_PAGE
        return self.nodes[i] if i < len(self.nodes) else None

    def _file_region(self, f: File, length: int, offset: int):
        """(offset in the device memory file, its bytes, mapping handle) of an mmap of a device file."""
        if f.kind == "pci":
            return self._bar_region(f, length, offset)
        if f.kind == "firmware":
            raise OSError(errno.ENODEV, f"{f.path}: firmware files are read, not mapped")
        if f.kind == "kfd":
            node = self._node_of_offset(offset)
            page = DOORBELL_PAGE if offset < MMIO_AREA else MMIO_PAGE
            if node is None or offset % page + length > page:
                raise OSError(errno.EINVAL, f"/dev/kfd mmap offset {offset:#x} (+{length:#x}) is not a doorbell "
                                            "or MMIO remap page")
            kind = "doorbell" if offset < MMIO_AREA else "mmio"
            return offset, self.devmem.span(offset, length), (kind, node)
        al = next((al for al in self.memory.allocs.values()
                   if al.mmap_offset == offset and al.kind in ("vram", "gtt") and al.node == f.node.index), None)
        if al is None or length > page_align(al.size):
            raise OSError(errno.EINVAL, f"render node mmap offset {offset:#x} (+{length:#x}) names no buffer")
        self.memory.host_mapped(al)
        arr = self.nodes[al.node].gpu.phys.vram[al.pa:al.pa + length] if al.kind == "vram" else al.buf[:length]
        return al.file_offset, arr, ("bo", offset)

    def _bar_region(self, f: File, length: int, offset: int):
        """A BAR mapping: VRAM for BAR0 (its pages in the device-memory file); BAR2/BAR5 are MMIO, reached only
        through mmio_read/mmio_write (no bytes behind them)."""
        soc = self.socs[f.node.index]
        if f.name not in ("resource0", "resource2", "resource5"):
            raise OSError(errno.ENODEV, f"{f.path} cannot be mapped")
        bar = soc.pci.bars[int(f.name[-1])]
        if offset + length > bar.size:
            raise OSError(errno.EINVAL, f"{f.path}: [{offset:#x}, +{length:#x}) exceeds the {bar.size:#x}-byte BAR")
        if bar.index == 0:
            vram = f.node.gpu.phys.vram
            if offset + length > vram.size:
                raise OSError(errno.EINVAL, f"{f.path}: [{offset:#x}, +{length:#x}) is past the end of VRAM")
            return self.devmem.vram_offset(f.node.index) + offset, vram[offset:offset + length], ("vram", f.node)
        return None, np.zeros(0, np.uint8), (f"bar{bar.index}", f.node)

    def munmap(self, mapping: Mapping) -> None:
        self.space.unmap(mapping.addr, mapping.length)
        placed = self._placed.pop(mapping.addr, None)
        if placed is not None:
            shared.munmap(mapping.addr, placed)
        mapping.view = memoryview(b"")
