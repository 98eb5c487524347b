"""VALU float compares: v_cmp_{f,lt,eq,le,gt,lg,ge,o,u,nge,nlg,ngt,nle,neq,nlt,t}_{f16,f32,f64}, the
v_cmpx_* forms that write EXEC, and v_cmp(x)_class_*, from the RDNA3 ISA reference, defined in the expression
form (both tiers are generated from it).

Ordered compares are false on a NaN operand, their n-forms true. Inputs are compared as given (no
denormal flushing: class tests must tell denormals apart). The class mask bits are: 0 signaling NaN,
1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
"""

from __future__ import annotations

from simgpu.shader.sem.expr import EXP_FIELD, FLOAT_LAYOUT, bitcast, cast, const, eq, isnan, ne, select
from simgpu.shader.vector.valu import define

_COMPARES = {
    "f": lambda a, b: const(0, "bool"),
    "lt": lambda a, b: a < b,
    "eq": eq,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "lg": lambda a, b: (a < b) | (a > b),
    "ge": lambda a, b: a >= b,
    "o": lambda a, b: ~(isnan(a) | isnan(b)),
    "u": lambda a, b: isnan(a) | isnan(b),
    "nge": lambda a, b: ~(a >= b),
    "nlg": lambda a, b: ~((a < b) | (a > b)),
    "ngt": lambda a, b: ~(a > b),
    "nle": lambda a, b: ~(a <= b),
    "neq": ne,  # IEEE's !=: true on a NaN operand
    "nlt": lambda a, b: ~(a < b),
    "t": lambda a, b: const(1, "bool"),
}
def _class(x, mask):
    """Bit fclass(x) of the mask (its type's width: u16 for f16, u32 otherwise), x as given. The positive
    classes count from +normal (8): -1 below the smallest normal, -1 more for zero, +1 for inf; a negative
    value's class mirrors its positive one (11 - class). Counting, not selecting: numpy's select branches per
    lane, and signs are irregular."""
    ut, mbits, _ = FLOAT_LAYOUT[x.t]
    exp, width = EXP_FIELD[x.t], int(ut[1:])
    u = bitcast(x, ut)
    mag = u & ((1 << (width - 1)) - 1)

    def one(cond):
        return cast(cond, mask.t)
    pos = 8 - one(mag < (exp & -exp)) - one(eq(mag, 0)) + one(eq(mag, exp))
    cls = pos + cast(u >> (width - 1), mask.t) * (11 - (pos + pos))
    cls = select(mag > exp, cast((u >> (mbits - 1)) & 1, mask.t), cls)  # NaN: 0 signaling, 1 quiet
    return ne((mask >> cls) & 1, 0)


for _t, _mt in (("f16", "u16"), ("f32", "u32"), ("f64", "u32")):
    for _op, _f in _COMPARES.items():
        define(f"v_cmp_{_op}_{_t}", None, (_t, _t), _f, compare=True)
        define(f"v_cmpx_{_op}_{_t}", None, (_t, _t), _f, compare=True, cmpx=True)
    define(f"v_cmp_class_{_t}", None, (_t, _mt), _class, compare=True)
    define(f"v_cmpx_class_{_t}", None, (_t, _mt), _class, compare=True, cmpx=True)
