"""A client of the simgpu server for the isolation tests (issue 27, item 5), run under the interposer (not a test
module itself): our runtime on HostOS, with a kernel that never ends or with trivial launches.

    isolation_client.py spin      launch a kernel that jumps to itself forever, say "spinning", wait on stdin
    isolation_client.py leave     launch that kernel, print the time (time.time()) and exit, leaving it running
    isolation_client.py neighbour time trivial launches, start a `spin` client beside it, time them again; print
                                  {"before": seconds, "beside": seconds} (the slowest of a few launches each)
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # (run as a script: the repository's tests package)
import runtime  # noqa: E402
from tests.runtime.test_runtime_memory import STORE, _asm_kernel  # noqa: E402

SPIN = "s_branch -1\ns_endpgm"


def _slowest_launch(dev, kernel, runs: int = 3) -> float:
    buf = dev.alloc(4)
    worst = 0.0
    for _ in range(runs):
        buf.copyin(np.zeros(1, np.uint32))
        t0 = time.monotonic()
        kernel(buf, grid=1, block=32, timeout_ms=120_000)
        worst = max(worst, time.monotonic() - t0)
        assert buf.copyout(np.empty(1, np.uint32))[0] == 42
    return worst


def main(mode: str) -> None:
    dev = runtime.Device("AMD:0")
    if mode == "spin":
        _asm_kernel(dev, SPIN)(None, grid=1, block=32, wait=False)
        print("spinning", flush=True)
        sys.stdin.read()
        return
    if mode == "leave":
        _asm_kernel(dev, SPIN)(None, grid=1, block=32, wait=False)
        print(time.time(), flush=True)
        return
    store = _asm_kernel(dev, STORE)
    before = _slowest_launch(dev, store)
    spinner = subprocess.Popen([sys.executable, __file__, "spin"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    assert spinner.stdout.readline().strip() == "spinning"
    beside = _slowest_launch(dev, store)
    spinner.kill()
    spinner.wait()
    print(json.dumps({"before": before, "beside": beside}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
