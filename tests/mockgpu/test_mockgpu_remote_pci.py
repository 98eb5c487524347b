"""mockgpu.remote_pci, spoken to as tinygrad's RemotePCIDevice speaks (request <BIIQQQ, reply <BQQ): the GPUs listed,
BARs described, config space and registers read, system memory the GPU reaches and its freeing (UNMAP_SYSMEM, or the
connection's end), and bad requests answered with an error message while the server goes on."""

import socket
import struct
import time

import pytest

from mockgpu import MockOS
from mockgpu.remote_pci import REPLY, REQUEST, Cmd, RemotePCIServer
from simgpu.mem.physical import PhysicalAddressError


@pytest.fixture(scope="module")
def conn():
    server = RemotePCIServer(MockOS(devices=2, vram_size=1 << 30)).start()
    s = socket.create_connection(("127.0.0.1", server.port))
    yield s, server
    s.close()
    server.close()


def rpc(s, cmd, *args, bar=0, dev=0, payload=b"", readout=0):
    s.sendall(REQUEST.pack(cmd, dev, bar, *(*args, 0, 0, 0)[:3]) + payload)
    status, v0, v1 = REPLY.unpack(_recv(s, REPLY.size))
    extra = _recv(s, v0 if status else readout)
    return status, v0, v1, extra


def _recv(s, n):
    data = b""
    while len(data) < n:
        data += s.recv(n - len(data))
    return data


def test_probe_bars_config_and_registers(conn):
    s, _ = conn
    status, n, _, _ = rpc(s, Cmd.PROBE, 3, 0, 0x1002)
    assert status == 0 and _recv(s, n) == b"0\n1"
    assert rpc(s, Cmd.MAP_BAR, bar=5)[2] == 1 << 20
    assert rpc(s, Cmd.CFG_READ, 0, 4)[1] == 0x744C_1002
    assert struct.unpack("<I", rpc(s, Cmd.MMIO_READ, 0xDE3 * 4, 4, bar=5, readout=4)[3])[0] == 1024


def test_system_memory_is_what_the_gpu_reads_at_its_physical_addresses(conn):
    s, server = conn
    status, n, handle, _ = rpc(s, Cmd.MAP_SYSMEM, 8192, 0)
    paddrs = struct.unpack("<2Q", _recv(s, n))
    s.sendall(REQUEST.pack(Cmd.SYSMEM_WRITE, 0, handle, 4096, 4, 0) + b"gfx!")  # no reply to a bulk write
    assert rpc(s, Cmd.SYSMEM_READ, 4096, 4, bar=handle, readout=4)[3] == b"gfx!"
    assert server.machine.gpus[1].phys.read(paddrs[1], 4, system=True) == b"gfx!"


def test_bad_requests_get_an_error_and_the_server_goes_on(conn):
    s, server = conn
    status, _, _, msg = rpc(s, Cmd.MMIO_READ, 1 << 20, 4, bar=5)
    assert status == 1 and b"not inside BAR5" in msg
    status, _, _, msg = rpc(s, Cmd.MMIO_READ, 0x3219 * 4, 4, bar=5)  # no register there: the device's own error
    assert status == 1 and b"unknown register" in msg
    assert rpc(s, 99)[0] == 1
    assert rpc(s, Cmd.CFG_READ, 0, 2, dev=7)[0] == 1  # no such GPU
    status, _, _, msg = rpc(s, Cmd.MAP_SYSMEM, 0, 0)
    assert status == 1 and b"a system buffer of 0x0 bytes" in msg
    assert rpc(s, Cmd.PING)[0] == 0


