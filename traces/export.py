"""`simgpu trace export --perfetto`: dispatches, copies and waits as Chrome trace-event JSON.

Time is the trace's virtual clock: record number n starts at n microseconds and every slice lasts one
record (the simulator runs a queue synchronously inside the doorbell write that submitted the work, so the
record order is the execution order). GPU timestamps written to memory are not decoded yet.
"""

from __future__ import annotations

import json
import sys

from runtime.uapi import kfd
from traces.decode import fields
from traces.format import TraceError, TraceReader

_QUEUE_KIND = {kfd.KFD_IOC_QUEUE_TYPE_COMPUTE: "dispatch", kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: "dispatch",
               kfd.KFD_IOC_QUEUE_TYPE_SDMA: "copy", kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI: "copy",
               kfd.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: "copy"}
_WAIT_TID = 0


def events(path) -> list[dict]:
    """The trace's slices ("ph": "X"), in record order."""
    queues: dict[int, tuple[str, int]] = {}  # doorbell offset -> (kind, queue id)
    mappings: dict[int, int] = {}  # mapping id -> mmap offset
    out = []
    with TraceReader(path) as r:
        for n, _, rec in r:
            t = rec["t"]
            if t == "mmap" and "id" in rec:
                mappings[rec["id"]] = rec["offset"]
            elif t == "ioctl" and rec["req"] == kfd.AMDKFD_IOC_CREATE_QUEUE and "errno" not in rec:
                f_in, f_out = fields(rec["req"], rec["in"]), fields(rec["req"], rec["out"])
                kind = _QUEUE_KIND.get(f_in.get("queue_type"), "submit")
                queues[f_out.get("doorbell_offset", -1)] = (kind, f_out.get("queue_id", 0))
            elif t == "mmio" and rec["id"] in mappings:
                kind, qid = queues.get(mappings[rec["id"]] + rec["offset"], ("mmio", -1))
                out.append(_slice(kind, n, qid + 1, {"queue_id": qid, "wptr": rec["value"]}))
            elif t == "ioctl" and rec["req"] == kfd.AMDKFD_IOC_WAIT_EVENTS:
                f = fields(rec["req"], rec.get("out", rec["in"]))
                out.append(_slice("wait", n, _WAIT_TID, {"wait_result": f.get("wait_result"),
                                                        "num_events": f.get("num_events")}))
    return out


def _slice(name: str, record: int, tid: int, args: dict) -> dict:
    return {"name": name, "cat": name, "ph": "X", "ts": record, "dur": 1, "pid": 1, "tid": tid,
            "args": {"record": record, **args}}


def export(path, out_path) -> int:
    """Write the JSON; the number of slices."""
    ev = events(path)
    meta = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": _WAIT_TID, "args": {"name": "host waits"}}]
    with open(out_path, "w") as f:
        json.dump({"traceEvents": meta + ev, "displayTimeUnit": "ms",
                   "otherData": {"clock": "virtual: 1 us per trace record"}}, f)
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
