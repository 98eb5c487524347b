"""VALU integer multiplies, multiply-adds and the SAD family against reference models written from the
RDNA3 ISA pseudo-code (plain Python integers, one lane at a time)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simgpu.testbed import Testbed
from tests.support.vint_harness import M16, M32, M64, SETTINGS, Runner, check, sx


@pytest.fixture(scope="module")
def runner():
    return Runner(Testbed(vram_size=1 << 28))


def sat(v, lo, hi):
    return max(lo, min(hi, v))


def one(f):
    return lambda a, b, c, d, cin, lane: ((f(a & M32, b & M32, c & M32) & M32,), None)


def put16(d, v):
    return (d & 0xFFFF0000) | (v & M16)


def u24(x):
    return x & 0xFFFFFF


def i24(x):
    return sx(x, 24)


MUL32 = [
    ("v_mul_lo_u32 v20, v10, v12", one(lambda a, b, c: a * b)),
    ("v_mul_hi_u32 v20, v10, v12", one(lambda a, b, c: (a * b) >> 32)),
    ("v_mul_hi_i32 v20, v10, v12", one(lambda a, b, c: (sx(a, 32) * sx(b, 32)) >> 32)),
    ("v_mul_u32_u24 v20, v10, v12", one(lambda a, b, c: u24(a) * u24(b))),
    ("v_mul_u32_u24_e64 v20, v10, v12 clamp", one(lambda a, b, c: sat(u24(a) * u24(b), 0, M32))),
    ("v_mul_hi_u32_u24 v20, v10, v12", one(lambda a, b, c: (u24(a) * u24(b)) >> 32)),
    ("v_mul_i32_i24 v20, v10, v12", one(lambda a, b, c: i24(a) * i24(b))),
    ("v_mul_i32_i24_e64 v20, v10, v12 clamp", one(lambda a, b, c: sat(i24(a) * i24(b), -2**31, 2**31 - 1))),
    ("v_mul_hi_i32_i24 v20, v10, v12", one(lambda a, b, c: (i24(a) * i24(b)) >> 32)),
    ("v_mad_u32_u24 v20, v10, v12, v14", one(lambda a, b, c: u24(a) * u24(b) + c)),
    ("v_mad_u32_u24 v20, v10, v12, v14 clamp", one(lambda a, b, c: sat(u24(a) * u24(b) + c, 0, M32))),
    ("v_mad_i32_i24 v20, v10, v12, v14", one(lambda a, b, c: i24(a) * i24(b) + sx(c, 32))),
    ("v_mad_i32_i24 v20, v10, v12, v14 clamp",
     one(lambda a, b, c: sat(i24(a) * i24(b) + sx(c, 32), -2**31, 2**31 - 1))),
    ("v_mul_lo_u32 v20, v10, 0x10001", one(lambda a, b, c: a * 0x10001)),
    ("v_mad_u32_u16 v20, v10, v12, v14", one(lambda a, b, c: (a & M16) * (b & M16) + c)),
    ("v_mad_u32_u16 v20, v10, v12, v14 op_sel:[1,1,0,0] clamp",
     one(lambda a, b, c: sat((a >> 16) * (b >> 16) + c, 0, M32))),
    ("v_mad_i32_i16 v20, v10, v12, v14", one(lambda a, b, c: sx(a, 16) * sx(b, 16) + sx(c, 32))),
    ("v_mad_i32_i16 v20, v10, v12, v14 clamp",
     one(lambda a, b, c: sat(sx(a, 16) * sx(b, 16) + sx(c, 32), -2**31, 2**31 - 1))),
]

MUL16 = [
    ("v_mul_lo_u16 v20, v10, v12", lambda a, b, c, d, ci, ln: ((put16(d, (a & M16) * (b & M16)),), None)),
    ("v_mad_u16 v20, v10, v12, v14", lambda a, b, c, d, ci, ln: ((put16(d, (a & M16) * (b & M16) + c),), None)),
    ("v_mad_u16 v20, v10, v12, v14 clamp",
     lambda a, b, c, d, ci, ln: ((put16(d, sat((a & M16) * (b & M16) + (c & M16), 0, M16)),), None)),
    ("v_mad_i16 v20, v10, v12, v14 clamp",
     lambda a, b, c, d, ci, ln: ((put16(d, sat(sx(a, 16) * sx(b, 16) + sx(c, 16), -32768, 32767)),), None)),
    ("v_mad_i16 v20, v10, v12, v14 op_sel:[1,0,1,1]",
     lambda a, b, c, d, ci, ln: (((d & M16) | (((sx(a >> 16, 16) * sx(b, 16) + sx(c >> 16, 16)) & M16) << 16),),
                                 None)),
]


@pytest.mark.parametrize("inst,ref", MUL32 + MUL16, ids=[x[0] for x in MUL32 + MUL16])
@SETTINGS
@given(data=st.data())
def test_mul(runner, inst, ref, data):
    check(runner, data, inst, ref)


def _mad64(signed):
    def ref(a, b, c, d, cin, lane):
        if signed:
            full = sx(a, 32) * sx(b, 32) + sx(c, 64)
        else:
            full = (a & M32) * (b & M32) + (c & M64)
        bits65 = full & ((1 << 65) - 1)  # {D1, D0.u64} = 65-bit result
        return (bits65 & M32, (bits65 >> 32) & M32), bool(bits65 >> 64)
    return ref


@pytest.mark.parametrize("inst,ref", [
    ("v_mad_u64_u32 v[20:21], vcc_lo, v10, v12, v[14:15]", _mad64(False)),
    ("v_mad_i64_i32 v[20:21], vcc_lo, v10, v12, v[14:15]", _mad64(True)),
], ids=["mad_u64_u32", "mad_i64_i32"])
@SETTINGS
@given(data=st.data())
def test_mad_64(runner, inst, ref, data):
    check(runner, data, inst, ref, bits=(32, 32, 64), dwords=2, carry=True)


# ---------------------------------------------------------------------------------------------- SAD


def by(x, i):
    return (x >> (8 * i)) & 0xFF


def sad_u8(a, b):
    return sum(abs(by(a, i) - by(b, i)) for i in range(4))


def msad_u8(a, b):
    return sum(0 if by(b, i) == 0 else abs(by(a, i) - by(b, i)) for i in range(4))


SAD = [
    ("v_sad_u8 v20, v10, v12, v14", one(lambda a, b, c: sad_u8(a, b) + c)),
    ("v_sad_u8 v20, v10, v12, v14 clamp", one(lambda a, b, c: sat(sad_u8(a, b) + c, 0, M32))),
    ("v_sad_hi_u8 v20, v10, v12, v14", one(lambda a, b, c: (sad_u8(a, b) << 16) + c)),
    ("v_sad_hi_u8 v20, v10, v12, v14 clamp", one(lambda a, b, c: sat((sad_u8(a, b) << 16) + c, 0, M32))),
    ("v_sad_u16 v20, v10, v12, v14",
     one(lambda a, b, c: abs((a & M16) - (b & M16)) + abs((a >> 16) - (b >> 16)) + c)),
    ("v_sad_u32 v20, v10, v12, v14", one(lambda a, b, c: abs(a - b) + c)),
    ("v_sad_u32 v20, v10, v12, v14 clamp", one(lambda a, b, c: sat(abs(a - b) + c, 0, M32))),
    ("v_msad_u8 v20, v10, v12, v14", one(lambda a, b, c: msad_u8(a, b) + c)),
    ("v_lerp_u8 v20, v10, v12, v14",
     one(lambda a, b, c: sum(((by(a, i) + by(b, i) + ((c >> (8 * i)) & 1)) >> 1) << (8 * i) for i in range(4)))),
]


@pytest.mark.parametrize("inst,ref", SAD, ids=[x[0] for x in SAD])
@SETTINGS
@given(data=st.data())
def test_sad(runner, inst, ref, data):
    check(runner, data, inst, ref)


def _qsad(masked, clamp=False):
    f = msad_u8 if masked else sad_u8

    def ref(a, b, c, d, cin, lane):
        out = 0
        for i in range(4):
            v = f((a >> (8 * i)) & M32, b & M32) + ((c >> (16 * i)) & M16)
            out |= (sat(v, 0, M16) if clamp else v & M16) << (16 * i)
        return (out & M32, out >> 32), None
    return ref


def _mqsad_u32(a, b, c, d, cin, lane):
    # S2 is the VGPR quad v[20:23] (the initial destination d)
    return tuple(((msad_u8((a >> (8 * i)) & M32, b & M32) + ((d >> (32 * i)) & M32)) & M32) for i in range(4)), None


@pytest.mark.parametrize("inst,ref,dwords", [
    ("v_qsad_pk_u16_u8 v[20:21], v[10:11], v12, v[14:15]", _qsad(False), 2),
    ("v_qsad_pk_u16_u8 v[20:21], v[10:11], v12, v[14:15] clamp", _qsad(False, True), 2),
    ("v_mqsad_pk_u16_u8 v[20:21], v[10:11], v12, v[14:15]", _qsad(True), 2),
    ("v_mqsad_u32_u8 v[20:23], v[10:11], v12, v[20:23]", _mqsad_u32, 4),
], ids=["qsad", "qsad_clamp", "mqsad_pk", "mqsad_u32"])
@SETTINGS
@given(data=st.data())
def test_quad_sad(runner, inst, ref, dwords, data):
    check(runner, data, inst, ref, bits=(64, 32, 64), dwords=dwords)
