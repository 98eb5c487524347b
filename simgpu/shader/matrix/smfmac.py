"""gfx942 / gfx950 (CDNA3 / CDNA4) sparse matrix instructions: SMFMAC, D += A x B with A 2:4 structured-sparse.

v_smfmac_<D type>_<M>x<N>x<K>_<A/B type>: one block, M x N x K with K the dense depth. A is stored compressed: in
each group of 4 consecutive k of a row, 2 values are kept (the other two are zero), so A's registers hold an M x K/2
matrix in gfx9's input layout (matrix.gfx9.input_layout with K/2: lane i + M * (kc // E'), element kc % E' of the
lane's packed registers, E' = (K/2) * M / 64). B is dense (the usual layout with K). The accumulator is D itself
(vdst is read as C and written: AccVGPRs with acc_cd); the layouts of C and D are the dense MFMA's.

src2 is a VGPR of compression indices (AMD's matrix instruction calculator, "compression index"; LLVM's
llvm.amdgcn.smfmac.* take it as an i32): compressed element e of a lane (the lane's e-th stored value) has a 2-bit
index, bits [2e+1 : 2e] of the lane's index set, giving its position 0..3 in its group of 4: the stored value kc of
row i is A[i][4 * (kc // 2) + index]. A lane's E' indices take 2E' bits, so a VGPR holds 32 / 2E' sets, the set at bit
2E' * ABID (gfx942's 16-bit forms: 4 sets of 8 bits, 8-bit forms: 2 of 16; gfx950's 16-bit forms 2 of 16, 8-bit forms
one of 32). CBSZ != 0 selects set 0 whatever ABID says (the calculator's reading of the ISA); ABID past the last set is
an illegal_instruction fault.

Arithmetic as the dense MFMAs' (matrix.gfx9): D = C + sum over the stored values in kc order of A's value times the
B entry its index names, each product exact, summed in f64 and rounded once to f32 (i8: exact, wrapped to 32 bits).
With the two indices of a group increasing, as the compression writes them, that is the dense product of the
decompressed A; with equal or decreasing indices (the ISA does not say) the same rule applies: each stored value
meets the B row its index names. fp8 / bf8 are the architecture's formats (FNUZ on gfx942, OCP on gfx950). EXEC is
ignored as by the MFMAs.

gfx950's forms use the same contiguous layout with twice the K; for their 256-bit B operands that is not confirmed
(gfx950's f8f6f4 MFMAs read 256-bit FP8 operands as two 128-bit runs from the two halves of K: matrix.f8f6f4), and no
compiler here emits SMFMACs for a test that could tell.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simgpu.shader.matrix.gfx9 import LANES, Shape, check_regs, input_layout, operand, read_c, registers, write_d
from simgpu.shader.semantics import register
from simgpu.shader.state import wsel

G = "gfx9"
_BITS = {"f16": 16, "bf16": 16, "i8": 8, "fp8": 8, "bf8": 8}


@dataclass(frozen=True)
class Sparse:
    """One SMFMAC: the dense shape (K the dense depth) whose A is stored at half K."""

    dense: Shape

    @property
    def stored(self) -> int:
        """E': the compressed A values one lane holds."""
        return self.dense.k // 2 * self.dense.m // LANES

    @property
    def a_registers(self) -> int:
        return self.stored * _BITS[self.dense.a] // 32

    @property
    def index_sets(self) -> int:
        return 32 // (2 * self.stored)


