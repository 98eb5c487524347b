"""The session worker's loop (mockgpu/session.py), one turn at a time: wait for the client -- a doorbell store, a
request, or the time for a look at queues that wait on memory and at parked waits -- then take the requests, act on
the doorbells, answer the parked waits that can be answered, and end the turn on the status page.

A client that submits and waits (tinygrad's test_hcq: ~2,500 one-byte copies, barriers, signal waits) waits for a
whole turn each time, so what does not change from one turn to the next is made once: the descriptors the doorbell
watch waits on and their C array (again only when a connection comes or goes), the doorbells compared in C
(Waiter.pending) instead of three numpy operations a GPU, the queues' states looked at without a generator.
"""

from __future__ import annotations

import select
import time

from mockgpu import doorbellwait
from mockgpu.doorbellwait import Waiter

ACTIVE_POLL = 50e-6  # seconds between GPU checks while queues are busy or waiting
IDLE_POLL = 2e-3  # ... at most, once everything has been idle for a while
ACTIVE_WINDOW = 0.05  # seconds after the last activity during which the worker keeps polling fast
# Outside Python (doorbellwait) the worker looks at the doorbells every 1/WATCH_GROWTH of the time since the client's
# last activity, from ACTIVE_POLL up to IDLE_POLL: a doorbell is seen within 5% of the quiet time before it. In
# tinygrad's test_ops, 47% of doorbells came within 1 ms of the client's last request or of the last work done, 75%
# within 5 ms, 10% after 40 ms (its compiles); each look costs 2-20 us of CPU by the host's load, and looking every
# 50 us for 50 ms after every activity (the rule before) cost the worker 4.8-5.3 of its 12-14 CPU s in ops60 at
# load 7-9.
WATCH_GROWTH = 20
# ... and from KICKED_POLL up once the client has announced a doorbell (SPIN: the interposer's clock_gettime sends one
# at a thread's third clock read in a row while a doorbell it stored is unseen, mockgpu/csrc/spinwait.c): a client
# that waits by spinning on the clock says when it waits, so the watch need not look for it every 50 us. tinygrad's
# submit-and-wait rounds (a raw loop, load 4.5, docs/driver.md): the watch's looks cost ~90 us of CPU a round at the
# 50 us floor, ~40 at this one; with the early SPIN, the wait for a one-byte SDMA copy fell from 270-340 to 70-110 us.
KICKED_POLL = 1e-3
WATCH_TIMEOUT = 0.1  # seconds of one such wait: then a turn of the loop in Python (its idle bookkeeping)
_FD_SETSIZE = 1024  # select(2)'s limit on descriptor numbers


def readable(waitables, timeout: float) -> list:
    """Which of `waitables` (sockets, fds) are readable or hung up within `timeout` seconds: select(2) for a wait
    under a millisecond while every descriptor is below 1024, else poll(2) (select cannot wait on a descriptor
    numbered 1024 or more, which a server with many clients has; poll's timeout is whole milliseconds)."""
    by_fd = {}
    for w in waitables:
        by_fd[w if isinstance(w, int) else w.fileno()] = w
    if timeout < 1e-3 and max(by_fd) < _FD_SETSIZE:
        # poll(2) counts whole milliseconds (Python rounds 50 us up to 1 ms); select(2) sleeps microseconds, so a
        # doorbell is seen within ACTIVE_POLL while queues are busy
        return [by_fd[fd] for fd in select.select(list(by_fd), [], [], timeout)[0]]
    poller = select.poll()
    for fd in by_fd:
        poller.register(fd, select.POLLIN | select.POLLPRI)
    return [by_fd[fd] for fd, _ in poller.poll(timeout * 1000)]


def look_again(last_activity: float, parked: list) -> float:
    """Seconds until the worker's next look in Python at queues that wait on memory and at parked waits: 1/WATCH_GROWTH
    of the time since the last activity, from ACTIVE_POLL up to IDLE_POLL, as the doorbell watch (a value the client
    stores for a waiting queue is seen within 5% of the time it waited), and no later than a parked deadline. A look
    costs ~40 us of Python: one every ACTIVE_POLL, while a queue waited 500 ms on a signal (test_hcq's
    test_wait_late_set), kept the worker on a core."""
    now = time.monotonic()
    period = min(IDLE_POLL, max(ACTIVE_POLL, (now - last_activity) / WATCH_GROWTH))
    for p in parked:
        period = min(period, max(0.0, p.deadline - now))
    return period


def blocked(gpus) -> bool:
    """Whether a queue of these GPUs waits on memory (a WAIT_REG_MEM, POLL_REGMEM, barrier or atomic loop)."""
    for g in gpus:
        for q in g.queues:
            if q.state == "blocked":
                return True
    return False


class Turns:
    """The worker's loop of one session (a mockgpu.session.Session): its state between turns, and a turn."""

    def __init__(self, session):
        self.s = session
        self.waiter = Waiter.open([g.doorbell_arrays() for g in session.mock.gpus])
        self.pause = ACTIVE_POLL  # the wait in Python, without the watch
        self.looks = False  # queues wait on memory or waits are parked: the GPUs need a look in Python now and then
        self.stuck = False  # a doorbell that did not move (its ring failing) would end every watch at once
        self._version = -1  # the session's connections the descriptors below were made for
        self.waitables: list = []
        self.fds: list[int] = []

    def _descriptors(self) -> None:
        s = self.s
        if s.conns_version != self._version:
            self._version = s.conns_version
            self.waitables = [s.wake_fd, *s.conns]
            self.fds = [w if isinstance(w, int) else w.fileno() for w in self.waitables]

    def turn(self) -> None:
        """Wait for work, then do it: requests, doorbells, parked waits; publish the turn on the status page."""
        s, waiter = self.s, self.waiter
        self._descriptors()
        got = 0
        if waiter is not None and not self.stuck:
            # Only a doorbell store or a request can bring work -- or, for queues that wait on memory and parked
            # waits, a look in Python (look_again): wait for either outside Python, looking at the doorbells the
            # more often the more recently the client was active (WATCH_GROWTH).
            got = waiter.wait(self.fds, look_again(s.last_activity, s.parked) if self.looks else WATCH_TIMEOUT,
                              KICKED_POLL if waiter.spins else ACTIVE_POLL, since=s.last_activity,
                              max_period=IDLE_POLL, growth=WATCH_GROWTH)
            ready = readable(self.waitables, 0) if got == doorbellwait.READABLE else ()
        else:
            ready = readable(self.waitables, self.pause)
        moved = s.take(ready) if ready else False
        worked = s.advance(waiter)
        moved |= worked
        now = time.monotonic()
        if moved:
            s.last_activity = now
        waiting = blocked(s.mock.gpus)
        self.looks = bool(s.parked) or waiting
        s.status.end_turn(waiting, worked)
        self.stuck = got == doorbellwait.DOORBELL and not moved
        busy = self.looks or self.stuck or now - s.last_activity < ACTIVE_WINDOW
        self.pause = ACTIVE_POLL if busy else min(self.pause * 2, IDLE_POLL)
