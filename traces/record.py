"""RecordingOS: wraps any `OS` and writes every call through the seam to a trace (docs/traces.md).

At each point where the GPU can observe host memory (every ioctl, mmio_write and mmio_read) the host's writes to
tracked mappings since the previous point are recorded as page runs ("w"); after the call, what changed
during it (the GPU or the driver writing) is recorded too ("g"). Tracked: every mapping except /dev/kfd
doorbell pages, whose stores go through mmio_write. The driver's report (device_report) is forwarded and
recorded like any other call; so is `progress`, the process-level server running the GPUs between a client's calls.
An AM driver's traffic is the same records: pread/pwrite of PCI config space and sysfs `enable`, mmaps of the BAR
files (BAR0's VRAM windows tracked like any mapping), mmio_read/mmio_write of registers and doorbells.
"""

from __future__ import annotations

import atexit
import errno as _errno
import os

import simgpu
from runtime.os import OS, TOPOLOGY, DeviceReport, Mapping
from traces.decode import ioctl_name
from traces.format import TraceWriter
from traces.reads import ReadLog
from traces.shadow import Shadows


def describe_os(inner: OS) -> dict:
    """Header facts about the machine behind `inner`, read through the seam: OS kind, arch (each GPU's,
    comma-separated, when they differ), GPU count and the first GPU's VRAM size (which a replay gives its MockOS)."""
    info = {"simgpu": simgpu.__version__ if hasattr(simgpu, "__version__") else "0.1.0",
            "os": type(inner).__name__, "arch": "unknown", "devices": 0}
    try:
        gpus = []
        for n in sorted(inner.listdir(f"{TOPOLOGY}/nodes"), key=int):
            if int(inner.read_text(f"{TOPOLOGY}/nodes/{n}/gpu_id").strip() or 0):
                gpus.append(n)
        info["devices"] = len(gpus)
        if gpus:
            archs = []
            for n in gpus:
                props = inner.read_text(f"{TOPOLOGY}/nodes/{n}/properties").split()
                v = int(props[props.index("gfx_target_version") + 1])
                archs.append(f"gfx{v // 10000}{(v // 100) % 100:x}{v % 100:x}")
            info["arch"] = archs[0] if len(set(archs)) == 1 else ",".join(archs)
            bank = inner.read_text(f"{TOPOLOGY}/nodes/{gpus[0]}/mem_banks/0/properties").split()
            info["vram"] = int(bank[bank.index("size_in_bytes") + 1])
    except (OSError, ValueError, IndexError):
        pass  # a machine without a readable topology still records; the header says "unknown"
    return info


