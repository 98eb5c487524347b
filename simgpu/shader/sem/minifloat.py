"""Values of the OCP Microscaling (MX) element and scale formats gfx950 (CDNA4) reads: the value of every code as a
float64 table, indexed by the code.

- FP6 E2M3 and BF6 E3M2 (6 bits), FP4 E2M1 (4 bits): sign, exponent (bias 2^(E-1) - 1), mantissa; a zero exponent
  is subnormal (m / 2^M * 2^(1 - bias)); no infinity, no NaN (OCP MX v1.0, "Element data types").
- E8M0 (the MX block scale): 2^(code - 127), code 0xFF NaN; no sign, no zero.
The fp8 / bf8 elements (OCP E4M3 / E5M2) are vector.gfx12's FP8 / BF8 tables.
"""

from __future__ import annotations

import numpy as np


def _table(exp_bits: int, man_bits: int) -> np.ndarray:
    """The f64 value of each code of a sign / exp_bits / man_bits format without infinities or NaNs."""
    bias = (1 << (exp_bits - 1)) - 1
    codes = np.arange(1 << (1 + exp_bits + man_bits))
    sign = np.where(codes >> (exp_bits + man_bits), -1.0, 1.0)
    e = (codes >> man_bits) & ((1 << exp_bits) - 1)
    m = (codes & ((1 << man_bits) - 1)) / (1 << man_bits)
    return sign * np.where(e == 0, m * 2.0 ** (1 - bias), (1 + m) * np.exp2(e - bias))


FP6 = _table(2, 3)  # E2M3
BF6 = _table(3, 2)  # E3M2
FP4 = _table(2, 1)  # E2M1
E8M0 = np.where(np.arange(256) == 255, np.nan, np.exp2(np.arange(256) - 127.0))
