"""Unsigned small floats: the 11-bit (5-bit exponent, 6-bit mantissa) and 10-bit (5-bit exponent, 5-bit
mantissa) components of BUF_FMT_10_11_11_FLOAT / BUF_FMT_11_11_10_FLOAT.

They are f16 without the sign and with fewer mantissa bits: bias 15, exponent 0 holds denormals, exponent
31 holds inf (mantissa 0) and NaN. Widening to f32 is exact, NaN payloads included (shifted up like an f16
to f32 conversion, not quieted). Narrowing follows the rules of the APIs these formats serve
(GL_EXT_packed_float, D3D11's float11/float10; not checked on hardware): round to nearest even; negative
values, -0 and -inf give 0; +inf stays inf; finite values past the largest finite one (65024 for 11 bits,
64512 for 10) give that largest finite value, not inf, as GL_EXT_packed_float requires; NaN gives a NaN.
Which NaN the hardware writes is not documented; like v_cvt_f16_f32 this keeps the top payload bits and
sets the quiet (top mantissa) bit.
"""

from __future__ import annotations

import numpy as np

U32 = np.uint32
_EXP_SHIFT = 23  # f32 mantissa width
_REBIAS = 127 - 15


def decode(raw: np.ndarray, mbits: int) -> np.ndarray:
    """Raw unsigned small floats (5-bit exponent, `mbits` mantissa) to float32 bits."""
    b = raw.astype(np.int64)
    e, m = b >> mbits & 0x1F, b & ((1 << mbits) - 1)
    up = _EXP_SHIFT - mbits
    normal = (e + _REBIAS) << _EXP_SHIFT | m << up
    special = 0x7F800000 | m << up  # inf or NaN, payload kept
    # a denormal is m * 2^(-14 - mbits): exact in float32
    denorm = (m.astype(np.float64) * 2.0 ** -(14 + mbits)).astype(np.float32).view(U32).astype(np.int64)
    return np.select([e == 0, e == 31], [denorm, special], normal).astype(U32)


def encode(val: np.ndarray, mbits: int) -> np.ndarray:
    """float32 bits to raw unsigned small floats (uint64), per the rules in the module docstring."""
    x = val.astype(U32).astype(np.int64)
    mag = x & 0x7FFFFFFF
    drop = _EXP_SHIFT - mbits
    inf = 31 << mbits
    max_finite = inf - 1
    # normal range: round the f32 bit pattern to `mbits` mantissa bits (a carry moves into the exponent,
    # which is what rounding up to the next binade means), then rebias
    rne = (mag + (1 << (drop - 1)) - 1 + (mag >> drop & 1)) >> drop
    normal = np.minimum(rne - (_REBIAS << mbits), max_finite)
    # below 2^-14 the quantum is the denormal step 2^(-14 - mbits); rint is round-half-even and a result
    # of 1 << mbits is exactly the smallest normal's encoding
    small = mag < 113 << _EXP_SHIFT
    f = np.where(small, mag, 0).astype(U32).view(np.float32).astype(np.float64)
    tiny = np.rint(f * 2.0 ** (14 + mbits)).astype(np.int64)
    nan = inf | 1 << (mbits - 1) | (mag & 0x7FFFFF) >> drop
    out = np.select([mag > 0x7F800000, x >> 31 == 1, mag == 0x7F800000, small],
                    [nan, 0, inf, tiny], normal)
    return out.astype(np.uint64)
