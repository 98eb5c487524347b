"""Shared harness of the VALU float tests: run one instruction over many lanes on the Testbed, with
MODE set first, and independent reference helpers (exact rationals, IEEE formats, bit patterns).

Each lane loads 64-bit words a, b, c (v[10:11], v[12:13], v[14:15]) and an initial destination d
(v[20:21]), runs the instruction, then stores v[20:21], VCC's lane bit and the lane bit of the SGPR
s20 (EXEC after a v_cmpx_*: the harness copies it there before re-enabling every lane)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

BLOCK = 256
UINT = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}
FLOAT = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
FMT = {"f16": (11, -14, 15), "f32": (24, -126, 127), "f64": (53, -1022, 1023)}  # precision, emin, emax

SPECIAL = {
    "f32": [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00000, 1, 0x807FFFFF,
            0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F000000, 0x4B000000,
            0x3EFFFFFF, 0xBF000000, 0x40490FDB, 0x00000003, 0x3FC00000, 0xCF000000, 0x4F800000],
    "f16": [0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 1, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00,
            0x3800, 0x3E00, 0x6400, 0x37FF],
    "f64": [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001, 1,
            0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x3FF0000000000000,
            0xBFF0000000000000, 0x3FE0000000000000, 0x4330000000000000, 0x41E0000000000000],
}


def mode_word(round32=0, round64=0, denorm32=3, denorm64=3, ieee=1, dx10=1) -> int:
    """A MODE value: FP_ROUND [3:0], FP_DENORM [7:4], DX10_CLAMP [8], IEEE [9]."""
    return round32 | (round64 << 2) | (denorm32 << 4) | (denorm64 << 6) | (dx10 << 8) | (ieee << 9)


def kernel_text(inst: str, mode: int) -> str:
    return f"""
        s_load_b256 s[4:11], s[0:1], 0x0
        s_load_b64 s[12:13], s[0:1], 0x20
        s_waitcnt lgkmcnt(0)
        s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 10), {mode:#x}
        v_lshl_add_u32 v1, s2, 8, v0
        v_lshlrev_b32 v2, 3, v1
        v_lshlrev_b32 v4, 4, v1
        global_load_b64 v[10:11], v2, s[6:7]
        global_load_b64 v[12:13], v2, s[8:9]
        global_load_b64 v[14:15], v2, s[10:11]
        global_load_b64 v[20:21], v2, s[12:13]
        s_waitcnt vmcnt(0)
        s_mov_b32 vcc_lo, 0x5a5a33cc
        {inst}
        s_mov_b32 s20, exec_lo
        s_mov_b32 exec_lo, -1
        v_cndmask_b32_e64 v22, 0, 1, vcc_lo
        v_cndmask_b32_e64 v23, 0, 1, s20
        global_store_b128 v4, v[20:23], s[4:5]
        s_endpgm
    """


class Runner:
    """Runs instruction texts on a Testbed, one launch per call (kernels cached by text and MODE)."""

    def __init__(self, tb):
        self.tb = tb
        self.cache = {}

    def run(self, inst: str, a, b=None, c=None, d=None, mode: int = mode_word()):
        """Per lane: (v[20:21] as uint64 [n], VCC bit [n], EXEC-after bit [n])."""
        n = len(a)
        pad = -n % BLOCK
        z = np.zeros(n, np.uint64)
        ops = [np.concatenate([np.asarray(z if x is None else x, np.uint64), np.zeros(pad, np.uint64)])
               for x in (a, b, c, d)]
        key = (inst, mode)
        if key not in self.cache:
            self.cache[key] = self.tb.load_asm(kernel_text(inst, mode), args=5)
        bufs = [self.tb.upload(x) for x in ops]
        out = self.tb.alloc(16 * (n + pad))
        self.tb.launch(self.cache[key], [out, *bufs], ((n + pad) // BLOCK,), (BLOCK,))
        raw = self.tb.download(out, np.uint32, 4 * (n + pad)).reshape(-1, 4)[:n]
        d64 = raw[:, 0].astype(np.uint64) | (raw[:, 1].astype(np.uint64) << np.uint64(32))
        return d64, raw[:, 2].astype(bool), raw[:, 3].astype(bool)


# ---------------------------------------------------------------------------------------------- inputs


def float_bits(t: str):
    """A strategy of one float bit pattern of type t: specials, random bits, or random moderate values."""
    bits = {"f16": 16, "f32": 32, "f64": 64}[t]
    return st.one_of(st.sampled_from(SPECIAL[t]), st.integers(0, (1 << bits) - 1),
                     st.floats(-1e4, 1e4, width=bits).map(lambda f: int(np.array(f, FLOAT[t]).view(UINT[t]))))


def lanes(data, t: str, n: int, seed: int, head: int = 48) -> np.ndarray:
    """n bit patterns (uint64): a hypothesis-drawn head then seeded random values of mixed magnitude."""
    h = data.draw(st.lists(float_bits(t), min_size=head, max_size=head))
    rng = np.random.default_rng(seed)
    m = n - head
    p, emin, emax = FMT[t]
    vals = rng.standard_normal(m) * np.exp2(rng.integers(emin - p, emax + 1, m))
    near = rng.standard_normal(m) * np.exp2(rng.integers(-6, 7, m))
    with np.errstate(over="ignore"):
        v = np.where(rng.random(m) < 0.5, near, vals).astype(FLOAT[t]).view(UINT[t]).astype(np.uint64)
    return np.concatenate([np.array(h, np.uint64), v])


def as_float(bits: np.ndarray, t: str) -> np.ndarray:
    """uint64 words -> float values of type t (from their low bits)."""
    return bits.astype(UINT[t]).view(FLOAT[t])


# ---------------------------------------------------------------------------------------------- reference rounding


def is_denorm(x: float, t: str) -> bool:
    return x != 0 and math.isfinite(x) and abs(x) < 2.0 ** FMT[t][1]


def flush(x: float, t: str) -> float:
    """x with a denormal of type t replaced by a zero of its sign."""
    return math.copysign(0.0, x) if is_denorm(x, t) else x


def round_fraction(q: Fraction, t: str, mode: int) -> float:
    """The rational q rounded to format t (mode: 0 nearest-even, 1 up, 2 down, 3 toward zero)."""
    p, emin, emax = FMT[t]
    if q == 0:
        return 0.0
    sign = -1 if q < 0 else 1
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (max(e, emin) - p + 1)
    k = a / ulp
    fl = k.numerator // k.denominator
    rem = k - fl
    away = (mode == 1 and sign > 0) or (mode == 2 and sign < 0)
    if (mode == 0 and (rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2))) or (away and rem):
        fl += 1
    res = fl * ulp
    maxv = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if res > maxv:
        return sign * math.inf if mode == 0 or away else sign * float(maxv)
    return sign * float(res)


def same(got_bits: int, want: float, t: str, nan_any: bool = True) -> bool:
    """Result bits equal the expected value (any NaN matches a NaN; zeros compare with their sign)."""
    g = float(np.array(got_bits, UINT[t]).view(FLOAT[t]))
    if math.isnan(want):
        return math.isnan(g) if nan_any else False
    return g == want and math.copysign(1, g) == math.copysign(1, want)
