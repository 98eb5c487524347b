"""Golden results of the ops suite's cases from tinygrad 0.14's CPU device (the outside oracle of
tests/compiler/test_ops_vs_tinygrad.py), so CI compares against tinygrad without running it.

    DEV=CPU PATH=/usr/lib/llvm-19/bin:$PATH python -m tools.gen_tinygrad_ops

writes tests/data/tinygrad_ops/results.npz (each case's output and gradients, keyed "<case id>/<name>") and
manifest.json (tinygrad's version, each case's input signature, and the message of every case tinygrad refuses).
Run it again after adding or changing an ops-suite case; the test names the stale cases.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "tinygrad_ops"


def main() -> int:
    """Run every case on tinygrad's CPU device and write the results and manifest."""
    if os.environ.get("DEV") != "CPU":
        print("set DEV=CPU (and put clang of LLVM 19 on PATH): the oracle is tinygrad's CPU device", file=sys.stderr)
        return 2
    import tinygrad
    from tinygrad import Tensor, dtypes

    from tests.support.ops_cases import cases, run
    results: dict[str, np.ndarray] = {}
    manifest = {"tinygrad": tinygrad.__version__ if hasattr(tinygrad, "__version__") else "0.14.0",
                "cases": {}, "refused": {}}
    for case in cases():
        manifest["cases"][case.id] = case.signature()
        try:
            res = run(case, Tensor, dtypes)
        except Exception as exc:  # tinygrad refuses this case (a name it lacks, a dtype it cannot run)
            manifest["refused"][case.id] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            continue
        for name, arr in res.items():
            results[f"{case.id}/{name}"] = np.asarray(arr)
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT / "results.npz", **results)
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"{len(manifest['cases'])} cases, {len(manifest['refused'])} refused by tinygrad -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