class RecordingOS(OS):
    """An OS that forwards to `inner` and records every call to `dest` (a path or a binary stream)."""

    def __init__(self, inner: OS, dest, close_at_exit: bool = False, user=None, concurrent: bool = False):
        self.inner = inner
        self.user = user  # the driver's log of the caller's memory it read and wrote (mockgpu.session.RemoteMemory)
        # concurrent: the caller runs while the GPU does (simgpu run), so a page that changes during a call may
        # hold the caller's stores too; the header says so and a replay compares only the bytes its GPU writes.
        self.writer = TraceWriter(dest, describe_os(inner) | ({"concurrent": True} if concurrent else {}))
        self.shadows = Shadows()
        self._paths: dict[int, str] = {}
        self._ids: dict[int, int] = {}  # id(Mapping) -> mapping id
        self._maps: dict[int, Mapping] = {}  # keeps recorded mappings alive, so id() stays unique
        self._next_id = 0
        inner.doorbell_stores()  # from now on the driver keeps the doorbells it acts on from a doorbell page
        self.reads = ReadLog(self.shadows)  # what the GPU reads during a call that the host stored after it began
        inner.observe_reads(self.reads)
        if close_at_exit:
            atexit.register(self.finish)

    def _write(self, rec: dict) -> None:
        """Write a record with the GPUs' virtual clocks after it ("clk"), when the machine has them."""
        clocks = self.inner.gpu_clocks()
        if clocks:
            rec["clk"] = clocks
        self.writer.write(rec)

    def finish(self) -> None:
        """Finish the trace file (flush and close it)."""
        self.writer.close()

    # ---- plumbing ---------------------------------------------------------------------------------
    def _call(self, rec: dict, fn, *args, sync: bool = False, result_key: str | None = None):
        if sync:
            rec["w"] = self.shadows.collect()
            self.reads.start()
        try:
            result = fn(*args)
        except OSError as e:
            rec["errno"] = e.errno if e.errno is not None else _errno.EIO
            if sync:
                self._after(rec)
            self._write(rec)
            raise
        if result_key is not None:
            rec[result_key] = result
        if sync:
            self._after(rec)
        self._write(rec)
        return result

    def _after(self, rec: dict) -> None:
        """What the call did that the caller did not ask for: the pages written during it ("g") and the doorbells
        the driver acted on straight from a doorbell page ("doorbells": a concurrent client's stores, which no
        mmio record holds; a replay stores them before making the call) and the host's stores the GPU read during
        it ("reads", traces.reads: a replay takes them at the same read)."""
        rec["g"] = self.shadows.collect()
        stores = self.inner.doorbell_stores()
        if stores:
            rec["doorbells"] = stores
        reads = self.reads.take()
        if reads:
            rec["reads"] = reads

    def _mid(self, mapping: Mapping) -> int:
        mid = self._ids.get(id(mapping))
        if mid is None:
            raise OSError(_errno.EINVAL, "mapping was not created through this RecordingOS")
        return mid

    # ---- the seam ---------------------------------------------------------------------------------
    def open(self, path: str, flags: int = os.O_RDWR) -> int:
        fd = self._call({"t": "open", "path": path, "flags": flags}, self.inner.open, path, flags, result_key="fd")
        self._paths[fd] = path
        return fd

    def close(self, fd: int) -> None:
        self._call({"t": "close", "fd": fd}, self.inner.close, fd)
        self._paths.pop(fd, None)

    def ioctl(self, fd: int, request: int, buf: bytearray) -> int:
        rec = {"t": "ioctl", "fd": fd, "req": request, "name": ioctl_name(request), "in": bytes(buf)}

        def call(*a):
            try:
                return self.inner.ioctl(*a)
            finally:
                rec["out"] = bytes(buf)
                self._user_memory(rec)
        return self._call(rec, call, fd, request, buf, sync=True, result_key="ret")

    def _user_memory(self, rec: dict) -> None:
        """The caller's memory the driver read ("u") and wrote ("uw") during the call: [address, bytes] pairs, so
        that a replay can answer the same pointer arguments without the caller's process; and the pages a USERPTR
        buffer shares ("shared": [mapping id, address, length], their content in "sw")."""
        if self.user is None:
            return
        reads, writes, shares = self.user.take_log()
        if reads:
            rec["u"] = [[a, bytes(d)] for a, d in reads]
        if writes:
            rec["uw"] = [[a, bytes(d)] for a, d in writes]
        if shares:  # USERPTR pages: tracked from now on like a mapping; their content so far goes in "sw"
            rec["shared"] = []
            for addr, pages in shares:
                mid, self._next_id = self._next_id, self._next_id + 1
                self.shadows.track(mid, pages)
                rec["shared"].append([mid, addr, len(pages)])
            rec["sw"] = self.shadows.collect([m for m, _, _ in rec["shared"]])

    def mmap(self, fd: int, length: int, prot: int, flags: int, offset: int = 0, addr: int | None = None) -> Mapping:
        rec = {"t": "mmap", "fd": fd, "length": length, "prot": prot, "flags": flags, "offset": offset, "addr": addr}
        try:
            m = self.inner.mmap(fd, length, prot, flags, offset, addr)
        except OSError as e:
            rec["errno"] = e.errno if e.errno is not None else _errno.EIO
            self._write(rec)
            raise
        mid, self._next_id = self._next_id, self._next_id + 1
        rec["id"], rec["result"] = mid, m.addr
        self._ids[id(m)], self._maps[mid] = mid, m
        if self._paths.get(fd) != "/dev/kfd":  # doorbells are MMIO, written only through mmio_write
            self.shadows.track(mid, m.view)
            rec["g"] = self.shadows.collect([mid])  # the initial content the driver handed out
        self._write(rec)
        return m

    def munmap(self, mapping: Mapping) -> None:
        mid = self._mid(mapping)
        self.shadows.untrack(mid)  # before the inner munmap: a live numpy view would block closing an mmap
        self._call({"t": "munmap", "id": mid}, self.inner.munmap, mapping)
        self._maps.pop(mid, None)
        self._ids.pop(id(mapping), None)

    def read_text(self, path: str) -> str:
        return self._call({"t": "read_text", "path": path}, self.inner.read_text, path, result_key="text")

    def listdir(self, path: str) -> list[str]:
        return self._call({"t": "listdir", "path": path}, self.inner.listdir, path, result_key="entries")

    def exists(self, path: str) -> bool:
        return self._call({"t": "exists", "path": path}, self.inner.exists, path, result_key="result")

    def mmio_write(self, mapping: Mapping, offset: int, value: int, size: int = 4) -> None:
        rec = {"t": "mmio", "id": self._mid(mapping), "offset": offset, "value": value, "size": size}
        self._call(rec, self.inner.mmio_write, mapping, offset, value, size, sync=True)

    def mmio_read(self, mapping: Mapping, offset: int, size: int = 4) -> int:
        rec = {"t": "mmio_read", "id": self._mid(mapping), "offset": offset, "size": size}
        return self._call(rec, self.inner.mmio_read, mapping, offset, size, sync=True, result_key="value")

    def pread(self, fd: int, length: int, offset: int) -> bytes:
        rec = {"t": "pread", "fd": fd, "length": length, "offset": offset}
        return self._call(rec, self.inner.pread, fd, length, offset, result_key="data")

    def pwrite(self, fd: int, data: bytes, offset: int) -> int:
        rec = {"t": "pwrite", "fd": fd, "data": bytes(data), "offset": offset}
        return self._call(rec, self.inner.pwrite, fd, data, offset, result_key="ret")

    def progress(self, poll_all: bool = True) -> bool:
        """The driver running the GPUs on its own (mockgpu's process-level server, between a client's calls),
        recorded as a "progress" record when it moved anything or the host wrote memory since the last record."""
        rec = {"t": "progress", "poll_all": poll_all, "w": self.shadows.collect()}
        self.reads.start()
        rec["moved"] = bool(self.inner.progress(poll_all))
        self._after(rec)
        # (a doorbell acted on also moves today; the record says so either way)
        if rec["moved"] or rec["w"] or rec["g"] or "doorbells" in rec or "reads" in rec:
            self._write(rec)
        return rec["moved"]

    def device_report(self, gpu_id: int) -> DeviceReport:
        rec = {"t": "report", "gpu_id": gpu_id}

        def call(g):
            report = self.inner.device_report(g)
            rec["text"], rec["fault"], rec["summary"] = report.text, report.fault, report.summary
            return report
        return self._call(rec, call, gpu_id)

    def gpu_clocks(self) -> dict[int, int] | None:
        return self.inner.gpu_clocks()

    def annotate(self, note: dict) -> None:
        self._write({"t": "note", **note})
        self.inner.annotate(note)

    def sanitize(self, gpu_id: int, checks: str | None = None) -> dict:
        rec = {"t": "sanitize", "gpu_id": gpu_id, "checks": checks}

        def call(g, c):
            state = self.inner.sanitize(g, c)
            rec["on"], rec["findings"] = state["checks"], state["findings"]
            return state
        return self._call(rec, call, gpu_id, checks)
