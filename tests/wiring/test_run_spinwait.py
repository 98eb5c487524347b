"""A client thread that spins on the GPU's memory gives the server the CPU (mockgpu/statuspage.py, the interposer's
mockgpu/csrc/spinwait.c): under `simgpu run`, a program that reads the clock in a loop while its kernel runs sleeps
on the session's status page between reads -- its clock stays the clock, it sees the completion -- and one with no
work in flight, or a fork child of one that has, spins untouched. Clients: tests/wiring/spinwait_client.py."""

import json
import sys

from tests.support.clients import simgpu_run
from tests.wiring import spinwait_client

# ~0.3-1.5 s of the interpreter at load 2-5 (the kernel counts down this many iterations, three instructions each)
COUNT = "200000"


def _client(mode: str, *args: str) -> list[dict]:
    r = simgpu_run([sys.executable, spinwait_client.__file__, mode, *args], timeout=300)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


def _spun_untouched(seen: dict) -> None:
    assert seen["monotonic"]
    assert seen["slept"] <= 3, seen  # (a few: the host's own reasons)
    assert seen["calls"] > 10_000, seen  # a read of the clock is well under 30 us on any host


def test_a_client_spinning_while_its_kernel_runs_sleeps_between_reads_of_the_clock():
    (seen,) = _client("busy", COUNT)
    assert seen["stored"] == 42 and seen["monotonic"], seen  # it saw the completion; the time is the clock's
    assert seen["wall"] > 0.05, seen  # (the kernel ran long enough for the loop to matter)
    assert seen["slept"] >= 20, seen  # without the status page: 0 (main: 181,664 reads in 2.1 s, load 4)
    assert seen["calls"] < 20_000 * seen["wall"], seen
    assert seen["cpu"] < 0.5 * seen["wall"], seen
    assert seen["longest"] < 0.25, seen  # a read sleeps at most SPIN_WAIT_NS (1 ms) and the host's scheduling


def test_a_client_with_nothing_in_flight_is_never_slept():
    (seen,) = _client("idle")
    _spun_untouched(seen)


def test_a_fork_child_is_not_slept_for_its_parents_kernel():
    child, parent = _client("fork", COUNT)
    _spun_untouched(child)
    assert parent["stored"] == 42 and parent["slept"] >= 20, parent
