"""`simgpu trace export --perfetto`: dispatches, copies and waits as Chrome trace-event JSON.

Every slice is placed on the GPUs' virtual clock. Dispatches and copies take the GPU timestamps the runtime had the
GPU write (PM4: the RELEASE_MEM GPU_CLOCK pair around DISPATCH_DIRECT; AQL: the completion signal's start_ts/end_ts;
SDMA: the TIMESTAMP packets around a submission), read from the GPU-written page diffs; everything else (waits,
submissions without timestamps) spans its call on the clock each record carries ("clk": the GPU's counter after the
call, so a call runs from the previous record's value to its own). Ticks are converted with the counter frequency
AMDGPU_INFO_DEV_INFO reported. A trace without "clk" (older, or from hardware) falls back to record order for what
the GPU did not time. The JSON's otherData says which slices used which clock.
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


def _clk_span(before: dict, rec: dict, gpu_id: int | None) -> tuple[int, int] | None:
    """(ticks before, ticks after) the record on GPU `gpu_id`'s virtual clock; for calls of no one GPU (waits), the
    GPU whose clock moved most during it. None when the trace does not record the clock."""
    clk = rec.get("clk")
    if not clk:
        return None
    if gpu_id not in clk:
        gpu_id = max(sorted(clk), key=lambda g: clk[g] - before.get(g, clk[g]))
    return before.get(gpu_id, clk[gpu_id]), clk[gpu_id]


def raw_events(path) -> tuple[list[dict], GPUView]:
    """Submissions and waits in record order, with their GPU ticks where found ("gpu": (start, end)) and their span
    on the virtual clock the trace recorded ("clk": (start, end), or None)."""
    view, out, clock = GPUView(), [], {}
    with TraceReader(path) as r:
        for n, _, rec in r:
            queue, packets = view.step(rec)
            before = dict(clock)
            clock.update(rec.get("clk", {}))
            if rec["t"] == "mmio" and queue is not None:
                kernels = [view.kernel_name(p.code) or f"code@{p.code:#x}" for p in packets if p.kind == "dispatch"]
                name = "copy" if queue.fmt == "sdma" else ", ".join(kernels) or "dispatch"
                args = {"queue_id": queue.qid, "wptr": rec["value"],
                        "packets": [p.text for p in packets if p.kind != "other"]}
                if kernels:
                    args["kernels"] = kernels
                out.append({"name": name, "record": n, "tid": queue.qid + 1, "args": args,
                            "gpu": _gpu_times(view, packets), "clk": _clk_span(before, rec, queue.gpu_id),
                            "cat": "copy" if queue.fmt == "sdma" else "dispatch"})
            elif rec["t"] == "mmio":
                out.append({"name": "mmio", "record": n, "tid": 0, "args": {"value": rec["value"]}, "gpu": None,
                            "clk": _clk_span(before, rec, None)})
            elif rec["t"] == "ioctl" and ioctl_name(rec["req"]) == "AMDKFD_IOC_WAIT_EVENTS":
                f = fields(rec["req"], rec.get("out", rec["in"]))
                out.append({"name": "wait", "record": n, "tid": _WAIT_TID, "gpu": None,
                            "clk": _clk_span(before, rec, None),
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
    queues the trace created and whether the trace recorded the virtual clock."""
    raw, view = raw_events(path)
    hz = view.counter_hz or _DEFAULT_HZ
    place = _virtual if any(e["clk"] is not None for e in raw) else _record_order
    out = []
    for e, (ts, dur, clock) in zip(raw, place(raw, hz), strict=True):
        if e["gpu"] is not None:
            e["args"].update(gpu_start=e["gpu"][0], gpu_end=e["gpu"][1])
        out.append({"name": e["name"], "cat": e.get("cat", e["name"]), "ph": "X", "ts": ts, "dur": dur, "pid": 1,
                    "tid": e["tid"], "args": {"record": e["record"], "clock": clock, **e["args"]}})
    if with_queues:
        return out, view.counter_hz, list(view.queues.values()), place is _virtual
    return out, view.counter_hz


def _virtual(raw: list[dict], hz: int):
    """(ts, dur, clock) of each slice on the GPUs' virtual clock: the timestamps the GPU wrote where there are some,
    else the span of the call on the clock the trace recorded."""
    last = 0.0
    for e in raw:
        span, clock = (e["gpu"], "gpu") if _within(e["gpu"], e["clk"]) else (e["clk"], "virtual")
        if span is None:  # a record without the clock in a trace that has it: where the previous slice ended
            yield last, 0.0, "record order"
            continue
        ts, dur = span[0] * 1e6 / hz, (span[1] - span[0]) * 1e6 / hz
        last = ts + dur
        yield ts, dur, clock


def _within(stamps: tuple[int, int] | None, call: tuple[int, int] | None) -> bool:
    """Whether the GPU's timestamps are of this submission: inside the doorbell call's span on the clock (work the GPU
    had not run by the end of the call -- lazy doorbells, hardware -- leaves the previous submission's stamps)."""
    return stamps is not None and (call is None or call[0] <= stamps[0] <= stamps[1] <= call[1])


def _record_order(raw: list[dict], hz: int):
    """(ts, dur, clock) of each slice of a trace without the virtual clock (recorded before it was, or on hardware):
    GPU-timed slices keep the GPU's spacing from the first one, the rest follow record order."""
    cursor, origin = 0.0, None
    for e in raw:
        if e["gpu"] is not None:
            start, end = e["gpu"]
            if origin is None:
                origin = (start, cursor)  # GPU tick `start` is placed at the current position
            ts = max(cursor, origin[1] + (start - origin[0]) * 1e6 / hz)
            dur, clock = (end - start) * 1e6 / hz, "gpu"
        else:
            ts, dur, clock = cursor, _FALLBACK_US, "record order"
        cursor = ts + dur
        yield ts, dur, clock


def _clock_note(ev: list[dict], hz: int | None, virtual: bool) -> dict:
    counts = {c: sum(e["args"]["clock"] == c for e in ev) for c in ("gpu", "virtual", "record order")}
    note = {"clock": "the GPUs' virtual clock: the timestamps the GPU wrote where there are some, else each call's "
                     "span on the clock the trace recorded" if virtual else
                     "gpu timestamps where found, else record order (the trace does not record the virtual clock)",
            "gpu_counter_hz": hz or _DEFAULT_HZ, "gpu_counter_hz_source": "AMDGPU_INFO_DEV_INFO" if hz else "assumed",
            "slices_gpu_timed": counts["gpu"], "slices_virtual_clock": counts["virtual"],
            "slices_record_order": counts["record order"]}
    if counts["record order"]:
        note["record_order_fallback"] = (f"slices without GPU timestamps or a recorded clock start where the previous "
                                         f"slice ended and last {_FALLBACK_US} us (their duration is not measured)")
    return note


def export(path, out_path) -> int:
    """Write the JSON; the number of slices."""
    ev, raw_view_hz, queues, virtual = timeline(path, with_queues=True)
    meta = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": _WAIT_TID, "args": {"name": "host waits"}}]
    meta += [{"name": "thread_name", "ph": "M", "pid": 1, "tid": q.qid + 1, "args": {"name": queue_track(q)}}
             for q in sorted(queues, key=lambda q: q.qid)]
    with open(out_path, "w") as f:
        json.dump({"traceEvents": meta + ev, "displayTimeUnit": "ms",
                   "otherData": _clock_note(ev, raw_view_hz, virtual)}, f)
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
