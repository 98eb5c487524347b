"""A trace file cannot make its reader allocate without bound (issue 27 item 4): a 2 MB zlib record that inflates
to 2 GiB, and records whose declared inflated length lies, are refused by show, replay, diff and export within 1 s
and 200 MB (the peak RSS of a child process running the command, imports included)."""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import tracemalloc
import zlib

import pytest

from runtime.uapi import amdgpu_drm as drm
from runtime.uapi import kfd
from tests.traces.test_traces import ROOT, trace_a
from traces.export import export
from traces.format import _REC_HEAD, MAGIC, MAX_RECORD, TraceError, TraceReader, TraceWriter, read_trace, write_trace
from traces.show import show

INFLATED = 2 << 30  # what the bomb inflates to


def zeros_stream(mib: int) -> bytes:
    """A valid zlib stream of `mib` MiB of zeros, built without compressing them: after a full flush deflate starts
    afresh, so every further MiB compresses to the same bytes (2 GiB -> 2 MB); Adler-32 of n zeros is (n, 1)."""
    chunk, c = bytes(1 << 20), zlib.compressobj(9)
    first = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
    end = c.flush(zlib.Z_FINISH)[:-4]
    n = mib << 20
    return first + again * (mib - 1) + end + struct.pack(">I", (n % 65521) << 16 | 1)


def _file(payload: bytes, version: int = 2) -> bytes:
    """A trace whose only record is a zlib payload (checksum right)."""
    f = io.BytesIO()
    TraceWriter(f, {"os": "MockOS", "arch": "gfx1100", "devices": 1}).close()
    data = bytearray(f.getvalue())
    assert data[:8] == MAGIC
    struct.pack_into("<H", data, 8, version)  # the version field
    return bytes(data) + _REC_HEAD.pack(len(payload), zlib.crc32(payload), 1) + payload


@pytest.fixture(scope="module")
def bombs(tmp_path_factory) -> dict[str, str]:
    """Trace files, by what they claim."""
    z = zeros_stream(INFLATED >> 20)
    files = {"honest 2 GiB": _file(struct.pack("<I", INFLATED - 1) + z),  # (u32: the largest length it can say)
             "declares 1 KiB": _file(struct.pack("<I", 1024) + z),
             "declares the limit": _file(struct.pack("<I", MAX_RECORD) + z),
             "version 1 (declares nothing)": _file(z, version=1)}
    d = tmp_path_factory.mktemp("bombs")
    out = {}
    for i, (what, data) in enumerate(files.items()):
        path = d / f"bomb{i}.trace"
        path.write_bytes(data)
        out[what] = str(path)
    (d / "good.trace").write_bytes(trace_a())
    out["good"] = str(d / "good.trace")
    return out


def test_the_bomb_is_small_and_inflates_to_2_gib():
    z = zeros_stream(INFLATED >> 20)
    assert len(z) < 3 << 20
    d = zlib.decompressobj()
    assert d.decompress(z, 1 << 20) == bytes(1 << 20) and d.unconsumed_tail  # zeros, and far more to come


# The commands, each timed from after the imports (on a busy machine they alone take a second or more), in CPU
# seconds: on a machine shared with other jobs the wall clock measures them too. One process runs every command of
# the test (a process per command was two interpreter start-ups and the CLI's imports each time, 16 times); its
# peak RSS is then the largest of any of them plus whatever the ones before it left, a bound at least as strict.
_CHILD = """
import contextlib, io, json, sys, time
import traces.diff, traces.export, traces.replay, traces.show
from wiring.cli import main
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    t, cpu = time.monotonic(), time.process_time()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["trace", *argv])
    print(json.dumps({"rc": rc, "err": err.getvalue(), "cpu": time.process_time() - cpu,
                      "wall": time.monotonic() - t}))
"""
# A small process between: a child's peak RSS (getrusage) starts from its parent's at the fork, and pytest is large.
_LAUNCHER = """
import json, resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"child": r.stdout, "stderr": r.stderr,
                  "rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}))
"""


