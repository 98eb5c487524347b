"""`simgpu trace export --perfetto`: dispatches, copies and waits as Chrome trace-event JSON.

Dispatches are placed with the GPU timestamps the runtime had the GPU write (PM4: the RELEASE_MEM GPU_CLOCK
pair around DISPATCH_DIRECT; AQL: the completion signal's start_ts/end_ts), read from the GPU-written page
diffs and converted with the counter frequency AMDGPU_INFO_DEV_INFO reported. Submissions without timestamps
(the runtime's SDMA copies, waits) fall back to record order: they start where the previous slice ended and
last 1 us. The JSON's otherData says which slices used which clock.
"""

from __future__ import annotations

import json
import sys

from simgpu.hw import aql
from traces.decode import fields, ioctl_name
from traces.format import TraceError, TraceReader
from traces.rings import GPUView

_WAIT_TID = 0


_DEFAULT_HZ = 100_000_000  # when the trace holds no AMDGPU_INFO_DEV_INFO answer
_FALLBACK_US = 1.0


def _gpu_times(view: GPUView, packets) -> tuple[int, int] | None:
    """(start, end) ticks of the submission's dispatch, from the timestamps now in memory."""
    for i, p in enumerate(packets):
        if p.kind != "dispatch":
            continue
        if p.signal is not None:
            start, end = (int.from_bytes(view.mem.read(p.signal + o, 8), "little")
                          for o in (aql.SIGNAL_START_TS, aql.SIGNAL_END_TS))
        else:
            before = [q.stamp for q in packets[:i] if q.stamp is not None]
            after = [q.stamp for q in packets[i + 1:] if q.stamp is not None]
            if not before or not after:
                return None
            start, end = (int.from_bytes(view.mem.read(a, 8), "little") for a in (before[-1], after[0]))
        return (start, end) if 0 < start <= end else None
    stamps = [p.stamp for p in packets if p.stamp is not None]
    if len(stamps) >= 2:  # an SDMA submission bracketed by TIMESTAMP packets (the runtime's copies)
        start, end = (int.from_bytes(view.mem.read(a, 8), "little") for a in (stamps[0], stamps[-1]))
        return (start, end) if start <= end and end > 0 else None  # the first copy may start at tick 0
    return None


def raw_events(path) -> tuple[list[dict], GPUView]:
    """Submissions and waits in record order, with their GPU ticks where found ("gpu": (start, end))."""
    view, out = GPUView(), []
    with TraceReader(path) as r:
        for n, _, rec in r:
            queue, packets = view.step(rec)
            if rec["t"] == "mmio" and queue is not None:
                kernels = [view.kernel_name(p.code) or f"code@{p.code:#x}" for p in packets if p.kind == "dispatch"]
                name = "copy" if queue.fmt == "sdma" else ", ".join(kernels) or "dispatch"
                args = {"queue_id": queue.qid, "wptr": rec["value"],
                        "packets": [p.text for p in packets if p.kind != "other"]}
                if kernels:
                    args["kernels"] = kernels
                out.append({"name": name, "record": n, "tid": queue.qid + 1, "args": args,
                            "gpu": _gpu_times(view, packets), "cat": "copy" if queue.fmt == "sdma" else "dispatch"})
            elif rec["t"] == "mmio":
                out.append({"name": "mmio", "record": n, "tid": 0, "args": {"value": rec["value"]}, "gpu": None})
            elif rec["t"] == "ioctl" and ioctl_name(rec["req"]) == "AMDKFD_IOC_WAIT_EVENTS":
                f = fields(rec["req"], rec.get("out", rec["in"]))
                out.append({"name": "wait", "record": n, "tid": _WAIT_TID, "gpu": None,
                            "args": {"wait_result": f.get("wait_result"), "num_events": f.get("num_events")}})
    return out, view


def events(path) -> list[dict]:
    """The trace's slices ("ph": "X") in record order, on one timeline in microseconds."""
    return timeline(path)[0]


def queue_track(q) -> str:
    """The name of a queue's track: its id and what it runs."""
    return {"pm4": f"queue {q.qid}: PM4 compute", "aql": f"queue {q.qid}: AQL compute",
            "sdma": f"queue {q.qid}: SDMA copy"}.get(q.fmt, f"queue {q.qid}")


def timeline(path, with_queues: bool = False):
    """The slices and the counter frequency the trace reported (None: not found), and with `with_queues` the
    queues the trace created."""
    raw, view = raw_events(path)
    hz = view.counter_hz or _DEFAULT_HZ
    cursor, origin, out = 0.0, None, []
    for e in raw:
        if e["gpu"] is not None:
            start, end = e["gpu"]
            if origin is None:
                origin = (start, cursor)  # GPU tick `start` is placed at the current position
            ts = max(cursor, origin[1] + (start - origin[0]) * 1e6 / hz)
            dur, clock = (end - start) * 1e6 / hz, "gpu"
            e["args"].update(gpu_start=start, gpu_end=end)
        else:
            ts, dur, clock = cursor, _FALLBACK_US, "record order"
        cursor = ts + dur
        out.append({"name": e["name"], "cat": e.get("cat", e["name"]), "ph": "X", "ts": ts, "dur": dur, "pid": 1,
                    "tid": e["tid"], "args": {"record": e["record"], "clock": clock, **e["args"]}})
    return (out, view.counter_hz, list(view.queues.values())) if with_queues else (out, view.counter_hz)


def _clock_note(ev: list[dict], hz: int | None) -> dict:
    timed = sum(e["args"]["clock"] == "gpu" for e in ev)
    return {"clock": "gpu timestamps where found, else record order",
            "gpu_counter_hz": hz or _DEFAULT_HZ, "gpu_counter_hz_source": "AMDGPU_INFO_DEV_INFO" if hz else "assumed",
            "slices_gpu_timed": timed, "slices_record_order": len(ev) - timed,
            "record_order_fallback": f"slices without GPU timestamps start where the previous slice ended and last "
                                     f"{_FALLBACK_US} us (their duration is not measured)"}


def export(path, out_path) -> int:
    """Write the JSON; the number of slices."""
    ev, raw_view_hz, queues = timeline(path, with_queues=True)
    meta = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": _WAIT_TID, "args": {"name": "host waits"}}]
    meta += [{"name": "thread_name", "ph": "M", "pid": 1, "tid": q.qid + 1, "args": {"name": queue_track(q)}}
             for q in sorted(queues, key=lambda q: q.qid)]
    with open(out_path, "w") as f:
        json.dump({"traceEvents": meta + ev, "displayTimeUnit": "ms",
                   "otherData": _clock_note(ev, raw_view_hz)}, f)
    return len(ev)


def export_main(path: str, out_path: str) -> int:
    """CLI entry."""
    try:
        n = export(path, out_path)
    except TraceError as e:
        print(f"simgpu trace export: {path}: {e}", file=sys.stderr)
        return 2
    print(f"wrote {n} slices to {out_path}")
    return 0
