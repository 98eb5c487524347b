"""How many inputs of v_exp/v_log/v_sin/v_cos change bits between the expression-form algorithms (vector.elementary,
what both tiers run) and the model they replaced: the host C library's float64 exp2/log2/sin (through numpy) rounded
once to the result type, sin/cos reduced to a quarter turn first, f32 exp/log flushing their source and result.

    python -m tools.trans_vs_libm [--f32-step 1]

Every f16 input and every f32 input (--f32-step k: every k-th bit pattern), counted per opcode as: results that
differ, among them NaN results that differ only in the NaN (sign or payload). The counts depend on the host's C
library (the old side). The module docstring of vector.elementary and docs/shader.md ("Transcendentals") quote
them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from simgpu.shader.semantics import implemented
from simgpu.shader.vector.valu import SPECS

UINT = {"f16": np.uint16, "f32": np.uint32}
FLOAT = {"f16": np.float16, "f32": np.float32}
CHUNK = 1 << 16  # (inputs a step: arrays that stay in the cache)


def _flush(x: np.ndarray) -> np.ndarray:
    """f32 denormals replaced by a zero of their sign."""
    u = x.view(np.uint32)
    return np.where((u & 0x7F800000) == 0, u & 0x80000000, u).astype(np.uint32).view(np.float32)


def _turn(w: np.ndarray) -> np.ndarray:
    return np.where(w == 0, w, w - np.rint(w))


def libm(name: str, t: str, x: np.ndarray) -> np.ndarray:
    """The replaced model's result."""
    flush = t == "f32" and name in ("exp", "log")
    w = (_flush(x) if flush else x).astype(np.float64)
    if name == "exp":
        r = np.exp2(w)
    elif name == "log":
        r = np.log2(w)
    elif name == "sin":
        a = _turn(w)
        r = np.sin(2.0 * np.pi * np.where(np.abs(a) > 0.25, np.copysign(0.5 - np.abs(a), a), a))
    else:
        r = np.sin(2.0 * np.pi * (0.25 - np.abs(_turn(w))))
    r = r.astype(FLOAT[t])
    return _flush(r) if flush else r


def count(name: str, t: str, step: int = 1) -> tuple[int, int, int]:
    """(inputs, differing results, of which NaN results differing only in the NaN)."""
    kernel = SPECS[f"v_{name}_{t}"].fn
    total = 1 << (16 if t == "f16" else 32)
    n = differ = nans = 0
    for lo in range(0, total, CHUNK * step):
        bits = np.arange(lo, min(lo + CHUNK * step, total), step, dtype=np.uint64).astype(UINT[t])
        x = bits.view(FLOAT[t])
        got, old = kernel(None, x.reshape(-1, 1)).reshape(-1), libm(name, t, x)
        d = got.view(UINT[t]) != old.view(UINT[t])
        n += len(x)
        differ += int(d.sum())
        nans += int((d & np.isnan(got) & np.isnan(old)).sum())
    return n, differ, nans


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--f32-step", type=int, default=1)
    args = ap.parse_args()
    implemented()
    with np.errstate(all="ignore"):
        for t in ("f16", "f32"):
            for name in ("exp", "log", "sin", "cos"):
                t0 = time.process_time()
                n, differ, nans = count(name, t, args.f32_step if t == "f32" else 1)
                print(f"v_{name}_{t}: {n} inputs, {differ} differ ({nans} only in a NaN's sign or payload, "
                      f"{differ - nans} in value) [{time.process_time() - t0:.0f} s CPU]", flush=True)


if __name__ == "__main__":
    main()
