"""The ops suite's cases against tinygrad 0.14's CPU device (issue 28): the same table lambdas on the same inputs,
our result compared with tinygrad's committed one (tests/support/ops_cases.py builds the cases; regenerate the
results with `DEV=CPU PATH=/usr/lib/llvm-19/bin:$PATH python -m tools.gen_tinygrad_ops`).

Both libraries approximate transcendentals their own way, so float results agree within the dtype's tolerance,
widened where the ops suite widens it against NumPy; integers, bools, movement and indexing agree exactly.
A case tinygrad refuses (a name or form it lacks) is listed by the generator with tinygrad's message and
checked here to be one of our known extensions; result dtypes that deliberately follow NumPy are listed
(docs/compiler.md, "Names shared with tinygrad").
"""

import json
import pathlib

import numpy as np
import pytest

from compiler import Tensor, dtypes
from tests.support.ops import TOL
from tests.support.ops_cases import cases, run

DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "tinygrad_ops"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
RESULTS = np.load(DATA / "results.npz")
CASES = {c.id: c for c in cases()}

# tinygrad refuses these forms; ours accepts them as extensions (same meaning where both accept a call)
EXTENSIONS = {
    "move-flip_all": "flip() with no axis flips every axis (NumPy); tinygrad requires an axis",
    "move-stack_torch_dim": "stack of one sequence and a positional dim (PyTorch); tinygrad takes tensors only",
    "grad-move-stack": "stack of a list (PyTorch); tinygrad takes tensors only",
}


def _tolerance(case, name):
    rtol, atol = TOL.get(case.dtype, (0, 0))
    if case.tol and case.dtype == "float32":
        rtol, atol = max(rtol, case.tol[0]), max(atol, case.tol[1])
    if name.startswith("grad"):  # gradients chain several rounded ops: tinygrad's order of operations differs
        rtol, atol = max(rtol, 1e-4), max(atol, 1e-5)
    return rtol, atol


def test_committed_results_cover_every_case():
    """Every case has tinygrad's result for exactly these inputs (else: regenerate, as the module says)."""
    stale = sorted(cid for cid, c in CASES.items() if MANIFEST["cases"].get(cid) != c.signature())
    assert not stale, f"regenerate tests/data/tinygrad_ops (python -m tools.gen_tinygrad_ops): {stale[:10]}"


# result dtypes that deliberately follow NumPy (docs/compiler.md, "Names shared with tinygrad"): the values agree
DTYPE_DEPARTURES = {"argmax": "int64 (NumPy), tinygrad int32", "argmin": "int64 (NumPy), tinygrad int32",
                    "int-sum": "int64 accumulator (NumPy), tinygrad int32",
                    "int-prod": "int64 accumulator (NumPy), tinygrad int32"}


def _dtype_departs(cid: str) -> bool:
    return any(f"reduce-{name}:" in cid for name in DTYPE_DEPARTURES)


def test_tinygrad_refuses_only_known_extensions():
    """What tinygrad refuses is an extension of ours, nothing unexplained."""
    assert set(MANIFEST["refused"]) <= set(EXTENSIONS), MANIFEST["refused"]


@pytest.mark.parametrize("cid", sorted(cid for cid in CASES if cid not in MANIFEST["refused"]))
def test_same_result_as_tinygrad(cid):
    case = CASES[cid]
    ours = run(case, Tensor, dtypes)
    for name, got in ours.items():
        want = RESULTS[f"{cid}/{name}"]
        assert got.shape == want.shape, f"{name}: shape {got.shape}, tinygrad {want.shape}"
        if got.dtype.kind == "f" or want.dtype.kind == "f":
            rtol, atol = _tolerance(case, name)
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=f"{cid} {name}")
        else:
            if not _dtype_departs(cid):
                assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, tinygrad {want.dtype}"
            np.testing.assert_array_equal(got, want, err_msg=f"{cid} {name}")
