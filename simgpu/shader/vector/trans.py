"""VALU transcendentals (rcp, rsq, sqrt, exp, log, sin, cos) and v_trig_preop_f64, from the RDNA3 ISA
reference. All but trig_preop are defined in the expression form (both tiers are generated from it): rcp,
rsq and sqrt as float64 arithmetic rounded to nearest once; exp, log, sin and cos as the fixed float64
algorithms of vector.elementary (exact reduction, a series, one rounding), which give the correctly rounded
result but where the true value lies within ~2**-26 ULP of a rounding boundary; trig_preop reads a table.

All are within the documented accuracy (f32: 1 ULP, f16: 0.51 ULP, f64 rcp/rsq/sqrt: 2**29 ULP). As the
reference says, the f32 rcp/rsq/sqrt/exp/log flush denormal inputs and results whatever MODE says
(LLVM scales around this); sin/cos and the f16/f64 forms keep denormals. sin/cos take revolutions:
sin(x * 2 pi), reduced exactly to a quarter turn, so large inputs stay accurate and the reference's exact
zeros and ones at quarter turns come out exact.

Against the model exp/log/sin/cos replaced (the host C library's float64 exp2/log2/sin rounded once, which
the JIT could not reproduce and which differs between hosts), tools/trans_vs_libm.py counts the inputs whose
result changed, over every f16 and every f32 input (glibc's libm, x86-64): none for exp, log and sin; for cos
1025 f16 and 8388611 f32 inputs. Of those, all but two are NaN results: a negative NaN source now gives itself
quieted with its sign (the old reduction took |r| of it and lost the sign), and +-inf now gives the host's
default NaN, as the reference's examples do (the old gave +NaN). The two are f32 +-0x390721a7, whose true
cosine lies 3.6e-9 ULP above a rounding midpoint: the old result rounded up (correctly), the new one down
(0.5000000036 ULP off).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.sem import expr
from simgpu.shader.sem.expr import flush
from simgpu.shader.vector import elementary as el
from simgpu.shader.vector.valu import define, vop

F64 = np.float64

# exp, log: f32 sources and results flushed whatever MODE says; sin, cos and the f16 forms keep denormals
for _name, _f in (("exp", el.exp2), ("log", el.log2), ("sin", el.sin_rev), ("cos", el.cos_rev)):
    define(f"v_{_name}_f16", "f16", ("f16",), _f)
    define(f"v_{_name}_f32", "f32", ("f32",), _f if _name in ("sin", "cos") else lambda x, f=_f: flush(f(flush(x))))
for _name in ("rcp", "rsq", "sqrt"):
    _f = getattr(expr, _name)
    define(f"v_{_name}_f16", "f16", ("f16",), _f)
    define(f"v_{_name}_f32", "f32", ("f32",), lambda x, f=_f: flush(f(flush(x))))
    define(f"v_{_name}_f64", "f64", ("f64",), _f)
define("v_rcp_iflag_f32", "f32", ("f32",), lambda x: flush(expr.rcp(flush(x))))


# ---------------------------------------------------------------------------------------------- trig_preop


def _two_over_pi_bits(nbits: int = 1201) -> int:
    """floor(2/pi * 2**nbits) (64 guard bits absorb the error of the fixed-point pi)."""
    prec = nbits + 64
    return (1 << (nbits + 1 + prec)) // el.pi_fixed(prec)


def _preop_table() -> np.ndarray:
    """53-bit segment of 2/pi starting `shift` bits after the binary point, for every reachable shift."""
    v = _two_over_pi_bits()
    mask = (1 << 53) - 1
    out = []
    for shift in range(31 * 53 + 2047 - 1077 + 1):
        down = 1201 - 53 - shift
        out.append(float(((v >> down) if down >= 0 else (v << -down)) & mask))
    return np.array(out, F64)


_PREOP = _preop_table()


def _trig_preop(ctx, x, sel):
    """ldexp(segment, -53 - shift): shift = 53 * S1[4:0], plus the excess of S0's exponent over 1077."""
    e = (x.view(np.uint64) >> np.uint64(52)).astype(np.int64) & 0x7FF
    shift = (sel & np.uint32(31)).astype(np.int64) * 53 + np.maximum(e - 1077, 0)
    scale = -53 - shift + np.where(e >= 1968, 128, 0)
    return np.ldexp(_PREOP[shift], scale)


vop("v_trig_preop_f64", "f64", ("f64", "u32"), _trig_preop)
