"""gfx950 (CDNA4) f8f6f4 MFMAs and the scaled MFMAs: v_mfma_f32_16x16x128_f8f6f4, v_mfma_f32_32x32x64_f8f6f4 and
their scaled forms v_mfma_scale_f32_*_f8f6f4 (v_mfma_ld_scale_b32 and the MFMA, decoded as one instruction: the
codec's "scaled" form, docs/isa.md).

D = C + A x B (one block, f32 C and D in the dense MFMA layout). A's format is the CBSZ field's code, B's the BLGP
field's (LLVM's llvm.amdgcn.mfma.scale.*.f8f6f4 take them as the cbsz / blgp arguments): 0 FP8 (OCP E4M3), 1 BF8
(E5M2), 2 FP6 (E2M3), 3 BF6 (E3M2), 4 FP4 (E2M1); 5-7 are an illegal_instruction fault. Each lane holds 32 values
of one row of A (column of B), in runs of R consecutive k: run r of lane group g (lanes g*M .. g*M + M-1, G = 64 / M
groups) holds k = (r * G + g) * R .. + R-1 as the lane's values r*R .. r*R + R-1. FP8 / BF8 have R = 16 (a 128-bit
register quad per run: 16x16x128's lanes 0-15 hold k 0-15 and 64-79; 32x32x64's lanes 0-31 k 0-15 and 32-47); FP4
has R = 32 (its quad holds all 32: lane i + M * (k // 32), value k % 32, gfx9's input layout), and so do FP6 / BF6
(not confirmed: no compiler here emits them). The lane's registers (8, 6 or 4 VGPRs) are one little-endian bit string,
value e at bits [w*e, w*e + w) for w-bit values (FP8's byte packing extended to 6 and 4 bits, as LLVM's v6i32 / v4i32
operands hold them).

Scales (the scaled forms): E8M0 bytes, one per lane of each scale VGPR, the byte op_sel[0] + 2 * op_sel_hi[0] of the
first (A) and op_sel[1] + 2 * op_sel_hi[1] of the second (B). Row i's scale of K block kb (k // 32) is in lane
i + M * kb (B: column j's in lane j + N * kb); A[i][k] is multiplied by 2^(s - 127). A scale of 0xFF is NaN; the
unscaled forms are scale 1.

Where these come from: the runs and the scale lanes are the ones under which Triton 3.9's gfx950 tl.dot_scaled
kernels (tests/data/triton/gfx950/dot_scaled_*: e4m3, e5m2 and e2m1 operands) give numpy's products. With FP8 in
gfx9's contiguous layout a lane's values would span two K blocks in Triton's code, which one scale per lane cannot
serve; with FP4 in runs of 16 Triton's scales land on the wrong blocks; a product with unit scales cannot tell the
layouts apart. A reading confirmed by compiled code only (the CDNA4 reference's tables were not at hand).

A v_mfma_ld_scale_b32 the codec does not pair with the next word (it is not followed by an f8f6f4 MFMA with abid 1,
or it is not as LLVM writes a pair's first word: an SGPR or constant source, op_sel_hi's default ones) stands alone.
It has no destination (LLVM's syntax: `v_mfma_ld_scale_b32 v0, 64`, two sources; its VDST field is unused): what it
loads are the scales of an MFMA with abid 1 after it, which the codec decodes with it as one scaled MFMA. Alone it
writes no register and changes no state a later instruction reads -- an f8f6f4 MFMA with abid 0 is unscaled whatever
precedes it -- so it runs as having no effect. (An abid-1 MFMA word not right after a scale word does not decode: the
codec's error, not a fault this models.)
"""

from __future__ import annotations

from functools import cache

import numpy as np

from simgpu.shader.matrix.gfx9 import LANES, Shape, check_regs, d_register, read_c, write_d
from simgpu.shader.sem import minifloat as mf
from simgpu.shader.sem.minifloat import E8M0
from simgpu.shader.semantics import register
from simgpu.shader.state import wsel

G = "gfx9"
BLOCK = 32  # values of a row (column) per lane: one MX scale block
# format code -> (bits per value, value table)
FORMATS = {0: (8, mf.FP8.table), 1: (8, mf.BF8.table), 2: (6, mf.FP6.table), 3: (6, mf.BF6.table), 4: (4, mf.FP4.table)}
SHAPES = {"16x16x128": Shape(16, 16, 128, 1, "f8f6f4", "f8f6f4", "f32"),
          "32x32x64": Shape(32, 32, 64, 1, "f8f6f4", "f8f6f4", "f32")}


