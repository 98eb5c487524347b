"""Fuzzing the command processors: random and mutated valid packet streams into PM4, AQL and SDMA rings.

Every case must end with each queue idle, blocked or in error with a report; never a host exception, and
never a write outside the VM's mapped memory (checked on the physical VRAM around the mappings). Two runs
of the same streams on fresh devices give identical memory, events and timestamps.
"""

from __future__ import annotations

import os
import struct
from functools import cache

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simgpu.cp.queue import QueueState
from simgpu.gpu import GPU
from simgpu.hw import aql, sdma
from simgpu.hw import pm4 as hw
from simgpu.isa import assemble
from tests.support.gpu_harness import VM, Ring, asm_kernel, new_signal, pm4_launch

VRAM = 64 << 20
# SIMGPU_FUZZ_EXAMPLES=2000 for a longer hunt (the default keeps the file fast).
FUZZ = settings(max_examples=int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "60")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
KERNEL = """
    s_load_b64 s[4:5], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 2, v0
    global_store_b32 v1, v0, s[4:5]
    s_endpgm
"""


@cache
def _kernel_text() -> bytes:
    return assemble(KERNEL)  # warm the assembler once; VMs load their own copy


class World:
    """A fresh device with one VM, a data buffer, a preloaded kernel, an IB and a signal."""

    def __init__(self):
        _kernel_text()
        self.gpu = GPU(vram_size=VRAM, watchdog=20_000, max_dispatch_workgroups=256)
        self.gpu.packet_budget = 4000
        self.vm = vm = VM(self.gpu)
        self.data = vm.alloc(16384)
        vm.write(self.data, np.arange(4096, dtype=np.uint32).tobytes())
        self.kernel = asm_kernel(vm, KERNEL)
        ib = [*hw.write_data(self.data + 64, 0xAB), *hw.nop(2)]
        self.ib = vm.upload(np.array(ib, np.uint32))
        self.ib_len = len(ib)
        self.signal = new_signal(vm, value=0)

    def addr(self, draw) -> int:
        return self.data + 4 * draw(st.integers(0, 4000))

    def check(self, rings: list[Ring]) -> None:
        """Every queue settled with a report if in error; no byte written outside mapped memory."""
        self.gpu.run_until_idle(max_rounds=50)
        for r in rings:
            q = r.q
            assert q.state in (QueueState.IDLE, QueueState.BLOCKED, QueueState.ERROR)
            if q.state == QueueState.ERROR:
                assert q.error.why and q.error.queue == q.name and isinstance(q.error.packet, list)
            if q.state == QueueState.BLOCKED:
                assert q.waiting
        vram = self.gpu.phys.vram
        assert not vram[:1 << 20].any(), "write below the VM's physical pages"
        assert not vram[self.vm.next_pa:VRAM // 2].any(), "write outside the VM's mapped memory"

    def fingerprint(self, rings: list[Ring]) -> tuple:
        events = [(e.seq, e.timestamp, e.kind, e.queue, e.context_id, e.data, e.signal, str(e.error))
                  for e in self.gpu.interrupt_log]
        states = [(r.q.state, r.q.rptr, str(r.q.error), r.q.waiting) for r in rings]
        return self.vm.snapshot(), events, self.gpu.clock.cycles, states


# ---- valid packet generators ---------------------------------------------------------------------------
@st.composite
def pm4_packet(draw, w: World) -> list[int]:
    a = w.addr(draw)
    small = draw(st.integers(0, 255))
    choice = draw(st.integers(0, 12))
    if choice == 0:
        return hw.write_data(a, *draw(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=4)))
    if choice == 1:
        return hw.copy_data(draw(st.sampled_from([hw.CopySrc.IMMEDIATE, hw.CopySrc.MEMORY, hw.CopySrc.GPU_CLOCK])),
                            w.addr(draw), hw.CopyDst.MEMORY, a, wide=draw(st.booleans()))
    if choice == 2:
        return hw.release_mem(a & ~7, small, data_sel=draw(st.integers(0, 3)), int_sel=draw(st.integers(0, 2)),
                              ctx_id=small)
    if choice == 3:
        return hw.wait_reg_mem(a, small, mask=draw(st.sampled_from([0, 0xFF, 0xFFFFFFFF])),
                               func=draw(st.integers(0, 6)))
    if choice == 4:
        return hw.dma_data(a, w.addr(draw), 4 * small, src_sel=draw(st.sampled_from([0, 2, 3])))
    if choice == 5:
        op = draw(st.sampled_from(list(hw.TcOp)))
        return hw.atomic_mem(a & ~7, op, small, small)
    if choice == 6:
        return hw.set_sh_reg(0x2E40 + draw(st.integers(0, 15)), small)
    if choice == 7:
        return hw.event_write(draw(st.sampled_from(list(hw.Event))))
    if choice == 8:
        return hw.indirect_buffer(w.ib, w.ib_len, chain=draw(st.booleans()))
    if choice == 9:
        body = hw.write_data(a, small)
        return [*hw.pred_exec(len(body), draw(st.integers(0, 3))), *body]
    if choice == 10:
        return pm4_launch(w.vm, w.kernel, [a & ~0xFF], (draw(st.integers(1, 3)),), (draw(st.integers(1, 64)),))
    if choice == 11:
        return hw.acquire_mem()
    return hw.nop(draw(st.integers(1, 4)))


