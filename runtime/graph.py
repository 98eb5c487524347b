"""Kernel graphs: a recorded list of dispatches submitted as one batch, with buffers patched in per run.

`KernelGraph(dev, [Dispatch(kernel, args, grid, block), ...])` packs every dispatch's kernel arguments once into
a kernarg buffer of its own and builds the command stream once: on a PM4 queue an indirect buffer (each dispatch's
packets, a CS_PARTIAL_FLUSH and a cache ACQUIRE_MEM between dispatches so each sees the last one's writes) that a
run submits as one INDIRECT_BUFFER packet; on an AQL queue one kernel dispatch packet per dispatch, barrier bit
set, published together with one doorbell. `run({slot: buffer})` writes the new buffers' addresses into the
kernarg bytes of every argument that held the slot's buffer (the buffers the graph was recorded with are the
slots: `slot(buffer)`), then submits. Nothing is re-checked, re-packed or re-built per run but those addresses:
what a real GPU runs is the same packets a launch makes (runtime.module).

A run waits for the graph's previous run before patching (the GPU reads the kernarg bytes while it runs).
With a profiler on the device (SIMGPU_PROFILE), a run launches each dispatch by itself so every launch is
profiled as usual.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from runtime.memory import Buffer
from runtime.module import Kernel, completion_signal
from simgpu.hw import aql, pm4_gfx9
from simgpu.hw import pm4 as hw
from simgpu.isa.arch import get_arch

_ALIGN = 64  # kernarg segments start 64-byte aligned, as the kernarg ring hands them out
_AQL_BATCH = 256  # dispatch packets per doorbell (a quarter of the AQL ring)


def _barrier(family: str) -> list[int]:
    """Between two dispatches of an indirect buffer: wait for the first, then acquire its writes in the family's
    ACQUIRE_MEM form (gfx9's CP_COHER_CNTL, gfx10+'s GCR_CNTL)."""
    acquire = pm4_gfx9.acquire_mem() if family == "gfx9" else hw.acquire_mem(gcr=hw.GCR_INVALIDATE_ALL)
    return [*hw.event_write(hw.Event.CS_PARTIAL_FLUSH), *acquire]


@dataclass
class Dispatch:
    """One recorded launch: a loaded kernel, its arguments (Buffers for pointers), grid and block."""

    kernel: Kernel
    args: tuple
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


class KernelGraph:
    """Dispatches recorded once, run as one submission (module docstring)."""

    def __init__(self, dev, dispatches: list[Dispatch]):
        if not dispatches:
            raise ValueError("a kernel graph needs at least one dispatch")
        for d in dispatches:
            if d.kernel.module.device is not dev:
                raise ValueError(f"{d.kernel.name} is loaded on {d.kernel.module.device.name}, not {dev.name}")
        self.dev, self.dispatches = dev, list(dispatches)
        self.slots: list[Buffer] = []  # the recorded buffers, in order of first use
        self._slot_of: dict[int, int] = {}
        self._patches: list[list[int]] = []  # per slot: kernarg byte offsets holding its address
        self._bound: list[Buffer] = []  # per slot: the buffer whose address is written there now
        segments, offsets = [], []
        pos = 0
        for d in self.dispatches:
            data = d.kernel.kernarg_segment(d.args, d.grid, d.block)
            offsets.append(pos)
            for arg, off in zip(d.args, d.kernel.pointer_offsets(), strict=True):
                if off is not None and isinstance(arg, Buffer):
                    self._patches[self._slot(arg)].append(pos + off)
            segments.append(data)
            pos += -(-len(data) // _ALIGN) * _ALIGN
        self.kernargs = dev.alloc_system(pos, name="kernel graph kernargs")
        for data, off in zip(segments, offsets, strict=True):
            self.kernargs.view[off:off + len(data)] = data
        self.stamps = dev.alloc_system(len(self.dispatches) * aql.SIGNAL_SIZE, name="kernel graph timestamps")
        self._kernarg_vas = [self.kernargs.va + off for off in offsets]
        self._commands = self._pm4() if dev.queue_kind == "pm4" else self._aql()
        self.last: GraphLaunch | None = None

    def _slot(self, buf: Buffer) -> int:
        if id(buf) not in self._slot_of:
            self._slot_of[id(buf)] = len(self.slots)
            self.slots.append(buf)
            self._patches.append([])
            self._bound.append(buf)
        return self._slot_of[id(buf)]

    def slot(self, buf: Buffer) -> int:
        """The slot of a buffer the graph was recorded with (KeyError for another)."""
        return self._slot_of[id(buf)]

    # ---- commands -------------------------------------------------------------------------------------------
    def _stamp(self, i: int) -> int:
        return self.stamps.va + i * aql.SIGNAL_SIZE

    def _pm4(self):
        words: list[int] = []
        barrier = _barrier(get_arch(self.dev.arch).family)
        for i, d in enumerate(self.dispatches):
            if i:
                words += barrier
            words += d.kernel.pm4_packets(d.grid, d.block, 0, self._kernarg_vas[i], self._stamp(i))
        ib = self.dev.alloc_system(len(words) * 4, name="kernel graph indirect buffer")
        ib.view[:len(words) * 4] = struct.pack(f"<{len(words)}I", *words)
        self.ib = ib
        return hw.indirect_buffer(ib.va, len(words))

    def _aql(self):
        return [d.kernel.aql_packet(d.grid, d.block, 0, self._kernarg_vas[i], self._stamp(i))
                for i, d in enumerate(self.dispatches)]

    # ---- running --------------------------------------------------------------------------------------------
    def run(self, buffers: dict[int, Buffer] | None = None, wait: bool = False) -> GraphLaunch | float:
        """Run every dispatch in order with slot i's buffer replaced by buffers[i] (until another run replaces it
        again); wait=True blocks and returns the summed GPU seconds, else the GraphLaunch."""
        dev = self.dev
        dev._check_usable()
        if self.last is not None:
            self.last.retire()  # its kernarg bytes and signals are ours to rewrite
        view = self.kernargs.view
        for i, buf in (buffers or {}).items():
            buf._check()
            if buf.va != self._bound[i].va:
                for off in self._patches[i]:
                    struct.pack_into("<Q", view, off, buf.va)
            self._bound[i] = buf
        if dev.profiler is not None:
            return self._run_each(wait)
        if dev.queue_kind == "pm4":
            value = dev.compute.submit(self._commands)
        else:
            signal = completion_signal(dev)
            stamps = self.stamps.view
            for i in range(len(self.dispatches)):
                stamps[i * aql.SIGNAL_SIZE:(i + 1) * aql.SIGNAL_SIZE] = signal
            for lo in range(0, len(self._commands), _AQL_BATCH):
                value = dev.compute.submit_batch(self._commands[lo:lo + _AQL_BATCH])
        dev.launches += len(self.dispatches)
        self.last = GraphLaunch(self, value)
        return self.last.wait() if wait else self.last

    def _run_each(self, wait: bool):
        """Each dispatch launched by itself (a profiler sees every launch)."""
        total = 0.0
        for d in self.dispatches:
            args = tuple(self._current(a) for a in d.args)
            total += d.kernel(*args, grid=d.grid, block=d.block)
        return total if wait else _Done(total)

    def _current(self, arg):
        return self._bound[self._slot_of[id(arg)]] if isinstance(arg, Buffer) else arg

    def free(self) -> None:
        """Release the graph's kernarg, timestamp and command buffers (after its last run)."""
        if self.last is not None:
            self.last.retire()
        for b in (self.kernargs, self.stamps, getattr(self, "ib", None)):
            if b is not None:
                b.release()

    def __len__(self) -> int:
        return len(self.dispatches)


