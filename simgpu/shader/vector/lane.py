"""Cross-lane VALU semantics: v_readlane/v_writelane/v_readfirstlane, v_permlane16/x16/64, v_swap_b32,
v_swaprel_b32 and the M0-relative moves (v_movrels/movreld/movrelsd/movrelsd_2), from the RDNA3 ISA
reference pseudo-code. (v_mov_b32 with DPP runs through the generic executor in valu.py.)
"""

from __future__ import annotations

import numpy as np

from simgpu.shader.operand import scalar_src, vector_src, write_sgpr, write_vgpr
from simgpu.shader.semantics import sem

U32 = np.uint32


def _vgpr_of(ex, w, inst, code: int) -> int:
    if code < 256:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: source must be a VGPR")
    return code - 256


# ---------------------------------------------------------------------------------------------- lane reads/writes


@sem("v_readlane_b32")
def _readlane(ex, w, inst):
    """SGPR = VGPR[lane S1] (EXEC is ignored; the lane number wraps at the wave size)."""
    st = ex.st
    reg = _vgpr_of(ex, w, inst, inst.fields["src0"])
    lane = scalar_src(ex, w, inst.fields["src1"], inst.literal).astype(np.int64) & (st.lanes - 1)
    write_sgpr(ex, w, inst.fields["vdst"], st.vgpr[reg, w, lane])


@sem("v_readfirstlane_b32")
def _readfirstlane(ex, w, inst):
    """SGPR = the source of the lowest active lane (lane 0 when EXEC is zero)."""
    st = ex.st
    vals = vector_src(ex, w, inst.fields["src0"], inst.literal)
    active = st.exec_lanes(w)
    lane = np.where(active.any(axis=1), active.argmax(axis=1), 0)
    write_sgpr(ex, w, inst.fields["vdst"], vals[np.arange(len(w)), lane])


@sem("v_writelane_b32")
def _writelane(ex, w, inst):
    """VGPR[lane S1] = S0 (a scalar), regardless of EXEC."""
    st = ex.st
    val = scalar_src(ex, w, inst.fields["src0"], inst.literal)
    lane = scalar_src(ex, w, inst.fields["src1"], inst.literal).astype(np.int64) & (st.lanes - 1)
    st.vgpr[inst.fields["vdst"], w, lane] = val


# ---------------------------------------------------------------------------------------------- permutes


def _permlane(ex, w, inst, cross: bool) -> None:
    """Every lane of a 16-lane row reads lane sel[i] of its row (cross: of the other row of its 32-lane half).

    op_sel[0] is fetch-inactive, op_sel[1] bound_ctrl: a lane whose source lane is inactive reads it anyway
    (FI), else gets 0 (bound_ctrl) or is not written."""
    st = ex.st
    lanes = st.lanes
    sel = (scalar_src(ex, w, inst.fields["src1"], inst.literal).astype(np.uint64)
           | (scalar_src(ex, w, inst.fields["src2"], inst.literal).astype(np.uint64) << np.uint64(32)))
    i = np.arange(lanes)
    nib = ((sel[:, None] >> (4 * (i % 16)).astype(np.uint64)[None, :]) & np.uint64(15)).astype(np.int64)
    row = i // 16
    src_row = (row ^ 1) if cross else row
    src_lane = src_row[None, :] * 16 + nib
    vals = vector_src(ex, w, inst.fields["src0"], inst.literal)
    taken = np.take_along_axis(vals, src_lane, axis=1)
    active = st.exec_lanes(w)
    fi, bound_ctrl = inst.fields["op_sel"] & 1, (inst.fields["op_sel"] >> 1) & 1
    src_ok = np.ones_like(active) if fi else np.take_along_axis(active, src_lane, axis=1)
    value = np.where(src_ok, taken, U32(0))
    write_vgpr(ex, w, inst.fields["vdst"], value, active & (src_ok | bool(bound_ctrl)))


@sem("v_permlane16_b32")
def _permlane16(ex, w, inst):
    """Lane permute within each row of 16 lanes, lane selects from S1 (lanes 0-7) and S2 (8-15)."""
    _permlane(ex, w, inst, False)


@sem("v_permlanex16_b32")
def _permlanex16(ex, w, inst):
    """Lane permute from the opposite row of 16 lanes."""
    _permlane(ex, w, inst, True)


@sem("v_permlane64_b32")
def _permlane64(ex, w, inst):
    """Swap the two 32-lane halves of a wave64; no operation in wave32."""
    st = ex.st
    if st.lanes != 64:
        return None
    vals = vector_src(ex, w, inst.fields["src0"], inst.literal)
    swapped = np.concatenate([vals[:, 32:], vals[:, :32]], axis=1)
    write_vgpr(ex, w, inst.fields["vdst"], swapped, st.exec_lanes(w))
    return None


