"""gfx1201 scalar sub-dword buffer loads (s_buffer_load_u8/i8/u16/i16, simgpu/shader/scalar/gfx12.py) and typed buffer
accesses in gfx12's VBUFFER encoding (buffer_load/store_format_*, tbuffer_*: simgpu/shader/memory/mubuf_format.py),
compiled by clang-19 from LLVM IR (tests/data/opencl/buffer.ll -> buffer_gfx1201.so, `python -m
tools.gen_opencl_corpus --arch gfx1201`: llvm.amdgcn.s.buffer.load.i8/i16 with zext/sext, raw.buffer.load.format,
raw.buffer.store.format, raw.tbuffer.load/store), run through mockgpu's amdkfd and the runtime over PM4 and AQL, in
the interpreter and the JIT tier (the same GPU state at the end), against numpy references written here from the
formats' definitions: UNORM x / (2^n - 1), SNORM max(x / (2^(n-1) - 1), -1), UINT zero-extended, FLOAT16 and the
unsigned 10/11-bit floats (5-bit exponent, bias 15) widened; stores clamp and round to nearest even. The V# is built
in the kernel from a pointer, NUM_RECORDS and word 3: DST_SEL x/y/z/w [11:0] (0 zero, 1 one, 4-7 x-w), FORMAT
[17:12], OOB_SELECT [29:28] (3: raw, bytes checked against NUM_RECORDS, a format element all or nothing).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from tests import DATA
from tests.simgpu.shader.test_corpus_opencl_gfx1201 import launcher

ARCH = "gfx1201"
CODE_OBJECT = DATA / "opencl" / "buffer_gfx1201.so"
RNG = np.random.default_rng(1201)
F16, F32, F64, U8, U16, U32 = np.float16, np.float32, np.float64, np.uint8, np.uint16, np.uint32
X, Y, Z, W, ZERO, ONE = 4, 5, 6, 7, 0, 1


def word3(fmt: int = 0, sel=(X, Y, Z, W), oob: int = 3) -> int:
    return sel[0] | sel[1] << 3 | sel[2] << 6 | sel[3] << 9 | fmt << 12 | oob << 28


def run(queue: str, kernel: str, args: list):
    out, _ = launcher(queue, code_object=CODE_OBJECT)(kernel, args, (1,), (32,))
    return out


# ---------------------------------------------------------------------------------------------- s_buffer_load


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("offsets", [(0, 1, 2, 4), (37, 12, 30, 58), (60, 59, 58, 56), (61, 60, 60, 59)])
def test_s_buffer_load_sub_dword(offsets, queue):
    """u8, i8, u16, i16 at the four offsets of a 61-byte buffer (NUM_RECORDS 61): bytes past it read as 0."""
    data = RNG.integers(0, 256, 64, dtype=np.int64).astype(U8)
    data[[1, 12, 59, 60]] = [0x80, 0xFE, 0x7F, 0x91]  # sign bits set where the signed loads read
    data[[5, 31, 57]] = [0x80, 0xC0, 0xF0]
    nrec = 61

    def at(o: int, size: int, signed: bool) -> int:
        if o + size > nrec:
            return 0
        v = int.from_bytes(data[o:o + size].tobytes(), "little")
        return v - (1 << 8 * size) if signed and v >> (8 * size - 1) else v

    out = run(queue, "s_buffer_sub_dword", [data, nrec, word3(), *offsets, np.zeros(4, U32)])[-1]
    want = [at(offsets[0], 1, False), at(offsets[1], 1, True), at(offsets[2], 2, False), at(offsets[3], 2, True)]
    assert [int(v) for v in out.view(np.int32)] == want


# ---------------------------------------------------------------------------------------------- format loads


def _small_float(bits: np.ndarray, mant: int) -> np.ndarray:
    """Unsigned float with a 5-bit exponent (bias 15) and `mant` mantissa bits (no inf/NaN inputs here)."""
    e, m = bits >> mant, bits & ((1 << mant) - 1)
    return np.where(e == 0, m / 2.0 ** mant * 2.0 ** -14, (1 + m / 2.0 ** mant) * 2.0 ** (e.astype(F64) - 15))


def _decode(fmt: int, elements: np.ndarray) -> np.ndarray:
    """[32, 4] f32 bit patterns (integers for UINT) of 32 elements' x, y, z, w from their bytes ([32, size])."""
    if fmt in (42, 43, 46):
        b = elements.astype(np.int64)
        if fmt == 42:
            return (b / 255).astype(F32).view(U32)
        if fmt == 43:
            s = np.where(b >= 128, b - 256, b)
            return np.maximum(s / 127, -1.0).astype(F32).view(U32)
        return b.astype(U32)
    if fmt == 57:
        return elements.view(F16).astype(F32).view(U32)
    if fmt == 63:
        return elements.view(U32).copy()
    word = elements.view(U32)[:, 0].astype(np.int64)
    if fmt == 36:  # 2_10_10_10_UNORM: x bits 0-9, y 10-19, z 20-29, w 30-31
        parts = [word & 1023, word >> 10 & 1023, word >> 20 & 1023]
        return np.stack([p / 1023 for p in parts] + [(word >> 30) / 3], axis=1).astype(F32).view(U32)
    assert fmt == 30  # 10_11_11_FLOAT: x bits 0-10 (6-bit mantissa), y 11-21 (6), z 22-31 (5); no w: 1.0
    vals = [_small_float(word & 2047, 6), _small_float(word >> 11 & 2047, 6), _small_float(word >> 22, 5)]
    return np.stack(vals + [np.ones(32)], axis=1).astype(F32).view(U32)


