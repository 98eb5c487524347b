"""Loads into LDS (LDS DMA) of the gfx9 family: global_load_lds_dword (gfx942 has it too; Triton's gfx950 code uses
it) and gfx950's (CDNA4) global_load_lds_dwordx3 / dwordx4.

Each active lane reads its global address (as global_load_dword / _dwordx3 / _dwordx4 do: saddr or a 64-bit vaddr,
plus the instruction's offset) and the data goes to the workgroup's LDS instead of a VGPR, at (CDNA3/CDNA4 ISA,
"Global"): LDS_ADDR = M0[17:2] * 4 + INST.OFFSET + ThreadID * 4 (ThreadID * 16 for dwordx3 and dwordx4, whose
dwordx3 leaves the fourth dword of a lane's slot unwritten). Lanes off in EXEC read and write nothing. Triton 3.9's
gfx950 f32 matmuls stage their operands so and match numpy (tests/runtime/test_triton_corpus.py).

Not implemented: the sub-dword forms (global_load_lds_ubyte/sbyte/ushort/sshort: how the LDS slot is filled is not
stated), scratch_load_lds_*, and MUBUF's lds bit (buffer_load_* ... lds).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.lds.ds_mem import lds_write
from simgpu.shader.memory.vmem import global_addresses, global_read
from simgpu.shader.renamed import renamed
from simgpu.shader.semantics import register
from simgpu.shader.state import null_and_m0, wsel

G = "gfx9"
_SIZES = {"dword": 4, "dwordx3": 12, "dwordx4": 16}


def _lds_dma(size: int):
    view_of = renamed("global_load_b32").gfx11_view  # gfx11's field codes, which global_addresses reads

    def run(ex, w, inst):
        mask = ex.st.exec_lanes(w)
        data = global_read(ex, global_addresses(ex, w, view_of(ex, inst)), size, mask)
        m0 = ex.st.sgpr[wsel(w), null_and_m0(G)[1]].astype(np.int64)
        offset = inst.fields["offset"] - (1 << 13 if inst.fields["offset"] >> 12 else 0)  # 13 bits, signed
        base = (m0 >> 2 & 0xFFFF) * 4 + offset  # M0[17:2], in dwords
        stride = 4 if size == 4 else 16
        addr = base[:, None] + stride * np.arange(ex.st.lanes, dtype=np.int64)[None, :]
        lds_write(ex, w, addr, data, mask)
    return run


for _name, _size in _SIZES.items():
    register(f"global_load_lds_{_name}", _lds_dma(_size), G)
