"""VALU integer adds/subs (carry, clamp), shifts, logic, moves and true16 halves against reference models
written from the RDNA3 ISA pseudo-code (plain Python integers, one lane at a time)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simgpu.testbed import Testbed
from tests.support.vint_harness import M16, M32, M64, SETTINGS, Runner, check, sx


@pytest.fixture(scope="module")
def runner():
    return Runner(Testbed(vram_size=1 << 28))


def u32(v):
    return v & M32


def sat(v, lo, hi):
    return max(lo, min(hi, v))


def lo16(v):
    return v & M16


def hi16(v):
    return (v >> 16) & M16


def put16(d, v, hi=False):
    """The destination dword d with one half replaced (the other half is kept)."""
    d &= M32
    return (d & 0xFFFF) | ((v & M16) << 16) if hi else (d & 0xFFFF0000) | (v & M16)


def one(f):
    """A reference giving one dword and no carry from f(a, b, c, d)."""
    return lambda a, b, c, d, cin, lane: ((u32(f(a, b, c, d)),), None)


# ---------------------------------------------------------------------------------------------- 32-bit add/sub

def _co(v):
    """(D0, carry) of an exact add/sub result: the carry/borrow is set when it leaves [0, 2^32)."""
    return (u32(v),), not 0 <= v <= M32


ADD_SUB = [
    ("v_add_nc_u32 v20, v10, v12", one(lambda a, b, c, d: u32(a) + u32(b))),
    ("v_add_nc_u32_e64 v20, v10, v12 clamp", one(lambda a, b, c, d: sat(u32(a) + u32(b), 0, M32))),
    ("v_sub_nc_u32 v20, v10, v12", one(lambda a, b, c, d: u32(a) - u32(b))),
    ("v_sub_nc_u32_e64 v20, v10, v12 clamp", one(lambda a, b, c, d: sat(u32(a) - u32(b), 0, M32))),
    ("v_subrev_nc_u32 v20, v10, v12", one(lambda a, b, c, d: u32(b) - u32(a))),
    ("v_subrev_nc_u32_e64 v20, v10, v12 clamp", one(lambda a, b, c, d: sat(u32(b) - u32(a), 0, M32))),
    ("v_add_nc_i32 v20, v10, v12", one(lambda a, b, c, d: sx(a, 32) + sx(b, 32))),
    ("v_add_nc_i32 v20, v10, v12 clamp", one(lambda a, b, c, d: sat(sx(a, 32) + sx(b, 32), -2**31, 2**31 - 1))),
    ("v_sub_nc_i32 v20, v10, v12", one(lambda a, b, c, d: sx(a, 32) - sx(b, 32))),
    ("v_sub_nc_i32 v20, v10, v12 clamp", one(lambda a, b, c, d: sat(sx(a, 32) - sx(b, 32), -2**31, 2**31 - 1))),
    ("v_add3_u32 v20, v10, v12, v14", one(lambda a, b, c, d: a + b + c)),
    ("v_xad_u32 v20, v10, v12, v14", one(lambda a, b, c, d: (u32(a) ^ u32(b)) + u32(c))),
    ("v_add_nc_u32 v20, -1, v12", one(lambda a, b, c, d: b + M32)),
    ("v_add_nc_u32 v20, 0x12345678, v12", one(lambda a, b, c, d: b + 0x12345678)),
]

CARRY = [
    ("v_add_co_u32 v20, vcc_lo, v10, v12", lambda a, b, c, d, cin, lane: _co(u32(a) + u32(b))),
    ("v_add_co_u32 v20, vcc_lo, v10, v12 clamp",
     lambda a, b, c, d, cin, lane: ((sat(u32(a) + u32(b), 0, M32),), u32(a) + u32(b) > M32)),
    ("v_sub_co_u32 v20, vcc_lo, v10, v12", lambda a, b, c, d, cin, lane: _co(u32(a) - u32(b))),
    ("v_subrev_co_u32 v20, vcc_lo, v10, v12", lambda a, b, c, d, cin, lane: _co(u32(b) - u32(a))),
    ("v_add_co_ci_u32 v20, vcc_lo, v10, v12, vcc_lo", lambda a, b, c, d, cin, lane: _co(u32(a) + u32(b) + cin)),
    ("v_sub_co_ci_u32 v20, vcc_lo, v10, v12, vcc_lo", lambda a, b, c, d, cin, lane: _co(u32(a) - u32(b) - cin)),
    ("v_subrev_co_ci_u32 v20, vcc_lo, v10, v12, vcc_lo",
     lambda a, b, c, d, cin, lane: _co(u32(b) - u32(a) - cin)),
    ("v_add_co_ci_u32_e64 v20, vcc_lo, v10, v12, vcc_lo clamp",
     lambda a, b, c, d, cin, lane: ((sat(u32(a) + u32(b) + cin, 0, M32),), u32(a) + u32(b) + cin > M32)),
    ("v_sub_co_ci_u32_e64 v20, vcc_lo, v10, v12, vcc_lo clamp",
     lambda a, b, c, d, cin, lane: ((sat(u32(a) - u32(b) - cin, 0, M32),), u32(a) - u32(b) - cin < 0)),
]


@pytest.mark.parametrize("inst,ref", ADD_SUB, ids=[x[0] for x in ADD_SUB])
@SETTINGS
@given(data=st.data())
def test_add_sub_32(runner, inst, ref, data):
    check(runner, data, inst, ref)


@pytest.mark.parametrize("inst,ref", CARRY, ids=[x[0] for x in CARRY])
@SETTINGS
@given(data=st.data())
def test_carry(runner, inst, ref, data):
    check(runner, data, inst, ref, carry=True)


# ---------------------------------------------------------------------------------------------- 16-bit


def _h(v, hi):
    return hi16(v) if hi else lo16(v)


def r16(f, sel=(0, 0, 0, 0)):
    """A 16-bit reference: sources are the op_sel-chosen halves, the result goes to one half of d."""
    return lambda a, b, c, d, cin, lane: (
        (put16(d, f(_h(a, sel[0]), _h(b, sel[1]), _h(c, sel[2])), sel[3]),), None)


OPS16 = [
    ("v_add_nc_u16 v20, v10, v12", r16(lambda a, b, c: a + b)),
    ("v_add_nc_u16 v20, v10, v12 op_sel:[1,0,1] clamp", r16(lambda a, b, c: min(a + b, M16), (1, 0, 0, 1))),
    ("v_sub_nc_u16 v20, v10, v12 op_sel:[0,1,0]", r16(lambda a, b, c: a - b, (0, 1, 0, 0))),
    ("v_sub_nc_u16 v20, v10, v12 clamp", r16(lambda a, b, c: max(a - b, 0))),
    ("v_add_nc_i16 v20, v10, v12 clamp", r16(lambda a, b, c: sat(sx(a, 16) + sx(b, 16), -32768, 32767))),
    ("v_add_nc_i16 v20, v10, v12", r16(lambda a, b, c: sx(a, 16) + sx(b, 16))),
    ("v_sub_nc_i16 v20, v10, v12 op_sel:[1,1,1] clamp",
     r16(lambda a, b, c: sat(sx(a, 16) - sx(b, 16), -32768, 32767), (1, 1, 0, 1))),
    ("v_lshlrev_b16 v20, v10, v12", r16(lambda a, b, c: b << (a & 15))),
    ("v_lshrrev_b16 v20, v10, v12", r16(lambda a, b, c: b >> (a & 15))),
    ("v_ashrrev_i16 v20, v10, v12", r16(lambda a, b, c: sx(b, 16) >> (a & 15))),
    ("v_and_b16 v20, v10, v12", r16(lambda a, b, c: a & b)),
    ("v_or_b16 v20, v10, v12", r16(lambda a, b, c: a | b)),
    ("v_xor_b16 v20, v10, v12", r16(lambda a, b, c: a ^ b)),
    ("v_not_b16 v20, v10", r16(lambda a, b, c: ~a)),
    ("v_not_b16_e64 v20, v10", r16(lambda a, b, c: ~a)),
    ("v_and_b16 v20, 0x1234, v12", r16(lambda a, b, c: 0x1234 & b)),
    ("v_add_nc_u16 v20, -2, v12", r16(lambda a, b, c: b + 0xFFFE)),
    ("v_cndmask_b16 v20, v10, v12, vcc_lo",
     lambda a, b, c, d, cin, lane: ((put16(d, lo16(b) if cin else lo16(a)),), None)),
]

# gfx11 VOP1/VOP2 address 16-bit halves with bit 7 of the VGPR number: v138 is v10.h, v148 is v20.h.
TRUE16 = [
    ("v_mov_b16 v20.h, v12.h", r16(lambda a, b, c: b, (0, 1, 0, 1))),
    ("v_mov_b16 v20.l, v10.h", r16(lambda a, b, c: a, (1, 0, 0, 0))),
    ("v_mov_b16 v20.h, 0x7b", r16(lambda a, b, c: 0x7B, (0, 0, 0, 1))),
    ("v_not_b16 v148, v138", r16(lambda a, b, c: ~a, (1, 0, 0, 1))),
    ("v_not_b16 v20, v140", r16(lambda a, b, c: ~b, (0, 1, 0, 0))),
]


@pytest.mark.parametrize("inst,ref", OPS16 + TRUE16, ids=[x[0] for x in OPS16 + TRUE16])
@SETTINGS
@given(data=st.data())
def test_16bit(runner, inst, ref, data):
    check(runner, data, inst, ref)


# ---------------------------------------------------------------------------------------------- shifts, logic


SHIFT_LOGIC = [
    ("v_lshlrev_b32 v20, v10, v12", one(lambda a, b, c, d: u32(b) << (a & 31))),
    ("v_lshrrev_b32 v20, v10, v12", one(lambda a, b, c, d: u32(b) >> (a & 31))),
    ("v_ashrrev_i32 v20, v10, v12", one(lambda a, b, c, d: sx(b, 32) >> (a & 31))),
    ("v_lshl_add_u32 v20, v10, v12, v14", one(lambda a, b, c, d: (u32(a) << (b & 31)) + u32(c))),
    ("v_add_lshl_u32 v20, v10, v12, v14", one(lambda a, b, c, d: u32(u32(a) + u32(b)) << (c & 31))),
    ("v_lshl_or_b32 v20, v10, v12, v14", one(lambda a, b, c, d: u32(u32(a) << (b & 31)) | u32(c))),
    ("v_and_b32 v20, v10, v12", one(lambda a, b, c, d: a & b)),
    ("v_or_b32 v20, v10, v12", one(lambda a, b, c, d: a | b)),
    ("v_xor_b32 v20, v10, v12", one(lambda a, b, c, d: a ^ b)),
    ("v_xnor_b32 v20, v10, v12", one(lambda a, b, c, d: ~(a ^ b))),
    ("v_not_b32 v20, v10", one(lambda a, b, c, d: ~a)),
    ("v_and_or_b32 v20, v10, v12, v14", one(lambda a, b, c, d: (a & b) | c)),
    ("v_or3_b32 v20, v10, v12, v14", one(lambda a, b, c, d: a | b | c)),
    ("v_xor3_b32 v20, v10, v12, v14", one(lambda a, b, c, d: a ^ b ^ c)),
    ("v_mov_b32 v20, v12", one(lambda a, b, c, d: b)),
    ("v_cndmask_b32 v20, v10, v12, vcc_lo", lambda a, b, c, d, cin, lane: ((u32(b if cin else a),), None)),
    ("v_cndmask_b32_e64 v20, -v10, |v12|, vcc_lo",
     lambda a, b, c, d, cin, lane: ((u32(b) & 0x7FFFFFFF if cin else u32(a) ^ 0x80000000,), None)),
]


@pytest.mark.parametrize("inst,ref", SHIFT_LOGIC, ids=[x[0] for x in SHIFT_LOGIC])
@SETTINGS
@given(data=st.data())
def test_shift_logic_32(runner, inst, ref, data):
    check(runner, data, inst, ref)


def two(f):
    return lambda a, b, c, d, cin, lane: ((f(a, b) & M32, (f(a, b) & M64) >> 32), None)


SHIFT64 = [
    ("v_lshlrev_b64 v[20:21], v10, v[12:13]", two(lambda a, b: (b << (a & 63)) & M64)),
    ("v_lshrrev_b64 v[20:21], v10, v[12:13]", two(lambda a, b: b >> (a & 63))),
    ("v_ashrrev_i64 v[20:21], v10, v[12:13]", two(lambda a, b: sx(b, 64) >> (a & 63))),
]


@pytest.mark.parametrize("inst,ref", SHIFT64, ids=[x[0] for x in SHIFT64])
@SETTINGS
@given(data=st.data())
def test_shift_64(runner, inst, ref, data):
    check(runner, data, inst, ref, bits=(32, 64, 32), dwords=2)


# 64-bit shifts by a constant run on the two halves of the VGPR pair (valu._run_pair): every amount
# class (0, below 32, 32, above 32, 63, past 63 from a literal, a float constant's bits), full and partial EXEC.
PARTIAL_EXEC = 0x0F0F00FF
SHIFT64_BY_CONSTANT = [(op, k) for op in ("v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64")
                       for k in ("0", "1", "31", "32", "33", "63", "0x47", "-1", "0.5")]
_K = {"0": 0, "1": 1, "31": 31, "32": 32, "33": 33, "63": 63, "0x47": 0x47, "-1": M32, "0.5": 0x3F000000}
_SHIFT64 = {"v_lshlrev_b64": lambda b, s: (b << s) & M64, "v_lshrrev_b64": lambda b, s: b >> s,
            "v_ashrrev_i64": lambda b, s: (sx(b, 64) >> s) & M64}


@pytest.mark.parametrize("op,k", SHIFT64_BY_CONSTANT, ids=[f"{o} {k}" for o, k in SHIFT64_BY_CONSTANT])
@pytest.mark.parametrize("partial", [False, True])
@SETTINGS
@given(data=st.data())
def test_shift_64_by_constant(runner, op, k, partial, data):
    f, s = _SHIFT64[op], _K[k] & 63

    def ref(a, b, c, d, cin, lane):
        if partial and not (PARTIAL_EXEC >> lane) & 1:
            return (d & M32, (d >> 32) & M32), None  # inactive lanes keep the destination
        r = f(b, s)
        return (r & M32, r >> 32), None
    pre = f"s_mov_b32 exec_lo, {PARTIAL_EXEC:#x}" if partial else ""
    check(runner, data, f"{op} v[20:21], {k}, v[12:13]", ref, bits=(32, 64, 32), dwords=2, pre=pre)


# Carry-out to null: the sum is written, VCC (the carry-in) is left as it was.
CARRY_TO_NULL = [
    ("v_add_co_u32 v20, null, v10, v12", lambda a, b, cin: u32(a) + u32(b)),
    ("v_sub_co_u32 v20, null, v10, v12", lambda a, b, cin: u32(a) - u32(b)),
    ("v_add_co_ci_u32_e64 v20, null, v10, v12, vcc_lo", lambda a, b, cin: u32(a) + u32(b) + cin),
    ("v_sub_co_ci_u32_e64 v20, null, v10, v12, vcc_lo", lambda a, b, cin: u32(a) - u32(b) - cin),
    ("v_subrev_co_ci_u32_e64 v20, null, v10, v12, vcc_lo", lambda a, b, cin: u32(b) - u32(a) - cin),
]


@pytest.mark.parametrize("inst,f", CARRY_TO_NULL, ids=[x[0] for x in CARRY_TO_NULL])
@SETTINGS
@given(data=st.data())
def test_carry_to_null(runner, inst, f, data):
    check(runner, data, inst, lambda a, b, c, d, cin, lane: ((u32(f(a, b, cin)),), cin), carry=True)


@pytest.mark.parametrize("inst,ref", CARRY + [(t, lambda a, b, c, d, cin, lane, f=f: ((u32(f(a, b, cin)),), cin))
                                              for t, f in CARRY_TO_NULL], ids=[x[0] for x in CARRY + CARRY_TO_NULL])
@SETTINGS
@given(data=st.data())
def test_carry_in_one_wave(runner, inst, ref, data):
    """One wave reads and writes its lane masks as ints (valu._lane_mask_in, _write_mask)."""
    check(runner, data, inst, ref, carry=True, n=32, block=32)


# 16-bit ops in the VALU fast path (valu._fast_plan: no op_sel or modifiers) under partial EXEC and as
# one wave: inactive lanes keep the whole destination, active ones only the other half.
FAST16 = [
    ("v_add_nc_u16 v20, v10, v12", r16(lambda a, b, c: a + b)),
    ("v_mov_b16 v20.h, v12.h", r16(lambda a, b, c: b, (0, 1, 0, 1))),
    ("v_add_nc_u16 v20, -2, v12", r16(lambda a, b, c: b - 2)),
    ("v_add_nc_u16 v20, 0x1234, v12", r16(lambda a, b, c: b + 0x1234)),
]


@pytest.mark.parametrize("inst,ref", FAST16, ids=[x[0] for x in FAST16])
@pytest.mark.parametrize("one_wave", [False, True])
@SETTINGS
@given(data=st.data())
def test_16bit_fast_path_partial_exec(runner, inst, ref, one_wave, data):
    def masked(a, b, c, d, cin, lane):
        if not (PARTIAL_EXEC >> lane) & 1:
            return (d & M32,), None
        return ref(a, b, c, d, cin, lane)
    kw = {"n": 32, "block": 32} if one_wave else {}
    check(runner, data, inst, masked, pre=f"s_mov_b32 exec_lo, {PARTIAL_EXEC:#x}", **kw)
