"""gfx950 (CDNA4) LDS instructions: the transposing reads (family gfx9's own entries; gfx942 code never holds them).

ds_read_b64_tr_b16 / _b8 / _b4 and ds_read_b96_tr_b6 ("MFMA Transpose Load from LDS", CDNA4 ISA 11.4): each lane
reads R bits at its address as ds_read_b64 (R = 64) or ds_read_b96 (R = 96) does: E = R/B elements of B bits
(4 for b16, 8 for b8, 16 for b4 and b6), E consecutive M (or N) values of a column-major A or row-major B at one K.
The reads of each group of 16 lanes are then transposed: lane b + (16/E)*k of the group has read block b (M values
b*E .. b*E+E-1) at K = k, and lane l of the group receives element l % E of the reads of block l / E at K = 0 .. E-1
-- E consecutive K values of one M, the MFMA operand layout (CDNA4 ISA 7.1.4); for b4 and b6 (E = 16) that is a
16x16 transpose of the group's elements. A lane's R bits are one little-endian bit string, element e at bits
[B*e, B*e + B) (as the f8f6f4 MFMAs read their registers). The reference says what the transpose is for ("two
instructions load a matrix ... each lane holds 4 consecutive M or N values"), not this lane grouping; the grouping is
this model's reading of it, confirmed by compiled code only: Triton 3.9's gfx950 dots and matmuls (f16, bf16, int8,
fp8: b16 and b8; tl.dot_scaled with an e2m1 operand packed along N, tests/data/triton/gfx950/
dot_scaled_e2m1_nk: b4) match numpy under it (tests/runtime/test_triton_corpus.py); a 4x4 transpose within groups
of 4 consecutive lanes, the other reading tried for b16/b8, makes them all wrong. ds_read_b96_tr_b6 follows the
same rule by analogy (16 elements of 6 bits a lane) and is not confirmed: no compiler here emits it for a product
that could tell. EXEC must be all ones (the reference says so; otherwise illegal_instruction).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.lds import ds  # noqa: F401 - the shared ds_load_b64 / _b96 the transposed loads run
from simgpu.shader.renamed import renamed
from simgpu.shader.semantics import register
from simgpu.shader.state import wsel

G = "gfx9"
LANES = 64
FORMS = {"ds_read_b64_tr_b16": (16, 64), "ds_read_b64_tr_b8": (8, 64), "ds_read_b64_tr_b4": (4, 64),
         "ds_read_b96_tr_b6": (6, 96)}  # mnemonic -> (element bits B, bits a lane reads R)
_LOAD = {64: "ds_load_b64", 96: "ds_load_b96"}


def source(bits: int, read: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """(lane, element) [lanes, elements] each result element is read from: in each group of 16 lanes, which hold
    16/E blocks of E consecutive M (N) values for E values of K (E = read/bits elements a lane: lane b + (16/E)*k
    reads block b at K = k), lane l receives element l % E of the rows of its block, K = 0 .. E-1."""
    e = read // bits
    lane, el = np.meshgrid(np.arange(LANES), np.arange(e), indexing="ij")
    return (lane // 16) * 16 + el * (16 // e) + (lane % 16) // e, lane % e


SOURCE = {b: source(b, r) for b, r in FORMS.values()}


def unit_source(bits: int, read: int) -> tuple[int, np.ndarray, np.ndarray]:
    """(u, lane, unit) [lanes, read/u]: the transpose as a gather of u-bit units (u = gcd(bits, 8): bytes for b8 and
    b16, nibbles for b4, bit pairs for b6), each result unit's source lane and unit index in that lane's read."""
    u = int(np.gcd(bits, 8))
    lanes, elems = SOURCE[bits]
    per = bits // u
    j = np.arange(read // u)  # unit j of a lane's result is unit j % per of its element j // per
    return u, lanes[:, j // per], elems[:, j // per] * per + j % per


UNITS = {b: unit_source(b, r) for b, r in FORMS.values()}


def _transpose(regs: np.ndarray, bits: int) -> np.ndarray:
    """The lanes' dwords regs [dwords, n, lanes] after the group transpose (a lane's dwords one little-endian bit
    string, element e at bits [B*e, B*e + B))."""
    u, lanes_of, unit_of = UNITS[bits]
    by = np.ascontiguousarray(regs.transpose(1, 2, 0)).view(np.uint8)  # [n, lanes, 4*dwords] little-endian bytes
    if u == 8:
        out = by[:, lanes_of, unit_of]
    else:
        shifts = np.arange(8 // u, dtype=np.uint8) * np.uint8(u)
        units = ((by[..., None] >> shifts) & np.uint8((1 << u) - 1)).reshape(*by.shape[:-1], -1)
        moved = units[:, lanes_of, unit_of].reshape(*by.shape, 8 // u)
        out = (moved << shifts).sum(axis=-1, dtype=np.uint8)
    return np.ascontiguousarray(out).view(np.uint32).transpose(2, 0, 1)


def _transposed(bits: int, read: int):
    load = renamed(_LOAD[read])
    dwords = read // 32

    def run(ex, w, inst):
        if ex.st.lanes != LANES or not ex.st.exec_full(w):
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic} needs a wave64 with EXEC all ones")
        load(ex, w, inst)
        vdst = inst.fields["vdst"] + (ex.d.accum_offset if inst.fields.get("acc") else 0)
        ix = wsel(w)
        ex.st.vgpr[vdst:vdst + dwords, ix, :] = _transpose(ex.st.vgpr[vdst:vdst + dwords, ix, :], bits)
    run.gfx11_name, run.gfx11_view = load.gfx11_name, load.gfx11_view  # the sanitizers' footprint: the plain read's
    return run


for _name, (_bits, _read) in FORMS.items():
    register(_name, _transposed(_bits, _read), G)
