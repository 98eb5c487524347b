"""gfx942 (CDNA3, family gfx9) semantics, each difference from gfx1100 with a test (simgpu/shader/*/gfx9.py,
vector/sdwa.py, shader/renamed.py; docs/shader.md, "Architectures"): hand-assembled gfx942 kernels on a gfx942
testbed, their expected values from the CDNA3 ISA reference's definitions written out in numpy."""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.fault import HardwareFault
from simgpu.isa.codec import assemble, decode
from simgpu.isa.inst import families
from simgpu.shader import semantics
from simgpu.shader.jit import region
from simgpu.testbed import Testbed
from tests.support import tiers

ARCH = "gfx942"
F16, F32, F64, U32, U64 = np.float16, np.float32, np.float64, np.uint32, np.uint64
RNG = np.random.default_rng(9)

# The first two 64-bit arguments in s[4:5] and s[6:7]; v1 = the work-item id * 4.
PRO = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32_e32 v1, 2, v0
s_waitcnt lgkmcnt(0)
"""


def run(body: str, inputs: list, block=(64,), tb: Testbed | None = None, grid=(1,), **kw) -> list[np.ndarray]:
    """Run PRO + body + s_endpgm on `grid` wave64 workgroups (one by default) with one buffer per input array (its
    contents after)."""
    tb = tb or Testbed(vram_size=1 << 26, arch=ARCH)
    k = tb.load_asm(PRO + body + "\ns_endpgm", args=2, vgprs=kw.pop("vgprs", 16), **kw)
    vas = [tb.upload(np.ascontiguousarray(a)) for a in inputs]
    tb.launch(k, vas + [0] * (2 - len(vas)), grid, block)
    return [tb.download(va, a.dtype, a.size).reshape(a.shape) for va, a in zip(vas, inputs, strict=True)]


def lanes_u32(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**32, 64, dtype=np.uint64).astype(U32)


# ---------------------------------------------------------------------------------------------- scalar


def test_m0_is_operand_code_124():
    """gfx9's M0 is code 124 (gfx11's null): s_mov_b32 m0 keeps the value, a VALU reads it back."""
    (got,) = run("s_mov_b32 m0, 0x1234\nv_mov_b32_e32 v2, m0\nglobal_store_dword v1, v2, s[4:5]",
                 [np.zeros(64, U32)])
    assert (got == 0x1234).all()


def test_smem_offsets_immediate_sgpr_and_both():
    """IMM: the 21-bit byte offset; IMM = 0: the SGPR the offset field names; SOE: + SGPR[SOFFSET]."""
    data = np.arange(64, dtype=U32) * 3 + 1
    body = """
    s_mov_b32 s9, 8
    s_load_dword s10, s[4:5], 0x4
    s_load_dword s11, s[4:5], s9
    s_load_dword s12, s[4:5], s9 offset:0x10
    s_waitcnt lgkmcnt(0)
    v_mov_b32_e32 v2, s10
    v_mov_b32_e32 v3, s11
    v_mov_b32_e32 v4, s12
    v_mul_u32_u24_e32 v5, 12, v0
    global_store_dwordx3 v5, v[2:4], s[6:7]
    """
    _, got = run(body, [data, np.zeros((64, 3), U32)])
    assert (got == [data[1], data[2], data[6]]).all()


def test_s_getreg_of_a_register_gfx9_numbers_otherwise_is_refused():
    with pytest.raises(HardwareFault) as e:
        run("s_getreg_b32 s8, hwreg(HW_REG_HW_ID)", [np.zeros(64, U32)])
    assert e.value.kind == "illegal_instruction" and "hardware register 4 is not modelled" in str(e.value)
    (got,) = run("s_getreg_b32 s8, hwreg(HW_REG_MODE)\nv_mov_b32_e32 v2, s8\nglobal_store_dword v1, v2, s[4:5]",
                 [np.zeros(64, U32)])
    assert (got == 0x3C0).all()  # MODE as the descriptor sets it: f16/f64 denormals, DX10_CLAMP, IEEE


def test_s_memtime_reads_the_cycle_counter():
    body = """
    s_memtime s[8:9]
    s_nop 0
    s_memtime s[10:11]
    s_waitcnt lgkmcnt(0)
    v_mov_b32_e32 v2, s8
    v_mov_b32_e32 v3, s10
    global_store_dwordx2 v4, v[2:3], s[4:5]
    """
    (got,) = run("v_mov_b32_e32 v4, 0\n" + body, [np.zeros(2, U32)], block=(64,))
    assert got[1] - got[0] == 2  # one cycle per wave-instruction: s_nop and the first s_memtime's successor


# ---------------------------------------------------------------------------------------------- vector


def test_v_cmpx_writes_vcc_or_its_sdst_as_well_as_exec():
    body = """
    v_cmpx_gt_u32_e32 vcc, 40, v0
    s_mov_b64 s[8:9], exec
    s_mov_b64 exec, -1
    v_cmpx_lt_u32_e64 s[10:11], v0, 10
    s_mov_b64 exec, -1
    v_mov_b32_e32 v2, s8
    v_mov_b32_e32 v3, s9
    v_mov_b32_e32 v4, vcc_lo
    v_mov_b32_e32 v5, vcc_hi
    v_mov_b32_e32 v6, s10
    v_mov_b32_e32 v7, s11
    v_mov_b32_e32 v8, 0
    global_store_dwordx2 v8, v[2:3], s[4:5]
    global_store_dwordx4 v8, v[4:7], s[4:5] offset:8
    """
    (got,) = run(body, [np.zeros(6, U32)])
    m40, m10 = (1 << 40) - 1, (1 << 10) - 1
    assert got.tolist() == [m40 & 0xFFFFFFFF, m40 >> 32, m40 & 0xFFFFFFFF, m40 >> 32, m10, 0]


def test_16_bit_results_zero_the_high_half_where_llvm_says_gfx9_does():
    """GCNSubtarget::zeroesHigh16BitsOfDest: on gfx9 these 16-bit results are written zero-extended (gfx11 keeps the
    high half)."""
    x = (RNG.standard_normal(64) * 4).astype(F16)
    body = """
    global_load_ushort v2, v1, s[4:5]
    s_waitcnt vmcnt(0)
    v_mov_b32_e32 v3, -1
    v_add_f16_e32 v3, v2, v2
    v_mov_b32_e32 v4, -1
    v_lshlrev_b16_e32 v4, 1, v2
    v_mov_b32_e32 v5, 0xffff0000
    v_cvt_f16_f32_e32 v5, 1.0
    v_mul_u32_u24_e32 v6, 12, v0
    global_store_dwordx3 v6, v[3:5], s[6:7]
    """
    xs = x.view(np.uint16).astype(U32)
    _, got = run(body, [xs, np.zeros((64, 3), U32)])
    assert np.array_equal(got[:, 0], (x + x).view(np.uint16).astype(U32))
    assert np.array_equal(got[:, 1], (xs << U32(1)) & U32(0xFFFF))
    assert (got[:, 2] == 0x3C00).all()


def _sel(v: np.ndarray, sel: int, sext: bool = False) -> np.ndarray:
    shift, width = {0: (0, 8), 1: (8, 8), 2: (16, 8), 3: (24, 8), 4: (0, 16), 5: (16, 16), 6: (0, 32)}[sel]
    x = (v.astype(np.int64) >> shift) & ((1 << width) - 1)
    if sext and width < 32:
        x = np.where(x >> (width - 1), x - (1 << width), x)
    return x & 0xFFFFFFFF


def test_sdwa_sources_and_destinations():
    a, b, old = lanes_u32(1), lanes_u32(2), lanes_u32(3)
    body = """
    global_load_dword v2, v1, s[4:5]
    global_load_dword v3, v1, s[4:5] offset:256
    global_load_dword v4, v1, s[4:5] offset:512
    s_waitcnt vmcnt(0)
    v_mov_b32_e32 v5, v4
    v_mov_b32_e32 v6, v4
    v_mov_b32_e32 v7, v4
    v_add_u32_sdwa v5, v2, v3 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_1 src1_sel:WORD_0
    v_sub_u32_sdwa v6, v2, v3 dst_sel:BYTE_2 dst_unused:UNUSED_SEXT src0_sel:BYTE_3 src1_sel:BYTE_0
    v_mov_b32_sdwa v7, sext(v2) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
    v_cmp_lt_u32_sdwa s[8:9], v2, v3 src0_sel:BYTE_0 src1_sel:BYTE_0
    v_mov_b32_e32 v8, s8
    v_mov_b32_e32 v9, s9
    global_store_dwordx3 v10, v[5:7], s[6:7]
    v_mov_b32_e32 v10, 0
    global_store_dwordx2 v10, v[8:9], s[6:7] offset:768
    """
    out = np.zeros(64 * 3 + 2, U32)
    _, got = run("v_mul_u32_u24_e32 v10, 12, v0\n" + body, [np.concatenate([a, b, old]), out])
    add = ((_sel(a, 1) + _sel(b, 4)) & 0xFFFF) << 16 | (old.astype(np.int64) & 0xFFFF)
    sub = (_sel(a, 3) - _sel(b, 0)) & 0xFF
    sub = (np.where(sub & 0x80, sub - 0x100, sub) << 16) & 0xFFFFFFFF  # BYTE_2, sign bits above, zeros below
    mov = _sel(a, 5, sext=True)
    assert np.array_equal(got[:192].reshape(64, 3), np.stack([add, sub, mov], 1).astype(U32))
    mask = sum(1 << i for i in range(64) if (a[i] & 0xFF) < (b[i] & 0xFF))
    assert got[192:].tolist() == [mask & 0xFFFFFFFF, mask >> 32]


@pytest.mark.parametrize(("ctrl", "source"), [
    ("wave_shr:1", lambda i: i - 1 if i else None),
    ("wave_shl:1", lambda i: i + 1 if i < 63 else None),
    ("wave_ror:1", lambda i: (i - 1) % 64),
    ("wave_rol:1", lambda i: (i + 1) % 64),
    ("row_bcast:15", lambda i: (i // 16 - 1) * 16 + 15 if i >= 16 else None),
    ("row_bcast:31", lambda i: 31 if i >= 32 else None),
    ("row_shr:3", lambda i: i - 3 if i % 16 >= 3 else None),
    # gfx9 shares these with gfx11 (they sit among the gfx9-only codes 0x130-0x143, and once fell to "no source")
    ("row_mirror", lambda i: i // 16 * 16 + 15 - i % 16),
    ("row_half_mirror", lambda i: i // 8 * 8 + 7 - i % 8),
])
def test_gfx9_dpp_controls(ctrl, source):
    """bound_ctrl:0 (LLVM's spelling of BOUND_CTRL = 1): a lane without a source reads 0 and is written."""
    v = lanes_u32(4)
    body = f"""
    global_load_dword v2, v1, s[4:5]
    v_mov_b32_e32 v3, 77
    s_waitcnt vmcnt(0)
    v_mov_b32_dpp v3, v2 {ctrl} row_mask:0xf bank_mask:0xf bound_ctrl:0
    global_store_dword v1, v3, s[4:5]
    """
    (got,) = run(body, [v.copy()])
    want = [v[source(i)] if source(i) is not None else 0 for i in range(64)]
    assert got.tolist() == want


def test_dpp_row_mask_keeps_rows_it_disables():
    v = lanes_u32(5)
    body = """
    global_load_dword v2, v1, s[4:5]
    v_mov_b32_e32 v3, 77
    s_waitcnt vmcnt(0)
    v_add_u32_dpp v3, v2, v2 row_bcast:15 row_mask:0xa bank_mask:0xf
    global_store_dword v1, v3, s[4:5]
    """
    (got,) = run(body, [v.copy()])
    bcast = [int(v[(i // 16 - 1) * 16 + 15]) for i in range(64)]
    want = [(bcast[i] + int(v[i])) & 0xFFFFFFFF if (i // 16) in (1, 3) else 77 for i in range(64)]
    assert got.tolist() == want


def test_64_bit_dpp_row_newbcast():
    v = RNG.integers(0, 2**63, 64, dtype=np.uint64)
    body = """
    v_lshlrev_b32_e32 v6, 3, v0
    global_load_dwordx2 v[2:3], v6, s[4:5]
    s_waitcnt vmcnt(0)
    v_mov_b64_dpp v[4:5], v[2:3] row_newbcast:5 row_mask:0xf bank_mask:0xf
    global_store_dwordx2 v6, v[4:5], s[4:5]
    """
    (got,) = run(body, [v.copy()])
    assert got.tolist() == [v[(i // 16) * 16 + 5] for i in range(64)]


def test_new_64_bit_ops():
    a = RNG.integers(0, 2**64, 64, dtype=np.uint64)
    c = RNG.integers(0, 2**64, 64, dtype=np.uint64)
    body = """
    v_lshlrev_b32_e32 v6, 3, v0
    global_load_dwordx2 v[2:3], v6, s[4:5]
    global_load_dwordx2 v[4:5], v6, s[4:5] offset:512
    s_waitcnt vmcnt(0)
    v_lshl_add_u64 v[8:9], v[2:3], 3, v[4:5]
    v_mov_b64 v[10:11], v[8:9]
    global_store_dwordx2 v6, v[10:11], s[6:7]
    """
    _, got = run(body, [np.concatenate([a, c]), np.zeros(64, U64)])
    assert np.array_equal(got, (a << U64(3)) + c)


def test_v_fmac_f64_is_one_rounding():
    a, b, c = (RNG.standard_normal(64) for _ in range(3))
    body = """
    v_lshlrev_b32_e32 v6, 3, v0
    global_load_dwordx2 v[2:3], v6, s[4:5]
    global_load_dwordx2 v[4:5], v6, s[4:5] offset:512
    global_load_dwordx2 v[8:9], v6, s[4:5] offset:1024
    s_waitcnt vmcnt(0)
    v_fmac_f64_e32 v[8:9], v[2:3], v[4:5]
    global_store_dwordx2 v6, v[8:9], s[6:7]
    """
    _, got = run(body, [np.concatenate([a, b, c]), np.zeros(64, F64)])
    from fractions import Fraction
    want = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c, strict=True)]
    assert got.tolist() == want


def test_packed_f32_ops_select_halves():
    x = (RNG.integers(-1000, 1000, (64, 2)) / 8).astype(F32)
    y = (RNG.integers(-1000, 1000, (64, 2)) / 8).astype(F32)
    z = (RNG.integers(-1000, 1000, (64, 2)) / 8).astype(F32)
    body = """
    v_lshlrev_b32_e32 v20, 3, v0
    global_load_dwordx2 v[2:3], v20, s[4:5]
    global_load_dwordx2 v[4:5], v20, s[4:5] offset:512
    global_load_dwordx2 v[6:7], v20, s[4:5] offset:1024
    s_waitcnt vmcnt(0)
    v_pk_add_f32 v[8:9], v[2:3], v[4:5] op_sel:[1,0] op_sel_hi:[0,1]
    v_pk_mul_f32 v[10:11], v[2:3], v[4:5] neg_lo:[1,0] neg_hi:[0,1]
    v_pk_fma_f32 v[12:13], v[2:3], v[4:5], v[6:7]
    v_pk_mov_b32 v[14:15], v[2:3], v[4:5] op_sel:[1,0]
    v_lshlrev_b32_e32 v21, 5, v0
    global_store_dwordx4 v21, v[8:11], s[6:7]
    global_store_dwordx4 v21, v[12:15], s[6:7] offset:16
    """
    _, got = run(body, [np.concatenate([x, y, z]), np.zeros((64, 8), F32)], vgprs=24)
    assert np.array_equal(got[:, 0:2], np.stack([x[:, 1] + y[:, 0], x[:, 0] + y[:, 1]], 1))
    assert np.array_equal(got[:, 2:4], np.stack([-x[:, 0] * y[:, 0], x[:, 1] * -y[:, 1]], 1))
    assert np.array_equal(got[:, 4:6], x * y + z)  # eighths: the products and sums are exact
    assert np.array_equal(got[:, 6:8], np.stack([x[:, 1], y[:, 0]], 1))


def test_packed_f32_inline_constant_is_the_f32_constant():
    """An inline constant of v_pk_*_f32 is the f32 constant (not the f64 one a 64-bit operand reads): LLVM scales
    both lanes by 0.5 with op_sel_hi:[1,0] (the high lane reading the constant's low half), as Triton's gfx942 code
    does before every exp."""
    x = (RNG.integers(-1000, 1000, (64, 2)) / 8).astype(F32)
    body = """
    v_lshlrev_b32_e32 v20, 3, v0
    global_load_dwordx2 v[2:3], v20, s[4:5]
    s_waitcnt vmcnt(0)
    v_pk_mul_f32 v[8:9], v[2:3], 0.5 op_sel_hi:[1,0]
    v_pk_fma_f32 v[10:11], v[2:3], -4.0, 1.0 op_sel_hi:[1,0,0]
    v_lshlrev_b32_e32 v21, 4, v0
    global_store_dwordx4 v21, v[8:11], s[6:7]
    """
    _, got = run(body, [x, np.zeros((64, 4), F32)], vgprs=24)
    assert np.array_equal(got[:, 0:2], x * F32(0.5))
    assert np.array_equal(got[:, 2:4], x * F32(-4.0) + F32(1.0))


# ---------------------------------------------------------------------------------------------- memory


def test_global_atomics_return_with_sc0():
    data = np.arange(64, dtype=U32) * 10
    body = """
    v_mov_b32_e32 v2, 5
    global_atomic_add v3, v1, v2, s[4:5] sc0
    global_atomic_add v1, v2, s[4:5] offset:256
    global_atomic_cmpswap v4, v1, v[6:7], s[4:5] offset:512 sc0
    s_waitcnt vmcnt(0)
    global_store_dword v1, v3, s[6:7]
    global_store_dword v1, v4, s[6:7] offset:256
    """
    src = np.concatenate([data, data, data])
    body = "v_mov_b32_e32 v6, 99\nv_mul_u32_u24_e32 v7, 10, v0\n" + body  # cmpswap: {new, compare}
    mem, out = run(body, [src, np.zeros(128, U32)])
    assert np.array_equal(out[:64], data) and np.array_equal(mem[:64], data + 5)
    assert np.array_equal(mem[64:128], data + 5)
    assert np.array_equal(out[64:], data) and (mem[128:] == 99).all()


def test_ds_cmpst_compares_with_data0_and_stores_data1():
    body = """
    v_mul_u32_u24_e32 v2, 3, v0
    ds_write_b32 v1, v2
    v_and_b32_e32 v3, 1, v0
    v_mul_u32_u24_e32 v3, v3, v2
    v_mov_b32_e32 v4, 1000
    s_waitcnt lgkmcnt(0)
    ds_cmpst_rtn_b32 v5, v1, v3, v4
    s_waitcnt lgkmcnt(0)
    ds_read_b32 v6, v1
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32_e32 v7, 3, v0
    global_store_dwordx2 v7, v[5:6], s[4:5]
    """
    (got,) = run(body, [np.zeros((64, 2), U32)], lds=256)
    i = np.arange(64)
    assert np.array_equal(got[:, 0], 3 * i)  # the old value
    # odd lanes (v3 = 3i) and lane 0 (v3 = 0 = 3i) compare equal and store DATA1
    assert np.array_equal(got[:, 1], np.where((i % 2 == 1) | (i == 0), 1000, 3 * i))


# A V# in s[8:11] for the buffer of s[4:5]: stride (s[9] bits 16-29) and num_records (s10) from the test; word 3 as
# Triton writes it for gfx942 (0x27000: DST_SEL 0, NUM_FORMAT 7, DATA_FORMAT 4).
def vsharp(stride: int, num_records: int) -> str:
    return f"""
    s_mov_b32 s8, s4
    s_and_b32 s9, s5, 0xffff
    s_or_b32 s9, s9, {stride << 16:#x}
    s_mov_b32 s10, {num_records:#x}
    s_mov_b32 s11, 0x27000
    """


def test_buffer_raw_loads_stores_and_their_range_check():
    """A raw buffer (stride 0) range-checks the byte offset and payload against num_records: loads out of range
    read 0, stores out of range are dropped, dwordx2 checks each dword; soffset and the instruction offset add."""
    src = lanes_u32(1)
    # lane i reads dword i (offen), the last 8 lanes beyond num_records (56 dwords); lane 63's offset is 0x80000000
    body = vsharp(0, 56 * 4) + """
    v_cmp_eq_u32_e32 vcc, 63, v0
    v_bfrev_b32_e32 v3, 1
    v_cndmask_b32_e32 v3, v1, v3, vcc
    buffer_load_dword v2, v3, s[8:11], 0 offen
    s_mov_b32 s12, 4
    buffer_load_dwordx2 v[4:5], v1, s[8:11], s12 offen offset:4
    v_lshlrev_b32_e32 v6, 4, v0
    s_waitcnt vmcnt(0)
    global_store_dword v6, v2, s[6:7]
    global_store_dwordx2 v6, v[4:5], s[6:7] offset:4
    buffer_store_dword v0, v1, s[8:11], 0 offen offset:128
    """
    got_src, got = run(body, [src.copy(), np.zeros((64, 4), U32)])
    i = np.arange(64)
    assert np.array_equal(got[:, 0], np.where(i < 56, src, 0))
    # dwordx2 at byte 4i + 4 (the payload from 4i + 8 on: soffset does not count in the check, offset does)
    lo = np.where(4 * i + 4 + 4 <= 56 * 4, src[np.minimum(i + 2, 63)], 0)
    hi = np.where(4 * i + 8 + 4 <= 56 * 4, src[np.minimum(i + 3, 63)], 0)
    assert np.array_equal(got[:, 1], lo) and np.array_equal(got[:, 2], hi)
    # stores of lane i at dword i + 32: in range below dword 56
    want = src.copy()
    want[32:56] = i[:24]
    assert np.array_equal(got_src, want)


def test_buffer_structured_range_check_is_the_index():
    """A structured buffer (stride != 0) checks the index against num_records (in records), not the offset."""
    src = lanes_u32(2)
    body = vsharp(8, 20) + """
    buffer_load_dword v2, v[0:1], s[8:11], 0 idxen offen
    s_waitcnt vmcnt(0)
    global_store_dword v1, v2, s[6:7]
    """
    # index i, offset 4i (beyond the 8-byte stride from lane 2 on): byte 8i + 4i; out of range from index 20 on
    _, got = run(body, [src.copy(), np.zeros(64, U32)])
    i = np.arange(64)
    assert np.array_equal(got, np.where(i < 20, src[np.minimum(3 * i, 63)], 0))


def test_buffer_forms_not_modelled_are_refused():
    with pytest.raises(HardwareFault) as e:
        run(vsharp(0, 256) + "buffer_load_format_x v2, v1, s[8:11], 0 offen", [np.zeros(64, U32)])
    assert e.value.kind == "illegal_instruction" and "buffer formats" in str(e.value)
    # (the lds bit, a load into LDS, is modelled: tests/simgpu/shader/test_cdna4_lds.py runs it on gfx942 and gfx950)
    with pytest.raises(HardwareFault) as e:
        run(vsharp(0, 256) + "s_bitset1_b32 s9, 31\nbuffer_load_dword v2, v1, s[8:11], 0 offen", [np.zeros(64, U32)])
    assert "swizzled buffer" in str(e.value)


# ---------------------------------------------------------------------------------------------- the engine


# gfx9's own meanings the JIT translates (jit/lower_gfx9.py) beside shared ones whose fields it reads as gfx9's: M0 at
# code 124, the renamed v_add_u32 and the VOP2 carry pair through VCC, v_cmpx writing EXEC and its SGPR destination
# (e64) or VCC (e32), SMEM's offset, a GLOBAL store through its gfx11 view; group g writes its 64 lanes' 16 bytes
NATIVE9 = """
s_mov_b32 m0, s2
v_mov_b32_e32 v2, m0
v_mov_b32_e32 v5, -1
v_add_co_u32_e32 v4, vcc, v0, v5
v_mov_b32_e32 v6, 0
v_addc_co_u32_e32 v3, vcc, 0, v6, vcc
v_mul_u32_u24_e32 v9, 16, v0
s_lshl_b32 s8, s2, 10
v_add_u32_e32 v9, s8, v9
v_cmpx_gt_u32_e64 s[10:11], 48, v0
v_cmpx_gt_u32_e32 vcc, 40, v0
v_mov_b32_e32 v4, s11
v_mov_b32_e32 v5, vcc_hi
global_store_dwordx4 v9, v[2:5], s[4:5]
"""


def _native9_expected(groups: int) -> np.ndarray:
    want = np.zeros((groups, 64, 4), U32)
    lane = np.arange(64)
    want[:, :40, 0] = np.arange(groups)[:, None]  # M0 = the group id
    want[:, :40, 1] = (lane[:40] > 0)  # v0 + 0xffffffff carries but in lane 0
    want[:, :40, 2] = 0xFFFF  # s11: lanes 32-47 of the e64 compare
    want[:, :40, 3] = 0xFF  # VCC_HI: lanes 32-39 of the e32 one
    return want


@pytest.mark.parametrize("tier", ["jit", "jit-lean"])
def test_the_jit_tier_runs_gfx9_code_natively(tier):
    """A gfx942 kernel is compiled and runs as native code, every instruction of it, as one fused batch (with the
    registers kept, each wave from its own initial state; "jit-lean", from one workgroup's template with each
    group's id written into s2), and ends as in the interpreter, with the values gfx9's definitions give."""
    reference, tb = tiers.testbed("interpreter", 1 << 26, arch=ARCH), tiers.testbed(tier, 1 << 26, arch=ARCH)
    for t in (reference, tb):
        (got,) = run(NATIVE9, [np.zeros((4, 64, 4), U32)], grid=(4,), tb=t)
        assert (got == _native9_expected(4)).all()
    tiers.assert_same(reference, tb)
    stats = tb.engine.jit.stats
    assert stats.fused_batches == 1 and stats.callbacks == stats.sync_steps == 0
    assert stats.native_instructions == tb.engine.counters.wave_instructions > 0 and not stats.failures


# Instructions the JIT leaves to the interpreter between native ones: AccVGPR moves (ACCUM_OFFSET), an SDWA form,
# MFMA, and a loop (rounds, not a fused batch) around them
FALLBACK9 = """
v_mov_b32_e32 v2, 0
s_mov_b32 s9, 3
loop:
v_accvgpr_write_b32 a0, v0
v_accvgpr_read_b32 v3, a0
v_add_u32_sdwa v4, v3, v0 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:BYTE_0
v_add_u32_e32 v2, v2, v4
v_mov_b32_e32 v5, 1.0
v_mfma_f32_16x16x4_f32 a[0:3], v5, v5, 0
v_accvgpr_read_b32 v6, a3
v_cvt_u32_f32_e32 v6, v6
v_add_u32_e32 v2, v2, v6
s_sub_u32 s9, s9, 1
s_cmp_lg_u32 s9, 0
s_cbranch_scc1 loop
global_store_dword v1, v2, s[4:5]
"""


def test_an_instruction_the_jit_does_not_cover_falls_back_to_the_interpreter():
    """AccVGPR moves, SDWA and MFMA run in the interpreter (callbacks, parks) in the middle of a gfx942 kernel the JIT
    tier runs natively in rounds; the result is the interpreter's and the definitions' (three times: the lane's
    low byte doubled into the high half, plus the MFMA's 4 products of 1.0)."""
    reference, tb = tiers.testbed("interpreter", 1 << 26, arch=ARCH), tiers.testbed("jit", 1 << 26, arch=ARCH)
    lane = np.arange(64, dtype=np.int64)
    want = (3 * (((2 * lane) << 16) + 4)).astype(U32)
    for t in (reference, tb):
        (got,) = run(FALLBACK9, [np.zeros(64, U32)], tb=t, agprs=4)
        assert (got == want).all()
    tiers.assert_same(reference, tb)
    stats = tb.engine.jit.stats
    assert stats.rounds > 0 and not stats.failures
    # SDWA and MFMA are callbacks; the AccVGPR moves name registers past the ArchVGPRs the code is compiled for and
    # park (sync): the interpreter runs them for the waves there
    assert stats.callbacks == 3 * 2 and stats.sync_steps >= 3 * 3 and stats.native_instructions > 3 * 5


def test_every_gfx9_entry_names_a_gfx942_or_gfx950_instruction():
    semantics.implemented()
    known = set()
    for fam in families():
        known |= {semantics.base_name(m) for arch in (ARCH, "gfx950") for m in fam.mnemonics(arch)}
    own = semantics.implemented("gfx9") - semantics.implemented()
    assert own and own <= known, sorted(own - known)


def test_wave64_launch_state():
    """Packed work-item ids in v0 (10-bit fields), workgroup id x in the SGPR after the user SGPRs, EXEC all 64."""
    body = """
    v_bfe_u32 v2, v0, 10, 10
    v_and_b32_e32 v3, 0x3ff, v0
    v_mov_b32_e32 v4, s2
    v_mov_b32_e32 v5, exec_hi
    v_lshlrev_b32_e32 v6, 4, v3
    v_lshlrev_b32_e32 v7, 8, v2
    v_add_u32_e32 v6, v6, v7
    global_store_dwordx4 v6, v[2:5], s[4:5]
    """
    tb = Testbed(vram_size=1 << 26, arch=ARCH)
    k = tb.load_asm(PRO + body + "\ns_endpgm", args=2, vgprs=16, workitem_id_dims=2)
    va = tb.upload(np.zeros((4, 16, 4), U32))
    tb.launch(k, [va, 0], (1,), (16, 4))
    got = tb.download(va, U32, 256).reshape(4, 16, 4)
    assert np.array_equal(got[..., 0], np.repeat(np.arange(4)[:, None], 16, 1))
    assert np.array_equal(got[..., 1], np.tile(np.arange(16), (4, 1)))
    assert (got[..., 2] == 0).all() and (got[..., 3] == 0xFFFFFFFF).all()


def test_a_load_into_lds_is_a_sync_instruction_for_the_jit():
    """gfx9's global_load_lds_dword and MUBUF loads with the lds bit write LDS, which other waves read: the JIT parks
    waves before them (region.is_sync) and the interpreter runs them for the waves there, never one wave's callback
    in the middle of native code."""
    for arch in (ARCH, "gfx950"):
        inst = decode(assemble("global_load_lds_dword v[2:3], off", arch=arch), arch=arch)
        assert region.is_sync(inst)
    # MUBUF's lds bit: llvm-mc -mcpu=gfx942's encoding of `buffer_load_dword off, s[8:11], 0 lds`
    assert region.is_sync(decode(bytes([0x00, 0x00, 0x51, 0xE0, 0x00, 0x00, 0x02, 0x80]), arch=ARCH))
    assert not region.is_sync(decode(assemble("buffer_load_dword v1, off, s[8:11], 0", arch=ARCH), arch=ARCH))
    assert not region.is_sync(decode(assemble("global_load_dword v4, v[2:3], off", arch=ARCH), arch=ARCH))
