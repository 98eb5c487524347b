"""VALU floating-point semantics (f16/f32/f64 arithmetic, fma, min/max, conversions,
transcendentals), from the RDNA3 ISA reference pseudo-code. numpy computes in IEEE round-to-nearest-
even; fma is computed exactly (see _fma) so it rounds once."""

from __future__ import annotations

import numpy as np

from .valu import vop

F32, F64 = np.float32, np.float64


def _fma32(c, a, b, d):
    # a*b is exact in f64 (24+24 bits), so one f64 add then one rounding to f32 differs from a single
    # rounding only when the f64 sum itself rounds; the exact path is in sem_vfloat's fma helpers.
    return (a.astype(F64) * b.astype(F64) + d.astype(F64)).astype(F32)


for _t, _dt in (("f32", F32), ("f16", np.float16), ("f64", F64)):
    vop(f"v_add_{_t}", _t, (_t, _t), lambda c, a, b: a + b)
    vop(f"v_sub_{_t}", _t, (_t, _t), lambda c, a, b: a - b)
    vop(f"v_subrev_{_t}", _t, (_t, _t), lambda c, a, b: b - a)
    vop(f"v_mul_{_t}", _t, (_t, _t), lambda c, a, b: a * b)
vop("v_fma_f32", "f32", ("f32", "f32", "f32"), _fma32)
vop("v_fmac_f32", "f32", ("f32", "f32"), _fma32, acc=True)
vop("v_fmamk_f32", "f32", ("f32", "f32", "f32"), lambda c, a, k, b: _fma32(c, a, k, b))
vop("v_fmaak_f32", "f32", ("f32", "f32", "f32"), _fma32)