@st.composite
def sdma_packet(draw, w: World) -> list[int]:
    a, b = w.addr(draw), w.addr(draw)
    n = draw(st.integers(1, 512))
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return sdma.copy_linear(a, b, n)
    if choice == 1:
        return sdma.copy_linear_sub_window(a & ~3, b & ~3, 2, (draw(st.integers(1, 8)), draw(st.integers(1, 4)), 1),
                                           src_pitch=16, src_slice_pitch=64, dst_pitch=16, dst_slice_pitch=64)
    if choice == 2:
        return sdma.write_untiled(a, *draw(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=4)))
    if choice == 3:
        return sdma.const_fill(a, n, n, dword=draw(st.booleans()))
    if choice == 4:
        return sdma.fence(a, n)
    if choice == 5:
        return sdma.trap(n)
    if choice == 6:
        return sdma.poll_regmem(a, n & 0xFF, mask=0xFF, func=draw(st.integers(0, 6)))
    if choice == 7:
        return sdma.timestamp(a & ~7)
    if choice == 8:
        return sdma.atomic(a & ~7, draw(st.sampled_from(list(hw.TcOp))), n, n)
    return sdma.nop(draw(st.integers(0, 3)))


@st.composite
def aql_packet(draw, w: World) -> bytes:
    choice = draw(st.integers(0, 3))
    if choice == 0:
        k = w.kernel
        return aql.KernelDispatchPacket(aql.make_header(aql.PacketType.KERNEL_DISPATCH), 1,
                                        (draw(st.integers(1, 64)), 1, 1), (draw(st.integers(1, 128)), 1, 1), 0, 0,
                                        k.base + k.kernel.descriptor_address, w.kernarg, w.signal).pack()
    if choice in (1, 2):
        ptype = aql.PacketType.BARRIER_AND if choice == 1 else aql.PacketType.BARRIER_OR
        return aql.BarrierPacket(aql.make_header(ptype), (w.signal, 0), w.signal).pack()
    cmd = tuple(hw.indirect_buffer(w.ib, w.ib_len))
    return aql.VendorPM4IBPacket(aql.make_header(aql.PacketType.VENDOR_SPECIFIC), ib_jump_cmd=cmd,
                                 completion_signal=w.signal).pack()


def _mutate(draw, words: list[int]) -> list[int]:
    """Flip bits, overwrite words, truncate or insert words."""
    words = list(words)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 3))
        i = draw(st.integers(0, max(0, len(words) - 1)))
        if kind == 0 and words:
            words[i] ^= 1 << draw(st.integers(0, 31))
        elif kind == 1 and words:
            words[i] = draw(st.integers(0, 2**32 - 1))
        elif kind == 2 and words:
            del words[i:]
        else:
            words.insert(i, draw(st.integers(0, 2**32 - 1)))
    return words


def _stream(draw, w: World, gen, mutate: bool) -> list[int]:
    words = [x for p in draw(st.lists(gen(w), min_size=1, max_size=12)) for x in p]
    return _mutate(draw, words) if mutate else words


