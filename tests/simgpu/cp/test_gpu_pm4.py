"""PM4 compute queues of simgpu.GPU: every supported packet, built with simgpu.hw.pm4, run through a ring."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.samples import VADD
from simgpu import clock as costs
from simgpu.cp.queue import QueueState
from simgpu.gpu import GPU, INTERRUPT_LOG
from simgpu.hw import pm4 as hw
from simgpu.hw import regs, sdma
from simgpu.interrupt import Kind, Source
from tests.support.gpu_harness import VM, Ring, asm_kernel, pm4_launch


@pytest.fixture
def vm():
    return VM(GPU(vram_size=256 << 20))


def test_nop_filler_rptr_report_and_cost(vm):
    r = Ring(vm, "pm4")
    before = vm.gpu.clock.cycles
    r.submit(hw.nop(3), [hw.PACKET_TYPE2])
    q = r.q
    assert q.state == QueueState.IDLE and q.rptr == q.wptr == 5 and vm.u64(r.rptr_addr) == 5
    assert vm.gpu.clock.cycles - before == costs.PM4_PACKET_CYCLES + 1


def test_set_sh_and_uconfig_registers_read_back_with_copy_data(vm):
    r = Ring(vm, "pm4")
    out = vm.alloc(64)
    r.submit(hw.set_sh_reg(regs.COMPUTE_USER_DATA_0, 11, 22, 33),
             hw.set_uconfig_reg(0xC040, 0xABCD),
             hw.copy_data(hw.CopySrc.REGISTER, regs.COMPUTE_USER_DATA_0 + 1, hw.CopyDst.MEMORY, out),
             hw.copy_data(hw.CopySrc.REGISTER, 0xC040, hw.CopyDst.MEMORY, out + 4),
             hw.copy_data(hw.CopySrc.REGISTER, regs.COMPUTE_USER_DATA_0, hw.CopyDst.MEMORY, out + 8, wide=True))
    assert r.q.regs[regs.COMPUTE_USER_DATA_0 + 2] == 33 and vm.gpu.regs[0xC040] == 0xABCD
    assert vm.u32(out, 4) == [22, 0xABCD, 11, 22]


def test_set_sh_reg_out_of_range_is_a_queue_error(vm):
    r = Ring(vm, "pm4")
    r.submit(hw.packet(hw.Op.SET_SH_REG, 0x3FF, 1, 2))
    assert r.q.state == QueueState.ERROR and "outside" in r.q.error.why


def test_write_data_memory_one_addr_and_register(vm):
    r = Ring(vm, "pm4")
    out = vm.alloc(64)
    r.submit(hw.write_data(out, 1, 2, 3),
             hw.write_data(out + 16, 7, 8, 9, one_addr=True),
             hw.write_data(regs.COMPUTE_USER_DATA_0 + 3, 5, 6, dst=hw.WriteDst.REGISTER))
    assert vm.u32(out, 5) == [1, 2, 3, 0, 9]
    assert r.q.regs[regs.COMPUTE_USER_DATA_0 + 3] == 5 and r.q.regs[regs.COMPUTE_USER_DATA_0 + 4] == 6


def test_copy_data_sources(vm):
    r = Ring(vm, "pm4")
    src, out = vm.alloc(64), vm.alloc(64)
    vm.write(src, struct.pack("<QI", 0x1122334455667788, 0xCAFE))
    r.submit(hw.copy_data(hw.CopySrc.IMMEDIATE, 0xDEADBEEF, hw.CopyDst.MEMORY, out),
             hw.copy_data(hw.CopySrc.IMMEDIATE, 0x0102030405060708, hw.CopyDst.MEMORY, out + 8, wide=True),
             hw.copy_data(hw.CopySrc.MEMORY, src, hw.CopyDst.MEMORY, out + 16, wide=True),
             hw.copy_data(hw.CopySrc.TC_L2, src + 8, hw.CopyDst.TC_L2, out + 24),
             hw.copy_data(hw.CopySrc.GPU_CLOCK, 0, hw.CopyDst.MEMORY, out + 32, wide=True))
    assert vm.u32(out)[0] == 0xDEADBEEF and vm.u64(out + 8) == 0x0102030405060708
    assert vm.u64(out + 16) == 0x1122334455667788 and vm.u32(out + 24)[0] == 0xCAFE
    ts = vm.u64(out + 32)
    assert 0 < ts <= vm.gpu.clock.timestamp()


def test_timestamps_follow_the_cost_model(vm):
    r = Ring(vm, "pm4")
    out = vm.alloc(64)
    r.submit(hw.copy_data(hw.CopySrc.GPU_CLOCK, 0, hw.CopyDst.MEMORY, out, wide=True),
             hw.nop(1), hw.nop(1),
             hw.release_mem(out + 8, data_sel=hw.DataSel.GPU_CLOCK))
    t0, t1 = vm.u64(out), vm.u64(out + 8)
    # between the two reads: the COPY_DATA itself, two NOPs (release_mem reads before its own cost)
    per_tick = costs.CORE_CLOCK_MHZ // costs.TIMESTAMP_MHZ
    assert t1 - t0 in {3 * costs.PM4_PACKET_CYCLES // per_tick, 3 * costs.PM4_PACKET_CYCLES // per_tick + 1}


@pytest.mark.parametrize("func", list(hw.Compare))
@pytest.mark.parametrize("memory", [True, False])
def test_wait_reg_mem_compare_functions(vm, func, memory):
    ref_model = {0: lambda v, r: True, 1: lambda v, r: v < r, 2: lambda v, r: v <= r, 3: lambda v, r: v == r,
                 4: lambda v, r: v != r, 5: lambda v, r: v >= r, 6: lambda v, r: v > r}[func]
    flag = vm.alloc(64)
    reg = regs.COMPUTE_USER_DATA_0 + 7
    for value in (0x10, 0x25, 0x30):
        r = Ring(vm, "pm4")
        if memory:
            vm.write(flag, struct.pack("<I", value | 0xF00))
        else:
            r.q.regs[reg] = value | 0xF00
        addr = flag if memory else reg
        r.submit(hw.wait_reg_mem(addr, 0x25, mask=0xFF, func=func, memory=memory), hw.write_data(flag + 8, 1))
        expect = ref_model(value, 0x25)
        assert r.q.state == (QueueState.IDLE if expect else QueueState.BLOCKED)
        assert vm.u32(flag + 8)[0] == int(expect)
        if not expect:
            assert "WAIT_REG_MEM" in r.q.waiting and hw.Compare(func).name in vm.gpu.describe()
        vm.write(flag + 8, bytes(4))
        vm.gpu.destroy_queue(r.q)


def test_wait_blocks_one_queue_not_others_and_resumes_on_poll(vm):
    waiter, other = Ring(vm, "pm4"), Ring(vm, "pm4")
    flag, out = vm.alloc(64), vm.alloc(64)
    waiter.submit(hw.wait_reg_mem(flag, 1), hw.write_data(out, 0x77))
    assert waiter.q.state == QueueState.BLOCKED and str(hex(flag)) in waiter.q.waiting
    other.submit(hw.write_data(out + 4, 0x55), hw.write_data(flag, 1))
    assert other.q.state == QueueState.IDLE and vm.u32(out, 2) == [0, 0x55]
    vm.gpu.run_until_idle()
    assert waiter.q.state == QueueState.IDLE and vm.u32(out)[0] == 0x77


def _write_then_wait(write_reg: int, poll_reg: int, ref: int, mask: int = 0xFFFFFFFF, func: int = hw.Compare.GE,
                     memory: bool = False) -> list[int]:
    """WAIT_REG_MEM with OPERATION=1 as amdgpu's gfx_v11_0_wait_reg_mem and tinygrad's memory_barrier emit it."""
    control = func | ((hw.MemSpace.MEMORY if memory else hw.MemSpace.REGISTER) << 4) | (hw.WAIT_REG_MEM_WRITE_WAIT << 6)
    return hw.packet(hw.Op.WAIT_REG_MEM, control, write_reg, poll_reg, ref, mask, 4)


def test_hdp_flush_write_then_wait_completes(vm):
    r = Ring(vm, "pm4")
    out = vm.alloc(64)
    r.submit(_write_then_wait(regs.BIF_BX_PF0_GPU_HDP_FLUSH_REQ, regs.BIF_BX_PF0_GPU_HDP_FLUSH_DONE, 0xFFFFFFFF),
             hw.write_data(out, 1))
    assert r.q.state == QueueState.IDLE and vm.u32(out)[0] == 1
    assert vm.gpu.regs[regs.BIF_BX_PF0_GPU_HDP_FLUSH_DONE] == 0xFFFFFFFF


def test_write_then_wait_writes_once_and_blocks_until_the_polled_register_matches(vm):
    r = Ring(vm, "pm4")
    out = vm.alloc(64)
    write, poll = 0xC040, 0xC041  # UCONFIG registers nothing else touches
    r.submit(_write_then_wait(write, poll, 7, func=hw.Compare.EQ), hw.write_data(out, 1))
    assert r.q.state == QueueState.BLOCKED and vm.gpu.regs[write] == 7 and "0xc041" in r.q.waiting
    vm.gpu.regs[write] = 0  # a retry of the same blocked packet must not write again
    vm.gpu.run_until_idle()
    assert r.q.state == QueueState.BLOCKED and vm.gpu.regs[write] == 0
    vm.gpu.regs[poll] = 7
    vm.gpu.run_until_idle()
    assert r.q.state == QueueState.IDLE and vm.u32(out)[0] == 1 and vm.gpu.regs[write] == 0


def test_write_then_wait_on_memory_is_a_queue_error(vm):
    r = Ring(vm, "pm4")
    r.submit(_write_then_wait(vm.alloc(64), 0, 1, memory=True))
    assert r.q.state == QueueState.ERROR and "registers only" in r.q.error.why


def test_unsatisfiable_wait_is_reported_blocked(vm):
    r = Ring(vm, "pm4")
    flag = vm.alloc(64)
    r.submit(hw.wait_reg_mem(flag, 5, func=hw.Compare.GT))
    vm.gpu.run_until_idle()
    assert r.q.state == QueueState.BLOCKED and "GT 0x5" in r.q.waiting and r.q.rptr == 0


def test_release_mem_data_timestamp_and_interrupt_order(vm):
    r = Ring(vm, "pm4")
    out = vm.alloc(64)
    r.submit(hw.release_mem(out, 0x1234, data_sel=hw.DataSel.DATA32),
             hw.release_mem(out + 8, 0x1_0000_0002, data_sel=hw.DataSel.DATA64, int_sel=hw.IntSel.INT_AFTER_WRITE,
                            ctx_id=42),
             hw.release_mem(out + 16, data_sel=hw.DataSel.GPU_CLOCK, int_sel=hw.IntSel.INT_AFTER_WRITE, ctx_id=43),
             hw.release_mem(data_sel=hw.DataSel.NONE, int_sel=hw.IntSel.INT_ONLY, ctx_id=44))
    assert vm.u32(out)[0] == 0x1234 and vm.u64(out + 8) == 0x1_0000_0002
    events = vm.gpu.take_interrupts()
    assert [(e.source, e.kind, e.context_id, e.queue) for e in events] == [
        (Source.CP, Kind.END_OF_PIPE, ctx, r.q.name) for ctx in (42, 43, 44)]
    assert events[0].data == 0x1_0000_0002 and events[2].data is None
    assert events[1].data == vm.u64(out + 16) == events[1].timestamp
    assert [e.seq for e in events] == sorted(e.seq for e in events)


def test_acquire_mem_and_event_write(vm):
    r = Ring(vm, "pm4")
    r.submit(hw.acquire_mem(gcr=0x3FF), hw.event_write(hw.Event.CS_PARTIAL_FLUSH),
             hw.event_write(hw.Event.CACHE_FLUSH_AND_INV_EVENT), hw.event_write(hw.Event.THREAD_TRACE_START),
             hw.event_write(hw.Event.THREAD_TRACE_MARKER), hw.event_write(hw.Event.THREAD_TRACE_STOP))
    assert r.q.state == QueueState.IDLE
    assert [name for name, _ in r.q.trace] == ["THREAD_TRACE_START", "THREAD_TRACE_MARKER", "THREAD_TRACE_STOP"]
    r.submit(hw.event_write(0x3E))
    assert r.q.state == QueueState.ERROR and "event type 0x3e" in r.q.error.why


def _vadd(vm, n=1024):
    k = vm.load(VADD.code_object())["vadd"]
    rng = np.random.default_rng(1)
    a, b = rng.random(n, np.float32), rng.random(n, np.float32)
    return k, a, b, vm.upload(a), vm.upload(b), vm.alloc(4 * n)


def test_dispatch_direct_runs_the_kernel(vm):
    r = Ring(vm, "pm4")
    k, a, b, va, vb, vc = _vadd(vm)
    r.submit(pm4_launch(vm, k, [va, vb, vc], (4,), (256,)))
    assert r.q.state == QueueState.IDLE and r.q.dispatches == 1
    assert np.array_equal(vm.download(vc, np.float32, 1024), a + b)
    assert r.q.regs[regs.COMPUTE_DIM_X] == 4


def test_dispatch_indirect_reads_dimensions_from_memory(vm):
    r = Ring(vm, "pm4")
    k, a, b, va, vb, vc = _vadd(vm)
    dims = vm.upload(np.array([2, 1, 1], np.uint32))
    pkts = pm4_launch(vm, k, [va, vb, vc], (4,), (256,))
    r.submit(pkts[:-5], hw.dispatch_indirect(dims))  # everything but the DISPATCH_DIRECT (5 dwords)
    got = vm.download(vc, np.float32, 1024)
    assert np.array_equal(got[:512], (a + b)[:512]) and not got[512:].any()


def test_indirect_buffers_nested_chained_and_blocking_inside(vm):
    r = Ring(vm, "pm4")
    out, flag = vm.alloc(64), vm.alloc(64)
    ib2 = hw.write_data(out + 4, 2)
    ib2_va = vm.upload(np.array(ib2, np.uint32))
    chained = hw.write_data(out + 12, 4)
    chained_va = vm.upload(np.array(chained, np.uint32))
    ib1 = [*hw.write_data(out, 1), *hw.indirect_buffer(ib2_va, len(ib2)), *hw.wait_reg_mem(flag, 1),
           *hw.write_data(out + 8, 3), *hw.indirect_buffer(chained_va, len(chained), chain=True),
           *hw.write_data(out + 16, 99)]  # never reached: the chain does not return
    ib1_va = vm.upload(np.array(ib1, np.uint32))
    r.submit(hw.indirect_buffer(ib1_va, len(ib1)), hw.write_data(out + 20, 5))
    assert r.q.state == QueueState.BLOCKED and vm.u32(out, 6) == [1, 2, 0, 0, 0, 0]
    vm.write(flag, struct.pack("<I", 1))
    vm.gpu.run_until_idle()
    assert r.q.state == QueueState.IDLE and vm.u32(out, 6) == [1, 2, 3, 4, 0, 5]


def test_ib_that_calls_itself_hits_the_depth_limit_and_chain_loop_the_watchdog(vm):
    r = Ring(vm, "pm4")
    ib = vm.alloc(64)
    vm.write(ib, np.array(hw.indirect_buffer(ib, 4), np.uint32).tobytes())
    r.submit(hw.indirect_buffer(ib, 4))
    assert r.q.state == QueueState.ERROR and "nested deeper" in r.q.error.why
    r2 = Ring(vm, "pm4")
    loop = vm.alloc(64)
    vm.write(loop, np.array(hw.indirect_buffer(loop, 4, chain=True), np.uint32).tobytes())
    vm.gpu.packet_budget = 1000
    r2.submit(hw.indirect_buffer(loop, 4))
    assert r2.q.state == QueueState.ERROR and "watchdog" in r2.q.error.why


def test_pred_exec_skips_unselected_devices(vm):
    r = Ring(vm, "pm4")
    out = vm.alloc(64)
    w1, w2 = hw.write_data(out, 1), hw.write_data(out + 4, 2)
    r.submit(hw.pred_exec(len(w1), device_select=0b10), w1, hw.pred_exec(len(w2), device_select=0b01), w2)
    assert vm.u32(out, 2) == [0, 2]


def test_dma_data_copy_across_scattered_pages_fill_and_fixed_dst(vm):
    r = Ring(vm, "pm4")
    n = 3 * 4096 + 100
    data = np.random.default_rng(2).integers(0, 256, n, dtype=np.uint8)
    src = vm.alloc(n, scattered=True)
    vm.write(src, data.tobytes())
    dst, fill = vm.alloc(n, scattered=True), vm.alloc(8192)
    r.submit(hw.dma_data(dst + 3, src, n - 3), hw.dma_data(fill, 0xA5A5A5A5, 4096 + 8, src_sel=hw.DmaSrc.DATA),
             hw.dma_data(fill + 8192 - 4, src, 16, command=hw.DMA_DATA_COMMAND.daic.bits()))
    assert vm.read(dst + 3, n - 3) == data[:n - 3].tobytes()
    assert vm.read(fill, 4096 + 12) == b"\xa5" * (4096 + 8) + bytes(4)
    assert vm.read(fill + 8192 - 4, 4) == data[12:16].tobytes()


ATOMIC_REF = {
    "add": lambda o, s, c, m: (o + s) & m, "sub": lambda o, s, c, m: (o - s) & m, "and": lambda o, s, c, m: o & s,
    "or": lambda o, s, c, m: o | s, "xor": lambda o, s, c, m: o ^ s, "swap": lambda o, s, c, m: s,
    "umin": lambda o, s, c, m: min(o, s), "umax": lambda o, s, c, m: max(o, s),
    "cmpswap": lambda o, s, c, m: s if o == c else o,
    "inc": lambda o, s, c, m: 0 if o >= s else o + 1, "dec": lambda o, s, c, m: s if o == 0 or o > s else o - 1,
}


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) else v


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(sorted(hw.TcOp, key=int)), old=st.integers(0, 2**64 - 1), src=st.integers(0, 2**64 - 1),
       cmp=st.integers(0, 2**64 - 1), same=st.booleans())
def test_atomic_mem_against_reference(op, old, src, cmp, same):
    vm = VM(GPU(vram_size=64 << 20))
    r = Ring(vm, "pm4")
    name, size = hw.tc_op_info(op)
    bits, m = 8 * size, (1 << (8 * size)) - 1
    old, src, cmp = old & m, src & m, (old & m) if same else cmp & m
    addr, out = vm.alloc(64), vm.alloc(64)
    vm.write(addr, old.to_bytes(size, "little"))
    r.submit(hw.atomic_mem(addr, op, src, cmp),
             hw.copy_data(hw.CopySrc.ATOMIC_RETURN, 0, hw.CopyDst.MEMORY, out, wide=True))
    if name in ("smin", "smax"):
        pick = min if name == "smin" else max
        want = pick(_signed(old, bits), _signed(src, bits)) & m
    else:
        want = ATOMIC_REF[name](old, src, cmp, m)
    assert int.from_bytes(vm.read(addr, size), "little") == want
    assert vm.u64(out) & m == old


def test_atomic_mem_loop_until_compare_blocks_then_succeeds(vm):
    r = Ring(vm, "pm4")
    lock = vm.alloc(64)
    vm.write(lock, struct.pack("<I", 1))
    r.submit(hw.atomic_mem(lock, hw.TcOp.CMPSWAP_RTN_32, src=1, cmp=0, command=hw.AtomicCommand.LOOP_UNTIL_COMPARE))
    assert r.q.state == QueueState.BLOCKED and "compare-swap" in r.q.waiting
    vm.write(lock, struct.pack("<I", 0))
    vm.gpu.run_until_idle()
    assert r.q.state == QueueState.IDLE and vm.u32(lock)[0] == 1


def test_bad_packets_report_queue_rptr_words_and_reason(vm):
    r = Ring(vm, "pm4")
    r.submit(hw.nop(1), [hw.header(0x99, 2), 1, 2])  # 0x99 is AQL_PACKET: not a compute-queue packet here
    e = r.q.error
    assert r.q.state == QueueState.ERROR and e.rptr == 2 and e.packet == [hw.header(0x99, 2), 1, 2]
    last = vm.gpu.interrupt_log[-1]
    assert "opcode 0x99" in e.why and (last.kind, last.error, last.fault) == (Kind.QUEUE_ERROR, e, None)
    assert "hung at rptr 2" in vm.gpu.describe()
    r2 = Ring(vm, "pm4")
    r2.submit([0x00001234])  # type-0 packet
    assert "type-0" in r2.q.error.why
    r3 = Ring(vm, "pm4")
    r3.submit(hw.write_data(0x1000, 1))  # unmapped: a GPU page fault, reported by the queue
    assert r3.q.error.fault.kind == "page_fault" and r3.q.error.fault.address == 0x1000
    r4 = Ring(vm, "pm4")
    r4.submit(hw.write_data(vm.alloc(64), 1, 2)[:4])  # truncated: runs past wptr
    assert "past the end of the ring" in r4.q.error.why


def test_sendmsg_interrupts_reach_every_hook_in_order_and_the_log_stays_bounded(vm):
    r = Ring(vm, "pm4")
    k = asm_kernel(vm, "s_add_u32 m0, s2, 100\ns_sendmsg sendmsg(MSG_INTERRUPT)\ns_endpgm", args=0)
    heard: list = []
    vm.gpu.interrupt_hooks.append(heard.append)
    vm.gpu.take_interrupts()
    r.submit(pm4_launch(vm, k, [], (3,), (32,)), hw.release_mem(int_sel=hw.IntSel.INT_ONLY,
                                                              data_sel=hw.DataSel.NONE, ctx_id=9))
    assert [(e.source, e.kind, e.context_id, e.queue) for e in heard] == [
        *((Source.SQ, Kind.SENDMSG, 100 + g, r.q.name) for g in range(3)), (Source.CP, Kind.END_OF_PIPE, 9, r.q.name)]
    assert vm.gpu.take_interrupts() == heard and [e.seq for e in heard] == sorted(e.seq for e in heard)
    launches = INTERRUPT_LOG // 3 + 1  # more interrupts than the log holds
    for _ in range(launches):
        r.submit(pm4_launch(vm, k, [], (3,), (32,)))
    assert len(heard) == 4 + 3 * launches and len(vm.gpu.interrupt_log) == INTERRUPT_LOG
    assert list(vm.gpu.interrupt_log) == heard[-INTERRUPT_LOG:]


def test_shader_fault_is_reported_by_the_queue_and_device_stays_usable(vm):
    r = Ring(vm, "pm4")
    k = asm_kernel(vm, "s_trap 2\ns_endpgm", args=0)
    r.submit(pm4_launch(vm, k, [], (1,), (32,)))
    assert r.q.state == QueueState.ERROR and r.q.error.fault.kind == "trap"
    last = vm.gpu.interrupt_log[-1]
    assert r.q.error.fault.queue == r.q.name and (last.kind, last.fault) == (Kind.QUEUE_ERROR, r.q.error.fault)
    ok = Ring(vm, "pm4")
    k2, a, b, va, vb, vc = _vadd(vm)
    ok.submit(pm4_launch(vm, k2, [va, vb, vc], (4,), (256,)))
    assert np.array_equal(vm.download(vc, np.float32, 1024), a + b)


def test_ring_wraps_around(vm):
    r = Ring(vm, "pm4", size=256)  # 64 dwords
    out = vm.alloc(4096)
    for i in range(40):
        r.submit(hw.write_data(out + 4 * i, i + 1))  # 5 dwords each: wraps every ~13 packets
    assert vm.u32(out, 40) == list(range(1, 41)) and r.q.rptr == 200


@pytest.mark.parametrize("fmt", ["pm4", "sdma"])
def test_update_queue_repoints_an_idle_ring_and_refuses_a_busy_one(vm, fmt):
    write = hw.write_data if fmt == "pm4" else sdma.fence
    r, out = Ring(vm, fmt), vm.alloc(64)
    r.submit(write(out, 1))
    r.base = vm.alloc(8192)  # the harness writes packets at Ring.base from now on
    vm.gpu.update_queue(r.q, r.base, 8192)
    r.size = 8192
    r.submit(write(out + 4, 2))
    assert vm.u32(out, 2) == [1, 2] and r.q.ring_base == r.base and r.q.rptr == r.q.wptr
    r.submit(hw.wait_reg_mem(out, 7) if fmt == "pm4" else sdma.poll_regmem(out, 7))  # blocks: not idle
    with pytest.raises(ValueError, match="not idle"):
        vm.gpu.update_queue(r.q, r.base, 8192)
    with pytest.raises(ValueError, match="power of two"):
        vm.gpu.update_queue(r.q, r.base, 1000)


def test_wptr_poll_address_is_read_by_poll(vm):
    r = Ring(vm, "pm4", wptr_poll=True)
    out = vm.alloc(64)
    r.submit(hw.write_data(out, 9), ring=False)
    assert vm.u32(out)[0] == 0
    vm.gpu.poll()
    assert vm.u32(out)[0] == 9


def test_two_gpus_are_independent():
    a, b = VM(GPU(vram_size=64 << 20)), VM(GPU(vram_size=64 << 20))
    ra, rb = Ring(a, "pm4"), Ring(b, "pm4")
    oa, ob = a.alloc(64), b.alloc(64)
    ra.submit(hw.write_data(oa, 1))
    rb.submit(hw.write_data(ob, 2), hw.nop(5))
    assert a.u32(oa)[0] == 1 and b.u32(ob)[0] == 2 and a.gpu.clock.cycles != b.gpu.clock.cycles
