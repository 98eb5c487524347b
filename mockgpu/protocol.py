"""The wire protocol between the LD_PRELOAD interposer (mockgpu/csrc/preload.c) and the simgpu server.

One AF_UNIX SOCK_SEQPACKET connection per client thread. Every message is a header of eight little-endian int64
(type, then seven arguments) followed by a payload; file descriptors travel as SCM_RIGHTS. The interposer sends a
request and waits for its reply; while the server handles an ioctl it may ask the interposer for the caller's
memory first (MEM_READ / MEM_WRITE / SHARE), which the interposer answers from its own address space with
process_vm_readv / process_vm_writev, so a bad pointer is an errno, never a crash. These numbers are the single
source: the interposer is compiled with them as -D definitions (mockgpu.native.build_preload).
"""

from __future__ import annotations

import array
import ctypes
import socket
import struct

from runtime.uapi import kfd

HEADER = struct.Struct("<8q")
U64 = (1 << 64) - 1
MAX_PAYLOAD = 1 << 16  # the largest payload in one message; memory is read and written in pieces of this size

# client -> server                         arguments                                  reply (a0 < 0: -errno)
HELLO = 1  # a0 pid                                                                  a0 0, fd: the status page
OPEN = 2  # a0 flags; payload path                                                   a0 handle, fd: device memory file
CLOSE = 3  # a0 handle                                                               a0 0
IOCTL = 4  # a0 handle, a1 request, a2 address, a3 length; payload the argument       a0 result; payload argument after
#            (_IOC_SIZE bytes), then a3 bytes of the caller's memory at a2 (ATTACHED)
MMAP = 5  # a0 handle, a1 address wanted, a2 length, a3 prot, a4 flags, a5 offset    a0 0 (may map) or -errno
MAPPED = 6  # a0 handle, a1 address, a2 length, a3 prot, a4 flags, a5 offset         a0 0
MUNMAP = 7  # a0 address, a1 length                                                  a0 0
SPIN = 8  # (none): the sending thread spins on the GPU's memory; look at the doorbells now  no reply
# server -> client, inside an IOCTL
MEM_READ = 16  # a0 address, a1 length                                               a0 0; payload bytes
MEM_WRITE = 17  # a0 address; payload bytes                                          a0 0
SHARE = 18  # a0 address, a1 length: move those pages into shared memory            a0 0, fd: its memfd
FD_HANDLE = 19  # a0 a file descriptor of the client (ACQUIRE_VM's drm_fd)          a0 its handle, or -EBADF
REPLY = 32  # the type of every reply


# The pointer arguments the driver reads on every call of an ioctl (copy_from_user of an array): the interposer
# reads them with the argument and sends them along (IOCTL's a2, a3), so the server need not ask with a MEM_READ
# round trip (tinygrad maps and unmaps every buffer with a one-element device-id array). Each entry: the ioctl, its
# argument's struct, the pointer field, the u32 element-count field, the bytes of one element. A block that the
# interposer cannot read is not sent: the server asks, and the MEM_READ answers EFAULT as before.
ATTACHED = (
    (kfd.AMDKFD_IOC_MAP_MEMORY_TO_GPU, kfd.kfd_ioctl_map_memory_to_gpu_args, "device_ids_array_ptr", "n_devices", 4),
    (kfd.AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, kfd.kfd_ioctl_unmap_memory_from_gpu_args, "device_ids_array_ptr",
     "n_devices", 4),
    (kfd.AMDKFD_IOC_WAIT_EVENTS, kfd.kfd_ioctl_wait_events_args, "events_ptr", "num_events",
     ctypes.sizeof(kfd.kfd_event_data)),
)


def c_definitions() -> list[str]:
    """-D flags that give the interposer these numbers, and ATTACHED as an initializer of
    {request, pointer offset, count offset, element bytes} rows."""
    names = ("HELLO", "OPEN", "CLOSE", "IOCTL", "MMAP", "MAPPED", "MUNMAP", "SPIN", "MEM_READ", "MEM_WRITE", "SHARE",
             "FD_HANDLE", "REPLY", "MAX_PAYLOAD")
    rows = ",".join(f"{{{req:#x}UL,{getattr(st, ptr).offset},{getattr(st, count).offset},{size}}}"
                    for req, st, ptr, count, size in ATTACHED)
    return [*(f"-DSIMGPU_MSG_{n}={globals()[n]}" for n in names), f"-DSIMGPU_ATTACHED={{{rows}}}"]


class ProtocolError(Exception):
    """A peer sent something that is not this protocol, or went away."""


def word(value: int) -> int:
    """A 64-bit argument as the header carries it (an int64): an address of 2^63 or more travels as its two's
    complement, as the interposer's int64_t holds a uintptr_t; anything wider than 64 bits is a ProtocolError."""
    if not -(1 << 63) <= value < 1 << 64:
        raise ProtocolError(f"argument {value:#x} is wider than 64 bits")
    return value - (1 << 64) if value >= 1 << 63 else value


def unsigned(value: int) -> int:
    """An argument that is an address or a length, as the 64-bit unsigned value the interposer sent."""
    return value & U64


def send(sock: socket.socket, kind: int, args=(), payload: bytes = b"", fd: int | None = None) -> None:
    """One message; `fd` rides along as SCM_RIGHTS."""
    if len(args) > 7:
        raise ProtocolError(f"{len(args)} arguments: a header holds seven")
    head = HEADER.pack(word(kind), *(word(a) for a in args), *[0] * (7 - len(args)))
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))] if fd is not None else []
    try:
        sock.sendmsg([head, payload], anc)
    except OSError as e:
        raise ProtocolError(f"send failed: {e}") from None


def recv(sock: socket.socket) -> tuple[int, list[int], bytes, int | None]:
    """One message: (type, seven arguments, payload, received fd or None)."""
    try:
        data, anc, flags, _ = sock.recvmsg(HEADER.size + MAX_PAYLOAD, socket.CMSG_SPACE(4), socket.MSG_CMSG_CLOEXEC)
    except OSError as e:
        raise ProtocolError(f"receive failed: {e}") from None
    fd = None
    for level, kind, cdata in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS and len(cdata) >= 4:
            fd = array.array("i", cdata[:4])[0]
    if not data:
        raise ProtocolError("peer closed the connection")
    if len(data) < HEADER.size or flags & socket.MSG_TRUNC:
        raise ProtocolError(f"malformed message of {len(data)} bytes")
    kind, *args = HEADER.unpack_from(data)
    return kind, args, data[HEADER.size:], fd
