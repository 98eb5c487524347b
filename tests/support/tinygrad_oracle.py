"""tinygrad 0.14's CPU device as an oracle for the compiler's frontend: a script runs in a subprocess (DEV=CPU,
clang from LLVM 19 on PATH, so tinygrad's device choice stays its own) with arrays in and out through .npz files,
its result committed as golden data (tests/support/tinygrad_golden.py); and a context manager that makes our
default device the simulated GPU or the CPU device."""

from __future__ import annotations

import contextlib
import hashlib
import io

import numpy as np

from tests.support import tinygrad_golden

# the script's prelude: `inp` holds the arrays given, whatever the script puts in `out` comes back
_PRELUDE = """
import json, sys
import numpy as np
inp = dict(np.load(sys.argv[1]))
out = {}
"""
_EPILOGUE = """
np.savez(sys.argv[2], **{k: np.asarray(v) for k, v in out.items()})
"""


def run(script: str, inputs: dict[str, np.ndarray], timeout: float = 600) -> dict[str, np.ndarray]:
    """Run script under tinygrad's CPU device with `inp` = inputs; returns its `out`: the committed result for
    these inputs (tests/support/tinygrad_golden.py), or tinygrad run (skips without tinygrad or clang)."""
    h = hashlib.sha256()
    for k in sorted(inputs):
        a = np.asarray(inputs[k])
        h.update(f"{k}|{a.dtype.str}|{a.shape}|".encode() + a.tobytes())
    buf = io.BytesIO()
    np.savez(buf, **inputs)
    data = tinygrad_golden.output(_PRELUDE + script + _EPILOGUE, files={"in.npz": buf.getvalue()}, suffix=".npz",
                                  identity=h.digest(), timeout=timeout)
    with np.load(io.BytesIO(data), allow_pickle=False) as f:
        return dict(f)


@contextlib.contextmanager
def on_device(kind: str):
    """Make kind ('AMD': the simulated GPU with its default backend; 'CPU': the CPU device, x86 backend) the
    default device inside the block."""
    from compiler import backend as backends
    from compiler import device as devices
    old = devices.DEFAULT
    devices.DEFAULT = kind
    try:
        with backends.using("x86") if kind == "CPU" else contextlib.nullcontext():
            yield
    finally:
        devices.DEFAULT = old
