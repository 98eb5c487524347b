"""The fp8/bf8 (and fp6/bf6/fp4) conversions (sem/minifloat.py, vector/cvt8.py; docs/shader.md): the formats against
ml_dtypes, exhaustively for decoding and on random and special values for round-to-nearest-even encoding, and
hand-assembled kernels on gfx942 (FNUZ), gfx950 and gfx1201 (OCP; gfx1201 in both tiers) against ml_dtypes."""

from __future__ import annotations

import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from simgpu.fault import HardwareFault
from simgpu.isa import assemble
from simgpu.isa.codeobject import read_code_object
from simgpu.isa.objdump import disassemble_text
from simgpu.shader.sem import minifloat as mf
from tests import DATA
from tests.simgpu.shader import test_corpus_opencl_gfx1201 as gfx1201_stack
from tests.support import tiers
from tools import gen_opencl_corpus

F32, U32, U8 = np.float32, np.uint32, np.uint8

DTYPES = {
    mf.FP8: ml_dtypes.float8_e4m3fn, mf.BF8: ml_dtypes.float8_e5m2, mf.FP8_FNUZ: ml_dtypes.float8_e4m3fnuz,
    mf.BF8_FNUZ: ml_dtypes.float8_e5m2fnuz, mf.FP6: ml_dtypes.float6_e2m3fn, mf.BF6: ml_dtypes.float6_e3m2fn,
    mf.FP4: ml_dtypes.float4_e2m1fn,
}
FORMATS = list(DTYPES)


def ref_encode(x: np.ndarray, dt) -> np.ndarray:
    """ml_dtypes' round-to-nearest-even conversion of f32 values, as codes."""
    with np.errstate(all="ignore"):
        return np.asarray(x, F32).astype(dt).view(U8).astype(U32)


def ref_decode(codes: np.ndarray, dt) -> np.ndarray:
    return np.asarray(codes, U8).view(dt).astype(np.float64)


def f32_inputs(fmt: mf.Format, n: int, seed: int) -> np.ndarray:
    """Random f32 bit patterns, every finite value of `fmt` and its neighbours one f32 step either side, every
    halfway point between neighbouring values (the ties), values around the largest finite one, and the specials."""
    rng = np.random.default_rng(seed)
    vals = np.unique(np.abs(fmt.table[np.isfinite(fmt.table)]))
    mids = ((vals[1:] + vals[:-1]) / 2).astype(F32)
    exact = vals.astype(F32)
    near = np.concatenate([np.nextafter(exact, np.inf, dtype=F32), np.nextafter(exact, -np.inf, dtype=F32),
                           np.nextafter(mids, np.inf, dtype=F32), np.nextafter(mids, -np.inf, dtype=F32)])
    top = fmt.max_finite
    edge = np.array([top, top * 1.03, top * 1.07, top * 1.2, top * 2, 2 * vals[1] / 3, vals[1] / 2, vals[1] / 3], F32)
    special = np.array([0.0, np.inf, 1e38, 3.4e38, 1e-40, 1e-45], F32)
    wide = rng.integers(0, 2**32, n, dtype=np.uint64).astype(U32).view(F32)
    scaled = (rng.standard_normal(n) * top / 4).astype(F32)
    pos = np.concatenate([exact, mids, near, edge, special, np.abs(scaled)])
    return np.concatenate([pos, -pos, wide, scaled])


