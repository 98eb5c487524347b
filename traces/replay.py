"""`simgpu trace replay`: feed a trace's calls and host memory writes to a fresh MockOS and check, record by
record, that every result and every page written during a call matches the recording."""

from __future__ import annotations

import errno as _errno
import sys
from dataclasses import dataclass, field

import numpy as np

from mockgpu.memory import KfdError
from runtime.uapi import kfd
from simgpu.hw.chips import CHIPS
from traces.decode import field_at, ioctl_name, ioctl_struct
from traces.format import TraceError, TraceReader
from traces.reads import ReadFeed
from traces.shadow import PAGE, Shadows, by_page, hex_at, unmatched_write

# Pointer fields of ioctl arguments: CPU addresses that are translated between the recording and the replay.
POINTER_FIELDS = {"device_ids_array_ptr", "events_ptr", "kfd_process_device_apertures_ptr"}
# What a simulator cannot reproduce of a hardware recording: named, counted, never compared.
HW_SKIPS = ("sysfs contents", "mmap addresses", "GET_CLOCK_COUNTERS outputs", "device reports")


@dataclass
class Divergence:
    """The first place where the replay differs from the recording."""

    record: int
    offset: int
    call: str
    field: str
    expected: object
    got: object

    def __str__(self) -> str:
        return (f"divergence at record {self.record} (byte offset {self.offset}): {self.call}: {self.field}: "
                f"expected {self.expected}, got {self.got}")


def _first_difference(a, b) -> tuple[str, str]:
    """Short excerpts of two values around where they first differ (whole reprs when short)."""
    if isinstance(a, str) and isinstance(b, str):
        la, lb = a.splitlines(), b.splitlines()
        i = next((i for i, (x, y) in enumerate(zip(la, lb, strict=False)) if x != y), min(len(la), len(lb)))
        return (f"line {i + 1} {la[i]!r}" if i < len(la) else "(end)"), (f"line {i + 1} {lb[i]!r}" if i < len(lb)
                                                                          else "(end)")
    return repr(a)[:200], repr(b)[:200]


class RecordedMemory:
    """The recorded process's own memory, as far as the driver touched it: reads are answered from the current
    ioctl record's "u" (what the driver read there), writes are kept to compare with its "uw"."""

    def __init__(self):
        self.reads: list = []
        self.writes: list[list] = []

    def start(self, rec: dict) -> None:
        """Serve the pointer arguments of this record."""
        self.reads, self.writes = rec.get("u", []), []

    def read(self, addr: int, n: int) -> bytes:
        for base, data in self.reads:
            if base <= addr and addr + n <= base + len(data):
                return bytes(data[addr - base:addr - base + n])
        raise KfdError(_errno.EFAULT, f"the recording holds no user memory at {addr:#x} (+{n:#x})")

    def write(self, addr: int, data: bytes) -> None:
        self.writes.append([addr, bytes(data)])

    def share(self, addr: int, size: int):
        """USERPTR pages: fresh here; the record's "sw" fills them (Replayer._ioctl)."""
        return np.zeros(size, np.uint8)


def replay_arch(header: dict) -> str:
    """The architecture(s) a replay's MockOS gets: the recorded machine's when simgpu simulates them (else gfx1100,
    as before architectures were recorded; never SIMGPU_ARCH: a replay follows its trace)."""
    arch = str(header.get("arch") or "")
    return arch if arch and all(a in CHIPS for a in arch.split(",")) else "gfx1100"


