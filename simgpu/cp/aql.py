"""The AQL packet processor of an HSA compute queue: 64-byte packets, signals, barriers.

Pointers count packets: wptr is the write index the producer rang the doorbell with, rptr the read
index, reported after every packet to the rptr report address (amd_queue_t.read_dispatch_id, as KFD
programs it; amd_queue_t itself sits QUEUE_READ_DISPATCH_ID bytes below). A packet whose header type
is INVALID makes the queue wait for its producer. Dispatches run to completion synchronously, so the
barrier bit and acquire/release fences (no caches are modelled) are honoured trivially; reserved fence
scopes are errors. Completion signals (amd_signal_t) get end/start timestamps, their value decremented,
and, with an event mailbox, the event id written there and an interrupt raised.
"""

from __future__ import annotations

import numpy as np

from simgpu import clock as costs
from simgpu.cp import launch
from simgpu.cp.queue import PacketError, Queue, canonical, read_u32, read_u64, write_u32, write_u64
from simgpu.hw import aql
from simgpu.hw import pm4 as hw_pm4
from simgpu.interrupt import Interrupt, Kind, Source


class AQLProcessor:
    """Runs AQL packets for the queues of one device."""

    def __init__(self, gpu):
        self.gpu = gpu

    def execute(self, q: Queue, budget: int) -> tuple[str, int]:
        """Process packets until idle, blocked or out of budget; returns (status, packets run)."""
        done = 0
        while done < budget:
            if q.rptr >= q.wptr:
                return "idle", done
            slot = q.ring_base + (q.rptr % q.ring_units) * aql.PACKET_SIZE
            q.current = (None, q.rptr, [])
            raw = self.gpu.mmu.read(q.vmid, slot, aql.PACKET_SIZE)
            if self.gpu.observer is not None:  # the header publishes the packet (traces.reads)
                raw = self.gpu.observer("aql", q.vmid, slot, raw)
            q.current = (None, q.rptr, np.frombuffer(raw, "<u4").tolist())
            ptype, _, acquire, release = aql.parse_header(int.from_bytes(raw[:2], "little"))
            if ptype == aql.PacketType.INVALID:
                q.waiting = f"packet {q.rptr} is INVALID: waiting for the producer to write its header"
                return "idle", done
            if acquire == 3 or release == 3:
                raise PacketError(f"reserved fence scope (acquire {acquire}, release {release})")
            status = self._packet(q, ptype, raw, slot)
            if status is not None:
                name = aql.PacketType(ptype).name if ptype in aql.PacketType._value2member_map_ else f"{ptype:#x}"
                q.waiting = f"{status} (packet {q.rptr}, {name}, at ring offset {slot - q.ring_base:#x})"
                return "blocked", done
            self.gpu.clock.advance(costs.AQL_PACKET_CYCLES)
            done += 1
            self.gpu.report_rptr(q, q.rptr + 1)
        return "budget", done

    def _packet(self, q: Queue, ptype: int, raw: bytes, slot: int) -> str | None:
        if ptype == aql.PacketType.KERNEL_DISPATCH:
            pkt = aql.KernelDispatchPacket.unpack(raw)
            start = self.gpu.clock.timestamp()
            launch.run(self.gpu, q, launch.aql_dispatch(self.gpu, q, pkt, slot, q.rptr))
            self.complete(q, pkt.completion_signal, start)
            return None
        if ptype in (aql.PacketType.BARRIER_AND, aql.PacketType.BARRIER_OR):
            return self._barrier(q, aql.BarrierPacket.unpack(raw), ptype == aql.PacketType.BARRIER_AND)
        if ptype == aql.PacketType.VENDOR_SPECIFIC:
            return self._vendor(q, aql.VendorPM4IBPacket.unpack(raw))
        name = aql.PacketType(ptype).name if ptype in aql.PacketType._value2member_map_ else f"{ptype:#x}"
        raise PacketError(f"unsupported AQL packet type {name}")

    def _barrier(self, q: Queue, pkt: aql.BarrierPacket, all_of: bool) -> str | None:
        deps = [canonical(s) for s in pkt.dep_signals if s]
        values = [self.signal_value(q, s, observe=True) for s in deps]
        done = [v == 0 for v in values]
        if not deps or (all(done) if all_of else any(done)):
            self.complete(q, pkt.completion_signal, None)
            return None
        pending = ", ".join(f"{s:#x} = {v}" for s, v, d in zip(deps, values, done, strict=True) if not d)
        return f"BARRIER_{'AND' if all_of else 'OR'}: waiting for signal(s) to reach 0: {pending}"

    def _vendor(self, q: Queue, pkt: aql.VendorPM4IBPacket) -> str | None:
        if not q.ib_stack:
            if pkt.ven_hdr != aql.AMD_AQL_FORMAT_PM4_IB:
                raise PacketError(f"vendor-specific packet format {pkt.ven_hdr} (only AMD PM4_IB = 1)")
            ptype, op, nbody = hw_pm4.parse_header(pkt.ib_jump_cmd[0])
            if ptype != 3 or op != hw_pm4.Op.INDIRECT_BUFFER or nbody != 3:
                raise PacketError("vendor PM4_IB packet does not hold an INDIRECT_BUFFER command")
            act = self.gpu.pm4.indirect_buffer(q, list(pkt.ib_jump_cmd[1:]))
            if act is None:
                self.complete(q, pkt.completion_signal, None)
                return None
            q.ib_stack = [act.frame]
        saved = q.current
        try:
            status, _ = self.gpu.pm4.execute(q, q.ib_stack, self.gpu.packet_budget)
        except PacketError as e:
            top, pos, words = q.current
            e.why = f"in the PM4 IB of a vendor packet ({top.describe() if top else ''}, dword {pos}): {e.why}"
            q.current = saved[:2] + (words,)
            q.ib_stack = []
            raise
        if status == "blocked":
            return q.waiting
        if status == "budget":
            raise PacketError("PM4 IB of a vendor packet ran past the CP watchdog (IB loop?)")
        q.ib_stack = []
        self.complete(q, pkt.completion_signal, None)
        return None

    # ---------------------------------------------------------------------------------------------- signals
    def signal_value(self, q: Queue, signal: int, observe: bool = False) -> int:
        """The signed 64-bit value of an amd_signal_t (`observe`: a barrier's dependency, which a producer sets)."""
        if observe and self.gpu.observer is not None:
            va = signal + aql.SIGNAL_VALUE
            v = int.from_bytes(self.gpu.observer("signal", q.vmid, va, self.gpu.mmu.read(q.vmid, va, 8)), "little")
        else:
            v = read_u64(self.gpu.mmu, q.vmid, signal + aql.SIGNAL_VALUE)
        return v - (1 << 64) if v >> 63 else v

    def complete(self, q: Queue, signal: int, start_ts: int | None) -> None:
        """Signal completion: timestamps, decrement the value, then the event mailbox and interrupt."""
        if not signal:
            return
        signal = canonical(signal)
        mmu, vmid = self.gpu.mmu, q.vmid
        if signal % 8:
            raise PacketError(f"completion signal {signal:#x} is not 8-byte aligned")
        if start_ts is not None:
            write_u64(mmu, vmid, signal + aql.SIGNAL_START_TS, start_ts)
            write_u64(mmu, vmid, signal + aql.SIGNAL_END_TS, self.gpu.clock.timestamp())
        mmu.atomic(vmid, "sub", np.array([signal + aql.SIGNAL_VALUE], np.uint64), np.array([1], np.uint64), size=8)
        mailbox = canonical(read_u64(mmu, vmid, signal + aql.SIGNAL_EVENT_MAILBOX_PTR))
        if mailbox:
            event_id = read_u32(mmu, vmid, signal + aql.SIGNAL_EVENT_ID)
            write_u32(mmu, vmid, mailbox, event_id)
            self.gpu.interrupt(Interrupt(Source.CP, Kind.SIGNAL, q.name, context_id=event_id,
                                         data=self.signal_value(q, signal), signal=signal))

