"""Same name, same meaning as tinygrad (issue 28): our results against tinygrad 0.14's CPU device (DEV=CPU; its
kernels are compiled by clang, taken from LLVM 19), run in a subprocess so its device selection stays its own."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from compiler import Tensor

LLVM_BIN = "/usr/lib/llvm-19/bin"

_TINYGRAD = """
import json, sys
import numpy as np
from tinygrad import Tensor
a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
out = {"transpose": Tensor(a).transpose().numpy().tolist(), "transpose_2d": Tensor(a[0]).transpose().numpy().tolist()}
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def tinygrad_results():
    pytest.importorskip("tinygrad")
    if not pathlib.Path(LLVM_BIN, "clang").exists():
        pytest.skip("tinygrad's CPU device needs clang (LLVM 19)")
    env = dict(os.environ, DEV="CPU", PATH=f"{LLVM_BIN}:{os.environ.get('PATH', '')}")
    run = subprocess.run([sys.executable, "-c", _TINYGRAD], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def test_transpose_defaults_swap_the_first_two_dimensions(tinygrad_results):
    """tinygrad's transpose(dim0=1, dim1=0); ours swapped the last two."""
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(Tensor(a).transpose().numpy(), tinygrad_results["transpose"])
    np.testing.assert_array_equal(Tensor(a[0]).transpose().numpy(), tinygrad_results["transpose_2d"])