@dataclass
class Replayer:
    """Replays records one at a time against `os` (default: a MockOS shaped like the recorded machine)."""

    header: dict
    os: object = None
    fds: dict = field(default_factory=dict)
    maps: dict = field(default_factory=dict)
    addrs: dict = field(default_factory=dict)  # mapping id -> (recorded addr, length, replay addr)
    shadows: Shadows = field(default_factory=Shadows)
    skipped: dict = field(default_factory=dict)

    user: RecordedMemory = field(default_factory=RecordedMemory)

    def __post_init__(self):
        if self.os is None:
            from mockgpu import MockOS
            # Recorded addresses mean nothing in this process: pointer arguments outside the recorded mappings are
            # answered from the trace, and mappings are never placed in this process's own memory.
            self.os = MockOS(devices=self.header.get("devices") or 1, vram_size=self.header.get("vram"),
                             user=self.user, place=False, arch=replay_arch(self.header))
        self.hw = self.header.get("os") != "MockOS"
        self.os.doorbell_stores()  # keep the doorbells the replay's driver acts on from a doorbell page
        self.concurrent = bool(self.header.get("concurrent"))
        self.feed = ReadFeed(self.shadows, self.concurrent)  # the host's stores the GPU read during a call
        self.os.observe_reads(self.feed)

    def _skip(self, what: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1

    def step(self, number: int, offset: int, rec: dict) -> Divergence | None:
        """Replay one record; the divergence, if any."""
        self._where = (number, offset)
        return getattr(self, "_" + rec["t"])(rec)

    def _div(self, call: str, fld: str, expected, got) -> Divergence:
        return Divergence(*self._where, call, fld, expected, got)

    def _run(self, call: str, rec: dict, fn, *args):
        """Call fn; (result, divergence) where a differing errno is the divergence."""
        try:
            result, err = fn(*args), None
        except OSError as e:
            result, err = None, e.errno
        if err != rec.get("errno"):
            return result, self._div(call, "errno", rec.get("errno") or "success", err or "success")
        return result, None

    def _run_gpu(self, call: str, rec: dict, fn, *args):
        """_run for a call that may run the GPU: a read of the call's recorded `reads` that this GPU did not make the
        same way is the divergence (it comes before the results that differ because of it)."""
        result, d = self._run(call, rec, fn, *args)
        wrong = self.feed.finish()
        return result, (self._div(call, *wrong) if wrong is not None else d)

    # ---- record types -----------------------------------------------------------------------------
    def _open(self, rec):
        fd, d = self._run(f"open({rec['path']})", rec, self.os.open, rec["path"], rec["flags"])
        if fd is not None and "fd" in rec:
            self.fds[rec["fd"]] = fd
        return d

    def _close(self, rec):
        return self._run(f"close({rec['fd']})", rec, self.os.close, self.fds.pop(rec["fd"], rec["fd"]))[1]

    def _sysfs(self, rec, kind: str, key: str):
        call = f"{kind}({rec['path']})"
        got, d = self._run(call, rec, getattr(self.os, kind), rec["path"])
        if self.hw:
            self._skip("sysfs contents")
            return None
        if d is None and key in rec and got != rec[key]:
            return self._div(call, key, *_first_difference(rec[key], got))
        return d

    def _read_text(self, rec):
        return self._sysfs(rec, "read_text", "text")

    def _listdir(self, rec):
        return self._sysfs(rec, "listdir", "entries")

    def _exists(self, rec):
        return self._sysfs(rec, "exists", "result")

    def _note(self, rec):
        self.os.annotate({k: v for k, v in rec.items() if k != "t"})  # the runtime's notes change nothing
        return None

    def _sanitize(self, rec):
        """Sanitizers turned on in the recording are turned on again; their findings must be the same."""
        call = f"sanitize({rec['gpu_id']}, {rec.get('checks')!r})"
        got, d = self._run(call, rec, self.os.sanitize, rec["gpu_id"], rec.get("checks"))
        if self.hw:
            self._skip("sanitizer findings")
            return None
        if d is None and got is not None and got["findings"] != rec.get("findings", []):
            return self._div(call, "findings", rec.get("findings", []), got["findings"])
        return d

    def _report(self, rec):
        call = f"device_report({rec['gpu_id']})"
        got, d = self._run(call, rec, self.os.device_report, rec["gpu_id"])
        if self.hw:
            self._skip("device reports")
            return None
        for key in ("fault", "summary", "text"):
            if d is None and key in rec and getattr(got, key) != rec[key]:
                d = self._div(call, key, *_first_difference(rec[key], getattr(got, key)))
        return d

    def _mmap(self, rec):
        call = f"mmap(fd={rec['fd']}, length={rec['length']:#x}, offset={rec['offset']:#x})"
        fd = self.fds.get(rec["fd"], rec["fd"])
        m, d = self._run(call, rec, self.os.mmap, fd, rec["length"], rec["prot"], rec["flags"], rec["offset"],
                         rec["addr"])
        if d is not None or m is None:
            return d
        mid = rec["id"]
        self.maps[mid] = m
        self.addrs[mid] = (rec["result"], rec["length"], m.addr)
        if m.addr != rec["result"]:
            if not self.hw:
                return self._div(call, "address", hex(rec["result"]), hex(m.addr))
            self._skip("mmap addresses")
        if "g" in rec:
            self.shadows.track(mid, m.view)
            return self._compare_writes(call, rec["g"], self.shadows.collect([mid]))
        return None

    def _munmap(self, rec):
        self.shadows.untrack(rec["id"])
        m = self.maps.pop(rec["id"])
        return self._run(f"munmap({rec['id']})", rec, self.os.munmap, m)[1]

    def _mmio(self, rec):
        call = f"mmio_write(mapping {rec['id']}, offset {rec['offset']:#x}, value {rec['value']:#x})"
        if (d := self._host_writes(rec, call)) is not None:
            return d
        _, d = self._run_gpu(call, rec, self.os.mmio_write, self.maps[rec["id"]], rec["offset"], rec["value"],
                             rec["size"])
        return d or self._gpu_writes(call, rec)

    def _mmio_read(self, rec):
        call = f"mmio_read(mapping {rec['id']}, offset {rec['offset']:#x})"
        if (d := self._host_writes(rec, call)) is not None:
            return d
        got, d = self._run_gpu(call, rec, self.os.mmio_read, self.maps[rec["id"]], rec["offset"], rec["size"])
        if d is None and "value" in rec and got != rec["value"]:
            d = self._div(call, "value", hex(rec["value"]), hex(got))
        return d or self._gpu_writes(call, rec)

    def _pread(self, rec):
        call = f"pread(fd={rec['fd']}, {rec['length']} bytes at {rec['offset']:#x})"
        got, d = self._run(call, rec, self.os.pread, self.fds.get(rec["fd"], rec["fd"]), rec["length"], rec["offset"])
        if d is None and "data" in rec and got != rec["data"]:
            d = self._div(call, "data", *_first_difference(rec["data"], got))
        return d

    def _pwrite(self, rec):
        call = f"pwrite(fd={rec['fd']}, {len(rec['data'])} bytes at {rec['offset']:#x})"
        got, d = self._run(call, rec, self.os.pwrite, self.fds.get(rec["fd"], rec["fd"]), rec["data"], rec["offset"])
        if d is None and "ret" in rec and got != rec["ret"]:
            d = self._div(call, "ret", rec["ret"], got)
        return d

    def _ioctl(self, rec):
        req = rec["req"]
        call = f"ioctl({ioctl_name(req)})"
        if (d := self._host_writes(rec, call)) is not None:
            return d
        buf, translated = self._translate(req, bytearray(rec["in"]))
        self.user.start(rec)
        _, d = self._run_gpu(call, rec, self.os.ioctl, self.fds.get(rec["fd"], rec["fd"]), req, buf)
        if d is None and "out" in rec:
            d = self._compare_out(call, req, rec["out"], bytes(buf), translated)
        if d is None and self.user.writes != [list(w) for w in rec.get("uw", [])]:
            d = self._div(call, "user memory written", rec.get("uw", []), self.user.writes)
        for mid, addr, length in rec.get("shared", []) if d is None else ():  # USERPTR pages, tracked from here on
            area = self.os.space.area(addr)
            pages = area.buf if area is not None else None
            if pages is None or len(pages) < length:  # the recorded runs of these pages must fit them
                return self._div(call, "USERPTR pages shared", f"{length:#x} bytes at {addr:#x}",
                                 f"{len(pages):#x} bytes" if pages is not None else "none")
            self.shadows.track(mid, pages)
        self.shadows.apply(rec.get("sw", []), seen=True)
        return d or self._gpu_writes(call, rec)

    def _progress(self, rec):
        call = f"progress(poll_all={rec.get('poll_all')})"
        if (d := self._host_writes(rec, call)) is not None:
            return d
        moved, d = self._run_gpu(call, rec, self.os.progress, rec.get("poll_all", True))
        if d is None and bool(moved) != bool(rec.get("moved")):
            d = self._div(call, "moved", rec.get("moved"), moved)
        return d or self._gpu_writes(call, rec)

    # ---- helpers ----------------------------------------------------------------------------------
    def _host_writes(self, rec, call: str) -> Divergence | None:
        """The host's stores before the call: its memory writes ("w", not the GPU's) and the doorbells it stored
        straight into a doorbell page that the recorded driver acted on during the call ("doorbells"), which the
        replay's driver then finds there as the recorded one did."""
        self.shadows.apply(rec.get("w", []), seen=True)
        self.feed.start(rec)
        for gpu_id, slot, value in rec.get("doorbells", []):
            gpu = self.os.simulator(gpu_id) if hasattr(self.os, "simulator") else None
            if gpu is None:
                return self._div(call, "doorbell store", f"a GPU {gpu_id}", "none")
            gpu.doorbells[slot] = value
        return None

    def _translate(self, req: int, buf: bytearray) -> tuple[bytearray, set]:
        """Recorded fds and CPU addresses inside the argument -> this replay's."""
        cls, done = ioctl_struct(req), set()
        if cls is None or len(buf) < len(bytes(cls())):
            return buf, done
        args = cls.from_buffer(buf)
        if req == kfd.AMDKFD_IOC_ACQUIRE_VM:
            args.drm_fd = self.fds.get(args.drm_fd, args.drm_fd)
        for name in POINTER_FIELDS & {f[0] for f in cls._fields_}:
            old = getattr(args, name)
            for rec_addr, length, new_addr in self.addrs.values():
                if rec_addr <= old < rec_addr + length and rec_addr != new_addr:
                    setattr(args, name, old - rec_addr + new_addr)
                    done.add(name)
        del args  # release the export of buf
        return buf, done

    def _compare_out(self, call: str, req: int, expected: bytes, got: bytes, translated: set):
        if req == kfd.AMDKFD_IOC_GET_CLOCK_COUNTERS and self.hw:
            self._skip("GET_CLOCK_COUNTERS outputs")
            return None
        for i in range(min(len(expected), len(got))):
            if expected[i] != got[i]:
                name = field_at(req, i)
                if name in translated or (name == "drm_fd" and req == kfd.AMDKFD_IOC_ACQUIRE_VM):
                    continue
                return self._div(call, f"output field {name}", self._value(req, expected, name),
                                 self._value(req, got, name))
        if len(expected) != len(got):
            return self._div(call, "output length", len(expected), len(got))
        return None

    @staticmethod
    def _value(req: int, data: bytes, name: str):
        from traces.decode import fields
        v = fields(req, data).get(name)
        return hex(v) if isinstance(v, int) and v > 4096 else v

    def _gpu_writes(self, call: str, rec: dict):
        """Compare what changed during the call (since its last recorded read, traces.reads) with the record's "g". In
        a concurrent recording (simgpu run) the caller may have stored into the same pages meanwhile: every byte the
        replayed GPU changed must hold the recorded value, and the recorded pages are then taken as they were (the
        rest was the caller's stores)."""
        stores = self.os.doorbell_stores() or []
        if stores != rec.get("doorbells", []):
            return self._div(call, "doorbells acted on from a doorbell page", rec.get("doorbells", []), stores)
        if not self.concurrent:
            return self._compare_writes(call, rec.get("g", []), self.shadows.collect())
        bad = unmatched_write(self.shadows, rec.get("g", []))
        if bad is not None:
            mid, at, want, got = bad
            return self._div(call, f"memory written during the call: mapping {mid} offset {at:#x}",
                             hex_at(want, at % PAGE), hex_at(got, at % PAGE))
        self.shadows.apply(rec.get("g", []), seen=True)
        return None

    def _compare_writes(self, call: str, expected: list, got: list):
        e, g = by_page(expected), by_page(got)
        for key in sorted(e.keys() | g.keys()):
            a, b = e.get(key, b""), g.get(key, b"")
            if a != b:
                at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
                mid, page = key
                return self._div(call, f"memory written during the call: mapping {mid} offset {page * PAGE + at:#x}",
                                 hex_at(a, at), hex_at(b, at))
        return None


def replay(path, out=None) -> tuple[Divergence | None, int]:
    """Replay a trace file; (first divergence or None, records replayed)."""
    out = out or sys.stdout
    with TraceReader(path) as r:
        rp, n = None, 0
        for number, offset, rec in r:
            rp = rp or Replayer(r.header)  # the simulated machine is built once a record has been read and checked
            d = rp.step(number, offset, rec)
            n = number + 1
            if d is not None:
                return d, n
    if rp is not None and rp.skipped:
        print("not compared (a simulator cannot reproduce them): " +
              ", ".join(f"{k} x{v}" for k, v in sorted(rp.skipped.items())), file=out)
    return None, n


def replay_main(path: str, out=None) -> int:
    """CLI: 0 when the replay matches, 1 at a divergence, 2 for an unreadable trace."""
    out = out or sys.stdout
    try:
        d, n = replay(path, out)
    except TraceError as e:
        print(f"simgpu trace replay: {path}: {e}", file=sys.stderr)
        return 2
    if d is not None:
        print(str(d), file=out)
        return 1
    print(f"replayed {n} records: no divergence", file=out)
    return 0
