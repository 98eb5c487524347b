"""Traces of the AM backend: a userspace driver's traffic through the seam -- PCI config space and `enable` (pread,
pwrite), the BAR mappings, register reads and writes (mmio_read, mmio), doorbells -- records and replays with no
divergence, and a replay notices a register that answers differently."""

import io
from functools import cache

import numpy as np

import runtime
from compiler.samples import SAXPY
from mockgpu import MockOS
from tests.traces.test_traces import replay_bytes
from traces.format import read_trace, write_trace
from traces.record import RecordingOS

N = 1 << 12


@cache
def trace() -> bytes:
    return _record()


def _record() -> bytes:
    f = io.BytesIO()
    rec = RecordingOS(MockOS(devices=1, vram_size=1 << 30), f)
    dev = runtime.Device("AMD:0", os=rec, driver="am")
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    k = dev.load(SAXPY.code_object())["saxpy"]
    bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(y.nbytes).copyin(y)
    k(by, bx, np.float32(2.0), grid=(N // 256, 1, 1), block=(256, 1, 1))
    assert np.array_equal(by.copyout(np.empty_like(y)), np.float32(2.0) * x + y)
    dev.close()
    rec.finish()
    return f.getvalue()


_replay = replay_bytes  # the first divergence of a whole trace (tests/traces/test_traces.py)


def test_am_traffic_is_recorded():
    _, recs = read_trace(trace())
    kinds = {r["t"] for r in recs}
    assert {"open", "pread", "pwrite", "mmap", "mmio", "mmio_read"} <= kinds
    assert not any(r["t"] == "ioctl" for r in recs)  # no amdkfd at all
    opened = {r["path"] for r in recs if r["t"] == "open"}
    assert {f"/sys/bus/pci/devices/0000:03:00.0/{f}" for f in ("enable", "config", "resource0", "resource2",
                                                              "resource5")} <= opened
    assert "/lib/firmware/amdgpu/psp_13_0_0_sos.bin" in opened
    assert any(r.get("value") == 1024 and r["offset"] == 0xDE3 * 4 for r in recs if r["t"] == "mmio_read")
    assert any(r.get("g") for r in recs if r["t"] in ("mmio", "mmio_read"))  # the GPU's writes were seen


def test_am_bring_up_and_workload_are_deterministic():
    assert _record() == trace()  # the same submissions: the same bytes, register values and virtual times


def test_am_trace_replays_without_divergence():
    assert _replay(trace()) is None


def test_a_register_that_answers_differently_is_the_divergence():
    header, recs = read_trace(trace())
    i = next(i for i, r in enumerate(recs) if r["t"] == "mmio_read" and r["offset"] == 0xDE3 * 4)
    recs[i] = dict(recs[i], value=2048)
    f = io.BytesIO()
    write_trace(f, header, recs)
    d = _replay(f.getvalue())
    assert d is not None and d.call.startswith("mmio_read") and d.field == "value"
    assert d.expected == "0x800" and d.got == "0x400"


def test_show_prints_register_reads_and_config_space_writes(tmp_path):
    from traces.show import show
    path = tmp_path / "am.trace"
    path.write_bytes(trace())
    out = io.StringIO()
    show(str(path), out=out)
    text = out.getvalue()
    assert f"offset={0xDE3 * 4:#x}, size=4) = 0x400" in text  # RCC_CONFIG_MEMSIZE: 1024 MiB
    assert "pwrite(fd=" in text and "pread(fd=" in text
