"""gfx942 MFMA and AccVGPRs (simgpu/shader/matrix/gfx9.py): clang-19's code for every MFMA builtin of gfx942 that the
engine implements (tests/data/opencl/mfma.cl -> mfma_gfx942.so, `python -m tools.gen_opencl_corpus --arch gfx942`),
checked against numpy references of the ISA's definition. Every launch runs in both tiers, the interpreter and the JIT
tier (`in_both_tiers`: MFMA runs through the interpreter there too, amid the kernel's native code), which must end
with the same GPU state.

The references place matrix entries in lanes and registers by the closed-form equations AMD's matrix instruction
calculator prints for gfx9 (`--detail-instruction`: "A[i][k].block: GPR ..., Lane ..."), written out per shape here,
not by the engine's general layout code; the arithmetic is exact (Fractions, or inputs whose sums are exact in f64)
then rounded once, as the module documents.
"""

from __future__ import annotations

import shutil
from fractions import Fraction

import numpy as np
import pytest

from simgpu.fault import HardwareFault
from simgpu.isa.codeobject import read_code_object
from simgpu.shader.matrix.gfx9 import GFX950_ONLY, VARIANTS, xf32_values
from simgpu.shader.sem import minifloat
from tests import DATA
from tests.support import tiers

ARCH = "gfx942"
CODE_OBJECT = DATA / "opencl" / "mfma_gfx942.so"
RNG = np.random.default_rng(942)
F16, F32, F64, U16, U32 = np.float16, np.float32, np.float64, np.uint16, np.uint32

FP8_FNUZ, BF8_FNUZ = minifloat.FP8_FNUZ.table, minifloat.BF8_FNUZ.table


# ---------------------------------------------------------------------------------------------- layouts (AMD's eqns)


