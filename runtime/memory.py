"""Buffers: KFD allocations mapped on the GPU and into the CPU, and the GPU VA space of the process an OS
object drives."""

from __future__ import annotations

import weakref

import numpy as np

from runtime.os import MAP_ANONYMOUS, MAP_NORESERVE, MAP_PRIVATE, PROT_NONE

PAGE = 4096
VA_BASE = 0x1000_0000_0000  # where a process places buffers in the GPUVM aperture


class VASpace:
    """The GPU virtual addresses of one process: one range serves every device, so a buffer mapped on several
    GPUs has one address (what amdkfd requires of a BO mapped to many devices). Each range is first reserved in the
    process's CPU address space through the OS (PROT_NONE, no memory behind it), as libhsakmt and tinygrad do, so a
    CPU mapping of the buffer can be placed at the same address with MAP_FIXED: CPU address = GPU address."""

    def __init__(self, os_, base: int = VA_BASE):
        self.os, self.next = os_, base

    def reserve(self, size: int, align: int = PAGE):
        """A fresh range (never reused; a guard page follows it so overruns fault): (VA, its reservation Mapping,
        to munmap when the buffer goes). The OS places it at the address asked for when that is free (always on a
        MockOS, whose addresses depend only on the OS object's own history); otherwise the VA is an aligned part of
        a range the OS chose."""
        want = -(-self.next // align) * align
        flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
        m = self.os.mmap(-1, size + PAGE, PROT_NONE, flags, 0, want)
        va = m.addr
        if va != want:
            self.os.munmap(m)
            m = self.os.mmap(-1, size + align + PAGE, PROT_NONE, flags, 0)
            va = -(-m.addr // align) * align
        self.next = max(self.next, va + size + PAGE)
        return va, m


_SPACES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def va_space(os_) -> VASpace:
    """The VA space of the process `os_` drives: one per OS object, shared by every Device on it, so that
    addresses depend only on that OS object's own history (a second MockOS starts from VA_BASE again)."""
    space = _SPACES.get(os_)
    if space is None:
        space = _SPACES[os_] = VASpace(os_)
    return space


class Buffer:
    """GPU memory of one device: `.va`, `.nbytes`; copyin/copyout go through the device's SDMA queue."""

    def __init__(self, dev, va: int, nbytes: int, size: int, handle: int, host: bool, mapping=None, owner=None,
                 reservation=None):
        self.device, self.va, self.nbytes, self.size, self.handle = dev, va, nbytes, size, handle
        self.host, self.mapping, self.reservation = host, mapping, reservation
        self.mapped_on = list(owner or [])  # the Devices whose page tables map it (the owner, its peers)
        self.freed = False

    @property
    def view(self) -> memoryview:
        """The CPU mapping's bytes (runtime-internal buffers only)."""
        self._check()
        return self.mapping.view

    def _check(self) -> None:
        if self.freed:
            raise RuntimeError(f"buffer at {self.va:#x} used after free")

    def copyin(self, data, offset: int = 0) -> Buffer:
        """Copy bytes (or an array's bytes) into the buffer at `offset`, through SDMA; waits."""
        self._check()
        raw = memoryview(np.ascontiguousarray(data) if isinstance(data, np.ndarray) else data).cast("B")
        if offset < 0 or offset + raw.nbytes > self.nbytes:
            raise ValueError(f"copyin of {raw.nbytes} bytes at offset {offset} exceeds the {self.nbytes}-byte buffer")
        self.device.copy_from_host(self.va + offset, raw)
        return self

    def copyout(self, out: np.ndarray | None = None, offset: int = 0, nbytes: int | None = None):
        """Copy the buffer (from `offset`) into `out` (a contiguous array), through SDMA; returns `out`."""
        self._check()
        if out is None:
            out = np.empty(self.nbytes - offset if nbytes is None else nbytes, np.uint8)
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError("copyout needs a writable contiguous array")
        if offset < 0 or offset + out.nbytes > self.nbytes:
            raise ValueError(f"copyout of {out.nbytes} bytes at offset {offset} exceeds the {self.nbytes}-byte buffer")
        self.device.copy_to_host(memoryview(out.reshape(-1).view(np.uint8)), self.va + offset)
        return out

    def copy_to(self, dst: Buffer, nbytes: int | None = None) -> None:
        """Copy into another buffer, possibly on another device (through system memory)."""
        self._check()
        dst._check()
        n = min(self.nbytes, dst.nbytes) if nbytes is None else nbytes
        self.device.copy_between(dst, self, n)

    def free(self) -> None:
        """Release the memory; a second free raises."""
        if self.freed:
            raise RuntimeError(f"buffer at {self.va:#x} freed twice")
        self.release()

    def release(self) -> None:
        """Release the memory if it is still held (what Device.close does to every live buffer)."""
        if not self.freed:
            self.device.free(self)
            self.freed = True

    def __repr__(self) -> str:
        where = "host" if self.host else "vram"
        state = " freed" if self.freed else ""
        return f"<Buffer {where} {self.va:#x} {self.nbytes} bytes on {self.device.name}{state}>"