class GraphLaunch:
    """A graph run in flight: its compute-queue timeline value; wait() -> summed GPU seconds of its dispatches."""

    def __init__(self, graph: KernelGraph, value: int):
        self.graph, self.value = graph, value
        self._times: list[float] | None = None

    def done(self) -> bool:
        """Whether the GPU finished the run (never blocks)."""
        return self._times is not None or self.graph.dev.compute.completed() >= self.value

    def retire(self) -> None:
        """Wait for the run; read each dispatch's timestamps."""
        if self._times is not None:
            return
        g, dev = self.graph, self.graph.dev
        dev.wait(dev.compute, self.value)
        fault = dev.aborted_by(self.value, f"kernel graph of {len(g)} dispatches")
        if fault is not None:
            raise fault
        start, end = (0, 8) if dev.queue_kind == "pm4" else (aql.SIGNAL_START_TS, aql.SIGNAL_END_TS)
        view = g.stamps.view
        self._times = [(struct.unpack_from("<Q", view, i * aql.SIGNAL_SIZE + end)[0]
                        - struct.unpack_from("<Q", view, i * aql.SIGNAL_SIZE + start)[0]) / dev.counter_hz
                       for i in range(len(g))]

    def wait(self) -> float:
        """Block until the run finished; the summed GPU seconds of its dispatches."""
        self.retire()
        return sum(self._times)

    @property
    def times(self) -> list[float]:
        """Per dispatch GPU seconds (after wait())."""
        self.retire()
        return list(self._times)


class _Done:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def wait(self) -> float:
        return self.seconds

    def retire(self) -> None:
        pass

