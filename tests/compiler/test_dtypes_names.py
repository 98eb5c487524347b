"""The `dtypes` namespace and the dtype methods of Tensor against tinygrad 0.14 (issue 28): every name, what it
aliases, the groups, the predicates, finfo, from_py; the casts on the simulated GPU against tinygrad's CPU device
(one subprocess for the module)."""

import numpy as np
import pytest

from compiler import Tensor, dtypes
from tests.support.tinygrad_cpu import run_tinygrad
from tools.tinygrad_names import public_names

CANON = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
         "float32", "float64", "fp8e4m3", "fp8e5m2", "fp8e4m3fnuz", "fp8e5m2fnuz", "void", "weakint", "weakfloat"]
PY_VALUES = [True, 3, 2.5, [1, 2], [1, 2.0], [True, False], [[1], [2]], [], (1, True)]

_DESCRIBE = """
def describe(dtypes, DType):
    canon = lambda d: next(n for n in CANON if getattr(dtypes, n) == d)
    out = {}
    for name in (n for n in dir(dtypes) if not n.startswith("_")):
        v = getattr(dtypes, name)
        if isinstance(v, DType):
            out[name] = canon(v)
        elif isinstance(v, tuple):
            out[name] = [canon(d) for d in v]
    preds = {n: [getattr(dtypes, p)(getattr(dtypes, n)) for p in ("is_float", "is_int", "is_unsigned", "is_bool")]
             for n in CANON}
    sizes = {n: getattr(dtypes, n).itemsize for n in CANON if n not in ("weakint", "weakfloat")}
    finfo = {n: list(dtypes.finfo(getattr(dtypes, n))) for n in CANON if n in [c for c in CANON if
             getattr(dtypes, "is_float")(getattr(dtypes, c)) and c != "weakfloat"]}
    from_py = [canon(dtypes.from_py(v)) for v in PY_VALUES]
    return {"names": out, "preds": preds, "sizes": sizes, "finfo": finfo, "from_py": from_py}
"""

_SCRIPT = """
import json, sys
from tinygrad import Tensor, dtypes
from tinygrad.dtype import DType
out = describe(dtypes, DType)
t = Tensor([[1.5, -2.25, 3.0], [4.0, 100.75, -7.5]])
out["casts"] = {m: getattr(t, m)().numpy().tolist() for m in ("long", "short", "bfloat16", "int", "half", "double")}
out["cast_dtypes"] = {m: str(getattr(t, m)().dtype) for m in ("long", "short", "bfloat16")}
out["sizes_t"] = [[getattr(t.cast(d), "element_size")(), t.cast(d).nbytes(), t.cast(d).is_floating_point()]
                  for d in (dtypes.int8, dtypes.long, dtypes.half, dtypes.float, dtypes.bool)]
json.dump(out, sys.stdout)
"""


@pytest.fixture(scope="module")
def tiny():
    return run_tinygrad(f"CANON = {CANON!r}\nPY_VALUES = {PY_VALUES!r}\n" + _DESCRIBE + _SCRIPT)


def _describe_ours():
    env = {"CANON": CANON, "PY_VALUES": PY_VALUES}
    exec(_DESCRIBE, env)
    from compiler.dtypes import DType
    return env["describe"](dtypes, DType)


def test_every_tinygrad_dtypes_name_exists_and_means_the_same(tiny):
    import tinygrad
    names = public_names(tinygrad.dtypes)
    missing = [n for n in names if not hasattr(dtypes, n)]
    assert not missing
    ours = _describe_ours()
    assert {k: v for k, v in ours["names"].items() if k in tiny["names"]} == tiny["names"]
    for key in ("preds", "sizes", "finfo", "from_py"):
        assert ours[key] == tiny[key], key


def test_tensor_dtype_methods_match_tinygrad(tiny):
    t = Tensor([[1.5, -2.25, 3.0], [4.0, 100.75, -7.5]])
    for m, ref in tiny["casts"].items():
        np.testing.assert_array_equal(getattr(t, m)().numpy(), np.array(ref), err_msg=m)
    assert {m: getattr(t, m)().dtype for m in ("long", "short", "bfloat16")} == \
        {"long": dtypes.int64, "short": dtypes.int16, "bfloat16": dtypes.bfloat16}
    assert tiny["cast_dtypes"] == {"long": "dtypes.long", "short": "dtypes.short", "bfloat16": "dtypes.bfloat16"}
    sizes = [[t.cast(d).element_size(), t.cast(d).nbytes(), t.cast(d).is_floating_point()]
             for d in (dtypes.int8, dtypes.long, dtypes.half, dtypes.float, dtypes.bool)]
    assert sizes == tiny["sizes_t"]


def test_dtype_arguments_accept_aliases_and_refuse_what_the_device_cannot_hold():
    assert Tensor([1, 2], dtype="long").dtype == dtypes.int64
    assert Tensor([1, 2], dtype=dtypes.uint).dtype == dtypes.uint32
    assert Tensor([1, 2], dtype=dtypes.weakint).dtype == dtypes.default_int
    assert Tensor([1.0]).cast(dtypes.weakfloat).dtype == dtypes.default_float
    for dt in (*dtypes.fp8s, dtypes.void):
        with pytest.raises(TypeError, match=f"cannot hold {dt.name}"):
            Tensor([1.0], dtype=dt)
        with pytest.raises(TypeError, match=f"cannot hold {dt.name}"):
            Tensor([1.0]).cast(dt)
    with pytest.raises(ValueError, match="not a floating-point"):
        dtypes.finfo(dtypes.int32)
    with pytest.raises(TypeError, match="from_py"):
        dtypes.from_py("x")