def a_lane(m: int, k_dim: int, blocks: int, i: int, k: int, b: int) -> tuple[int, int]:
    """(lane, element within the lane's registers) of A[i][k] of block b (B[k][j]: pass N and j)."""
    per = m * k_dim * blocks // 64  # elements per lane
    lane = m * b + (m * blocks * (k // per) if m * blocks < 64 else 0) + i
    return lane, k % per


def d_place(m: int, n: int, blocks: int, wide: bool, i: int, j: int, b: int) -> tuple[int, int]:
    """(register, lane) of D[i][j] of block b: the 32-bit VGPR, or for f64 the pair's first VGPR."""
    if wide:
        reg = 2 * (i // 4) if blocks == 1 else 0
        return reg, 16 * (i % 4) + (n * b if m * n < 64 else 0) + j
    reg = {32: 16 * b + 4 * (i // 8) + i % 4, 16: 4 * b + i % 4, 4: i}[m]
    lane = (n * (i // 4)) % 64 if m * n // 4 >= 64 else 0
    return reg, lane + (n * b if m * n < 64 else 0) + j


# ---------------------------------------------------------------------------------------------- running a builtin

def _registers(s, mat: np.ndarray, which: str) -> np.ndarray:
    """Per-lane register images [64, elements] of A ([B, M, K]) or B ([B, K, N]), in the matrix's storage type."""
    rows = s.m if which == "a" else s.n
    per = rows * s.k * s.blocks // 64
    out = np.zeros((64, per), mat.dtype)
    for b in range(s.blocks):
        for r in range(rows):
            for k in range(s.k):
                lane, e = a_lane(rows, s.k, s.blocks, r, k, b)
                out[lane, e] = mat[b, r, k] if which == "a" else mat[b, k, r]
    return out


def _cd_registers(s, mat: np.ndarray) -> np.ndarray:
    wide = s.out == "f64"
    nreg = s.blocks * s.m * s.n // 64
    out = np.zeros((64, nreg), mat.dtype)
    for b in range(s.blocks):
        for i in range(s.m):
            for j in range(s.n):
                reg, lane = d_place(s.m, s.n, s.blocks, wide, i, j, b)
                out[lane, reg // 2 if wide else reg] = mat[b, i, j]
    return out


def _from_cd(s, regs: np.ndarray) -> np.ndarray:
    wide = s.out == "f64"
    out = np.zeros((s.blocks, s.m, s.n), regs.dtype)
    for b in range(s.blocks):
        for i in range(s.m):
            for j in range(s.n):
                reg, lane = d_place(s.m, s.n, s.blocks, wide, i, j, b)
                out[b, i, j] = regs[lane, reg // 2 if wide else reg]
    return out


def in_both_tiers(launch):
    """`launch(tb)` on a gfx942 testbed of the interpreter, then of the JIT tier (compiling at the first dispatch,
    with registers kept and as users run it), which must end the same (tests/support/tiers.py): the interpreter's
    result."""
    reference = tiers.testbed("interpreter", 1 << 26, arch=ARCH)
    out = launch(reference)
    for tier in ("jit-lean", "jit"):
        tb = tiers.testbed(tier, 1 << 26, arch=ARCH)
        launch(tb)
        tiers.assert_same(reference, tb)
    return out


def run(name: str, a_regs: np.ndarray, b_regs: np.ndarray, c_regs: np.ndarray) -> np.ndarray:
    """Launch kernel `name` (one wave) on per-lane register images, in both tiers; D's registers per lane."""
    def launch(tb):
        k = tb.load(CODE_OBJECT.read_bytes())[name]
        d = np.zeros_like(c_regs)
        vas = [tb.upload(x) for x in (d, a_regs, b_regs, c_regs)]
        tb.launch(k, vas, (1,), (64,))
        return tb.download(vas[0], d.dtype, d.size).reshape(d.shape)
    return in_both_tiers(launch)


def _values(kind: str, shape) -> tuple[np.ndarray, np.ndarray]:
    """(storage, exact values as f64) of random inputs of `kind` whose products and sums are exact in f64."""
    if kind == "f16":
        x = (RNG.integers(-256, 256, shape) / 32).astype(F16)
        return x, x.astype(F64)
    if kind == "bf16":
        v = (RNG.integers(-64, 64, shape) / 8).astype(F32)  # bf16-exact values: eighths up to 8
        return (v.view(U32) >> U32(16)).astype(U16), v.astype(F64)
    if kind == "f32":
        v = (RNG.integers(-2048, 2048, shape) / 64).astype(F32)
        return v, v.astype(F64)
    if kind == "xf32":  # f32 words with low mantissa bits set: the matrix core sees them truncated to 10 bits
        v = RNG.integers(1, 2048, shape) * RNG.choice([-1, 1], shape) / 64  # no zeros: those bits would be denormals
        bits = v.astype(F32).view(U32) | RNG.integers(0, 1 << 13, shape, U32)
        return bits.view(F32), xf32_reference(bits)
    if kind in ("fp8", "bf8"):
        table = FP8_FNUZ if kind == "fp8" else BF8_FNUZ
        usable = np.nonzero((np.abs(table) >= 2.0 ** -4) & (np.abs(table) <= 2.0 ** 4) | (table == 0))[0]
        codes = RNG.choice(usable, shape).astype(np.uint8)  # magnitudes 2^-4..2^4: every sum is exact in f64
        return codes, table[codes]
    v = RNG.integers(-128, 128, shape).astype(np.int8)
    return v, v.astype(F64)


def xf32_reference(bits: np.ndarray) -> np.ndarray:
    """What an xf32 input is worth (module doc of matrix.gfx9): the f32 with its 13 low mantissa bits cleared, written
    here as an integer division of the mantissa (for these normal inputs) rather than a mask."""
    f = bits.view(F32).astype(F64)
    m, e = np.frexp(f)  # f = m * 2^e, 0.5 <= |m| < 1: 24 significant bits, 11 of them kept
    return np.trunc(m * 2.0 ** 11) / 2.0 ** 11 * 2.0 ** e


FLOAT_NAMES = sorted(n for n, s in VARIANTS.items() if s.out == "f32" and n not in GFX950_ONLY)
INT_NAMES = sorted(n for n, s in VARIANTS.items() if s.out == "i32" and n not in GFX950_ONLY)


def _kernel(name: str) -> str:
    return name.removeprefix("v_mfma_")


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_float_mfma_matches_the_exact_product_rounded_once(name):
    s = VARIANTS[name]
    a_st, a = _values(s.a, (s.blocks, s.m, s.k))
    b_st, b = _values(s.b, (s.blocks, s.k, s.n))
    c = (RNG.integers(-1000, 1000, (s.blocks, s.m, s.n)) / 16).astype(F32)
    want = (np.einsum("bik,bkj->bij", a, b) + c.astype(F64)).astype(F32)  # exact in f64, rounded once
    got = _from_cd(s, run(_kernel(name), _registers(s, a_st, "a"), _registers(s, b_st, "b"), _cd_registers(s, c)))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name", INT_NAMES)
def test_int8_mfma_is_exact_and_wraps(name):
    s = VARIANTS[name]
    a = RNG.integers(-128, 128, (s.blocks, s.m, s.k)).astype(np.int8)
    b = RNG.integers(-128, 128, (s.blocks, s.k, s.n)).astype(np.int8)
    c = RNG.integers(-2**31, 2**31, (s.blocks, s.m, s.n)).astype(np.int32)
    exact = np.einsum("bik,bkj->bij", a.astype(np.int64), b.astype(np.int64)) + c
    want = ((exact + 2**31) % 2**32 - 2**31).astype(np.int32)
    got = _from_cd(s, run(_kernel(name), _registers(s, a, "a"), _registers(s, b, "b"), _cd_registers(s, c)))
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name", ["v_mfma_f64_16x16x4_f64", "v_mfma_f64_4x4x4_4b_f64"])
def test_f64_mfma_is_a_chain_of_fmas_in_k_order(name):
    s = VARIANTS[name]
    a = RNG.standard_normal((s.blocks, s.m, s.k))
    b = RNG.standard_normal((s.blocks, s.k, s.n))
    c = RNG.standard_normal((s.blocks, s.m, s.n))
    want = np.zeros_like(c)
    for idx in np.ndindex(*c.shape):
        bl, i, j = idx
        acc = c[idx]
        for k in range(s.k):  # each fma rounded once: the exact value's nearest double
            acc = float(Fraction(a[bl, i, k]) * Fraction(b[bl, k, j]) + Fraction(acc))
        want[idx] = acc
    got = _from_cd(s, run(_kernel(name), _registers(s, a, "a"), _registers(s, b, "b"), _cd_registers(s, c)))
    assert np.array_equal(got, want)


def test_the_sum_is_formed_in_f64_in_k_order_from_c():
    """The documented model: C + p0 + p1 + ... in f64, then one rounding. C = 2^60, products 1, -2^60, 0, ...: in that
    order 2^60 + 1 rounds to 2^60 and the result is 0 (the exact sum is 1)."""
    s = VARIANTS["v_mfma_f32_16x16x4_f32"]
    a = np.zeros((1, 16, 4), F32)
    b = np.zeros((1, 4, 16), F32)
    a[0, :, 0], b[0, 0, :] = 1.0, 1.0
    a[0, :, 1], b[0, 1, :] = -(2.0 ** 30), 2.0 ** 30
    c = np.full((1, 16, 16), 2.0 ** 60, F32)
    got = _from_cd(s, run("f32_16x16x4_f32", _registers(s, a, "a"), _registers(s, b, "b"), _cd_registers(s, c)))
    assert (got == 0).all()


def test_xf32_truncates_toward_zero_and_keeps_nan():
    words = np.array([0x3F801FFF, 0xBF801FFF, 0x3F802000, 0x7F800001, 0x7FC00000, 0x00001FFF, 0x7F7FFFFF], U32)
    got = xf32_values(words)
    assert got[0] == 1.0 and got[1] == -1.0 and got[2] == 1.0 + 2.0 ** -10  # toward zero, either sign
    assert np.isnan(got[3]) and np.isnan(got[4])  # a NaN whose payload sits in the cleared bits stays NaN
    assert got[5] == 0.0 and got[6] == float.fromhex("0x1.ffcp+127")


def test_fnuz_fp8_formats():
    """gfx942's fp8 / bf8: E4M3FNUZ (bias 8) and E5M2FNUZ (bias 16), 0x80 NaN, no infinities or -0."""
    assert FP8_FNUZ[0x40] == 1.0 and FP8_FNUZ[0x7F] == 240.0 and FP8_FNUZ[0x01] == 2.0 ** -10
    assert FP8_FNUZ[0xC0] == -1.0 and np.isnan(FP8_FNUZ[0x80]) and not np.isinf(FP8_FNUZ).any()
    assert BF8_FNUZ[0x40] == 1.0 and BF8_FNUZ[0x7F] == 57344.0 and BF8_FNUZ[0x01] == 2.0 ** -17
    assert np.isnan(BF8_FNUZ[0x80]) and np.isnan(FP8_FNUZ).sum() == np.isnan(BF8_FNUZ).sum() == 1


def test_gemm_f16_tiles_from_clang():
    """A 64 x 64 x 64 f16 product from four waves of 32x32x8 MFMAs accumulating in AccVGPRs (clang's loop)."""
    n = 64
    a = (RNG.standard_normal((n, n)) * 2).astype(F16)
    b = (RNG.standard_normal((n, n)) * 2).astype(F16)

    def launch(tb):
        k = tb.load(CODE_OBJECT.read_bytes())["gemm_f16"]
        vas = [tb.upload(np.zeros((n, n), F32)), tb.upload(a), tb.upload(b), n]
        tb.launch(k, vas, (2, 2), (64,))
        return tb.download(vas[0], F32, n * n).reshape(n, n)
    got = in_both_tiers(launch)
    want = np.zeros((n, n), F32)
    a64, b64 = a.astype(F64), b.astype(F64)
    for k0 in range(0, n, 8):  # each MFMA: its 8 products added to the f32 accumulator in f64, rounded once
        want = (want.astype(F64) + a64[:, k0:k0 + 8] @ b64[k0:k0 + 8, :]).astype(F32)
    assert np.array_equal(got, want)


# ---------------------------------------------------------------------------------------------- broadcasts

# kernel -> (variant, CBSZ, ABID, BLGP): mfma.cl's MFMA_MOD kernels
BROADCASTS = {f"{_kernel(n)}_c{c}_a{a}_b{b}": (n, c, a, b) for n, c, a, b in (
    ("v_mfma_f32_4x4x4_16b_f16", 2, 3, 7), ("v_mfma_f32_16x16x1_4b_f32", 1, 1, 3),
    ("v_mfma_f32_32x32x1_2b_f32", 1, 0, 1), ("v_mfma_i32_4x4x4_16b_i8", 4, 13, 5),
    ("v_mfma_f32_16x16x4_4b_bf16", 2, 2, 2), ("v_mfma_f32_16x16x4_f32", 0, 0, 6), ("v_mfma_f32_32x32x8_f16", 0, 0, 4))}


def blgp_source(blgp: int, lane: int) -> int:
    """The register lane whose B data the matrix core's `lane` receives (the calculator's README, "BLGP"): 3 rotates
    the lanes down by 16 (lane 16's data arrives in lane 0), the others broadcast one group of lanes to the rest."""
    if blgp == 0:
        return lane
    if blgp == 3:
        return (lane + 16) % 64
    start, width = {1: (0, 32), 2: (32, 32), 4: (0, 16), 5: (16, 16), 6: (32, 16), 7: (48, 16)}[blgp]
    return start + lane % width


@pytest.mark.parametrize("kernel", sorted(BROADCASTS))
def test_cbsz_abid_broadcast_a_blocks_and_blgp_swizzles_b_lanes(kernel):
    """Block b multiplies A's block (b // 2^CBSZ) * 2^CBSZ + ABID (the calculator's README: CBSZ=1 ABID=1 puts block
    1 in place of blocks 0 and 1, block 3 in place of 2 and 3) by the B its lanes receive under BLGP."""
    name, cbsz, abid, blgp = BROADCASTS[kernel]
    s = VARIANTS[name]
    a_st, a = _values(s.a, (s.blocks, s.m, s.k))
    b_st, b = _values(s.b, (s.blocks, s.k, s.n))
    b_regs = _registers(s, b_st, "b")
    b_seen = np.zeros_like(b)  # what the matrix core multiplies: B's entries from the lanes BLGP names
    for bl in range(s.blocks):
        for k in range(s.k):
            for j in range(s.n):
                lane, e = a_lane(s.n, s.k, s.blocks, j, k, bl)
                b_seen[bl, k, j] = _values_of(s.b, b_regs[blgp_source(blgp, lane), e])
    a_seen = a[[(bl >> cbsz << cbsz) + abid for bl in range(s.blocks)]]
    got = run(kernel, _registers(s, a_st, "a"), b_regs, _cd_registers(s, np.zeros((s.blocks, s.m, s.n),
                                                                                 np.int32 if s.out == "i32" else F32)))
    exact = np.einsum("bik,bkj->bij", a_seen, b_seen)
    if s.out == "i32":
        want = ((exact.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)
    else:
        want = exact.astype(F32)
    assert not np.array_equal(want, np.einsum("bik,bkj->bij", a, b).astype(want.dtype)), "the broadcast changes nothing"
    assert np.array_equal(_from_cd(s, got), want)


def _values_of(kind: str, stored) -> float:
    """The value of one stored input of `kind` (the storage _values makes)."""
    if kind == "bf16":
        return float(np.array([int(stored) << 16], U32).view(F32)[0])
    return float(stored)


def test_every_kernel_of_the_code_object_is_tested():
    co = read_code_object(CODE_OBJECT.read_bytes())
    assert co.processor == ARCH
    assert set(co.kernels) == {_kernel(n) for n in FLOAT_NAMES + INT_NAMES} | {
        "f64_16x16x4_f64", "f64_4x4x4_4b_f64", "gemm_f16"} | set(BROADCASTS)


@pytest.mark.skipif(shutil.which("/usr/lib/llvm-19/bin/clang") is None, reason="needs clang-19 and lld-19")
def test_committed_code_object_is_what_the_generator_builds():
    from tools import gen_opencl_corpus
    assert gen_opencl_corpus.build(gen_opencl_corpus.DIR / "mfma.cl", arch=ARCH) == CODE_OBJECT.read_bytes()


# ---------------------------------------------------------------------------------------------- AccVGPRs, faults

PRO = """
s_load_dwordx4 s[4:7], s[0:1], 0x0
v_lshlrev_b32_e32 v1, 2, v0
s_waitcnt lgkmcnt(0)
"""


def run_asm(body: str, inputs: list[np.ndarray], agprs: int = 8, vgprs: int = 8, block=(64,)) -> list[np.ndarray]:
    def launch(tb):
        k = tb.load_asm(PRO + body + "\ns_endpgm", args=2, vgprs=vgprs, agprs=agprs)
        vas = [tb.upload(x) for x in inputs]
        tb.launch(k, vas + [0] * (2 - len(vas)), (1,), block)
        return [tb.download(va, x.dtype, x.size).reshape(x.shape) for va, x in zip(vas, inputs, strict=True)]
    return in_both_tiers(launch)


def test_accvgpr_moves_and_memory_with_the_acc_bit():
    """a0..a3 live past the ArchVGPRs in the unified file: writes, reads, moves, loads into and stores from them."""
    x = RNG.integers(0, 2**32, 64, dtype=np.uint64).astype(U32)
    out = np.zeros((4, 64), U32)
    body = """
    global_load_dword a1, v1, s[4:5]
    s_waitcnt vmcnt(0)
    v_accvgpr_mov_b32 a2, a1
    v_accvgpr_write_b32 a3, 7
    v_accvgpr_read_b32 v2, a2
    v_xor_b32_e32 v2, 0x5555, v2
    v_accvgpr_write_b32 a0, v2
    global_store_dword v1, a0, s[6:7]
    global_store_dword v1, a1, s[6:7] offset:256
    global_store_dword v1, a3, s[6:7] offset:512
    v_accvgpr_read_b32 v3, a3
    ds_write_b32 v1, a2
    s_waitcnt lgkmcnt(0)
    ds_read_b32 a3, v1
    s_waitcnt lgkmcnt(0)
    global_store_dword v1, a3, s[6:7] offset:768
    """

    def launch(tb):
        k = tb.load_asm(PRO + body + "\ns_endpgm", args=2, vgprs=4, agprs=4, lds=256)
        vas = [tb.upload(x), tb.upload(out)]
        tb.launch(k, vas, (1,), (64,))
        return tb.download(vas[1], U32, out.size).reshape(out.shape)
    got = in_both_tiers(launch)
    assert np.array_equal(got[0], x ^ U32(0x5555)) and np.array_equal(got[1], x)
    assert (got[2] == 7).all() and np.array_equal(got[3], x)


def test_an_agpr_past_the_allocation_is_an_illegal_instruction():
    with pytest.raises(HardwareFault) as e:
        run_asm("v_accvgpr_write_b32 a9, 1", [np.zeros(64, U32)], agprs=8, vgprs=8)
    assert e.value.kind == "illegal_instruction" and "a9 is past the 8 AccVGPRs" in str(e.value)


@pytest.mark.parametrize(("text", "why"), [
    ("v_mfma_f32_16x16x4_f32 a[0:3], v0, v1, 0 cbsz:1", "cbsz:1 abid:0 is outside the broadcasts of its 1 block"),
    ("v_mfma_f32_32x32x1_2b_f32 a[0:31], v0, v1, 0 cbsz:1 abid:2", "cbsz:1 abid:2 is outside the broadcasts"),
])
def test_what_is_not_modelled_is_an_illegal_instruction(text, why):
    with pytest.raises(HardwareFault) as e:
        run_asm(text, [np.zeros(64, U32)], agprs=32, vgprs=8)
    assert e.value.kind == "illegal_instruction" and why in str(e.value)


def test_mfma_ignores_exec():
    """EXEC holds 16 lanes (then none): the MFMA still reads A, B from every lane and writes D to every lane."""
    out = np.zeros((8, 64), U32)
    body = """
    v_mov_b32_e32 v2, 1.0
    v_mov_b32_e32 v3, 2.0
    s_mov_b64 exec, 0xffff
    v_mfma_f32_16x16x4_f32 a[0:3], v2, v3, 0
    s_mov_b64 exec, 0
    v_mfma_f32_16x16x4_f32 a[4:7], v2, v3, 1.0
    s_mov_b64 exec, -1
    s_nop 7
    s_nop 7
    """ + "".join(f"global_store_dword v1, a{r}, s[4:5] offset:{256 * r}\n" for r in range(8))
    got = run_asm(body, [out], agprs=8)[0]
    assert (got[:4].view(F32) == 8.0).all() and (got[4:].view(F32) == 9.0).all()
