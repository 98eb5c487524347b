"""CPU mappings of GPU virtual addresses for clients of the remote-PCI path: host-visible memory at the address the
client uses.

tinygrad's AM driver gives a host-visible buffer (host=True, cpu_access=True) one virtual address for the GPU and the
CPU alike, and its tests store to it with plain CPU stores (ctypes.memset on va_addr). Over the remote-PCI transport
nothing is mapped at that address in the client: its driver only sends the allocation over the socket. So the
interposer of `simgpu run --am` (mockgpu/csrc/hostmem.c) catches the client's first touch of an unmapped page (its
SIGSEGV) and asks this service what the GPU has there: the service walks the GPUs' page tables (the truth of what the
GPU sees at that address) and answers with the shared-memory file and offset behind it -- a system-memory buffer of
MAP_SYSMEM, a GPU's VRAM (machine.devmem) -- which the interposer maps at that very address. From then on the CPU's
stores and the GPU's accesses reach the same bytes.

Protocol (AF_UNIX SOCK_SEQPACKET at `path`, one request per connection): the request is the faulting address (u64);
the reply is status (i64: 0, or -errno: EFAULT when no GPU maps the page), then the run to map -- start address,
length, file offset, PROT bits (u64 each) -- with the file's descriptor (SCM_RIGHTS). A run is at most MAX_RUN bytes
of pages that follow each other in one file, with the same permissions. Addresses in VMID 0's system aperture (VRAM
by physical address, no page table) are not served: a stray pointer there must still crash the client.

A mapping stays until the client exits: the GPU address of a host-visible buffer must keep its memory (tinygrad never
moves one), as the CPU mapping cannot follow a later remap.
"""

from __future__ import annotations

import errno
import mmap
import socket
import struct
import threading
from collections.abc import Callable

from mockgpu.seqpacket import SeqpacketService, send_handout
from simgpu.hw import gmc
from simgpu.mem.walker import SYS, R, W

REQUEST = struct.Struct("<Q")
REPLY = struct.Struct("<qQQQQ")
MAX_RUN = 2 << 20  # bytes mapped per fault: a large buffer costs a fault per 2 MiB, a small one maps whole
PAGE = 1 << gmc.PAGE_SHIFT

# (fd, file offset, bytes left in that file's run) behind a system physical address, or None
SystemBacking = Callable[[int], tuple[int, int, int] | None]
# For a file `system` named: a new descriptor of it to send (closed here once sent), or None to send that one
Handout = Callable[[int], int | None]


class HostMapService(SeqpacketService):
    """Answers the interposer's page faults for `machine`'s GPUs (a MockOS). `system(pa)` locates system memory;
    `handout(fd)` gives the descriptor to send for memory whose lifetime follows the clients' mappings
    (mockgpu.localpci); `lock` is the simulator's (page tables are read under it)."""

    def __init__(self, machine, path: str, system: SystemBacking, lock: threading.Lock, handout: Handout | None = None):
        super().__init__(path)
        self.machine, self.system, self.lock, self.handout = machine, system, lock, handout

    def serve_connection(self, conn: socket.socket) -> None:
        with conn:
            try:
                self._serve(conn)
            except OSError as e:
                self.errors.append(f"host mapping: {e}")

    def _serve(self, conn: socket.socket) -> None:
        data = conn.recv(64)
        if len(data) != REQUEST.size:
            conn.send(REPLY.pack(-errno.EINVAL, 0, 0, 0, 0))
            return
        (va,) = REQUEST.unpack(data)
        with self.lock:
            run = self.resolve(va)
            if run is not None and self.handout is not None:
                # memory whose lifetime follows the clients' mappings: a descriptor of its own, sent and ours closed
                # under the lock, as a collect of unmapped blocks (mockgpu.localpci) runs under it too
                own = self.handout(run[2])
                if own is not None:
                    start, length, _, offset, prot = run
                    send_handout(conn, REPLY.pack(0, start, length, offset, prot), [own])
                    return
        if run is None:
            conn.send(REPLY.pack(-errno.EFAULT, 0, 0, 0, 0))
            return
        start, length, fd, offset, prot = run
        socket.send_fds(conn, [REPLY.pack(0, start, length, offset, prot)], [fd])

    # ---- resolution -------------------------------------------------------------------------------------
    def resolve(self, va: int) -> tuple[int, int, int, int, int] | None:
        """(start, length, fd, file offset, prot) of the run the client maps for a fault at `va`, else None."""
        page = va & ~(PAGE - 1)
        for i, gpu in enumerate(self.machine.gpus):
            for vmid in range(gmc.NUM_VMIDS):
                first = self._page(i, gpu.mmu, vmid, page)
                if first is not None:
                    return self._extend(i, gpu.mmu, vmid, page, first)
        return None

    def _page(self, i: int, mmu, vmid: int, va: int) -> tuple[int, int, int] | None:
        """(fd, file offset, prot) behind page `va` of GPU i's VMID, if its page table maps it readably."""
        if vmid == 0 and mmu.system_aperture is not None:
            low, high, _ = mmu.system_aperture
            if low <= va <= high:
                return None
        leaf = mmu.walk(vmid, va)
        if isinstance(leaf, str) or not leaf.bits & R:
            return None
        pa = (leaf.pa_page + ((va >> gmc.PAGE_SHIFT) - leaf.va_page)) << gmc.PAGE_SHIFT
        prot = mmap.PROT_READ | (mmap.PROT_WRITE if leaf.bits & W else 0)
        if leaf.bits & SYS:
            found = self.system(pa)
            return None if found is None else (found[0], found[1], prot)
        if pa + PAGE > self.machine.gpus[i].phys.vram_size:
            return None
        return self.machine.devmem.fd, self.machine.devmem.vram_offset(i) + pa, prot

    def _extend(self, i: int, mmu, vmid: int, va: int, first: tuple[int, int, int]):
        """The run from page `va` on while the next pages follow it in the same file with the same permissions."""
        fd, offset, prot = first
        length = PAGE
        while length < MAX_RUN:
            nxt = self._page(i, mmu, vmid, va + length)
            if nxt != (fd, offset + length, prot):
                break
            length += PAGE
        return va, length, fd, offset, prot

