"""gfx1201 (RDNA4) semantics, each difference from gfx1100 with a test (simgpu/shader/*/gfx12.py; docs/shader.md,
"Architectures"): hand-assembled gfx1201 kernels on a gfx1201 testbed, and LLVM-compiled ones (llvmlite's LLVM, for
the WMMA intrinsics)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.llvm import compile_ir
from simgpu.cp.launch import pm4_dispatch
from simgpu.cp.queue import Queue
from simgpu.fault import HardwareFault
from simgpu.hw import regs
from simgpu.isa import assemble, decode
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.inst import families
from simgpu.profile.classify import CATEGORIES, classify
from simgpu.shader import semantics
from simgpu.shader.vector.gfx12 import BF8, FP8
from simgpu.testbed import Testbed
from tests import DATA
from tests.support import tiers

ARCH = "gfx1201"
F16, F32, U32 = np.float16, np.float32, np.uint32
QNAN, SNAN = 0x7FC00000, 0x7FA00000  # f32 quiet / signaling NaN bits

# The prologue every kernel below starts with: the first two 64-bit arguments in s[2:3] and s[4:5], and v1 = the
# work-item id * 4 (an index into per-lane arrays).
PRO = """
s_load_b128 s[2:5], s[0:1], 0x0
v_lshlrev_b32_e32 v1, 2, v0
s_wait_kmcnt 0x0
"""


def tb12() -> Testbed:
    return Testbed(vram_size=1 << 26, arch=ARCH)


def run(body: str, inputs: list, grid=(1,), block=(32,), tb: Testbed | None = None, **kw) -> list[np.ndarray]:
    """Run PRO + body + s_endpgm with one buffer per input array (its contents afterwards), args in order."""
    tb = tb or tb12()
    k = tb.load_asm(PRO + body + "\ns_endpgm", args=max(2, len(inputs)), **kw)
    vas = [tb.upload(np.ascontiguousarray(a)) for a in inputs]
    tb.launch(k, vas + [0] * (2 - len(vas)), grid, block)
    return [tb.download(va, a.dtype, a.size).reshape(a.shape) for va, a in zip(vas, inputs, strict=True)]


def f32(*bits) -> np.ndarray:
    return np.array(bits, U32).view(F32)


# ---------------------------------------------------------------------------------------------- launch state


# Each work-item stores TTMP9, TTMP7 and TTMP8 at its place in a [z, y, x, lane of the 64-item group, value] array
IDS = """
    s_and_b32 s7, ttmp7, 0xffff
    s_lshr_b32 s8, ttmp7, 16
    s_mul_i32 s9, s8, 3
    s_add_co_i32 s9, s9, s7
    s_mul_i32 s9, s9, 2
    s_add_co_i32 s9, s9, ttmp9
    s_mul_i32 s9, s9, 0x300
    v_mul_u32_u24_e32 v2, 12, v0
    v_add_nc_u32_e32 v2, s9, v2
    v_mov_b32_e32 v3, ttmp9
    v_mov_b32_e32 v4, ttmp7
    v_mov_b32_e32 v5, ttmp8
    global_store_b96 v2, v[3:5], s[2:3]
    """


def test_workgroup_ids_are_in_ttmp9_and_ttmp7_and_the_wave_id_in_ttmp8():
    """Architected SGPRs: TTMP9 = id x, TTMP7 = id y | id z << 16, TTMP8[29:25] = wave in workgroup."""
    (got,) = run(IDS, [np.zeros((2, 3, 2, 64, 3), U32)], grid=(2, 3, 2), block=(64,))
    for z in range(2):
        for y in range(3):
            for x in range(2):
                assert (got[z, y, x, :, 0] == x).all() and (got[z, y, x, :, 1] == y | z << 16).all()
                assert list(got[z, y, x, :, 2] >> 25) == [0] * 32 + [1] * 32


def test_mode_has_no_ieee_or_dx10_bits_from_the_descriptor():
    """rsrc1 bits 21/23 are WG_RR_EN/DISABLE_PERF on gfx12: MODE keeps only the round and denorm modes of the same
    descriptor that gives a gfx1100 wave DX10_CLAMP and IEEE (bits 8, 9)."""
    body = "s_getreg_b32 s6, hwreg(HW_REG_MODE)\nv_mov_b32_e32 v2, s6\nglobal_store_b32 v1, v2, s[2:3]\ns_endpgm"
    modes = []
    for arch, wait in ((ARCH, "s_wait_kmcnt 0x0"), ("gfx1100", "s_waitcnt lgkmcnt(0)")):
        tb = Testbed(vram_size=1 << 26, arch=arch)
        k = tb.load_asm(PRO.replace("s_wait_kmcnt 0x0", wait) + body, args=2)
        va = tb.upload(np.zeros(32, U32))
        tb.launch(k, [va, 0], (1,), (32,))
        modes.append(int(tb.download(va, U32, 1)[0]))
    assert modes[1] & 0x300 == 0x300 and modes[0] == modes[1] & 0xFF


def test_shader_cycles_hi_and_lo_are_the_64_bit_cycle_counter():
    tb = tb12()
    tb.engine.clock.cycles = (5 << 32) + 7
    (got,) = run("s_getreg_b32 s6, hwreg(HW_REG_SHADER_CYCLES_HI)\ns_getreg_b32 s7, hwreg(HW_REG_SHADER_CYCLES_LO)\n"
                 "v_dual_mov_b32 v2, s6 :: v_dual_mov_b32 v3, s7\nglobal_store_b64 v0, v[2:3], s[2:3]",
                 [np.zeros(2, U32)], block=(1,), tb=tb)
    assert got[0] == 5 and 7 < got[1] < 100


# ---------------------------------------------------------------------------------------------- memory


def test_vglobal_and_vscratch_offsets_are_24_bit_signed():
    data = np.arange(64, dtype=U32)
    body = """
    v_add_nc_u32_e32 v2, 0x10000, v1
    global_load_b32 v3, v2, s[2:3] offset:-0x10000
    s_wait_loadcnt 0x0
    v_add_nc_u32_e32 v3, 1, v3
    global_store_b32 v2, v3, s[2:3] offset:-0xfff0
    scratch_store_b32 off, v3, off offset:0x40
    scratch_load_b32 v4, off, off offset:0x40
    s_wait_loadcnt 0x0
    global_store_b32 v1, v4, s[4:5]
    """
    got, copy = run(body, [data.copy(), np.zeros(32, U32)], scratch=256)
    assert np.array_equal(got[4:36], np.arange(32) + 1) and np.array_equal(copy, np.arange(32) + 1)


def test_smem_offset_is_24_bit_signed_and_sub_dword_loads_extend():
    data = np.array([0x11223344, 0x8899AABB, 7, 8, 9], U32)
    body = """
    s_add_nc_u64 s[6:7], s[2:3], 0x100000
    s_load_b32 s8, s[6:7], -0xffffc
    s_load_u8 s9, s[2:3], 0x7
    s_load_i8 s10, s[2:3], 0x7
    s_load_u16 s11, s[2:3], 0x5
    s_load_i16 s12, s[2:3], 0x6
    s_load_b96 s[12:14], s[2:3], 0x8
    s_load_i16 s15, s[2:3], 0x6
    s_wait_kmcnt 0x0
    v_dual_mov_b32 v2, s8 :: v_dual_mov_b32 v3, s9
    v_dual_mov_b32 v4, s10 :: v_dual_mov_b32 v5, s11
    v_dual_mov_b32 v6, s15 :: v_dual_mov_b32 v7, s12
    v_dual_mov_b32 v8, s13 :: v_dual_mov_b32 v9, s14
    global_store_b128 v0, v[2:5], s[4:5]
    global_store_b128 v0, v[6:9], s[4:5] offset:16
    """
    _, got = run(body, [data, np.zeros(8, U32)], block=(1,))
    assert list(got) == [0x8899AABB, 0x88, 0xFFFFFF88, 0x99AA, 0xFFFF8899, 7, 8, 9]


def test_atomics_return_with_th_atomic_return_and_gfx12s_new_ops():
    mem = np.array([10, 10, 3, 3, QNAN, 0x3F800000, 0x3F800000, 0x3C003C00], U32)
    body = """
    v_mov_b32_e32 v2, 0
    v_mov_b32_e32 v3, 5
    v_mov_b32_e32 v10, 99
    v_mov_b32_e32 v11, 99
    v_cmpx_eq_u32_e32 0, v0
    global_atomic_cond_sub_u32 v10, v2, v3, s[2:3] th:TH_ATOMIC_RETURN
    global_atomic_cond_sub_u32 v2, v3, s[2:3] offset:8
    global_atomic_sub_clamp_u32 v11, v2, v3, s[2:3] offset:12 th:TH_ATOMIC_RETURN
    global_atomic_sub_clamp_u32 v2, v3, s[2:3] offset:4
    v_mov_b32_e32 v4, 2.0
    global_atomic_max_num_f32 v2, v4, s[2:3] offset:16
    global_atomic_min_num_f32 v2, v4, s[2:3] offset:20
    v_mov_b32_e32 v4, 0x7fa00000
    global_atomic_min_num_f32 v2, v4, s[2:3] offset:24
    v_mov_b32_e32 v4, 0x40003c00
    global_atomic_pk_add_f16 v2, v4, s[2:3] offset:28
    global_store_b64 v2, v[10:11], s[4:5]
    """
    got, ret = run(body, [mem, np.zeros(2, U32)])
    # cond_sub: 10 >= 5 -> 5; 3 < 5 -> unchanged. sub_clamp: 3 < 5 -> 0; 10 -> 5. The returns: the old values.
    assert list(got[:4]) == [5, 5, 3, 0] and list(ret) == [10, 3]
    # max_num(NaN, 2) = 2 (2019 maximumNumber); min_num(1, 2) = 1; a signaling NaN loses to the number too
    assert got[4] == 0x40000000 and got[5] == 0x3F800000 and got[6] == 0x3F800000
    assert got[7] == 0x42004000  # (1 + 1, 1 + 2) as packed f16: 2.0 low, 3.0 high


def test_vbuffer_reads_its_rsrc_sgprs_and_a_signed_offset():
    data = np.arange(64, dtype=U32)
    body = """
    s_mov_b32 s8, s2
    s_and_b32 s9, s3, 0xffff
    s_mov_b32 s10, 256
    s_mov_b32 s11, 0x30000000
    v_add_nc_u32_e32 v2, 8, v1
    buffer_load_b32 v3, v2, s[8:11], null offen offset:-4
    s_wait_loadcnt 0x0
    global_store_b32 v1, v3, s[4:5]
    """
    _, got = run(body, [data, np.zeros(32, U32)])
    assert np.array_equal(got, np.arange(32) + 1)


def test_ds_bpermute_indexes_the_whole_wave64():
    """RDNA4: `/ 4 % num_lanes` -- lane 0 of a wave64 reads lane 63 (gfx11 would read lane 31 of its half)."""
    body = """
    v_sub_nc_u32_e32 v2, 63, v0
    v_lshlrev_b32_e32 v2, 2, v2
    ds_bpermute_b32 v3, v2, v0
    s_wait_dscnt 0x0
    global_store_b32 v1, v3, s[2:3]
    """
    (got,) = run(body, [np.zeros(64, U32)], block=(64,), wave32=False)
    assert np.array_equal(got, 63 - np.arange(64))


def test_global_wb_and_inv_are_no_ops_and_barriers_use_signal_and_wait():
    body = """
    v_add_nc_u32_e32 v2, 1, v0
    ds_store_b32 v1, v2
    global_wb scope:SCOPE_SE
    s_wait_dscnt 0x0
    s_barrier_signal_isfirst -1
    s_cselect_b32 s6, 1, 0
    s_barrier_wait 0xffff
    global_inv scope:SCOPE_SE
    v_sub_nc_u32_e32 v3, 63, v0
    v_lshlrev_b32_e32 v3, 2, v3
    ds_load_b32 v4, v3
    s_wait_dscnt 0x0
    global_store_b32 v1, v4, s[2:3]
    v_mov_b32_e32 v5, s6
    global_store_b32 v1, v5, s[4:5]
    """
    got, first = run(body, [np.zeros(64, U32), np.zeros(64, U32)], block=(64,), lds=256)
    assert np.array_equal(got, 64 - np.arange(64))  # every wave saw the other's LDS stores after the barrier
    assert list(first[::32]) == [1, 0]  # only the first wave to signal gets SCC


# ---------------------------------------------------------------------------------------------- scalar ALU


def test_renamed_and_64_bit_salu_ops():
    body = """
    s_mov_b32 s6, 0x7fffffff
    s_add_co_i32 s7, s6, 1
    s_cselect_b32 s8, 1, 0
    s_mov_b64 s[10:11], 0xffffffff
    s_add_nc_u64 s[12:13], s[10:11], 1
    s_mul_u64 s[14:15], s[12:13], 0x10001
    s_sub_nc_u64 s[16:17], 0, 3
    s_add_co_u32 s18, -1, 2
    s_add_co_ci_u32 s19, 0, 0
    v_dual_mov_b32 v2, s7 :: v_dual_mov_b32 v3, s8
    v_dual_mov_b32 v4, s12 :: v_dual_mov_b32 v5, s13
    v_dual_mov_b32 v6, s14 :: v_dual_mov_b32 v7, s15
    v_dual_mov_b32 v8, s16 :: v_dual_mov_b32 v9, s17
    v_dual_mov_b32 v10, s18 :: v_dual_mov_b32 v11, s19
    global_store_b128 v0, v[2:5], s[2:3]
    global_store_b128 v0, v[6:9], s[2:3] offset:16
    global_store_b64 v0, v[10:11], s[2:3] offset:32
    """
    (got,) = run(body, [np.zeros(10, U32)], block=(1,))
    assert list(got) == [0x80000000, 1, 0, 1, 0, 0x10001, 0xFFFFFFFD, 0xFFFFFFFF, 1, 1]


def test_salu_float_ops_round_and_compare_like_the_valu():
    body = """
    s_mov_b32 s6, 0x3f800001
    s_add_f32 s7, s6, 0x33800000
    s_mov_b32 s8, 0x40400000
    s_mul_f32 s8, s8, 0x3eaaaaab
    s_fmac_f32 s6, 2.0, 0.5
    s_cvt_i32_f32 s9, 0xc0200000
    s_cvt_f32_u32 s10, 0xffffffff
    s_cvt_f16_f32 s11, 0x3dcccccd
    s_cmp_lt_f32 0x7fc00000, 1.0
    s_cselect_b32 s12, 1, 0
    s_cmp_nge_f32 0x7fc00000, 1.0
    s_cselect_b32 s13, 1, 0
    s_max_num_f32 s14, 0x7fa00000, 1.0
    s_minimum_f32 s15, 0x7fa00000, 1.0
    s_rndne_f32 s16, 0x40200000
    s_add_f16 s17, 0x3c00, 0x3c00
    v_dual_mov_b32 v2, s7 :: v_dual_mov_b32 v3, s8
    v_dual_mov_b32 v4, s6 :: v_dual_mov_b32 v5, s9
    v_dual_mov_b32 v6, s10 :: v_dual_mov_b32 v7, s11
    v_dual_mov_b32 v8, s12 :: v_dual_mov_b32 v9, s13
    v_dual_mov_b32 v10, s14 :: v_dual_mov_b32 v11, s15
    v_dual_mov_b32 v12, s16 :: v_dual_mov_b32 v13, s17
    global_store_b128 v0, v[2:5], s[2:3]
    global_store_b128 v0, v[6:9], s[2:3] offset:16
    global_store_b128 v0, v[10:13], s[2:3] offset:32
    """
    (got,) = run(body, [np.zeros(12, U32)], block=(1,))
    v = got.view(F32)
    assert got[0] == 0x3F800002  # 1 + ulp + half an ulp: ties to even
    assert v[1] == F32(3.0) * F32(np.array(0x3EAAAAAB, U32).view(F32)) and v[2] == F32(np.array(0x3F800001, U32)
                                                                                        .view(F32)) + 1
    assert got[3] == 0xFFFFFFFE and v[4] == F32(4294967296.0)
    assert got[5] == np.array(0.1, F32).astype(F16).view(np.uint16)  # f16 result zero-extended
    assert list(got[6:8]) == [0, 1]  # NaN < 1 is false; !(NaN >= 1) is true
    assert v[8] == 1.0 and got[9] == QNAN | SNAN  # max_num: the number; minimum: the sNaN quieted
    assert v[10] == 2.0 and got[11] == 0x4000  # rndne(2.5) = 2; f16 1 + 1 = 2


# ---------------------------------------------------------------------------------------------- vector ALU


def test_num_minmax_are_2019_minimum_number_and_minimum_maximum_propagate_nan():
    a = f32(SNAN, QNAN, 0x80000000, 0x3F800000, QNAN, 0x00000000)
    b = f32(0x40000000, 0x40000000, 0x00000000, 0x40000000, SNAN, 0x80000000)
    body = """
    global_load_b32 v2, v1, s[2:3]
    global_load_b32 v3, v1, s[4:5]
    s_wait_loadcnt 0x0
    v_max_num_f32_e32 v4, v2, v3
    v_min_num_f32_e64 v5, v2, v3
    v_maximum_f32 v6, v2, v3
    v_minimum_f32 v7, v2, v3
    v_dual_max_num_f32 v8, v2, v3 :: v_dual_min_num_f32 v9, v2, v3
    v_med3_num_f32 v10, v2, v3, 0x3fc00000
    v_lshlrev_b32_e32 v11, 5, v0
    global_store_b128 v11, v[4:7], s[2:3] offset:64
    global_store_b96 v11, v[8:10], s[2:3] offset:80
    """
    pad = np.zeros(16 + 6 * 8, U32)
    pad[:6] = a.view(U32)
    got, _ = run(body, [pad, np.concatenate([b.view(U32), np.zeros(2, U32)])], block=(6,))
    r = got[16:].reshape(6, 8)
    mx, mn, mxm, mnm, dmx, dmn, med = (r[:, i] for i in range(7))
    assert list(mx[:4]) == [0x40000000, 0x40000000, 0x00000000, 0x40000000]  # NaN (even signaling) loses
    assert mx[4] == QNAN and mn[4] == QNAN  # two NaNs: S0 quieted
    assert mn[2] == 0x80000000 and mx[5] == 0x00000000 and mn[5] == 0x80000000  # -0 < +0
    assert list(mxm[:2]) == [QNAN | SNAN, QNAN] and mnm[4] == QNAN | SNAN and mnm[3] == 0x3F800000
    assert np.array_equal(dmx, mx) and np.array_equal(dmn, mn)  # VOPD halves run the same definitions
    assert med[3] == 0x3FC00000 and med[0] == 0x3FC00000  # med3(1, 2, 1.5); NaN: min3_num(sNaN, 2, 1.5) = 1.5


def test_mad_co_u64_u32_is_mad_u64_u32():
    body = """
    v_mov_b32_e32 v2, -1
    v_mov_b32_e32 v3, -1
    v_mov_b32_e32 v4, 0
    v_mad_co_u64_u32 v[5:6], s6, v2, v2, v[3:4]
    v_cndmask_b32_e64 v7, 0, 1, s6
    global_store_b96 v0, v[5:7], s[2:3]
    """
    (got,) = run(body, [np.zeros(3, U32)], block=(1,))
    assert list(got) == [0, 0xFFFFFFFF, 0]  # (2^32-1)^2 + (2^32-1) = 2^64 - 2^32: no carry


def test_permlane16_var_takes_each_lanes_selector_from_a_vgpr():
    body = """
    v_sub_nc_u32_e32 v2, 15, v0
    v_mul_u32_u24_e32 v3, 100, v0
    v_permlane16_var_b32 v4, v3, v2
    v_permlanex16_var_b32 v5, v3, v2
    global_store_b32 v1, v4, s[2:3]
    global_store_b32 v1, v5, s[4:5]
    """
    same, cross = run(body, [np.zeros(32, U32), np.zeros(32, U32)])
    lane = np.arange(32)
    sel = (15 - lane) & 15
    assert np.array_equal(same, 100 * (lane // 16 * 16 + sel))
    assert np.array_equal(cross, 100 * ((1 - lane // 16) * 16 + sel))


def test_v_s_transcendentals_write_an_sgpr():
    body = """
    v_s_exp_f32 s6, 0x40400000
    v_s_sqrt_f16 s7, 0x4400
    v_s_rcp_f32 s8, -s9
    v_dual_mov_b32 v2, s6 :: v_dual_mov_b32 v3, s7
    v_mov_b32_e32 v4, s8
    global_store_b96 v0, v[2:4], s[2:3]
    """
    (got,) = run("s_mov_b32 s9, 4.0\n" + body, [np.zeros(3, U32)], block=(1,))
    assert got.view(F32)[0] == 8.0 and got[1] == 0x4000 and got.view(F32)[2] == -0.25


def test_fp8_and_bf8_are_the_ocp_formats():
    assert FP8[0x7E] == 448 and np.isnan(FP8[0x7F]) and FP8[0x01] == 2.0 ** -9 and FP8[0xB8] == -1.0
    assert BF8[0x7C] == np.inf and np.isnan(BF8[0x7D]) and BF8[0x01] == 2.0 ** -16 and BF8[0x3C] == 1.0
    body = """
    v_mov_b32_e32 v2, 0x7e3c4038
    v_cvt_f32_fp8_e64 v3, v2 byte_sel:1
    v_cvt_f32_bf8_e64 v4, v2 byte_sel:2
    v_cvt_pk_f32_fp8_e64 v[5:6], v2 op_sel:[1,0]
    v_mov_b32_e32 v7, 0x38383838
    v_dot4_f32_fp8_fp8 v8, v7, v2, 1.0
    global_store_b128 v0, v[3:6], s[2:3]
    global_store_b32 v0, v8, s[2:3] offset:16
    """
    (got,) = run(body, [np.zeros(5, U32)], block=(1,))
    v = got.view(F32)
    assert v[0] == FP8[0x40] == 2.0 and v[1] == BF8[0x3C] == 1.0 and (v[2], v[3]) == (FP8[0x3C], 448.0)
    assert v[4] == 1.0 + FP8[0x38] + FP8[0x40] + FP8[0x3C] + 448.0  # 1.0 * each byte, added in order


# ---------------------------------------------------------------------------------------------- WMMA (llvmlite)


def _wmma_ir(intrinsic: str, ab: str, cty: str) -> str:
    opsel, opsel_arg = (", i1", ", i1 false") if "half" in cty else ("", "")  # the 16-bit results' op_sel operand
    return f"""