def test_fuzzed_requests_never_stop_the_server():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    server = RemotePCIServer(MockOS(devices=1, vram_size=1 << 30)).start()
    s = socket.create_connection(("127.0.0.1", server.port))
    reads = st.tuples(st.sampled_from([Cmd.CFG_READ, Cmd.CFG_WRITE, Cmd.MMIO_READ, Cmd.MAP_BAR, Cmd.SYSMEM_READ, 42]),
                      st.integers(0, 5), st.integers(0, 1 << 21), st.integers(0, 64), st.integers(0, 1 << 32))

    @settings(max_examples=150, deadline=None)
    @given(reads)
    def one(req):
        cmd, bar, a0, a1, a2 = req
        status, v0, _, extra = rpc(s, cmd, a0 - a0 % 4, a1 - a1 % 4, a2, bar=bar,
                                   readout=a1 - a1 % 4 if cmd == Cmd.MMIO_READ else 0)
        assert status in (0, 1)

    one()
    assert rpc(s, Cmd.PING)[0] == 0
    s.close()
    server.close()


def sysmem_mappings() -> int:
    """Bytes of this process's mappings of system buffers (the server runs in it)."""
    total = 0
    with open("/proc/self/maps") as f:
        for line in f:
            if "/memfd:simgpu-sysmem" in line:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                total += hi - lo
    return total


def map_sysmem(s, size: int) -> tuple[int, tuple[int, ...]]:
    status, n, handle, _ = rpc(s, Cmd.MAP_SYSMEM, size, 0)
    assert status == 0
    return handle, struct.unpack(f"<{n // 8}Q", _recv(s, n))


def test_unmap_sysmem_frees_a_buffer_the_gpu_then_faults_at_its_addresses():
    server = RemotePCIServer(MockOS(devices=2, vram_size=1 << 30)).start()
    s, other = (socket.create_connection(("127.0.0.1", server.port)) for _ in range(2))
    base = sysmem_mappings()
    for i in range(40):  # 40 MiB and more mapped, written and freed one after the other: the footprint stays flat
        size = (1 << 20) + i * 4096
        handle, paddrs = map_sysmem(s, size)
        s.sendall(REQUEST.pack(Cmd.SYSMEM_WRITE, 0, handle, size - 4, 4, 0) + b"last")
        assert rpc(s, Cmd.SYSMEM_READ, size - 4, 4, bar=handle, readout=4)[3] == b"last"
        assert sysmem_mappings() - base == size
        assert rpc(other, Cmd.UNMAP_SYSMEM, bar=handle)[0] == 1  # only the connection that mapped it frees it
        assert rpc(s, Cmd.UNMAP_SYSMEM, bar=handle)[:3] == (0, 0, 0)
        assert sysmem_mappings() == base
    status, _, _, msg = rpc(s, Cmd.SYSMEM_READ, 0, 4, bar=handle)
    assert status == 1 and str(handle).encode() in msg
    assert rpc(s, Cmd.UNMAP_SYSMEM, bar=handle)[0] == 1  # a double free is refused
    for gpu in server.machine.gpus:
        with pytest.raises(PhysicalAddressError):
            gpu.phys.read(paddrs[-1], 4, system=True)
    again, fresh = map_sysmem(s, 4096)
    assert again != handle and fresh[0] > paddrs[-1]  # neither handles nor physical addresses come back
    s.close(), other.close()
    server.close()


def test_a_connections_system_memory_is_freed_when_it_closes():
    server = RemotePCIServer(MockOS(devices=1, vram_size=1 << 30)).start()
    s, gone = (socket.create_connection(("127.0.0.1", server.port)) for _ in range(2))
    kept, _ = map_sysmem(s, 8192)
    handles = [map_sysmem(gone, 1 << 20)[0] for _ in range(3)]
    assert set(server.sysmem) == {kept, *handles}
    gone.close()  # the program exited
    deadline = time.monotonic() + 10  # the server's thread for that connection sees it end, then frees
    while set(server.sysmem) != {kept} and time.monotonic() < deadline:
        time.sleep(0.01)
    assert set(server.sysmem) == {kept}
    assert rpc(s, Cmd.SYSMEM_READ, 0, 4, bar=kept, readout=4)[0] == 0
    s.close()
    server.close()
