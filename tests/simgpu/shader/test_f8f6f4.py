"""gfx950's f8f6f4 MFMAs and scaled MFMAs (simgpu/shader/matrix/f8f6f4.py): LLVM 22's (llvmlite) code for
tests/data/kernels/cdna4_f8f6f4.ll, compiled at test time, on the engine and through the runtime over PM4 and AQL,
against a numpy reference: ml_dtypes decodes the OCP MX element formats (FP8 E4M3, BF8 E5M2, FP6 E2M3, BF6 E3M2,
FP4 E2M1) and the E8M0 scales, the product is exact and rounded once to f32.

The reference places A's row i in the lanes i + M * g (g the lane group), each lane's 32 values in runs of R
consecutive k (R = 16 for FP8 / BF8, whose run r of group g starts at k = (r * G + g) * 16; R = 32 for FP6 / BF6 /
FP4, the whole lane), as a little-endian bit string of the lane's registers (B[k][j] likewise with N and j); row i's
scale of K block kb in the byte op_sel + 2 * op_sel_hi of lane i + M * kb's scale VGPR; D by the dense MFMA layout
(test_mfma_gfx942.d_place). That layout is the one Triton's tl.dot_scaled code for gfx950 needs
(tests/runtime/test_triton_corpus.py runs tests/data/triton/gfx950/dot_scaled_*).
"""

from __future__ import annotations

import re
from functools import cache

import ml_dtypes
import numpy as np
import pytest

from compiler.llvm import compile_asm, compile_ir
from simgpu.fault import HardwareFault
from simgpu.isa import decode
from tests import DATA
from tests.simgpu.shader.test_mfma_gfx942 import d_place
from tests.simgpu.shader.test_smfmac import launch
from tests.support import tiers

SOURCE = DATA / "kernels" / "cdna4_f8f6f4.ll"
F32, F64, U32 = np.float32, np.float64, np.uint32
# format code (cbsz / blgp) -> (bits, ml_dtypes type)
FORMATS = {0: (8, ml_dtypes.float8_e4m3fn), 1: (8, ml_dtypes.float8_e5m2), 2: (6, ml_dtypes.float6_e2m3fn),
           3: (6, ml_dtypes.float6_e3m2fn), 4: (4, ml_dtypes.float4_e2m1fn)}
SCALE_CODES = np.arange(124, 131)  # E8M0 scales 2^-3 .. 2^3: every sum below stays exact in f64


def kernels() -> list[str]:
    return sorted(re.findall(r"@(cdna4_f8f6f4_\w+)\(", SOURCE.read_text()))


@cache
def code_object() -> bytes:
    return compile_ir(SOURCE.read_text(), mcpu="gfx950")


@cache
def listing() -> str:
    return compile_asm(SOURCE.read_text(), mcpu="gfx950")


def parse(kernel: str):
    """(M, N, K, A format, B format, scaled, A byte select, B byte select) of a kernel's name."""
    m = re.fullmatch(r"cdna4_f8f6f4_(\d+)x(\d+)x(\d+)_(\d)_(\d)(?:_scaled_(\d)_(\d))?", kernel)
    mm, nn, kk, fa, fb, oa, ob = m.groups()
    return int(mm), int(nn), int(kk), int(fa), int(fb), oa is not None, int(oa or 0), int(ob or 0)


def codes(rng, fmt: int, shape) -> tuple[np.ndarray, np.ndarray]:
    """(codes, values) of random elements of magnitude 2^-4 .. 2^4 or zero (products' sums exact in f64)."""
    bits, dtype = FORMATS[fmt]
    table = np.arange(1 << bits, dtype=np.uint8).view(dtype).astype(F64)
    usable = np.nonzero(((np.abs(table) >= 2.0 ** -4) & (np.abs(table) <= 2.0 ** 4)) | (table == 0))[0]
    c = rng.choice(usable, shape)
    return c, table[c]


