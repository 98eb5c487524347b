"""Instruction semantics where simgpu once disagreed with the RDNA3 ISA reference, LLVM or hardware
(issue 21), one test per finding, each naming its evidence: the reference's pseudo-code (RDNA3 ISA
section 16.x), an LLVM fold or comment, or a hardware-verified fact.

Each case runs one wave of 32 lanes (vint_harness: a, b, c in v[10:11], v[12:13], v[14:15], results
stored from v[20:23]); scalar results are copied to v20/v21 by the instruction text."""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.testbed import Testbed
from tests.support.vint_harness import Runner

LANES = 32
M32, M64 = 0xFFFFFFFF, (1 << 64) - 1


@pytest.fixture(scope="module")
def runner():
    return Runner(Testbed(vram_size=1 << 28))


def run(runner, text: str, a=0, b=0, c=0, pre: str = "") -> list[int]:
    """v20..v23 of lane 0 after `text` with every lane's a, b, c set to the given 64-bit words."""
    def col(x):
        return np.full(LANES, x, np.uint64)
    out, _ = runner.run(text, col(a), col(b), col(c), pre=pre, block=LANES)
    return [int(x) for x in out[0]]


def u64(words: list[int]) -> int:
    return words[0] | (words[1] << 32)


# ---------------------------------------------------------------------------------------------- 64-bit literals

# A 32-bit literal in a 64-bit operand: hardware zero-extends it for bit and unsigned operands
# (verified: s_mov_b64 with 0x80000000 gives 0x00000000_80000000) and sign-extends it only for signed
# operands. LLVM: "[AMDGPU] Prevent folding of the negative i32 literals as i64" (llvm-project #70274:
# the literal is "encoded as its low 32 bits and then either correctly sign extended or incorrectly
# zero extended by HW") and #186575, which types as signed exactly s_ashr_i64 and S_FLBIT_I32_I64
# (s_cls_i32_i64), v_ashrrev_i64, v_mad_i64_i32 and v_cmp(x)_*_i64. An f64 operand takes the literal
# as its high half (RDNA3 ISA 7.1 / LLVM's f64 literal encoding).
LITERAL64 = [
    ("s_mov_b64 s[12:13], 0x80000000", 0x0000000080000000),
    ("s_or_b64 s[12:13], 0x80000000, 0", 0x0000000080000000),
    ("s_lshr_b64 s[12:13], 0x80000000, 4", 0x0000000008000000),
    ("s_ashr_i64 s[12:13], 0x80000000, 4", 0xFFFFFFFFF8000000),
    ("s_cselect_b64 s[12:13], 0xfffffff0, 0", 0x00000000FFFFFFF0),
]


@pytest.mark.parametrize("text,want", LITERAL64)
def test_literal_64_extension_scalar(runner, text, want):
    words = run(runner, f"s_cmp_eq_u32 0, 0\n{text}\nv_mov_b32 v20, s12\nv_mov_b32 v21, s13")
    assert u64(words) == want


def test_literal_64_extension_scalar_cls(runner):
    # s_cls_i32_i64 of a sign-extended 0x80000000 (0xffffffff_80000000): the first bit differing from the
    # sign is bit 30, 33 places below it; zero-extended (0x00000000_80000000) it would be 32.
    words = run(runner, "s_cls_i32_i64 s12, 0x80000000\nv_mov_b32 v20, s12")
    assert words[0] == 33


VLITERAL64 = [
    ("v_lshlrev_b64 v[20:21], 0, 0x80000000", 0x0000000080000000),
    ("v_lshrrev_b64 v[20:21], 1, 0x80000000", 0x0000000040000000),
    ("v_ashrrev_i64 v[20:21], 1, 0x80000000", 0xFFFFFFFFC0000000),
    ("v_mad_u64_u32 v[20:21], null, 0, 0, 0x80000000", 0x0000000080000000),
    ("v_mad_i64_i32 v[20:21], null, 0, 0, 0x80000000", 0xFFFFFFFF80000000),
    ("v_add_f64 v[20:21], 0x3ff00000, 0", 0x3FF0000000000000),  # f64: the literal is the high half
]


