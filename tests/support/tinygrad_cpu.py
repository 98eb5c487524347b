"""tinygrad 0.14's CPU device as an oracle: a script runs in ONE subprocess (DEV=CPU, clang from LLVM 19 on PATH,
so tinygrad's device selection stays its own) and prints JSON (NaN and infinities as Python's json writes them);
its output is committed golden data (tests/support/tinygrad_golden.py)."""

from __future__ import annotations

import json

from tests.support import tinygrad_golden


def run_tinygrad(script: str, timeout: int = 300):
    """The JSON the script prints on stdout (committed, or tinygrad run: the calling test skips when tinygrad or
    clang is missing)."""
    return json.loads(tinygrad_golden.output(script, timeout=timeout))
