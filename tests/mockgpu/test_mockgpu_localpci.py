"""mockgpu.localpci's system memory, asked as the interposer asks when a pagemap read moves a client's pages: a SYSMEM
block is memory the GPUs reach at its physical address, and it lives exactly as long as some client holds it -- a
descriptor open or in flight, a mapping (a forked child's copy too), a mapping the host-mapping service handed out.
Once none is left the next SYSMEM frees it: unregistered from the GPUs, its pages given back, its address never
reused, so memory allocated and freed in a loop stays bounded. Malformed requests get EINVAL; the service goes on."""

import errno
import os
import socket

import numpy as np
import pytest

from mockgpu import MockOS
from mockgpu.hostmap import REPLY as MAP_REPLY
from mockgpu.hostmap import REQUEST as MAP_REQUEST
from mockgpu.localpci import REPLY, REQUEST, SYSMEM, WRITE, LocalPCIService
from mockgpu.remote_pci import RemotePCIServer
from simgpu.mem import PageTableBuilder, shared
from simgpu.mem.pagetable import bump_allocator
from simgpu.mem.physical import PhysicalAddressError
from tests.wiring.proc_maps import memfd_blocks

PAGE = 4096
VMID = 5
VA = 0x6000_0000_0000


@pytest.fixture
def service(tmp_path):
    machine = MockOS(devices=2, vram_size=256 << 20)
    remote = RemotePCIServer(machine, hostmap=str(tmp_path / "hostmap.sock")).start()
    remote.local = LocalPCIService(remote, str(tmp_path / "localpci.sock")).start()
    yield remote
    remote.local.close()
    remote.close()


def call(remote, op: int, size: int = 0, gpu: int = 0, bar: int = 0, offset: int = 0, value: int = 0,
         raw: bytes | None = None):
    """(status, value, length, fd or None) of one request on a fresh connection."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as c:
        c.connect(remote.local.path)
        c.send(raw if raw is not None else REQUEST.pack(op, gpu, bar, offset, size, value))
        msg, fds, _, _ = socket.recv_fds(c, REPLY.size + 4096, 1)
    status, value, _, length = REPLY.unpack_from(msg)
    return status, value, length, fds[0] if fds else None


def sysmem(remote, size: int) -> tuple[int, int]:
    """(physical address, descriptor) of a new block of `size` bytes."""
    status, pa, length, fd = call(remote, SYSMEM, size)
    assert status == 0 and fd is not None and length == -(-size // PAGE) * PAGE
    return pa, fd


def map_fd(fd: int, size: int, close: bool = True) -> int:
    """Map a block as the interposer does (shared, whole) and close the descriptor: the mapping holds it."""
    addr = shared.mmap(None, size, shared.PROT_READ | shared.PROT_WRITE, shared.MAP_SHARED, fd, 0)
    if close:
        os.close(fd)
    return addr


def live(remote, pa: int) -> bool:
    """Whether the block at `pa` is still registered with every GPU (after the service collected freed ones)."""
    with remote.lock:
        remote.local.collect()
    on_gpus = [any(start == pa for start, _ in soc.gpu.phys.system_buffers()) for soc in remote.machine.socs]
    assert len(set(on_gpus)) == 1
    return pa in remote.local.blocks and on_gpus[0]


def test_a_block_is_the_memory_the_gpus_reach_at_its_address(service):
    pa, fd = sysmem(service, 3 * PAGE)
    addr = map_fd(fd, 3 * PAGE)
    cpu = shared.view(addr, 3 * PAGE)
    cpu[PAGE + 5:PAGE + 9] = np.frombuffer(b"host", np.uint8)
    for soc in service.machine.socs:
        assert soc.gpu.phys.read(pa + PAGE + 5, 4, system=True) == b"host"
    service.machine.socs[1].gpu.phys.write(pa + 2 * PAGE, b"gpu1", system=True)
    assert cpu[2 * PAGE:2 * PAGE + 4].tobytes() == b"gpu1"


def test_a_block_lives_while_mapped_and_is_freed_once_unmapped(service):
    pa, fd = sysmem(service, 2 * PAGE)
    addr = map_fd(fd, 2 * PAGE)
    assert live(service, pa)  # the descriptor is closed; the mapping holds the block
    shared.munmap(addr, PAGE)
    assert live(service, pa)  # half of it is still mapped
    shared.munmap(addr + PAGE, PAGE)
    assert not live(service, pa)
    with pytest.raises(PhysicalAddressError):  # a stale GPU mapping faults; it reaches no other block
        service.machine.socs[0].gpu.phys.read(pa, 4, system=True)
    pa2, fd2 = sysmem(service, 2 * PAGE)
    assert pa2 > pa  # addresses are not reused
    os.close(fd2)


def test_an_open_descriptor_holds_a_block_and_closing_it_frees_it(service):
    pa, fd = sysmem(service, PAGE)
    assert live(service, pa)
    os.close(fd)  # never mapped: a client that failed to map it
    assert not live(service, pa)


def test_a_forked_childs_mapping_holds_a_block_until_the_child_exits(service):
    pa, fd = sysmem(service, PAGE)
    addr = map_fd(fd, PAGE)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child inherits the mapping and waits to be told to exit
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    os.close(r)
    try:
        shared.munmap(addr, PAGE)
        assert live(service, pa)
    finally:
        os.close(w)
        os.waitpid(pid, 0)
    assert not live(service, pa)


def test_a_mapping_the_host_mapping_service_hands_out_holds_the_block_too(service):
    pa, fd = sysmem(service, PAGE)
    addr = map_fd(fd, PAGE)
    gpu = service.machine.gpus[0]
    pt = PageTableBuilder(gpu.phys, bump_allocator(0, 8 << 20))
    pt.map(VA, PAGE, pa, system=True)
    gpu.mmu.set_root(VMID, pt.root_pde)
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as c:  # a fault at VA, as hostmem.c asks
        c.connect(service.hostmap.path)
        c.send(MAP_REQUEST.pack(VA))
        msg, fds, _, _ = socket.recv_fds(c, MAP_REPLY.size, 1)
    status, start, length, offset, _ = MAP_REPLY.unpack(msg)
    assert (status, start, length, offset) == (0, VA, PAGE, 0)
    other = map_fd(fds[0], PAGE)
    shared.munmap(addr, PAGE)
    assert live(service, pa)  # the host mapping of the GPU address still maps it
    shared.munmap(other, PAGE)
    assert not live(service, pa)
    assert gpu.mmu.walk(VMID, VA) is not None and service.hostmap.resolve(VA) is None  # nothing to map there now


def _host_blocks(pid: str = "self") -> list[int]:
    """[mappings, bytes] of system-memory blocks in a process's address space."""
    return memfd_blocks(pid, "simgpu-host:")