def lane_values(words: np.ndarray, code: int) -> np.ndarray:
    """[n, lanes, registers] uint32 -> [n, lanes, 32] values of format `code`, value e at bits [w*e, w*e + w)."""
    bits, table = FORMATS[code]
    n, lanes, regs = words.shape
    raw = np.unpackbits(np.ascontiguousarray(words).view(np.uint8), axis=-1, bitorder="little")  # [n, lanes, 32*regs]
    codes = raw.reshape(n, lanes, BLOCK, bits).astype(np.int64) @ (1 << np.arange(bits))
    return table[codes]


@cache
def layout(rows: int, k: int, bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(lane, value) [rows, k] of each A[i][k] (B[k][j] with rows = N) of a `bits`-wide format (module doc)."""
    run, groups = (16 if bits == 8 else 32), LANES // rows
    i, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    return i + rows * ((kk // run) % groups), (kk // (run * groups)) * run + kk % run


def _source(ex, w, inst, i: int, s: Shape) -> np.ndarray:
    """A (i = 0) or B (i = 1) as [n, rows, k] values (unscaled)."""
    f = inst.fields
    code = f[("cbsz", "blgp")[i]]
    if code not in FORMATS:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: format code {code} of {'AB'[i]} is reserved")
    src = f[("src0", "src1")[i]]
    if src < 256:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: a constant or SGPR A/B operand is not modelled")
    regs = FORMATS[code][0] * BLOCK // 32
    first = check_regs(ex, w, inst, src - 256 + (ex.d.accum_offset if (f.get("acc", 0) >> i) & 1 else 0), regs)
    words = ex.st.vgpr[first:first + regs, wsel(w), :].transpose(1, 2, 0)  # [n, lanes, regs]
    lane, e = layout(s.m if i == 0 else s.n, s.k, FORMATS[code][0])
    return lane_values(words, code)[:, lane, e]


def _scales(ex, w, inst, i: int, s: Shape) -> np.ndarray:
    """A's (i = 0) or B's (i = 1) scale factor of each [n, rows, k] value: 1 unscaled, else the E8M0 byte its lane's
    scale VGPR holds at the op_sel / op_sel_hi byte."""
    rows = s.m if i == 0 else s.n
    scale = inst.info.get("scale")
    if scale is None:
        return np.ones((len(w), rows, s.k))
    lane = np.arange(rows)[:, None] + rows * (np.arange(s.k)[None, :] // BLOCK)  # the lane of each entry's scale
    byte = (scale["op_sel"] >> i & 1) | (scale["op_sel_hi"] >> i & 1) << 1
    words = ex.st.vgpr[check_regs(ex, w, inst, scale[("src0", "src1")[i]] - 256, 1), wsel(w), :]  # [n, lanes]
    return E8M0[(words >> np.uint32(8 * byte)) & np.uint32(0xFF)][:, lane]


def f8f6f4(shape: str):
    """The semantic function of the f8f6f4 MFMA of `shape`, scaled or not (the decoded instruction says)."""
    s = SHAPES[shape]

    def fn(ex, w, inst):
        if ex.st.lanes != LANES:
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: an MFMA needs a wave64")
        a = _source(ex, w, inst, 0, s) * _scales(ex, w, inst, 0, s)  # [n, M, K], exact (powers of two)
        b = _source(ex, w, inst, 1, s) * _scales(ex, w, inst, 1, s)  # [n, N, K]
        d = read_c(ex, w, inst, s, inst.fields["src2"]).astype(np.float64)
        with np.errstate(all="ignore"):
            for k in range(s.k):
                d = d + (a[:, :, None, k] * b[:, None, :, k])[:, None]
        write_d(ex, w, s, d_register(ex, w, inst, s), d)
    return fn


def ld_scale(ex, w, inst):
    """A v_mfma_ld_scale_b32 standing alone: no register or state a later instruction reads changes (module doc)."""
    return None


register("v_mfma_ld_scale_b32", ld_scale, G)
for _shape in SHAPES:
    register(f"v_mfma_f32_{_shape}_f8f6f4", f8f6f4(_shape), G)
    register(f"v_mfma_scale_f32_{_shape}_f8f6f4", f8f6f4(_shape), G)
