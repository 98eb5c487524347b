"""The server protocol fuzzed from a raw client (issue 27): random and mutated messages, ioctl structs with random
fields and pointers, bad handles and fds, truncated frames, lying answers to the server's questions about client
memory, SPINs with any arguments and payload between requests, a client that disconnects in the middle of a
request. The server never goes down, answers every well-formed request with a result or an errno (a frame that is
not the protocol only closes that connection), and another client on the same server still works -- a fresh
connection after every example, and a C program on <linux/kfd_ioctl.h> under the interposer at the end."""

import io
import os
import random
import struct
import subprocess

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockgpu import MockOS, protocol
from runtime.os import TOPOLOGY
from runtime.uapi import amdgpu_drm as D
from runtime.uapi import kfd as F
from tests import DATA
from tests.mockgpu.test_mockgpu_server import PID, RawClient, _machine, _serving
from tests.support.clients import c_program_or_skip, preload_or_skip

EXAMPLES = int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "25"))
GPU_ID = int(MockOS(devices=1, vram_size=1 << 28, user=False).read_text(f"{TOPOLOGY}/nodes/1/gpu_id"))
REQUESTS = sorted(F.COMMANDS) + [D.DRM_IOCTL_AMDGPU_INFO]
KINDS = [protocol.OPEN, protocol.CLOSE, protocol.IOCTL, protocol.MMAP, protocol.MAPPED, protocol.MUNMAP]
ANSWER_TIMEOUT = 60  # seconds: a server that does not answer a request in this long is hung (the test fails)
int64 = st.integers(-(1 << 63), (1 << 63) - 1)
word = st.one_of(int64, st.sampled_from([0, 1, -1, 1 << 63, (1 << 64) - 4096, 0x1000, 1 << 30, (1 << 47) - 2]))


class FuzzClient(RawClient):
    """A raw client that answers the server's questions (MEM_READ, MEM_WRITE, SHARE, FD_HANDLE) as `rng` says:
    truthfully, with an errno, with the wrong length, with a message of the wrong type, or with garbage."""

    def __init__(self, path: str, rng: random.Random):
        self.rng = rng
        super().__init__(path)
        self.sock.settimeout(ANSWER_TIMEOUT)

    def _answer(self, k, a, data):
        how = self.rng.randrange(6)
        if how == 0:
            super()._answer(k, a, data)
        elif how == 1:
            protocol.send(self.sock, protocol.REPLY, (-self.rng.randrange(1, 200),))
        elif how == 2:  # success with a payload of any length
            protocol.send(self.sock, protocol.REPLY, (0,), self.rng.randbytes(self.rng.randrange(0, 300)))
        elif how == 3:
            protocol.send(self.sock, self.rng.choice([protocol.IOCTL, protocol.MEM_READ, 77]), (0,))
        elif how == 4:
            self.sock.send(self.rng.randbytes(self.rng.randrange(0, protocol.HEADER.size)))  # a truncated frame
        else:  # a descriptor the server did not ask for, or a file that is no memory
            with open(os.devnull, "rb") as f:
                protocol.send(self.sock, protocol.REPLY, (self.rng.randrange(0, 3),), b"", f.fileno())

    def request(self, kind, args, payload) -> int | None:
        """The result of one request; None if the server closed the connection (only for protocol errors)."""
        try:
            return self.call(kind, args, payload)[0]
        except protocol.ProtocolError:
            return None


actions = st.lists(st.one_of(
    st.tuples(st.just("msg"), st.sampled_from(KINDS), st.lists(word, max_size=7), st.binary(max_size=256)),
    st.tuples(st.just("ioctl"), st.sampled_from(REQUESTS), st.one_of(st.none(), st.none(), int64), st.randoms()),
    st.tuples(st.just("garbage"), st.one_of(st.binary(max_size=200), st.integers(0, 40)), int64, st.just(b"")),
    st.tuples(st.just("hangup"), st.sampled_from(REQUESTS), int64, st.randoms()),
    st.tuples(st.just("spin"), st.lists(word, max_size=7), st.binary(max_size=64), st.just(None)),
), min_size=1, max_size=12)


