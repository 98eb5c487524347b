"""Loads into LDS (LDS DMA) of the gfx9 family: global_load_lds_ubyte/sbyte/ushort/sshort/dword and MUBUF's lds bit
(buffer_load_ubyte/sbyte/ushort/sshort/dword ... lds: gfx942's too), and gfx950's (CDNA4) global_load_lds_dwordx3 /
dwordx4 and buffer_load_dwordx3/x4 ... lds.

Each active lane reads its global address as the load without the LDS bit does (GLOBAL: saddr or a 64-bit vaddr,
plus the instruction's offset; MUBUF: the V#'s base, soffset, the index and offset VGPRs and the instruction's
offset, range-checked by gfx9's rules, an out-of-range access reading 0) and the data goes to the workgroup's LDS
instead of a VGPR, at (CDNA3/CDNA4 ISA): LDS_ADDR = M0[17:2] * 4 + INST.OFFSET + ThreadID * 4 (ThreadID * 16 for
dwordx3 and dwordx4). The instruction's offset moves both addresses, as LLVM's intrinsics
(llvm.amdgcn.global.load.lds, llvm.amdgcn.raw/struct.buffer.load.lds) use it: their immediate offset is the
instruction's. Lanes off in EXEC read and write nothing. Triton 3.9's gfx950 f32 matmuls stage their operands through
global_load_lds_dword and match numpy (tests/runtime/test_triton_corpus.py).

What fills a lane's slot when the load is narrower than it: the reference gives the slot's address only. Triton's AMD
backend states it (TargetFeatures::supportsDirectToLdsLoadBitWidth, triton-lang/triton
third_party/amd/lib/Dialect/TritonAMDGPU/IR/TargetFeatures.cpp, which refuses these widths for that reason): 8- and
16-bit loads "get extended to 32 bit" and CDNA4's 96-bit ones to 128 bits. So a sub-dword load writes its whole
dword slot, and dwordx3 its 16-byte slot. The extension is modelled as the VGPR form's: the byte or short zero-
extended (ubyte, ushort) or sign-extended (sbyte, sshort), dwordx3's fourth dword 0 -- a reading of "extended" (the
signed and unsigned opcodes differ only if the value is widened so), not confirmed by a compiled use whose result
tells: Triton refuses these widths, and tests/simgpu/shader/test_cdna4_lds.py checks the model against this reading.

Not implemented: scratch_load_lds_* (illegal_instruction).
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.lds.ds_mem import lds_write
from simgpu.shader.memory import mubuf
from simgpu.shader.memory.vmem import global_addresses, global_read
from simgpu.shader.renamed import renamed
from simgpu.shader.semantics import register
from simgpu.shader.state import null_and_m0, wsel

G = "gfx9"
# element -> (bytes read, signed); the slot a lane writes is 4 bytes, 16 for dwordx3/x4
SIZES = {"ubyte": (1, False), "sbyte": (1, True), "ushort": (2, False), "sshort": (2, True), "dword": (4, False),
         "dwordx3": (12, False), "dwordx4": (16, False)}


def _widened(data: np.ndarray, signed: bool) -> np.ndarray:
    """[n, lanes, size] bytes as the lane's whole slot (module doc): 1 or 2 bytes zero- or sign-extended to a
    little-endian dword, 12 bytes zero-extended to 16; 4 and 16 bytes as they are."""
    size = data.shape[-1]
    if size in (4, 16):
        return data
    fill = np.where(signed & (data[..., -1:] >= 0x80), np.uint8(0xFF), np.uint8(0))
    return np.concatenate([data, np.repeat(fill, (4 if size < 4 else 16) - size, axis=-1)], axis=-1)


def lds_addresses(ex, w, size: int, offset: int) -> np.ndarray:
    """[n, lanes] LDS byte addresses of a DMA of `size` bytes a lane: M0[17:2]*4 + offset + lane * slot."""
    m0 = ex.st.sgpr[wsel(w), null_and_m0(G)[1]].astype(np.int64)
    base = (m0 >> 2 & 0xFFFF) * 4 + offset  # M0[17:2], in dwords
    return base[:, None] + slot(size) * np.arange(ex.st.lanes, dtype=np.int64)[None, :]


def slot(size: int) -> int:
    """Bytes of LDS a lane's DMA of `size` bytes writes (module doc)."""
    return 16 if size > 4 else 4


def global_offset(inst) -> int:
    """A GLOBAL instruction's offset: 13 bits, signed."""
    return inst.fields["offset"] - (1 << 13 if inst.fields["offset"] >> 12 else 0)


_VIEW = renamed("global_load_b32").gfx11_view  # gfx11's field codes, which global_addresses reads


def global_dma_addresses(ex, w, inst) -> tuple[np.ndarray, np.ndarray]:
    """(global VAs, LDS addresses) [n, lanes] of a global_load_lds_* (the sanitizers' footprint reads them too)."""
    size = SIZES[inst.mnemonic.removeprefix("global_load_lds_")][0]
    return global_addresses(ex, w, _VIEW(ex, inst)), lds_addresses(ex, w, size, global_offset(inst))


def _global(kind: str):
    size, signed = SIZES[kind]

    def run(ex, w, inst):
        mask = ex.st.exec_lanes(w)
        src, dst = global_dma_addresses(ex, w, inst)
        lds_write(ex, w, dst, _widened(global_read(ex, src, size, mask), signed), mask)
    return run


def buffer_lds(ex, w, inst) -> None:
    """A MUBUF load with the lds bit (buffer_load_<kind> ... lds): its data to LDS instead of vdata."""
    size, signed = SIZES[inst.mnemonic.removeprefix("buffer_load_")]
    mask = ex.st.exec_lanes(w)
    data = mubuf.load_checked(ex, mubuf.access(ex, w, inst), size, mask, per_dword=True)
    lds_write(ex, w, lds_addresses(ex, w, size, mubuf.inst_offset(inst)), _widened(data, signed), mask)


for _kind in SIZES:
    register(f"global_load_lds_{_kind}", _global(_kind), G)
