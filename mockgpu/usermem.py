"""User memory as the driver reaches it: copy_from_user / copy_to_user of ioctl pointer arguments, and the pages
of a USERPTR buffer, which the CPU and the GPU share.

An address inside the driver's own bookkeeping of the process (mockgpu.addrspace: the mappings it handed out)
resolves there. Any other address is the caller's real memory and goes to the `foreign` backend, which checks it
against what the caller owns: `LocalProcess` for a caller in this process (the kernel checks each access of
process_vm_readv/writev, so a bad pointer is EFAULT, never a crash), the process-level server's view of a client
in another process, or a trace's record of what was read. Without a backend, foreign addresses are EFAULT.
"""

from __future__ import annotations

import ctypes
import errno
import os

import numpy as np

from mockgpu.addrspace import AddressSpace
from mockgpu.memory import PAGE, KfdError, page_align
from simgpu.mem import shared


class _IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


_libc = ctypes.CDLL(None, use_errno=True)
for _fn in ("process_vm_readv", "process_vm_writev"):
    getattr(_libc, _fn).restype = ctypes.c_ssize_t
    getattr(_libc, _fn).argtypes = (ctypes.c_int, ctypes.POINTER(_IOVec), ctypes.c_ulong, ctypes.POINTER(_IOVec),
                                    ctypes.c_ulong, ctypes.c_ulong)


# The end of user space (x86-64's TASK_SIZE_MAX with 5-level page tables): like the kernel's access_ok, a range that
# reaches past it is EFAULT before any memory is looked at -- a pointer of 2^63 or more, a length that wraps, or an
# address in the kernel half where a server keeps mappings of its own.
USER_END = (1 << 56) - PAGE


def _efault(addr: int, n: int) -> KfdError:
    return KfdError(errno.EFAULT, f"bad user address {addr:#x} (+{n:#x})")


class LocalProcess:
    """The memory of the calling process itself (a client of MockOS in the same process)."""

    def __init__(self):
        self.pid = os.getpid()

    def _xfer(self, fn, local: ctypes.Array, addr: int, n: int) -> None:
        liov, riov = _IOVec(ctypes.addressof(local), n), _IOVec(addr, n)
        if fn(self.pid, ctypes.byref(liov), 1, ctypes.byref(riov), 1, 0) != n:
            raise _efault(addr, n)

    def read(self, addr: int, n: int) -> bytes:
        """n bytes at addr (EFAULT unless all of them are mapped and readable)."""
        if n == 0:
            return b""
        buf = ctypes.create_string_buffer(n)
        self._xfer(_libc.process_vm_readv, buf, addr, n)
        return buf.raw

    def write(self, addr: int, data: bytes) -> None:
        """Store bytes at addr (EFAULT unless all of them are mapped and writable)."""
        if data:
            self._xfer(_libc.process_vm_writev, ctypes.create_string_buffer(bytes(data), len(data)), addr, len(data))

    def share(self, addr: int, size: int) -> np.ndarray:
        """USERPTR: put the pages [addr, addr + size) into shared memory, contents kept, so that the GPU and the
        CPU see one copy (the caller's pointer stays valid: the new pages are mapped at the same address)."""
        data = self.read(addr, size)  # EFAULT unless the caller owns the whole range
        mem = shared.SharedMemory(size, "simgpu-userptr")
        mem.array[:] = np.frombuffer(data, np.uint8)
        shared.mmap(addr, size, shared.PROT_READ | shared.PROT_WRITE, shared.MAP_SHARED | shared.MAP_FIXED, mem.fd)
        return mem.array


def access_ok(addr: int, n: int) -> None:
    """EFAULT unless [addr, addr + n) lies in user space (the kernel's access_ok, before copy_from_user)."""
    if n < 0 or addr < 0 or addr + n > USER_END:
        raise _efault(addr, n)


class UserMemory:
    """copy_from_user / copy_to_user / USERPTR pages for the emulated process: its mappings, then `foreign`. Every
    pointer argument of every ioctl comes through here, so access_ok is checked here, once."""

    def __init__(self, space: AddressSpace, foreign=None):
        self.space, self.foreign = space, foreign
        # USERPTR ranges moved into shared memory: address -> [size, live registrations]
        self._shared: dict[int, list[int]] = {}

    def _own(self, addr: int, n: int) -> list[np.ndarray] | None:
        """Views of the bytes when addr lies in a mapping the driver handed out (EFAULT if the range is not all
        accessible or not in user space); None when addr is foreign."""
        access_ok(addr, n)
        if self.space.area(addr) is None:
            return None
        pieces = self.space.pieces(addr, n)
        if pieces is None:
            raise _efault(addr, n)
        return pieces

    def _foreign(self, addr: int, n: int):
        if self.foreign is None or addr <= 0:
            raise _efault(addr, n)
        return self.foreign

    def read(self, addr: int, n: int) -> bytes:
        """copy_from_user."""
        pieces = self._own(addr, n)
        if pieces is not None:
            return b"".join(p.tobytes() for p in pieces)
        return self._foreign(addr, n).read(addr, n)

    def write(self, addr: int, data: bytes) -> None:
        """copy_to_user."""
        pieces = self._own(addr, len(data))
        if pieces is None:
            self._foreign(addr, len(data)).write(addr, data)
            return
        src = np.frombuffer(bytes(data), np.uint8)
        pos = 0
        for p in pieces:
            p[:] = src[pos:pos + p.size]
            pos += p.size

    def share(self, addr: int, size: int) -> np.ndarray:
        """The pages of a USERPTR buffer [addr, addr + size) as one array the GPU maps (page-aligned addr)."""
        if addr % PAGE or size <= 0:
            raise KfdError(errno.EFAULT, f"userptr {addr:#x} is not page-aligned")
        size = page_align(size)
        pieces = self._own(addr, size)
        if pieces is not None:
            if len(pieces) != 1:
                raise KfdError(errno.EFAULT, f"userptr {addr:#x}+{size:#x} spans several mappings")
            if addr in self._shared:
                self._shared[addr][1] += 1
            return pieces[0]
        pages = self._foreign(addr, size).share(addr, size)
        self.space.map(addr, size, pages)  # from now on the driver reaches these pages as the caller does
        self._shared[addr] = [size, 1]
        return pages

    def unshare(self, addr: int) -> None:
        """A USERPTR buffer at `addr` was freed. Once no buffer registers the pages share() moved, the driver
        forgets them: the caller may unmap them and map fresh pages there (tinygrad frees a host buffer and
        allocates the next at the same address), which a later USERPTR must share, not the old pages."""
        entry = self._shared.get(addr)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del self._shared[addr]
            self.space.unmap(addr, entry[0])