def _ioctl_payload(request: int, rng: random.Random) -> bytes:
    """The argument struct of `request`: random bytes, or zeros with a few fields set to random words (pointers,
    sizes, ids, handles of this session); waits are kept short (the test waits for the answers)."""
    size = F.ioc_size(request)
    data = bytearray(rng.randbytes(size)) if rng.random() < 0.5 else bytearray(size)
    for _ in range(rng.randrange(4) if size >= 8 else 0):
        value = rng.choice([rng.getrandbits(64), 1 << 30, (1 << 30) + 4096, 1 << 63, 0x1000, 4096, GPU_ID,
                            rng.getrandbits(32), rng.randrange(1, 5) << 48 | rng.randrange(1, 8)])
        struct.pack_into("<Q", data, rng.randrange(size // 8) * 8, value & ((1 << 64) - 1))
    if request == F.AMDKFD_IOC_WAIT_EVENTS:
        a = F.kfd_ioctl_wait_events_args.from_buffer(data)
        a.timeout = rng.choice([0, 1, 20])
        del a
    return bytes(data)


def _act(c: FuzzClient, path: str, handles: dict, action) -> FuzzClient:
    """Perform one action; the client to go on with (a new one when the server rightly hung up)."""
    what = action[0]
    if what == "msg":
        _, kind, args, payload = action
        assert c.request(kind, args, payload) is not None, "a well-formed request was not answered"
    elif what == "ioctl":
        _, request, handle, rng = action
        h = handles[rng.choice(["kfd", "drm"])] if handle is None else handle
        assert c.request(protocol.IOCTL, (h, request), _ioctl_payload(request, rng)) is not None
    elif what == "garbage":
        _, frame, arg, _ = action
        if isinstance(frame, int):  # a well-formed header of any type (HELLO again, a reply, unknown ones)
            frame = struct.pack("<8q", frame, arg, 0, 0, 0, 0, 0, 0)
        c.sock.send(frame)
        c.sock.close()
        return FuzzClient(path, c.rng)
    elif what == "spin":  # SPIN (no reply), whatever its arguments and payload: the next request is answered
        _, args, payload, _ = action
        protocol.send(c.sock, protocol.SPIN, args, payload)
    else:  # a request whose client vanishes while the server is asking it something
        _, request, handle, rng = action
        protocol.send(c.sock, protocol.IOCTL, (handles["kfd"], request), _ioctl_payload(request, rng))
        c.sock.close()
        return FuzzClient(path, c.rng)
    return c


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])
@given(steps=actions, seed=st.integers(0, 1 << 32))
def _fuzz(path, handles, steps, seed):
    c = FuzzClient(path, random.Random(seed))
    for action in steps:
        c = _act(c, path, handles, action)
    c.sock.close()
    # the server is up and another connection is served at once
    fresh = RawClient(path)
    fresh.sock.settimeout(ANSWER_TIMEOUT)
    k, _ = fresh.open("/dev/kfd", 3)
    assert fresh.ioctl(k, F.AMDKFD_IOC_GET_VERSION, F.kfd_ioctl_get_version_args()).major_version == 1
    fresh.sock.close()


def test_the_server_survives_any_client_and_serves_the_others(tmp_path):
    log = io.StringIO()
    served = _serving(tmp_path, log=log)
    srv, path, connect = next(served)
    machine = connect()  # the session's machine, open throughout: every example's connections are its
    kfd_handle, memfd, _ = _machine(machine)
    os.close(memfd)
    _fuzz(path=path, handles={"kfd": kfd_handle, "drm": machine.handles[11]})
    # another process, on the same server, after all that: the C program on <linux/kfd_ioctl.h>
    prog, preload = c_program_or_skip("kfd_aql_vadd"), preload_or_skip()
    from wiring.run import write_sysfs
    write_sysfs(tmp_path / "sysfs", MockOS(devices=1, vram_size=1 << 28, user=False, place=False).sysfs)
    env = dict(os.environ, SIMGPU_SERVER=path, SIMGPU_SYSFS=str(tmp_path / "sysfs"), LD_PRELOAD=str(preload))
    env.pop("MOCKGPU", None)
    r = subprocess.run([str(prog), str(DATA / "codeobjects" / "llvmlite_vadd.so")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "vadd: 1024 items ok" in r.stdout, r.stderr
    assert PID not in srv.sessions or srv.sessions[PID].mock is not None
    next(served, None)  # the server stops with no session left behind
    # and nothing a client sent was a Python exception inside the server (each would be logged, and only its
    # connection or session dropped)
    assert not any(w in log.getvalue() for w in ("failed:", "dropping", "refusing")), log.getvalue()
