"""SDMA queues of simgpu.GPU: every supported SDMA v6 packet, built with simgpu.hw.sdma."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simgpu.cp.queue import QueueState, canonical, packet_va
from simgpu.gpu import GPU
from simgpu.hw import pm4 as hw_pm4
from simgpu.hw import sdma
from simgpu.hw.bits import u64
from simgpu.interrupt import Kind, Source
from tests.support.gpu_harness import VM, Ring


@pytest.fixture
def vm():
    return VM(GPU(vram_size=256 << 20))


def _data(n: int, seed: int = 0) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def test_nop_and_byte_rptr(vm):
    r = Ring(vm, "sdma")
    r.submit(sdma.nop(), sdma.nop(3))
    assert r.q.state == QueueState.IDLE and r.q.rptr == 20 == vm.u64(r.rptr_addr)


def test_copy_linear_page_by_page_between_scattered_buffers(vm):
    r = Ring(vm, "sdma")
    n = 5 * 4096 + 123
    data = _data(n)
    src, dst = vm.alloc(n, scattered=True), vm.alloc(n + 64, scattered=True)
    vm.write(src, data)
    r.submit(sdma.copy_linear(dst + 7, src + 1, n - 1))
    assert vm.read(dst + 7, n - 1) == data[1:] and vm.read(dst, 7) == bytes(7)


def test_copy_linear_sub_window(vm):
    r = Ring(vm, "sdma")
    # source: 3 slices of 8 rows of 16 4-byte elements; copy a 5x3x2 box at (2, 1, 1) to (1, 2, 0) of a
    # destination with a pitch of 10 and a slice pitch of 50 elements.
    src_arr = np.arange(3 * 8 * 16, dtype=np.uint32).reshape(3, 8, 16)
    src = vm.upload(src_arr)
    dst = vm.alloc(4 * 100)
    r.submit(sdma.copy_linear_sub_window(dst, src, 2, (5, 3, 2), src_xyz=(2, 1, 1), src_pitch=16, src_slice_pitch=128,
                                         dst_xyz=(1, 2, 0), dst_pitch=10, dst_slice_pitch=50))
    want = np.zeros((2, 5, 10), np.uint32)
    want[:, 2:5, 1:6] = src_arr[1:3, 1:4, 2:7]
    assert np.array_equal(vm.download(dst, np.uint32, 100).reshape(2, 5, 10), want)


def test_write_untiled_const_fill_and_fence(vm):
    r = Ring(vm, "sdma")
    out = vm.alloc(8192)
    r.submit(sdma.write_untiled(out, 1, 2, 3), sdma.const_fill(out + 16, 0xDEADBEEF, 4096 + 8),
             sdma.const_fill(out + 4200, 0x1234567F, 3, dword=False), sdma.fence(out + 5000, 0xF00D))
    assert vm.u32(out, 3) == [1, 2, 3]
    assert vm.read(out + 16, 4104) == struct.pack("<I", 0xDEADBEEF) * 1026
    assert vm.read(out + 4200, 4) == b"\x7f\x7f\x7f\x00" and vm.u32(out + 5000)[0] == 0xF00D


def test_trap_interrupt_and_timestamps(vm):
    r = Ring(vm, "sdma")
    out = vm.alloc(64)
    r.submit(sdma.timestamp(out), sdma.nop(), sdma.timestamp(out + 8), sdma.trap(0x123))
    t0, t1 = vm.u64(out), vm.u64(out + 8)
    assert 0 <= t0 < t1 <= vm.gpu.clock.timestamp()
    ev = vm.gpu.take_interrupts()
    assert [(e.source, e.kind, e.context_id, e.queue) for e in ev] == [(Source.SDMA, Kind.SDMA_TRAP, 0x123, r.q.name)]
    r.submit([sdma.header(sdma.Op.TIMESTAMP, sdma.SUBOP_TIMESTAMP_SET), 1000, 0],
             sdma.timestamp(out + 16, global_counter=False))
    assert 1000 <= vm.u64(out + 16) < 1010


@pytest.mark.parametrize("memory", [True, False])
def test_poll_regmem_blocks_until_satisfied(vm, memory):
    r = Ring(vm, "sdma")
    flag, out = vm.alloc(64), vm.alloc(64)
    reg = 0xC100
    r.submit(sdma.poll_regmem(flag if memory else reg, 0x5, mask=0xF, func=hw_pm4.Compare.EQ, memory=memory),
             sdma.fence(out, 1))
    assert r.q.state == QueueState.BLOCKED and "POLL_REGMEM" in r.q.waiting and vm.u32(out)[0] == 0
    if memory:
        vm.write(flag, struct.pack("<I", 0xF5))
    else:
        vm.gpu.regs[reg] = 0xF5
    vm.gpu.run_until_idle()
    assert r.q.state == QueueState.IDLE and vm.u32(out)[0] == 1
    r.submit(sdma.poll_regmem(0, 0, hdp_flush=True, memory=False))  # HDP flush: completes at once
    assert r.q.state == QueueState.IDLE


def test_atomic_and_looping_cmpswap(vm):
    r = Ring(vm, "sdma")
    cell = vm.alloc(64)
    vm.write(cell, struct.pack("<QI", 40, 7))
    r.submit(sdma.atomic(cell, hw_pm4.TcOp.ADD_RTN_64, 2), sdma.atomic(cell + 8, hw_pm4.TcOp.CMPSWAP_RTN_32, 9, 8,
                                                                       loop=True))
    assert vm.u64(cell) == 42 and r.q.state == QueueState.BLOCKED
    vm.write(cell + 8, struct.pack("<I", 8))
    vm.gpu.run_until_idle()
    assert vm.u32(cell + 8)[0] == 9 and r.q.state == QueueState.IDLE


def test_gcr_req_and_indirect_buffer(vm):
    r = Ring(vm, "sdma")
    out = vm.alloc(64)
    ib = [*sdma.fence(out, 5), *sdma.gcr_req(gcr_control=0x7FFFF), *sdma.write_untiled(out + 4, 6, 7)]
    ib_va = vm.upload(np.array(ib, np.uint32))
    r.submit(sdma.indirect_buffer(ib_va, len(ib)), sdma.fence(out + 12, 8))
    assert vm.u32(out, 4) == [5, 6, 7, 8] and r.q.rptr == 4 * (6 + 4)


def test_sdma_errors(vm):
    r = Ring(vm, "sdma")
    r.submit(sdma.nop(), [sdma.header(sdma.Op.SEM), 0, 0])
    e = r.q.error
    assert r.q.state == QueueState.ERROR and e.rptr == 4 and "SEM" in e.why and e.packet == [sdma.header(sdma.Op.SEM)]
    r2 = Ring(vm, "sdma")
    r2.submit(sdma.copy_linear(0x2000, 0x1000, 64))
    assert r2.q.error.fault.kind == "page_fault"
    r3 = Ring(vm, "sdma")
    ib = vm.upload(np.array(sdma.indirect_buffer(0x1000, 4), np.uint32))
    r3.submit(sdma.indirect_buffer(ib, 6))
    assert "inside an indirect buffer" in r3.q.error.why and "IB at" in r3.q.error.where


def test_a_packet_is_read_at_its_start_and_no_further_than_its_headers_page(vm):
    """The engine reads a packet's first dwords in one read (sdma._fetch): never past the header's page, so a packet
    that runs into an unmapped page faults as itself, after the packets before it ran; and a packet reads what the
    packets before it wrote into the ring (a WRITE_UNTILED that writes the next packet)."""
    out = vm.alloc(64)
    ib = vm.alloc(4096)  # (a guard page follows it)
    nops = 1023 - 4  # a FENCE (4 dwords), NOPs, then a COPY_LINEAR whose header is the page's last dword
    vm.write(ib, np.array([*sdma.fence(out, 7), *([sdma.nop()[0]] * (nops)), sdma.copy_linear(out, out, 4)[0]],
                          "<u4").tobytes())
    r = Ring(vm, "sdma")
    r.submit(sdma.indirect_buffer(ib, 1024 + 6))
    e = r.q.error
    assert r.q.state == QueueState.ERROR and e.fault is not None and e.fault.kind == "page_fault", e
    assert "IB at" in e.where and e.packet == [sdma.copy_linear(out, out, 4)[0]] and vm.u32(out)[0] == 7

    r2 = Ring(vm, "sdma")
    fence = sdma.fence(out + 8, 0xC0DE)
    # the WRITE_UNTILED is 4 + 4 dwords at ring offset 0; it writes the FENCE over the 4 NOPs after it
    r2.submit(sdma.write_untiled(r2.base + 4 * 8, *fence), *([sdma.nop()] * 4))
    assert r2.q.state == QueueState.IDLE and vm.u32(out + 8)[0] == 0xC0DE


def test_a_packet_sees_what_the_packets_before_it_wrote_into_the_ring(vm):
    """The fetch keeps the ring page's memory for the next packet (sdma._fetch's window): live memory, so a packet
    that an earlier one of the same doorbell rewrote runs as rewritten, as when every packet was read on its own."""
    r = Ring(vm, "sdma")
    out = vm.alloc(64)
    second_value = r.base + 4 * (4 + 3)  # the second FENCE's value dword (a FENCE is 4 dwords)
    r.submit(sdma.fence(second_value, 0xBEEF), sdma.fence(out, 0x1111), sdma.fence(out + 4, 0x2222))
    assert vm.u32(out, 2) == [0xBEEF, 0x2222] and r.q.state == QueueState.IDLE


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_packet_va_is_the_canonical_va_of_the_two_dwords(lo, hi):
    """packet_va (one call a packet address) against canonical(u64(lo, hi)), with and without the low bits cleared."""
    assert packet_va(lo, hi) == canonical(u64(lo, hi))
    assert packet_va(lo, hi) & ~3 == canonical(u64(lo, hi) & ~3)
