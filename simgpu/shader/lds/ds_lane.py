"""DS instructions that move data between lanes (ds_swizzle_b32, ds_permute_b32, ds_bpermute_b32) and
the LDS append counters (ds_append, ds_consume), from the RDNA3 ISA pseudo-code.

Permutes: lane = ((ADDR + offset) >> 2) mod 32 (the ISA: "destination lane is MOD 32 regardless of
wave size"; high-order address bits are ignored). In wave64 each 32-lane half permutes within itself
(which is why LLVM/LLPC shuffle a full wave64 with v_permlane64 plus two ds_bpermute_b32). bpermute
reads 0 from a disabled source lane; permute drops the data of disabled source lanes, the highest
source lane wins a destination, and a destination nobody wrote gets 0. Only active lanes are written.

Swizzle (offset = {offset1, offset0}): >= 0xe000 FFT mode, >= 0xc000 rotate mode, offset[15] quad
permute, else the and/or/xor bitmask mode within 32 lanes. Reading a disabled lane gives 0.
The rotate mode follows the pseudo-code, j = (i & mask) | ((i + rotate) & ~mask), wrapped to 5 bits;
the ISA's mask=1 example table does not agree with its own pseudo-code, the pseudo-code is used.

Append/consume: one atomic add/subtract of popcount(EXEC) on the LDS dword at M0[15:0] + offset,
done once per wave (waves in order); every active lane receives the pre-op value. A wave with no
active lane does nothing.
"""

from __future__ import annotations

import numpy as np

from simgpu.mem.lanes import last_wins
from simgpu.shader.lds.ds import ds_offset
from simgpu.shader.lds.ds_mem import lds_atomic
from simgpu.shader.operand import write_vgpr
from simgpu.shader.semantics import family_of, register

U32 = np.uint32


def _lane_index(ex, w, inst) -> np.ndarray:
    """[n, lanes] lane each lane names through ADDR + offset, within its own 32-lane half (gfx11); gfx12 indexes
    the whole wave (the RDNA4 reference: `/ 4 % num_lanes`, num_lanes 64 in wave64)."""
    st = ex.st
    a = st.vgpr[inst.fields["addr"], w, :].astype(np.int64) + ds_offset(inst)
    if family_of(inst.arch) != "gfx11":
        return (a >> 2) & (st.lanes - 1)
    half = np.arange(st.lanes, dtype=np.int64) & 32
    return ((a >> 2) & 31) | half[None, :]


def _bpermute(ex, w, inst):
    st = ex.st
    mask = st.exec_lanes(w)
    src = _lane_index(ex, w, inst)
    data = st.vgpr[inst.fields["data0"], w, :]
    got = np.take_along_axis(data, src, axis=1)
    ok = np.take_along_axis(mask, src, axis=1)
    write_vgpr(ex, w, inst.fields["vdst"], np.where(ok, got, U32(0)), mask)


def _permute(ex, w, inst):
    st = ex.st
    n, lanes = len(w), st.lanes
    mask = st.exec_lanes(w)
    dst = _lane_index(ex, w, inst)
    data = st.vgpr[inst.fields["data0"], w, :]
    keys = (np.arange(n)[:, None] * lanes + dst)[mask]
    vals = data[mask]
    keep = last_wins(keys)  # keys are in lane order: the highest source lane wins
    if keep is not None:
        keys, vals = keys[keep], vals[keep]
    tmp = np.zeros(n * lanes, U32)
    tmp[keys] = vals
    write_vgpr(ex, w, inst.fields["vdst"], tmp.reshape(n, lanes), mask)


def swizzle_lanes(offset: int, lanes: int) -> np.ndarray:
    """The source lane of each lane for ds_swizzle_b32 with this 16-bit offset."""
    i = np.arange(lanes, dtype=np.int64)
    lo = i & 0x1F
    mask = offset & 0x1F
    if offset >= 0xE000:
        rev = np.zeros_like(lo)
        for b in range(5):
            rev |= ((lo >> b) & 1) << (4 - b)
        j = (rev >> bin(mask).count("1")) | (i & mask)
    elif offset >= 0xC000:
        rot = (offset >> 5) & 0x1F
        if offset & (1 << 10):
            rot = -rot
        j = (i & mask) | ((i + rot) & ~mask & 0x1F)
    elif offset & 0x8000:
        sel = (offset >> (2 * (i & 3))) & 3
        return (i & ~3) | sel
    else:
        and_m, or_m, xor_m = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
        j = ((lo & and_m) | or_m) ^ xor_m
    return (j & 0x1F) | (i & 0x20)


def _swizzle(ex, w, inst):
    st = ex.st
    mask = st.exec_lanes(w)
    src = swizzle_lanes(ds_offset(inst), st.lanes)
    data = st.vgpr[inst.fields["addr"], w, :]  # the swizzled VGPR sits in the ADDR field
    out = np.where(mask[:, src], data[:, src], U32(0))
    write_vgpr(ex, w, inst.fields["vdst"], out, mask)


def _append_consume(ex, w, inst):
    st = ex.st
    mask = st.exec_lanes(w)
    count = mask.sum(axis=1).astype(U32)[:, None]
    addr = ((st.sgpr[w, ex.m0] & U32(0xFFFF)).astype(np.int64) + ds_offset(inst))[:, None]
    op = "add" if inst.mnemonic == "ds_append" else "sub"
    old = lds_atomic(ex, w, op, addr, count, None, 4, count > 0)
    write_vgpr(ex, w, inst.fields["vdst"], np.broadcast_to(old, mask.shape), mask)


register("ds_bpermute_b32", _bpermute)
register("ds_permute_b32", _permute)
register("ds_swizzle_b32", _swizzle)
register("ds_append", _append_consume)
register("ds_consume", _append_consume)