def _rss_shmem_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssShmem:"))


def test_allocating_and_freeing_in_a_loop_keeps_the_footprint_bounded(service):
    size = 1 << 20
    before, before_buffers = _rss_shmem_kib(), [soc.gpu.phys.system_buffers() for soc in service.machine.socs]
    before_blocks = _host_blocks()  # earlier tests' blocks, still mapped until collected
    for i in range(64):
        pa, fd = sysmem(service, size + i * PAGE)  # sizes vary, as a driver's buffers do
        addr = map_fd(fd, size + i * PAGE)
        shared.view(addr, size + i * PAGE, owner=False)[:] = i  # every page committed
        assert service.machine.socs[0].gpu.phys.read(pa + size - 1, 1, system=True) == bytes([i])
        shared.munmap(addr, size + i * PAGE)
        assert len(service.local.blocks) <= 1  # this SYSMEM collected every earlier block
    pa, fd = sysmem(service, PAGE)
    os.close(fd)
    with service.lock:
        service.local.collect()
    assert service.local.blocks == {}
    assert all(len(soc.gpu.phys.system_buffers()) == len(buffers) for soc, buffers in zip(service.machine.socs,
                                                                                         before_buffers, strict=True))
    assert _host_blocks() == before_blocks  # neither the client's mappings nor the service's own are left
    assert _rss_shmem_kib() - before < 4 * 1024  # 64 MiB were written; less than 4 MiB stays


@pytest.mark.parametrize("request_", [
    REQUEST.pack(SYSMEM, 0, 0, 0, 0, 0),  # nothing to allocate
    REQUEST.pack(SYSMEM, 0, 0, 0, 1 << 62, 0),  # more system address space than there is
    REQUEST.pack(WRITE, 0, 5, 0x100, 4, 1 << 40),  # a 4-byte store of a value wider than 4 bytes
    REQUEST.pack(WRITE, 7, 5, 0x100, 4, 0),  # no GPU 7
    REQUEST.pack(99, 0, 0, 0, 0, 0),  # no such operation
], ids=["zero", "huge", "wide-store", "no-gpu", "op"])
def test_a_malformed_request_gets_einval_and_the_service_goes_on(service, request_):
    status, _, _, fd = call(service, 0, raw=request_)
    assert (status, fd) == (-errno.EINVAL, None)
    pa, fd = sysmem(service, PAGE)
    os.close(fd)
