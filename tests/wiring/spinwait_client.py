"""A client for tests/wiring/test_run_spinwait.py, run under `simgpu run` (not a test module itself): our runtime on
HostOS, spinning on the clock as tinygrad's HCQSignal.wait does (a read of GPU memory, time.monotonic, again).

    spinwait_client.py busy   launch a kernel that counts down a long loop and then stores 42, spin until its queue
                              says done; print what the spin saw
    spinwait_client.py idle   open the GPU, launch nothing, spin on the clock for SPIN_S; print what the spin saw
    spinwait_client.py fork   launch that kernel, fork: the child spins SPIN_S while its parent's kernel runs and
                              prints first, then the parent spins until done and prints

The JSON printed: calls (clock reads in the loop), wall and cpu (the thread's CPU) seconds of the loop, slept (the
thread's voluntary context switches in the loop: a sleep on the status page is one), longest (the longest time
between two reads), monotonic (every read at least the one before), stored (what the kernel stored, busy only).
"""

import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # (run as a script: the repository's tests package)
import runtime  # noqa: E402
from tests.runtime.test_runtime_memory import _asm_kernel  # noqa: E402

SPIN_S = 0.3
# s6 counts down from COUNT (three instructions an iteration), then the kernel stores 42 at its argument
LOOP = """
s_load_b64 s[4:5], s[0:1], 0x0
s_mov_b32 s6, {count}
s_sub_u32 s6, s6, 1
s_cmp_lg_u32 s6, 0
s_cbranch_scc1 -3
s_waitcnt lgkmcnt(0)
v_mov_b32 v1, 0
v_mov_b32 v2, 42
global_store_b32 v1, v2, s[4:5]
s_endpgm
"""


def spin(done) -> dict:
    """Read the clock until done() (or SPIN_S passed, for a `done` that never is): what the loop saw."""
    calls, longest, monotonic = 0, 0.0, True
    switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw
    cpu0 = time.thread_time()
    start = last = time.monotonic()
    while not done(last - start):
        now = time.monotonic()
        calls += 1
        monotonic &= now >= last
        longest = max(longest, now - last)
        last = now
    return {"calls": calls, "wall": last - start, "cpu": time.thread_time() - cpu0, "longest": longest,
            "slept": resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw - switches, "monotonic": monotonic}


def main(mode: str, count: int) -> None:
    dev = runtime.Device("AMD:0")
    buf = dev.alloc(4)
    buf.copyin(np.zeros(1, np.uint32))
    if mode == "idle":
        out = spin(lambda elapsed: elapsed >= SPIN_S)
    else:
        kernel = _asm_kernel(dev, LOOP.format(count=count))
        kernel(buf, grid=1, block=32, wait=False, timeout_ms=600_000)
        if mode == "fork" and (child := os.fork()) == 0:  # a new process to the server: its parent's work is not its
            print(json.dumps(spin(lambda elapsed: elapsed >= SPIN_S)), flush=True)
            os._exit(0)
        out = spin(lambda elapsed: all(q.completed() >= q.submitted for q in dev.hw_queues))
        if mode == "fork":
            os.waitpid(child, 0)
        out["stored"] = int(buf.copyout(np.empty(1, np.uint32))[0])
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
