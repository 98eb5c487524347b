"""simgpu.GPU: one simulated device -- gfx1100 (Navi 31, the default) or another chip of simgpu.hw.chips (`arch=`):
memory, MMU, doorbells, queues, engines, clock.

The owner (the mock kernel driver, or a test) creates queues the way amdgpu maps an MQD: ring base and
size, rptr report and wptr poll addresses, doorbell, VMID and format. Progress happens only inside calls:
`ring_doorbell(index, value)` runs that queue until it is idle, blocked or in error; `poll()` runs every
queue that can move once; `run_until_idle()` repeats until nothing moves; `scan_doorbells()` acts on
doorbells a CPU client stored straight into the (shared) doorbell page; `retry_blocked()` re-runs the queues
that wait. Queues run one at a time in creation order, so memory, interrupts and timestamps are the same on
every run. Interrupts
(simgpu.interrupt) go to every hook in `interrupt_hooks`, in the order they happen; the most recent ones
stay in the bounded `interrupt_log` (like the IH ring: older entries are overwritten, nothing grows).
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from simgpu.clock import Clock
from simgpu.cp.aql import AQLProcessor
from simgpu.cp.dma import DMA
from simgpu.cp.pm4 import PM4Processor
from simgpu.cp.queue import Frame, PacketError, Queue, QueueError, QueueState, check_ring, write_u64
from simgpu.cp.sdma import SDMAProcessor
from simgpu.fault import HardwareFault
from simgpu.hw import gmc, regs
from simgpu.hw.chips import Chip, get_chip
from simgpu.interrupt import Interrupt, Kind, Source
from simgpu.mem import MMU, PhysicalMemory
from simgpu.profile import PerfMonitor
from simgpu.shader import ShaderEngine
from simgpu.shader.engine import DEFAULT_WATCHDOG

# A GPU's shape is its chip's (`gpu.chip`, simgpu.hw.chips); the timestamp counter is the same on every chip.
TIMESTAMP_FREQUENCY_HZ = 100_000_000
DOORBELL_PAGE_SIZE = 8192
DOORBELL_SLOTS = DOORBELL_PAGE_SIZE // 8  # 64-bit doorbells
PACKET_BUDGET = 1 << 20  # packets one queue may run per call before the CP watchdog declares a hang
INTERRUPT_LOG = 256  # interrupts kept in GPU.interrupt_log (the hooks see every one)


class GPU:
    """A simulated device: a gfx1100 unless `arch` names another chip of simgpu.hw.chips ("gfx1201")."""

    def __init__(self, vram_size: int = 1 << 30, name: str = "gpu0", watchdog: int = DEFAULT_WATCHDOG,
                 max_dispatch_workgroups: int = 1 << 20, wall_watchdog: float | None = None, vram_backing=None,
                 doorbell_page=None, arch: str | None = None):
        self.name = name
        self.chip: Chip = get_chip(arch)  # what the device is (topology, PCI identity, shape)
        self.arch = self.chip.arch  # the shader engine runs this architecture's code (Dispatch.arch)
        self.phys = PhysicalMemory(vram_size, vram_backing)
        self.mmu = MMU(self.phys, gmc.pte_format(self.chip.family))  # page tables in the chip's generation's format
        self.clock = Clock()
        self.engine = ShaderEngine(self.mmu, self.clock, watchdog=watchdog)
        # The doorbell page, as the owner maps it (given: shared memory a CPU client stores to).
        self.doorbells = np.zeros(DOORBELL_SLOTS, np.uint64) if doorbell_page is None else \
            np.frombuffer(doorbell_page, np.uint64, DOORBELL_SLOTS)
        self._rung = np.zeros(DOORBELL_SLOTS, np.uint64)  # each doorbell's value when the GPU last acted on it
        # When a list: (slot, value) of each doorbell scan_doorbells acts on, for a recorder (traces.record) to take:
        # a client's plain store is no call of its own, so a recording must say which call saw it.
        self.scanned: list[tuple[int, int]] | None = None
        # When set, observer(kind, vmid, va, data) -> data is called at every read where the GPU observes what a
        # producer published (a wptr poll, an AQL packet, a wait's memory, a doorbell scan) with the bytes it read,
        # and the GPU goes on with the bytes it returns: a recorder logs what a concurrent client stored mid-call, a
        # replay hands back what the recorded GPU read (traces.reads). None (the default): one attribute test.
        self.observer: Callable[[str, int, int, bytes], bytes] | None = None
        self.regs: dict[int, int] = {}  # device-wide (UCONFIG and other non-SH) registers
        self.queues: list[Queue] = []
        self.interrupt_hooks: list[Callable[[Interrupt], None]] = []  # the owner's interrupt handlers, in order
        self.interrupt_log: deque[Interrupt] = deque(maxlen=INTERRUPT_LOG)
        self.engine.interrupt_hooks.append(self.interrupt)  # the SQ's s_sendmsg interrupts
        self.device_mask = 1  # PRED_EXEC device select bit of this GPU
        self.max_dispatch_workgroups = max_dispatch_workgroups
        # Seconds of host time a dispatch may run (None: no limit, the default: host time depends on load, so a
        # default limit is the engine's deterministic budget). `wall_watchdog_setting` says who set it.
        self.wall_watchdog = wall_watchdog
        self.wall_watchdog_setting = "GPU(wall_watchdog=...)"
        self.packet_budget = PACKET_BUDGET
        self.pm4, self.aql, self.sdma, self.dma = PM4Processor(self), AQLProcessor(self), SDMAProcessor(self), DMA(self)
        self.perfmon = PerfMonitor(self)  # performance counters and thread trace (simgpu.profile)
        self.soc = None  # the PCI function's register file etc. (simgpu.soc.SOC), attached by an owner that offers it
        self._seq = 0

    # ---------------------------------------------------------------------------------------------- queues
    def create_queue(self, fmt: str, ring_base: int, ring_size: int, vmid: int, doorbell: int | None = None,
                     rptr_addr: int = 0, wptr_addr: int = 0, name: str | None = None, engine: int = 0) -> Queue:
        """Map a queue: fmt "pm4" or "aql" (compute HQD) or "sdma"; pointers start at 0."""
        check_ring(fmt, ring_base, ring_size)
        if not 0 <= vmid < 16:
            raise ValueError(f"VMID {vmid} out of range 0..15")
        if doorbell is not None:
            if not 0 <= doorbell < DOORBELL_SLOTS:
                raise ValueError(f"doorbell {doorbell} out of range 0..{DOORBELL_SLOTS - 1}")
            if any(q.doorbell == doorbell for q in self.queues):
                raise ValueError(f"doorbell {doorbell} is already used by another queue")
        q = Queue(name or f"{fmt}{len(self.queues)}", fmt, ring_base, ring_size, vmid, doorbell, rptr_addr,
                  wptr_addr, engine)
        if fmt != "aql":
            q.stack = [Frame(ring_base, ring_size // 4, 0, 0, ring=True)]
        self.queues.append(q)
        return q

    def update_queue(self, q: Queue, ring_base: int, ring_size: int) -> None:
        """Re-point an idle queue at another ring (what rewriting its MQD does); its pointers keep counting."""
        check_ring(q.fmt, ring_base, ring_size)
        if q.rptr != q.wptr:
            raise ValueError(f"queue {q.name} is not idle (rptr {q.rptr}, wptr {q.wptr})")
        q.ring_base, q.ring_size = ring_base, ring_size
        if q.stack:  # PM4 and SDMA execute the ring as the bottom frame of their stack
            q.stack[0].base, q.stack[0].size_dw = ring_base, ring_size // 4

    def destroy_queue(self, q: Queue) -> None:
        """Unmap a queue (its state is kept for describe() until then)."""
        q.state = QueueState.DISABLED
        self.queues.remove(q)

    def queue_by_doorbell(self, index: int) -> Queue | None:
        """The queue bound to a doorbell slot."""
        return next((q for q in self.queues if q.doorbell == index), None)

    # ---------------------------------------------------------------------------------------------- progress
    def ring_doorbell(self, index: int, value: int, seconds: float | None = None) -> None:
        """A doorbell write: the bound queue's wptr becomes value; run that queue until idle or blocked. A
        dispatch still running after `seconds` of host time (the owner's wait timeout) gets a `timeout` fault."""
        if not 0 <= index < DOORBELL_SLOTS:
            raise ValueError(f"doorbell {index} out of range 0..{DOORBELL_SLOTS - 1}")
        value &= 0xFFFFFFFFFFFFFFFF
        if self.doorbells[index] == self._rung[index]:  # nobody stored into the shared page since: this is the store
            self.doorbells[index] = value  # (else a client stored there itself, maybe a newer value: leave it)
        self._rung[index] = value
        q = self.queue_by_doorbell(index)
        if q is not None:
            q.wptr = int(value) & 0xFFFFFFFFFFFFFFFF
            if q.fmt == "aql":
                # HSA producers (ROCr, tinygrad) ring an AQL doorbell with the id of the packet they wrote, one less
                # than the write index; the CP takes the write index from amd_queue_t.write_dispatch_id at the wptr
                # poll address, which they publish first.
                self._poll_wptr(q)
            if seconds is None and not self.wall_watchdog:  # no limit to set (most doorbells): no context to enter
                self.run_queue(q)
                return
            with self.time_limit(seconds):
                self.run_queue(q)

    def keep_rung_in(self, memory) -> None:
        """From now on keep each doorbell's acted-on value in `memory` (a writable buffer of DOORBELL_SLOTS 64-bit
        words): memory the owner shares with a client, which can then tell a doorbell the GPU has not acted on yet
        from its own store (mockgpu.statuspage). Call before doorbell_arrays is taken."""
        rung = np.frombuffer(memory, np.uint64, DOORBELL_SLOTS)
        rung[:] = self._rung
        self._rung = rung

    def doorbell_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The doorbell page and each doorbell's value when the GPU last acted on it: a doorbell is pending where
        they differ (for an owner that watches them without calling in: mockgpu.doorbellwait)."""
        return self.doorbells, self._rung

    def pending_doorbells(self) -> list[tuple[int, int]]:
        """(slot, value) of every doorbell whose value changed since the GPU last acted on it: a client's plain
        store into the shared doorbell page."""
        doorbells = self.doorbells
        return [(i, int(doorbells[i])) for i in np.nonzero(doorbells != self._rung)[0].tolist()]

    def scan_doorbells(self) -> bool:
        """Ring every pending doorbell, in slot order; True if any."""
        pending = self.pending_doorbells()
        if self.scanned is not None:
            self.scanned.extend(pending)
        if pending and self.observer is not None:  # what the client stored before these doorbells is published
            self.observer("doorbells", 0, 0, b"")
        for index, value in pending:
            self.ring_doorbell(index, value)
        return bool(pending)

    def retry_blocked(self) -> bool:
        """Run every blocked queue once more (the memory or register it waits on may have changed); True if any
        completed a packet."""
        progress = False
        with self.time_limit():
            for q in list(self.queues):
                if q.state == QueueState.BLOCKED:
                    progress |= self.run_queue(q)
        return progress

    def poll(self) -> bool:
        """Run every queue that can move once (reading wptr poll addresses); True if any made progress."""
        progress = False
        for q in list(self.queues):
            self._poll_wptr(q)
            progress |= self.run_queue(q)
        return progress

    def run_until_idle(self, max_rounds: int = 1 << 16, seconds: float | None = None) -> None:
        """Poll until no queue moves: every queue is then idle, blocked or in error. A dispatch still running
        after `seconds` of host time (the owner's wait timeout) is stopped with a `timeout` fault."""
        with self.time_limit(seconds):
            for _ in range(max_rounds):
                if not self.poll():
                    return

    @contextlib.contextmanager
    def time_limit(self, seconds: float | None = None):
        """Within the block, a dispatch running longer than `seconds` (a `timeout` fault) or than the wall-clock
        watchdog (a `watchdog` fault) of host time is stopped and its queue put in error. Nested blocks keep
        the outer limit."""
        engine = self.engine
        if engine.deadline is not None:
            yield
            return
        limits = [(s, kind) for s, kind in ((seconds, "timeout"), (self.wall_watchdog, "watchdog")) if s]
        if limits:
            s, kind = min(limits)
            why = (f"still running after the caller's {s:g} s wait timeout" if kind == "timeout" else
                   f"ran longer than the {s:g} s wall-clock watchdog set by {self.wall_watchdog_setting} "
                   "(opt-in, host time: a long correct dispatch on a loaded machine meets it too)")
            engine.deadline = (time.monotonic() + s, kind, why)
        try:
            yield
        finally:
            engine.deadline = None

    def _poll_wptr(self, q: Queue) -> None:
        if q.wptr_addr and q.state != QueueState.ERROR:
            try:
                raw = self.mmu.read(q.vmid, q.wptr_addr, 8)
                if self.observer is not None:
                    raw = self.observer("wptr", q.vmid, q.wptr_addr, raw)
                polled = int.from_bytes(raw, "little")
            except HardwareFault as f:
                self._fail(q, PacketError(f"wptr poll address unreadable: {f}", f), where="wptr poll")
                return
            if polled > q.wptr:
                q.wptr = polled

    def run_queue(self, q: Queue) -> bool:
        """Process one queue until idle, blocked or error; True if it completed any packet."""
        if q.state in (QueueState.ERROR, QueueState.DISABLED):
            return False
        q.waiting = ""
        q.current = None
        try:
            if q.fmt == "sdma":
                status, done = self.sdma.execute(q, self.packet_budget)
            elif q.fmt == "pm4":
                status, done = self.pm4.execute(q, self._ring_stack(q), self.packet_budget)
            else:
                status, done = self.aql.execute(q, self.packet_budget)
        except PacketError as e:
            self._fail(q, e)
            return True
        except HardwareFault as f:
            self._fail(q, PacketError(str(f), f))
            return True
        except Exception as e:  # noqa: BLE001 - a simulator bug must surface as a queue error, not a host crash
            self._fail(q, PacketError(f"internal error: {type(e).__name__}: {e}"))
            return True
        except KeyboardInterrupt:  # Ctrl-C: the work in flight is abandoned, not resumed by the next doorbell
            self._fail(q, PacketError("stopped by a KeyboardInterrupt (Ctrl-C) on the host",
                                      HardwareFault("interrupted", "stopped by a KeyboardInterrupt on the host")))
            raise
        q.packets += done
        if status == "budget":
            self._fail(q, PacketError(f"CP watchdog: {done} packets without becoming idle (IB loop?)"))
        else:
            q.state = QueueState.BLOCKED if status == "blocked" else QueueState.IDLE
        return done > 0

    def _ring_stack(self, q: Queue) -> list[Frame]:
        q.stack[0].end = q.wptr
        return q.stack

    def report_rptr(self, q: Queue, rptr: int) -> None:
        """Advance the queue's rptr and write it to the rptr report address (64-bit)."""
        q.rptr = rptr
        if q.rptr_addr:
            write_u64(self.mmu, q.vmid, q.rptr_addr, rptr)

    def _fail(self, q: Queue, e: PacketError, where: str = "") -> None:
        frame, pos, words = q.current or (None, q.rptr, [])
        if not where and frame is not None and not frame.ring:
            where = frame.describe()
        rptr = q.rptr if frame is None or not frame.ring else (pos * 4 if q.fmt == "sdma" else pos)
        q.error = QueueError(q.name, rptr, list(words), e.why, where, e.fault)
        q.state = QueueState.ERROR
        q.stack[1:] = []
        q.ib_stack = []
        source = Source.SDMA if q.fmt == "sdma" else Source.CP
        self.interrupt(Interrupt(source, Kind.QUEUE_ERROR, q.name, error=q.error))

    # ---------------------------------------------------------------------------------------------- registers
    def write_reg(self, reg: int, value: int) -> None:
        """Write a device-wide register. A write to NBIO's HDP flush request completes the flush at once (the
        host data path has no cache in the model): the same bits read back from HDP_FLUSH_DONE."""
        self.regs[reg] = value & 0xFFFFFFFF
        if reg == regs.BIF_BX_PF0_GPU_HDP_FLUSH_REQ:
            self.regs[regs.BIF_BX_PF0_GPU_HDP_FLUSH_DONE] = value & 0xFFFFFFFF

    # ---------------------------------------------------------------------------------------------- interrupts
    def interrupt(self, intr: Interrupt) -> Interrupt:
        """Raise an interrupt: stamp it, log it and hand it to every hook in order."""
        intr.seq, intr.timestamp = self._seq, self.clock.timestamp()
        self._seq += 1
        self.interrupt_log.append(intr)
        for hook in self.interrupt_hooks:
            hook(intr)
        return intr

    def take_interrupts(self) -> list[Interrupt]:
        """The logged interrupts (at most INTERRUPT_LOG, oldest first); the log is empty afterwards."""
        out = list(self.interrupt_log)
        self.interrupt_log.clear()
        return out

    # ---------------------------------------------------------------------------------------------- sanitizers
    def sanitize(self, checks):
        """Turn on sanitizers (simgpu.sanitize: "memcheck,initcheck,racecheck,hazards" or "all"); returns the
        Sanitizer, whose `allocations` the owner must keep up to date. With initcheck, the command processor's
        and SDMA's writes go through a front-end that marks the bytes written. Checks add up; none: a no-op."""
        from simgpu.sanitize import Sanitizer, parse_checks
        from simgpu.sanitize.cpwrites import MarkingMMU
        checks = parse_checks(checks)
        if not checks:
            return self.engine.sanitizer
        if self.engine.sanitizer is None:
            self.engine.sanitizer = Sanitizer(checks)
        else:
            self.engine.sanitizer.checks |= checks
        if "initcheck" in checks and not isinstance(self.mmu, MarkingMMU):
            self.mmu = MarkingMMU(self.mmu, self.engine.sanitizer)
        return self.engine.sanitizer

    # ---------------------------------------------------------------------------------------------- info
    def properties(self) -> dict:
        """The device shape (what the mock driver reports in the KFD topology)."""
        c = self.chip
        return {"gfx_target": c.arch, "shader_engines": c.shader_engines, "compute_units": c.compute_units,
                "simds_per_cu": c.simds_per_cu, "wave_size": c.wave_size, "lds_bytes": c.lds_bytes,
                "timestamp_frequency": TIMESTAMP_FREQUENCY_HZ, "sdma_engines": c.sdma_engines,
                "vram_size": self.phys.vram_size}

    def describe(self) -> str:
        """Every queue's state (and the clock) as text."""
        lines = [f"{self.name}: {self.arch}, clock {self.clock.cycles} cycles = {self.clock.timestamp()} ticks, "
                 f"{len(self.queues)} queues, {self._seq} interrupts raised"]
        for q in self.queues:
            lines.append("  " + q.describe())
            if q.error is not None and q.error.fault is not None:
                lines += ["    " + line for line in q.error.fault.report_lines()]
        if self.soc is not None:
            lines += ["  " + line for line in self.soc.describe()]
        return "\n".join(lines)
