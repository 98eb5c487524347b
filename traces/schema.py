"""The schema of a trace (docs/traces.md "Header", "Records"): the type and range of every field of the header and
of each record type, and the references between records (a page run or an mmio names a live mapping, inside it).

`TraceReader` checks every record here as it reads it, so show, replay, diff, export and decode may trust what they
are handed: a field is present when the table says so, of its type, within its range. A record that does not fit is
a `SchemaError` naming the field; the reader makes it a TraceError naming the record and byte offset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mockgpu.devmem import DOORBELL_PAGE, MAX_GPUS
from runtime.uapi.kfd import ioc_size
from traces.reads import KINDS, MAX_READ

PAGE = 4096  # page runs are in 4 KiB pages (traces.shadow)
U32, U64 = (1 << 32) - 1, (1 << 64) - 1
MAX_VA = 1 << 64
MAX_VRAM = 1 << 40  # a header claiming more VRAM than this is not a recorded machine


class SchemaError(Exception):
    """A header or record field that does not fit the schema: `.field` is its path ("w[2][0]")."""

    def __init__(self, fld: str, why: str):
        super().__init__(f"field {fld}: {why}")
        self.field, self.why = fld, why


Check = Callable[[object, str], None]


def _kind(v) -> str:
    return "nil" if v is None else type(v).__name__


def integer(lo: int, hi: int) -> Check:
    """An int in [lo, hi] (bool is not an int here: msgpack keeps them apart)."""
    def check(v, path):
        if type(v) is not int:
            raise SchemaError(path, f"expected an integer, got {_kind(v)}")
        if not lo <= v <= hi:
            raise SchemaError(path, f"{v} is out of range [{lo}, {hi}]")
    return check


def one_of(*values: int) -> Check:
    """An int among `values`."""
    def check(v, path):
        integer(min(values), max(values))(v, path)
        if v not in values:
            raise SchemaError(path, f"{v} is not one of {', '.join(map(str, values))}")
    return check


def of_type(t: type, name: str) -> Check:
    """A value of exactly type t (str, bytes, bool)."""
    def check(v, path):
        if type(v) is not t:
            raise SchemaError(path, f"expected {name}, got {_kind(v)}")
    return check


def optional(inner: Check) -> Check:
    """nil or what `inner` accepts."""
    def check(v, path):
        if v is not None:
            inner(v, path)
    return check


def either(a: Check, b: Check, what: str) -> Check:
    """What `a` or `b` accepts (`what` names both in the error)."""
    def check(v, path):
        try:
            a(v, path)
        except SchemaError:
            try:
                b(v, path)
            except SchemaError:
                raise SchemaError(path, f"expected {what}, got {_kind(v)} {v!r:.40}") from None
    return check


def among(*values: str) -> Check:
    """A string among `values`."""
    def check(v, path):
        of_type(str, "a string")(v, path)
        if v not in values:
            raise SchemaError(path, f"{v!r:.40} is not one of {', '.join(values)}")
    return check


def short_bytes(most: int) -> Check:
    """Bytes, at most `most` of them."""
    def check(v, path):
        of_type(bytes, "bytes")(v, path)
        if len(v) > most:
            raise SchemaError(path, f"{len(v)} bytes, more than {most}")
    return check


def list_of(item: Check) -> Check:
    """A list whose every item `item` accepts."""
    def check(v, path):
        if type(v) is not list:
            raise SchemaError(path, f"expected a list, got {_kind(v)}")
        for i, x in enumerate(v):
            item(x, f"{path}[{i}]")
    return check


def row(*items: Check) -> Check:
    """A list of exactly len(items) values, each checked by its own item."""
    def check(v, path):
        if type(v) is not list:
            raise SchemaError(path, f"expected a list of {len(items)}, got {_kind(v)}")
        if len(v) != len(items):
            raise SchemaError(path, f"expected {len(items)} items, got {len(v)}")
        for i, (x, c) in enumerate(zip(v, items, strict=True)):
            c(x, f"{path}[{i}]")
    return check


def map_of(key: Check, value: Check) -> Check:
    """A map whose every key and value are accepted."""
    def check(v, path):
        if type(v) is not dict:
            raise SchemaError(path, f"expected a map, got {_kind(v)}")
        for k, x in v.items():
            key(k, f"{path} key")
            value(x, f"{path}[{k!r}]")
    return check


def mapping(fields: dict[str, Check]) -> Check:
    """A map holding at least `fields` (more keys are allowed: a finding carries many)."""
    def check(v, path):
        if type(v) is not dict:
            raise SchemaError(path, f"expected a map, got {_kind(v)}")
        for k, c in fields.items():
            if k not in v:
                raise SchemaError(f"{path}.{k}", "missing")
            c(v[k], f"{path}.{k}")
    return check


STR, BYTES, BOOL = of_type(str, "a string"), of_type(bytes, "bytes"), of_type(bool, "a boolean")
INT = integer(-(1 << 63), U64)
UINT, ADDR = integer(0, U64), integer(0, U64)
FD = integer(-1, (1 << 31) - 1)
ERRNO = integer(1, 4095)
MAPPING_ID = integer(0, U32)
GPU_ID = either(integer(0, U32), of_type(str, ""), "a gpu_id or a PCI bus id")  # AM drivers name GPUs by bus
LENGTH = integer(1, MAX_VA)
RUNS = list_of(row(MAPPING_ID, integer(0, MAX_VA // PAGE), BYTES))  # [mapping id, first page, bytes]
USER = list_of(row(ADDR, BYTES))  # [address, bytes] of the caller's memory
FINDING = mapping({"check": STR, "severity": STR, "what": STR, "kernel": STR, "pc": UINT, "message": STR,
                   "text": STR})


@dataclass(frozen=True)
class Record:
    """A record type's fields: always there; there unless the call failed ("errno" present); may be there."""

    always: dict[str, Check]
    success: dict[str, Check] = field(default_factory=dict)
    maybe: dict[str, Check] = field(default_factory=dict)