# ---------------------------------------------------------------------------------------------- the formats


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_decode_is_ml_dtypes_on_every_code(fmt):
    codes = np.arange(1 << fmt.bits)
    np.testing.assert_array_equal(fmt.decode(codes), ref_decode(codes, DTYPES[fmt]))


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_encode_is_ml_dtypes_round_to_nearest_even(fmt):
    x = f32_inputs(fmt, 200_000, seed=fmt.bits)
    if fmt.kind == "mx":  # ml_dtypes' NaN result for these formats depends on the NaN's bits: checked apart
        x = x[~np.isnan(x)]
    got, want = fmt.encode(x), ref_encode(x, DTYPES[fmt])
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(float(x[i]), int(got[i]), int(want[i])) for i in bad[:8]]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_saturation_nan_and_zeros(fmt):
    top = fmt.max_finite
    big = np.array([top * 4, np.inf, -top * 4, -np.inf])
    max_code = int(fmt.encode(np.array([top]))[0])
    sign = 1 << (fmt.bits - 1)
    assert list(fmt.encode(big, saturate=True)) == [max_code, max_code, max_code | sign, max_code | sign]
    nan = int(fmt.encode(np.array([np.nan]))[0])
    assert nan == {"fnuz": 0x80, "mx": 0}.get(fmt.kind, fmt.nan_code)
    zeros = fmt.encode(np.array([0.0, -0.0, -fmt.table[1] / 4]))
    assert list(zeros) == ([0, 0, 0] if fmt.kind == "fnuz" else [0, sign, sign])


def dither(x: np.ndarray, rnd: np.ndarray, man_bits: int) -> np.ndarray:
    """The pseudo-code's stochastic step written out per value: mantissa + S1[31:9 + M], wrapped to 23 bits."""
    out = []
    for b, r in zip(np.asarray(x, F32).view(U32).tolist(), np.asarray(rnd, U32).tolist(), strict=True):
        m = ((b & 0x7FFFFF) + (r >> (9 + man_bits))) & 0x7FFFFF
        out.append((b & 0xFF800000) | m)
    return np.array(out, U32).view(F32)


def test_stochastic_dither_is_the_pseudo_codes():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(U32)
    r = rng.integers(0, 2**32, 5000, dtype=np.uint64).astype(U32)
    for m in (2, 3):
        np.testing.assert_array_equal(mf.stochastic_dither(x, r, m).view(F32).view(U32),
                                      dither(x.view(F32), r, m).view(U32))
    # a random dword of 0 rounds to nearest even; all ones adds just under one fp8 step (truncation toward the next)
    assert mf.stochastic_dither(np.array([0x3F800000], U32), np.array([0xFFFFFFFF], U32), 3)[0] == 0x3F8FFFFF


# ---------------------------------------------------------------------------------------------- kernels


# Workgroups of 256; each lane reads 8 dwords at in[lane] (a, b, random, old D, four fp8 code words) and writes 8
# dwords at out[lane].
BODY = {
    "gfx9": """
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_lshl_b32 s8, s2, 8
v_add_u32_e32 v1, s8, v0
v_lshlrev_b32_e32 v1, 5, v1
s_waitcnt lgkmcnt(0)
global_load_dwordx4 v[2:5], v1, s[4:5] offset:0
global_load_dwordx4 v[6:9], v1, s[4:5] offset:16
s_waitcnt vmcnt(0)
v_mov_b32_e32 v10, v5
v_mov_b32_e32 v11, v5
v_mov_b32_e32 v12, v5
v_mov_b32_e32 v13, v5
{cvt}
v_cvt_f32_fp8_sdwa v14, v6 src0_sel:BYTE_2
v_cvt_f32_bf8_e32 v15, v7
v_cvt_pk_f32_fp8_sdwa v[16:17], v8 src0_sel:WORD_1
global_store_dwordx4 v1, v[10:13], s[6:7] offset:0
global_store_dwordx4 v1, v[14:17], s[6:7] offset:16
s_endpgm
""",
    "gfx12": """
s_load_b128 s[4:7], s[0:1], 0x0
s_lshl_b32 s8, ttmp9, 8
v_add_nc_u32_e32 v1, s8, v0
v_lshlrev_b32_e32 v1, 5, v1
s_wait_kmcnt 0x0
global_load_b128 v[2:5], v1, s[4:5] offset:0
global_load_b128 v[6:9], v1, s[4:5] offset:16
s_wait_loadcnt 0x0
v_mov_b32_e32 v10, v5
v_mov_b32_e32 v11, v5
v_mov_b32_e32 v12, v5
v_mov_b32_e32 v13, v5
{cvt}
v_cvt_f32_fp8_e64 v14, v6 byte_sel:2
v_cvt_f32_bf8_e32 v15, v7
v_cvt_pk_f32_fp8_e64 v[16:17], v8 op_sel:[1,0]
global_store_b128 v1, v[10:13], s[6:7] offset:0
global_store_b128 v1, v[14:17], s[6:7] offset:16
s_endpgm
""",
}
# the conversions to fp8/bf8: pk_fp8 into the low half, pk_bf8 into the high half, sr_fp8 into byte 1, sr_bf8 byte 3
CVT = {
    "gfx9": ["v_cvt_pk_fp8_f32 v10, v2, v3", "v_cvt_pk_bf8_f32 v11, v2, -v3 op_sel:[0,0,1]",
             "v_cvt_sr_fp8_f32 v12, v2, v4 op_sel:[0,0,1,0]", "v_cvt_sr_bf8_f32 v13, |v2|, v4 op_sel:[0,0,1,1]"],
    "gfx12": ["v_cvt_pk_fp8_f32 v10, v2, v3", "v_cvt_pk_bf8_f32 v11, v2, -v3 op_sel:[0,0,1]",
              "v_cvt_sr_fp8_f32 v12, v2, v4 byte_sel:1", "v_cvt_sr_bf8_f32 v13, |v2|, v4 byte_sel:3"],
}