def _variants() -> dict[str, Sparse]:
    v = {}
    for scale in (1, 2):  # gfx942's forms, gfx950's with twice the K
        for t in ("f16", "bf16"):
            v[f"v_smfmac_f32_16x16x{32 * scale}_{t}"] = Sparse(Shape(16, 16, 32 * scale, 1, t, t, "f32"))
            v[f"v_smfmac_f32_32x32x{16 * scale}_{t}"] = Sparse(Shape(32, 32, 16 * scale, 1, t, t, "f32"))
        v[f"v_smfmac_i32_16x16x{64 * scale}_i8"] = Sparse(Shape(16, 16, 64 * scale, 1, "i8", "i8", "i32"))
        v[f"v_smfmac_i32_32x32x{32 * scale}_i8"] = Sparse(Shape(32, 32, 32 * scale, 1, "i8", "i8", "i32"))
        for a in ("fp8", "bf8"):
            for b in ("fp8", "bf8"):
                v[f"v_smfmac_f32_16x16x{64 * scale}_{a}_{b}"] = Sparse(Shape(16, 16, 64 * scale, 1, a, b, "f32"))
                v[f"v_smfmac_f32_32x32x{32 * scale}_{a}_{b}"] = Sparse(Shape(32, 32, 32 * scale, 1, a, b, "f32"))
    return v


VARIANTS = _variants()


def _index_set(ex, w, inst, sp: Sparse) -> np.ndarray:
    """The selected set of each lane's 2-bit indices: [n, lanes] words shifted so set bit 0 is bit 0."""
    code = inst.fields["src2"]
    if code < 256:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: the index operand must be a VGPR")
    abid = 0 if inst.fields.get("cbsz", 0) else inst.fields.get("abid", 0)
    if abid >= sp.index_sets:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: abid:{abid} is past its {sp.index_sets} index set(s)")
    words = ex.st.vgpr[check_regs(ex, w, inst, code - 256, 1), wsel(w), :]
    return words >> np.uint32(2 * sp.stored * abid)


def _dense_k(idx_words: np.ndarray, sp: Sparse) -> np.ndarray:
    """[n, M, K/2] dense k of each stored A value: 4 * (kc // 2) plus its 2-bit index."""
    s = sp.dense
    lane, e = input_layout(s.m, s.k // 2, 1)  # [1, M, K/2]
    index = (idx_words[:, lane[0]] >> (2 * e[0]).astype(np.uint32)) & np.uint32(3)
    kc = np.arange(s.k // 2)
    return 4 * (kc // 2) + index.astype(np.int64)


def _multiply(s: Shape, a: np.ndarray, bg: np.ndarray, c: np.ndarray) -> np.ndarray:
    """D = C + sum_kc A[i][kc] * B[k(kc)][j] in kc order (bg [n, M, K/2, N] the gathered B rows)."""
    if s.out == "i32":
        return c + np.einsum("xik,xikj->xij", a, bg)[:, None]
    d = c.astype(np.float64)
    with np.errstate(all="ignore"):
        for kc in range(a.shape[-1]):
            d = d + (a[:, :, kc, None] * bg[:, :, kc, :])[:, None]
    return d


def smfmac(name: str):
    """The semantic function of one SMFMAC variant."""
    sp = VARIANTS[name]
    s = sp.dense

    def fn(ex, w, inst):
        if ex.st.lanes != LANES:
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: an SMFMAC needs a wave64")
        kd = _dense_k(_index_set(ex, w, inst, sp), sp)  # [n, M, K/2]
        lane, e = input_layout(s.m, s.k // 2, 1)
        a = operand(ex, w, inst, 0, s.a, sp.a_registers)[:, lane[0], e[0]]  # [n, M, K/2]
        lane, e = input_layout(s.n, s.k, 1)
        b = operand(ex, w, inst, 1, s.b, registers(s, "b"))[:, lane[0], e[0]]  # [n, N, K]
        bg = b.transpose(0, 2, 1)[np.arange(len(w))[:, None, None], kd]  # [n, M, K/2, N]
        vdst = inst.fields["vdst"]
        c = read_c(ex, w, inst, s, vdst + 256)
        first = vdst + (ex.d.accum_offset if inst.fields.get("acc_cd", 0) else 0)
        write_d(ex, w, s, check_regs(ex, w, inst, first, registers(s, "c")), _multiply(s, a, bg, c))
    return fn


for _name in VARIANTS:
    register(_name, smfmac(_name), G)
