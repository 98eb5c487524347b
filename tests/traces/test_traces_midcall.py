"""A concurrent client's stores that the GPU reads during a call (a record's `reads`, traces/reads.py).

A record's `w` is the host's memory when its call begins. A client that keeps running (`simgpu run`, a thread) may
store while the call runs, and the GPU may read those stores during it: a newer AQL write pointer and the packet it
publishes, the flag a WAIT_REG_MEM waits for and the data published with it. Here the client's stores land from
inside the GPU's own read of the published value (the simulator's MMU, wrapped by the test), so the interleaving is
the same on every run: before `reads`, the replay got those stores only after the call and ran fewer packets.
"""

from __future__ import annotations

import io
import struct
from functools import cache

import numpy as np
import pytest

import runtime
from mockgpu import MockOS
from simgpu.hw import aql
from simgpu.hw import pm4 as hw
from tests.traces.test_traces import _saxpy, replay_bytes, replayed, workload
from traces.format import TraceError, read_trace, write_trace
from traces.record import RecordingOS
from traces.show import show

N = 1024


def land_at_read(gpu, va: int, store) -> None:
    """Run `store` (the client's stores landing) the first time the GPU reads VA, just before the read."""
    mmu = gpu.mmu
    plain = {"read": mmu.read, "dwords": mmu.dwords}

    def wrap(name):
        def access(vmid, addr, n, *rest):
            if addr == va:
                for k, f in plain.items():
                    setattr(mmu, k, f)
                store()
            return plain[name](vmid, addr, n, *rest)
        return access
    for k in plain:
        setattr(mmu, k, wrap(k))


