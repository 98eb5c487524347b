"""VALU bitfield, byte-permute, counting, min/max/median and packing instructions against reference
models written from the RDNA3 ISA pseudo-code (plain Python integers, one lane at a time)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simgpu.testbed import Testbed
from tests.support.vint_harness import M16, M32, SETTINGS, Runner, check, sx


@pytest.fixture(scope="module")
def runner():
    return Runner(Testbed(vram_size=1 << 28))


def one(f):
    return lambda a, b, c, d, cin, lane: ((f(a & M32, b & M32, c & M32) & M32,), None)


def first_one_from_msb(x):
    for i in range(32):
        if (x >> (31 - i)) & 1:
            return i
    return -1


def first_one_from_lsb(x):
    for i in range(32):
        if (x >> i) & 1:
            return i
    return -1


def cls(x):
    s = x >> 31
    for i in range(1, 32):
        if ((x >> (31 - i)) & 1) != s:
            return i
    return -1


def bfe_i32(a, off, width):
    off, width = off & 31, width & 31
    tmp = (sx(a, 32) >> off) & ((1 << width) - 1)
    return sx(tmp, width) if width else 0


def perm(s0, s1, sel):
    data = (s0 << 32) | s1
    out = 0
    for k in range(4):
        x = (sel >> (8 * k)) & 0xFF
        if x >= 13:
            byte = 0xFF
        elif x == 12:
            byte = 0
        elif x >= 8:
            byte = 0xFF if (data >> (8 * (2 * (x - 8) + 1) + 7)) & 1 else 0
        else:
            byte = (data >> (8 * x)) & 0xFF
        out |= byte << (8 * k)
    return out


def mbcnt(a, b, lane, hi):
    mask = (1 << lane) - 1  # wave32: ThreadMask[63:32] is 0
    part = (mask >> 32) if hi else (mask & M32)
    return bin(a & part).count("1") + b


BITS = [
    ("v_bfrev_b32 v20, v10", one(lambda a, b, c: int(f"{a:032b}"[::-1], 2))),
    ("v_clz_i32_u32 v20, v10", one(lambda a, b, c: first_one_from_msb(a))),
    ("v_ctz_i32_b32 v20, v10", one(lambda a, b, c: first_one_from_lsb(a))),
    ("v_cls_i32 v20, v10", one(lambda a, b, c: cls(a))),
    ("v_clz_i32_u32_e64 v20, v10", one(lambda a, b, c: first_one_from_msb(a))),
    ("v_bcnt_u32_b32 v20, v10, v12", one(lambda a, b, c: bin(a).count("1") + b)),
    ("v_bfe_u32 v20, v10, v12, v14", one(lambda a, b, c: (a >> (b & 31)) & ((1 << (c & 31)) - 1))),
    ("v_bfe_i32 v20, v10, v12, v14", one(lambda a, b, c: bfe_i32(a, b, c))),
    ("v_bfe_i32 v20, v10, 28, 5", one(lambda a, b, c: bfe_i32(a, 28, 5))),
    ("v_bfi_b32 v20, v10, v12, v14", one(lambda a, b, c: (a & b) | (~a & c))),
    ("v_bfm_b32 v20, v10, v12", one(lambda a, b, c: ((1 << (a & 31)) - 1) << (b & 31))),
    ("v_alignbit_b32 v20, v10, v12, v14", one(lambda a, b, c: ((a << 32) | b) >> (c & 31))),
    ("v_alignbyte_b32 v20, v10, v12, v14", one(lambda a, b, c: ((a << 32) | b) >> (8 * (c & 3)))),
    ("v_perm_b32 v20, v10, v12, v14", one(lambda a, b, c: perm(a, b, c))),
    ("v_perm_b32 v20, v10, v12, 0x0c0d0b08", one(lambda a, b, c: perm(a, b, 0x0C0D0B08))),
    ("v_perm_b32 v20, v10, v12, 0x0a090706", one(lambda a, b, c: perm(a, b, 0x0A090706))),
    ("v_mbcnt_lo_u32_b32 v20, v10, v12",
     lambda a, b, c, d, cin, lane: ((mbcnt(a & M32, b & M32, lane, False) & M32,), None)),
    ("v_mbcnt_hi_u32_b32 v20, v10, v12",
     lambda a, b, c, d, cin, lane: ((mbcnt(a & M32, b & M32, lane, True) & M32,), None)),
]


@pytest.mark.parametrize("inst,ref", BITS, ids=[x[0] for x in BITS])
@SETTINGS
@given(data=st.data())
def test_bits(runner, inst, ref, data):
    check(runner, data, inst, ref)


def test_perm_selector_bytes(runner):
    """Every selector byte value 0..255 in every position, on fixed data with mixed sign bits."""
    import numpy as np
    n = 512
    sel = np.arange(n, dtype=np.uint64) % 256
    sel = sel | (((sel + 13) % 256) << 8) | (((sel * 7) % 256) << 16) | (((sel * 31 + 5) % 256) << 24)
    a = np.full(n, 0x80FF7F01, np.uint64)
    b = np.full(n, 0x01807FF0, np.uint64)
    out, _ = runner.run("v_perm_b32 v20, v10, v12, v14", a, b, sel)
    assert [int(x) for x in out[:, 0]] == [perm(0x80FF7F01, 0x01807FF0, int(s)) for s in sel]


# ---------------------------------------------------------------------------------------------- min/max


def med3(a, b, c):
    return sorted([a, b, c])[1]


def conv(t):
    bits = int(t[1:])
    return (lambda x: sx(x, bits)) if t[0] == "i" else (lambda x: x & ((1 << bits) - 1))


def minmax_cases():
    cases = []
    for t in ("i32", "u32", "i16", "u16"):
        f = conv(t)
        bits = int(t[1:])
        for name, g in (("min", lambda a, b, c: min(a, b)), ("max", lambda a, b, c: max(a, b)),
                        ("min3", lambda a, b, c: min(a, b, c)), ("max3", lambda a, b, c: max(a, b, c)),
                        ("med3", med3), ("maxmin", lambda a, b, c: min(max(a, b), c)),
                        ("minmax", lambda a, b, c: max(min(a, b), c))):
            if name in ("maxmin", "minmax") and bits == 16:
                continue
            srcs = "v10, v12" if name in ("min", "max") else "v10, v12, v14"
            inst = f"v_{name}_{t} v20, {srcs}"

            def ref(a, b, c, d, cin, lane, g=g, f=f, bits=bits):
                r = g(f(a), f(b), f(c)) & ((1 << bits) - 1)
                return (((d & 0xFFFF0000) | r) if bits == 16 else r,), None
            cases.append((inst, ref))
    return cases


MINMAX = minmax_cases()


@pytest.mark.parametrize("inst,ref", MINMAX, ids=[x[0] for x in MINMAX])
@SETTINGS
@given(data=st.data())
def test_minmax(runner, inst, ref, data):
    check(runner, data, inst, ref)


# ---------------------------------------------------------------------------------------------- packing


def sat(v, lo, hi):
    return max(lo, min(hi, v))


PACK = [
    ("v_cvt_pk_u16_u32 v20, v10, v12", one(lambda a, b, c: sat(a, 0, M16) | (sat(b, 0, M16) << 16))),
    ("v_cvt_pk_i16_i32 v20, v10, v12",
     one(lambda a, b, c: (sat(sx(a, 32), -32768, 32767) & M16) | ((sat(sx(b, 32), -32768, 32767) & M16) << 16))),
    ("v_sat_pk_u8_i16 v20, v10", lambda a, b, c, d, ci, ln: (
        ((d & 0xFFFF0000) | sat(sx(a, 16), 0, 255) | (sat(sx(a >> 16, 16), 0, 255) << 8),), None)),
    ("v_pack_b32_f16 v20, v10, v12", one(lambda a, b, c: (a & M16) | ((b & M16) << 16))),
    ("v_pack_b32_f16 v20, -v10, |v12| op_sel:[1,0]",
     one(lambda a, b, c: ((a >> 16) ^ 0x8000) | ((b & 0x7FFF) << 16))),
    ("v_cvt_u32_u16 v20, v10", one(lambda a, b, c: a & M16)),
    ("v_cvt_i32_i16 v20, v10", one(lambda a, b, c: sx(a, 16))),
    ("v_cvt_i32_i16 v20, v140", one(lambda a, b, c: sx(b >> 16, 16))),  # v140 = v12.h (true16 e32)
]


@pytest.mark.parametrize("inst,ref", PACK, ids=[x[0] for x in PACK])
@SETTINGS
@given(data=st.data())
def test_pack(runner, inst, ref, data):
    check(runner, data, inst, ref)
