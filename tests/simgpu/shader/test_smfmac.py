"""SMFMAC, the sparse MFMAs (simgpu/shader/matrix/smfmac.py): clang-19's code for every gfx942 builtin
(tests/data/opencl/smfmac.cl -> smfmac_gfx942.so, `python -m tools.gen_opencl_corpus --arch gfx942`) and LLVM 22's
(llvmlite) for gfx950's 14 (tests/data/kernels/cdna4_smfmac.ll, compiled at test time), on the engine and through
the runtime over PM4 and AQL, against a numpy reference of the definition: a 2:4-sparse A made dense, multiplied by B
exactly (ml_dtypes decodes fp8 / bf8) and rounded once.

The reference places A's stored values, the indices and B by AMD's matrix instruction calculator's description of
the sparse gfx9 layouts (A's K halved in the dense input equation lane = i + M * (k // E), element k % E; the index of
stored value e of a lane in bits [2e+1 : 2e] of the index set ABID selects, set 0 when CBSZ is set) and D by the dense
MFMA's (test_mfma_gfx942.d_place).
"""

from __future__ import annotations

import re
import shutil
from functools import cache

import ml_dtypes
import numpy as np
import pytest

from compiler.llvm import compile_asm, compile_ir
from simgpu.fault import HardwareFault
from simgpu.isa.codeobject import read_code_object
from simgpu.shader.matrix.smfmac import VARIANTS
from tests import DATA
from tests.simgpu.shader import test_corpus_opencl_gfx1201 as stack
from tests.simgpu.shader.test_mfma_gfx942 import d_place, run_asm
from tests.support import tiers