# ---------------------------------------------------------------------------------------------- swaps, M0-relative


def _no_dpp(ex, w, inst) -> None:
    if inst.dpp is not None:
        raise ex.illegal_inst(w, inst, f"{inst.mnemonic}: DPP forms are not implemented")


def _rel_index(ex, w, base: int, shift: int) -> np.ndarray:
    """base + M0 bits [shift+9:shift] (shift 0 for the source, 16 for the destination of *_2/swaprel), per wave."""
    m0 = ex.st.sgpr[w, ex.m0].astype(np.int64)
    return base + ((m0 >> shift) & 0x3FF)


def _rel_full(ex, w, base: int) -> np.ndarray:
    return base + ex.st.sgpr[w, ex.m0].astype(np.int64)


def _read_rel(ex, w, idx: np.ndarray) -> np.ndarray:
    """VGPR[idx[wave]] for every lane; an index past the allocation reads 0."""
    st = ex.st
    nv = st.vgpr.shape[0]
    ok = (idx >= 0) & (idx < nv)
    vals = st.vgpr[np.where(ok, idx, 0), w, :]
    return np.where(ok[:, None], vals, U32(0))


def _write_rel(ex, w, idx: np.ndarray, value: np.ndarray, mask: np.ndarray) -> None:
    """VGPR[idx[wave]] = value under mask; a write past the allocation is dropped."""
    st = ex.st
    nv = st.vgpr.shape[0]
    ok = (idx >= 0) & (idx < nv)
    safe = np.where(ok, idx, 0)
    cur = st.vgpr[safe, w, :]
    st.vgpr[safe, w, :] = np.where(mask & ok[:, None], value, cur)


@sem("v_swap_b32")
def _swap(ex, w, inst):
    """Exchange VDST and SRC0 in active lanes."""
    _no_dpp(ex, w, inst)
    st = ex.st
    a, b = inst.fields["vdst"], _vgpr_of(ex, w, inst, inst.fields["src0"])
    active = st.exec_lanes(w)
    va, vb = st.vgpr[a, w, :].copy(), st.vgpr[b, w, :].copy()
    write_vgpr(ex, w, a, vb, active)
    write_vgpr(ex, w, b, va, active)


@sem("v_swaprel_b32")
def _swaprel(ex, w, inst):
    """Exchange VGPR[VDST + M0[25:16]] and VGPR[SRC0 + M0[9:0]] in active lanes."""
    active = ex.st.exec_lanes(w)
    d = _rel_index(ex, w, inst.fields["vdst"], 16)
    s = _rel_index(ex, w, _vgpr_of(ex, w, inst, inst.fields["src0"]), 0)
    vd, vs = _read_rel(ex, w, d), _read_rel(ex, w, s)
    _write_rel(ex, w, d, vs, active)
    _write_rel(ex, w, s, vd, active)


@sem("v_movrels_b32")
def _movrels(ex, w, inst):
    """VDST = VGPR[SRC0 + M0]."""
    _no_dpp(ex, w, inst)
    val = _read_rel(ex, w, _rel_full(ex, w, _vgpr_of(ex, w, inst, inst.fields["src0"])))
    write_vgpr(ex, w, inst.fields["vdst"], val, ex.st.exec_lanes(w))


@sem("v_movreld_b32")
def _movreld(ex, w, inst):
    """VGPR[VDST + M0] = SRC0 (any source)."""
    _no_dpp(ex, w, inst)
    val = vector_src(ex, w, inst.fields["src0"], inst.literal)
    _write_rel(ex, w, _rel_full(ex, w, inst.fields["vdst"]), val, ex.st.exec_lanes(w))


@sem("v_movrelsd_b32")
def _movrelsd(ex, w, inst):
    """VGPR[VDST + M0] = VGPR[SRC0 + M0]."""
    _no_dpp(ex, w, inst)
    val = _read_rel(ex, w, _rel_full(ex, w, _vgpr_of(ex, w, inst, inst.fields["src0"])))
    _write_rel(ex, w, _rel_full(ex, w, inst.fields["vdst"]), val, ex.st.exec_lanes(w))


@sem("v_movrelsd_2_b32")
def _movrelsd_2(ex, w, inst):
    """VGPR[VDST + M0[25:16]] = VGPR[SRC0 + M0[9:0]]."""
    _no_dpp(ex, w, inst)
    val = _read_rel(ex, w, _rel_index(ex, w, _vgpr_of(ex, w, inst, inst.fields["src0"]), 0))
    _write_rel(ex, w, _rel_index(ex, w, inst.fields["vdst"], 16), val, ex.st.exec_lanes(w))