@pytest.mark.parametrize("text,want", VLITERAL64)
def test_literal_64_extension_vector(runner, text, want):
    assert u64(run(runner, text)) == want


def test_literal_64_extension_compares(runner):
    # v_cmp_gt_i64 0x80000000 (sign-extended: -2**31) > 0 is false; v_cmp_gt_u64 (2**31 > 0) is true.
    text = ("v_cmp_gt_i64_e32 vcc_lo, 0x80000000, v[10:11]\nv_cndmask_b32_e64 v20, 0, 1, vcc_lo\n"
            "v_cmp_gt_u64_e32 vcc_lo, 0x80000000, v[10:11]\nv_cndmask_b32_e64 v21, 0, 1, vcc_lo")
    assert run(runner, text, a=0)[:2] == [0, 1]


# ---------------------------------------------------------------------------------------------- output modifiers

IEEE_OFF = "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 9, 1), 0"


@pytest.mark.parametrize("ieee,want", [(1, 4.0), (0, 8.0)])
def test_omod_is_ignored_in_ieee_mode(runner, ieee, want):
    # Hardware-verified: v_add_f32 3.0 + 1.0 with mul:2 gives 4.0 while MODE.IEEE is set. LLVM
    # (SIFoldOperands.cpp): "omod is ignored by hardware if IEEE bit is enabled", so it folds omod only
    # into IEEE-off code, where the result is scaled (8.0).
    a = int(np.float32(3.0).view(np.uint32))
    got = run(runner, "v_add_f32_e64 v20, v10, 1.0 mul:2", a=a, pre="" if ieee else IEEE_OFF)
    assert np.uint32(got[0]).view(np.float32) == want
    got = run(runner, "v_fma_f64 v[20:21], v[10:11], 1.0, 1.0 div:2", a=int(np.float64(3.0).view(np.uint64)),
              pre="" if ieee else IEEE_OFF)
    assert np.uint64(u64(got)).view(np.float64) == (4.0 if ieee else 2.0)


# ---------------------------------------------------------------------------------------------- packed constants


def test_packed_integer_ops_read_float_constants_as_f32_bits(runner):
    # Hardware-verified: v_pk_add_u16 of 0x00030005 and the inline constant 2.0 adds the halves of the f32
    # pattern 0x40000000 (low half 0x0005 + 0x0000); f16 2.0 (0x4000) in the low half would give 0x4005.
    # LLVM 19 agrees: `llvm-mc` folds the literal 0x40000000, not 0x4000, into 2.0 for v_pk_add_u16, and
    # 0x4000 (not 0x40000000) for v_pk_add_f16.
    assert run(runner, "v_pk_add_u16 v20, v10, 2.0", a=0x00030005)[0] == 0x40030005
    assert run(runner, "v_pk_add_u16 v20, v10, 2.0 op_sel_hi:[1,0]", a=0x00030005)[0] == 0x00030005
    assert run(runner, "v_pk_mul_lo_u16 v20, v10, 0.5", a=0x00020002)[0] == 0x7E000000
    assert run(runner, "v_pk_add_u16 v20, v10, -1", a=0x00030005)[0] == 0x00020004
    assert run(runner, "v_pk_add_f16 v20, v10, 2.0", a=0x3C003C00)[0] == 0x3C004200  # f16 ops: f16 bits, low half


# ---------------------------------------------------------------------------------------------- division fixup

F32_ONE, F64_ONE = 0x3F800000, 0x3FF0000000000000


