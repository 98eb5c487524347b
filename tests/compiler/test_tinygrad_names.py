"""Same name, same meaning as tinygrad (issue 28): our results against tinygrad 0.14's CPU device (DEV=CPU; its
kernels are compiled by clang, taken from LLVM 19), run in a subprocess so its device selection stays its own."""

import json

import numpy as np
import pytest

from compiler import Tensor
from tests.support import tinygrad_golden

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
    return json.loads(tinygrad_golden.output(_TINYGRAD))


def test_transpose_defaults_swap_the_first_two_dimensions(tinygrad_results):
    """tinygrad's transpose(dim0=1, dim1=0); ours swapped the last two."""
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(Tensor(a).transpose().numpy(), tinygrad_results["transpose"])
    np.testing.assert_array_equal(Tensor(a[0]).transpose().numpy(), tinygrad_results["transpose_2d"])
