"""VOPC integer compares: v_cmp_{f,lt,eq,le,gt,ne,ge,t}_{i,u}{16,32,64} write a lane mask to VCC or an
SGPR (pair); the v_cmpx_* forms write it to EXEC. Inactive lanes get 0 (the executor masks by EXEC).
gfx11 has no f/t forms for 16-bit types; only mnemonics the codec knows are ever looked up. In the
expression form (sem.expr): the compare follows the sources' signedness."""

from __future__ import annotations

from simgpu.shader.sem.expr import const, eq, ne
from simgpu.shader.vector.valu import define

_CONDS = {
    "f": lambda a, b: const(0, "bool"),
    "lt": lambda a, b: a < b,
    "eq": eq,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ne": ne,
    "ge": lambda a, b: a >= b,
    "t": lambda a, b: const(1, "bool"),
}

for _t in ("i16", "u16", "i32", "u32", "i64", "u64"):
    for _cond, _f in _CONDS.items():
        define(f"v_cmp_{_cond}_{_t}", None, (_t, _t), _f, compare=True)
        define(f"v_cmpx_{_cond}_{_t}", None, (_t, _t), _f, compare=True, cmpx=True)