_SYNC = {"w": RUNS, "g": RUNS}  # host writes before, GPU/driver writes during the call
# A concurrent client's doorbell stores the driver acted on during the call, straight from a doorbell page.
DOORBELL_STORES = {"doorbells": list_of(row(GPU_ID, integer(0, DOORBELL_PAGE // 8 - 1), UINT))}
# The host's stores a GPU read during the call (traces.reads): [read number, gpu_id, kind, VA, bytes read, runs].
READS = {"reads": list_of(row(integer(0, U32), integer(0, U32), among(*KINDS), ADDR, short_bytes(MAX_READ), RUNS))}
MIDCALL = DOORBELL_STORES | READS  # what a call that may run the GPU can carry besides w and g
RECORDS: dict[str, Record] = {
    "open": Record({"path": STR, "flags": integer(0, U32)}, {"fd": FD}),
    "close": Record({"fd": FD}),
    "ioctl": Record({"fd": FD, "req": integer(0, U32), "name": STR, "in": BYTES, "out": BYTES, **_SYNC},
                    {"ret": INT}, {"u": USER, "uw": USER, "shared": list_of(row(MAPPING_ID, ADDR, LENGTH)),
                                   "sw": RUNS, **MIDCALL}),
    "mmap": Record({"fd": FD, "length": LENGTH, "prot": integer(0, 7), "flags": integer(0, U32), "offset": UINT,
                    "addr": optional(ADDR)}, {"id": MAPPING_ID, "result": ADDR}, {"g": RUNS}),
    "munmap": Record({"id": MAPPING_ID}),
    "read_text": Record({"path": STR}, {"text": STR}),
    "listdir": Record({"path": STR}, {"entries": list_of(STR)}),
    "exists": Record({"path": STR}, {"result": BOOL}),
    "mmio": Record({"id": MAPPING_ID, "offset": integer(0, MAX_VA), "value": UINT, "size": one_of(1, 2, 4, 8),
                    **_SYNC}, {}, MIDCALL),
    "mmio_read": Record({"id": MAPPING_ID, "offset": integer(0, MAX_VA), "size": one_of(1, 2, 4, 8), **_SYNC},
                        {"value": UINT}, MIDCALL),
    "report": Record({"gpu_id": GPU_ID}, {"text": STR, "fault": STR}),
    "note": Record({"what": STR}, {}, {"gpu_id": GPU_ID, "base": ADDR, "size": UINT, "va": ADDR, "nbytes": UINT,
                                       "name": STR, "kernels": list_of(row(STR, ADDR, ADDR))}),
    "sanitize": Record({"gpu_id": GPU_ID, "checks": optional(STR)}, {"on": list_of(STR),
                                                                     "findings": list_of(FINDING)}),
    "progress": Record({"poll_all": BOOL, **_SYNC}, {"moved": BOOL}, MIDCALL),
    "pread": Record({"fd": FD, "length": integer(0, U32), "offset": UINT}, {"data": BYTES}),
    "pwrite": Record({"fd": FD, "data": BYTES, "offset": UINT}, {"ret": INT}),
}
RECORD_TYPES = tuple(RECORDS)
# On every record of a simulator's trace: each GPU's virtual timestamp counter after the call, by gpu_id.
CLOCKS = map_of(integer(0, U32), UINT)

HEADER = Record({"format": integer(1, U32), "os": STR}, {},
                {"simgpu": STR, "arch": STR, "devices": integer(0, MAX_GPUS), "vram": integer(PAGE, MAX_VRAM),
                 "concurrent": BOOL})


def _fields(rec: dict, spec: Record, failed: bool) -> None:
    required, present = (spec.always, spec.success | spec.maybe) if failed else (spec.always | spec.success, spec.maybe)
    for k, c in required.items():
        if k not in rec:
            raise SchemaError(k, "missing")
        c(rec[k], k)
    for k, c in present.items():
        if k in rec:
            c(rec[k], k)


def check_header(header: dict) -> None:
    """SchemaError unless the header fits HEADER."""
    _fields(header, HEADER, failed=False)


class Validator:
    """Checks records in file order: each against its type's fields, and its references against the mappings live
    at that point (mapping id -> length; `shadowed` ones are those whose pages a run may name)."""

    def __init__(self):
        self.live: dict[int, int] = {}
        self.shadowed: set[int] = set()

    def check(self, rec: dict) -> None:
        """SchemaError unless `rec` (a map with a known "t") fits the schema and the mappings live before it."""
        if "errno" in rec:
            ERRNO(rec["errno"], "errno")
        if "clk" in rec:
            CLOCKS(rec["clk"], "clk")
        _fields(rec, RECORDS[rec["t"]], failed="errno" in rec)
        if "reads" in rec:  # taken during the call: mappings live before it (not the USERPTR pages it shares)
            self._reads(rec["reads"])
        getattr(self, "_" + rec["t"], self._runs)(rec)

    def _reads(self, reads: list) -> None:
        """Read numbers increase; each entry's runs name live, tracked mappings (as w and g do)."""
        last = -1
        for i, entry in enumerate(reads):
            if entry[0] <= last:
                raise SchemaError(f"reads[{i}][0]", f"read {entry[0]} does not follow read {last}")
            last = entry[0]
            self._runs({f"reads[{i}][5]": entry[5]}, (f"reads[{i}][5]",))

    def _runs(self, rec: dict, keys=("w", "g")) -> None:
        for k in keys:
            for i, (mid, first, data) in enumerate(rec.get(k, ())):
                if mid not in self.shadowed:
                    raise SchemaError(f"{k}[{i}][0]", f"mapping {mid} is not a live, tracked mapping")
                if first * PAGE + len(data) > self.live[mid]:
                    raise SchemaError(f"{k}[{i}]", f"{len(data)} bytes at page {first} run past the end of mapping "
                                                   f"{mid} ({self.live[mid]} bytes)")

    def _mapping(self, rec: dict) -> None:
        if rec["id"] not in self.live:
            raise SchemaError("id", f"mapping {rec['id']} is not live")

    def _mmio(self, rec: dict) -> None:
        self._mapping(rec)
        self._runs(rec)

    _mmio_read = _mmio

    def _munmap(self, rec: dict) -> None:
        self._mapping(rec)
        del self.live[rec["id"]]
        self.shadowed.discard(rec["id"])

    def _mmap(self, rec: dict) -> None:
        if "errno" in rec:
            return
        self.live[rec["id"]] = rec["length"]
        self.shadowed.discard(rec["id"])
        if "g" in rec:  # the recorder shadows every mapping but doorbell pages, and says so with "g"
            self.shadowed.add(rec["id"])
        self._runs(rec, ("g",))

    def _ioctl(self, rec: dict) -> None:
        size = ioc_size(rec["req"])
        for k in ("in", "out"):
            if len(rec[k]) != size:
                raise SchemaError(k, f"{len(rec[k])} bytes, but request {rec['req']:#x} carries {size}")
        self._runs(rec, ("w",))
        for mid, _addr, length in rec.get("shared", ()):  # USERPTR pages, tracked from the call on
            self.live[mid] = length
            self.shadowed.add(mid)
        self._runs(rec, ("g", "sw"))
