"""VALU float compares: v_cmp_{f,lt,eq,le,gt,lg,ge,o,u,nge,nlg,ngt,nle,neq,nlt,t}_{f16,f32,f64}, the
v_cmpx_* forms that write EXEC, and v_cmp(x)_class_*, from the RDNA3 ISA reference.

Ordered compares are false on a NaN operand, their n-forms true. Inputs are compared as given (no
denormal flushing: class tests must tell denormals apart). The class mask bits are: 0 signaling NaN,
1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem import fpexact as fx
from simgpu.shader.vector.valu import vop

_COMPARES = {
    "f": lambda a, b: np.zeros(a.shape, bool),
    "lt": lambda a, b: a < b,
    "eq": lambda a, b: a == b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "lg": lambda a, b: (a < b) | (a > b),
    "ge": lambda a, b: a >= b,
    "o": lambda a, b: ~np.isnan(a) & ~np.isnan(b),
    "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nge": lambda a, b: ~(a >= b),
    "nlg": lambda a, b: ~((a < b) | (a > b)),
    "ngt": lambda a, b: ~(a > b),
    "nle": lambda a, b: ~(a <= b),
    "neq": lambda a, b: ~(a == b),
    "nlt": lambda a, b: ~(a < b),
    "t": lambda a, b: np.ones(a.shape, bool),
}


def fclass(x: np.ndarray) -> np.ndarray:
    """The class bit (0..9) of every value, as an int array."""
    neg = np.signbit(x)
    den = fx.is_denormal(x)
    inf = np.isinf(x)
    conds = [fx.is_snan(x), np.isnan(x), inf & neg, inf, (x == 0) & neg, x == 0, den & neg, den, neg]
    return np.select(conds, [0, 1, 2, 9, 5, 6, 4, 7, 3], 8)


def _class(c, x, mask):
    return ((mask.astype(np.uint32) >> fclass(x).astype(np.uint32)) & np.uint32(1)).astype(bool)


for _t, _mt in (("f16", "u16"), ("f32", "u32"), ("f64", "u32")):
    for _op, _f in _COMPARES.items():
        vop(f"v_cmp_{_op}_{_t}", None, (_t, _t), lambda c, a, b, f=_f: f(a, b), compare=True)
        vop(f"v_cmpx_{_op}_{_t}", None, (_t, _t), lambda c, a, b, f=_f: f(a, b), compare=True, cmpx=True)
    vop(f"v_cmp_class_{_t}", None, (_t, _mt), _class, compare=True)
    vop(f"v_cmpx_class_{_t}", None, (_t, _mt), _class, compare=True, cmpx=True)
