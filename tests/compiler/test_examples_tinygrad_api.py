"""The programs in examples/tinygrad_api (an MNIST-style MLP and CNN, a GPT-2-style block, and a tour of the other
kinds: embeddings and cross-entropy, cumsum/argmax/topk/sort, mixed dtypes, movement chains, a 2^22 sum), written
against tinygrad's API, run unchanged on compiler (simulated GPU and CPU device) and on tinygrad 0.14's CPU device
(one subprocess for the module, the same files with NNLIB=tinygrad): losses, accuracy, running statistics, logits
and every other result agree within float tolerance (dtypes exactly, by NumPy's names)."""

import importlib
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tests.support import tinygrad_oracle

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "tinygrad_api"
PROGRAMS = ("mnist_mlp", "mnist_cnn", "gpt2_block", "ops_tour")
ATOL = {"mnist_mlp": 1e-4, "mnist_cnn": 1e-4, "gpt2_block": 1e-4, "ops_tour": 1e-4}

_TINYGRAD = """
import importlib, os
os.environ["NNLIB"] = "tinygrad"
sys.path.insert(0, os.environ["TINYGRAD_API_EXAMPLES"])
for name in inp["programs"]:
    for k, v in importlib.import_module(str(name)).main().items():
        out[f"{name}:{k}"] = np.asarray(v)
"""


@pytest.fixture(scope="module")
def tinygrad_results():
    # the programs' text is an input (a changed program is a new result); their directory is not (a checkout's
    # path must not change the committed result's key): the script finds it in the environment
    os.environ["TINYGRAD_API_EXAMPLES"] = str(EXAMPLES)
    sources = "".join(p.read_text() for p in sorted(EXAMPLES.glob("*.py")))
    return tinygrad_oracle.run(_TINYGRAD, {"sources": np.array(sources), "programs": np.array(PROGRAMS)})


def _program(name: str, monkeypatch):
    monkeypatch.delenv("NNLIB", raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    module = importlib.import_module(name)
    assert sys.modules["nnlib"].LIB == "compiler"
    return module


@pytest.mark.parametrize("kind", ["AMD", "CPU"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_runs_unchanged_and_matches_tinygrad(tinygrad_results, name, kind, monkeypatch):
    program = _program(name, monkeypatch)
    with tinygrad_oracle.on_device(kind):
        ours = program.main()
    for k, v in ours.items():
        want = tinygrad_results[f"{name}:{k}"]
        if want.dtype.kind == "U":  # names (dtypes): equal
            np.testing.assert_array_equal(np.asarray(v), want, err_msg=k)
            continue
        np.testing.assert_allclose(np.asarray(v), want, rtol=1e-4, atol=ATOL[name], err_msg=k)
    losses = ours["losses"]
    assert losses[-1] < losses[0], losses          # each program trains


def test_program_runs_as_a_script(tinygrad_results):
    """As nnlib's docstring says: `MOCKGPU=1 python examples/tinygrad_api/mnist_mlp.py` prints its results."""
    env = dict(os.environ, MOCKGPU="1", PYTHONPATH=str(EXAMPLES.parents[1]))
    env.pop("NNLIB", None)
    done = subprocess.run([sys.executable, str(EXAMPLES / "mnist_mlp.py")], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    ours = json.loads(done.stdout)
    np.testing.assert_allclose(ours["losses"], tinygrad_results["mnist_mlp:losses"], rtol=1e-4, atol=1e-4)
