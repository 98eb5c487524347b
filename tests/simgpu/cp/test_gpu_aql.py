"""AQL (HSA) compute queues of simgpu.GPU: dispatch, signals, barriers, vendor PM4 IBs, errors."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from compiler.llvm import compile_ir
from compiler.samples import VADD
from simgpu.cp.queue import QueueState
from simgpu.gpu import GPU
from simgpu.hw import aql
from simgpu.hw import pm4 as hw
from simgpu.interrupt import Kind, Source
from tests.support.gpu_harness import VM, Ring, aql_launch, asm_kernel, new_signal, pm4_launch

# y = a * x + b over a 2-D grid, using workgroup and work-item ids in x and y: exercises grid shape and ids.
SAXPY2D = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()

define amdgpu_kernel void @saxpy2d(ptr addrspace(1) %x, ptr addrspace(1) %y, float %a, i32 %width) {
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %gx = call i32 @llvm.amdgcn.workgroup.id.x()
  %gy = call i32 @llvm.amdgcn.workgroup.id.y()
  %bx = mul i32 %gx, 16
  %by = mul i32 %gy, 8
  %col = add i32 %bx, %tx
  %row = add i32 %by, %ty
  %r = mul i32 %row, %width
  %i = add i32 %r, %col
  %px = getelementptr float, ptr addrspace(1) %x, i32 %i
  %py = getelementptr float, ptr addrspace(1) %y, i32 %i
  %vx = load float, ptr addrspace(1) %px
  %vy = load float, ptr addrspace(1) %py
  %m = fmul float %a, %vx
  %s = fadd float %m, %vy
  store float %s, ptr addrspace(1) %py
  ret void
}
"""


@pytest.fixture
def vm():
    return VM(GPU(vram_size=256 << 20))