declare i32 @llvm.amdgcn.workitem.id.x()
declare {cty} @{intrinsic}({ab}, {ab}, {cty}{opsel})
define amdgpu_kernel void @k(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {{
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %pa = getelementptr {ab}, ptr addrspace(1) %a, i32 %l
  %pb = getelementptr {ab}, ptr addrspace(1) %b, i32 %l
  %pc = getelementptr {cty}, ptr addrspace(1) %c, i32 %l
  %pd = getelementptr {cty}, ptr addrspace(1) %d, i32 %l
  %va = load {ab}, ptr addrspace(1) %pa
  %vb = load {ab}, ptr addrspace(1) %pb
  %vc = load {cty}, ptr addrspace(1) %pc
  %r = call {cty} @{intrinsic}({ab} %va, {ab} %vb, {cty} %vc{opsel_arg})
  store {cty} %r, ptr addrspace(1) %pd
  ret void
}}
"""


def pack_ab(m: np.ndarray) -> np.ndarray:
    """A (rows) or B^T (columns) [16, 16] elements -> per-lane elements [32, 8] in RDNA4's 16-bit layout: lanes 0-15
    hold k 0-3 and 8-11 of their row, lanes 16-31 k 4-7 and 12-15. (8-bit elements sit otherwise, k 0-7 in lanes 0-15:
    for them this packing is a permutation of K applied to A and B alike, which leaves the product unchanged;
    test_wmma_gfx12.py places each form by AMD's equations.)"""
    k = np.array([[0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]])
    return np.concatenate([m[:, k[0]], m[:, k[1]]])


def pack_c(c: np.ndarray) -> np.ndarray:
    """C [16, 16] -> per-lane [32, 8]: slot s of lane l is row s + 8 * (l // 16), column l % 16."""
    lane, slot = np.arange(32)[:, None], np.arange(8)[None, :]
    return c[slot + 8 * (lane // 16), lane % 16]


def unpack_d(d: np.ndarray) -> np.ndarray:
    out = np.zeros((16, 16), d.dtype)
    lane, slot = np.arange(32)[:, None], np.arange(8)[None, :]
    out[slot + 8 * (lane // 16), lane % 16] = d
    return out


RNG = np.random.default_rng(12)


@pytest.mark.parametrize("variant", ["f16_f32", "f16_f16", "bf16_f32", "fp8_f32", "bf8fp8_f32"])
def test_wmma_uses_rdna4s_register_layout(variant):
    a = RNG.integers(-8, 8, (16, 16)).astype(F32) / 4
    b = RNG.integers(-8, 8, (16, 16)).astype(F32) / 4
    c = RNG.integers(-8, 8, (16, 16)).astype(F32)
    if variant.startswith(("f16", "bf16")):
        kind, out = variant.split("_")
        if kind == "f16":
            ea, eb = a.astype(F16).view(np.uint16), b.astype(F16).view(np.uint16)
            ab = "<8 x half>"
        else:
            ea, eb = (a.view(U32) >> 16).astype(np.uint16), (b.view(U32) >> 16).astype(np.uint16)
            ab = "<8 x i16>"
        name = f"llvm.amdgcn.wmma.{out}.16x16x16.{kind}.v8{out}.v8{'f16' if kind == 'f16' else 'i16'}"
    else:
        inv = {float(v): i for i, v in enumerate(FP8) if np.isfinite(v)}
        ea = np.vectorize(inv.__getitem__)(a).astype(np.uint8)
        if variant == "bf8fp8_f32":
            invb = {float(v): i for i, v in enumerate(BF8) if np.isfinite(v)}
            ea = np.vectorize(invb.__getitem__)(a).astype(np.uint8)
        eb = np.vectorize(inv.__getitem__)(b).astype(np.uint8)
        out, ab = "f32", "<2 x i32>"
        name = f"llvm.amdgcn.wmma.f32.16x16x16.{'bf8.fp8' if variant == 'bf8fp8_f32' else 'fp8.fp8'}.v8f32.v2i32"
    cty = "<8 x float>" if out == "f32" else "<8 x half>"
    tb = tb12()
    k = tb.load(compile_ir(_wmma_ir(name, ab, cty), mcpu=ARCH))["k"]
    cdt = F32 if out == "f32" else F16
    va, vb = tb.upload(np.ascontiguousarray(pack_ab(ea))), tb.upload(np.ascontiguousarray(pack_ab(eb.T)))
    vc, vd = tb.upload(pack_c(c).astype(cdt)), tb.upload(np.zeros((32, 8), cdt))
    tb.launch(k, [va, vb, vc, vd], (1,), (32,))
    d = unpack_d(tb.download(vd, cdt, 256).reshape(32, 8))
    assert np.array_equal(d, (a.astype(np.float64) @ b + c).astype(cdt)), variant


@pytest.mark.parametrize("form, c", [("v_wmma_f32_16x16x16_f16 v[16:23], v[8:11], v[12:15], 0", 0.0),
                                     ("v_wmma_f32_16x16x16_f16 v[16:23], v[8:11], v[12:15], -2.0", -2.0),
                                     ("v_wmma_f32_16x16x16_f16 v[16:23], v[8:11], v[12:15], 0.5 neg_lo:[0,0,1]", -0.5),
                                     ("v_wmma_f16_16x16x16_f16 v[16:19], v[8:11], v[12:15], 1.0", 1.0),
                                     ("v_wmma_i32_16x16x16_iu8 v[16:23], v[8:9], v[12:13], 7 neg_lo:[1,1,0]", 7),
                                     ("v_wmma_i32_16x16x16_iu8 v[16:23], v[8:9], v[12:13], -3 neg_lo:[1,1,0]", -3)])
def test_wmma_c_may_be_an_inline_constant(form, c):
    """RDNA4 takes an inline constant for C (llvm-mc assembles these; LLVM and Triton start accumulations with 0):
    every element of C is the constant, read as C's element type."""
    mnemonic = form.split()[0]
    ints = "iu8" in mnemonic
    a = RNG.integers(-8, 8, (16, 16))
    b = RNG.integers(-8, 8, (16, 16))
    if ints:
        ea, eb, load = a.astype(np.int8), b.astype(np.int8), "global_load_b64 v[{0}:{1}]"
        out = np.int32
    else:
        ea, eb, load = (a / 4).astype(F16), (b / 4).astype(F16), "global_load_b128 v[{0}:{2}]"
        out = F16 if mnemonic.startswith("v_wmma_f16") else F32
    size = 8 if ints else 16
    store = "global_store_b128 v3, v[16:19], s[6:7]" + (
        "" if out == F16 else "\nglobal_store_b128 v3, v[20:23], s[6:7] offset:16")
    body = f"""
    s_load_b64 s[6:7], s[0:1], 0x10
    v_mul_u32_u24_e32 v2, {size}, v0
    {load.format(8, 9, 11)}, v2, s[2:3]
    {load.format(12, 13, 15)}, v2, s[4:5]
    v_mul_u32_u24_e32 v3, {8 * np.dtype(out).itemsize}, v0
    s_wait_loadcnt 0x0
    s_wait_kmcnt 0x0
    {form}
    {store}
    """
    got = run(body, [pack_ab(ea), pack_ab(eb.T), np.zeros((32, 8), out)])[2]
    ref = a.astype(np.float64) @ b if ints else (a / 4) @ (b / 4)
    assert np.array_equal(unpack_d(got), (ref + c).astype(out)), form


def test_the_trap_barrier_s_state_is_refused():
    with pytest.raises(HardwareFault, match="trap barrier is not implemented"):
        run("s_get_barrier_state s6, -2", [np.zeros(32, U32)])


def test_a_wmma_operand_past_the_wave_s_vgprs_is_an_illegal_instruction():
    """A hostile encoding whose B block runs off the wave's VGPR file faults, it does not index past it."""
    with pytest.raises(HardwareFault, match="past the wave's VGPRs"):
        run("v_wmma_i32_16x16x32_iu4 v[2:9], v[10:11], v[63:64], v[2:9]", [np.zeros(32, U32)], vgprs=64)


# ---------------------------------------------------------------------------------------------- the engine


def test_the_engine_decodes_with_the_dispatchs_architecture():
    """The same bytes mean different instructions: a gfx1201 kernel faults on a gfx1100 testbed's engine."""
    code = assemble("s_wait_kmcnt 0x0\ns_endpgm", arch=ARCH)
    tb = Testbed(vram_size=1 << 26)
    k = tb.load_asm("s_endpgm", args=1)
    tb.write(k.code_address, code)
    with pytest.raises(HardwareFault, match="illegal_instruction"):
        tb.launch(k, [0], (1,), (32,))


def test_a_code_object_for_another_processor_is_refused_by_the_testbed():
    k12 = tb12().load_asm("s_endpgm")
    with pytest.raises(ValueError, match="built for gfx1201; this testbed runs gfx1100"):
        Testbed(vram_size=1 << 26).load(_code_object_of(k12))


def _code_object_of(k) -> bytes:
    return write_code_object([("k", assemble("s_endpgm", arch=ARCH), k.kernel.descriptor, None)], target=ARCH)


@pytest.mark.parametrize("tier", ["jit", "jit-lean"])
def test_the_jit_tier_runs_gfx12_code_natively(tier):
    """A gfx1201 kernel is compiled and runs as native code, every instruction of it (a fused batch: with the
    registers kept, each wave from its own initial state; "jit-lean", from one workgroup's template with each
    group's TTMP9 and TTMP7 written in), and ends as in the interpreter."""
    reference, tb = tiers.testbed("interpreter", 1 << 26, arch=ARCH), tiers.testbed(tier, 1 << 26, arch=ARCH)
    for t in (reference, tb):
        run(IDS, [np.zeros((2, 3, 2, 64, 3), U32)], grid=(2, 3, 2), block=(64,), tb=t)
    tiers.assert_same(reference, tb)
    stats = tb.engine.jit.stats
    assert stats.fused_batches == 1 and stats.callbacks == stats.sync_steps == 0 and not stats.failures
    assert stats.native_instructions == tb.engine.counters.wave_instructions > 0


def test_every_gfx12_entry_names_a_gfx1201_instruction():
    semantics.implemented()
    known = set()
    for fam in families():
        known |= {semantics.base_name(m) for m in fam.mnemonics(ARCH)}
    own = semantics.implemented("gfx12") - semantics.implemented()
    assert own and own <= known, sorted(own - known)


def test_gfx12_memory_encodings_count_as_their_gfx11_kinds():
    def cat(text: str) -> str:
        kind = classify(decode(assemble(text, arch=ARCH), arch=ARCH))
        return CATEGORIES[kind.category] if kind.category >= 0 else kind.token
    assert cat("global_load_b32 v1, v2, s[2:3]") == cat("scratch_store_b32 off, v1, off") == "SQ_INSTS_FLAT"
    assert cat("flat_atomic_add_u32 v1, v[2:3], v4 th:TH_ATOMIC_RETURN") == "SQ_INSTS_FLAT"
    assert cat("buffer_load_b32 v1, off, s[8:11], null") == "SQ_INSTS_TEX_LOAD"
    assert cat("buffer_store_b32 v1, off, s[8:11], null") == "SQ_INSTS_TEX_STORE"
    assert cat("s_barrier_wait 0xffff") == "INST" and cat("s_wait_loadcnt 0x0") == "IMMEDIATE"


@pytest.mark.parametrize(("family", "wave_bytes"), [("gfx11", 0), ("gfx12", (1 << 15) * 256)])
def test_pm4_reads_gfx12s_18_bit_tmpring_wavesize(family, wave_bytes):
    """COMPUTE_TMPRING_SIZE.WAVESIZE is bits 12-26 on gfx11, 12-29 on gfx12 (gc_12_0_0): a value of 2^15 units."""
    q = Queue("q", "pm4", 0x10000, 4096, 1, None, 0, 0, 0)
    q.regs = {regs.COMPUTE_TMPRING_SIZE: (1 << 15) << 12 | 1, regs.COMPUTE_PGM_RSRC2: 1,
              regs.COMPUTE_NUM_THREAD_X: 32, regs.COMPUTE_NUM_THREAD_Y: 1, regs.COMPUTE_NUM_THREAD_Z: 1}
    d = pm4_dispatch(q, (1, 1, 1), regs.dispatch_initiator(True), family)
    assert d.private_segment_size == wave_bytes // 32


def test_the_sanitizers_check_gfx12_code():
    """memcheck and racecheck run on gfx12 kernels (s_barrier_wait is the barrier that orders LDS phases); the
    hazard rules are gfx1100's and are not applied to gfx12 dispatches."""
    tb = Testbed(vram_size=1 << 28, arch=ARCH, sanitize="all")
    k = tb.load((DATA / "opencl" / "corpus_gfx1201.so").read_bytes())["group_sum"]
    data = np.arange(2 * 256, dtype=np.int32)
    out, src = tb.upload(np.zeros(2, np.int32)), tb.upload(data)
    tb.launch(k, [out, src], (2,), (256,))
    assert list(tb.download(out, np.int32, 2)) == [data[:256].sum(), data[256:].sum()]
    assert [f.text() for f in tb.sanitizer.findings] == []
    bad = tb.load_asm(PRO + "global_store_b32 v1, v0, s[2:3] offset:0x1000\ns_endpgm", args=2)
    with pytest.raises(HardwareFault, match="memcheck.*out-of-bounds write.*3968 bytes past the end"):
        tb.launch(bad, [tb.alloc(128), 0], (1,), (32,))  # the 24-bit offset is part of the checked address


def test_ds_new_atomics_and_packed_num_minmax():
    body = """
    v_mov_b32_e32 v2, 0
    v_mov_b32_e32 v3, 0x7fa00000
    v_mov_b32_e32 v4, 10
    v_mov_b32_e32 v5, 5
    v_mov_b32_e32 v6, 0x3c004000
    v_cmpx_eq_u32_e32 0, v0
    ds_store_b32 v2, v3
    ds_store_b32 v2, v4 offset:4
    ds_store_b32 v2, v4 offset:8
    ds_store_b32 v2, v6 offset:12
    ds_min_num_f32 v2, v6 offset:0
    ds_cond_sub_rtn_u32 v7, v2, v5 offset:4
    ds_sub_clamp_u32 v2, v4 offset:8
    ds_pk_add_f16 v2, v6 offset:12
    s_wait_dscnt 0x0
    ds_load_b128 v[8:11], v2
    v_pk_max_num_f16 v12, 0x7e00, v6
    v_pk_maximum_f16 v13, 0x7e00, v6
    s_wait_dscnt 0x0
    global_store_b128 v2, v[8:11], s[2:3]
    global_store_b96 v2, v[7:9], s[4:5]
    global_store_b64 v2, v[12:13], s[4:5] offset:12
    """
    lds, ret = run(body, [np.zeros(4, U32), np.zeros(5, U32)], lds=64)
    assert lds[0] == 0x3C004000 and list(lds[1:3]) == [5, 0]  # min_num(sNaN, number) = the number
    assert lds[3] == 0x40004400  # (2 + 2, 1 + 1) packed f16
    assert ret[0] == 10  # the _rtn form returns the old value
    # packed, low halves: max_num(NaN, 2) = 2, maximum(NaN, 2) = NaN; high halves: the literal's are 0, max(0, 1) = 1
    assert ret[3] == 0x3C004000 and ret[4] == 0x3C007E00

