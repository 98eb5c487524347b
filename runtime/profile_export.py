"""Perfetto (Chrome trace-event JSON) of profiled launches (runtime.profile.KernelProfile): one track per queue with
a slice per kernel, a counter track per performance counter, and from thread traces a track per wave: the waves of
the traced SIMD with a slice per instruction (decoded from the trace and mapped onto the kernel's code), the
others with one slice from WAVESTART to WAVEEND. Times in microseconds of GPU time: kernel slices from the
100 MHz timestamps, wave slices from the trace's core-clock cycles (2500 MHz on the simulated gfx1100).
"""

from __future__ import annotations

import json

from simgpu import isa
from simgpu.hw import sqtt
from simgpu.isa import DecodeError

TIMESTAMP_MHZ = 100
CORE_MHZ = 2500
INSTRUCTION_TOKENS = ("INST", "VALUINST", "IMMEDIATE")


def wave_timelines(rec, unit: tuple[int, int, int] = (0, 0, 0)) -> list[dict]:
    """The waves of a record's traces: {se, sa, wgp, simd, slot, start, end, insts: [(time, pc, text)]}; the
    waves of `unit` (sa, wgp, simd, the SIMD the profiler traced) carry their instructions."""
    out = []
    for se, data in enumerate(rec.sqtt):
        if not data:
            continue
        live: dict[tuple, dict] = {}
        for p in sqtt.decode(data):
            f = p.fields
            if p.name == "WAVESTART":
                key = (f["sa"], f["wgp"], f["simd"], f["wave"])
                live[key] = {"se": se, "sa": f["sa"], "wgp": f["wgp"], "simd": f["simd"], "slot": f["wave"],
                             "start": p.time, "end": None, "insts": [], "pc": rec.code_va}
            elif p.name == "WAVEEND":
                w = live.pop((f["sa"], f["wgp"], f["simd"], f["wave"]), None)
                if w is not None:
                    w["end"] = p.time
                    out.append(w)
            elif p.name in INSTRUCTION_TOKENS:
                w = live.get((*unit, f["wave"]))
                if w is not None:
                    _step(rec, w, p)
        out.extend(live.values())
    return out


def _step(rec, w: dict, p) -> None:
    """Map an instruction token of wave `w` onto the instruction at its PC and move the PC on."""
    inst = _inst(rec, w["pc"])
    while inst is not None and inst.mnemonic == "s_delay_alu":  # not traced by the SQ
        w["pc"] += inst.size
        inst = _inst(rec, w["pc"])
    if inst is None:
        w["insts"].append((p.time, w["pc"], "?"))
        return
    w["insts"].append((p.time, w["pc"], inst.text()))
    step = inst.size
    if p.name == "INST" and p.fields["op"] == sqtt.InstOp.JUMP and "simm16" in inst.fields:
        simm = inst.fields["simm16"] & 0xFFFF
        step += 4 * (simm - 0x10000 if simm & 0x8000 else simm)
    w["pc"] += step


def _inst(rec, pc: int):
    off = pc - rec.code_base
    if not 0 <= off < len(rec.code):
        return None
    try:
        return isa.decode(rec.code[off:off + 16], true16=None)  # (the codec loads here: simgpu.isa)
    except DecodeError:
        return None


def perfetto(records: list, unit: tuple[int, int, int] = (0, 0, 0)) -> dict:
    """The Chrome trace-event JSON object of profiled launches."""
    events: list[dict] = [_meta(1, None, "process_name", "GPU kernels"), _meta(2, None, "process_name", "counters")]
    queues: dict[str, int] = {}
    for rec in records:
        tid = queues.setdefault(rec.queue, len(queues) + 1)
        start, dur = rec.start / TIMESTAMP_MHZ, max(rec.end - rec.start, 1) / TIMESTAMP_MHZ
        events.append({"ph": "X", "pid": 1, "tid": tid, "name": rec.name, "ts": start, "dur": dur, "cat": "kernel",
                       "args": {**rec.counters, **{k: round(v, 3) for k, v in rec.metrics().items()}}})
        for name, value in rec.counters.items():
            events.append({"ph": "C", "pid": 2, "name": name, "ts": start, "args": {"value": value}})
            events.append({"ph": "C", "pid": 2, "name": name, "ts": start + dur, "args": {"value": 0}})
    for q, tid in queues.items():
        events.append(_meta(1, tid, "thread_name", f"queue {q}"))
    pid = 3
    for rec in records:
        if not any(rec.sqtt):
            continue
        events.append(_meta(pid, None, "process_name", f"waves of {rec.name}"))
        for tid, w in enumerate(wave_timelines(rec, unit), 1):
            events.append(_meta(pid, tid, "thread_name",
                                f"SE{w['se']} SA{w['sa']} WGP{w['wgp']} SIMD{w['simd']} wave {w['slot']}"))
            end = w["end"] if w["end"] is not None else (w["insts"][-1][0] + 1 if w["insts"] else w["start"] + 1)
            events.append({"ph": "X", "pid": pid, "tid": tid, "name": "wave", "cat": "wave",
                           "ts": w["start"] / CORE_MHZ, "dur": max(end - w["start"], 1) / CORE_MHZ})
            times = [t for t, _, _ in w["insts"]] + [end]
            for (t, pc, text), nxt in zip(w["insts"], times[1:], strict=False):
                events.append({"ph": "X", "pid": pid, "tid": tid, "name": text.split(" ")[0], "cat": "instruction",
                               "ts": t / CORE_MHZ, "dur": max(nxt - t, 1) / CORE_MHZ,
                               "args": {"pc": hex(pc), "instruction": text}})
        pid += 1
    return {"traceEvents": events, "displayTimeUnit": "ns",
            "otherData": {"source": "simgpu runtime.profile", "timestamp_mhz": TIMESTAMP_MHZ, "core_mhz": CORE_MHZ}}


def _meta(pid: int, tid: int | None, kind: str, name: str) -> dict:
    e = {"ph": "M", "pid": pid, "name": kind, "args": {"name": name}}
    if tid is not None:
        e["tid"] = tid
    return e


def write_perfetto(records: list, path: str) -> None:
    """Write the Perfetto JSON of `records` to `path`."""
    with open(path, "w") as f:
        json.dump(perfetto(records), f)
