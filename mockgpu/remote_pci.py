"""The simulated GPUs as remote PCI functions: tinygrad's remote-PCI protocol (tinygrad.runtime.support.system's
RemotePCIDevice, what `REMOTE=host:port` makes its AM backend use) served over TCP from a MockOS's SOCs.

A userspace driver on a real machine reaches BAR5 and BAR2 with plain loads and stores; a process-level simulator
cannot see those without trapping every access. tinygrad's AM backend also speaks this protocol, in which each
access is a message, so its AM driver -- the same AMDev bring-up, MQD/HQD and ring code -- runs unmodified against
the emulated device. Messages (little-endian): a request is cmd u8, dev_id u32, bar u32, three u64 arguments, then a
payload (PROBE's device list, a bulk write's bytes); a reply is status u8 and two u64 values, then the bytes a read
asked for (a failure: status 1, the message's length, the message). Bulk writes get no reply.

PROBE lists the GPUs ("0", "1", ...); MAP_BAR answers a BAR's bus address and size; CFG_READ/CFG_WRITE reach
configuration space; MMIO_READ/MMIO_WRITE a BAR (0: VRAM bytes; 2: doorbells; 5: registers, one access per dword);
MAP_SYSMEM gives host memory the GPU reaches at system physical addresses (one per 4 KiB page), which
SYSMEM_READ/SYSMEM_WRITE access; RESET, RESIZE_BAR and PING succeed.

System memory is freed by UNMAP_SYSMEM (the handle in `bar`; 15, the number a later tinygrad gives its request of
that name) or when the connection that mapped it closes, as the kernel frees a process's memory when it exits.
tinygrad at the commit this serves has no such request (its PCIIfaceBase.free does nothing for a remote host buffer,
and its own server, extra/remote/serve.py, keeps every buffer for its whole life), so its buffers go when the
program does. The GPUs' page tables may still point at a freed buffer (tinygrad leaves its mapping in place): its
physical addresses are never handed out again, so an access there faults rather than reaching another buffer.

System memory is shared memory (simgpu.mem.shared), and with `hostmap` a client on this machine also gets it, and any
other GPU memory its page tables map, at the GPU virtual address it uses (mockgpu.hostmap): plain CPU stores there
reach what the GPU reads.
"""

from __future__ import annotations

import enum
import socket
import struct
import threading

import numpy as np

from mockgpu.hostmap import HostMapService
from simgpu.mem.shared import SharedMemory
from simgpu.soc import MMIOError
from simgpu.soc.pci import PEER_BAR_BASE

REQUEST = struct.Struct("<BIIQQQ")
REPLY = struct.Struct("<BQQ")
SYSMEM_BASE = 1 << 36  # system physical addresses handed out by MAP_SYSMEM (clear of VRAM, GTT and the peer BARs)
PAGE = 4096
MAX_SYSMEM = 1 << 40  # one MAP_SYSMEM's bytes (sparse shared memory: committed only where touched)


class Cmd(enum.IntEnum):
    """tinygrad's RemoteCmd."""

    PROBE, MAP_BAR, MAP_SYSMEM_FD, CFG_READ, CFG_WRITE, RESET, MMIO_READ, MMIO_WRITE, MAP_SYSMEM, SYSMEM_READ, \
        SYSMEM_WRITE, RESIZE_BAR, PING = range(13)
    UNMAP_SYSMEM = 15  # not in tinygrad a9069c17's list; a later tinygrad's number (13 and 14 load/run programs)


