"""Following a trace's GPU work: memory rebuilt from the recorded page diffs (by GPU VA), the queues from their
CREATE_QUEUE records, and at each doorbell write the packets between the queue's previous and new write
pointer, decoded. SDMA copies and fills are re-applied, so memory the host never maps (VRAM, e.g. the code
object) is followed too."""

from __future__ import annotations

import bisect
import ctypes
import struct
from dataclasses import dataclass, field

from runtime.uapi import amdgpu_drm as drm
from runtime.uapi import kfd
from simgpu.hw import aql
from simgpu.isa import DecodeError, decode
from traces.decode import fields, ioctl_name
from traces.packets import Packet, decode_aql, decode_pm4, decode_sdma
from traces.shadow import PAGE

_FORMAT = {kfd.KFD_IOC_QUEUE_TYPE_COMPUTE: "pm4", kfd.KFD_IOC_QUEUE_TYPE_COMPUTE_AQL: "aql",
           kfd.KFD_IOC_QUEUE_TYPE_SDMA: "sdma", kfd.KFD_IOC_QUEUE_TYPE_SDMA_XGMI: "sdma",
           kfd.KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID: "sdma"}
_UNIT = {"pm4": 4, "sdma": 1, "aql": aql.PACKET_SIZE}  # bytes per write-pointer unit
MAX_DISASM = 48  # instructions listed at a kernel's first dispatch
MAX_SUBMISSION = 1 << 20  # bytes of ring decoded per doorbell write: more is not a submission a runtime makes
MAX_DMA = 64 << 20  # bytes an SDMA copy or fill may move in the reconstructed memory (more: left out)


class Memory:
    """Sparse GPU-VA memory: the regions the trace allocated, kept by 4 KiB page as non-zero bytes arrive, so what a
    trace claims (a region's size, a ring's) costs nothing until the trace's own bytes fill it."""

    def __init__(self):
        self.bases: list[int] = []
        self.sizes: dict[int, int] = {}
        self.pages: dict[int, bytearray] = {}  # VA // PAGE -> the page's bytes

    def add(self, base: int, size: int) -> None:
        """A region [base, base + size) (kept if it already exists)."""
        if base not in self.sizes:
            bisect.insort(self.bases, base)
            self.sizes[base] = size

    def _end(self, va: int) -> int | None:
        """The end of the region holding va, or None."""
        i = bisect.bisect_right(self.bases, va) - 1
        if i >= 0 and va < self.bases[i] + self.sizes[self.bases[i]]:
            return self.bases[i] + self.sizes[self.bases[i]]
        return None

    def read(self, va: int, n: int) -> bytes:
        """n bytes at va (zeros where nothing is known)."""
        out, pos = bytearray(n), 0
        while pos < n:
            page, off = divmod(va + pos, PAGE)
            k = min(PAGE - off, n - pos)
            if page in self.pages:
                out[pos:pos + k] = self.pages[page][off:off + k]
            pos += k
        return bytes(out)

    def write(self, va: int, data: bytes) -> None:
        """Store bytes at va (dropped outside known regions)."""
        end = self._end(va)
        if end is None:
            return
        data, pos = memoryview(data)[:end - va], 0
        while pos < len(data):
            page, off = divmod(va + pos, PAGE)
            k = min(PAGE - off, len(data) - pos)
            chunk = data[pos:pos + k]
            if page in self.pages:
                self.pages[page][off:off + k] = chunk
            elif any(chunk):  # a page never written holds zeros already
                self.pages[page] = bytearray(PAGE)
                self.pages[page][off:off + k] = chunk
            pos += k


@dataclass
class Queue:
    """A user-mode queue as its CREATE_QUEUE record describes it."""

    qid: int
    fmt: str
    ring: int
    size: int
    wptr: int = 0
    gpu_id: int = 0
    sh: dict[int, int] = field(default_factory=dict)  # PM4 SH registers (COMPUTE_PGM_LO/HI, ...)