def _run_saxpy(path: str):
    vm = VM(GPU(vram_size=256 << 20))
    k = vm.load(compile_ir(SAXPY2D))["saxpy2d"]
    w, h = 64, 32
    rng = np.random.default_rng(3)
    x, y = rng.random(w * h, np.float32), rng.random(w * h, np.float32)
    vx, vy = vm.upload(x), vm.upload(y)
    args, grid, block = [vx, vy, np.float32(2.5), w], (w // 16, h // 8), (16, 8)
    r = Ring(vm, path)
    if path == "pm4":
        r.submit(pm4_launch(vm, k, args, grid, block))
    else:
        r.submit(aql_launch(vm, k, args, grid, block, new_signal(vm)))
    assert r.q.state == QueueState.IDLE, vm.gpu.describe()
    return vm.download(vy, np.float32, w * h), np.float32(2.5) * x + y


def test_pm4_and_aql_dispatch_of_the_same_kernel_give_identical_results():
    pm4_out, want = _run_saxpy("pm4")
    aql_out, _ = _run_saxpy("aql")
    assert np.array_equal(pm4_out, want) and pm4_out.tobytes() == aql_out.tobytes()


def test_completion_signal_timestamps_mailbox_and_read_dispatch_id(vm):
    r = Ring(vm, "aql")
    k = vm.load(VADD.code_object())["vadd"]
    a = np.arange(512, dtype=np.float32)
    va, vc = vm.upload(a), vm.alloc(2048)
    mailbox = vm.alloc(64)
    sig = new_signal(vm, value=2, mailbox=mailbox, event_id=17)
    t0 = vm.gpu.clock.timestamp()
    r.submit(aql_launch(vm, k, [va, va, vc], (2,), (256,), sig))
    s = aql.Signal.unpack(vm.read(sig, 64))
    assert s.value == 1 and t0 <= s.start_ts < s.end_ts <= vm.gpu.clock.timestamp()
    assert vm.u32(mailbox)[0] == 17
    ev = vm.gpu.take_interrupts()
    assert [(e.source, e.kind, e.context_id, e.data, e.signal) for e in ev] == [(Source.CP, Kind.SIGNAL, 17, 1, sig)]
    assert vm.u64(r.rptr_addr) == 1 == r.q.rptr  # amd_queue_t.read_dispatch_id
    assert np.array_equal(vm.download(vc, np.float32, 512), 2 * a)


def test_barrier_then_dispatch_run_in_order_with_kernargs(vm):
    r = Ring(vm, "aql")
    k = asm_kernel(vm, """
        s_load_b64 s[4:5], s[0:1], 0x0
        s_waitcnt lgkmcnt(0)
        v_mov_b32 v1, 0x1234
        v_lshlrev_b32 v2, 2, v0
        global_store_b32 v2, v1, s[4:5]
        s_endpgm
    """)
    out = vm.alloc(256)
    r.submit(aql.BarrierPacket(aql.make_header(aql.PacketType.BARRIER_AND)).pack(),
             aql_launch(vm, k, [out], (1,), (64,)))
    assert r.q.rptr == 2 and vm.u32(out, 64) == [0x1234] * 64


def test_barrier_and_or_block_until_signals_reach_zero(vm):
    r = Ring(vm, "aql")
    s1, s2, done = new_signal(vm, 1), new_signal(vm, 1), new_signal(vm, 1)
    r.submit(aql.BarrierPacket(aql.make_header(aql.PacketType.BARRIER_OR), (s1, s2)).pack(),
             aql.BarrierPacket(aql.make_header(aql.PacketType.BARRIER_AND), (s1, 0, s2), done).pack())
    assert r.q.state == QueueState.BLOCKED and "BARRIER_OR" in r.q.waiting
    vm.write(s2 + aql.SIGNAL_VALUE, struct.pack("<q", 0))
    vm.gpu.run_until_idle()
    assert r.q.state == QueueState.BLOCKED and "BARRIER_AND" in r.q.waiting and hex(s1) in r.q.waiting
    assert r.q.rptr == 1
    vm.write(s1 + aql.SIGNAL_VALUE, struct.pack("<q", 0))
    vm.gpu.run_until_idle()
    assert r.q.state == QueueState.IDLE and r.q.rptr == 2
    assert aql.Signal.unpack(vm.read(done, 64)).value == 0


def test_vendor_specific_pm4_ib_with_a_wait_inside(vm):
    r = Ring(vm, "aql")
    out, flag = vm.alloc(64), vm.alloc(64)
    ib = [*hw.write_data(out, 1), *hw.wait_reg_mem(flag, 1), *hw.write_data(out + 4, 2)]
    ib_va = vm.upload(np.array(ib, np.uint32))
    sig = new_signal(vm)
    pkt = aql.VendorPM4IBPacket(aql.make_header(aql.PacketType.VENDOR_SPECIFIC),
                                ib_jump_cmd=tuple(hw.indirect_buffer(ib_va, len(ib))), completion_signal=sig)
    r.submit(pkt.pack())
    assert r.q.state == QueueState.BLOCKED and vm.u32(out, 2) == [1, 0] and r.q.rptr == 0
    vm.write(flag, struct.pack("<I", 1))
    vm.gpu.run_until_idle()
    assert r.q.state == QueueState.IDLE and vm.u32(out, 2) == [1, 2] and r.q.rptr == 1
    assert aql.Signal.unpack(vm.read(sig, 64)).value == 0


def test_invalid_header_waits_for_the_producer(vm):
    r = Ring(vm, "aql")
    k = asm_kernel(vm, "s_endpgm", args=0)
    pkt = bytearray(aql_launch(vm, k, [], (1,), (32,)))
    good_header = bytes(pkt[:2])
    pkt[:2] = struct.pack("<H", aql.make_header(aql.PacketType.INVALID))
    r.submit(bytes(pkt))
    assert r.q.state == QueueState.IDLE and r.q.rptr == 0 and "INVALID" in r.q.waiting
    vm.write(r.base, good_header)
    vm.gpu.ring_doorbell(r.q.doorbell, r.wptr)
    assert r.q.rptr == 1 and r.q.dispatches == 1


def test_a_doorbell_rung_with_the_last_packet_id_runs_up_to_write_dispatch_id(vm):
    """HSA producers (ROCr, tinygrad) store the id of the packet they wrote into the doorbell, one less than the
    write index they published in amd_queue_t.write_dispatch_id: the CP runs every packet up to the latter."""
    r = Ring(vm, "aql", wptr_poll=True)
    done = new_signal(vm, 1)
    r.submit(aql.BarrierPacket(aql.make_header(aql.PacketType.BARRIER_AND)).pack(),
             aql.BarrierPacket(aql.make_header(aql.PacketType.BARRIER_AND), completion_signal=done).pack(), ring=False)
    vm.gpu.ring_doorbell(r.q.doorbell, r.wptr - 1)
    assert r.q.state == QueueState.IDLE and r.q.rptr == 2
    assert aql.Signal.unpack(vm.read(done, 64)).value == 0


@pytest.mark.parametrize("mutate, why", [
    (lambda p: p.__setitem__(slice(0, 2), struct.pack("<H", aql.make_header(aql.PacketType.AGENT_DISPATCH))),
     "AGENT_DISPATCH"),
    (lambda p: p.__setitem__(slice(0, 2), struct.pack("<H", aql.make_header(2, acquire=3))), "reserved fence"),
    (lambda p: p.__setitem__(slice(32, 40), struct.pack("<Q", 0x7F00_0000_0004)), "64-byte aligned"),
    (lambda p: p.__setitem__(slice(2, 4), struct.pack("<H", 0)), "dimensions = 0"),
    (lambda p: p.__setitem__(slice(4, 6), struct.pack("<H", 0)), "zero dimension"),
    (lambda p: p.__setitem__(slice(4, 6), struct.pack("<H", 2048)), "exceeds 1024"),
])
def test_bad_aql_packets_are_queue_errors(vm, mutate, why):
    r = Ring(vm, "aql")
    k = asm_kernel(vm, "s_endpgm", args=0)
    pkt = bytearray(aql_launch(vm, k, [], (1,), (32,)))
    mutate(pkt)
    r.submit(bytes(pkt))
    assert r.q.state == QueueState.ERROR and why in r.q.error.why, r.q.error
    assert len(r.q.error.packet) == 16 and r.q.error.rptr == 0
