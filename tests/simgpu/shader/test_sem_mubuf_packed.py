"""Typed buffer accesses with the packed gfx11 formats (10_11_11 / 11_11_10 floats, 10_10_10_2 and
2_10_10_10), against reference decoders and encoders written here in plain Python from the format rules:
bit fields per component listed explicitly, small floats from their exponent/mantissa definition, rounding
by searching the representable values (not by bit tricks)."""

from __future__ import annotations

import bisect
import math
import struct

import numpy as np
import pytest

from simgpu.testbed import Testbed
from tests.simgpu.shader.test_sem_mubuf import AREA, LANES, run, vsharp

M32 = (1 << 32) - 1

# name -> (gfx11 BUF_FMT id, [(lsb, width) of x, y, z(, w)], number format)
PACKED = {
    "10_11_11_float": (30, [(0, 11), (11, 11), (22, 10)], "float"),
    "11_11_10_float": (31, [(0, 10), (10, 11), (21, 11)], "float"),
    "10_10_10_2_unorm": (32, [(0, 2), (2, 10), (12, 10), (22, 10)], "unorm"),
    "10_10_10_2_snorm": (33, [(0, 2), (2, 10), (12, 10), (22, 10)], "snorm"),
    "10_10_10_2_uint": (34, [(0, 2), (2, 10), (12, 10), (22, 10)], "uint"),
    "10_10_10_2_sint": (35, [(0, 2), (2, 10), (12, 10), (22, 10)], "sint"),
    "2_10_10_10_unorm": (36, [(0, 10), (10, 10), (20, 10), (30, 2)], "unorm"),
    "2_10_10_10_snorm": (37, [(0, 10), (10, 10), (20, 10), (30, 2)], "snorm"),
    "2_10_10_10_uscaled": (38, [(0, 10), (10, 10), (20, 10), (30, 2)], "uscaled"),
    "2_10_10_10_sscaled": (39, [(0, 10), (10, 10), (20, 10), (30, 2)], "sscaled"),
    "2_10_10_10_uint": (40, [(0, 10), (10, 10), (20, 10), (30, 2)], "uint"),
    "2_10_10_10_sint": (41, [(0, 10), (10, 10), (20, 10), (30, 2)], "sint"),
}
ONE_F = 0x3F800000


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


def fbits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def fval(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b & M32))[0]


# ---------------------------------------------------------------------------------------------- reference

def ref_small_float(raw: int, width: int) -> int:
    """An unsigned float with a 5-bit exponent (bias 15) and width-5 mantissa bits, as f32 bits."""
    mb = width - 5
    e, m = raw >> mb, raw & ((1 << mb) - 1)
    if e == 31:
        return 0x7F800000 | m << (23 - mb)  # inf, or NaN with the payload at the top of the f32 mantissa
    if e == 0:
        return fbits(math.ldexp(m, -14 - mb))
    return fbits(math.ldexp(1 + m / (1 << mb), e - 15))


def ref_decode(raw: int, width: int, kind: str) -> int:
    s = raw - (1 << width) if raw >> (width - 1) & 1 else raw
    if kind == "float":
        return ref_small_float(raw, width)
    if kind == "unorm":
        return fbits(raw / ((1 << width) - 1))
    if kind == "snorm":
        return fbits(max(s / ((1 << (width - 1)) - 1), -1.0))
    if kind == "uscaled":
        return fbits(float(raw))
    if kind == "sscaled":
        return fbits(float(s))
    return raw if kind == "uint" else s & M32


_FINITE: dict[int, list[float]] = {}


def finite_values(width: int) -> list[float]:
    """The non-negative finite values of a small float, ascending; index == encoding."""
    if width not in _FINITE:
        _FINITE[width] = [fval(ref_small_float(c, width)) for c in range(31 << (width - 5))]
    return _FINITE[width]


