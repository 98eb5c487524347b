"""The 8-, 6- and 4-bit float formats of the fp8/bf8 (gfx942, gfx950, gfx1201) and fp6/bf6/fp4 (gfx950) conversions
and matrix inputs: their values (decode) and the conversion of a wider value to them (encode).

Formats (a sign bit, then exponent, then mantissa; bias as below):

- OCP (gfx1201, gfx950; the OCP 8-bit floating point specification): E4M3 "fp8" (bias 7, no infinities, S.1111.111
  is NaN, max 448) and E5M2 "bf8" (IEEE-like, bias 15: S.11111.00 is infinity, S.11111.{01,10,11} NaN, max 57344).
- FNUZ (gfx942; LLVM's gfx940 "fnuz" types): E4M3 with bias 8 (max 240) and E5M2 with bias 16 (max 57344); no
  infinities, no negative zero, and 0x80 (the negative zero's code) is the one NaN.
- OCP MX (gfx950): E2M3 "fp6" (bias 1, max 7.5), E3M2 "bf6" (bias 3, max 28), E2M1 "fp4" (bias 1, max 6): no
  infinities and no NaN; and E8M0, the MX block scale (E8M0): 2^(code - 127), code 0xFF NaN; no sign, no zero.

Encoding rounds to nearest even from the exact value (a float64 holds every f32, f16 and bf16 value and every such
value scaled by a power of two in the range the scaled conversions use, so the one rounding is the only one). What
the result is when the rounded magnitude exceeds the format's largest finite value, or the input is infinite or NaN:

- `saturate_finite` (MODE.FP16_OVFL, MODE bit 23, on): a finite value out of range gives the largest finite value of
  its sign; infinities and NaNs are kept (an infinity becomes the format's infinity, or its NaN where it has none).
  This is the mode bit AMD's compilers set to make these conversions saturate (Triton's gfx950 fp8 casts begin with
  `s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), 1`; hipBLASLt does the same on gfx12), described by them as
  selecting the finite-overflow behaviour of the conversions to fp8 and f16.
- `saturate` (the VOP3 clamp bit of the fp8/bf8 conversions): any non-NaN value out of range, infinities included,
  gives the largest finite value of its sign. The reference does not say what clamp does to these conversions (LLVM
  cannot write it); this reading is the "satfinite" one, saturation that reaches infinities too.
- otherwise: E5M2 (OCP) gives infinity; OCP E4M3 gives its NaN (S.1111.111); FNUZ gives 0x80. fp6/bf6/fp4, which
  have neither, always saturate (the OCP MX specification's conversion rule).
- A NaN input gives a NaN: S.1111.111 (E4M3), S.11111.10 (E5M2, the quiet NaN), 0x80 (FNUZ); fp6/bf6/fp4 have no NaN
  and give +0: the reference does not say (the OCP MX specification leaves it to the implementation), and ml_dtypes'
  result for it is not consistent (it depends on the NaN's bits), so nothing outside pins it.
- A zero or a value rounding to zero keeps its sign, except in FNUZ (no negative zero: 0x00).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

U32, F64 = np.uint32, np.float64


@dataclass(frozen=True)
class Format:
    """One small float format: exponent and mantissa widths, bias, and which specials it has."""

    name: str
    exp_bits: int
    man_bits: int
    bias: int
    kind: str  # "ocp" (IEEE-like; E4M3 without infinities), "fnuz" (0x80 is NaN) or "mx" (no inf, no NaN)

    @property
    def bits(self) -> int:
        return 1 + self.exp_bits + self.man_bits

    @property
    def has_inf(self) -> bool:
        return self.kind == "ocp" and self.exp_bits == 5

    @cached_property
    def table(self) -> np.ndarray:
        """The float64 value of every code (NaN for the NaN codes)."""
        n, m, e_max = 1 << self.bits, 1 << self.man_bits, (1 << self.exp_bits) - 1
        codes = np.arange(n)
        sign = codes >> (self.bits - 1)
        e = (codes >> self.man_bits) & e_max
        frac = codes & (m - 1)
        mag = np.where(e == 0, frac / m * 2.0 ** (1 - self.bias), (1 + frac / m) * 2.0 ** (e - self.bias))
        out = np.where(sign == 1, -mag, mag)
        if self.kind == "fnuz":
            out[n >> 1] = np.nan
        elif self.kind == "ocp" and self.exp_bits == 4:
            out[(codes & (n // 2 - 1)) == n // 2 - 1] = np.nan
        elif self.kind == "ocp":
            top = e == e_max
            out[top] = np.where(frac[top] == 0, np.where(sign[top] == 1, -np.inf, np.inf), np.nan)
        # a NaN keeps its code's sign (FNUZ's 0x80 is negative), its payload the canonical quiet one: decoded to f32
        # it is 0x7FC00000 or 0xFFC00000, as ml_dtypes decodes it (the reference does not say)
        return np.where(np.isnan(out), np.copysign(np.nan, np.where(sign == 1, -1.0, 1.0)), out).astype(F64)

    @cached_property
    def _positive(self) -> tuple[np.ndarray, np.ndarray]:
        """The finite non-negative values in increasing order and their codes."""
        half = self.table[: 1 << (self.bits - 1)]
        codes = np.flatnonzero(np.isfinite(half))
        return half[codes], codes

    @property
    def max_finite(self) -> float:
        return float(self._positive[0][-1])

    @property
    def nan_code(self) -> int:
        if self.kind == "fnuz":
            return 1 << (self.bits - 1)
        return (1 << (self.bits - 1)) - 1 if self.exp_bits == 4 else 0x7E

    def decode(self, codes) -> np.ndarray:
        """The float64 values of `codes` (any unsigned integer array; only the format's low bits are read)."""
        return self.table[np.asarray(codes).astype(np.int64) & ((1 << self.bits) - 1)]

    def encode(self, x, saturate=False, saturate_finite=False) -> np.ndarray:
        """float64 (or narrower) values to codes (uint32), rounded to nearest even (module docstring). `saturate`
        (the clamp bit) and `saturate_finite` (MODE.FP16_OVFL) may be bools or boolean arrays broadcasting to x."""
        with np.errstate(invalid="ignore"):  # a signaling NaN widens to a quiet one
            x = np.asarray(x, F64)
        sign = np.where(np.signbit(x), 1 << (self.bits - 1), 0)
        a = np.abs(x)
        nan, inf = np.isnan(a), np.isinf(a)
        vals, codes = self._positive
        with np.errstate(all="ignore"):
            # the quantum at a: 2**(exponent - man_bits), never below the subnormal step
            _, e = np.frexp(np.where(np.isfinite(a) & (a > 0), a, 1.0))
            q = np.ldexp(1.0, np.maximum(e - 1, 1 - self.bias) - self.man_bits)
            r = np.rint(a / q) * q  # exact: a / q scales by a power of two
        over = ~nan & (r > vals[-1])  # infinities included
        mx = self.kind == "mx"
        to_max = over & (mx | np.asarray(saturate) | (~inf & np.asarray(saturate_finite)))
        mag = codes[np.minimum(np.searchsorted(vals, np.where(over | nan, 0.0, r)), len(codes) - 1)]
        mag = np.where(to_max, codes[-1], mag).astype(np.int64)
        out = mag | sign
        special = (over & ~to_max) | nan  # what becomes infinity or NaN
        if self.kind == "fnuz":  # no negative zero; overflow and NaN are 0x80
            out = np.where(special, 1 << (self.bits - 1), np.where(mag == 0, 0, out))
        elif mx:
            out = np.where(nan, 0, out)
        else:
            inf_code = 0x7C if self.has_inf else self.nan_code
            out = np.where(special, np.where(nan, self.nan_code, inf_code) | sign, out)
        return out.astype(U32)


FP8 = Format("fp8", 4, 3, 7, "ocp")  # OCP E4M3 (float8_e4m3fn)
BF8 = Format("bf8", 5, 2, 15, "ocp")  # OCP E5M2 (float8_e5m2)
FP8_FNUZ = Format("fp8_fnuz", 4, 3, 8, "fnuz")  # float8_e4m3fnuz
BF8_FNUZ = Format("bf8_fnuz", 5, 2, 16, "fnuz")  # float8_e5m2fnuz
FP6 = Format("fp6", 2, 3, 1, "mx")  # float6_e2m3fn
BF6 = Format("bf6", 3, 2, 3, "mx")  # float6_e3m2fn
FP4 = Format("fp4", 2, 1, 1, "mx")  # float4_e2m1fn

E8M0 = np.where(np.arange(256) == 255, np.nan, np.exp2(np.arange(256) - 127.0))  # the MX scale's value per code

# the fp8 / bf8 formats an architecture's conversions read and write: FNUZ on gfx942, OCP on gfx950 and gfx12
FNUZ = {"fp8": FP8_FNUZ, "bf8": BF8_FNUZ}
OCP = {"fp8": FP8, "bf8": BF8}


def stochastic_dither(f32_bits: np.ndarray, random: np.ndarray, man_bits: int) -> np.ndarray:
    """The f32 value (bits) the stochastic conversions round: the random dword's top 23 - man_bits bits added to the
    f32 mantissa field, wrapping within the field (the reference's pseudo-code: `m = 23'U(mantissa(S0) +
    S1[31:32-(23-M)])`, "wrap around on overflow"); sign and exponent unchanged."""
    bits = np.asarray(f32_bits).astype(U32)
    r = np.asarray(random).astype(U32) >> U32(9 + man_bits)
    m = (bits & U32(0x7FFFFF)) + r
    return (bits & U32(0xFF800000)) | (m & U32(0x7FFFFF))