SIZE = {42: 4, 43: 4, 46: 4, 57: 8, 63: 16, 36: 4, 30: 4}


def _elements(fmt: int) -> np.ndarray:
    """Random bytes of 32 elements of `fmt`, [32, size]; no inf/NaN small floats."""
    e = RNG.integers(0, 256, (32, SIZE[fmt]), dtype=np.int64).astype(U8)
    if fmt == 57:
        e = (RNG.integers(-2000, 2000, (32, 4)) / 64).astype(F16).view(U8)
    if fmt == 63:
        e = (RNG.integers(-2000, 2000, (32, 4)) / 64).astype(F32).view(U8)
    if fmt == 30:  # keep every exponent below 31
        w = e.view(U32)[:, 0] & ~np.uint32(1 << 10 | 1 << 21 | 1 << 31)
        e = w.view(U8).reshape(32, 4)
    return np.ascontiguousarray(e)


def _select(vals: np.ndarray, sel, one: int) -> np.ndarray:
    out = np.zeros_like(vals)
    for c, s in enumerate(sel):
        out[:, c] = one if s == ONE else (0 if s == ZERO else vals[:, s - X])
    return out


LOADS = [  # (kernel, format, dst_sel, elements in range)
    ("tload_42", 42, (X, Y, Z, W), 32), ("tload_43", 43, (X, Y, Z, W), 32), ("tload_46", 46, (X, Y, Z, W), 32),
    ("tload_57", 57, (X, Y, Z, W), 32), ("tload_63", 63, (X, Y, Z, W), 32), ("tload_36", 36, (X, Y, Z, W), 32),
    ("tload_30", 30, (X, Y, Z, W), 32), ("load_format", 42, (Z, X, ONE, ZERO), 32),
    ("load_format", 57, (W, Z, Y, X), 20), ("load_format", 63, (X, Y, Z, W), 13), ("load_format", 30, (X, Y, Z, W), 32),
]


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("kernel, fmt, sel, in_range", LOADS)
def test_format_load(kernel, fmt, sel, in_range, queue):
    """tbuffer loads take the instruction's format, buffer_load_format the V#'s; DST_SEL swizzles; an element past
    NUM_RECORDS (the last in range cut one byte short) reads 0."""
    elements = _elements(fmt)
    size = SIZE[fmt]
    nrec = in_range * size - (1 if in_range < 32 else 0)  # the element at in_range - 1 is cut: all or nothing
    got = run(queue, kernel, [elements, nrec, word3(fmt if kernel == "load_format" else 0, sel), size,
                              np.zeros((32, 4), U32)])[-1]
    want = _select(_decode(fmt, elements), sel, 1 if fmt == 46 else 0x3F800000)
    live = min(in_range, 32) - (1 if in_range < 32 else 0)
    want[live:] = 0
    assert np.array_equal(got, want)


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("kernel, fmt", [("tload_d16_42", 42), ("load_format_d16", 57)])
def test_d16_format_load(kernel, fmt, queue):
    elements = _elements(fmt)
    got = run(queue, kernel, [elements, 32 * SIZE[fmt], word3(fmt if kernel.startswith("load") else 0), SIZE[fmt],
                              np.zeros((32, 4), U16)])[-1]
    want = _decode(fmt, elements).view(F32).astype(F16).view(U16)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_two_component_format_load(queue):
    elements = _elements(36)
    got = run(queue, "load_format_xy", [elements, 128, word3(36, (W, Y, X, Z)), 4, np.zeros((32, 2), U32)])[-1]
    assert np.array_equal(got, _select(_decode(36, elements), (W, Y, X, Z), 0x3F800000)[:, :2])


