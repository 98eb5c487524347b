"""Cases written once as expressions over `T` (the Tensor class) and NumPy inputs, evaluated by tinygrad 0.14 on its
CPU device (DEV=CPU, clang from LLVM 19) in ONE subprocess per test module, and by us: the oracle for the
frontend's shared names. A case's value is a tensor or a tuple/list of tensors; the subprocess returns each as
{"dtype", "shape", "values"} in JSON (NaN and inf survive: Python's json writes and reads them), committed as golden
data (tests/support/tinygrad_golden.py)."""

from __future__ import annotations

import json

import numpy as np

from tests.support import tinygrad_golden

# every case's environment has T, np and grad_of (the gradient of fn(x).sum() with respect to x)
GRAD_OF = """
def grad_of(fn, x):
    t = T(x)
    t.requires_grad = True
    fn(t).sum().backward()
    return t.grad
"""

_RUNNER = """
import json, sys
import numpy as np
from tinygrad import Tensor as T
spec = json.load(sys.stdin)
env = {"T": T, "np": np}
exec(spec["grad_of"] + spec["setup"], env)
out = {}
for name, expr in spec["cases"].items():
    try:
        v = eval(expr, env)
        vs = list(v) if isinstance(v, (tuple, list)) else [v]
        out[name] = [{"dtype": str(a.dtype), "shape": list(a.shape), "values": a.tolist()}
                     for a in (t.numpy() for t in vs)]
    except Exception as e:
        out[name] = {"error": f"{type(e).__name__}: {e}"}
json.dump(out, sys.stdout)
"""


def run_tinygrad(setup: str, cases: dict[str, str]) -> dict:
    """Every case evaluated by tinygrad's CPU device in one subprocess, or its committed result
    (tests/support/tinygrad_golden.py; skips when neither it nor tinygrad and clang are there)."""
    spec = json.dumps({"grad_of": GRAD_OF, "setup": setup, "cases": cases}, sort_keys=True).encode()
    return json.loads(tinygrad_golden.output(_RUNNER, stdin=spec))


def environment(setup: str) -> dict:
    """The names a case sees, with our Tensor as T: np, grad_of and what setup defines."""
    from compiler import Tensor
    env = {"T": Tensor, "np": np}
    exec(GRAD_OF + setup, env)
    return env


def ours(setup: str, expr: str, device: str | None = None) -> list[np.ndarray]:
    """The case evaluated by our Tensor (on device when given) as NumPy arrays."""
    from compiler import device as devices
    env = environment(setup)
    old = devices.DEFAULT
    if device is not None:
        devices.DEFAULT = device
    try:
        v = eval(expr, env)
        vs = list(v) if isinstance(v, tuple | list) else [v]
        return [t.numpy() for t in vs]
    finally:
        devices.DEFAULT = old


def assert_matches(got: list[np.ndarray], want, name: str, rtol: float = 1e-5, atol: float = 1e-6,
                   check_dtype: bool = True) -> None:
    """Our outputs equal tinygrad's (shapes, values to float tolerance, NaN where NaN, and dtypes)."""
    assert not isinstance(want, dict), f"{name}: tinygrad raised {want['error']}"
    assert len(got) == len(want), f"{name}: {len(got)} outputs, tinygrad {len(want)}"
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        ref = np.asarray(w["values"], dtype=np.dtype(w["dtype"])).reshape(w["shape"])
        assert g.shape == ref.shape, f"{name}[{k}]: shape {g.shape}, tinygrad {ref.shape}"
        if check_dtype:
            assert g.dtype == ref.dtype, f"{name}[{k}]: dtype {g.dtype}, tinygrad {ref.dtype}"
        if ref.dtype.kind == "f" or g.dtype.kind == "f":
            np.testing.assert_allclose(g.astype(np.float64), ref.astype(np.float64), rtol=rtol, atol=atol,
                                       equal_nan=True, err_msg=name)
        else:
            np.testing.assert_array_equal(g, ref, err_msg=name)
