"""Kernel graphs (runtime.graph): recorded dispatches run as one submission on PM4 (an indirect buffer) and AQL
(a batch of barrier packets), in order, with buffers patched per run; checked against NumPy."""

from functools import cache

import numpy as np
import pytest

import runtime
from compiler.llvm import compile_ir
from mockgpu import MockOS
from runtime.graph import Dispatch, KernelGraph
from simgpu.hw import aql
from simgpu.hw import pm4 as hw
from tests.runtime.test_runtime_launch import INC_IR

# INC_IR computes x -> 3x + k: runs that do not keep the recorded order give other numbers
N = 64


@cache
def _code() -> bytes:
    return compile_ir(INC_IR)


def _inc(x: np.ndarray, k: int) -> np.ndarray:
    return ((x.astype(np.uint64) * 3 + k) & 0xFFFFFFFF).astype(np.uint32)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_a_graph_runs_its_dispatches_in_order_with_buffers_patched(queue, lazy):
    dev = runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 28, lazy_doorbells=lazy))
    inc = dev.load(_code())["inc"]
    a, b, c = (dev.alloc(4 * N) for _ in range(3))
    start = {buf: np.arange(N, dtype=np.uint32) * (i + 1) for i, buf in enumerate((a, b, c))}
    for buf, x in start.items():
        buf.copyin(x)
    g = KernelGraph(dev, [Dispatch(inc, (a, 1), (2, 1, 1), (32, 1, 1)), Dispatch(inc, (b, 2), (2, 1, 1), (32, 1, 1)),
                          Dispatch(inc, (a, 5), (2, 1, 1), (32, 1, 1))])
    launches = dev.launches
    run = g.run()
    assert run.wait() > 0 and len(run.times) == 3 and all(t > 0 for t in run.times)
    assert dev.launches == launches + 3
    want = {a: _inc(_inc(start[a], 1), 5), b: _inc(start[b], 2), c: start[c]}
    # slot a now means c: a keeps its values, c gets a's two steps
    g.run({g.slot(a): c}, wait=True)
    want[c] = _inc(_inc(start[c], 1), 5)
    want[b] = _inc(want[b], 2)
    g.run({}, wait=True)  # c stays bound until another run replaces it
    want[c], want[b] = _inc(_inc(want[c], 1), 5), _inc(want[b], 2)
    for buf, x in want.items():
        np.testing.assert_array_equal(buf.copyout(np.empty(N, np.uint32)), x)
    g.free()
    dev.close()


def test_the_commands_are_what_a_gpu_takes():
    """PM4: one INDIRECT_BUFFER in the ring, dispatches in the IB separated by CS_PARTIAL_FLUSH and ACQUIRE_MEM.
    AQL: kernel dispatch packets with the barrier bit, each with its own kernarg segment."""
    dev = runtime.Device("AMD:0", queue="pm4", os=MockOS(devices=1, vram_size=1 << 28))
    inc, a = dev.load(_code())["inc"], dev.alloc(4 * N)
    g = KernelGraph(dev, [Dispatch(inc, (a, k), (2, 1, 1), (32, 1, 1)) for k in (1, 2)])
    assert hw.parse_header(g._commands[0])[1] == hw.Op.INDIRECT_BUFFER
    words = np.frombuffer(bytes(g.ib.view), np.uint32)
    ops, pos = [], 0
    while pos < len(words):
        _, op, n = hw.parse_header(int(words[pos]))
        ops.append(op)
        pos += 1 + n
        if ops[-1] == hw.Op.DISPATCH_DIRECT and len([o for o in ops if o == hw.Op.DISPATCH_DIRECT]) == 2:
            break
    first = ops.index(hw.Op.DISPATCH_DIRECT)
    assert hw.Op.EVENT_WRITE in ops[first:] and hw.Op.ACQUIRE_MEM in ops[first:]
    dev.close()
    dev = runtime.Device("AMD:0", queue="aql", os=MockOS(devices=1, vram_size=1 << 28))
    inc, a = dev.load(_code())["inc"], dev.alloc(4 * N)
    g = KernelGraph(dev, [Dispatch(inc, (a, k), (2, 1, 1), (32, 1, 1)) for k in (1, 2)])
    packets = [aql.KernelDispatchPacket.unpack(p) for p in g._commands]
    assert all(aql.parse_header(p.header)[:2] == (aql.PacketType.KERNEL_DISPATCH, True) for p in packets)
    assert packets[0].kernarg_address != packets[1].kernarg_address
    dev.close()


def test_a_graph_refuses_a_kernel_of_another_device_and_no_dispatches():
    mock = MockOS(devices=2, vram_size=1 << 28)
    d0, d1 = runtime.Device("AMD:0", os=mock), runtime.Device("AMD:1", os=mock)
    inc, a = d1.load(_code())["inc"], d1.alloc(4 * N)
    with pytest.raises(ValueError, match="loaded on AMD:1"):
        KernelGraph(d0, [Dispatch(inc, (a, 1), (1, 1, 1), (32, 1, 1))])
    with pytest.raises(ValueError, match="at least one dispatch"):
        KernelGraph(d0, [])


def test_under_a_profiler_each_dispatch_is_launched_and_profiled():
    dev = runtime.Device("AMD:0", os=MockOS(devices=1, vram_size=1 << 28))
    inc = dev.load(_code())["inc"]
    a, b = dev.alloc(4 * N), dev.alloc(4 * N)
    x = np.arange(N, dtype=np.uint32)
    a.copyin(x)
    b.copyin(x)
    g = KernelGraph(dev, [Dispatch(inc, (a, k), (2, 1, 1), (32, 1, 1)) for k in (1, 2)])
    prof = dev.profile(lambda: g.run({g.slot(a): b}, wait=True), counters=["SQ_WAVES"])
    assert [k.name for k in prof.kernels] == ["inc", "inc"]
    assert all(k.counters["SQ_WAVES"] == 2 for k in prof.kernels)
    np.testing.assert_array_equal(b.copyout(np.empty(N, np.uint32)), _inc(_inc(x, 1), 2))
    np.testing.assert_array_equal(a.copyout(np.empty(N, np.uint32)), x)
    dev.close()


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_a_graph_and_a_large_copy_on_a_gfx942_take_gfx9s_packets(queue):
    """gfx942: the graph's IB separates dispatches with gfx9's ACQUIRE_MEM (the command processor refuses gfx11's) and
    a copy between buffers takes SDMA 4.4's COPY_LINEARs of at most 4 MiB with a FENCE without MTYPE."""
    dev = runtime.Device("AMD:0", queue=queue, os=MockOS(devices=1, vram_size=1 << 28, arch="gfx942"))
    inc = dev.load(compile_ir(INC_IR, "gfx942"))["inc"]
    a = dev.alloc(4 * N)
    a.copyin(np.arange(N, dtype=np.uint32))
    g = KernelGraph(dev, [Dispatch(inc, (a, 1), (1, 1, 1), (64, 1, 1)), Dispatch(inc, (a, 5), (1, 1, 1), (64, 1, 1))])
    g.run(wait=True)
    np.testing.assert_array_equal(a.copyout(np.empty(N, np.uint32)), _inc(_inc(np.arange(N, dtype=np.uint32), 1), 5))
    big = np.random.default_rng(0).integers(0, 1 << 32, (9 << 20) // 4, dtype=np.uint32)  # 3 packets
    src, dst = dev.alloc(big.nbytes), dev.alloc(big.nbytes)
    src.copyin(big)
    dev.copy_between(dst, src, big.nbytes)
    np.testing.assert_array_equal(dst.copyout(np.empty_like(big)), big)
    g.free()
    dev.close()