def ref_small_float_encode(b: int, width: int) -> int:
    mb = width - 5
    f = fval(b)
    if f != f:
        return 31 << mb | 1 << (mb - 1) | (b & 0x7FFFFF) >> (23 - mb)  # quiet NaN, payload truncated
    if b >> 31:
        return 0  # negative (and -0, -inf) -> 0
    if f == math.inf:
        return 31 << mb
    vals = finite_values(width)
    i = bisect.bisect_left(vals, f)
    if i == len(vals):
        return len(vals) - 1  # past the largest finite value: clamp to it
    if vals[i] == f or i == 0:
        return i
    lo, hi = vals[i - 1], vals[i]
    if f - lo != hi - f:
        return i - 1 if f - lo < hi - f else i
    return i if i % 2 == 0 else i - 1  # a tie: the even mantissa


def ref_encode(b: int, width: int, kind: str) -> int:
    f, m = fval(b), (1 << width) - 1
    half = (1 << (width - 1)) - 1
    if kind == "float":
        return ref_small_float_encode(b, width)
    if kind in ("uint", "sint"):
        return b & m
    if f != f:
        return 0
    if kind == "unorm":
        return round(min(max(f, 0.0), 1.0) * m)
    if kind == "snorm":
        return round(min(max(f, -1.0), 1.0) * half) & m
    if kind == "uscaled":
        return round(min(max(f, 0.0), float(m)))
    return round(min(max(f, -half - 1.0), float(half))) & m  # sscaled


def fields(word: int, fmt: str) -> list[int]:
    return [word >> lsb & ((1 << w) - 1) for lsb, w in PACKED[fmt][1]]


def ref_load(word: int, fmt: str) -> list[int]:
    _, layout, kind = PACKED[fmt]
    comp = [ref_decode(r, w, kind) for r, (_, w) in zip(fields(word, fmt), layout, strict=True)]
    return comp + [ONE_F] if len(comp) == 3 else comp


def ref_store(vals: list[int], fmt: str) -> int:
    _, layout, kind = PACKED[fmt]
    return sum(ref_encode(v, w, kind) << lsb for v, (lsb, w) in zip(vals, layout, strict=False))


def ref_f16(b: int, kind: str) -> int:
    """A 32-bit loaded value as a d16 result."""
    if kind in ("uint", "sint"):
        return b & 0xFFFF
    return int(np.array([b], np.uint32).view(np.float32).astype(np.float16).view(np.uint16)[0])


# ---------------------------------------------------------------------------------------------- data

def small_float_words(width_of: list[int], rng: np.random.Generator) -> list[int]:
    """Words whose float fields walk the edge encodings: 0, smallest/largest denormal, 1.0, the largest
    finite value, inf and NaNs, mixed with random fields."""
    words = []
    for i in range(LANES):
        word, lsb = 0, 0
        for k, w in enumerate(width_of):
            mb = w - 5
            edges = [0, 1, (1 << mb) - 1, 1 << mb, 15 << mb, (31 << mb) - 1, 31 << mb, 31 << mb | 1,
                     (32 << mb) - 1, 31 << mb | 1 << (mb - 1)]
            c = edges[(i + 3 * k) % len(edges)] if i < 40 else int(rng.integers(0, 1 << w))
            word |= c << lsb
            lsb += w
        words.append(word)
    return words


