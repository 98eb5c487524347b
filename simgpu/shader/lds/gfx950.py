"""gfx950 (CDNA4) LDS instructions: the transposing reads (family gfx9's own entries; gfx942 code never holds them).

ds_read_b64_tr_b16 / ds_read_b64_tr_b8 ("MFMA Transpose Load from LDS", CDNA4 ISA 11.4): each lane reads 64 bits at
its address as ds_read_b64 does: E = 64/B elements of B bits, E consecutive M (or N) values of a column-major A or
row-major B at one K. The reads of each group of 16 lanes are then transposed: lane b + (16/E)*k of the group has read
block b (M values b*E .. b*E+E-1) at K = k, and lane l of the group receives element l % E of the reads of block l / E
at K = 0 .. E-1 -- E consecutive K values of one M, the MFMA operand layout (CDNA4 ISA 7.1.4). The reference says what
the transpose is for ("two instructions load a matrix ... each lane holds 4 consecutive M or N values"), not this
lane grouping; the grouping is this model's reading of it, and the one under which Triton 3.9's gfx950 dots and
matmuls (f16, bf16, int8, fp8, which load their MFMA operands with these instructions) match numpy
(tests/runtime/test_triton_corpus.py); a 4x4 transpose within groups of 4 consecutive lanes, the other reading tried,
makes them all wrong. EXEC must be all ones (the reference says so; otherwise illegal_instruction).

Not implemented: ds_read_b64_tr_b4 and ds_read_b96_tr_b6 (their 4- and 6-bit groups are not described).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.renamed import renamed
from simgpu.shader.semantics import register
from simgpu.shader.state import wsel

G = "gfx9"
LANES = 64


def _source(bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(lane, element) [lanes, elements] each result element is read from: in each group of 16 lanes, which hold
    16/E blocks of E consecutive M (N) values for E values of K (E = 64/bits elements a lane: lane b + (16/E)*k reads
    block b at K = k), lane l receives element l % E of the rows of its block, K = 0 .. E-1."""
    e = 64 // bits
    lane, el = np.meshgrid(np.arange(LANES), np.arange(e), indexing="ij")
    return (lane // 16) * 16 + el * (16 // e) + (lane % 16) // e, lane % e


SOURCE = {b: _source(b) for b in (16, 8)}


def _transposed(bits: int):
    load = renamed("ds_load_b64")
    group = 64 // bits  # elements a lane reads (E)

    def run(ex, w, inst):
        if ex.st.lanes != LANES or not ex.st.exec_full(w):
            raise ex.illegal_inst(w, inst, f"{inst.mnemonic} needs a wave64 with EXEC all ones")
        load(ex, w, inst)
        vdst = inst.fields["vdst"] + (ex.d.accum_offset if inst.fields.get("acc") else 0)
        ix = wsel(w)
        pair = ex.st.vgpr[vdst:vdst + 2, ix, :]  # [2, n, lanes]
        words = np.ascontiguousarray(pair.transpose(1, 2, 0)).view(np.uint64)[..., 0]  # [n, lanes]
        el = (words[..., None] >> (np.arange(group, dtype=np.uint64) * np.uint64(bits))) & np.uint64((1 << bits) - 1)
        moved = el[:, SOURCE[bits][0], SOURCE[bits][1]]  # [n, lanes, elements]
        out = (moved << (np.arange(group, dtype=np.uint64) * np.uint64(bits))).sum(axis=-1, dtype=np.uint64)
        ex.st.vgpr[vdst, ix, :] = (out & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        ex.st.vgpr[vdst + 1, ix, :] = (out >> np.uint64(32)).astype(np.uint32)
    run.gfx11_name, run.gfx11_view = load.gfx11_name, load.gfx11_view  # the sanitizers' footprint: ds_read_b64's
    return run


register("ds_read_b64_tr_b16", _transposed(16), G)
register("ds_read_b64_tr_b8", _transposed(8), G)
