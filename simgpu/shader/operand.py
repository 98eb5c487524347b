"""Reading and writing operands for a group of waves: scalar sources, vector sources (VGPR, or a
scalar/constant broadcast to all lanes), and masked destination writes.

Inline constants take the bit pattern of the operand's type: 1.0 is 0x3f800000 for f32, 0x3c00 for
f16, 0x3ff0000000000000 for f64; integer constants are sign-extended to the operand width.

A 32-bit literal feeding a 64-bit operand (`literal64`): an f64 operand takes it as its high half, a
signed integer operand (kind "i64") sign-extends it, every other 64-bit operand (b64/u64) zero-extends
it. That is the hardware's rule as LLVM states it (llvm-project #70274: a 32-bit literal "will be
encoded as its low 32 bits and then either correctly sign extended or incorrectly zero extended by HW",
and #186575, which gives only the signed operands - s_ashr_i64, s_cls_i32_i64 (S_FLBIT_I32_I64),
v_ashrrev_i64, v_mad_i64_i32's addend, v_cmp(x)_*_i64 - the sign-extending operand type).
"""

from __future__ import annotations

import re
import struct

import numpy as np

from simgpu.shader.state import wsel

# Aperture bases returned by src_shared_base / src_private_base (high 32 bits of the 64-bit base), the
# values amdkfd programs for gfx9+ (LDS aperture at 1 << 48, private at 2 << 48).
SHARED_BASE_HI = 0x10000
PRIVATE_BASE_HI = 0x20000
APERTURE_LIMIT_LO = 0xFFFFFFFF

_FLOATS = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0}
_INV_2PI = {"f16": 0x3118, "f32": 0x3E22F983, "f64": 0x3FC45F306DC9C882}


def _float_bits(x: float, kind: str) -> int:
    if kind == "f16":
        return int(np.float16(x).view(np.uint16))
    if kind == "f64":
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    return struct.unpack("<I", struct.pack("<f", x))[0]


_WIDE = ("f64", "b64", "i64")


def literal64(lit: int, kind: str) -> int:
    """A 32-bit literal as the 64-bit value an operand of `kind` (f64, i64, b64) reads (see above)."""
    if kind == "f64":
        return lit << 32
    if kind == "i64" and lit & 0x80000000:
        return lit | 0xFFFFFFFF00000000
    return lit


def constant(code: int, kind: str = "b32") -> int | None:
    """The bits an inline-constant code stands for, for an operand of `kind` (b32/f32/f16/b16/f64/b64/i64)."""
    bits = 64 if kind in _WIDE else 32
    if 128 <= code <= 192:
        return code - 128
    if 193 <= code <= 208:
        return (192 - code) & ((1 << bits) - 1)
    fk = kind if kind in ("f16", "f64") else ("f64" if bits == 64 else "f32")
    if kind == "b16":
        fk = "f16"
    if code in _FLOATS:
        return _float_bits(_FLOATS[code], fk)
    if code == 248:
        return _INV_2PI[fk]
    return None


def _special(ex, w: np.ndarray, code: int) -> np.ndarray | None:
    st = ex.st
    if code == 235:
        return np.full(len(w), SHARED_BASE_HI, np.uint32)
    if code == 237:
        return np.full(len(w), PRIVATE_BASE_HI, np.uint32)
    if code in (236, 238):
        return np.full(len(w), APERTURE_LIMIT_LO, np.uint32)
    if code == 251:  # vccz
        return (st.mask64(w, 106) == 0).astype(np.uint32)
    if code == 252:  # execz
        return (st.mask64(w, 126) == 0).astype(np.uint32)
    if code == 253:
        return st.scc[w].copy()
    if code == 239:  # pops_exiting_wave_id: no pixel ordering in compute
        return np.zeros(len(w), np.uint32)
    return None


def scalar_src(ex, w: np.ndarray, code: int, literal: int | None, kind: str = "b32") -> np.ndarray:
    """A scalar source for waves `w`: [n] uint32, or uint64 for 64-bit kinds (f64, b64, i64)."""
    wide = kind in _WIDE
    st = ex.st
    if code < 128:
        if code == ex.null:
            return np.zeros(len(w), np.uint64 if wide else np.uint32)
        ix = wsel(w)
        lo = st.sgpr[ix, code]
        if not wide:
            return lo.copy()
        return lo.astype(np.uint64) | (st.sgpr[ix, code + 1].astype(np.uint64) << np.uint64(32))
    if code == 255:
        lit = literal or 0
        return np.full(len(w), literal64(lit, kind) if wide else lit, np.uint64 if wide else np.uint32)
    c = constant(code, kind)
    if c is not None:
        return np.full(len(w), c, np.uint64 if wide else np.uint32)
    sp = _special(ex, w, code)
    if sp is None:
        raise ex.illegal_inst(w, None, f"bad scalar operand {code}")
    return sp.astype(np.uint64) if wide else sp


