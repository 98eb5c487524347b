"""mockgpu.doorbellwait: the session worker's wait outside Python returns on a doorbell store, on a readable
descriptor, or at its timeout -- whichever comes first -- and reads the doorbells where the GPU keeps them."""

import os
import socket
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockgpu import protocol
from mockgpu.doorbellwait import DOORBELL, READABLE, Waiter
from simgpu.gpu import GPU


@pytest.fixture
def waiter_and_pipe():
    page, seen = np.zeros(1024, np.uint64), np.zeros(1024, np.uint64)
    w = Waiter.open([(np.zeros(1024, np.uint64), np.zeros(1024, np.uint64)), (page, seen)])
    if w is None:
        pytest.skip("no C compiler: the session polls in Python")
    r, wr = os.pipe()
    yield w, page, seen, r, wr
    os.close(r)
    os.close(wr)


def test_a_wait_with_nothing_to_see_times_out(waiter_and_pipe):
    w, page, seen, r, wr = waiter_and_pipe
    assert w.wait([r], 0.01, 50e-6) == 0
    assert w.wait([r], 0, 50e-6) == 0  # (a zero timeout looks once)


def test_a_store_into_the_second_gpus_page_ends_the_wait(waiter_and_pipe):
    w, page, seen, r, wr = waiter_and_pipe
    page[700] = 3  # a doorbell the GPU has not acted on, stored before the wait
    assert w.wait([r], 60, 50e-6) == DOORBELL
    seen[700] = 3  # acted on: waiting again sees nothing
    assert w.wait([r], 0.01, 50e-6) == 0
    t = threading.Timer(0.05, page.__setitem__, (1023, 9))  # a store from another thread during the wait
    t.start()
    assert w.wait([r], 60, 50e-6) == DOORBELL
    t.join()


def test_a_readable_descriptor_ends_the_wait(waiter_and_pipe):
    w, page, seen, r, wr = waiter_and_pipe
    t = threading.Timer(0.05, os.write, (wr, b"!"))
    t.start()
    assert w.wait([r], 60, 250e-6) == READABLE
    t.join()


def test_it_watches_the_gpus_own_doorbell_arrays():
    gpu = GPU(vram_size=1 << 24)
    w = Waiter.open([gpu.doorbell_arrays()])
    if w is None:
        pytest.skip("no C compiler: the session polls in Python")
    gpu.doorbells[5] = 1  # a client's plain store, not yet acted on
    assert w.wait([], 60, 50e-6) == DOORBELL and gpu.pending_doorbells() == [(5, 1)]
    gpu.scan_doorbells()  # acted on (no queue is bound there)
    assert w.wait([], 0.01, 50e-6) == 0


def test_the_look_period_grows_with_the_clients_quiet_time(waiter_and_pipe):
    """With `growth`, the doorbells are looked at every (now - since) / growth, at least `period` and at most
    `max_period` apart: a client quiet for 10 s is looked at every 0.5 s (max_period), so a store 20 ms into the
    wait is seen at the next look, not before; a client active a moment ago is looked at within milliseconds.
    (Lower bounds only where the host's load could stretch a sleep.)"""
    w, page, seen, r, wr = waiter_and_pipe
    quiet, active = time.monotonic() - 10, time.monotonic()
    for since, slow in ((quiet, True), (active, False)):
        t = threading.Timer(0.02, page.__setitem__, (1000, int(page[1000]) + 1))  # a store 20 ms into the wait
        start = time.monotonic()
        t.start()
        assert w.wait([r], 60, 50e-6, since=since, max_period=0.5, growth=20) == DOORBELL
        took = time.monotonic() - start
        t.join()
        assert took >= 0.4 if slow else took < 0.4, took
        seen[1000] = page[1000]  # acted on
    assert w.wait([r], 0.01, 50e-6, since=quiet, max_period=0.5, growth=20) == 0  # the timeout comes first


def test_spin_messages_are_taken_and_counted_and_a_request_after_them_is_left(waiter_and_pipe):
    """A SPIN (the interposer: a thread waits on a doorbell not seen yet) is taken off the socket and counted -- the
    session's watch then looks on its own only every KICKED_POLL -- while a request behind it makes the socket
    readable for Python."""
    w, page, seen, r, wr = waiter_and_pipe
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with a, b:
        assert w.spins == 0
        protocol.send(a, protocol.SPIN)
        protocol.send(a, protocol.SPIN)
        assert w.wait([b.fileno()], 0.05, 50e-6) == 0 and w.spins == 2  # taken: nothing else was there
        protocol.send(a, protocol.SPIN)
        protocol.send(a, protocol.OPEN, (0,), b"/dev/kfd")
        assert w.wait([b.fileno()], 60, 50e-6) == READABLE and w.spins == 3
        assert protocol.recv(b)[0] == protocol.OPEN  # the request is still there for the worker's Python turn


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 511), st.integers(0, 2**64 - 1)), max_size=12),
       st.lists(st.tuples(st.integers(0, 1), st.integers(0, 511)), max_size=6))
def test_pending_finds_what_each_gpus_pending_doorbells_finds(stores, acted):
    """Waiter.pending (the turn's compare in C, every GPU at once) against each GPU's pending_doorbells (numpy): the
    same (slot, value) pairs in the same order, GPU by GPU, for stores into two GPUs' pages (values up to 2^64 - 1,
    stores of the value acted on included) and doorbells the GPU acted on since."""
    gpus = [GPU(vram_size=1 << 24), GPU(vram_size=1 << 24)]
    w = Waiter.open([g.doorbell_arrays() for g in gpus])
    if w is None:
        pytest.skip("no C compiler: the session compares in numpy")
    for g, slot, value in stores:
        gpus[g].doorbells[slot] = value
    for g, slot in acted:
        gpus[g].ring_doorbell(slot, int(gpus[g].doorbells[slot]))
    assert w.pending() == [(i, slot, value) for i, g in enumerate(gpus) for slot, value in g.pending_doorbells()]
