"""A USERPTR client under `simgpu run` (tests/wiring/test_run_userptr.py): the interposer moves a USERPTR range's
pages into a memfd mapped at the same address (mockgpu/csrc/preload.c, share), copying only the pages that may hold
data when the range is anonymous memory and the host has no swap (a never-touched page reads as zero and stays a
hole). Prints, as one JSON object per case, the pages resident after the ALLOC and whether the contents were kept.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import sys
import tempfile

from runtime.os import TOPOLOGY, HostOS
from runtime.uapi import kfd as F

PAGE = 4096
PAGES = 64
USERPTR = F.KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | F.KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)


def resident(addr: int, size: int) -> int:
    """Pages of [addr, addr + size) that mincore(2) reports resident."""
    vec = ctypes.create_string_buffer(size // PAGE)
    if _libc.mincore(addr, size, vec) != 0:
        raise OSError(ctypes.get_errno(), "mincore")
    return sum(b & 1 for b in vec.raw)


def stamp(m: mmap.mmap, page: int) -> None:
    m[page * PAGE:page * PAGE + 8] = page.to_bytes(8, "little")  # its page number: nonzero from page 1 on


def expected(pages: set[int], size: int = PAGES * PAGE) -> bytes:
    out = bytearray(size)
    for p in pages:
        out[p * PAGE:p * PAGE + 8] = p.to_bytes(8, "little")
    return bytes(out)


class Kfd:
    """/dev/kfd with a VM on GPU 0, and USERPTR allocations on it."""

    def __init__(self):
        self.os = HostOS()
        self.fd, drm = self.os.open("/dev/kfd"), self.os.open("/dev/dri/renderD128")
        self.gid = int(self.os.read_text(f"{TOPOLOGY}/nodes/1/gpu_id"))
        self.os.ioctl(self.fd, F.AMDKFD_IOC_ACQUIRE_VM, bytearray(bytes(
            F.kfd_ioctl_acquire_vm_args(drm_fd=drm, gpu_id=self.gid))))
        self.va = 1 << 32

    def userptr(self, addr: int, size: int) -> None:
        self.os.ioctl(self.fd, F.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, bytearray(bytes(F.kfd_ioctl_alloc_memory_of_gpu_args(
            va_addr=self.va, size=size, gpu_id=self.gid, flags=USERPTR, mmap_offset=addr))))
        self.va += size + (1 << 20)


def case(kfd: Kfd, m: mmap.mmap, pages: set[int]) -> dict:
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    kfd.userptr(addr, len(m))
    held = resident(addr, len(m))  # before the check below reads (and so faults in) every page
    return {"resident": held, "kept": m[:] == expected(pages, len(m))}


def main() -> None:
    kfd = Kfd()
    out = {}
    # Shared anonymous memory (tinygrad's host buffers): pages the program wrote, and one only a forked child wrote
    # (in shmem's page cache, not in this process's page tables).
    m = mmap.mmap(-1, PAGES * PAGE, mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    stamp(m, 3)
    stamp(m, 40)
    pid = os.fork()
    if pid == 0:
        stamp(m, 10)
        os._exit(0)
    os.waitpid(pid, 0)
    out["shared"] = case(kfd, m, {3, 10, 40})
    # Private anonymous memory.
    m = mmap.mmap(-1, PAGES * PAGE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    stamp(m, 1)
    out["private"] = case(kfd, m, {1})
    # A private mapping of a file: a page the program never touched holds the file's bytes, not zeros.
    with tempfile.TemporaryFile() as f:
        f.write(expected({5, 63}))
        f.flush()
        m = mmap.mmap(f.fileno(), PAGES * PAGE, mmap.MAP_PRIVATE)
        out["file"] = case(kfd, m, {5, 63})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