@pytest.mark.parametrize("den,want", [(F32_ONE, 0x7F800000), (0xBF800000, 0xFF800000)])
def test_div_fixup_f32_nan_quotient_overflows(runner, den, want):
    # Hardware-verified: V_DIV_FIXUP_F32 with a NaN estimate in S0 and finite S1, S2 returns +-inf (the
    # sign of S1 ^ S2). The reference's pseudo-code (RDNA3 ISA 16.12) has the OVERFLOW case behind
    # `exponent(S1.f) == 255`, unreachable after its NaN/inf cases: the quotient's exponent is meant.
    got = run(runner, "v_div_fixup_f32 v20, v10, v12, v14", a=0x7FC00000, b=den, c=F32_ONE)
    assert got[0] == want


def test_div_fixup_f64_nan_quotient_overflows(runner):
    got = run(runner, "v_div_fixup_f64 v[20:21], v[10:11], v[12:13], v[14:15]", a=0x7FF8000000000000,
              b=F64_ONE | (1 << 63), c=F64_ONE)
    assert u64(got) == 0xFFF0000000000000
    # a NaN numerator or denominator still wins (the earlier cases), quieted
    got = run(runner, "v_div_fixup_f64 v[20:21], v[10:11], v[12:13], v[14:15]", a=0x7FF8000000000000,
              b=F64_ONE, c=0x7FF0000000000001)
    assert u64(got) == 0x7FF8000000000001


# ---------------------------------------------------------------------------------------------- fract


@pytest.mark.parametrize("text,a,want", [
    ("v_fract_f32 v20, v10", 0x7F800001, 0x7FC00001),
    ("v_fract_f32 v20, v10", 0xFF800123, 0xFFC00123),
    ("v_fract_f16 v20, v10", 0x7C01, 0x7E01),
    ("v_fract_f64 v[20:21], v[10:11]", 0x7FF0000000000001, 0x7FF8000000000001),
])
def test_fract_quiets_signaling_nan(runner, text, a, want):
    # RDNA3 ISA 16.12 V_FRACT_F32: "D0.f32 = S0.f32 + -floor(S0.f32)": an arithmetic result, so a
    # signaling NaN comes out quieted (IEEE 754 6.2), payload kept: 0x7f800001 -> 0x7fc00001.
    got = run(runner, text, a=a)
    have = u64(got) if "f64" in text else got[0] & (0xFFFF if "f16" in text else M32)
    assert have == want


# ---------------------------------------------------------------------------------------------- division scaling

F32_MIN = 0x00800000


def _div_scale(runner, s0, s1, s2, flush=False) -> tuple[int, int]:
    """(D, VCC bit) of v_div_scale_f32 D, vcc, S0, S1, S2 (lane 0), MODE flushing f32 denormals or not."""
    mode = "s_denorm_mode 0xc" if flush else "s_denorm_mode 0xf"
    text = f"{mode}\nv_div_scale_f32 v20, vcc_lo, v10, v12, v14\nv_cndmask_b32_e64 v21, 0, 1, vcc_lo"
    got = run(runner, text, a=s0, b=s1, c=s2)
    return got[0], got[1]


