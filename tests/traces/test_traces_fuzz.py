"""Structure-aware fuzzing of trace files (issue 27 item 4): real recorded traces with one field of one record
dropped, retyped, set out of range or given a wrong length, written back with valid checksums, fed to every trace
command (show, show -v, replay, diff, export). Each must end normally or with one line naming the record and the
field, exit 2; never a traceback. SIMGPU_FUZZ_EXAMPLES raises the example count."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import DATA
from tests.support.clients import c_program_or_skip, simgpu_run
from tests.traces import test_traces, test_traces_am, test_traces_concurrent, test_traces_midcall
from traces.cli import add_arguments, run
from traces.format import TraceReader, TraceWriter, read_trace, write_trace

EXAMPLES = int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "6"))
SOURCES = {"pm4": test_traces.trace_a, "aql": test_traces.trace_aql, "am": test_traces_am.trace,
           "stores": test_traces_concurrent.trace_stores,  # progress records with a client's doorbell stores
           "reads": test_traces_midcall.trace_late_flag}  # a WAIT_EVENTS whose GPU read the client's mid-call stores
ONE_LINE = re.compile(r"^simgpu trace \w+: (?:\S+: )?.*\((?:record (\d+)|header), byte offset \d+\)$")
HEADER = -1  # a mutation of the header rather than of a record
FIELD = re.compile(r"field ([A-Za-z_]\w*)")
# A mutated field may make another field of its record wrong: the named one.
NAMED_FOR = {"req": {"in", "out"}, "length": {"g"}, "size": {"value"}, "shared": {"g", "sw"}}


def paths(value, prefix=()) -> list[tuple]:
    """Every place inside a record a mutation can reach: map keys (but the type "t") and list items, depth first."""
    out = []
    if isinstance(value, dict):
        items = [(k, v) for k, v in value.items() if k != "t" or prefix]
    elif isinstance(value, list):
        items = list(enumerate(value))[:4]  # a few items of long lists are enough
    else:
        return out
    for k, v in items:
        out.append((*prefix, k))
        out += paths(v, (*prefix, k))
    return out


def _other_type(old):
    """Values of every type but the one there."""
    candidates = [None, True, 7, -3, 1.5, "x", b"\x01\x02", [1, 2], {"a": 1}, [[0, 0, b""]]]
    return [c for c in candidates if type(c) is not type(old)]


def _out_of_range(old):
    return [-1, -(1 << 63), (1 << 64) - 1, 1 << 40, 0, 3] if type(old) is int else []


def _wrong_length(old):
    if isinstance(old, bytes):
        return [old[:len(old) // 2], old[:-1], old + b"\0", old + bytes(4096), b""]
    if isinstance(old, list):
        return [old[:-1], old + old[-1:], [], old + [0]] if old else [[0]]
    if isinstance(old, str):
        return ["", old * 3]
    return []


@pytest.fixture(scope="module")
def sources() -> list[str]:
    """The recordings mutated: our runtime over PM4 and AQL, the AM driver, and a C program under `simgpu run`
    (the server's recording: user memory, a concurrent header) where the interposer can be built."""
    try:
        prog = c_program_or_skip("kfd_aql_vadd")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "run.trace")
            r = simgpu_run([str(prog), str(DATA / "codeobjects" / "llvmlite_vadd.so")], "--record", path)
            assert r.returncode == 0, r.stderr
            with open(path, "rb") as f:
                data = f.read()
        SOURCES["run"] = lambda: data
    except pytest.skip.Exception:
        pass
    return sorted(SOURCES)


@st.composite
def mutations(draw, names: list[str]):
    """(source name, record number or HEADER, path, kind, new value or None for a drop)."""
    source = draw(st.sampled_from(names))
    recs = _records(source)
    n = draw(st.integers(HEADER, len(recs) - 1))
    target = _CACHE[source][0] if n == HEADER else recs[n]
    path = draw(st.sampled_from(paths(target)))
    old = _get(target, path)
    kinds = {"drop": [None], "type": _other_type(old), "range": _out_of_range(old), "length": _wrong_length(old)}
    kind = draw(st.sampled_from(sorted(k for k, v in kinds.items() if v)))
    return source, n, path, kind, draw(st.sampled_from(kinds[kind]))


_CACHE: dict[str, tuple[dict, list]] = {}


def _records(source: str) -> list[dict]:
    if source not in _CACHE:
        _CACHE[source] = read_trace(SOURCES[source]())
    return _CACHE[source][1]


def _get(value, path):
    for k in path:
        value = value[k]
    return value


def _copy(value):
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return [_copy(v) for v in value] if isinstance(value, list) else value


def mutate(source: str, n: int, path: tuple, kind: str, new) -> bytes:
    """The source trace with the mutation applied to record n, checksums recomputed."""
    header, recs = _CACHE[source]
    rec = _copy(header if n == HEADER else recs[n])
    parent = _get(rec, path[:-1])
    if kind == "drop":
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    f = io.BytesIO()
    if n == HEADER:
        TraceWriter(f, rec).close()  # as written, "format" included (write_trace would put it back)
        f.write(_records_bytes(SOURCES[source]()))
    else:
        write_trace(f, header, [*recs[:n], rec, *recs[n + 1:]])
    return f.getvalue()


def _records_bytes(data: bytes) -> bytes:
    """The records of a trace file, without its header."""
    return data[TraceReader(io.BytesIO(data)).data_start:]


def _cli(argv: list[str]) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="simgpu trace")
    add_arguments(parser)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = run(parser.parse_args(argv))
    return rc, err.getvalue()


def commands(path: str, original: str, out: str) -> list[list[str]]:
    """Every trace command over the mutated file."""
    return [["show", path], ["show", "-v", path], ["replay", path], ["diff", original, path], ["diff", path, original],
            ["export", path, out]]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_command_ends_a_mutated_trace_with_one_line_or_normally(sources, data):
    m = data.draw(mutations(sources))
    source, n, path, kind, _ = m
    blob = mutate(*m)
    with tempfile.TemporaryDirectory() as tmp:
        bad, good, out = (os.path.join(tmp, name) for name in ("bad.trace", "good.trace", "out.json"))
        with open(bad, "wb") as f:
            f.write(blob)
        with open(good, "wb") as f:
            f.write(SOURCES[source]())
        for argv in commands(bad, good, out):
            rc, err = _cli(argv)  # an exception escaping here is the failure this test looks for
            assert rc in (0, 1, 2), (argv, rc, err)
            if rc == 2:
                lines = err.splitlines()
                assert len(lines) == 1, (argv, err)
                where = ONE_LINE.match(lines[0])
                assert where, (argv, err)
                named = FIELD.search(lines[0])
                assert named, (argv, err)
                assert f": {bad}: " in lines[0], (argv, err)  # which file, too (diff reads two)
                if where.group(1) is None:  # the header: only its own mutation makes it wrong
                    assert n == HEADER and named.group(1) in (path[0], "format"), (argv, m[1:4], err)
                elif int(where.group(1)) == n:  # the mutated record itself: the mutated field named
                    assert path[0] == "errno" or named.group(1) in {path[0], *NAMED_FOR.get(path[0], ())}, \
                        (argv, m[1:4], err)
                else:  # a later record that refers to what the mutation changed
                    assert int(where.group(1)) >= n, (argv, m[1:4], err)