# ---- the properties --------------------------------------------------------------------------------------
@FUZZ
@given(st.data(), st.sampled_from(["pm4", "sdma"]), st.booleans())
def test_dword_rings_survive_valid_mutated_streams(data, fmt, mutate):
    w = World()
    r = Ring(w.vm, fmt, size=16384)
    words = _stream(data.draw, w, pm4_packet if fmt == "pm4" else sdma_packet, mutate)
    r.submit(words)
    w.check([r])


@FUZZ
@given(st.sampled_from(["pm4", "sdma"]), st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=200))
def test_dword_rings_survive_random_words(fmt, words):
    w = World()
    r = Ring(w.vm, fmt, size=16384)
    r.submit(words)
    w.check([r])


@FUZZ
@given(st.data(), st.booleans())
def test_aql_ring_survives_valid_mutated_and_random_packets(data, mutate):
    w = World()
    w.kernarg = w.vm.alloc(256)
    w.vm.write(w.kernarg, struct.pack("<Q", w.data))
    r = Ring(w.vm, "aql", size=64 * 64)
    pkts = data.draw(st.lists(st.one_of(aql_packet(w), st.binary(min_size=64, max_size=64)), min_size=1, max_size=8))
    raw = b"".join(pkts)
    if mutate:
        words = _mutate(data.draw, np.frombuffer(raw, "<u4").tolist())
        words += [0] * (-len(words) % 16)
        raw = np.array(words, "<u4").tobytes()
    if raw:
        r.write(raw)
    w.check([r])


def _scripted_run() -> tuple:
    """A fixed mix of streams on three queues (one blocks until another releases it)."""
    w = World()
    w.kernarg = w.vm.alloc(256)
    w.vm.write(w.kernarg, struct.pack("<Q", w.data))
    pm4_ring, sdma_ring, aql_ring = Ring(w.vm, "pm4", 16384), Ring(w.vm, "sdma", 16384), Ring(w.vm, "aql", 4096)
    flag = w.data + 8000
    pm4_ring.submit(hw.wait_reg_mem(flag, 1), pm4_launch(w.vm, w.kernel, [w.data], (2,), (32,)),
                    hw.release_mem(w.data + 4000, data_sel=hw.DataSel.GPU_CLOCK, int_sel=2, ctx_id=5))
    sdma_ring.submit(sdma.copy_linear(w.data + 2048, w.data, 512), sdma.timestamp(w.data + 4008),
                     sdma.fence(flag, 1), sdma.trap(7))
    sig = new_signal(w.vm, value=1, mailbox=w.data + 4016, event_id=3)
    aql_ring.submit(aql.KernelDispatchPacket(aql.make_header(2), 1, (32, 1, 1), (96, 1, 1), 0, 0,
                                             w.kernel.base + w.kernel.kernel.descriptor_address, w.kernarg,
                                             sig).pack())
    w.gpu.run_until_idle()
    rng = np.random.default_rng(9)  # plus a random stream that errors out
    bad = Ring(w.vm, "pm4")
    bad.submit(rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32).tolist())
    w.check([pm4_ring, sdma_ring, aql_ring, bad])
    return w.fingerprint([pm4_ring, sdma_ring, aql_ring, bad])


def test_two_runs_give_identical_memory_events_and_timestamps():
    first, second = _scripted_run(), _scripted_run()
    assert first == second
    memory, events, cycles, states = first
    assert [e[2] for e in events][:4] == ["sdma_trap", "signal", "end_of_pipe", "queue_error"]
    assert states[0][0] == states[1][0] == states[2][0] == QueueState.IDLE and states[3][0] == QueueState.ERROR