@pytest.mark.parametrize("flush", [False, True])
def test_div_scale_hardware_cases(runner, flush):
    # Hardware-verified cases of V_DIV_SCALE_F32 (S0 = the value to scale, S1 = denominator, S2 =
    # numerator), checked against the reference's pseudo-code (RDNA3 ISA 16.12), run in both f32 denorm
    # modes (the hardware observations were made with f32 denormals flushed, the assembler's default).
    one, four, two = 0x3F800000, 0x40800000, 0x40000000
    assert _div_scale(runner, one, four, one, flush) == (one, 0)  # nothing to scale
    assert _div_scale(runner, two, four, two, flush) == (two, 0)
    # zero numerator or denominator: NaN, and (hardware, not the pseudo-code) VCC set
    d, vcc = _div_scale(runner, one, 0, one, flush)
    assert (d & 0x7FFFFFFF) > 0x7F800000 and vcc == 1
    d, vcc = _div_scale(runner, 0, one, 0, flush)
    assert (d & 0x7FFFFFFF) > 0x7F800000 and vcc == 1
    # N/D near the top of the range: the denominator scaled by 2**64, VCC set
    assert _div_scale(runner, one, one, 0x7F7FFFFF, flush) == (0x5F800000, 1)
    # a numerator exponent <= 23: S0 scaled by 2**64 (the pseudo-code: VCC clear; see test below)
    assert _div_scale(runner, F32_MIN, one, F32_MIN, flush) == (0x20800000, 0)
    # 1 / 2**127: VCC set and the numerator unscaled (hardware-verified); the denominator scaled down by
    # 2**64 (the pseudo-code's "1/S1 is denormal" case, tested in f32: 2**-127 is an f32 denormal)
    assert _div_scale(runner, one, 0x7F000000, one, flush) == (one, 1)
    assert _div_scale(runner, 0x7F000000, 0x7F000000, one, flush) == (0x5F000000, 1)
    # a denormal quotient with a normal reciprocal (2**-120 / 2**10): the pseudo-code's numerator scaling
    assert _div_scale(runner, 0x03800000, 0x44800000, 0x03800000, flush) == (0x23800000, 1)
    # a denormal denominator: flushed to zero -> NaN and VCC (hardware-verified, flushing MODE); with
    # denormals kept, N/D is near the top of the range first: 2**-149 scaled to 2**-85, VCC set
    d, vcc = _div_scale(runner, 1, 1, one, flush)
    assert (((d & 0x7FFFFFFF) > 0x7F800000) and vcc == 1) if flush else (d, vcc) == (0x15000000, 1)


FDIV_IR = """
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @fdiv(ptr addrspace(1) %pa, ptr addrspace(1) %pb, ptr addrspace(1) %out) #0 {
  %i = call i32 @llvm.amdgcn.workitem.id.x()
  %ga = getelementptr float, ptr addrspace(1) %pa, i32 %i
  %gb = getelementptr float, ptr addrspace(1) %pb, i32 %i
  %a = load float, ptr addrspace(1) %ga
  %b = load float, ptr addrspace(1) %gb
  %q = fdiv float %a, %b
  %go = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %q, ptr addrspace(1) %go
  ret void
}
attributes #0 = { "denormal-fp-math-f32"="DM,DM" }
"""


@pytest.mark.parametrize("dm", ["ieee", "preserve-sign"])
def test_llvm_fdiv_expansion_is_correct_at_the_scaling_edges(dm):
    # Evidence for what V_DIV_SCALE does with a tiny numerator. LLVM expands fdiv as div_scale(den),
    # div_scale(num), rcp, fma steps, div_fmas (post-scaled by 2**+-64 when VCC is set, by S2's exponent;
    # hardware-verified) and div_fixup, and that is correctly rounded on hardware. If a numerator exponent
    # <= 23 also set VCC (the claim the pseudo-code contradicts), both div_scale calls would still scale
    # by 2**64 (their S1, S2 are the same), the quotient would be unchanged, and div_fmas would divide it
    # by 2**64: FLT_MIN / 1.0f would come out 0. With the pseudo-code's VCC, every edge below is exact.
    from compiler.llvm import compile_ir
    tb = Testbed(vram_size=1 << 24)
    k = tb.load(compile_ir(FDIV_IR.replace("DM", dm)))["fdiv"]
    pairs = [(2.0 ** -126, 1.0), (1e-32, 1.0), (2.0 ** -110, 2.0 ** -100), (3e-35, 7e-33), (1.0, 2.0 ** 127),
             (3.0, 2.0 ** 127), (5e-39, 3.0), (1e-40, 1e-39), (1e-39, 1e-40), (3e38, 1e-10), (3e38, 0.5),
             (1e-45, 1e-45), (7.0, 3.0), (0.0, 5.0), (5.0, 0.0), (1e-30, 3e38), (2.0 ** -149, 0.75)]
    a = np.array([p[0] for p in pairs] * 2, np.float32)
    b = np.array([p[1] for p in pairs] * 2, np.float32)
    a[len(pairs):] *= -1
    out = tb.alloc(4 * len(a))
    tb.launch(k, [tb.upload(a), tb.upload(b), out], (1,), (len(a),))
    got = tb.download(out, np.float32, len(a))
    with np.errstate(all="ignore"):
        if dm == "ieee":
            want = a / b
        else:  # inputs and result flushed, sign kept
            fl = np.float32(2.0 ** -126)
            fa, fb = (np.where(np.abs(x) < fl, np.copysign(np.float32(0), x), x) for x in (a, b))
            q = fa / fb
            want = np.where(np.abs(q) < fl, np.copysign(np.float32(0), q), q)
    assert np.array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32)), \
        [(float(x), float(y), float(g), float(w)) for x, y, g, w in zip(a, b, got, want, strict=True) if g != w]