def write_sgpr(ex, w: np.ndarray, code: int, value: np.ndarray, wide: bool = False) -> None:
    """Write a scalar destination (a write to null is dropped)."""
    if code == ex.null or code >= 128:
        return
    st = ex.st
    ix = wsel(w)
    value = np.asarray(value)
    if wide:
        v = value.astype(np.uint64)
        st.sgpr[ix, code] = (v & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        if code + 1 < 128:
            st.sgpr[ix, code + 1] = (v >> np.uint64(32)).astype(np.uint32)
    else:
        st.sgpr[ix, code] = value.astype(np.uint32)


def vector_src(ex, w: np.ndarray, code: int, literal: int | None, kind: str = "b32") -> np.ndarray:
    """A vector source for waves `w`: [n, lanes] uint32 (uint64 for 64-bit kinds); scalars broadcast.

    A 32-bit VGPR source may be a view of the register file: compute results before writing them."""
    st = ex.st
    if code >= 256:
        r = code - 256
        ix = wsel(w)
        lo = st.vgpr[r, ix, :]
        if kind not in _WIDE:
            return lo
        return lo.astype(np.uint64) | (st.vgpr[r + 1, ix, :].astype(np.uint64) << np.uint64(32))
    s = scalar_src(ex, w, code, literal, kind)
    return np.broadcast_to(s[:, None], (len(w), st.lanes))


def _masked_store(st, w, reg: int, value: np.ndarray, mask: np.ndarray) -> None:
    ix = wsel(w)
    if isinstance(ix, slice):
        np.copyto(st.vgpr[reg, ix, :], value, where=mask, casting="unsafe")
    else:
        st.vgpr[reg, ix, :] = np.where(mask, value, st.vgpr[reg, ix, :])


def write_vgpr(ex, w: np.ndarray, reg: int, value: np.ndarray, mask: np.ndarray, dwords: int = 1) -> None:
    """Write [n, lanes] values (uint32, or uint64 when dwords == 2) to lanes in `mask` of VGPR `reg`."""
    st = ex.st
    if dwords == 1:
        _masked_store(st, w, reg, np.asarray(value).astype(np.uint32, copy=False), mask)
        return
    v = np.asarray(value).astype(np.uint64, copy=False)
    _masked_store(st, w, reg, (v & np.uint64(0xFFFFFFFF)).astype(np.uint32), mask)
    _masked_store(st, w, reg + 1, (v >> np.uint64(32)).astype(np.uint32), mask)


_VGPR_TEXT = re.compile(r"\bv(?:\[(\d+):(\d+)\]|(\d+))")
_AGPR_TEXT = re.compile(r"\ba(?:\[(\d+):(\d+)\]|(\d+))")


def highest_agpr(inst) -> int:
    """The highest AccVGPR (gfx942's aN) an instruction names, -1 if none (as highest_vgpr)."""
    top = inst.__dict__.get("_highest_agpr")
    if top is None:
        top = max((int(m.group(2) or m.group(3)) for t in inst.operands for m in _AGPR_TEXT.finditer(t)), default=-1)
        inst.__dict__["_highest_agpr"] = top
    return top


def highest_vgpr(inst) -> int:
    """The highest VGPR an instruction names (-1 if none), read from its operands as LLVM prints them
    (ranges include every dword: b128 data, tfe, d16 packing). An upper bound: a 16-bit VOP1/VOP2/VOPC
    operand printed as v128 and up may be the high half of v(N - 128) (see valu.t16_vgpr)."""
    top = inst.__dict__.get("_highest_vgpr")
    if top is None:
        top = -1
        for text in inst.operands:
            for m in _VGPR_TEXT.finditer(text):
                reg = int(m.group(2) or m.group(3))
                top = max(top, reg)
        inst.__dict__["_highest_vgpr"] = top
    return top