def _measure(argvs: list[list[str]]) -> list[dict]:
    """For each argv of `simgpu trace`, run one after the other in one process: its exit status, stderr, CPU and
    wall seconds, and the process's peak RSS."""
    r = subprocess.run([sys.executable, "-c", _LAUNCHER, sys.executable, "-c", _CHILD, json.dumps(argvs)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr
    outer = json.loads(r.stdout)
    results = [json.loads(line) for line in outer["child"].splitlines()]
    assert len(results) == len(argvs), outer["stderr"]
    return [got | {"rss": outer["rss"]} for got in results]


BOMBS = ["honest 2 GiB", "declares 1 KiB", "declares the limit", "version 1 (declares nothing)"]
COMMANDS = ["show", "replay", "diff", "export"]


@pytest.fixture(scope="module")
def refusals(bombs, tmp_path_factory) -> dict[tuple[str, str], dict]:
    """What each command did with each bomb, by (bomb, command): all of them run in one process."""
    out = tmp_path_factory.mktemp("export")
    argvs = {(what, command): {"show": ["show", bombs[what]], "replay": ["replay", bombs[what]],
                               "diff": ["diff", bombs["good"], bombs[what]],
                               "export": ["export", bombs[what], str(out / f"{i}.json")]}[command]
             for i, (what, command) in enumerate((w, c) for w in BOMBS for c in COMMANDS)}
    return dict(zip(argvs, _measure(list(argvs.values())), strict=True))


@pytest.mark.parametrize("what", BOMBS)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_zlib_bomb_is_refused_quickly_in_bounded_memory(refusals, what, command):
    got = refusals[what, command]
    assert got["rc"] == 2, got
    assert got["cpu"] < 1.0 and got["rss"] < 200 << 20, got
    (line,) = got["err"].splitlines()
    assert "record 0" in line and ("limit" in line or "declared" in line), line


def test_a_record_declaring_less_than_it_holds_is_refused_by_the_reader():
    data = _small(b"x" * 4000)
    with pytest.raises(TraceError, match="zlib stream ends after 4.* bytes, not at its declared length 5000"):
        read_trace(_redeclare(data, 5000))
    with pytest.raises(TraceError, match="inflates to more than its declared 100 bytes"):
        read_trace(_redeclare(data, 100))
    assert read_trace(data)[1][0]["text"] == "x" * 4000


def _small(text: bytes) -> bytes:
    f = io.BytesIO()
    w = TraceWriter(f, {"os": "MockOS"})
    w.write({"t": "read_text", "path": "/p", "text": text.decode()})
    w.close()
    return f.getvalue()


def _redeclare(data: bytes, n: int) -> bytes:
    """The first record's declared inflated length set to n, checksum recomputed."""
    r = TraceReader(io.BytesIO(data))
    start = r.data_start
    length, _, codec = _REC_HEAD.unpack_from(data, start)
    assert codec == 1
    body = bytearray(data[start + _REC_HEAD.size:start + _REC_HEAD.size + length])
    struct.pack_into("<I", body, 0, n)
    return data[:start] + _REC_HEAD.pack(length, zlib.crc32(body), codec) + bytes(body)


def test_sizes_a_trace_claims_cost_show_and_export_nothing(tmp_path):
    """Numbers inside the recorded ioctl arguments are the trace's word too: a 1 PiB buffer, a ring of no bytes, a
    write pointer 2^62 slots on, a DEV_INFO answer of 4 GiB. show and export follow the rest and stay small."""
    header, recs = read_trace(trace_a())
    for r in recs:
        if r["t"] == "ioctl" and r["req"] == kfd.AMDKFD_IOC_ALLOC_MEMORY_OF_GPU:
            a = kfd.kfd_ioctl_alloc_memory_of_gpu_args.unpack(r["out"])
            a.size = 1 << 50
            r["out"] = bytes(a)
        elif r["t"] == "ioctl" and r["req"] == drm.DRM_IOCTL_AMDGPU_INFO:
            a = drm.drm_amdgpu_info.unpack(r["in"])
            a.return_size = (1 << 32) - 1
            r["in"] = bytes(a)
    queues = [r for r in recs if r["t"] == "ioctl" and r["req"] == kfd.AMDKFD_IOC_CREATE_QUEUE]
    a = kfd.kfd_ioctl_create_queue_args.unpack(queues[0]["in"])
    a.ring_size = 0
    queues[0]["in"] = bytes(a)
    last = [r for r in recs if r["t"] == "mmio"][-1]
    last["value"] = 1 << 62
    path = tmp_path / "claims.trace"
    write_trace(path, header, recs)
    tracemalloc.start()
    try:
        show(path, verbose=True, out=io.StringIO())
        export(path, tmp_path / "claims.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20


def test_a_record_over_the_limit_is_written_with_a_warning_and_read_with_the_limit_raised(monkeypatch):
    monkeypatch.setenv("SIMGPU_TRACE_MAX_RECORD", "1000")
    f = io.BytesIO()
    w = TraceWriter(f, {"os": "MockOS"})
    with pytest.warns(UserWarning, match="record 0 takes 5.* bytes.*SIMGPU_TRACE_MAX_RECORD=5"):
        w.write({"t": "read_text", "path": "/p", "text": "x" * 5000})
    w.close()
    with pytest.raises(TraceError, match="more than the limit of 1000"):
        read_trace(f.getvalue())
    monkeypatch.setenv("SIMGPU_TRACE_MAX_RECORD", "6000")
    assert read_trace(f.getvalue())[1][0]["text"] == "x" * 5000
