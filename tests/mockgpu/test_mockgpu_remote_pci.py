"""mockgpu.remote_pci, spoken to as tinygrad's RemotePCIDevice speaks (request <BIIQQQ, reply <BQQ): the GPUs listed,
BARs described, config space and registers read, system memory the GPU reaches, and bad requests answered with an
error message while the server goes on."""

import socket
import struct

import pytest

from mockgpu import MockOS
from mockgpu.remote_pci import REPLY, REQUEST, Cmd, RemotePCIServer


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
