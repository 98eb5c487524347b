"""The run's GPUs as LOCAL PCI functions (`simgpu run --am`, the default): the service the interposer's local-PCI part
(mockgpu/csrc/localpci.c) asks for what a userspace driver's plain loads, stores and file reads need.

Protocol (AF_UNIX SOCK_SEQPACKET at `path`, a connection per client thread): a request is op, gpu, bar, offset, size,
value (u64 each) and, for CFG_WRITE, the bytes; a reply is status (i64: 0 or -errno), value, offset, length (u64),
then a CFG_READ's bytes, with a descriptor for MAP_VRAM and SYSMEM.

    READ/WRITE   a 4- or 8-byte access of BAR5 (registers) or BAR2 (doorbells) at `offset`; READ answers `value`
    MAP_VRAM     the device-memory file and the file offset of BAR0 `offset` (`size` bytes, inside the VRAM)
    CFG_READ/CFG_WRITE  configuration space
    SYSMEM       `size` bytes of new system memory the GPUs reach at physical address `value` (a memfd named
                 "simgpu-host:<address>", which the client maps over its own pages: /proc/self/pagemap's answer)

The device is the remote-PCI server's (mockgpu.remote_pci): the same SOCs, lock and system memory, so the host-mapping
service still resolves every system address.
"""

from __future__ import annotations

import errno
import socket
import struct

from mockgpu.seqpacket import SeqpacketService
from simgpu.mem.shared import SharedMemory
from simgpu.soc import MMIOError
from simgpu.soc.pci import PEER_BAR_BASE

REQUEST = struct.Struct("<6Q")
REPLY = struct.Struct("<qQQQ")
READ, WRITE, MAP_VRAM, CFG_READ, CFG_WRITE, SYSMEM = range(1, 7)
PAGE = 4096


def c_definitions() -> list[str]:
    """-D flags that give the interposer these numbers."""
    names = ("READ", "WRITE", "MAP_VRAM", "CFG_READ", "CFG_WRITE", "SYSMEM")
    return [f"-DSIMGPU_LP_{n}={globals()[n]}" for n in names]


class LocalPCIService(SeqpacketService):
    """Serves the local-PCI requests of a run's clients for `remote` (a RemotePCIServer) at `path`."""

    def __init__(self, remote, path: str, domain=None):
        super().__init__(path)
        self.remote = remote
        self.domain = domain  # the run's PCI domain (mockgpu.pci.DomainClaim), given back by close

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
                try:
                    with self.remote.lock:
                        reply, fds = self._handle(op, gpu, bar, offset, size, value, data[REQUEST.size:])
                except (MMIOError, OSError, ValueError, IndexError, KeyError) as e:
                    self.errors.append(f"local PCI op {op} gpu {gpu} BAR{bar} offset {offset:#x}: {e}")
                    self.remote.errors.append(self.errors[-1])
                    reply = REPLY.pack(-errno.EINVAL, 0, 0, 0)
                try:
                    socket.send_fds(conn, [reply], fds) if fds else conn.send(reply)
                except OSError:
                    return

    def _handle(self, op, gpu, bar, offset, size, value, payload) -> tuple[bytes, list[int]]:
        remote = self.remote
        if op == SYSMEM:
            return self._sysmem(size)
        soc = remote.machine.socs[gpu]
        if op in (READ, WRITE):
            if bar not in (2, 5) or size not in (4, 8) or offset % size:
                raise ValueError(f"BAR{bar} access of {size} bytes at {offset:#x}: registers and doorbells take "
                                 "aligned 4- or 8-byte accesses")
            if op == WRITE:
                remote._bar_write(soc, bar, offset, value.to_bytes(size, "little"))
                return REPLY.pack(0, 0, 0, 0), []
            remote._progress()
            return REPLY.pack(0, int.from_bytes(remote._bar_read(soc, bar, offset, size), "little"), 0, 0), []
        if op == MAP_VRAM:
            vram = remote.machine.gpus[gpu].phys.vram_size
            if offset + size > vram:
                raise ValueError(f"BAR0 [{offset:#x}, +{size:#x}) is past the {vram:#x} bytes of VRAM")
            devmem = remote.machine.devmem
            return REPLY.pack(0, 0, devmem.vram_offset(gpu) + offset, size), [devmem.fd]
        if op == CFG_READ:
            data = soc.pci.read(offset, size)
            return REPLY.pack(0, 0, 0, len(data)) + data, []
        if op == CFG_WRITE:
            return REPLY.pack(0, soc.pci.write(offset, payload[:size]), 0, 0), []
        raise ValueError(f"unknown local-PCI op {op}")

    def _sysmem(self, size: int) -> tuple[bytes, list[int]]:
        remote = self.remote
        size = -(-size // PAGE) * PAGE
        if not size or remote.next_pa + size > PEER_BAR_BASE:
            raise ValueError(f"no system address left for {size:#x} bytes")
        pa = remote.next_pa
        mem = SharedMemory(size, f"simgpu-host:{pa:x}")
        remote.next_pa += size + PAGE
        for soc in remote.machine.socs:
            soc.gpu.phys.add_system(pa, mem.array)
        remote.sysmem[len(remote.sysmem) + 1] = (pa, mem)
        return REPLY.pack(0, pa, 0, size), [mem.fd]
