"""Host memory the simulator shares with CPU clients: an anonymous shared-memory file (memfd) and mappings of it.

A `SharedMemory` is a sparse memfd of a fixed size, mapped once into this process as a numpy uint8 array. Pages
are committed on first touch (shmem files are created with VM_NORESERVE, so even a huge VRAM costs nothing until
used) and `clear` gives pages back. Any process that holds the file descriptor can map a range of it and sees
the same bytes: that is how a client's plain CPU stores reach the simulated GPU, in this process or another.

Mappings are made with libc's mmap through ctypes rather than Python's mmap module: that module cannot place a
mapping at a chosen address (MAP_FIXED), and it duplicates the descriptor of every mapping it makes. A mapping
is unmapped when the last object viewing it (numpy array, memoryview) is gone.
"""

from __future__ import annotations

import ctypes
import errno
import os
import weakref

import numpy as np

PROT_NONE, PROT_READ, PROT_WRITE = 0, 1, 2
MAP_SHARED, MAP_PRIVATE, MAP_FIXED, MAP_ANONYMOUS, MAP_NORESERVE = 0x01, 0x02, 0x10, 0x20, 0x4000
MAP_FIXED_NOREPLACE = 0x100000
_FALLOC_FL_KEEP_SIZE, _FALLOC_FL_PUNCH_HOLE = 0x01, 0x02
_MAP_FAILED = ctypes.c_void_p(-1).value

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_libc.fallocate.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long)
_libc.msync.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def mmap(addr: int | None, length: int, prot: int, flags: int, fd: int = -1, offset: int = 0) -> int:
    """libc mmap: the address of the new mapping, or OSError(errno)."""
    got = _libc.mmap(addr or None, length, prot, flags, fd, offset)
    if got is None or got == _MAP_FAILED:
        e = ctypes.get_errno()
        raise OSError(e, f"mmap of {length:#x} bytes at {addr or 0:#x} (fd {fd}, offset {offset:#x}): "
                         f"{os.strerror(e)}")
    return got


def munmap(addr: int, length: int) -> None:
    """libc munmap."""
    if _libc.munmap(addr, length):
        e = ctypes.get_errno()
        raise OSError(e, f"munmap of {length:#x} bytes at {addr:#x}: {os.strerror(e)}")


def is_mapped(addr: int, length: int) -> bool:
    """Whether every page of [addr, addr + length) is mapped in this process (msync answers ENOMEM otherwise)."""
    start = addr & ~0xFFF
    return _libc.msync(start, addr + length - start, 1) == 0  # MS_ASYNC: no writeback, only the range check


def view(addr: int, length: int, owner: bool = True) -> np.ndarray:
    """The bytes [addr, addr + length) of this process as a writable numpy array; with `owner`, the range is
    unmapped when the last view of it is gone."""
    arr = (ctypes.c_uint8 * length).from_address(addr)
    if owner:
        # (not at interpreter exit: the process's exit unmaps everything at once, and a simgpu server holds ~70
        # mappings of its machines' device memory then, which weakref's exit hook unmapped one by one)
        weakref.finalize(arr, _libc.munmap, addr, length).atexit = False
    return np.frombuffer(arr, np.uint8)


class SharedMemory:
    """A sparse shared-memory file of `size` bytes; `fd` maps it anywhere. With `mapped`, all of it is mapped here
    as `array` (numpy uint8); otherwise `map(offset, size)` maps the windows that are needed."""

    def __init__(self, size: int, name: str = "simgpu", mapped: bool = True):
        self.size = size
        self.fd = os.memfd_create(name, os.MFD_CLOEXEC)
        self._finalizer = weakref.finalize(self, os.close, self.fd)
        self._finalizer.atexit = False  # (the process's exit closes it)
        os.ftruncate(self.fd, size)
        self.array = self.map(0, size) if mapped else None

    def map(self, offset: int, size: int) -> np.ndarray:
        """[offset, offset + size) of the file mapped here (shared, lazily committed) as a numpy uint8 array."""
        return view(mmap(None, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, self.fd, offset), size)

    def clear(self, offset: int, length: int) -> None:
        """Zero [offset, offset + length): whole pages go back to the system (a hole reads as zeros)."""
        if length <= 0:
            return
        if _libc.fallocate(self.fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, offset, length):
            if ctypes.get_errno() not in (errno.EOPNOTSUPP, errno.ENOSYS):
                raise OSError(ctypes.get_errno(), "fallocate(PUNCH_HOLE) on a memfd")
            self.map(offset, length)[:] = 0  # a kernel without hole punching on shmem: write zeros

    def close(self) -> None:
        """Close the descriptor now (the mapping lives on while views of it do)."""
        self._finalizer()
