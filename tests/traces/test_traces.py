"""traces: record a runtime workload through RecordingOS, replay it on a fresh MockOS, detect mutations,
reject damaged files, export trace-event JSON; the CLI end to end."""

import io
import json
import os
import subprocess
import sys
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import runtime
from compiler.samples import SAXPY
from mockgpu import MockOS
from runtime.uapi import kfd
from tests import DATA
from traces.diff import diff_main, first_differences
from traces.export import events
from traces.format import TraceError, TraceReader, read_trace, write_trace
from traces.record import RecordingOS
from traces.replay import Replayer, replay
from traces.show import show

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout
N = 1 << 12
GPU_TIMES: dict[tuple[float, str], float] = {}  # (a, queue) -> the launch's GPU time in seconds


@cache
def _saxpy() -> bytes:
    return SAXPY.code_object()


def workload(os_, a: float = 2.0, queue: str = "pm4") -> np.ndarray:
    """The demo's saxpy through runtime.Device: copies in, one dispatch, a copy out."""
    dev = runtime.Device("AMD:0", queue=queue, os=os_)
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    k = dev.load(_saxpy())["saxpy"]
    bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(y.nbytes).copyin(y)
    GPU_TIMES[(a, queue)] = k(by, bx, np.float32(a), grid=(N // 256, 1, 1), block=(256, 1, 1))
    out = by.copyout(np.empty_like(y))
    assert np.array_equal(out, np.float32(a) * x + y)
    bx.free()
    dev.close()
    return out


def record(a: float = 2.0, queue: str = "pm4") -> bytes:
    """A trace of the workload, as bytes."""
    f = io.BytesIO()
    rec = RecordingOS(MockOS(devices=1, vram_size=1 << 30), f)
    workload(rec, a, queue)
    rec.finish()
    return f.getvalue()


@cache
def trace_a() -> bytes:
    return record(2.0)


@cache
def trace_aql() -> bytes:
    return record(2.0, "aql")


def replay_bytes(data: bytes):
    return replayed(data)[0]


def replayed(data: bytes):
    """(the first divergence of a replay of trace `data`, None if none; the Replayer, stopped there or at the end)."""
    r = TraceReader(io.BytesIO(data))
    rp = Replayer(r.header)
    for number, offset, rec in r:
        d = rp.step(number, offset, rec)
        if d is not None:
            return d, rp
    return None, rp


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_record_then_replay_has_no_divergence(queue):
    data = trace_a() if queue == "pm4" else trace_aql()
    header, recs = read_trace(data)
    assert header["os"] == "MockOS" and header["arch"] == "gfx1100" and header["devices"] == 1
    kinds = {r["t"] for r in recs}
    assert {"open", "ioctl", "mmap", "munmap", "mmio", "read_text", "listdir"} <= kinds
    assert any(r.get("g") for r in recs if r["t"] == "mmio")  # the GPU's writes were seen
    assert replay_bytes(data) is None


def test_a_mixed_architecture_machine_records_each_gpus_arch_and_replays_on_the_same(monkeypatch):
    buf = io.BytesIO()
    rec = RecordingOS(MockOS(devices=2, vram_size=1 << 28, arch="gfx1201,gfx1100"), buf)
    with runtime.Device("AMD:0", os=rec) as dev:  # gfx1201 code: it runs only on a gfx1201
        k = dev.load((DATA / "opencl" / "corpus_gfx1201.so").read_bytes())["saxpy"]
        x = np.arange(256, dtype=np.float32)
        bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(x.nbytes).copyin(x)
        k(by, bx, 2.0, 256, grid=(1,), block=(256,))
    rec.finish()
    data = buf.getvalue()
    header, _ = read_trace(data)
    assert header["arch"] == "gfx1201,gfx1100"
    monkeypatch.setenv("SIMGPU_ARCH", "gfx1100")  # a replay follows its trace, not the environment
    assert Replayer(header).os.gpus[0].arch == "gfx1201"
    assert replay_bytes(data) is None


def test_a_fault_records_the_drivers_report_and_replays_it(tmp_path):
    f = io.BytesIO()
    rec = RecordingOS(MockOS(devices=1, vram_size=1 << 30), f)
    assert not hasattr(rec, "simulator") and not hasattr(rec, "gpus")  # nothing reaches around the seam
    dev = runtime.Device("AMD:0", os=rec)
    k = dev.load(_saxpy())["saxpy"]
    with pytest.raises(runtime.GPUFault) as e:
        k(None, None, np.float32(1.0), grid=(1, 1, 1), block=(256, 1, 1))  # loads from VA 0: a page fault
    rec.finish()
    header, recs = read_trace(f.getvalue())
    reports = [r for r in recs if r["t"] == "report"]
    assert header["vram"] == 1 << 30 and len(reports) == 1 and reports[0]["gpu_id"] == dev.gpu_id
    assert reports[0]["fault"] == e.value.kind == "page_fault" and reports[0]["text"] in e.value.report
    assert replay_bytes(f.getvalue()) is None
    out = io.StringIO()
    path = tmp_path / "fault.trace"
    path.write_bytes(f.getvalue())
    show(path, kinds={"report"}, out=out)
    assert f"device_report({dev.gpu_id}) = fault page_fault: 'gpu0: gfx1100" in out.getvalue()


def test_same_workload_twice_gives_identical_files():
    assert record(2.0) == trace_a()


def test_changed_kernel_argument_diverges_where_the_gpu_output_first_differs(tmp_path):
    a, b = trace_a(), record(3.0)
    pa, pb = tmp_path / "a.trace", tmp_path / "b.trace"
    pa.write_bytes(a)
    pb.write_bytes(b)
    diffs = first_differences(pa, pb, limit=2)
    (n_arg, ra, rb, keys), (n_out, *_) = diffs
    assert keys == "w" and ra["t"] == "mmio"  # only the host's kernarg bytes differ at the dispatch
    header, recs = read_trace(a)
    recs[n_arg]["w"] = rb["w"]  # the mutation: a's trace with b's kernel argument
    mutated = tmp_path / "m.trace"
    write_trace(mutated, header, recs)
    d, _ = replay(mutated)
    assert d is not None and d.record == n_out and "memory written during the call" in d.field
    assert diff_main(str(pa), str(pb), out=io.StringIO()) == 1


def test_changed_ioctl_output_is_the_first_divergence(tmp_path):
    header, recs = read_trace(trace_a())
    n = next(i for i, r in enumerate(recs) if r["t"] == "ioctl" and r["req"] == kfd.AMDKFD_IOC_CREATE_QUEUE)
    args = kfd.kfd_ioctl_create_queue_args.unpack(recs[n]["out"])
    args.queue_id = 7
    recs[n]["out"] = bytes(args)
    path = tmp_path / "m.trace"
    write_trace(path, header, recs)
    d, _ = replay(path)
    assert (d.record, d.field, d.expected, d.got) == (n, "output field queue_id", 7, 0)
    assert "AMDKFD_IOC_CREATE_QUEUE" in str(d)


def test_truncated_trace_names_record_and_offset():
    data = trace_a()
    offsets = [off for _, off, _ in TraceReader(io.BytesIO(data))]
    for k in (3, 20, len(offsets) - 1):
        for cut in (offsets[k] + 2, offsets[k] + 12):
            with pytest.raises(TraceError) as e:
                read_trace(data[:cut])
            assert e.value.record == k and e.value.offset == offsets[k]
            assert f"record {k}" in str(e.value) and f"byte offset {offsets[k]}" in str(e.value)
    with pytest.raises(TraceError, match="header"):
        read_trace(data[:10])


def test_corrupted_and_future_version_traces_are_rejected():
    data = bytearray(trace_a())
    offsets = [off for _, off, _ in TraceReader(io.BytesIO(bytes(data)))]
    bad = bytearray(data)
    bad[offsets[5] + 9 + 3] ^= 0xFF
    with pytest.raises(TraceError, match="checksum") as e:
        read_trace(bytes(bad))
    assert (e.value.record, e.value.offset) == (5, offsets[5])
    future = bytearray(data)
    future[8] = 99
    with pytest.raises(TraceError, match="version 99 is newer"):
        read_trace(bytes(future))
    with pytest.raises(TraceError, match="not a simgpu trace"):
        read_trace(b"\x7fELF" + bytes(data[4:]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400), st.integers(0, 2000), st.binary(min_size=1, max_size=8))
def test_fuzzed_reader_only_raises_trace_error(junk, pos, patch):
    base = _small_trace()
    for data in (junk, base[:8] + junk, base[:pos] + patch + base[pos + len(patch):], base[:pos]):
        try:
            read_trace(data)
        except TraceError:
            pass


@cache
def _small_trace() -> bytes:
    f = io.BytesIO()
    write_trace(f, {"os": "MockOS", "arch": "gfx1100", "devices": 1},
                [{"t": "open", "path": "/dev/kfd", "flags": 2, "fd": 100},
                 {"t": "ioctl", "fd": 100, "req": 1, "in": bytes(8), "out": bytes(600), "ret": 0, "w": [], "g": []},
                 {"t": "close", "fd": 100}])
    return f.getvalue()


def test_export_is_trace_event_json_with_one_slice_per_submission(tmp_path):
    path = tmp_path / "a.trace"
    path.write_bytes(trace_a())
    from traces.export import export
    n = export(path, tmp_path / "a.json")
    doc = json.loads((tmp_path / "a.json").read_text())
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert len(slices) == n == len(events(path))
    doorbells = [r for r in read_trace(trace_a())[1] if r["t"] == "mmio"]
    assert len(slices) == len(doorbells)
    names = [s["name"] for s in slices]
    assert names.count("saxpy") == 1 and names.count("copy") == len(doorbells) - 1  # dispatches by kernel name
    assert [s["cat"] for s in slices].count("dispatch") == 1
    ts = [s["ts"] for s in slices]
    assert ts == sorted(ts) and all(s["dur"] > 0 and {"pid", "tid", "cat"} <= s.keys() for s in slices)
    # the dispatch comes after the copies in and before the copy out
    assert names.index("saxpy") == len(names) - 2
    tracks = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M"}
    assert tracks == {0: "host waits", 1: "queue 0: SDMA copy", 2: "queue 1: PM4 compute"}
    assert {tracks[s["tid"]] for s in slices} == {"queue 0: SDMA copy", "queue 1: PM4 compute"}


def test_show_lists_decoded_ioctls_with_filters(tmp_path):
    path = tmp_path / "a.trace"
    path.write_bytes(trace_a())
    out = io.StringIO()
    show(path, kinds={"ioctl"}, rng=(0, 30), out=out)
    text = out.getvalue()
    assert "AMDKFD_IOC_ACQUIRE_VM" in text and "gpu_id=0x4a10" in text and "mmap(" not in text
    assert all(int(line.split()[0]) < 30 for line in text.splitlines()[1:])


def test_cli_record_replay_show_diff(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(""
                      "import runtime\nfrom tests.traces import test_traces\n"
                      "test_traces.workload(None)\n")
    path_env = os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), ROOT]))
    env = dict(os.environ, MOCKGPU="1", MOCKGPU_VRAM=str(1 << 30), PYTHONPATH=path_env)
    cli = [sys.executable, "-m", "wiring.cli", "trace"]
    outs = []
    for name in ("a", "b"):
        path = str(tmp_path / f"{name}.trace")
        subprocess.run([*cli, "record", "-o", path, "--", sys.executable, str(script)], env=env, check=True,
                       cwd=tmp_path, timeout=300)
        outs.append(path)
    assert open(outs[0], "rb").read() == open(outs[1], "rb").read()
    r = subprocess.run([*cli, "replay", outs[0]], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no divergence" in r.stdout
    r = subprocess.run([*cli, "show", outs[0], "--kind", "mmio"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and "mmio_write" in r.stdout
    r = subprocess.run([*cli, "diff", *outs], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and "identical" in r.stdout


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_show_decodes_the_dispatch_and_disassembles_the_kernel(tmp_path, queue):
    path = tmp_path / "a.trace"
    path.write_bytes(trace_a() if queue == "pm4" else trace_aql())
    out = io.StringIO()
    show(path, kinds={"mmio"}, out=out)
    text = out.getvalue()
    if queue == "pm4":
        assert "DISPATCH_DIRECT groups=16x1x1 block=256x1x1" in text
        assert "SET_SH_REG COMPUTE_PGM_LO=" in text and "data_sel=GPU_CLOCK" in text
    else:
        assert "AQL KERNEL_DISPATCH dims=1 grid=4096x1x1 workgroup=256x1x1" in text and "kernarg=0x" in text
    assert text.count("SDMA COPY_LINEAR") == 4 and "SDMA FENCE" in text
    assert text.count(" kernel=saxpy") == 1  # named from the runtime's code_object note
    everything = io.StringIO()
    show(path, kinds={"note"}, out=everything)
    assert "note(code_object: base=0x" in everything.getvalue() and "kernels=[saxpy@0x" in everything.getvalue()
    # the kernel reached VRAM through an SDMA copy the reader re-applies; listed once, up to s_endpgm
    listing = [line.split(": ", 1)[1] for line in text.splitlines() if line.strip().startswith("+0x")]
    assert listing[0].startswith("v_and_b32") and listing[-1] == "s_endpgm"
    assert any(i.startswith("global_load_b32") for i in listing) and any(i.startswith("v_mul_f32") for i in listing)
    quiet = io.StringIO()
    show(path, kinds={"mmio"}, out=quiet, packets=False)
    assert "DISPATCH" not in quiet.getvalue() and "s_endpgm" not in quiet.getvalue()


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_export_uses_the_gpu_times_the_runtime_measured(tmp_path, queue):
    path = tmp_path / "a.trace"
    path.write_bytes(trace_a() if queue == "pm4" else trace_aql())
    from traces.export import export
    export(path, tmp_path / "a.json")
    doc = json.loads((tmp_path / "a.json").read_text())
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    (d,) = [s for s in slices if s["name"] == "saxpy"]
    tick_us = 1e6 / doc["otherData"]["gpu_counter_hz"]
    assert doc["otherData"]["gpu_counter_hz_source"] == "AMDGPU_INFO_DEV_INFO"
    assert d["args"]["clock"] == "gpu" and abs(d["dur"] - GPU_TIMES[(2.0, queue)] * 1e6) <= tick_us
    # The runtime brackets each SDMA submission with TIMESTAMP packets: copies are GPU-timed too.
    assert doc["otherData"]["slices_gpu_timed"] == len(slices) and doc["otherData"]["slices_record_order"] == 0
    copies = [s for s in slices if s["name"] == "copy"]
    assert copies and all(s["args"]["clock"] == "gpu" and s["dur"] > 0 for s in copies)
    ends = [s["ts"] + s["dur"] for s in slices]
    assert all(b["ts"] >= e for b, e in zip(slices[1:], ends, strict=False))  # in order, never overlapping


def test_export_places_every_slice_on_the_recorded_virtual_clock(tmp_path):
    """Each record carries the GPU's virtual clock after the call ("clk"); the export places what the GPU did not
    time itself (waits; here, with lazy doorbells, the GPU runs inside WAIT_EVENTS) on that clock, not in record
    order (issue 26)."""
    f = io.BytesIO()
    rec = RecordingOS(MockOS(devices=1, vram_size=1 << 30, lazy_doorbells=True), f)
    workload(rec)
    rec.finish()
    path = tmp_path / "lazy.trace"
    path.write_bytes(f.getvalue())
    _, recs = read_trace(f.getvalue())
    assert all(set(r["clk"]) == {0x4a10} for r in recs)
    ticks = [r["clk"][0x4a10] for r in recs]
    assert ticks == sorted(ticks) and ticks[-1] > 0  # the virtual clock only moves forward
    from traces.export import export
    export(path, tmp_path / "lazy.json")
    doc = json.loads((tmp_path / "lazy.json").read_text())
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    tick_us = 1e6 / doc["otherData"]["gpu_counter_hz"]
    waits = [s for s in slices if s["name"] == "wait"]
    assert waits and doc["otherData"]["slices_record_order"] == 0
    for s in waits:  # a wait spans its call: from the previous record's clock to its own
        n = s["args"]["record"]
        assert s["args"]["clock"] == "virtual"
        assert (s["ts"], s["dur"]) == pytest.approx((ticks[n - 1] * tick_us, (ticks[n] - ticks[n - 1]) * tick_us))
    assert sum(s["dur"] for s in waits) > 0  # the GPU's work happened while the host waited
    assert sum(s["dur"] for s in slices) == pytest.approx(ticks[-1] * tick_us)  # each tick in one slice, once
