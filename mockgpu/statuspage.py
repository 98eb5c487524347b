"""A session's status page: what its client's interposer reads to give the CPU back while it spins on the GPU.

A program waits for the GPU by spinning on a signal in memory (tinygrad's HCQSignal.wait reads the signal and calls
time.perf_counter, libc's clock_gettime, in a loop); on real hardware the GPU runs beside it, but here the session's
worker must get a CPU to run the queue, and on a busy host the spinning client holds the one it needs. The worker
publishes in this page, which the client maps read-only (mockgpu/csrc/spinwait.c, linked into the interposer):

- `INFLIGHT`: 1 while the session's GPUs have work -- the worker is running queues a doorbell started, or queues wait
  on memory -- so a thread that spins meanwhile can sleep instead;
- after the first page, each GPU's doorbells as the GPU last acted on them (simgpu.gpu.GPU.keep_rung_in keeps them
  here): the client compares them with the doorbell pages of its device file (`DOORBELL_OFFSET`, `DOORBELL_STRIDE`,
  `SLOTS`, `NGPUS`), so a doorbell it stored that the worker has not seen yet is work too -- it then sends SPIN, and
  the worker looks at once;
- `SEQ`: bumped (and futex-woken) after every turn of the worker that moved GPU work or answered a SPIN message: the
  word a spinning thread sleeps on, for at most SPIN_WAIT_US (spinwait.h), so it wakes as soon as its signal may
  have been written;
- `WORK`: bumped with SEQ when the turn moved GPU work (the interposer tells a useful SPIN from a useless one);
- `PID`: the client process's pid (a forked child, a new process to the server, ignores its parent's page);
- `MAGIC` / `CLOSED`: the layout's version, and 1 once the session has ended (the page then means nothing).
(The worker sets INFLIGHT before it marks a doorbell acted on, so a client never sees neither while work runs.)

The server only writes the page and never reads it back: it keeps its own counters, so nothing a client could do to
the page (it cannot: the memfd is sealed against writable mappings before it is sent) changes what the server does.
The word offsets are the C header's (mockgpu/csrc/spinwait.h); tests/mockgpu/test_statuspage.py checks they agree.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import platform

import numpy as np

from mockgpu.devmem import DOORBELL_PAGE

PAGE = 4096
# word indices (uint32) -- mockgpu/csrc/spinwait.h's struct simgpu_status
SEQ, INFLIGHT, WORK, PID, MAGIC, CLOSED, NGPUS, SLOTS, RUNG_OFFSET, DOORBELL_OFFSET, DOORBELL_STRIDE = range(11)
STATUS_MAGIC = 0x53504E32  # "SPN2"
_F_SEAL_SHRINK, _F_SEAL_GROW, _F_SEAL_WRITE, _F_SEAL_FUTURE_WRITE = 0x2, 0x4, 0x8, 0x10
# futex(2)'s number per machine (Linux's syscall tables; elsewhere no wake-up: a sleeper wakes at its bound) and
# FUTEX_WAKE, on a shared (not PRIVATE) futex: the client's mapping is another process's
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
_FUTEX_WAKE = 1
_WAKE_ALL = 0x7FFFFFFF


def _libc():
    """libc through PyDLL: its calls keep the GIL. A FUTEX_WAKE never blocks, and a call that let the GIL go (CDLL's)
    waited to take it back behind the server's other threads: 0.34 ms a wake-up in test_hcq under cProfile."""
    return ctypes.PyDLL(None, use_errno=True)


class StatusPage:
    """The page of one session: made by the server, its fd sent to the client with every HELLO reply."""

    def __init__(self, pid: int, ngpus: int, slots: int, doorbell_offset: int, doorbell_stride: int):
        """The page of process `pid`'s session, with room for `ngpus` GPUs' `slots` doorbells; their doorbell pages
        are at doorbell_offset + i * doorbell_stride of the session's device file."""
        self.fd = os.memfd_create("simgpu-status", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        self._slots = slots
        size = PAGE + ngpus * slots * 8
        os.ftruncate(self.fd, size)
        self._map = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        try:  # no writable mapping or write() of it from now on (the server's own mapping stays writable)
            fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, _F_SEAL_SHRINK | _F_SEAL_GROW | _F_SEAL_FUTURE_WRITE)
        except OSError:  # a kernel before 5.1: no FUTURE_WRITE; the page is still only ever read by the server
            fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, _F_SEAL_SHRINK | _F_SEAL_GROW)
        self.words = np.frombuffer(self._map, dtype=np.uint32, count=PAGE // 4)
        self._addr = self.words.ctypes.data
        self._seq_word = ctypes.c_void_p(self._addr + SEQ * 4)  # (made once: the wake-up comes every turn)
        self._syscall = _libc().syscall
        self._seq = self._work = 0
        self._inflight = False
        self.words[PID] = pid
        self.words[NGPUS], self.words[SLOTS], self.words[RUNG_OFFSET] = ngpus, slots, PAGE
        self.words[DOORBELL_OFFSET], self.words[DOORBELL_STRIDE] = doorbell_offset, doorbell_stride
        self.words[MAGIC] = STATUS_MAGIC

    @classmethod
    def of(cls, pid: int, machine) -> StatusPage:
        """The page of a session's machine (a MockOS): its GPUs keep their doorbells' acted-on values in it from
        now on (GPU.keep_rung_in), and their doorbell pages are where its device file has them."""
        slots = DOORBELL_PAGE // 8  # (simgpu.gpu.DOORBELL_SLOTS: 64-bit doorbells filling the page)
        page = cls(pid, len(machine.gpus), slots, machine.devmem.doorbell_offset(0), DOORBELL_PAGE)
        for i, gpu in enumerate(machine.gpus):
            gpu.keep_rung_in(page.rung(i))
        return page

    def rung(self, gpu: int) -> memoryview:
        """Where GPU `gpu` keeps its doorbells' acted-on values (GPU.keep_rung_in)."""
        start = PAGE + gpu * self._slots * 8
        return memoryview(self._map)[start:start + self._slots * 8]

    def busy(self) -> None:
        """The GPUs are about to run work (a doorbell the worker is acting on): spinning threads may sleep."""
        if not self._inflight:
            self._inflight = True
            self.words[INFLIGHT] = 1

    def publish(self, inflight: bool, worked: bool) -> None:
        """The end of a turn that moved GPU work (`worked`) or answered a SPIN: whether work is still in flight,
        then SEQ bumped and every thread sleeping on it woken (x86 keeps the order of these stores after the
        signal writes the turn made, so a thread that sees the new SEQ sees its signal; where stores may be
        reordered, a woken thread that reads its signal too early only spins once more)."""
        self._inflight = inflight
        self.words[INFLIGHT] = int(inflight)
        if worked:
            self._work = (self._work + 1) & 0xFFFFFFFF
            self.words[WORK] = self._work
        self._seq = (self._seq + 1) & 0xFFFFFFFF
        self.words[SEQ] = self._seq
        if _SYS_FUTEX is not None:
            self._syscall(_SYS_FUTEX, self._seq_word, _FUTEX_WAKE, _WAKE_ALL, None, None, 0)

    def end_turn(self, inflight: bool, worked: bool) -> None:
        """The end of a turn of the worker: published (spinning threads woken) if it moved GPU work, else only
        INFLIGHT kept current (a SPIN that found nothing needs no answer: its doorbell was acted on, and published,
        before)."""
        if worked:
            self.publish(inflight, worked)
        else:
            self.idle(inflight)

    def idle(self, inflight: bool) -> None:
        """A turn that moved nothing: only INFLIGHT, if it changed (queues that stopped waiting), no wake-up."""
        if inflight != self._inflight:
            self._inflight = inflight
            self.words[INFLIGHT] = int(inflight)

    def close(self) -> None:
        """The session ended: the page says so (a client still holding it stops reading it), sleepers are woken."""
        if self.fd < 0:
            return
        self.words[CLOSED] = 1
        self.publish(False, False)
        del self.words
        try:
            self._map.close()
        except BufferError:  # a GPU of the session still holds its doorbell values here: unmapped with the last view
            pass
        os.close(self.fd)
        self.fd = -1
