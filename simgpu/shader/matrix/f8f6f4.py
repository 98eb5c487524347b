"""gfx950 (CDNA4) f8f6f4 MFMAs and the scaled MFMAs: v_mfma_f32_16x16x128_f8f6f4, v_mfma_f32_32x32x64_f8f6f4 and
their scaled forms v_mfma_scale_f32_*_f8f6f4 (v_mfma_ld_scale_b32 and the MFMA, decoded as one instruction: the
codec's "scaled" form, docs/isa.md).

D = C + A x B (one block, f32 C and D in the dense MFMA layout). A's format is the CBSZ field's code, B's the BLGP
field's (LLVM's llvm.amdgcn.mfma.scale.*.f8f6f4 take them as the cbsz / blgp arguments): 0 FP8 (OCP E4M3), 1 BF8
(E5M2), 2 FP6 (E2M3), 3 BF6 (E3M2), 4 FP4 (E2M1); 5-7 are an illegal_instruction fault. Each lane holds 32 values
of one row of A (column of B): A[i][k] in lane i + M * (k // 32), value k % 32 (gfx9's input layout), the lane's
registers (8, 6 or 4 VGPRs) one little-endian bit string with value e at bits [w*e, w*e + w) for w-bit values (a
reading: the packing of FP8 bytes extended to the 6- and 4-bit formats, as LLVM's v6i32 / v4i32 operands hold them).

Scales (the scaled forms): E8M0 bytes, one per lane of each scale VGPR: the lane that holds a row's (column's) 32
values holds their block scale, so A[i][k] is multiplied by 2^(s - 127) with s the byte of the A scale VGPR's lane
i + M * (k // 32) that op_sel[0] + 2 * op_sel_hi[0] selects (B: op_sel[1], op_sel_hi[1], the second VGPR). The
unscaled forms are scale 1. A scale of 0xFF is NaN.

Arithmetic as the other MFMAs' (matrix.gfx9): every product of scaled values is exact in f64; D = C + the products in
k order, summed in f64 and rounded once to f32 (nearest even). FP8 E4M3's NaN code and BF8's infinities / NaNs give
what f64 arithmetic gives. EXEC is ignored, as by every MFMA.
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.matrix.gfx9 import LANES, Shape, check_regs, d_register, input_layout, read_c, write_d
from simgpu.shader.sem.minifloat import BF6, E8M0, FP4, FP6
from simgpu.shader.semantics import register
from simgpu.shader.state import wsel
from simgpu.shader.vector.gfx12 import BF8, FP8

G = "gfx9"
BLOCK = 32  # values of a row (column) per lane: one MX scale block
# format code -> (bits per value, value table)
FORMATS = {0: (8, FP8), 1: (8, BF8), 2: (6, FP6), 3: (6, BF6), 4: (4, FP4)}
SHAPES = {"16x16x128": Shape(16, 16, 128, 1, "f8f6f4", "f8f6f4", "f32"),
          "32x32x64": Shape(32, 32, 64, 1, "f8f6f4", "f8f6f4", "f32")}


def lane_values(words: np.ndarray, code: int) -> np.ndarray:
    """[n, lanes, registers] uint32 -> [n, lanes, 32] values of format `code`, value e at bits [w*e, w*e + w)."""
    bits, table = FORMATS[code]
    n, lanes, regs = words.shape
    raw = np.unpackbits(np.ascontiguousarray(words).view(np.uint8), axis=-1, bitorder="little")  # [n, lanes, 32*regs]
    codes = raw.reshape(n, lanes, BLOCK, bits).astype(np.int64) @ (1 << np.arange(bits))
    return table[codes]


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
    lane, e = input_layout(s.m if i == 0 else s.n, s.k, 1)
    return lane_values(words, code)[:, lane[0], e[0]]


def _scales(ex, w, inst, i: int, s: Shape) -> np.ndarray:
    """A's (i = 0) or B's (i = 1) scale factor of each [n, rows, k] value: 1 unscaled, else the E8M0 byte its lane's
    scale VGPR holds at the op_sel / op_sel_hi byte."""
    lane, _ = input_layout(s.m if i == 0 else s.n, s.k, 1)
    scale = inst.info.get("scale")
    if scale is None:
        return np.ones((len(w), *lane[0].shape))
    byte = (scale["op_sel"] >> i & 1) | (scale["op_sel_hi"] >> i & 1) << 1
    words = ex.st.vgpr[check_regs(ex, w, inst, scale[("src0", "src1")[i]] - 256, 1), wsel(w), :]  # [n, lanes]
    return E8M0[(words >> np.uint32(8 * byte)) & np.uint32(0xFF)][:, lane[0]]


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


for _shape in SHAPES:
    register(f"v_mfma_f32_{_shape}_f8f6f4", f8f6f4(_shape), G)
    register(f"v_mfma_scale_f32_{_shape}_f8f6f4", f8f6f4(_shape), G)
