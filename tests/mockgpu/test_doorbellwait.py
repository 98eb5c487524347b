"""mockgpu.doorbellwait: the session worker's wait outside Python returns on a doorbell store, on a readable
descriptor, or at its timeout -- whichever comes first -- and reads the doorbells where the GPU keeps them."""

import os
import threading

import numpy as np
import pytest

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