SETREG_FP16_OVFL = "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 23, 1), 1"  # what Triton writes before its fp8 casts


def run_cvt(arch: str, tier: str, lanes_in: np.ndarray, sat: str) -> np.ndarray:
    """The kernel above over len(lanes_in) lanes in workgroups of 256. sat "clamp" sets the VOP3 clamp bit of the four
    conversions to fp8/bf8 (LLVM cannot write it: the words are patched after loading), "fp16_ovfl" sets MODE.FP16_OVFL
    before them."""
    family = "gfx9" if arch.startswith("gfx9") else "gfx12"
    tb = tiers.testbed(tier, arch=arch)
    cvt = ([SETREG_FP16_OVFL] if sat == "fp16_ovfl" else []) + CVT[family]
    text = BODY[family].format(cvt="\n".join(cvt))
    k = tb.load_asm(text, args=2, vgprs=24)
    if sat == "clamp":
        start = len(assemble(BODY[family].split("{cvt}")[0], arch=arch))
        words = bytearray(assemble("\n".join(CVT[family]), arch=arch))
        for off in range(0, len(words), 8):
            words[off + 1] |= 0x80  # VOP3 clamp
        tb.write(k.code_address + start, bytes(words))
    n = len(lanes_in)
    src, dst = tb.upload(lanes_in), tb.upload(np.zeros((n, 8), U32))
    tb.launch(k, [src, dst], (n // 256,), (256,))
    return tb.download(dst, U32, n * 8).reshape(n, 8)


def lanes_for(fmt: mf.Format, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = f32_inputs(fmt, n, seed)
    x = np.resize(x[rng.permutation(len(x))], (2, n))
    rows = np.zeros((n, 8), U32)
    rows[:, 0], rows[:, 1] = x[0].view(U32), x[1].view(U32)
    rows[:, 2:4] = rng.integers(0, 2**32, (n, 2), dtype=np.uint64).astype(U32)
    rows[:, 4:8] = rng.integers(0, 2**32, (n, 4), dtype=np.uint64).astype(U32)
    return rows


def expected(arch: str, rows: np.ndarray, sat: str) -> np.ndarray:
    fp8, bf8 = (mf.FP8_FNUZ, mf.BF8_FNUZ) if arch == "gfx942" else (mf.FP8, mf.BF8)
    a, b, rnd, old = rows[:, 0].view(F32), rows[:, 1].view(F32), rows[:, 2], rows[:, 3]

    def enc(fmt, x):
        # saturation: clamp (every non-NaN value) or FP16_OVFL (finite values) to +-max first, then ml_dtypes' rounding
        keep = np.isnan(x) if sat == "clamp" else ~np.isfinite(x) if sat == "fp16_ovfl" else np.ones(x.shape, bool)
        x = np.where(keep, x, np.clip(x, -fmt.max_finite, fmt.max_finite)).astype(F32)
        return ref_encode(x, DTYPES[fmt])

    out = np.zeros((len(rows), 8), U32)
    out[:, 0] = (old & U32(0xFFFF0000)) | enc(fp8, a) | enc(fp8, b) << U32(8)
    out[:, 1] = (old & U32(0x0000FFFF)) | (enc(bf8, a) | enc(bf8, -b) << U32(8)) << U32(16)
    out[:, 2] = (old & U32(0xFFFF00FF)) | enc(fp8, dither(a, rnd, 3)) << U32(8)
    out[:, 3] = (old & U32(0x00FFFFFF)) | enc(bf8, dither(np.abs(a), rnd, 2)) << U32(24)
    with np.errstate(all="ignore"):
        out[:, 4] = ref_decode((rows[:, 4] >> U32(16)) & U32(0xFF), DTYPES[fp8]).astype(F32).view(U32)
        out[:, 5] = ref_decode(rows[:, 5] & U32(0xFF), DTYPES[bf8]).astype(F32).view(U32)
        for i in range(2):
            out[:, 6 + i] = ref_decode((rows[:, 6] >> U32(16 + 8 * i)) & U32(0xFF), DTYPES[fp8]).astype(F32).view(U32)
    return out


def assert_lanes(got: np.ndarray, want: np.ndarray, rows: np.ndarray) -> None:
    nan = np.isnan(want[:, 4:].view(F32)) & np.isnan(got[:, 4:].view(F32))  # a decoded NaN: any NaN
    ok = np.concatenate([got[:, :4] == want[:, :4], (got[:, 4:] == want[:, 4:]) | nan], axis=1)
    bad = np.argwhere(~ok)
    assert bad.size == 0, [(int(i), int(j), hex(int(rows[i, 0])), hex(int(rows[i, 1])), hex(int(got[i, j])),
                            hex(int(want[i, j]))) for i, j in bad[:8]]


@pytest.mark.parametrize("sat", ["none", "clamp", "fp16_ovfl"])
@pytest.mark.parametrize("arch,tier", [("gfx942", "interpreter"), ("gfx950", "interpreter"),
                                       ("gfx1201", "interpreter"), ("gfx1201", "jit")])
def test_kernel_conversions_are_ml_dtypes(arch, tier, sat):
    fmt = mf.FP8_FNUZ if arch == "gfx942" else mf.FP8
    rows = lanes_for(fmt, 4096, seed=len(arch) + len(sat))
    got = run_cvt(arch, tier, rows, sat)
    assert_lanes(got, expected(arch, rows, sat), rows)


def test_kernel_bf8_ranges():
    """The same kernel on values spread over bf8's (much wider) range: pk_bf8's and sr_bf8's rounding, overflow."""
    for arch in ("gfx942", "gfx1201"):
        fmt = mf.BF8_FNUZ if arch == "gfx942" else mf.BF8
        rows = lanes_for(fmt, 2048, seed=5)
        rows[:, 1] = rows[:, 0]
        for sat in ("none", "fp16_ovfl"):
            got = run_cvt(arch, "interpreter", rows, sat)
            assert_lanes(got, expected(arch, rows, sat), rows)


# ---------------------------------------------------------------------------------------------- clang-19's code

OPENCL = DATA / "opencl"
N = 1024  # lanes: four workgroups of 256


def clang_code(arch: str) -> Path:
    return OPENCL / f"fp8_{arch}.so"


def clang_inputs(arch: str) -> list[np.ndarray]:
    fmt = mf.FP8_FNUZ if arch == "gfx942" else mf.FP8
    rows = lanes_for(fmt, N, seed=11)
    wide = lanes_for(mf.BF8_FNUZ if arch == "gfx942" else mf.BF8, N, seed=12)
    b = np.where(np.arange(N) % 2 == 0, rows[:, 1], wide[:, 0]).astype(U32)  # b spans bf8's range in half the lanes
    return [rows[:, 0].view(F32), b.view(F32), rows[:, 2], rows[:, 3], rows[:, 4]]


def clang_expected(arch: str, a, b, rnd, old, codes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fp8, bf8 = (mf.FP8_FNUZ, mf.BF8_FNUZ) if arch == "gfx942" else (mf.FP8, mf.BF8)
    f, g = DTYPES[fp8], DTYPES[bf8]

    def pair(dt, x, y):
        return ref_encode(x, dt) | ref_encode(y, dt) << U32(8)

    to = np.zeros((N, 4), U32)
    to[:, 0] = pair(f, a, b) | pair(g, a, b) << U32(16)
    to[:, 1] = ((old & U32(0x00FF00FF)) | ref_encode(dither(a, rnd, 3), f) << U32(8)
                | ref_encode(dither(b, rnd, 2), g) << U32(24))
    to[:, 2] = pair(f, b, a) << U32(16) | pair(g, b, a)
    to[:, 3] = ref_encode(dither(b, rnd, 3), f) | ref_encode(dither(a, rnd, 2), g) << U32(16)
    byte = [(codes >> U32(8 * k)) & U32(0xFF) for k in range(4)]
    with np.errstate(all="ignore"):
        dec = [ref_decode(byte[k], f) for k in (0, 1, 2, 3)] + [ref_decode(byte[k], g) for k in (1, 2)]
        dec += [ref_decode(byte[k], f) for k in (2, 3)]
        frm = np.stack(dec, axis=1).astype(F32)
        pk = np.stack([ref_decode(byte[k], g) for k in (0, 1)], axis=1).astype(F32)
    return to, frm, pk


def same_floats(got: np.ndarray, want: np.ndarray) -> bool:
    return bool(((got.view(U32) == want.view(U32)) | (np.isnan(got) & np.isnan(want))).all())


@pytest.mark.parametrize("arch,queue,tier", [("gfx942", "pm4", "interpreter"), ("gfx942", "aql", "interpreter"),
                                             ("gfx1201", "pm4", "interpreter"), ("gfx1201", "aql", "interpreter"),
                                             ("gfx1201", "pm4", "jit"), ("gfx1201", "aql", "jit")])
def test_clang_fp8_builtins_are_ml_dtypes(arch, queue, tier):
    """clang-19's __builtin_amdgcn_cvt_{pk,sr}_{fp8,bf8}_f32 and cvt_{f32,pk_f32}_{fp8,bf8} (tests/data/opencl/fp8.cl)
    through the runtime's queue: every result against ml_dtypes."""
    a, b, rnd, old, codes = clang_inputs(arch)
    code = clang_code(arch).read_bytes()
    launch = gfx1201_stack.launch
    (to, *_), _, _ = launch(queue, tier, "to_fp8", [np.zeros((N, 4), U32), a, b, rnd, old], (N // 256,), (256,),
                            arch, code)
    (frm, _), _, _ = launch(queue, tier, "from_fp8", [np.zeros((N, 8), F32), codes], (N // 256,), (256,), arch, code)
    (pk, _), _, _ = launch(queue, tier, "from_bf8_pk", [np.zeros((N, 2), F32), codes], (N // 256,), (256,), arch, code)
    want_to, want_frm, want_pk = clang_expected(arch, a, b, rnd, old, codes)
    bad = np.argwhere(to != want_to)
    assert bad.size == 0, [(int(i), int(j), hex(int(to[i, j])), hex(int(want_to[i, j]))) for i, j in bad[:8]]
    assert same_floats(frm, want_frm) and same_floats(pk, want_pk)


@pytest.mark.parametrize("arch", ["gfx942", "gfx1201"])
def test_clang_code_holds_the_conversions(arch):
    text = "\n".join(disassemble_text(read_code_object(clang_code(arch).read_bytes())))
    for name in ("v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32", "v_cvt_sr_fp8_f32", "v_cvt_sr_bf8_f32", "v_cvt_f32_fp8",
                 "v_cvt_f32_bf8", "v_cvt_pk_f32_fp8", "v_cvt_pk_f32_bf8"):
        assert name in text, name


@pytest.mark.skipif(shutil.which("/usr/lib/llvm-19/bin/clang") is None, reason="needs clang-19 and lld-19")
@pytest.mark.parametrize("arch", ["gfx942", "gfx1201"])
def test_committed_clang_code_is_what_the_generator_builds(arch):
    assert gen_opencl_corpus.build(OPENCL / "fp8.cl", arch=arch) == clang_code(arch).read_bytes()


# ---------------------------------------------------------------------------------------------- hostile words

FUZZ_LINES = {
    "gfx942": ["v_cvt_pk_fp8_f32 v1, v2, v3", "v_cvt_sr_bf8_f32 v1, v2, v3", "v_cvt_f32_fp8_e64 v1, v2",
               "v_cvt_pk_f32_bf8_e64 v[2:3], v2"],
    "gfx1201": ["v_cvt_pk_bf8_f32 v1, v2, v3", "v_cvt_sr_fp8_f32 v1, v2, v3", "v_cvt_f32_bf8_e64 v1, v2",
                "v_cvt_pk_f32_fp8_e64 v[2:3], v2"],
    "gfx950": ["v_cvt_scalef32_pk_fp8_f32 v1, v2, v3, v4", "v_cvt_scalef32_sr_pk_fp4_f32 v1, v[2:3], v3, v4",
               "v_cvt_scalef32_pk32_f32_fp6 v[0:31], v[32:37], v38", "v_cvt_scalef32_2xpk16_fp6_f32 v[0:5], v[6:21], "
               "v[22:37], v38", "v_cvt_scalef32_sr_pk32_bf6_bf16 v[0:5], v[6:21], v22, v23",
               "v_cvt_scalef32_f16_fp8 v1, v2, v3", "v_cvt_sr_f16_f32 v1, v2, v3", "v_ashr_pk_u8_i32 v1, v2, v3, v4"],
}


@pytest.mark.parametrize("arch", sorted(FUZZ_LINES))
def test_random_words_of_the_conversions_end_or_fault_cleanly(arch):
    """Each conversion's VOP3 word with random operand and modifier bits (registers past the allocation, SGPR and
    constant sources for wide operands, every op_sel): the kernel ends, or faults as illegal_instruction, never with
    an internal error; twice the same bytes."""
    rng = np.random.default_rng(31)
    for line in FUZZ_LINES[arch]:
        word = int.from_bytes(assemble(line, arch=arch), "little")
        for _ in range(6):
            # keep the opcode and encoding bits (VOP3: 25:16 and 31:26); randomise vdst, abs, op_sel, clamp, the
            # sources, omod and neg
            rand = int(rng.integers(0, 2**63, dtype=np.int64)) << 1 | int(rng.integers(0, 2))
            keep = 0x0000_0000_FFFF_0000
            bits = (word & keep) | (rand & ~keep & 0xFFFF_FFFF_FFFF_FFFF)
            results = []
            for _ in range(2):
                tb = tiers.testbed("interpreter", arch=arch)
                body = "v_mov_b32_e32 v1, 0x3f800000\nv_mov_b32_e32 v2, 0x40490fdb\n"
                k = tb.load_asm(body + "s_nop 0\ns_nop 0\ns_endpgm", args=0, vgprs=40)
                tb.write(k.code_address + len(assemble(body, arch=arch)), bits.to_bytes(8, "little"))
                try:
                    tb.launch(k, [], (1,), (64,))
                    state = tb.engine.exit_states[-1][0]  # the batch's final registers (tiers.on_tier keeps them)
                    results.append(state.vgpr.tobytes())
                except HardwareFault as e:
                    assert e.kind == "illegal_instruction", (line, hex(bits), str(e))
                    results.append(e.kind.encode())
            assert results[0] == results[1], (line, hex(bits))


@pytest.mark.parametrize("arch,tier", [("gfx942", "interpreter"), ("gfx1201", "interpreter"), ("gfx1201", "jit")])
def test_dpp_forms_read_the_permuted_lane_and_write_the_enabled_rows(arch, tier):
    """v_cvt_f32_fp8_dpp (gfx942, gfx1201) and gfx1201's v_cvt_pk_fp8_f32_e64_dpp: src0 from the quad_perm lane, only
    the rows row_mask enables written (the others keep their value)."""
    gfx9 = arch == "gfx942"
    tb = tiers.testbed(tier, arch=arch)
    dpp = "quad_perm:[1,0,3,2] row_mask:0x5 bank_mask:0xf"
    lines = ["v_mov_b32_e32 v4, -1", "v_mov_b32_e32 v5, -1", f"v_cvt_f32_fp8_dpp v4, v2 {dpp}"]
    if not gfx9:
        lines.append(f"v_cvt_pk_fp8_f32_e64_dpp v5, v2, v3 {dpp}")
    load, store = (("global_load_dwordx2 v[2:3], v1, s[4:5]", "global_store_dwordx2 v1, v[4:5], s[6:7]") if gfx9 else
                   ("global_load_b64 v[2:3], v1, s[4:5]", "global_store_b64 v1, v[4:5], s[6:7]"))
    wait = "s_waitcnt vmcnt(0)" if gfx9 else "s_wait_loadcnt 0x0"
    kload = "s_load_dwordx4 s[4:7], s[0:1], 0x0\ns_waitcnt lgkmcnt(0)" if gfx9 else \
        "s_load_b128 s[4:7], s[0:1], 0x0\ns_wait_kmcnt 0x0"
    body = "\n".join([kload, "v_lshlrev_b32_e32 v1, 3, v0", load, wait, *lines, store, "s_endpgm"])
    k = tb.load_asm(body, args=2, vgprs=8)
    rng = np.random.default_rng(2)
    x = np.zeros((64, 2), U32)
    x[:, 0] = rng.integers(0, 256, 64)
    x[:, 1] = rng.standard_normal(64).astype(F32).view(U32)
    src, dst = tb.upload(x), tb.upload(np.zeros((64, 2), U32))
    tb.launch(k, [src, dst], (1,), (64,))
    got = tb.download(dst, U32, 128).reshape(64, 2)
    fmt = mf.FP8_FNUZ if gfx9 else mf.FP8
    lane = np.arange(64)
    perm = (lane & ~3) | np.array([1, 0, 3, 2])[lane & 3]
    written = ((lane // 16) % 2) == 0  # row_mask 0x5: rows 0 and 2
    want0 = np.where(written, fmt.decode(x[perm, 0]).astype(F32).view(U32), U32(0xFFFFFFFF))
    assert np.array_equal(got[:, 0], want0)
    if not gfx9:  # src0 from the permuted lane, src1 from the lane itself; the high word kept
        a, b = x[perm, 0].view(F32), x[:, 1].view(F32)
        pk = U32(0xFFFF0000) | fmt.encode(a) | fmt.encode(b) << U32(8)
        assert np.array_equal(got[:, 1], np.where(written, pk, U32(0xFFFFFFFF)))