# ---------------------------------------------------------------------------------------------- NaN results


@pytest.mark.parametrize("text,a,b,want", [
    ("v_sub_f32 v20, v10, v12", 0x3F800000, 0x7FC00001, 0x7FC00001),
    ("v_sub_f32 v20, v10, v12", 0x3F800000, 0xFF800002, 0xFFC00002),  # a signaling NaN, quieted
    ("v_subrev_f32 v20, v10, v12", 0x7FC00003, 0x3F800000, 0x7FC00003),
    ("v_sub_f32 v20, v10, v12", 0x7FC00004, 0xFFC00005, 0x7FC00004),  # the first NaN operand wins
    ("v_sub_f16 v20, v10, v12", 0x3C00, 0x7E01, 0x7E01),
    ("v_sub_f32_e64 v20, v10, -v12", 0x3F800000, 0x7FC00001, 0xFFC00001),  # the neg modifier does negate
])
def test_sub_keeps_the_sign_of_a_nan_operand(runner, text, a, b, want):
    # Decision (docs/shader.md, "NaN results"): subtraction does not negate a NaN. The reference says
    # only D0.f = S0.f - S1.f, IEEE 754 leaves a NaN result's sign open, and LLVM's constant folder
    # (llvmlite's LLVM 22) folds `fsub float 1.0, NaN` to that NaN unchanged; matching it keeps a folded
    # and a run-time subtraction bit-identical. tests/simgpu/shader/test_sem_llvm_fold.py checks the rest.
    got = run(runner, text, a=a, b=b)[0] & (0xFFFF if "f16" in text else M32)
    assert got == want


@pytest.mark.parametrize("text,a,b,c,want", [
    ("v_fma_f32 v20, v10, v12, v14", 0x7FC00001, 0x7FC00002, 0x7FC00003, 0x7FC00001),
    ("v_fma_f32 v20, v10, v12, v14", 0x3F800000, 0xFF800002, 0x7FC00003, 0xFFC00002),
    ("v_fma_f32 v20, v10, v12, v14", 0x3F800000, 0x3F800000, 0x7F800003, 0x7FC00003),
    ("v_fmaak_f32 v20, v10, v12, 0x7fc00009", 0x3F800000, 0x7FC00002, 0, 0x7FC00002),
    ("v_fmaak_f32 v20, v10, v12, 0x7fc00009", 0x3F800000, 0x3F800000, 0, 0x7FC00009),
    ("v_pk_mul_f16 v20, v10, v12", 0x1E8EFDC8, 0x00567DC4, 0, 0x0001FFC8),  # two sNaNs: the first, quieted
    ("v_pk_add_f16 v20, v10, v12", 0x7E013C00, 0x7E023C00, 0, 0x7E014000),
    ("v_pk_fma_f16 v20, v10, v12, v14", 0x3C003C00, 0x3C007D01, 0x7E027E03, 0x7E027F01),
])
def test_nan_results_propagate_the_first_nan_operand(runner, text, a, b, c, want):
    # Decision (docs/shader.md, "NaN results"): a NaN result of add/mul/fma is the first NaN source operand
    # (S0, then S1, then S2), quieted. The reference does not say; LLVM's constant folder does exactly that
    # (checked bit for bit by tests/simgpu/shader/test_sem_llvm_fold.py), as the reference's LDS float add
    # does ("if both inputs are NaN, the NaN from the first input is selected", RDNA3.5 ISA 13.3).
    got = run(runner, text, a=a, b=b, c=c)[0]
    assert got == want


