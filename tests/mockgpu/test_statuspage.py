"""The session's status page (mockgpu/statuspage.py) as the interposer reads it (mockgpu/csrc/spinwait.h): the same
layout by the C compiler's own offsets, sealed against a client's writes, and what a turn of the worker publishes."""

import ctypes
import errno
import mmap
import os
import subprocess
import threading
import time

import numpy as np
import pytest

from mockgpu import native, statuspage
from mockgpu.statuspage import StatusPage

FIELDS = ("seq", "inflight", "work", "pid", "magic", "closed", "ngpus", "slots", "rung_offset", "doorbell_offset",
          "doorbell_stride")


def test_the_word_indices_are_the_c_headers_offsets():
    prints = "".join(f'printf("%zu\\n", offsetof(struct simgpu_status, {f}));' for f in FIELDS)
    source = ("#include <stddef.h>\n#include <stdio.h>\n#include \"spinwait.h\"\n"
              f"int main(void) {{ {prints} printf(\"%u\\n\", SIMGPU_STATUS_MAGIC); return 0; }}\n")
    try:
        prog = native.build(source, "statuspage-layout", [])
    except native.BuildError as e:
        pytest.skip(f"no C compiler: {e}")
    out = [int(x) for x in subprocess.run([str(prog)], capture_output=True, text=True, check=True).stdout.split()]
    assert out[:-1] == [getattr(statuspage, f.upper()) * 4 for f in FIELDS]
    assert out[-1] == statuspage.STATUS_MAGIC


def test_the_client_cannot_write_the_page():
    page = StatusPage(1234, 2, 1024, 0, 8192)
    try:
        fd = os.dup(page.fd)  # what the client gets with HELLO's answer
        with pytest.raises(PermissionError):
            mmap.mmap(fd, mmap.PAGESIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        with pytest.raises(PermissionError):
            os.pwrite(fd, b"\xff" * 4, 0)
        ro = mmap.mmap(fd, mmap.PAGESIZE, mmap.MAP_SHARED, mmap.PROT_READ)  # reading is what it may do
        words = np.frombuffer(ro, np.uint32)
        assert words[statuspage.PID] == 1234 and words[statuspage.MAGIC] == statuspage.STATUS_MAGIC
        del words
        ro.close()
        os.close(fd)
    finally:
        page.close()


def test_a_turn_that_moved_work_bumps_seq_and_work_and_says_what_is_in_flight():
    page = StatusPage(1, 1, 1024, 0, 8192)
    w = page.words
    page.busy()
    assert w[statuspage.INFLIGHT] == 1 and w[statuspage.SEQ] == 0  # (busy wakes nobody: the work is not done)
    page.publish(inflight=False, worked=True)
    assert (w[statuspage.SEQ], w[statuspage.WORK], w[statuspage.INFLIGHT]) == (1, 1, 0)
    page.publish(inflight=True, worked=False)  # a turn that answered a SPIN: woken, no work
    assert (w[statuspage.SEQ], w[statuspage.WORK], w[statuspage.INFLIGHT]) == (2, 1, 1)
    page.idle(False)
    assert (w[statuspage.SEQ], w[statuspage.INFLIGHT]) == (2, 0)
    rung = np.frombuffer(page.rung(0), np.uint64)
    assert len(rung) == 1024 and rung.ctypes.data == w.ctypes.data + statuspage.PAGE  # after the header page
    del rung, w
    page.close()


def test_a_futex_waiter_on_a_read_only_mapping_is_woken_by_publish():
    """The client sleeps with FUTEX_WAIT on its read-only mapping of SEQ; the server's FUTEX_WAKE on its own mapping
    of the same file wakes it (a shared futex: keyed by the file's page, not the address)."""
    page = StatusPage(1, 1, 1024, 0, 8192)
    fd = os.dup(page.fd)
    ro = mmap.mmap(fd, mmap.PAGESIZE, mmap.MAP_SHARED, mmap.PROT_READ)
    seq = np.frombuffer(ro, np.uint32)
    addr = seq.ctypes.data
    libc = ctypes.CDLL(None, use_errno=True)
    result = []

    def waiter():  # FUTEX_WAIT while SEQ is still 0, for at most 5 s
        r = libc.syscall(202, ctypes.c_void_p(addr), 0, 0, (ctypes.c_long * 2)(5, 0), None, 0)
        result.append((r, ctypes.get_errno(), time.monotonic()))

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.2)  # (asleep by now, or it finds SEQ moved and returns EAGAIN: either way not the 5 s timeout)
    woke = time.monotonic()
    page.publish(False, True)
    t.join(10)
    (r, err, when), = result
    assert r == 0 or err == errno.EAGAIN, (r, err)
    assert when - woke < 2.0
    del seq
    ro.close()
    os.close(fd)
    page.close()
