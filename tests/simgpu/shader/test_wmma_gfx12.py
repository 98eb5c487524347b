"""gfx1201 WMMA and SWMMAC (simgpu/shader/matrix/gfx12.py): clang-19's code for the gfx12 WMMA builtins
(__builtin_amdgcn_wmma_*_w32_gfx12 / _w64_gfx12, iu4 included) and the sparse __builtin_amdgcn_swmmac_*_w32 / _w64,
wave32 and wave64 (tests/data/opencl/wmma.cl -> wmma_gfx1201.so and wmma_w64_gfx1201.so, `python -m
tools.gen_opencl_corpus --arch gfx1201`), run through mockgpu's amdkfd and the runtime over PM4 and AQL, in the
interpreter and the JIT tier (which must end with the same GPU state), checked against numpy references.

The references place matrix entries in lanes and registers by the closed-form equations AMD's matrix instruction
calculator prints for RDNA4 (`--architecture rdna4 --detail-instruction`: "A[i][k] GPR: ..., Lane: ...", and the
compression index's), written out per shape and wave size here, not by the engine's layout code
(matrix/gfx12_layout.py). A sparse A is made 4:2 (two nonzero k in each group of four, at random places and in
random order in its pair); its index field holds the first stored element's place in bits [1:0] and the second's in
[3:2], in the set the kernel's index_key names, the other sets holding noise. fp8/bf8 are decoded by ml_dtypes (OCP
float8_e4m3fn / float8_e5m2). Inputs are chosen so every sum is exact in f64 (int64 for integers), then rounded
once; the integer forms saturate with clamp (C near the i32 limits).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import pytest

from simgpu.fault import HardwareFault
from simgpu.isa import assemble
from simgpu.isa.codeobject import read_code_object
from simgpu.shader.matrix.gfx12 import VARIANTS
from simgpu.testbed import Testbed
from tests import DATA
from tests.simgpu.shader.test_corpus_opencl_gfx1201 import launcher

ARCH = "gfx1201"
CODE_OBJECTS = {32: DATA / "opencl" / "wmma_gfx1201.so", 64: DATA / "opencl" / "wmma_w64_gfx1201.so"}
F16, F32, F64, U8, U16, U32, I64 = np.float16, np.float32, np.float64, np.uint8, np.uint16, np.uint32, np.int64

# ---------------------------------------------------------------------------------------------- AMD's equations
# (gpr, lane, bit) of A[i][k] / B[k][j] (pass j as i), per operand shape and wave size. Shapes: d16 (16-bit dense,
# K 16), d8 (8-bit dense, K 16), d4k16 / d4k32 (iu4 dense), s16 / s8 / s4k32 / s4k64 the sparse forms' A (of the
# group holding k: its pair's first element; the second sits `bits` higher), their B (sB...) and index fields (sK...).

EQ = {
    ("d16", 32): lambda i, k: (2 * (k // 8) + (k // 2) % 2, 16 * ((k // 4) % 2) + i, 16 * (k % 2)),
    ("d16", 64): lambda i, k: ((k // 2) % 2, 32 * ((k // 8) % 2) + 16 * ((k // 4) % 2) + i, 16 * (k % 2)),
    ("d8", 32): lambda i, k: ((k // 4) % 2, 16 * (k // 8) + i, 8 * (k % 4)),
    ("d8", 64): lambda i, k: (0, 32 * ((k // 4) % 2) + 16 * ((k // 8) % 2) + i, 8 * (k % 4)),
    ("d4k16", 32): lambda i, k: (0, 16 * (k // 8) + i, 4 * (k % 8)),
    ("d4k16", 64): lambda i, k: (0, 16 * (k // 8) + i, 4 * (k % 8)),
    ("d4k32", 32): lambda i, k: ((k // 8) % 2, 16 * (k // 16) + i, 4 * (k % 8)),
    ("d4k32", 64): lambda i, k: (0, 32 * ((k // 8) % 2) + 16 * ((k // 16) % 2) + i, 4 * (k % 8)),
    ("s16", 32): lambda i, k: (2 * (k // 16) + (k // 4) % 2, 16 * ((k // 8) % 2) + i, 0),
    ("s16", 64): lambda i, k: ((k // 4) % 2, 16 * (k // 8) + i, 0),
    ("s8", 32): lambda i, k: ((k // 8) % 2, 16 * (k // 16) + i, 16 * ((k // 4) % 2)),
    ("s8", 64): lambda i, k: (0, 32 * ((k // 8) % 2) + 16 * (k // 16) + i, 16 * ((k // 4) % 2)),
    ("s4k32", 32): lambda i, k: (0, 16 * (k // 16) + i, 8 * ((k // 4) % 4)),
    ("s4k32", 64): lambda i, k: (0, 16 * (k // 16) + i, 8 * ((k // 4) % 4)),
    ("s4k64", 32): lambda i, k: ((k // 16) % 2, 16 * (k // 32) + i, 8 * ((k // 4) % 4)),
    ("s4k64", 64): lambda i, k: (0, 32 * ((k // 16) % 2) + 16 * (k // 32) + i, 8 * ((k // 4) % 4)),
    ("sB16", 32): lambda j, k: (4 * (k // 16) + (k // 2) % 4, 16 * ((k // 8) % 2) + j, 16 * (k % 2)),
    ("sB16", 64): lambda j, k: ((k // 2) % 4, 16 * (k // 8) + j, 16 * (k % 2)),
    ("sB8", 32): lambda j, k: ((k // 4) % 4, 16 * (k // 16) + j, 8 * (k % 4)),
    ("sB8", 64): lambda j, k: ((k // 4) % 2, 32 * ((k // 8) % 2) + 16 * (k // 16) + j, 8 * (k % 4)),
    ("sB4k32", 32): lambda j, k: ((k // 8) % 2, 16 * (k // 16) + j, 4 * (k % 8)),
    ("sB4k32", 64): lambda j, k: (0, 32 * ((k // 8) % 2) + 16 * (k // 16) + j, 4 * (k % 8)),
    ("sB4k64", 32): lambda j, k: ((k // 8) % 4, 16 * (k // 32) + j, 4 * (k % 8)),
    ("sB4k64", 64): lambda j, k: ((k // 8) % 2, 32 * ((k // 16) % 2) + 16 * (k // 32) + j, 4 * (k % 8)),
    ("sK16", 32): lambda i, k: (0, 16 * ((k // 8) % 2) + i, 8 * (k // 16) + 4 * ((k // 4) % 2)),
    ("sK16", 64): lambda i, k: (0, 16 * (k // 8) + i, 4 * ((k // 4) % 2)),
    ("sK8", 32): lambda i, k: (0, 16 * (k // 16) + i, 4 * ((k // 4) % 4)),
    ("sK8", 64): lambda i, k: (0, 32 * ((k // 8) % 2) + 16 * (k // 16) + i, 4 * ((k // 4) % 2)),
    ("sK4k32", 32): lambda i, k: (0, 16 * (k // 16) + i, 4 * ((k // 4) % 4)),
    ("sK4k32", 64): lambda i, k: (0, 16 * (k // 16) + i, 4 * ((k // 4) % 4)),
    ("sK4k64", 32): lambda i, k: (0, 16 * (k // 32) + i, 4 * ((k // 4) % 8)),
    ("sK4k64", 64): lambda i, k: (0, 32 * ((k // 16) % 2) + 16 * (k // 32) + i, 4 * ((k // 4) % 4)),
    # C and D: 32-bit and 16-bit elements
    ("cd32", 32): lambda i, j: (i % 8, 16 * (i // 8) + j, 0),
    ("cd32", 64): lambda i, j: (i % 4, 32 * ((i // 4) % 2) + 16 * (i // 8) + j, 0),
    ("cd16", 32): lambda i, j: ((i // 2) % 4, 16 * (i // 8) + j, 16 * (i % 2)),
    ("cd16", 64): lambda i, j: ((i // 2) % 2, 32 * ((i // 4) % 2) + 16 * (i // 8) + j, 16 * (i % 2)),
}
# index fields per lane's set (bits), by shape and wave size: OPSEL's set s starts at s * this
SET_BITS = {("16", 32): 16, ("16", 64): 8, ("8", 32): 16, ("8", 64): 8, ("4k32", 32): 16, ("4k32", 64): 16,
            ("4k64", 32): 32, ("4k64", 64): 16}
# VGPRs per lane (wave32; wave64 halves what has more than one)
NREG = {"d16": 4, "d8": 2, "d4k16": 1, "d4k32": 2, "s16": 4, "s8": 2, "s4k32": 1, "s4k64": 2,
        "sB16": 8, "sB8": 4, "sB4k32": 2, "sB4k64": 4, "sK16": 1, "sK8": 1, "sK4k32": 1, "sK4k64": 1,
        "cd32": 8, "cd16": 4}


def nreg(shape: str, wave: int) -> int:
    n = NREG[shape]
    return n // 2 if wave == 64 and n > 1 else n


# ---------------------------------------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    kernel: str
    a: str  # element kinds
    b: str
    out: str
    k: int
    signed: tuple[bool, bool] = (False, False)
    clamp: bool = False
    key: int | None = None  # SWMMAC's index_key (None: dense WMMA)

    @property
    def bits(self) -> int:
        return {"f16": 16, "bf16": 16, "iu8": 8, "fp8": 8, "bf8": 8, "iu4": 4}[self.a]

    @property
    def tag(self) -> str:
        return {16: "16", 8: "8", 4: f"4k{self.k}"}[self.bits]


def _case(kernel: str) -> Case:
    """The case a kernel of wmma.cl names: mnemonic (less v_), then signedness, clamp and index_key."""
    parts = kernel.split("_")
    key = int(parts[-1][3:]) if parts[-1].startswith("key") else None
    shape = next(p for p in parts if p.startswith("16x16x"))
    k = int(shape.split("x")[2])
    types = parts[parts.index(shape) + 1:]
    out = parts[1]
    if types[0] in ("iu8", "iu4"):
        signs = types[1]
        return Case(kernel, types[0], types[0], out, k, (signs[0] == "s", signs[1] == "s"), "clamp" in types, key)
    if types[0] in ("fp8", "bf8"):
        return Case(kernel, types[0], types[1], out, k, key=key)
    return Case(kernel, types[0], types[0], out, k, key=key)


def kernels(wave: int) -> list[str]:
    return sorted(read_code_object(CODE_OBJECTS[wave].read_bytes()).kernels)


RNG = np.random.default_rng(1201)
FLOAT8 = {"fp8": ml_dtypes.float8_e4m3fn, "bf8": ml_dtypes.float8_e5m2}


def _values(kind: str, signed: bool, shape) -> tuple[np.ndarray, np.ndarray]:
    """(bit patterns as int64, exact values) of random inputs of `kind` whose products and sums are exact in f64."""
    if kind == "f16":
        v = (RNG.integers(-256, 257, shape) / 32).astype(F16)
        return v.view(U16).astype(I64), v.astype(F64)
    if kind == "bf16":
        v = (RNG.integers(-64, 65, shape) / 8).astype(F32)
        return (v.view(U32) >> 16).astype(I64), v.astype(F64)
    if kind in FLOAT8:
        codes = np.arange(256, dtype=U8)
        vals = codes.view(FLOAT8[kind]).astype(F64)
        usable = codes[np.isfinite(vals) & ((np.abs(vals) >= 2.0 ** -4) & (np.abs(vals) <= 16) | (vals == 0))]
        pick = RNG.choice(usable, shape)
        return pick.astype(I64), pick.view(FLOAT8[kind]).astype(F64)
    bits = 8 if kind == "iu8" else 4
    lo, hi = (-(1 << (bits - 1)), 1 << (bits - 1)) if signed else (0, 1 << bits)
    v = RNG.integers(lo, hi, shape)
    return v & ((1 << bits) - 1), v


def _pack(place, rows: int, cols: int, patterns: np.ndarray, regs: int, wave: int, width: int) -> np.ndarray:
    """Per-lane register words [wave, regs] holding patterns[r, c] (width bits) where place(r, c) puts them."""
    out = np.zeros((wave, regs), np.uint64)
    for r in range(rows):
        for c in range(cols):
            g, lane, bit = place(r, c)
            out[lane, g] |= np.uint64(int(patterns[r, c]) << bit)
    assert int(out.max()) < 1 << 32 and width <= 32
    return out.astype(U32)


def _noise(words: np.ndarray, used_lanes: int) -> np.ndarray:
    """Lanes an operand does not use (wave64's iu4 operands in lanes 32-63) get noise, which must be ignored."""
    words[used_lanes:] = RNG.integers(0, 1 << 32, words[used_lanes:].shape, dtype=np.uint64).astype(U32)
    return words


def _accumulator(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """(bit patterns, values) of a random C ([16, 16])."""
    if case.out == "i32":
        if case.clamp:  # near the limits, so sums saturate
            c = np.where(RNG.integers(0, 2, (16, 16)) == 1, (1 << 31) - 1 - RNG.integers(0, 64, (16, 16)),
                         -(1 << 31) + RNG.integers(0, 64, (16, 16)))
        else:
            c = RNG.integers(-100000, 100000, (16, 16))
        return c & 0xFFFFFFFF, c
    if case.out == "f32":
        v = (RNG.integers(-1000, 1000, (16, 16)) / 16).astype(F32)
        return v.view(U32).astype(I64), v.astype(F64)
    return _values(case.out, False, (16, 16))


def _rounded(case: Case, exact: np.ndarray) -> np.ndarray:
    """D's bit patterns ([16, 16]) from the exact result."""
    if case.out == "i32":
        d = np.clip(exact, -(1 << 31), (1 << 31) - 1) if case.clamp else exact
        return d & 0xFFFFFFFF
    if case.out == "f32":
        return exact.astype(F32).view(U32).astype(I64)
    if case.out == "f16":
        return exact.astype(F16).view(U16).astype(I64)
    return (exact.astype(ml_dtypes.bfloat16).view(U16)).astype(I64)


def _unpack(place, words: np.ndarray, width: int) -> np.ndarray:
    out = np.zeros((16, 16), I64)
    for i in range(16):
        for j in range(16):
            g, lane, bit = place(i, j)
            out[i, j] = (int(words[lane, g]) >> bit) & ((1 << width) - 1)
    return out


def _dense_inputs(case: Case, wave: int):
    shape = {16: "d16", 8: "d8"}.get(case.bits, f"d4k{case.k}")
    pa, a = _values(case.a, case.signed[0], (16, case.k))
    pb, b = _values(case.b, case.signed[1], (case.k, 16))
    eq = EQ[(shape, wave)]
    wa = _pack(eq, 16, case.k, pa, nreg(shape, wave), wave, case.bits)
    wb = _pack(eq, 16, case.k, pb.T, nreg(shape, wave), wave, case.bits)
    if shape == "d4k16" and wave == 64:
        wa, wb = _noise(wa, 32), _noise(wb, 32)
    return wa, wb, a @ b


def _sparse_inputs(case: Case, wave: int):
    groups = case.k // 4
    pos = np.stack([RNG.permutation(4)[:2] for _ in range(16 * groups)]).reshape(16, groups, 2)
    ps, stored = _values(case.a, case.signed[0], (16, groups, 2))
    dense = np.zeros((16, case.k), stored.dtype)
    for i in range(16):
        for g in range(groups):
            for s in range(2):
                dense[i, 4 * g + pos[i, g, s]] = stored[i, g, s]
    pb, b = _values(case.b, case.signed[1], (case.k, 16))
    tag, bits = case.tag, case.bits
    pair = ps[:, :, 0] | ps[:, :, 1] << bits  # [16, groups]: the pair, first element lowest
    a_eq, k_eq = EQ[("s" + tag, wave)], EQ[("sK" + tag, wave)]
    wa = _pack(lambda i, g: a_eq(i, 4 * g), 16, groups, pair, nreg("s" + tag, wave), wave, 2 * bits)
    fields = pos[:, :, 0] | pos[:, :, 1] << 2
    set_bits = SET_BITS[(tag, wave)]
    widx = RNG.integers(0, 1 << 32, (wave, 1), dtype=np.uint64).astype(U32)  # the other sets: noise
    for i in range(16):  # the kernel passes idx >> key sets, which clang folds into index_key
        for g in range(groups):
            _, lane, bit = k_eq(i, 4 * g)
            bit += case.key * set_bits
            widx[lane, 0] = (int(widx[lane, 0]) & ~(0xF << bit) | int(fields[i, g]) << bit) & 0xFFFFFFFF
    wb = _pack(EQ[("sB" + tag, wave)], 16, case.k, pb.T, nreg("sB" + tag, wave), wave, bits)
    if tag == "4k32" and wave == 64:
        wa, widx = _noise(wa, 32), _noise(widx, 32)
    return wa, wb, widx, dense @ b


def expected_and_args(case: Case, wave: int) -> tuple[list[np.ndarray], np.ndarray, str]:
    """The kernel's arguments, D's expected bit patterns [16, 16], and D's shape name."""
    cd = "cd32" if case.out in ("f32", "i32") else "cd16"
    width = 32 if cd == "cd32" else 16
    pc, c = _accumulator(case)
    wc = _pack(EQ[(cd, wave)], 16, 16, pc, nreg(cd, wave), wave, width)
    if case.key is None:
        wa, wb, product = _dense_inputs(case, wave)
        args = [np.zeros_like(wc), wa, wb, wc]
    else:
        wa, wb, widx, product = _sparse_inputs(case, wave)
        args = [wc, wa, wb, widx[:, 0].copy()]
    return args, _rounded(case, product + c), cd


@pytest.mark.parametrize("queue", ["pm4", "aql"])
@pytest.mark.parametrize("wave, kernel", [(w, k) for w in (32, 64) for k in kernels(w)])
def test_builtin_matches_numpy(wave, kernel, queue):
    case = _case(kernel)
    args, want, cd = expected_and_args(case, wave)
    # the JIT tiers' run is compared on PM4 only: the queue changes how the dispatch arrives, not what the wave
    # runs, and the JIT leaves WMMA/SWMMAC to the interpreter (docs/shader.md), so AQL repeats nothing there
    run = launcher(queue, code_object=CODE_OBJECTS[wave], jit=queue == "pm4")
    out, _ = run(kernel, args, (1,), (wave,))
    got = _unpack(EQ[(cd, wave)], out[0], 32 if cd == "cd32" else 16)
    assert np.array_equal(got, want), f"{kernel} wave{wave}: {np.argwhere(got != want)[:4]}"


def _mnemonic(kernel: str) -> str:
    parts = [p for p in kernel.split("_") if p not in ("ss", "su", "us", "uu", "clamp") and not p.startswith("key")]
    return "v_" + "_".join(parts)


@pytest.mark.parametrize("wave", [32, 64])
def test_every_gfx12_wmma_and_swmmac_form_has_a_kernel(wave):
    assert {_mnemonic(k) for k in kernels(wave)} == set(VARIANTS)


@pytest.mark.skipif(shutil.which("/usr/lib/llvm-19/bin/clang") is None, reason="needs clang-19 and lld-19")
@pytest.mark.parametrize("name", ["wmma", "wmma_w64"])
def test_committed_code_object_is_what_the_generator_builds(name):
    from tools import gen_opencl_corpus
    built = gen_opencl_corpus.build(gen_opencl_corpus.source(name), arch=ARCH, name=name)
    assert built == gen_opencl_corpus.output(ARCH, name).read_bytes()


# ---------------------------------------------------------------------------------------------- assembled forms


# `echo 'v_swmmac_i32_16x16x32_iu8 v[20:23], v11, v[14:15], v10 index_key:3' | llvm-mc -arch=amdgcn -mcpu=gfx1201
# -mattr=+wavefrontsize64 -show-encoding` (simgpu's assembler knows wave32's operand sizes only: the kernel is
# assembled with the wave32 spelling of the same registers, index_key:1, and this encoding put in its place)
SWMMAC_KEY3_W64 = bytes([0x14, 0x58, 0x54, 0xCC, 0x0B, 0x1D, 0x2A, 0x1C])
SWMMAC_KEY1_W32 = "v_swmmac_i32_16x16x32_iu8 v[20:27], v[11:12], v[14:17], v10 index_key:1"


def test_wave64_index_key_3_picks_the_top_set_of_fields():
    """index_key:3 (wave64, 8-bit A): clang reaches it only through a byte load, so it is assembled here."""
    case = Case("swmmac_i32_16x16x32_iu8_uu_key3", "iu8", "iu8", "i32", 32, key=3)
    args, want, cd = expected_and_args(case, 64)
    body = f"""
    s_load_b256 s[4:11], s[0:1], 0x0
    v_lshlrev_b32 v1, 2, v0
    v_lshlrev_b32 v2, 3, v0
    v_lshlrev_b32 v3, 4, v0
    s_wait_kmcnt 0
    global_load_b32 v10, v1, s[10:11]
    global_load_b32 v11, v1, s[6:7]
    global_load_b64 v[14:15], v2, s[8:9]
    global_load_b128 v[20:23], v3, s[4:5]
    s_wait_loadcnt 0
    {SWMMAC_KEY1_W32}
    global_store_b128 v3, v[20:23], s[4:5]
    s_endpgm
    """
    tb = Testbed(vram_size=1 << 26, arch=ARCH)
    k = tb.load_asm(body, args=4, wave32=False)
    placeholder = assemble(SWMMAC_KEY1_W32, arch=ARCH)
    code = tb.read(k.code_address, 256)
    at = code.index(placeholder)
    assert placeholder[:1] + bytes([placeholder[1] & ~0x18]) + placeholder[2:] == \
        SWMMAC_KEY3_W64[:1] + bytes([SWMMAC_KEY3_W64[1] & ~0x18]) + SWMMAC_KEY3_W64[2:]  # op_sel bits only differ
    tb.write(k.code_address + at, SWMMAC_KEY3_W64)
    vas = [tb.upload(np.ascontiguousarray(a)) for a in args]
    tb.launch(k, vas, (1,), (64,))
    d = tb.download(vas[0], U32, args[0].size).reshape(args[0].shape)
    assert np.array_equal(_unpack(EQ[(cd, 64)], d, 32), want)


def test_an_sgpr_index_operand_is_an_illegal_instruction():
    tb = Testbed(vram_size=1 << 26, arch=ARCH)
    k = tb.load_asm("v_swmmac_f32_16x16x32_f16 v[0:7], v[8:11], v[12:19], s0\ns_endpgm", args=1)
    with pytest.raises(HardwareFault, match="src2 operand must be VGPRs"):
        tb.launch(k, [0], (1,), (32,))