def pack(lane_codes: np.ndarray, bits: int) -> np.ndarray:
    """[64, 32] codes -> [64, regs] uint32: value e at bits [bits*e, bits*e + bits) of the lane's registers."""
    regs = 32 * bits // 32
    out = np.zeros((64, regs), U32)
    for lane in range(64):
        word = sum(int(c) << (bits * e) for e, c in enumerate(lane_codes[lane]))
        out[lane] = np.frombuffer(word.to_bytes(4 * regs, "little"), U32)
    return out


def place(mat: np.ndarray, rows: int, depth: int, bits: int) -> np.ndarray:
    """[rows, depth] -> [64, 32]: run r of lane group g holds k from (r * G + g) * R, R values (module doc)."""
    run, groups = (16 if bits == 8 else 32), 64 // rows
    out = np.zeros((64, 32), mat.dtype)
    for r in range(rows):
        for start in range(0, depth, run):
            chunk = start // run
            g, rr = chunk % groups, chunk // groups
            out[r + rows * g, rr * run:(rr + 1) * run] = mat[r, start:start + run]
    return out


def scale_words(rng, rows: int, depth: int, byte: int) -> tuple[np.ndarray, np.ndarray]:
    """(each lane's scale VGPR, the scale of each [rows, depth] entry): the selected byte from SCALE_CODES, the other
    three 0xFF (NaN: a wrong byte would show)."""
    chosen = rng.choice(SCALE_CODES, 64)
    words = np.full(64, 0xFFFFFFFF, U32)
    words &= ~U32(0xFF << (8 * byte))
    words |= (chosen.astype(U32) << U32(8 * byte))
    value = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(F64)[chosen]
    per_entry = np.array([[value[r + rows * (k // 32)] for k in range(depth)] for r in range(rows)])
    return words, per_entry


def case(kernel: str):
    m, n, k, fa, fb, scaled, oa, ob = parse(kernel)
    rng = np.random.default_rng(sum(map(ord, kernel)))
    a_codes, a = codes(rng, fa, (m, k))
    b_codes, b = codes(rng, fb, (k, n))
    if scaled:
        sa_words, sa = scale_words(rng, m, k, oa)
        sb_words, sb = scale_words(rng, n, k, ob)
        a, b = a * sa, b * sb.T
    else:
        sa_words = sb_words = np.full(64, 0xFFFFFFFF, U32)  # not read
    c = (rng.integers(-1000, 1000, (m, n)) / 16).astype(F32)
    want = (a @ b + c.astype(F64)).astype(F32)  # exact in f64, rounded once
    c_regs = np.zeros((64, m * n // 64), F32)
    for i in range(m):
        for j in range(n):
            reg, lane = d_place(m, n, 1, False, i, j, 0)
            c_regs[lane, reg] = c[i, j]
    args = [pack(place(a_codes, m, k, FORMATS[fa][0]), FORMATS[fa][0]),
            pack(place(b_codes.T, n, k, FORMATS[fb][0]), FORMATS[fb][0]), sa_words,
            sb_words, c_regs, np.zeros_like(c_regs)]
    return [x.reshape(-1) for x in args], want


@pytest.mark.parametrize("where", ["engine", "pm4", "aql"])
@pytest.mark.parametrize("kernel", kernels())
def test_f8f6f4_mfma_from_llvm22(kernel, where):
    m, n, k, fa, fb, scaled, _, _ = parse(kernel)
    body = listing().split(f"{kernel}:", 1)[1].split("s_endpgm", 1)[0]
    mnemonic = f"v_mfma_{'scale_' if scaled else ''}f32_{m}x{n}x{k}_f8f6f4"
    assert mnemonic in body, f"LLVM no longer emits {mnemonic} for {kernel}"
    args, want = case(kernel)
    got = launch(where, "gfx950", kernel, code_object(), args).reshape(64, -1)
    d = np.zeros((m, n), F32)
    for i in range(m):
        for j in range(n):
            reg, lane = d_place(m, n, 1, False, i, j, 0)
            d[i, j] = got[lane, reg]
    assert np.array_equal(d, want)


def test_the_kernels_cover_every_format():
    cases = [parse(k) for k in kernels()]
    assert {c[3] for c in cases} == {c[4] for c in cases} == set(FORMATS)
    assert any(c[5] for c in cases) and any(not c[5] for c in cases) and {c[0] for c in cases} == {16, 32}


def test_a_reserved_format_code_is_an_illegal_instruction():
    tb = tiers.testbed("interpreter", arch="gfx950")
    k = tb.load_asm("v_mfma_f32_16x16x128_f8f6f4 a[0:3], v[0:7], v[8:15], 0 cbsz:5\ns_endpgm", args=0, vgprs=16,
                    agprs=4)
    with pytest.raises(HardwareFault) as e:
        tb.launch(k, [], (1,), (64,))
    assert e.value.kind == "illegal_instruction" and "format code 5 of A is reserved" in str(e.value)


def test_committed_kernels_are_what_the_generator_writes():
    from tools import gen_cdna4_kernels
    for name, make in gen_cdna4_kernels.FILES.items():
        assert (DATA / "kernels" / name).read_text() == make(), f"{name}: run python -m tools.gen_cdna4_kernels"


def test_a_nan_scale_makes_its_rows_nan():
    """E8M0 0xFF is NaN: the A scale of lane 0 (row 0's first K block) set to it makes row 0 of D NaN, the rest as
    before."""
    kernel = "cdna4_f8f6f4_16x16x128_0_1_scaled_2_2"
    args, want = case(kernel)
    args[2] = args[2].copy()
    args[2][0] |= U32(0xFF << 16)  # byte 2: what op_sel 0, op_sel_hi 1 select
    got = launch("engine", "gfx950", kernel, code_object(), args).reshape(64, -1)
    d = np.array([[got[lane, reg] for lane, reg in (d_place(16, 16, 1, False, i, j, 0)[::-1] for j in range(16))]
                  for i in range(16)])
    assert np.isnan(d[0]).all() and np.array_equal(d[1:], want[1:])


# a standalone v_mfma_ld_scale_b32 (LLVM 22's forms: an inline constant, an SGPR, op_sel_hi's default ones, and the
# pair form before an MFMA with abid 0), then the unscaled 16x16x128 FP8 MFMA of all-ones A and B: D = 128 everywhere,
# the scales of 2^1 in v20 / v21 not applied
STANDALONE = """
s_load_dwordx2 s[4:5], s[0:1], 0x0
v_lshlrev_b32_e32 v16, 4, v0
v_mov_b32_e32 v20, 0x80808080
v_mov_b32_e32 v21, 0x80808080
{movs}
v_mfma_ld_scale_b32 v20, 64
v_mfma_ld_scale_b32 s4, v21
v_mfma_ld_scale_b32 v20, v21
v_mfma_ld_scale_b32 v20, v21 op_sel_hi:[0,0,0]
v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[8:15], v[8:15], 0
s_nop 7
s_nop 7
s_waitcnt lgkmcnt(0)
global_store_dwordx4 v16, v[0:3], s[4:5]
s_endpgm
"""


def test_a_standalone_ld_scale_changes_nothing():
    tb = tiers.testbed("interpreter", arch="gfx950")
    text = STANDALONE.format(movs="\n".join(f"v_mov_b32_e32 v{r}, 0x38383838" for r in range(8, 16)))  # E4M3 1.0
    k = tb.load_asm(text, args=1, vgprs=24)
    code = tb.read(k.code_address, 256)
    names = []
    pos = 0
    while (inst := decode(code[pos:], arch="gfx950")).mnemonic != "s_endpgm":
        names.append(inst.mnemonic)
        pos += inst.size
    assert names.count("v_mfma_ld_scale_b32") == 4 and "v_mfma_f32_16x16x128_f8f6f4" in names  # none paired
    out = tb.upload(np.zeros((64, 4), F32))
    tb.launch(k, [out], (1,), (64,))
    assert np.array_equal(tb.download(out, F32, 256), np.full(256, 128.0, F32))