F32, F64, U32 = np.float32, np.float64, np.uint32
GFX942_OBJECT = DATA / "opencl" / "smfmac_gfx942.so"
GFX950_SOURCE = DATA / "kernels" / "cdna4_smfmac.ll"
BITS = {"f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8}
FP8 = {"gfx942": (ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz),
       "gfx950": (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)}


def parse(kernel: str) -> tuple[int, int, int, str, str, str]:
    """(M, N, K, A type, B type, D type) of a kernel named after its instruction."""
    m = re.search(r"(f32|i32)_(\d+)x(\d+)x(\d+)_([a-z0-9]+)(?:_(fp8|bf8))?", kernel)
    out, mm, nn, kk, a, b = m.groups()
    return int(mm), int(nn), int(kk), a, b or a, out


def gfx942_kernels() -> list[str]:
    return sorted(read_code_object(GFX942_OBJECT.read_bytes()).kernels)


def gfx950_kernels() -> list[str]:
    return sorted(re.findall(r"@(cdna4_smfmac_\w+)\(", GFX950_SOURCE.read_text()))


@cache
def gfx950_object() -> bytes:
    return compile_ir(GFX950_SOURCE.read_text(), mcpu="gfx950")


# ---------------------------------------------------------------------------------------------- inputs, reference


def values(rng, kind: str, shape, arch: str) -> tuple[np.ndarray, np.ndarray]:
    """(stored form, value as f64) of inputs whose products and their sums are exact in f64."""
    if kind == "f16":
        v = (rng.integers(-256, 256, shape) / 32).astype(np.float16)
        return v.view(np.uint16), v.astype(F64)
    if kind == "bf16":
        v = (rng.integers(-64, 64, shape) / 8).astype(F32)
        return (v.view(U32) >> U32(16)).astype(np.uint16), v.astype(F64)
    if kind == "i8":
        v = rng.integers(-128, 128, shape).astype(np.int8)
        return v.view(np.uint8), v.astype(F64)
    fmt = FP8[arch][kind == "bf8"]
    table = np.arange(256, dtype=np.uint8).view(fmt).astype(F64)
    usable = np.nonzero(((np.abs(table) >= 2.0 ** -4) & (np.abs(table) <= 2.0 ** 4)) | (table == 0))[0]
    codes = rng.choice(usable, shape).astype(np.uint8)
    return codes, table[codes]


def sparse_a(rng, m: int, k: int, kind: str, arch: str):
    """A 2:4-sparse M x K matrix: (its dense values, the stored values [M, K/2] in stored form, their indices)."""
    stored, vals = values(rng, kind, (m, k // 2), arch)
    pairs = np.array([(p, q) for p in range(4) for q in range(p + 1, 4)])
    chosen = pairs[rng.integers(0, len(pairs), (m, k // 4))]  # [M, K/4, 2]: the kept positions of each group
    index = chosen.reshape(m, k // 2)
    dense = np.zeros((m, k))
    for i in range(m):
        for c in range(k // 2):
            dense[i, 4 * (c // 2) + index[i, c]] = vals[i, c]
    return dense, stored, index


def lanes_of(mat: np.ndarray, rows: int, depth: int) -> np.ndarray:
    """[64, E] per-lane elements of an input with entry (r, k) mat[r, k]: lane r + rows * (k // E), element k % E."""
    e = depth * rows // 64
    out = np.zeros((64, e), mat.dtype)
    for r in range(rows):
        for k in range(depth):
            out[r + rows * (k // e), k % e] = mat[r, k]
    return out


def words(per_lane: np.ndarray) -> np.ndarray:
    """[64, E] stored elements -> [64, registers] uint32, element 0 in the lowest bits."""
    return np.ascontiguousarray(per_lane).view(U32).reshape(64, -1)


def index_words(rng, index: np.ndarray, m: int, abid_set: int, sets: int) -> np.ndarray:
    """Each lane's index VGPR: its stored values' 2-bit indices in set `abid_set`, random bits in the other sets."""
    per_lane = lanes_of(index, m, index.shape[1])  # [64, E']
    e = per_lane.shape[1]
    out = rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(U32)
    if sets == 1:
        out[:] = 0
    for lane in range(64):
        mask = U32(((1 << (2 * e)) - 1) << (2 * e * abid_set))
        bits = sum(int(per_lane[lane, j]) << (2 * j) for j in range(e)) << (2 * e * abid_set)
        out[lane] = (out[lane] & ~mask) | U32(bits)
    return out


def cd_regs(mat: np.ndarray, m: int, n: int) -> np.ndarray:
    out = np.zeros((64, m * n // 64), mat.dtype)
    for i in range(m):
        for j in range(n):
            reg, lane = d_place(m, n, 1, False, i, j, 0)
            out[lane, reg] = mat[i, j]
    return out


def from_cd(regs: np.ndarray, m: int, n: int) -> np.ndarray:
    out = np.zeros((m, n), regs.dtype)
    for i in range(m):
        for j in range(n):
            reg, lane = d_place(m, n, 1, False, i, j, 0)
            out[i, j] = regs[lane, reg]
    return out


def case(kernel: str, arch: str, abid_set: int):
    """(argument arrays a, b, k, c, d; the expected D) of one kernel."""
    m, n, k, ta, tb, out = parse(kernel)
    rng = np.random.default_rng(sum(map(ord, kernel + arch)))
    dense, stored, index = sparse_a(rng, m, k, ta, arch)
    b_st, b = values(rng, tb, (k, n), arch)
    e_stored = k // 2 * m // 64
    sets = 32 // (2 * e_stored)
    kw = index_words(rng, index, m, abid_set, sets)
    if out == "i32":
        c = rng.integers(-2 ** 31, 2 ** 31, (m, n)).astype(np.int32)
        exact = dense.astype(np.int64) @ b.astype(np.int64) + c
        want = ((exact + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)
    else:
        c = (rng.integers(-1000, 1000, (m, n)) / 16).astype(F32)
        want = (dense @ b + c.astype(F64)).astype(F32)  # exact in f64, rounded once
    args = [words(lanes_of(stored, m, k // 2)), words(lanes_of(b_st.T, n, k)), kw, cd_regs(c, m, n)]
    return [x.reshape(-1) for x in args] + [np.zeros(64 * m * n // 64, want.dtype)], want, (m, n)


# ---------------------------------------------------------------------------------------------- tests

WHERE = ["engine", "pm4", "aql"]


def launch(where: str, arch: str, kernel: str, code: bytes, args: list[np.ndarray]) -> np.ndarray:
    if where == "engine":
        tb = tiers.testbed("interpreter", arch=arch)
        k = tb.load(code)[kernel]
        bufs = [tb.upload(a) for a in args]
        tb.launch(k, bufs, (1,), (64,))
        return tb.download(bufs[-1], args[-1].dtype, args[-1].size)
    out, _gpu, _buffers = stack.launch(where, "interpreter", kernel, args, (1,), (64,), arch, code)
    return out[-1]


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("kernel", gfx942_kernels())
def test_gfx942_smfmac_from_clang(kernel, where):
    cbsz, abid = map(int, kernel.rsplit("_", 2)[1:])
    args, want, (m, n) = case(kernel, "gfx942", 0 if cbsz else abid)
    got = _gfx942(where, kernel, args)
    assert np.array_equal(from_cd(got.reshape(64, -1), m, n), want)


def _gfx942(where: str, kernel: str, args: list[np.ndarray]) -> np.ndarray:
    """Run a gfx942 kernel (arguments d, a, b, k, c) and return d."""
    ordered = [args[4], *args[:4]]
    if where == "engine":
        tb = tiers.testbed("interpreter", arch="gfx942")
        k = tb.load(GFX942_OBJECT.read_bytes())[kernel]
        bufs = [tb.upload(a) for a in ordered]
        tb.launch(k, bufs, (1,), (64,))
        return tb.download(bufs[0], ordered[0].dtype, ordered[0].size)
    out, _gpu, _buffers = stack.launch(where, "interpreter", kernel, ordered, (1,), (64,), "gfx942",
                                       GFX942_OBJECT.read_bytes())
    return out[0]


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("kernel", gfx950_kernels())
def test_gfx950_smfmac_from_llvm22(kernel, where):
    mnemonic = "v_smfmac_" + kernel.removeprefix("cdna4_smfmac_")
    assert mnemonic in compile_asm(GFX950_SOURCE.read_text(), mcpu="gfx950"), f"LLVM no longer emits {mnemonic}"
    m, _n, _k, ta, _tb, _out = parse(kernel)
    abid = 1 if (m == 16 and BITS[ta] == 16) else 0  # cdna4_smfmac.ll's choice
    args, want, (m, n) = case(kernel, "gfx950", abid)
    got = launch(where, "gfx950", kernel, gfx950_object(), args)
    assert np.array_equal(from_cd(got.reshape(64, -1), m, n), want)


def test_every_gfx942_builtin_is_tested():
    """gfx942 has 14 SMFMACs (CDNA3 ISA): f16, bf16 and i8 at 16x16 and 32x32, and the four fp8/bf8 pairs at each."""
    names = {"v_smfmac_" + re.sub(r"_\d+_\d+$", "", k) for k in gfx942_kernels()}
    assert len(names) == 14 and names <= set(VARIANTS)
    assert read_code_object(GFX942_OBJECT.read_bytes()).processor == "gfx942"
    assert len(gfx950_kernels()) == 14 and not {"v_smfmac_" + k.removeprefix("cdna4_smfmac_") for k in
                                                 gfx950_kernels()} & names


@pytest.mark.skipif(shutil.which("/usr/lib/llvm-19/bin/clang") is None, reason="needs clang-19 and lld-19")
def test_committed_code_object_is_what_the_generator_builds():
    from tools import gen_opencl_corpus
    assert gen_opencl_corpus.build(gen_opencl_corpus.DIR / "smfmac.cl", arch="gfx942") == GFX942_OBJECT.read_bytes()


@pytest.mark.parametrize(("text", "why"), [
    ("v_smfmac_i32_16x16x64_i8 a[0:3], v[0:1], v[2:5], v6 abid:2", "abid:2 is past its 2 index set(s)"),
])
def test_an_index_set_past_the_vgpr_is_an_illegal_instruction(text, why):
    with pytest.raises(HardwareFault) as e:
        run_asm(text, [np.zeros(64, U32)], agprs=4, vgprs=8)
    assert e.value.kind == "illegal_instruction" and why in str(e.value)