# ---------------------------------------------------------------------------------------------- True16 encodings


@pytest.mark.parametrize("text,a,d,want", [
    ("v_mov_b16_e64 v20.h, v10.l", 0x1111ABCD, 0x22223333, 0xABCD3333),
    ("v_mov_b16_e64 v20.l, v10.h", 0xABCD1111, 0x22223333, 0x2222ABCD),
    ("v_mov_b16_e64 v20.h, 0x1234", 0, 0x22223333, 0x12343333),
    ("v_add_f16_e32 v20.h, v10.h, v10.l", 0x3C004000, 0x22223333, 0x42003333),
])
def test_true16_only_encodings_execute(runner, text, a, d, want):
    # LLVM 20+ (the LLVM in Triton 3.9) emits v_mov_b16_e64 (VOP3 opcode 412), which only
    # `llvm-mc -mattr=+real-true16` decodes: D0.b16 = S0.b16 (RDNA3 ISA 16.12 V_MOV_B16), op_sel picking the
    # halves. The engine decodes LLVM's default encodings and the True16 ones (issue 21).
    dd = np.full((LANES, 2), d, np.uint64)
    out, _ = runner.run(text, np.full(LANES, a, np.uint64), d=dd, block=LANES)
    assert int(out[0, 0]) == want


# ---------------------------------------------------------------------------------------------- dot products


def test_dot2_f16_f16_rounds_once(runner):
    # Decision (docs/shader.md, "V_DOT2_F16_F16"): the f16 result is one rounding of the exact
    # S0.lo*S1.lo + S0.hi*S1.hi + S2. The reference's pseudo-code declares no intermediate type; the dot unit
    # measured on RDNA3.5 silicon (ROCm/rocm-systems#12056, V_DOT2_F32_F16) multiplies exactly and
    # accumulates before one rounding, not one rounding per step. Here 1*1 + 2**-6 * 2**-5 + 2**-12 =
    # 1 + 2**-11 + 2**-12 rounds up to 1 + 2**-10 (0x3c01); rounding after each step gives 1.0 (0x3c00).
    a = 0x24003C00  # lo 1.0, hi 2**-6
    b = 0x28003C00  # lo 1.0, hi 2**-5
    c = 0x0C00  # 2**-12
    assert run(runner, "v_dot2_f16_f16 v20, v10, v12, v14", a=a, b=b, c=c)[0] & 0xFFFF == 0x3C01


def test_div_fmas_scales_before_rounding(runner):
    # Decision (docs/shader.md, "V_DIV_FMAS"): with VCC set the post-scale is applied to the exact fma and the
    # result rounded once. The reference calls the instruction "FMA with fused scale" that "scales the
    # resulting exponent"; its pseudo-code's `2.0F ** 32 * fma(...)` would round first, so an fma that
    # overflows f32 before the scale would be inf. LLVM's division needs the single rounding for denormal
    # quotients (test_llvm_fdiv_expansion_is_correct_at_the_scaling_edges). 2**65 * 2**65 + 1, scaled by
    # 2**-64 (S2 = 1.0: exponent not above the bias), is 2**66.
    text = "s_mov_b32 vcc_lo, -1\nv_div_fmas_f32 v20, v10, v12, v14"
    got = run(runner, text, a=0x60000000, b=0x60000000, c=0x3F800000)[0]
    assert got == 0x60800000