def _rung_in_pieces(draw, worlds: list, fmt: str, words: list, doorbells: int) -> list:
    """Each world's fingerprint after `words` ran on a new `fmt` ring of it, submitted in `doorbells` pieces cut at
    drawn places (the same cuts for every world)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(words)), min_size=doorbells - 1, max_size=doorbells - 1)))
    prints = []
    for w in worlds:
        r = Ring(w.vm, fmt, size=16384)
        for lo, hi in zip([0, *cuts], [*cuts, len(words)], strict=True):
            r.submit(words[lo:hi])
        w.check([r])
        prints.append(w.fingerprint([r]))
    return prints


@FUZZ
@given(st.data(), st.booleans(), st.integers(1, 3))
def test_sdma_fast_fetch_and_decode_run_streams_as_the_general_path_does(data, mutate, doorbells):
    """SDMAProcessor.kinds (op and sub-op -> handler and length, one look a packet) is a shortcut of _length and
    handlers, and sdma._fetch's page window one of a read through the MMU: with the table emptied and no page ever
    remembered, every packet is read through the MMU and takes the general decode; both give the same memory,
    interrupts, clock, rptr, waits and error reports (packet words included), rung in one doorbell or several."""
    worlds = [World(), World()]
    worlds[1].gpu.sdma.kinds = {}
    worlds[1].gpu.mmu.page_view = lambda vmid, va, access="read": None
    worlds[1].gpu.mmu.page_ends = lambda vmid, dst, src, nbytes: None
    words = _stream(data.draw, worlds[0], sdma_packet, mutate)
    first, second = _rung_in_pieces(data.draw, worlds, "sdma", words, doorbells)
    assert first == second


@st.composite
def small_copy(draw, w: World) -> list[int]:
    """A COPY_LINEAR of 1 to 300 bytes at byte addresses: overlapping, crossing a page, or past the mapped data."""
    def end() -> int:
        if draw(st.integers(0, 15)) == 0:  # past the data buffer's end: its pages are not mapped (a fault)
            return w.data + 16384 + draw(st.integers(0, 8192))
        return w.data + draw(st.integers(0, 16384 - 1))
    return sdma.copy_linear(end(), end(), draw(st.integers(1, 300)))


@FUZZ
@given(st.data(), st.integers(1, 3))
def test_sdma_small_copies_from_the_kept_pages_move_and_charge_as_the_general_path_does(data, doorbells):
    """DMA.copy of a copy within one page at each end takes both ends' links and bytes from the two pages' memory
    (MMU.page_ends) instead of two translations, a read and a write: with page_ends answering None, the general
    path gives the same memory, clock (the links), interrupts, rptr and error reports (faults included)."""
    worlds = [World(), World()]
    worlds[1].gpu.mmu.page_ends = lambda vmid, dst, src, nbytes: None
    taken = []
    ends = worlds[0].gpu.mmu.page_ends
    worlds[0].gpu.mmu.page_ends = lambda *a: taken.append(r := ends(*a)) or r
    words = [w for _ in range(data.draw(st.integers(1, 12))) for w in data.draw(small_copy(worlds[0]))]
    first, second = _rung_in_pieces(data.draw, worlds, "sdma", words, doorbells)
    assert first == second
    assert len(taken) == len(words) // 7 or first[3][0][0] == QueueState.ERROR  # (every copy asked, until a fault)


def _same_allocations(src: World, dst: World, before: int) -> None:
    """Give `dst` the buffers drawing a stream against `src` allocated (a launch's kernel arguments), same VAs and
    bytes: the two devices then differ only where the test makes them."""
    for va, size in src.vm.mapped[before:]:
        assert dst.vm.alloc(size) == va
        dst.vm.write(va, src.vm.read(va, size))


@FUZZ
@given(st.data(), st.booleans(), st.integers(1, 3))
def test_pm4_page_window_runs_streams_as_reads_through_the_mmu_do(data, mutate, doorbells):
    """pm4._words reads a packet from the page the last read came from (PM4Processor.execute's window); with no page
    ever remembered every header and body is read through the MMU: the same memory, interrupts, clock, rptr, waits
    and error reports, for valid and mutated streams (launches included) rung in one doorbell or several."""
    worlds = [World(), World()]
    worlds[1].gpu.mmu.page_view = lambda vmid, va, access="read": None
    worlds[1].gpu.mmu.page_ends = lambda vmid, dst, src, nbytes: None
    before = len(worlds[0].vm.mapped)
    words = _stream(data.draw, worlds[0], pm4_packet, mutate)
    _same_allocations(worlds[0], worlds[1], before)
    first, second = _rung_in_pieces(data.draw, worlds, "pm4", words, doorbells)
    assert first == second