class LateWptrClient(RecordingOS):
    """An HSA producer (as ROCr and tinygrad) rings the AQL doorbell with the packet's id, one less than the write
    index, and the CP takes the write index from amd_queue_t.write_dispatch_id. Here the client's stores of the
    packet and of write_dispatch_id land only once the call runs, when the GPU polls the write pointer. With
    `late_again`, the write pointer goes back to the old value after the GPU read it and before the recorder looks,
    and returns after: the pages then do not hold what the GPU read, only the read's own bytes do."""

    late_again = False

    def mmio_write(self, mapping, offset, value, size=4):
        kind, node = mapping.handle if isinstance(mapping.handle, tuple) else (None, None)
        q = node.gpu.queue_by_doorbell((mapping.offset & 0x1FFF) // 8 + offset // 8) if kind == "doorbell" else None
        if q is None or q.fmt != "aql":
            return super().mmio_write(mapping, offset, value, size)
        gpu, vmid = node.gpu, q.vmid
        slot = q.ring_base + (value - 1) % q.ring_units * aql.PACKET_SIZE
        packet, wptr = gpu.mmu.read(vmid, slot, aql.PACKET_SIZE), gpu.mmu.read(vmid, q.wptr_addr, 8)
        gpu.mmu.write(vmid, slot, bytes(aql.PACKET_SIZE))  # not there yet when the call begins
        gpu.mmu.write(vmid, q.wptr_addr, struct.pack("<Q", value - 1))

        def landed():
            gpu.mmu.write(vmid, slot, packet)
            gpu.mmu.write(vmid, q.wptr_addr, wptr)
        land_at_read(gpu, q.wptr_addr, landed)
        if self.late_again:
            log = self.reads

            def observe(gpu_id, kind, va, data, host):
                if kind == "wptr" and va == q.wptr_addr and data == wptr:
                    gpu.mmu.write(vmid, q.wptr_addr, struct.pack("<Q", value - 1))
                    out = log(gpu_id, kind, va, data, host)
                    gpu.mmu.write(vmid, q.wptr_addr, wptr)
                    return out
                return log(gpu_id, kind, va, data, host)
            self.inner.observe_reads(observe)
        return super().mmio_write(mapping, offset, value - 1, size)


def record_late_wptr(late_again: bool = False) -> bytes:
    f = io.BytesIO()
    rec = LateWptrClient(MockOS(devices=1, vram_size=1 << 30), f, concurrent=True)
    rec.late_again = late_again
    dev = runtime.Device("AMD:0", queue="aql", os=rec)
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    k = dev.load(_saxpy())["saxpy"]
    bx, by = dev.alloc(x.nbytes).copyin(x), dev.alloc(y.nbytes).copyin(y)
    k(by, bx, np.float32(3.0), grid=(N // 256, 1, 1), block=(256, 1, 1))
    assert np.array_equal(by.copyout(np.empty_like(y)), np.float32(3.0) * x + y)
    dev.close()
    rec.finish()
    return f.getvalue()


def record_late_flag() -> bytes:
    """A PM4 queue waits (WAIT_REG_MEM) for a flag in host memory, then copies a word the client publishes with the
    flag (COPY_DATA); the client stores the word and the flag while the runtime's WAIT_EVENTS runs, when the GPU
    re-checks the flag."""
    f = io.BytesIO()
    mock = MockOS(devices=1, vram_size=1 << 30)
    rec = RecordingOS(mock, f, concurrent=True)
    dev = runtime.Device("AMD:0", queue="pm4", os=rec)
    shared = dev.alloc_system(4096, name="flag, word, copy")
    flag, word, out = shared.va, shared.va + 8, shared.va + 16
    value = dev.compute.submit([*hw.wait_reg_mem(flag, 1),
                                *hw.copy_data(hw.CopySrc.MEMORY, word, hw.CopyDst.MEMORY, out)])
    assert dev.compute.completed() < value  # blocked on the flag

    def landed():
        struct.pack_into("<I", shared.view, 8, 0xC0FFEE)
        struct.pack_into("<I", shared.view, 0, 1)
    land_at_read(mock.simulator(dev.gpu_id), flag, landed)
    dev.wait(dev.compute, value)
    assert struct.unpack_from("<I", shared.view, 16)[0] == 0xC0FFEE
    dev.close()
    rec.finish()
    return f.getvalue()


@cache
def trace_late_flag() -> bytes:
    """The WAIT_REG_MEM recording (also fuzzed: test_traces_fuzz)."""
    return record_late_flag()


@pytest.mark.parametrize("record", [record_late_wptr, record_late_flag, lambda: record_late_wptr(True)],
                         ids=["aql-wptr-and-packet", "pm4-wait-reg-mem-flag", "wptr-read-then-changed"])
def test_stores_the_gpu_read_during_a_call_replay_at_that_read(record):
    data = record()
    _, recs = read_trace(data)
    reads = [e for r in recs for e in r.get("reads", [])]
    assert reads, "the recording holds the stores the GPU read mid-call"
    assert replay_clocks(data) == (None, recs[-1]["clk"])  # no divergence, and the same GPU work to the last tick
    assert record() == data  # the same run records the same bytes


def test_the_recorded_bytes_of_the_read_are_what_the_gpu_gets():
    """The write pointer is back at its old value when the recorder looks: only the read's bytes say the GPU saw the
    new one (the replay hands the GPU those, not what its memory holds)."""
    _, recs = read_trace(record_late_wptr(True))
    entry = next(e for r in recs for e in r.get("reads", []) if e[2] == "wptr")
    assert int.from_bytes(entry[4], "little") > 0


def _without_reads(data: bytes) -> bytes:
    header, recs = read_trace(data)
    for r in recs:
        r.pop("reads", None)
    f = io.BytesIO()
    write_trace(f, header, recs)
    return f.getvalue()


@pytest.mark.parametrize("record", [record_late_wptr, record_late_flag])
def test_without_the_reads_the_replay_runs_fewer_packets_and_diverges(record):
    d = replay_bytes(_without_reads(record()))
    assert d is not None


def test_show_lists_the_reads():
    out = io.StringIO()
    show(io.BytesIO(trace_late_flag()), kinds={"ioctl"}, out=out)
    assert "[GPU read " in out.getvalue() and "WAIT_REG_MEM" in out.getvalue()


def _edited(edit) -> bytes:
    header, recs = read_trace(trace_late_flag())
    edit(next(r for r in recs if r.get("reads"))["reads"])
    f = io.BytesIO()
    write_trace(f, header, recs)
    return f.getvalue()


@pytest.mark.parametrize("edit, match", [
    (lambda e: e[0].__setitem__(2, "bogus"), "is not one of"),
    (lambda e: e[0].__setitem__(4, bytes(65)), "more than 64"),
    (lambda e: e.append(list(e[0])), "does not follow"),
    (lambda e: e[0].__setitem__(5, [[999, 0, b"x"]]), "not a live"),
])
def test_a_bad_reads_entry_is_a_trace_error(edit, match):
    with pytest.raises(TraceError, match=match):
        read_trace(_edited(edit))


def test_a_read_the_replay_never_makes_is_a_divergence():
    def edit(e):
        e[0][3] ^= 0x40  # another address
    d = replay_bytes(_edited(edit))
    assert d is not None and d.field.startswith("GPU read")


class LateRingClient(RecordingOS):
    """A client stores a submission's packets and its doorbell straight into the shared pages, and they land after
    the driver's next call began (after the recorder took `w`), just before the driver scans the doorbell page: the
    packets are in that scan's entry, not in `w`."""

    def mmio_write(self, mapping, offset, value, size=4):
        kind, node = mapping.handle if isinstance(mapping.handle, tuple) else (None, None)
        if kind != "doorbell":
            return super().mmio_write(mapping, offset, value, size)
        gpu = node.gpu
        slot = (mapping.offset & 0x1FFF) // 8 + offset // 8
        q = gpu.queue_by_doorbell(slot)
        unit = {"pm4": 4, "sdma": 1}[q.fmt]
        spans = [(q.ring_base + p % q.ring_size, unit) for p in range(q.wptr * unit, value * unit, unit)]
        packets = [gpu.mmu.read(q.vmid, va, n) for va, n in spans]
        for va, n in spans:  # not there yet when the call begins
            gpu.mmu.write(q.vmid, va, bytes(n))
        plain = gpu.pending_doorbells

        def landed():
            gpu.pending_doorbells = plain
            for (va, _), data in zip(spans, packets, strict=True):
                gpu.mmu.write(q.vmid, va, data)
            gpu.doorbells[slot] = value
            return plain()
        gpu.pending_doorbells = landed
        self.progress(poll_all=False)  # the session's next turn: the driver scans the page
        return None


def test_packets_stored_with_a_doorbell_after_the_call_began_replay_at_the_scan():
    f = io.BytesIO()
    rec = LateRingClient(MockOS(devices=1, vram_size=1 << 30), f, concurrent=True)
    workload(rec, 2.0, "pm4")
    rec.finish()
    data = f.getvalue()
    _, recs = read_trace(data)
    scans = [r for r in recs if any(e[2] == "doorbells" for e in r.get("reads", []))]
    assert len(scans) >= 2 and all(r["t"] == "progress" and r.get("doorbells") for r in scans)
    recorded = recs[-1]["clk"]
    assert replay_clocks(data) == (None, recorded)
    # Without the entries the packets reach the replay only after the call: its GPU runs zeros there instead. The
    # concurrent comparison takes the recorded pages where the replay wrote nothing, so no record differs, but its
    # GPU did other work (the clock, which a replay does not compare, says so).
    assert replay_clocks(_without_reads(data)) != (None, recorded)


def replay_clocks(data: bytes):
    """(first divergence, None) or (None, the replay's GPU clocks at the end)."""
    d, rp = replayed(data)
    return (d, None) if d is not None else (None, rp.os.gpu_clocks())


def record_own_write() -> bytes:
    """No concurrent client: one PM4 submission writes a flag (WRITE_DATA) and then waits for it (WAIT_REG_MEM). The
    recorder cannot tell the GPU's own write from a client's store, so the wait's read is an entry too."""
    f = io.BytesIO()
    rec = RecordingOS(MockOS(devices=1, vram_size=1 << 30), f)
    dev = runtime.Device("AMD:0", queue="pm4", os=rec)
    shared = dev.alloc_system(4096, name="flag")
    dev.wait(dev.compute, dev.compute.submit([*hw.write_data(shared.va, 7), *hw.wait_reg_mem(shared.va, 7)]))
    dev.close()
    rec.finish()
    return f.getvalue()


def test_without_a_concurrent_client_the_pages_before_a_read_must_be_exactly_the_recorded_ones():
    data = record_own_write()
    header, recs = read_trace(data)
    assert not header.get("concurrent")
    rec = next(r for r in recs if r.get("reads"))
    assert rec["reads"][0][2] == "WAIT_REG_MEM" and rec["reads"][0][4] == struct.pack("<I", 7)
    assert replay_clocks(data) == (None, recs[-1]["clk"])
    mid, first, page = rec["reads"][0][5][0]
    rec["reads"][0][5][0] = [mid, first, page[:-1] + bytes([page[-1] ^ 1])]  # a byte the replay's GPU did not write
    f = io.BytesIO()
    write_trace(f, header, recs)
    d = replay_bytes(f.getvalue())
    assert d is not None and d.field.startswith("memory written before GPU read 0")
