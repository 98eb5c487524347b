"""What every shader engine's thread trace keeps, whatever its token format (gfx11's thread_trace, gfx9's
thread_trace_gfx9): the stream being written, how much of it is in the trace buffer, the full and dropped state, the
VMID the buffer is addressed in, and the wave slots in use per SIMD.

The stream reaches memory in whole WPTR units (the subclass's WPTR_UNIT, its hardware's): `flush` pads it (the
writer's padding: NOPs on gfx11, zero words on gfx9) and copies what memory does not hold yet to the buffer a
subclass's `base` and `size` read from its registers. A stream longer than the buffer fills it (`cut`: where the
format allows the stream to end) and stops: later tokens are counted in `dropped`.
"""

from __future__ import annotations


class TraceBuffer:
    """One SE's trace stream and buffer bookkeeping; a subclass adds the registers and the tokens."""

    WAVE_SLOTS = 0  # wave slots a SIMD's tokens can name (the subclass's wave field)
    WPTR_UNIT = 0  # bytes a SQ_THREAD_TRACE_WPTR unit counts (the subclass's hardware's)

    def __init__(self, gpu, se: int):
        self.gpu, self.se = gpu, se
        self.regs: dict[int, int] = {}
        self.writer = None  # the format's TraceWriter while tracing
        self.flushed = 0  # bytes of the stream already in memory
        self.full = False
        self.dropped = 0
        self.vmid = 0
        self.slots: dict[tuple[int, int, int], set[int]] = {}  # (array, unit, simd) -> wave slots in use

    def base(self) -> int:
        raise NotImplementedError

    def size(self) -> int:
        raise NotImplementedError

    def cut(self, data: bytes, limit: int) -> bytes:
        """What of `data` goes into the `limit` bytes left in a buffer it does not fit."""
        return data[:limit]

    @property
    def on(self) -> bool:
        return self.writer is not None

    def begin(self, vmid: int, writer) -> None:
        """A new trace at the buffer's start, written by `writer`."""
        self.vmid, self.flushed, self.full, self.dropped, self.slots = vmid, 0, False, 0, {}
        self.writer = writer

    def finish(self) -> None:
        """Write out what is left and stop tracing."""
        if self.writer is not None:
            self.flush()
            self.writer = None

    def flush(self) -> None:
        """Pad the stream to WPTR_UNIT bytes and copy what memory does not hold yet into the buffer."""
        unit = self.WPTR_UNIT
        w = self.writer
        if w is None or self.full:
            return
        w.pad(unit)
        data = bytes(w.data[self.flushed:])
        room = self.size() - self.flushed
        if len(data) > room:
            self.full = True
            self.dropped += len(data) - max(room, 0)
            data = self.cut(data, max(room, 0) // unit * unit)
        if data:
            self.gpu.mmu.write(self.vmid, self.base() + self.flushed, data)
            self.flushed += len(data)

    def emit(self, kind, time: int | None = None, **fields: int) -> None:
        """A token of `kind` at `time` (the writer's clock when None), or one more dropped once the buffer is full."""
        if self.writer is not None and not self.full:
            self.writer.emit(kind, time, **fields)
        elif self.writer is not None:
            self.dropped += 1

    def take_slot(self, unit: tuple[int, int, int]) -> int:
        """A free wave slot of SIMD `unit` for a starting wave (-1, counted as dropped, when none is free)."""
        used = self.slots.setdefault(unit, set())
        slot = next((s for s in range(self.WAVE_SLOTS) if s not in used), -1)
        if slot < 0:
            self.dropped += 1
            return -1
        used.add(slot)
        return slot

    def free_slot(self, unit: tuple[int, int, int], slot: int) -> None:
        self.slots.get(unit, set()).discard(slot)
