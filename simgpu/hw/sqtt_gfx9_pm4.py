"""PM4 sequences that program gfx9's thread trace (gfx942), as tinygrad's ops_amd programs it for gfx9: MASK
broadcast (every SIMD of CU 0), then per SE (GRBM_GFX_INDEX SE, SH 0) TOKEN_MASK (the token types and register
classes), TOKEN_MASK2, BASE / BASE2 / SIZE in 4 KiB units, CTRL.RESET_BUFFER and MODE (compute waves, autoflush,
mode 1). Stop: MODE 0, then per SE a WAIT_REG_MEM for STATUS.BUSY to clear and a COPY_DATA of WPTR. Each SE's
packets sit behind a PRED_EXEC for its XCC (`xcc_mask`), as a multi-XCC client sends them.

May import: nothing outside simgpu.hw.
"""

from __future__ import annotations

from simgpu.hw import perfmon as pm
from simgpu.hw import pm4 as hw
from simgpu.hw import sqtt_gfx9 as tt
from simgpu.hw.sqtt_gfx9 import Tok

SE_PER_XCC = 4
# What tinygrad enables on every SE, and on the SEs that trace instructions.
TOKENS = sum(1 << t for t in (Tok.MISC, Tok.TIMESTAMP, Tok.REG, Tok.WAVE_START, Tok.WAVE_END, Tok.USERDATA,
                              Tok.REG_CS, Tok.REG_CS_PRIV))
ITRACE_TOKENS = sum(1 << t for t in (Tok.INST, Tok.INST_PC, Tok.ISSUE))


def _uconfig(reg: int, value: int) -> list[int]:
    return hw.set_uconfig_reg(reg, value)


def _per_xcc(se: int, body: list[int]) -> list[int]:
    """`body` behind a PRED_EXEC for SE `se`'s XCC (XCC se // 4)."""
    return hw.pred_exec(len(body), 1 << (se // SE_PER_XCC)) + body


def sqtt_start(buffers: list[tuple[int, int]], itrace_se_mask: int = 1, cu: int = 0, simd_en: int = 0xF) -> list[int]:
    """Start thread traces: SE i (over the XCCs: XCC i // 4) writes into buffers[i] = (VA, size), both 4 KiB
    aligned; SEs in `itrace_se_mask` also write INST tokens for CU `cu`'s SIMDs in `simd_en`."""
    out = _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)
    out += _uconfig(tt.SQ_THREAD_TRACE_MASK, tt.TT_MASK.pack(simd_en=simd_en, cu_sel=cu, sq_stall_en=1,
                                                             spi_stall_en=1, reg_stall_en=1))
    for se, (va, size) in enumerate(buffers):
        if va % tt.BUFFER_ALIGN or size % tt.BUFFER_ALIGN:
            raise ValueError("thread-trace buffers are 4 KiB aligned and a multiple of 4 KiB long")
        page = va // tt.BUFFER_ALIGN
        mask = TOKENS | (ITRACE_TOKENS if itrace_se_mask >> se & 1 else 0)
        body = _uconfig(pm.GRBM_GFX_INDEX, pm.gfx_index(se=se % SE_PER_XCC, sa=0))
        body += _uconfig(tt.SQ_THREAD_TRACE_TOKEN_MASK, tt.TT_TOKEN_MASK.pack(reg_mask=0xF, token_mask=mask))
        body += _uconfig(tt.SQ_THREAD_TRACE_TOKEN_MASK2, 0xFFFFFFFF)
        body += _uconfig(tt.SQ_THREAD_TRACE_BASE, page & 0xFFFFFFFF)
        body += _uconfig(tt.SQ_THREAD_TRACE_BASE2, tt.TT_BASE2.pack(addr_hi=page >> 32))
        body += _uconfig(tt.SQ_THREAD_TRACE_SIZE, tt.TT_SIZE.pack(size=size // tt.BUFFER_ALIGN))
        body += _uconfig(tt.SQ_THREAD_TRACE_CTRL, tt.TT_CTRL.pack(reset_buffer=1))
        body += _uconfig(tt.SQ_THREAD_TRACE_MODE, tt.TT_MODE.pack(mask_cs=1, autoflush_en=1, mode=1))
        out += _per_xcc(se, body)
    return out + _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)


def sqtt_stop(ses: int, wptrs: int) -> list[int]:
    """Stop the traces and copy SE i's SQ_THREAD_TRACE_WPTR to wptrs + 4 * i, for SEs 0..ses-1 over the XCCs."""
    out = _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)
    out += _uconfig(tt.SQ_THREAD_TRACE_MODE, tt.TT_MODE.pack(mask_cs=1, autoflush_en=1, mode=0))
    for se in range(ses):
        body = _uconfig(pm.GRBM_GFX_INDEX, pm.gfx_index(se=se % SE_PER_XCC, sa=0))
        body += hw.wait_reg_mem(tt.SQ_THREAD_TRACE_STATUS, 0, tt.TT_STATUS.busy.bits(), memory=False)
        body += hw.copy_data(hw.CopySrc.PERFCOUNTERS, tt.SQ_THREAD_TRACE_WPTR, hw.CopyDst.TC_L2, wptrs + 4 * se)
        out += _per_xcc(se, body)
    return out + _uconfig(pm.GRBM_GFX_INDEX, pm.GFX_INDEX_BROADCAST)


def sqtt_userdata(*dwords: int) -> list[int]:
    """User data in the trace: pairs of dwords written to SQ_THREAD_TRACE_USERDATA_2/3."""
    out: list[int] = []
    for i in range(0, len(dwords), 2):
        out += hw.set_uconfig_reg(tt.SQ_THREAD_TRACE_USERDATA_0 + 2, *dwords[i:i + 2])
    return out


def trace_bytes(wptr: int) -> int:
    """Bytes a trace buffer holds, from the SQ_THREAD_TRACE_WPTR value read after the trace (gfx9 counts from the
    buffer's start)."""
    return tt.TT_WPTR.wptr.get(wptr) * tt.WPTR_UNIT