class GPUView:
    """Feed records in order with `step`; it keeps memory and queues and decodes every submission."""

    def __init__(self):
        self.mem = Memory()
        self.allocs: dict[int, tuple[int, int]] = {}  # mmap offset -> (va, size)
        self.mapping_va: dict[int, int] = {}  # mapping id -> VA of its first byte
        self.mapping_off: dict[int, int] = {}  # mapping id -> mmap offset (doorbell pages)
        self.queues: dict[int, Queue] = {}  # doorbell offset -> queue
        self.counter_hz: int | None = None  # GPU timestamp frequency, from AMDGPU_INFO_DEV_INFO
        self.seen_code: set[int] = set()
        self.kernels: dict[int, str] = {}  # kernel code entry VA -> name (the runtime's code_object notes)

    def apply(self, writes) -> None:
        """Store recorded page runs."""
        for mid, first, data in writes or ():
            if mid in self.mapping_va:
                self.mem.write(self.mapping_va[mid] + first * PAGE, bytes(data))

    def step(self, rec: dict) -> tuple[Queue | None, list[Packet]]:
        """Take one record into account; for a doorbell write: its queue and the packets it submitted."""
        t = rec["t"]
        self.apply(rec.get("w"))
        for entry in rec.get("reads", ()):  # pages the client stored mid-call, taken at the GPU's reads (traces.reads)
            self.apply(entry[5])
        queue, packets = None, []
        if t == "note" and rec.get("what") == "code_object":
            for name, _descriptor, entry in rec.get("kernels", []):
                self.kernels[entry] = name
        elif t == "ioctl" and "errno" not in rec:
            self._ioctl(rec)
        elif t == "mmap" and "errno" not in rec:
            self._mmap(rec)
        elif t == "mmio":
            queue = self.queues.get(self.mapping_off.get(rec["id"], -1 << 70) + rec["offset"])
            if queue is not None:
                packets = self._submitted(queue, rec["value"])
        self.apply(rec.get("g"))
        if t == "ioctl" and rec.get("req") == drm.DRM_IOCTL_AMDGPU_INFO and "errno" not in rec:
            self._drm_info(rec)
        return queue, packets

    def _ioctl(self, rec: dict) -> None:
        req = rec["req"]
        name = ioctl_name(req)  # by name: an older kfd_ioctl.h makes a request number with a shorter size
        if name == "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU":
            f = fields(req, rec["out"])
            self.allocs[f["mmap_offset"]] = (f["va_addr"], f["size"])
            self.mem.add(f["va_addr"], f["size"])
            for mid, _addr, _size in rec.get("shared", []):  # USERPTR pages: their runs land at the buffer's VA
                self.mapping_va[mid] = f["va_addr"]
            self.apply(rec.get("sw"))
        elif name == "AMDKFD_IOC_CREATE_QUEUE":
            fi, fo = fields(req, rec["in"]), fields(req, rec["out"])
            fmt = _FORMAT.get(fi.get("queue_type"), "pm4")
            if not fi.get("ring_size"):
                return  # a ring of no bytes carries nothing to decode
            self.queues[fo["doorbell_offset"]] = Queue(fo["queue_id"], fmt, fi["ring_base_address"], fi["ring_size"],
                                                       gpu_id=fi["gpu_id"])

    def _mmap(self, rec: dict) -> None:
        va, size = self.allocs.get(rec["offset"], (None, rec["length"])) if rec["fd"] >= 0 else (None, rec["length"])
        base = rec["result"] if va is None else va  # anonymous / unknown mappings: by host address
        self.mem.add(base, size)
        self.mapping_va[rec["id"]] = base
        self.mapping_off[rec["id"]] = rec["offset"]

    def _drm_info(self, rec: dict) -> None:
        a = drm.drm_amdgpu_info.unpack(rec["in"])
        if a.query == drm.AMDGPU_INFO_DEV_INFO:
            answer = self.mem.read(a.return_pointer, ctypes.sizeof(drm.drm_amdgpu_info_device))  # not return_size: a
            info = drm.drm_amdgpu_info_device.unpack(answer)  # trace's number, it could be any
            self.counter_hz = info.gpu_counter_freq * 1000  # KHz

    def _ring_bytes(self, q: Queue, lo: int, hi: int) -> bytes:
        unit = _UNIT[q.fmt]
        start, n = (lo * unit) % q.size, min((hi - lo) * unit, q.size, MAX_SUBMISSION)
        first = self.mem.read(q.ring + start, min(n, q.size - start))
        return first + (self.mem.read(q.ring, n - len(first)) if n > len(first) else b"")

    def _submitted(self, q: Queue, wptr: int) -> list[Packet]:
        lo, q.wptr = q.wptr, wptr
        if wptr <= lo:
            return []
        data = self._ring_bytes(q, lo, wptr)
        if q.fmt == "aql":
            return decode_aql(data, self.mem.read)
        dwords = list(struct.unpack(f"<{len(data) // 4}I", data[:len(data) // 4 * 4]))
        if q.fmt == "pm4":
            return decode_pm4(dwords, q.sh)
        packets = decode_sdma(dwords)
        for p in packets:  # the copy happens during this doorbell write; its source is in memory now
            if p.copy and p.copy[2] <= MAX_DMA:
                dst, src, n = p.copy
                self.mem.write(dst, self.mem.read(src, n))
            elif p.fill and p.fill[2] <= MAX_DMA:
                dst, value, n = p.fill
                self.mem.write(dst, (struct.pack("<I", value) * (n // 4 + 1))[:n])
        return packets

    def kernel_name(self, code: int | None) -> str | None:
        """The name of the kernel whose code starts at `code`, when the runtime noted its code object."""
        return self.kernels.get(code) if code is not None else None

    def disassemble_first(self, code: int, limit: int = MAX_DISASM) -> list[str] | None:
        """The kernel's first instructions, the first time `code` is dispatched (None afterwards)."""
        if code in self.seen_code:
            return None
        self.seen_code.add(code)
        data, lines, pos = self.mem.read(code, limit * 12), [], 0
        while len(lines) < limit:
            try:
                inst = decode(data, pos)
            except DecodeError as e:
                lines.append(f"<decode error at +{pos:#x}: {e}>")
                break
            lines.append(f"+{pos:#06x}: {inst.text()}")
            if inst.mnemonic == "s_endpgm":
                break
            pos += inst.size
        return lines
