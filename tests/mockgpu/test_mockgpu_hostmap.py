"""mockgpu.hostmap, asked as the interposer asks on a fault: what the GPU's page tables map at a virtual address comes
back as a shared-memory file and offset -- a MAP_SYSMEM buffer, the GPU's VRAM, a peer's VRAM through its BAR0 --
and a mapping of it is the very bytes the GPU reads and writes there. Unmapped pages, the system aperture and
malformed requests are refused with an errno; the service goes on."""

import errno
import os
import socket
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockgpu import MockOS
from mockgpu.hostmap import MAX_RUN, REPLY, REQUEST
from mockgpu.remote_pci import REQUEST as PCI_REQUEST
from mockgpu.remote_pci import Cmd, RemotePCIServer
from simgpu.mem import PageTableBuilder, shared
from simgpu.mem.pagetable import bump_allocator

PAGE = 4096
VMID = 3
VA = 0x7000_0000_0000
VRAM_PA = 64 << 20


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("hostmap") / "hostmap.sock")
    machine = MockOS(devices=2, vram_size=1 << 30)
    server = RemotePCIServer(machine, hostmap=path).start()
    s = socket.create_connection(("127.0.0.1", server.port))
    s.sendall(PCI_REQUEST.pack(Cmd.MAP_SYSMEM, 0, 0, 3 * MAX_RUN, 0, 0))
    status, n, handle = struct.unpack("<BQQ", _recv(s, 17))
    sys_pa = struct.unpack("<Q", _recv(s, n)[:8])[0]
    gpu = machine.gpus[0]
    pt = PageTableBuilder(gpu.phys, bump_allocator(0, 8 << 20))
    pt.map(VA, 3 * MAX_RUN, sys_pa, system=True)
    pt.map(VA + 4 * MAX_RUN, 2 * PAGE, VRAM_PA, writeable=False)
    peer = machine.socs[1].pci.bars[0].address
    pt.map(VA + 5 * MAX_RUN, PAGE, peer + VRAM_PA, system=True)
    gpu.mmu.set_root(VMID, pt.root_pde)
    yield machine, server, path, sys_pa
    s.close()
    server.close()


def _recv(s, n):
    data = b""
    while len(data) < n:
        data += s.recv(n - len(data))
    return data


def ask(path: str, request: bytes):
    """(status, start, length, offset, prot, fd or None) for one request."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as c:
        c.connect(path)
        c.send(request)
        msg, fds, _, _ = socket.recv_fds(c, REPLY.size, 1)
    return (*REPLY.unpack(msg), fds[0] if fds else None)


def mapped(path: str, va: int):
    """The run served for a fault at `va`, mapped here (anywhere) as a numpy array; (start, array, prot)."""
    status, start, length, offset, prot, fd = ask(path, REQUEST.pack(va))
    assert status == 0 and start <= va < start + length
    try:
        addr = shared.mmap(None, length, shared.PROT_READ | shared.PROT_WRITE, shared.MAP_SHARED, fd, offset)
    finally:
        os.close(fd)
    return start, shared.view(addr, length), prot


def test_a_system_buffer_is_the_bytes_the_gpu_reads_both_ways(served):
    machine, _, path, sys_pa = served
    start, cpu, prot = mapped(path, VA + MAX_RUN + 123)
    assert (start, cpu.size, prot) == (VA + MAX_RUN, MAX_RUN, 3)  # one run of MAX_RUN, page-aligned, writable
    cpu[:4] = np.frombuffer(b"host", np.uint8)
    mmu = machine.gpus[0].mmu
    assert mmu.read(VMID, VA + MAX_RUN, 4) == b"host"
    mmu.write(VMID, VA + MAX_RUN + 8, b"gpu!")
    assert cpu[8:12].tobytes() == b"gpu!"


def test_vram_and_a_peers_vram_through_its_bar(served):
    machine, _, path, _ = served
    start, cpu, prot = mapped(path, VA + 4 * MAX_RUN + 5)
    assert (start, cpu.size, prot) == (VA + 4 * MAX_RUN, 2 * PAGE, 1)  # read-only as its PTEs say
    machine.gpus[0].phys.write(VRAM_PA, b"vram")
    assert cpu[:4].tobytes() == b"vram"
    _, peer, _ = mapped(path, VA + 5 * MAX_RUN)
    machine.gpus[1].phys.write(VRAM_PA, b"peer")
    assert peer[:4].tobytes() == b"peer"


@pytest.mark.parametrize("request_", [REQUEST.pack(VA + 3 * MAX_RUN), REQUEST.pack(0x1000), REQUEST.pack(1 << 63)],
                         ids=["unmapped", "low", "non-canonical"])
def test_a_page_nothing_maps_is_refused(served, request_):
    status, *_, fd = ask(served[2], request_)
    assert (status, fd) == (-errno.EFAULT, None)


def test_the_system_aperture_is_not_served(served):
    machine, _, path, _ = served
    mmu = machine.gpus[0].mmu
    saved = mmu.system_aperture
    mmu.set_system_aperture(0x8000_0000_0000 - (1 << 30), 0x8000_0000_0000, fb_base=0, fb_offset=0)
    try:
        aperture = mmu.system_aperture[0]
        pt = PageTableBuilder(machine.gpus[0].phys, bump_allocator(16 << 20, 24 << 20))
        pt.map(aperture, PAGE, VRAM_PA)
        mmu.set_root(0, pt.root_pde)
        assert ask(path, REQUEST.pack(aperture))[0] == -errno.EFAULT
    finally:
        mmu.set_root(0, None)
        mmu.system_aperture = saved


def test_a_malformed_request_gets_einval_and_the_service_goes_on(served):
    path = served[2]
    assert ask(path, b"\x01\x02")[0] == -errno.EINVAL
    assert ask(path, REQUEST.pack(VA))[0] == 0


@settings(max_examples=int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "30")), deadline=None)
@given(st.one_of(st.binary(max_size=80), st.integers(0, (1 << 64) - 1).map(REQUEST.pack),
                 st.integers(0, 6 * MAX_RUN // PAGE).map(lambda p: REQUEST.pack(VA + p * PAGE + 7))))
def test_fuzzed_requests_get_an_answer_and_never_stop_the_service(served, request_):
    """Whatever a client sends, the answer is a mapping that lies where it asked, EFAULT or EINVAL."""
    status, start, length, _, prot, fd = ask(served[2], request_)
    if fd is not None:
        os.close(fd)
    if status == 0:
        (va,) = REQUEST.unpack(request_)
        assert start <= va < start + length <= start + MAX_RUN and prot in (1, 3)
    else:
        assert status in (-errno.EFAULT, -errno.EINVAL) and fd is None
    assert ask(served[2], REQUEST.pack(VA))[0] == 0
