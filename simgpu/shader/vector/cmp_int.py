"""VOPC integer compares: v_cmp_{f,lt,eq,le,gt,ne,ge,t}_{i,u}{16,32,64} write a lane mask to VCC or an
SGPR (pair); the v_cmpx_* forms write it to EXEC. Inactive lanes get 0 (the executor masks by EXEC).
gfx11 has no f/t forms for 16-bit types; only mnemonics the codec knows are ever looked up."""

from __future__ import annotations

import numpy as np

from simgpu.shader.vector.valu import vop

_CONDS = {
    "f": lambda a, b: np.zeros(np.shape(a), bool),
    "lt": np.less,
    "eq": np.equal,
    "le": np.less_equal,
    "gt": np.greater,
    "ne": np.not_equal,
    "ge": np.greater_equal,
    "t": lambda a, b: np.ones(np.shape(a), bool),
}


def _cmp(f):
    return lambda c, a, b: f(a, b)


def _register() -> None:
    for t in ("i16", "u16", "i32", "u32", "i64", "u64"):
        for cond, f in _CONDS.items():
            fn = _cmp(f)
            vop(f"v_cmp_{cond}_{t}", None, (t, t), fn, compare=True)
            vop(f"v_cmpx_{cond}_{t}", None, (t, t), fn, compare=True, cmpx=True)


_register()
