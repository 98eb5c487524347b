"""A concurrent client's doorbell store that the driver acts on inside another call (`simgpu run`'s case).

Under `simgpu run` the client stores doorbells straight into the shared doorbell page. The session turns the stores
it sees into `mmio` records, but a store that lands after it looked is picked up by the next call that scans the
doorbell page itself: `progress` (the session re-running waiting queues) or a WAIT_EVENTS. The recording must say
which doorbells that call acted on, or its replay runs fewer packets (tinygrad's ops60 recording: 32 divergences,
the first a `progress` whose compute queue went past the last recorded doorbell). Here the client is a shim that
stores the doorbell into the GPU's page behind the recorder's back, as the client process does, and then the
driver's progress runs, as the session's next turn does.
"""

from __future__ import annotations

import io

import pytest

from mockgpu import MockOS
from runtime.os import OS
from tests.traces.test_traces import replay_bytes, workload
from traces.format import read_trace
from traces.record import RecordingOS


class StoringClient(OS):
    """Forwards to a RecordingOS, except a doorbell write: a plain store into the GPU's doorbell page (no call
    through the recorder), which the driver then acts on in `progress` (poll_all as the session asks)."""

    def __init__(self, rec: RecordingOS, mock: MockOS, poll_all: bool):
        self.rec, self.mock, self.poll_all = rec, mock, poll_all

    def mmio_write(self, mapping, offset, value, size=4):
        kind, node = mapping.handle if isinstance(mapping.handle, tuple) else (None, None)
        if kind != "doorbell":
            return self.rec.mmio_write(mapping, offset, value, size)
        node.gpu.doorbells[(mapping.offset & 0x1FFF) // 8 + offset // 8] = value  # the client's own store
        self.rec.progress(poll_all=self.poll_all)  # the session's next turn: the driver scans the page
        return None

    def __getattr__(self, name):  # every other call goes through the recorder
        return getattr(self.rec, name)

    open = property(lambda self: self.rec.open)
    close = property(lambda self: self.rec.close)
    ioctl = property(lambda self: self.rec.ioctl)
    mmap = property(lambda self: self.rec.mmap)
    munmap = property(lambda self: self.rec.munmap)
    read_text = property(lambda self: self.rec.read_text)
    listdir = property(lambda self: self.rec.listdir)
    exists = property(lambda self: self.rec.exists)
    mmio_read = property(lambda self: self.rec.mmio_read)
    annotate = property(lambda self: self.rec.annotate)
    gpu_clocks = property(lambda self: self.rec.gpu_clocks)


def record_stores(queue: str, poll_all: bool, concurrent: bool) -> bytes:
    f = io.BytesIO()
    mock = MockOS(devices=1, vram_size=1 << 30)
    rec = RecordingOS(mock, f, concurrent=concurrent)
    workload(StoringClient(rec, mock, poll_all), 2.0, queue)
    rec.finish()
    return f.getvalue()


@pytest.mark.parametrize("queue, poll_all, concurrent", [("pm4", False, True), ("aql", False, False)])
def test_doorbells_the_driver_acted_on_inside_a_progress_call_replay(queue, poll_all, concurrent):
    data = record_stores(queue, poll_all, concurrent)
    _, recs = read_trace(data)
    assert not any(r["t"] == "mmio" for r in recs)  # no doorbell went through the recorder as a write
    rang = [r for r in recs if r["t"] == "progress" and r.get("doorbells")]
    assert len(rang) >= 2 and all(r["moved"] for r in rang)  # the copies and the dispatch: acted on in progress
    assert replay_bytes(data) is None
