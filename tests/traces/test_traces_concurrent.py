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
from functools import cache

import pytest

from mockgpu import MockOS
from tests.traces.test_traces import replay_bytes, workload
from traces.format import TraceError, read_trace, write_trace
from traces.record import RecordingOS
from traces.show import show


class StoringClient(RecordingOS):
    """A recorder whose client stores its doorbells straight into the GPU's doorbell page (no call through the
    recorder), which the driver then acts on in `progress` (poll_all as the session asks)."""

    poll_all = False

    def mmio_write(self, mapping, offset, value, size=4):
        kind, node = mapping.handle if isinstance(mapping.handle, tuple) else (None, None)
        if kind != "doorbell":
            return super().mmio_write(mapping, offset, value, size)
        node.gpu.doorbells[(mapping.offset & 0x1FFF) // 8 + offset // 8] = value  # the client's own store
        self.progress(poll_all=self.poll_all)  # the session's next turn: the driver scans the page
        return None


def record_stores(queue: str, poll_all: bool, concurrent: bool) -> bytes:
    f = io.BytesIO()
    mock = MockOS(devices=1, vram_size=1 << 30)
    rec = StoringClient(mock, f, concurrent=concurrent)
    rec.poll_all = poll_all
    workload(rec, 2.0, queue)
    rec.finish()
    return f.getvalue()


@cache
def trace_stores() -> bytes:
    """The PM4 recording whose doorbells the driver found in the page itself (also fuzzed: test_traces_fuzz)."""
    return record_stores("pm4", False, True)


@pytest.mark.parametrize("queue, poll_all, concurrent", [("pm4", False, True), ("aql", False, False)])
def test_doorbells_the_driver_acted_on_inside_a_progress_call_replay(queue, poll_all, concurrent):
    data = record_stores(queue, poll_all, concurrent)
    _, recs = read_trace(data)
    assert not any(r["t"] == "mmio" for r in recs)  # no doorbell went through the recorder as a write
    rang = [r for r in recs if r["t"] == "progress" and r.get("doorbells")]
    assert len(rang) >= 2 and all(r["moved"] for r in rang)  # the copies and the dispatch: acted on in progress
    assert replay_bytes(data) is None


def test_show_names_the_doorbell_stores_a_call_acted_on():
    data = trace_stores()
    out = io.StringIO()
    show(io.BytesIO(data), kinds={"progress"}, out=out)
    assert "progress(waiting queues) = moved" in out.getvalue()
    assert "[doorbell store acted on: gpu " in out.getvalue()


def _with_stores(stores) -> bytes:
    """The recording, its first acted-on store replaced by `stores`."""
    header, recs = read_trace(trace_stores())
    next(r for r in recs if r.get("doorbells"))["doorbells"] = stores
    f = io.BytesIO()
    write_trace(f, header, recs)
    return f.getvalue()


def test_a_store_for_a_gpu_the_replay_lacks_is_a_divergence_and_a_bad_slot_a_trace_error():
    d = replay_bytes(_with_stores([[77, 2, 5]]))
    assert d is not None and d.field == "doorbell store" and d.got == "none"
    with pytest.raises(TraceError, match="doorbells"):
        read_trace(_with_stores([[77, 1 << 10, 5]]))