class RemotePCIServer:
    """Serves the SOCs of `machine` (a MockOS) on 127.0.0.1:`port` (0: any), one thread per connection; with
    `hostmap` (a socket path), also the CPU mappings of GPU addresses (mockgpu.hostmap) there."""

    def __init__(self, machine, port: int = 0, hostmap: str | None = None):
        self.machine = machine
        self.lock = threading.Lock()  # one request at a time reaches the simulator
        self.sysmem: dict[int, tuple[int, SharedMemory]] = {}  # handle -> (system PA, its shared memory)
        self.next_handle = 1  # handles are never reused, as physical addresses are not
        self.next_pa = SYSMEM_BASE
        self.listener = socket.create_server(("127.0.0.1", port))
        self.port = self.listener.getsockname()[1]
        self.errors: list[str] = []
        self.hostmap = HostMapService(machine, hostmap, self.system_backing, self.lock,
                                      self.handout) if hostmap else None
        self.local = None  # the local-PCI service over these GPUs (mockgpu.localpci), when `simgpu run` starts one

    def start(self) -> RemotePCIServer:
        """Accept connections in a daemon thread."""
        threading.Thread(target=self._accept, daemon=True).start()
        if self.hostmap:
            self.hostmap.start()
        return self

    def close(self) -> None:
        """Stop listening."""
        self.listener.close()
        if self.hostmap:
            self.hostmap.close()

    def system_backing(self, pa: int) -> tuple[int, int, int] | None:
        """(fd, file offset, bytes to the end of that memory) behind system physical address `pa`: a MAP_SYSMEM
        buffer, a local client's pages (mockgpu.localpci), or a GPU's VRAM through its BAR0 (a peer mapping)."""
        for base, mem in self.sysmem.values():
            if base <= pa < base + mem.size:
                return mem.fd, pa - base, base + mem.size - pa
        block = self.local.backing(pa) if self.local is not None else None
        if block is not None:
            return block.mem.fd, pa - block.pa, block.pa + block.size - pa
        devmem = self.machine.devmem
        for j, soc in enumerate(self.machine.socs):
            bar, size = soc.pci.bars[0].address, self.machine.gpus[j].phys.vram_size
            if bar <= pa < bar + size:
                return devmem.fd, devmem.vram_offset(j) + pa - bar, bar + size - pa
        return None

    def handout(self, fd: int) -> int | None:
        """For a file system_backing named: a local client's block hands out a descriptor of its own, which keeps
        the block alive while the client maps it (mockgpu.localpci.HostBlock); anything else is sent as it is."""
        if self.local is not None:
            for block in self.local.blocks.values():
                if block.mem.fd == fd:
                    return block.handout()
        return None

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        mine: set[int] = set()  # the system buffers this connection mapped and has not unmapped
        try:
            self._serve_requests(conn, mine)
        finally:
            with self.lock:  # the client is gone (exited, or closed its socket): so is its memory
                for handle in mine:
                    self._unmap_sysmem(handle)

    def _serve_requests(self, conn: socket.socket, mine: set[int]) -> None:
        with conn:
            while True:
                try:
                    head = _recv(conn, REQUEST.size)
                    if head is None:
                        return
                    cmd, dev, bar, a0, a1, a2 = REQUEST.unpack(head)
                    payload = b""
                    if cmd == Cmd.PROBE or cmd in (Cmd.MMIO_WRITE, Cmd.SYSMEM_WRITE):
                        payload = _recv(conn, a1) or b""
                except OSError:  # reset by the peer
                    return
                with self.lock:
                    try:
                        reply = self._handle(Cmd(cmd), dev, bar, a0, a1, a2, payload, mine)
                    except Exception as e:  # noqa: BLE001 - a bad request is answered, never ends the service
                        if not isinstance(e, (MMIOError, OSError, ValueError, KeyError, IndexError, OverflowError)):
                            e = RuntimeError(f"{type(e).__name__}: {e}")
                        msg = f"{Cmd(cmd).name if cmd < len(Cmd) else cmd}: {e}".encode()
                        self.errors.append(msg.decode())
                        if cmd in (Cmd.MMIO_WRITE, Cmd.SYSMEM_WRITE):
                            continue  # no reply is expected; the error stays in `errors` and the device report
                        reply = REPLY.pack(1, len(msg), 0) + msg
                if reply is not None:
                    try:
                        conn.sendall(reply)
                    except OSError:
                        return

    # ---- commands ---------------------------------------------------------------------------------------------
    def _handle(self, cmd: Cmd, dev: int, bar: int, a0: int, a1: int, a2: int, payload: bytes,
                mine: set[int]) -> bytes | None:
        socs = self.machine.socs
        if cmd == Cmd.PROBE:
            names = "\n".join(str(i) for i in range(len(socs))).encode()
            return REPLY.pack(0, len(names), 0) + names
        if cmd in (Cmd.PING, Cmd.RESET, Cmd.RESIZE_BAR):
            return REPLY.pack(0, 0, 0)
        if cmd == Cmd.MAP_SYSMEM:
            reply, handle = self._map_sysmem(a0)
            mine.add(handle)
            return reply
        if cmd == Cmd.UNMAP_SYSMEM:
            if bar not in mine:
                raise KeyError(f"system buffer {bar} is not one this connection mapped")
            mine.discard(bar)
            self._unmap_sysmem(bar)
            return REPLY.pack(0, 0, 0)
        if cmd in (Cmd.SYSMEM_READ, Cmd.SYSMEM_WRITE):
            _, mem = self.sysmem[bar]
            buf = mem.array
            if a0 + (len(payload) if cmd == Cmd.SYSMEM_WRITE else a1) > buf.size:
                raise ValueError(f"offset {a0:#x} is past the end of system buffer {bar}")
            if cmd == Cmd.SYSMEM_WRITE:
                buf[a0:a0 + len(payload)] = np.frombuffer(payload, np.uint8)
                self._progress()
                return None
            self._progress()
            return REPLY.pack(0, 0, 0) + buf[a0:a0 + a1].tobytes()
        soc = socs[dev]
        if cmd == Cmd.MAP_BAR:
            b = soc.pci.bars[bar]
            return REPLY.pack(0, b.address, b.size)
        if cmd == Cmd.CFG_READ:
            return REPLY.pack(0, int.from_bytes(soc.pci.read(a0, a1), "little"), 0)
        if cmd == Cmd.CFG_WRITE:
            soc.pci.write(a0, a2.to_bytes(a1, "little"))
            return REPLY.pack(0, 0, 0)
        if cmd in (Cmd.MMIO_READ, Cmd.MMIO_WRITE):
            size = a1 if cmd == Cmd.MMIO_READ else len(payload)
            if bar not in soc.pci.bars or a0 + size > soc.pci.bars[bar].size:
                raise ValueError(f"[{a0:#x}, +{size:#x}) is not inside BAR{bar}")
        if cmd == Cmd.MMIO_READ:
            self._progress()
            return REPLY.pack(0, 0, 0) + self._bar_read(soc, bar, a0, a1)
        if cmd == Cmd.MMIO_WRITE:
            self._bar_write(soc, bar, a0, payload)
            return None
        raise ValueError(f"{cmd.name} is not served here")

    def _map_sysmem(self, size: int) -> tuple[bytes, int]:
        if not 0 < size <= MAX_SYSMEM:
            raise ValueError(f"a system buffer of {size:#x} bytes (at most {MAX_SYSMEM:#x})")
        size = -(-size // PAGE) * PAGE
        if self.next_pa + size > PEER_BAR_BASE:
            raise ValueError(f"no system address left for {size:#x} more bytes (peer BARs from {PEER_BAR_BASE:#x})")
        pa, mem = self.next_pa, SharedMemory(size, "simgpu-sysmem")
        self.next_pa += size + PAGE
        for soc in self.machine.socs:
            soc.gpu.phys.add_system(pa, mem.array)
        handle, self.next_handle = self.next_handle, self.next_handle + 1
        self.sysmem[handle] = (pa, mem)
        paddrs = np.arange(pa, pa + size, PAGE, dtype="<u8").tobytes()
        return REPLY.pack(0, len(paddrs), handle) + paddrs, handle

    def _unmap_sysmem(self, handle: int) -> None:
        """Free system buffer `handle` (under the lock): gone from every GPU, its pages given back once no client
        maps them (a client the host-mapping service gave the file keeps its own mapping)."""
        pa, mem = self.sysmem.pop(handle)
        for soc in self.machine.socs:
            soc.gpu.phys.remove_system(pa)
        mem.close()

    @staticmethod
    def _bar_read(soc, bar: int, offset: int, size: int) -> bytes:
        if bar == 0:
            return soc.gpu.phys.vram[offset:offset + size].tobytes()
        if bar == 5:
            return b"".join(soc.mmio_read(offset + i, 4).to_bytes(4, "little") for i in range(0, size, 4))
        if bar == 2:
            step = 8 if size % 8 == 0 and offset % 8 == 0 else 4
            return b"".join(soc.doorbell_read(offset + i, step).to_bytes(step, "little") for i in range(0, size, step))
        raise ValueError(f"BAR{bar} is not a memory BAR of this device")

    def _bar_write(self, soc, bar: int, offset: int, data: bytes) -> None:
        if bar == 0:
            soc.gpu.phys.vram[offset:offset + len(data)] = np.frombuffer(data, np.uint8)
            self._progress()
        elif bar == 5:
            for i in range(0, len(data), 4):
                soc.mmio_write(offset + i, int.from_bytes(data[i:i + 4], "little"), 4)
        elif bar == 2:
            step = 8 if len(data) % 8 == 0 and offset % 8 == 0 else 4
            for i in range(0, len(data), step):
                soc.doorbell_write(offset + i, int.from_bytes(data[i:i + step], "little"), step)
        else:
            raise ValueError(f"BAR{bar} is not a memory BAR of this device")

    def _progress(self) -> None:
        """The GPUs run what waits on memory the client may just have changed (a signal, a wptr)."""
        for gpu in self.machine.gpus:
            if any(q.state != "idle" for q in gpu.queues):
                self.machine.progress(True)
                return


def _recv(conn: socket.socket, n: int) -> bytes | None:
    data = bytearray()
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return bytes(data)