def load_words(fmt: str, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    layout = PACKED[fmt][1]
    if PACKED[fmt][2] == "float":
        return small_float_words([w for _, w in layout], rng)
    edges = [0, M32, 0x80000000, 0x40000000, 0x00000001, 0x00000002, 0x00000003, 0x200801FF, 0x20080200]
    return edges + [int(x) for x in rng.integers(0, 1 << 32, LANES - len(edges), dtype=np.uint64)]


STORE_EDGES = [0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x3F000000, 0xBF000000, 0x3F7FFFFF,
               0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00000, 0x477E0000, 0x477F0000,
               0x477F0001, 0x477C0000, 0x477E0000, 0x477E0001, 0x7F7FFFFF, 0x00000001, 0x38800000,
               0x38000000, 0x35800000, 0x35000000, 0x35400000, 0x34C00000, 0x447FC000, 0x44800000,
               0x40400000, 0x3FC00000, 0xC0000000, 0xC0400000, 0x7FFFFFFF, 300, 0xFFFFFF80, 0x3FF]


def store_values(fmt: str, seed: int) -> np.ndarray:
    """[LANES, 4] register values: the edges, then random floats around each range and random bits."""
    rng = np.random.default_rng(seed)
    n = 4 * LANES
    vals = np.concatenate([np.array(STORE_EDGES, np.uint32),
                           rng.uniform(-2, 2, n // 4).astype(np.float32).view(np.uint32),
                           rng.uniform(-1200, 70000, n // 4).astype(np.float32).view(np.uint32),
                           (2.0 ** rng.uniform(-26, -12, n // 4)).astype(np.float32).view(np.uint32),
                           rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)])
    return vals[:n].reshape(LANES, 4)


def desc(fmt: str, stride=4, num_records=LANES, dst_sel=(4, 5, 6, 7)):
    return lambda a: vsharp(a, stride, num_records, 1, fmt=PACKED[fmt][0], dst_sel=dst_sel)


# ---------------------------------------------------------------------------------------------- tests

@pytest.mark.parametrize("fmt", sorted(PACKED))
@pytest.mark.parametrize("mn", ["tbuffer_load_format_xyzw", "buffer_load_format_xyzw", "tbuffer_load_format_xy"])
def test_packed_loads(tb, mn, fmt):
    words = load_words(fmt, PACKED[fmt][0])
    area = np.zeros(AREA // 4, np.uint32)
    area[:LANES] = words
    nch = 2 if mn.endswith("_xy") else 4
    tfmt = f" format:{PACKED[fmt][0]}" if mn.startswith("t") else ""
    sel = (4, 5, 6, 7) if mn.startswith("t") else (7, 6, 1, 4)  # buffer_load_format: a swizzled dst_sel
    index = np.arange(LANES)
    regs, _, _ = run(tb, f"{mn} v[10:{9 + nch}], v2, s[12:15], 0{tfmt} idxen\n", desc(fmt, dst_sel=sel),
                     index, np.zeros(LANES), np.zeros((LANES, 4)), 0, area.view(np.uint8))
    one = 1 if PACKED[fmt][2] in ("uint", "sint") else ONE_F
    for lane in range(LANES):
        comp = ref_load(words[lane], fmt)
        want = [{0: 0, 1: one, 4: comp[0], 5: comp[1], 6: comp[2], 7: comp[3]}[s] for s in sel][:nch]
        assert [hex(v) for v in regs[lane][:nch]] == [hex(v) for v in want], (fmt, lane, hex(words[lane]))


@pytest.mark.parametrize("fmt", ["10_11_11_float", "11_11_10_float", "2_10_10_10_unorm", "10_10_10_2_sint",
                                 "2_10_10_10_sscaled"])
def test_packed_d16_loads(tb, fmt):
    words = load_words(fmt, 7)
    area = np.zeros(AREA // 4, np.uint32)
    area[:LANES] = words
    regs, _, _ = run(tb, f"tbuffer_load_d16_format_xyzw v[10:11], v2, s[12:15], 0 format:{PACKED[fmt][0]} idxen\n",
                     desc(fmt), np.arange(LANES), np.zeros(LANES), np.zeros((LANES, 4)), 0, area.view(np.uint8))
    kind = PACKED[fmt][2]
    for lane in range(LANES):
        h = [ref_f16(v, kind) for v in ref_load(words[lane], fmt)]
        assert [hex(v) for v in regs[lane][:2]] == [hex(h[0] | h[1] << 16), hex(h[2] | h[3] << 16)], (fmt, lane)


@pytest.mark.parametrize("fmt", sorted(PACKED))
def test_packed_stores(tb, fmt):
    vals = store_values(fmt, PACKED[fmt][0])
    index = np.arange(LANES) % 70  # index >= num_records (60): the store is dropped
    _, _, got = run(tb, f"tbuffer_store_format_xyzw v[6:9], v2, s[12:15], 0 format:{PACKED[fmt][0]} idxen\n",
                    desc(fmt, num_records=60), index, np.zeros(LANES), vals)
    want = np.zeros(AREA // 4, np.uint32)
    for lane in range(LANES):
        if index[lane] < 60:
            want[index[lane]] = ref_store([int(v) for v in vals[lane]], fmt)
    words = np.frombuffer(bytes(got), np.uint32)
    bad = [(lane, hex(int(words[lane])), hex(int(want[lane]))) for lane in range(LANES) if words[lane] != want[lane]]
    assert not bad, (fmt, bad[:4])


@pytest.mark.parametrize("fmt", ["10_11_11_float", "11_11_10_float", "2_10_10_10_snorm", "10_10_10_2_uint"])
def test_packed_short_and_d16_stores(tb, fmt):
    """buffer_store_format_x writes the whole dword, with y, z, w as 0; d16 data widens exactly first."""
    vals = store_values(fmt, 99)
    f16 = vals.astype(np.uint32) & 0xFFFF
    kind = PACKED[fmt][2]
    if kind == "float":  # d16 float data: take f16 bit patterns from the f32 values (big ones become inf)
        with np.errstate(over="ignore"):
            f16 = vals.view(np.float32).astype(np.float16).view(np.uint16).astype(np.uint32)
    d16 = np.stack([f16[:, 0] | f16[:, 1] << 16, f16[:, 2] | f16[:, 3] << 16, vals[:, 2], vals[:, 3]], axis=1)
    op = (f"tbuffer_store_d16_format_xyzw v[6:7], v2, s[12:15], 0 format:{PACKED[fmt][0]} idxen\n"
          "v_add_nc_u32 v2, 64, v2\n"
          "buffer_store_format_x v8, v2, s[12:15], 0 idxen\n")
    _, _, got = run(tb, op, desc(fmt, num_records=200), np.arange(LANES), np.zeros(LANES), d16,
                    area=np.full(AREA, 0xEE, np.uint8))
    words = np.frombuffer(bytes(got), np.uint32)
    for lane in range(LANES):
        wide = [h if kind in ("uint", "sint") else fbits(float(np.array([h], np.uint16).view(np.float16)[0]))
                for h in f16[lane]]
        assert words[lane] == ref_store(wide, fmt), (fmt, lane)
        assert words[64 + lane] == ref_store([int(vals[lane, 2])], fmt), (fmt, lane)


@pytest.mark.parametrize("fmt", sorted(PACKED))
def test_packed_round_trip(tb, fmt):
    """Load then store the same element: UNORM/UINT/SINT/SCALED and finite floats come back unchanged; SNORM's
    most negative value comes back as -(2^(n-1) - 1) and a NaN comes back quiet."""
    words = load_words(fmt, 3 * PACKED[fmt][0])
    area = np.zeros(AREA // 4, np.uint32)
    area[:LANES] = words
    t = f"format:{PACKED[fmt][0]}"
    op = (f"tbuffer_load_format_xyzw v[10:13], v2, s[12:15], 0 {t} idxen\n"
          "s_waitcnt vmcnt(0)\n"
          f"tbuffer_store_format_xyzw v[10:13], v2, s[12:15], 0 {t} idxen offset:512\n")
    _, _, got = run(tb, op, desc(fmt, num_records=LANES + 1), np.arange(LANES), np.zeros(LANES),
                    np.zeros((LANES, 4)), 0, area.view(np.uint8))
    back = np.frombuffer(bytes(got), np.uint32)[128:128 + LANES]
    for lane in range(LANES):
        assert back[lane] == ref_store(ref_load(words[lane], fmt), fmt), (fmt, lane)
        if PACKED[fmt][2] in ("unorm", "uint", "sint", "uscaled", "sscaled"):
            assert back[lane] == words[lane]