# ---------------------------------------------------------------------------------------------- format stores


def _encode(fmt: int, vals: np.ndarray) -> np.ndarray:
    """[32, size] bytes a format store writes for [32, 4] f32 values."""
    f = vals.astype(F64)
    with np.errstate(invalid="ignore"):
        if fmt == 42:
            return np.rint(np.nan_to_num(np.clip(f, 0, 1)) * 255).astype(U8)
        if fmt == 43:
            return (np.rint(np.nan_to_num(np.clip(f, -1, 1)) * 127).astype(np.int64) & 0xFF).astype(U8)
        if fmt == 57:
            return np.ascontiguousarray(vals.astype(F16)).view(U8)
        if fmt == 63:
            return np.ascontiguousarray(vals).view(U8)
    assert fmt == 36
    q = np.rint(np.nan_to_num(np.clip(f, 0, 1)) * np.array([1023, 1023, 1023, 3])).astype(np.int64)
    word = (q[:, 0] | q[:, 1] << 10 | q[:, 2] << 20 | q[:, 3] << 30).astype(U32)
    return word.view(U8).reshape(32, 4)


STORES = [("tstore_42", 42), ("tstore_43", 43), ("tstore_57", 57), ("tstore_36", 36), ("store_format", 42),
          ("store_format", 63), ("store_format", 36)]


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("kernel, fmt", STORES)
def test_format_store(kernel, fmt, queue):
    """Values beyond [-1, 1] / [0, 1] clamp, halves round to even, NaN stores 0; elements past NUM_RECORDS (here
    the last 4, the first of them cut one byte short) are not written."""
    vals = (RNG.integers(-96, 160, (32, 4)) / 64).astype(F32)
    vals[0] = [np.nan, 0.5 / 255, 1.5 / 255, -0.5 / 127]  # NaN, round-half-even cases
    size = SIZE[fmt]
    nrec = 28 * size + size - 1
    before = RNG.integers(0, 256, (32, size), dtype=np.int64).astype(U8)
    got = run(queue, kernel, [before.copy(), nrec, word3(fmt if kernel == "store_format" else 0), size, vals])[0]
    want = before.copy()
    want[:28] = _encode(fmt, vals)[:28]
    assert np.array_equal(got, want)


@pytest.mark.skipif(shutil.which("/usr/lib/llvm-19/bin/clang") is None, reason="needs clang-19 and lld-19")
def test_committed_code_object_is_what_the_generator_builds():
    from tools import gen_opencl_corpus
    built = gen_opencl_corpus.build(gen_opencl_corpus.source("buffer"), arch=ARCH, name="buffer")
    assert built == gen_opencl_corpus.output(ARCH, "buffer").read_bytes()
