"""The run's GPUs as LOCAL PCI functions (`simgpu run --am`, the default): the service the interposer's local-PCI part
(mockgpu/csrc/localpci.c) asks for what a userspace driver's plain loads, stores and file reads need.

Protocol (AF_UNIX SOCK_SEQPACKET at `path`, a connection per client thread): a request is op, gpu, bar, offset, size,
value (u64 each) and, for CFG_WRITE, the bytes; a reply is status (i64: 0 or -errno), value, offset, length (u64),
then a CFG_READ's bytes, with a descriptor for MAP_VRAM and SYSMEM.

    READ/WRITE   a 4- or 8-byte access of BAR5 (registers) or BAR2 (doorbells) at `offset`; READ answers `value`
    MAP_VRAM     the device-memory file and the file offset of BAR0 `offset` (`size` bytes, inside the VRAM)
    CFG_READ/CFG_WRITE  configuration space
    SYSMEM       `size` bytes of new system memory the GPUs reach at physical address `value` (a memfd named
                 "simgpu-host:<address>", which the client maps over its own pages: /proc/self/pagemap's answer);
                 the request's `value` 1 says the pages were private ("simgpu-host:<address>:private": a forked
                 child copies them back into private memory), 0 shared

The device is the remote-PCI server's (mockgpu.remote_pci): the same SOCs, lock and system memory, so the host-mapping
service still resolves every system address.

System memory lives as long as the client's pages do, as the kernel frees a page when its last mapping goes: a driver
frees it by unmapping it (tinygrad's PCIIfaceBase.free munmaps a host buffer; a CPU-device buffer's mmap object
unmaps when collected), a process by exiting. munmap through ctypes reaches no interposer, so the service learns of it
from the kernel instead: every descriptor it hands out for a block (the SYSMEM reply; the host-mapping service's
replies) is a new open file description holding a shared flock, and a mapping keeps its file description -- and so
the lock -- alive after the descriptor is closed (forked children's copies too). When the service's own descriptor
can take the lock exclusively, no client maps the block any more: it is unregistered from every GPU and its pages
are given back. Blocks are collected before each new SYSMEM, so memory a program allocates and frees in a loop stays
bounded. Physical addresses are never reused: a GPU page table that still points at a freed block (tinygrad leaves a
host buffer's GPU mapping in place) faults there rather than reaching another buffer's pages.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket

from mockgpu.localpci_wire import CFG_READ, CFG_WRITE, MAP_VRAM, READ, REPLY, REQUEST, SYSMEM, WRITE
from mockgpu.seqpacket import SeqpacketService, send_handout
from simgpu.mem.shared import SharedMemory
from simgpu.soc import MMIOError
from simgpu.soc.pci import PEER_BAR_BASE

__all__ = ["CFG_READ", "CFG_WRITE", "MAP_VRAM", "READ", "REPLY", "REQUEST", "SYSMEM", "WRITE", "LocalPCIService"]
PAGE = 4096


class HostBlock:
    """System memory of `size` bytes at physical address `pa` that clients map (the pages of a pagemap answer)."""

    def __init__(self, pa: int, size: int, private: bool = False):
        self.pa, self.size = pa, size
        # the service's own mapping: what the GPUs reach. The name is what the client's /proc/self/maps shows: the
        # address answers later pagemap reads, the tag tells a forked child which blocks to copy (localpci.c)
        self.mem = SharedMemory(size, f"simgpu-host:{pa:x}{':private' if private else ''}")

    def handout(self) -> int:
        """A new descriptor of the block for a client, holding a shared flock for as long as the client keeps its
        file description -- open, in flight in a message, or behind a mapping (the caller closes its copy)."""
        fd = os.open(f"/proc/self/fd/{self.mem.fd}", os.O_RDWR | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        except OSError:
            os.close(fd)
            raise
        return fd

    def released(self) -> bool:
        """Whether no client holds the block any more (every descriptor handed out is closed and unmapped)."""
        try:
            fcntl.flock(self.mem.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(self.mem.fd, fcntl.LOCK_UN)
        return True


class LocalPCIService(SeqpacketService):
    """Serves the local-PCI requests of a run's clients for `remote` (a RemotePCIServer) at `path`."""

    def __init__(self, remote, path: str, domain=None):
        super().__init__(path)
        self.remote = remote
        self.domain = domain  # the run's PCI domain (mockgpu.pci.DomainClaim), given back by close
        self.blocks: dict[int, HostBlock] = {}  # physical address -> the system memory clients map there

    def backing(self, pa: int) -> HostBlock | None:
        """The block holding system physical address `pa`, if one is live."""
        for block in self.blocks.values():
            if block.pa <= pa < block.pa + block.size:
                return block
        return None

    def collect(self) -> int:
        """Free the blocks no client maps any more (under the simulator's lock); how many bytes were freed."""
        freed = 0
        for pa, block in list(self.blocks.items()):
            if block.released():
                del self.blocks[pa]
                for soc in self.remote.machine.socs:
                    soc.gpu.phys.remove_system(pa)
                block.mem.close()  # its pages go once the last view of the mapping does
                freed += block.size
        return freed

    def close(self) -> None:
        super().close()
        if self.domain is not None:
            self.domain.release()

    def serve_connection(self, conn: socket.socket) -> None:
        with conn:
            while True:
                try:
                    data = conn.recv(REQUEST.size + 4096)
                except OSError:
                    return
                if len(data) < REQUEST.size:
                    return
                op, gpu, bar, offset, size, value = REQUEST.unpack_from(data)
                fds: list[int] = []
                with self.remote.lock:
                    try:
                        reply, fds, owned = self._handle(op, gpu, bar, offset, size, value, data[REQUEST.size:])
                    except Exception as e:  # noqa: BLE001 - a bad request is answered, never ends the service
                        if not isinstance(e, (MMIOError, OSError, ValueError, IndexError, KeyError, OverflowError)):
                            e = RuntimeError(f"{type(e).__name__}: {e}")
                        self.errors.append(f"local PCI op {op} gpu {gpu} BAR{bar} offset {offset:#x}: {e}")
                        self.remote.errors.append(self.errors[-1])
                        reply, owned = REPLY.pack(-errno.EINVAL, 0, 0, 0), False
                    if owned:  # a block's new descriptor: sent, and our copy closed, before a collect can look
                        sent = send_handout(conn, reply, fds)
                if owned:
                    if not sent:
                        return
                    continue
                try:
                    socket.send_fds(conn, [reply], fds) if fds else conn.send(reply)
                except OSError:
                    return

    def _handle(self, op, gpu, bar, offset, size, value, payload) -> tuple[bytes, list[int], bool]:
        remote = self.remote
        if op == SYSMEM:
            return self._sysmem(size, value)
        soc = remote.machine.socs[gpu]
        if op in (READ, WRITE):
            if bar not in (2, 5) or size not in (4, 8) or offset % size:
                raise ValueError(f"BAR{bar} access of {size} bytes at {offset:#x}: registers and doorbells take "
                                 "aligned 4- or 8-byte accesses")
            if op == WRITE:
                remote._bar_write(soc, bar, offset, value.to_bytes(size, "little"))
                return REPLY.pack(0, 0, 0, 0), [], False
            remote._progress()
            return REPLY.pack(0, int.from_bytes(remote._bar_read(soc, bar, offset, size), "little"), 0, 0), [], False
        if op == MAP_VRAM:
            vram = remote.machine.gpus[gpu].phys.vram_size
            if offset + size > vram:
                raise ValueError(f"BAR0 [{offset:#x}, +{size:#x}) is past the {vram:#x} bytes of VRAM")
            devmem = remote.machine.devmem
            return REPLY.pack(0, 0, devmem.vram_offset(gpu) + offset, size), [devmem.fd], False
        if op == CFG_READ:
            data = soc.pci.read(offset, size)
            return REPLY.pack(0, 0, 0, len(data)) + data, [], False
        if op == CFG_WRITE:
            return REPLY.pack(0, soc.pci.write(offset, payload[:size]), 0, 0), [], False
        raise ValueError(f"unknown local-PCI op {op}")

    def _sysmem(self, size: int, private: int) -> tuple[bytes, list[int], bool]:
        remote = self.remote
        if private not in (0, 1):
            raise ValueError(f"SYSMEM's value is 0 (shared pages) or 1 (private pages), not {private}")
        self.collect()  # what the clients unmapped since the last request, before more is handed out
        size = -(-size // PAGE) * PAGE
        if not size or remote.next_pa + size > PEER_BAR_BASE:
            raise ValueError(f"no system address left for {size:#x} bytes")
        pa = remote.next_pa
        block = HostBlock(pa, size, bool(private))
        remote.next_pa += size + PAGE
        for soc in remote.machine.socs:
            soc.gpu.phys.add_system(pa, block.mem.array)
        self.blocks[pa] = block
        return REPLY.pack(0, pa, 0, size), [block.handout()], True
