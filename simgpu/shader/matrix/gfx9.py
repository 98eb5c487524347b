"""gfx942 (CDNA3) matrix instructions: MFMA (D = A x B + C, per block) and the AccVGPR moves.

AccVGPRs: gfx942's VGPR file is unified (docs/shader.md, gfx942): AccVGPR aN is entry ACCUM_OFFSET + N of the wave's
file (Dispatch.accum_offset). v_accvgpr_read_b32 copies aN to a VGPR, v_accvgpr_write_b32 a VGPR (or a constant or
SGPR) to aN, v_accvgpr_mov_b32 aM to aN; each lane under EXEC.

MFMA v_mfma_<D type>_<M>x<N>x<K>[_<B>b]_<A/B type>: B blocks of D[i][j] = C[i][j] + sum_k A[i][k] * B[k][j] over a
wave64. Register layout (CDNA3 ISA, "Matrix Arithmetic Instructions", as AMD's matrix instruction calculator gives
it for gfx9): A's element A[i][k] of block b is in lane b*M + (k // E)*M*B + i, element k % E of that lane's packed
A registers, where E = K*M*B / 64 elements share a lane (packed lowest bits first: 2 per VGPR for 16-bit types, 4 for
8-bit, 1 for f32, a VGPR pair for f64); B[k][j] likewise with N and j. C and D: 32-bit results in groups of 4 rows,
row i of block b in VGPR b*(M*N/64) + (i // (4*G))*4 + i % 4 with G = 64/N groups of rows per VGPR, lane
(b % P)*N + ((i // 4) % G)*P*N + j with P = ceil(64*4 / (M*N)) blocks per VGPR; f64 results the same with groups of
one row in VGPR pairs. With acc_cd, C and D are AccVGPRs; acc's bits make A and B AccVGPRs. C may be an inline
constant (compilers start an accumulation from 0 so).

Arithmetic (decisions: AMD does not document the matrix core's internal order or width):
- f32, xf32, f16, bf16, fp8/bf8 inputs: every product is exact in f64; D = C + A[i][0]*B[0][j] + ... +
  A[i][K-1]*B[K-1][j], added in that order in f64, rounded once to f32 (nearest even). Denormal inputs and results are
  kept whatever MODE says; a NaN result is what f64 arithmetic gives.
- i8: exact sum of the int8 products and C, wrapped to 32 bits.
- f64: D = fma(A[i][K-1], B[K-1][j], ... fma(A[i][0], B[0][j], C)), each fma rounded once to nearest even; the f64
  variants' neg:[a,b,c] bits (the BLGP field) negate A, B, C.
- xf32 (v_mfma_f32_16x16x8_xf32, v_mfma_f32_32x32x4_xf32): each f32 input is truncated toward zero to xf32's 10
  mantissa bits (its 13 low bits cleared; a NaN stays a NaN) before the exact product. That gfx942's matrix core
  truncates rather than rounds is what AMD's hipBLASLt engineers report of the hardware (ROCm/rocm-libraries pull
  request 9176, which rounds in software before the MFMA for that reason); the ISA reference says neither.
- fp8 / bf8 are gfx942's FNUZ formats (LLVM: gfx940's fp8 is "fnuz"): E4M3 with bias 8 and E5M2 with bias 16, no
  infinities, no negative zero; 0x80 is NaN. On gfx950 (CDNA4) the same opcodes read the OCP formats (E4M3 bias 7,
  E5M2 bias 15, as gfx12's), as CDNA4's ISA defines FP8/BF8 (FP8_FORMATS; the tables are sem.minifloat's).

gfx950 (CDNA4) adds v_mfma_f32_16x16x32_f16/bf16, v_mfma_f32_32x32x16_f16/bf16, v_mfma_i32_16x16x64_i8 and
v_mfma_i32_32x32x32_i8 (GFX950_ONLY): the same layout rule and arithmetic (tests/simgpu/shader/test_cdna4_corpus.py).
The sparse SMFMACs are matrix.smfmac; gfx950's f8f6f4 and scaled MFMAs matrix.f8f6f4.

Broadcasts (AMD's matrix instruction calculator documents them for gfx9; the ISA's VOP3P-MAI fields):
- CBSZ / ABID: block b of the product reads A's block (b >> CBSZ << CBSZ) + ABID: one block of each group of 2^CBSZ
  is broadcast to the whole group. CBSZ past log2(blocks) or ABID past 2^CBSZ - 1 is outside the definition: an
  illegal_instruction fault (a one-block MFMA therefore takes only CBSZ = ABID = 0).
- BLGP (not the f64 forms, where the field is neg:[a,b,c]): the matrix core's B lane L reads the register lane
  L (0), L % 32 (1: lanes 0-31 broadcast), 32 + L % 32 (2), (L + 16) % 64 (3: rotated down by 16), or 16 * (p - 4)
  + L % 16 for p = 4..7 (one group of 16 lanes broadcast to all four). Applied to every MFMA; the calculator lists it
  for a subset, and which the hardware ignores it on is not public.

EXEC is ignored: A, B and C are read from all 64 lanes and D is written to all 64, with lanes of EXEC off or not
launched alike. A reading: the ISA text on inactive lanes was not at hand; public CDNA3 kernels rely on it ("MFMA
ignores EXEC", comments of hand-written fp8 GEMM / MoE kernels that set EXEC to all ones only for their other
instructions).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from simgpu.shader.operand import vector_src, write_vgpr
from simgpu.shader.sem import fpexact as fx
from simgpu.shader.sem import minifloat as mf
from simgpu.shader.semantics import register
from simgpu.shader.state import wsel
from simgpu.shader.vector.vop3p import bf16_to_f32

G = "gfx9"
U8, U16, U32, U64, I64, F16, F32, F64 = np.uint8, np.uint16, np.uint32, np.uint64, np.int64, np.float16, np.float32, \
    np.float64
LANES = 64
_BITS = {"f32": 32, "xf32": 32, "f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8, "f64": 64}


@dataclass(frozen=True)
class Shape:
    """One MFMA variant: M x N x K, blocks, A/B element type, C/D type."""

    m: int
    n: int
    k: int
    blocks: int
    a: str
    b: str
    out: str

    @property
    def per_lane(self) -> int:
        """E: the elements of one A (or B) row that share a lane."""
        return self.k * self.m * self.blocks // LANES


def _variants() -> dict[str, Shape]:
    v = {}
    for t in ("f32", "f16", "bf16"):
        small = 1 if t == "f32" else 4  # K of the multi-block forms
        v[f"v_mfma_f32_32x32x{small}_2b_{t}"] = Shape(32, 32, small, 2, t, t, "f32")
        v[f"v_mfma_f32_16x16x{small}_4b_{t}"] = Shape(16, 16, small, 4, t, t, "f32")
        v[f"v_mfma_f32_4x4x{small}_16b_{t}"] = Shape(4, 4, small, 16, t, t, "f32")
    v["v_mfma_f32_32x32x2_f32"] = Shape(32, 32, 2, 1, "f32", "f32", "f32")
    v["v_mfma_f32_16x16x4_f32"] = Shape(16, 16, 4, 1, "f32", "f32", "f32")
    v["v_mfma_f32_16x16x8_xf32"] = Shape(16, 16, 8, 1, "xf32", "xf32", "f32")
    v["v_mfma_f32_32x32x4_xf32"] = Shape(32, 32, 4, 1, "xf32", "xf32", "f32")
    for t in ("f16", "bf16"):
        v[f"v_mfma_f32_32x32x8_{t}"] = Shape(32, 32, 8, 1, t, t, "f32")
        v[f"v_mfma_f32_16x16x16_{t}"] = Shape(16, 16, 16, 1, t, t, "f32")
    v["v_mfma_i32_32x32x4_2b_i8"] = Shape(32, 32, 4, 2, "i8", "i8", "i32")
    v["v_mfma_i32_16x16x4_4b_i8"] = Shape(16, 16, 4, 4, "i8", "i8", "i32")
    v["v_mfma_i32_4x4x4_16b_i8"] = Shape(4, 4, 4, 16, "i8", "i8", "i32")
    v["v_mfma_i32_32x32x16_i8"] = Shape(32, 32, 16, 1, "i8", "i8", "i32")
    v["v_mfma_i32_16x16x32_i8"] = Shape(16, 16, 32, 1, "i8", "i8", "i32")
    v["v_mfma_f64_16x16x4_f64"] = Shape(16, 16, 4, 1, "f64", "f64", "f64")
    v["v_mfma_f64_4x4x4_4b_f64"] = Shape(4, 4, 4, 4, "f64", "f64", "f64")
    for a in ("fp8", "bf8"):
        for b in ("fp8", "bf8"):
            v[f"v_mfma_f32_16x16x32_{a}_{b}"] = Shape(16, 16, 32, 1, a, b, "f32")
            v[f"v_mfma_f32_32x32x16_{a}_{b}"] = Shape(32, 32, 16, 1, a, b, "f32")
    # gfx950 (CDNA4): the f16/bf16 and i8 forms with twice the K (the layouts are the general rule's: CDNA4 ISA, 7.1.4)
    for t in ("f16", "bf16"):
        v[f"v_mfma_f32_16x16x32_{t}"] = Shape(16, 16, 32, 1, t, t, "f32")
        v[f"v_mfma_f32_32x32x16_{t}"] = Shape(32, 32, 16, 1, t, t, "f32")
    v["v_mfma_i32_16x16x64_i8"] = Shape(16, 16, 64, 1, "i8", "i8", "i32")
    v["v_mfma_i32_32x32x32_i8"] = Shape(32, 32, 32, 1, "i8", "i8", "i32")
    return v


VARIANTS = _variants()
GFX950_ONLY = frozenset(("v_mfma_f32_16x16x32_f16", "v_mfma_f32_32x32x16_f16", "v_mfma_f32_16x16x32_bf16",
                         "v_mfma_f32_32x32x16_bf16", "v_mfma_i32_16x16x64_i8", "v_mfma_i32_32x32x32_i8"))


# ---------------------------------------------------------------------------------------------- layouts


@cache
def input_layout(rows: int, k: int, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """(lane, element) [blocks, rows, k] of each A[i][k] (B[k][j] with rows = N) of every block."""
    e = k * rows * blocks // LANES
    b, i, kk = np.meshgrid(np.arange(blocks), np.arange(rows), np.arange(k), indexing="ij")
    return b * rows + (kk // e) * rows * blocks + i, kk % e


@cache
def output_layout(m: int, n: int, blocks: int, wide: bool) -> tuple[np.ndarray, np.ndarray]:
    """(register, lane) [blocks, m, n] of each C/D[i][j]: the 32-bit VGPR, or for f64 (`wide`) the pair's index."""
    h = 1 if wide else 4  # rows in one group
    groups = LANES // n  # groups of h rows side by side in a VGPR
    per_reg = -(-LANES * h // (m * n))  # blocks side by side in a VGPR
    b, i, j = np.meshgrid(np.arange(blocks), np.arange(m), np.arange(n), indexing="ij")
    reg = b * (m * n // LANES) + (i // (h * groups)) * h + i % h
    lane = (b % per_reg) * n + ((i // h) % groups) * per_reg * n + j
    return reg, lane


def registers(s: Shape, which: str) -> int:
    """VGPRs an operand of `s` spans: A / B (`which` "a", "b") or C / D ("c")."""
    if which == "c":
        return s.blocks * s.m * s.n // LANES * (2 if s.out == "f64" else 1)
    return max(1, s.per_lane * _BITS[s.a if which == "a" else s.b] // 32)


# ---------------------------------------------------------------------------------------------- values

def xf32_values(words: np.ndarray) -> np.ndarray:
    """f32 register words as the xf32 values the matrix core multiplies (f64): the 13 low mantissa bits cleared
    (truncation toward zero), NaNs kept NaN (clearing a NaN's payload could make it an infinity)."""
    x = words.view(F32)
    with np.errstate(invalid="ignore"):  # (a signalling NaN quiets as it widens)
        return np.where(np.isnan(x), x, (words & U32(0xFFFFE000)).view(F32)).astype(F64)


# The fp8/bf8 formats an architecture's MFMAs read: gfx942's FNUZ, gfx950's (CDNA4) OCP E4M3 / E5M2 (CDNA4 ISA 7.3;
# LLVM's gfx950 has fp8-conversion-insts with the OCP formats, and Triton's gfx950 dots feed them OCP bytes).
# The values per code: sem.minifloat's tables.
FP8_FORMATS = {"gfx942": (mf.FP8_FNUZ.table, mf.BF8_FNUZ.table), "gfx950": (mf.FP8.table, mf.BF8.table)}


def elements(raw: np.ndarray, kind: str, arch: str = "gfx942") -> np.ndarray:
    """Packed register words [nreg, n, lanes] (uint32) -> [n, lanes, elements] values (f64 or int64)."""
    nreg, n, lanes = raw.shape
    words = np.ascontiguousarray(raw.transpose(1, 2, 0))  # [n, lanes, nreg], lowest register first
    if kind == "f64":
        return words.view(F64)
    if kind == "f32":
        return words.view(F32).astype(F64)
    if kind == "xf32":
        return xf32_values(words)
    if kind in ("f16", "bf16"):
        h = words.view(U16)
        return (h.view(F16) if kind == "f16" else bf16_to_f32(h)).astype(F64)
    b = words.view(U8)
    if kind == "i8":
        return b.view(np.int8).astype(I64)
    fp8, bf8 = FP8_FORMATS[arch]
    return (fp8 if kind == "fp8" else bf8)[b]


def check_regs(ex, w, inst, first: int, count: int) -> int:
    """`first`, once registers first .. first + count - 1 are known to be in the wave's VGPR file."""
    if first + count > ex.st.vgpr.shape[0]:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: registers {first}..{first + count - 1} of the unified file "
                                       f"are past the {ex.st.vgpr.shape[0]} the kernel descriptor allocates")
    return first


def blgp_lanes(blgp: int) -> np.ndarray:
    """The register lane each of the matrix core's 64 B lanes reads under BLGP pattern `blgp` (module doc)."""
    lane = np.arange(LANES)
    if blgp == 0:
        return lane
    if blgp in (1, 2):
        return 32 * (blgp - 1) + lane % 32
    if blgp == 3:
        return (lane + 16) % LANES
    return 16 * (blgp - 4) + lane % 16


def a_blocks(ex, w, inst, blocks: int) -> np.ndarray:
    """The A block each of the product's blocks reads under CBSZ / ABID (module doc)."""
    cbsz, abid = inst.fields.get("cbsz", 0), inst.fields.get("abid", 0)
    if (1 << cbsz) > blocks or abid >= (1 << cbsz):
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: cbsz:{cbsz} abid:{abid} is outside the broadcasts of its "
                                       f"{blocks} block(s) (CBSZ <= log2(blocks), ABID < 2^CBSZ)")
    b = np.arange(blocks)
    return (b >> cbsz << cbsz) + abid


def operand(ex, w, inst, i: int, kind: str, count: int) -> np.ndarray:
    """A (i = 0) or B (i = 1): `count` registers from every lane as [n, lanes, elements] values of `kind`."""
    code = inst.fields[("src0", "src1")[i]]
    if code < 256:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: a constant or SGPR A/B operand is not modelled")
    reg = code - 256 + (ex.d.accum_offset if (inst.fields.get("acc", 0) >> i) & 1 else 0)
    return elements(ex.st.vgpr[check_regs(ex, w, inst, reg, count):reg + count, wsel(w), :], kind, inst.arch)


def _source(ex, w, inst, i: int, s: Shape) -> np.ndarray:
    """A (i = 0) or B (i = 1) as [n, blocks, rows, k] values, A's blocks after CBSZ / ABID, B's lanes after BLGP."""
    el = operand(ex, w, inst, i, s.a if i == 0 else s.b, registers(s, "a" if i == 0 else "b"))
    lane, e = input_layout(s.m if i == 0 else s.n, s.k, s.blocks)
    if i == 0:
        return el[:, lane, e][:, a_blocks(ex, w, inst, s.blocks)]
    if s.out != "f64":  # the f64 forms' BLGP field is neg:[a,b,c]
        lane = blgp_lanes(inst.fields.get("blgp", 0))[lane]
    return el[:, lane, e]  # [n, blocks, rows, k]


def read_c(ex, w, inst, s: Shape, code: int) -> np.ndarray:
    """C as [n, blocks, m, n] values from operand code `code` (a VGPR or AccVGPR tuple with acc_cd, or an inline
    constant / SGPR in every element)."""
    acc = ex.d.accum_offset if inst.fields.get("acc_cd", 0) else 0
    reg, lane = output_layout(s.m, s.n, s.blocks, s.out == "f64")
    nreg = registers(s, "c")
    if code < 256:  # an inline constant (or SGPR) in every element
        kind = {"f32": "f32", "i32": "b32", "f64": "f64"}[s.out]
        words = vector_src(ex, w, code, inst.literal, kind)
        if s.out == "f64":
            words = words.view(F64) if words.dtype == U64 else words.astype(U64).view(F64)
            return np.broadcast_to(words[:, :1, None, None], (len(w), s.blocks, s.m, s.n)).astype(F64)
        v = words[:, 0].astype(U32)
        v = v.view(F32).astype(F64) if s.out == "f32" else v.view(np.int32).astype(I64)
        return np.broadcast_to(v[:, None, None, None], (len(w), s.blocks, s.m, s.n))
    first = check_regs(ex, w, inst, code - 256 + acc, nreg)
    raw = ex.st.vgpr[first:first + nreg, wsel(w), :].transpose(1, 0, 2)  # [n, nreg, lanes]
    if s.out == "f64":
        pairs = np.ascontiguousarray(raw.reshape(len(w), nreg // 2, 2, LANES).transpose(0, 1, 3, 2)).view(F64)
        return pairs[..., 0][:, reg, lane]
    c = raw[:, reg, lane]
    return c.view(F32).astype(F64) if s.out == "f32" else c.view(np.int32).astype(I64)


def d_register(ex, w, inst, s: Shape) -> int:
    """D's first register in the wave's file (past ACCUM_OFFSET with acc_cd), checked to fit."""
    first = inst.fields["vdst"] + (ex.d.accum_offset if inst.fields.get("acc_cd", 0) else 0)
    return check_regs(ex, w, inst, first, registers(s, "c"))


def _multiply(s: Shape, a: np.ndarray, b: np.ndarray, c: np.ndarray, neg: int) -> np.ndarray:
    """D = C + A x B per block, in the order and roundings of the module doc."""
    if s.out == "i32":
        return c + np.einsum("xbik,xbjk->xbij", a, b)
    if s.out == "f64":
        if neg & 1:
            a = -a
        if neg & 2:
            b = -b
        d = -c if neg & 4 else c.copy()
        nearest = np.zeros(d.shape, np.int64)
        for k in range(s.k):
            d = fx.fma64(a[..., :, None, k], b[..., None, :, k], d, nearest)
        return d
    d = c.astype(F64)
    with np.errstate(all="ignore"):
        for k in range(s.k):
            d = d + a[..., :, None, k] * b[..., None, :, k]
    return d


def write_d(ex, w, s: Shape, vdst: int, d: np.ndarray) -> None:
    reg, lane = output_layout(s.m, s.n, s.blocks, s.out == "f64")
    nreg = registers(s, "c")
    out = np.zeros((len(w), nreg, LANES), U32)
    with np.errstate(all="ignore"):
        if s.out == "f64":
            pairs = out.reshape(len(w), nreg // 2, 2, LANES).transpose(0, 1, 3, 2).copy()  # [n, pair, lane, 2]
            pairs.view(F64)[..., 0][:, reg, lane] = d
            out = pairs.transpose(0, 1, 3, 2).reshape(len(w), nreg, LANES)
        elif s.out == "f32":
            out.view(F32)[:, reg, lane] = d.astype(F32)
        else:
            out[:, reg, lane] = (d & 0xFFFFFFFF).astype(U32)
    mask = np.ones((len(w), LANES), bool)
    for r in range(nreg):
        write_vgpr(ex, w, vdst + r, out[:, r, :], mask)


def mfma(name: str):
    """The semantic function of one MFMA variant."""
    s = VARIANTS[name]

    def fn(ex, w, inst):
        neg = inst.fields.get("blgp", 0) if s.out == "f64" else 0  # the f64 forms' neg:[a,b,c] sits in BLGP
        if ex.st.lanes != LANES:
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: an MFMA needs a wave64")
        a, b = _source(ex, w, inst, 0, s), _source(ex, w, inst, 1, s)
        c = read_c(ex, w, inst, s, inst.fields["src2"])
        write_d(ex, w, s, d_register(ex, w, inst, s), _multiply(s, a, b, c, neg))
    return fn


for _name in VARIANTS:
    register(_name, mfma(_name), G)


# ---------------------------------------------------------------------------------------------- AccVGPR moves


def _accvgpr_read(ex, w, inst):
    f = inst.fields
    write_vgpr(ex, w, f["vdst"], ex.st.vgpr[f["src0"] - 256 + ex.d.accum_offset, wsel(w), :], ex.st.exec_lanes(w))


def _accvgpr_write(ex, w, inst):
    f = inst.fields
    value = vector_src(ex, w, f["src0"], inst.literal)
    write_vgpr(ex, w, f["vdst"] + ex.d.accum_offset, value, ex.st.exec_lanes(w))


def _accvgpr_mov(ex, w, inst):
    f = inst.fields
    acc = ex.d.accum_offset
    write_vgpr(ex, w, f["vdst"] + acc, ex.st.vgpr[f["src0"] - 256 + acc, wsel(w), :], ex.st.exec_lanes(w))


register("v_accvgpr_read_b32", _accvgpr_read, G)
register("v_accvgpr_write_b32", _accvgpr_write, G)
register("v_accvgpr_mov_b32", _accvgpr_mov, G)
