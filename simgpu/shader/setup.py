"""Initial wave state of a dispatch, as gfx11 hardware sets it up (AMDGPUUsage, "Initial Kernel
Execution State"): user SGPRs in descriptor order, then the system SGPRs enabled by rsrc2, then the
work-item IDs in v0 (packed as 10-bit x|y|z fields when more than one dimension is enabled)."""

from __future__ import annotations

import numpy as np

from simgpu.shader.dispatch import (
    KCP_DISPATCH_ID,
    KCP_DISPATCH_PTR,
    KCP_FLAT_SCRATCH_INIT,
    KCP_KERNARG_SEGMENT_PTR,
    KCP_PRIVATE_SEGMENT_BUFFER,
    KCP_PRIVATE_SEGMENT_SIZE,
    KCP_QUEUE_PTR,
    Dispatch,
)
from simgpu.shader.state import DONE, EXEC_LO, HW_MODE, WaveState


def _u64(v: int) -> list[int]:
    return [v & 0xFFFFFFFF, (v >> 32) & 0xFFFFFFFF]


def user_sgprs(d: Dispatch) -> list[int]:
    """User SGPR values in the order the descriptor enables them (or the PM4 USER_DATA values)."""
    if d.user_sgprs is not None:
        return list(d.user_sgprs)[:d.user_sgpr_count]
    kcp, out = d.kernel_code_properties, []
    if kcp & KCP_PRIVATE_SEGMENT_BUFFER:
        # gfx11 reaches scratch with scratch_* instructions; LLVM never enables this buffer resource
        # for gfx11, so it is passed as a null descriptor (every access out of range).
        out += [0, 0, 0, 0]
    if kcp & KCP_DISPATCH_PTR:
        out += _u64(d.dispatch_ptr)
    if kcp & KCP_QUEUE_PTR:
        out += _u64(d.queue_ptr)
    if kcp & KCP_KERNARG_SEGMENT_PTR:
        out += _u64(d.kernarg_address)
    if kcp & KCP_DISPATCH_ID:
        out += _u64(d.dispatch_id)
    if kcp & KCP_FLAT_SCRATCH_INIT:
        out += [0, d.private_segment_size]
    if kcp & KCP_PRIVATE_SEGMENT_SIZE:
        out += [d.private_segment_size]
    return out[:d.user_sgpr_count] if d.user_sgpr_count else out


def _mode_bits(d: Dispatch) -> int:
    """MODE register at wave launch: round and denorm modes from rsrc1 (same bit order as MODE)."""
    rsrc1 = d.rsrc1
    float_mode = (rsrc1 >> 12) & 0xFF  # round32, round16_64, denorm32, denorm16_64: 2 bits each
    dx10 = (rsrc1 >> 21) & 1
    ieee = (rsrc1 >> 23) & 1
    return float_mode | (dx10 << 8) | (ieee << 9)


def initial_state(d: Dispatch, groups: list[tuple[int, int, int]], waves_per_group: int) -> WaveState:
    """WaveState for the waves of `groups` (workgroup coordinates), registers set up for launch."""
    lanes = d.wave_size
    n = len(groups) * waves_per_group
    st = WaveState(n, d.vgpr_count, lanes, len(groups), d.group_segment_size)
    st.pc[:] = d.code_address
    gid = np.repeat(np.arange(len(groups)), waves_per_group)
    st.group[:] = gid
    st.wave_in_group[:] = np.tile(np.arange(waves_per_group), len(groups))
    st.hwreg[:, HW_MODE] = _mode_bits(d)
    users = user_sgprs(d)
    st.sgpr[:, :len(users)] = np.array(users, np.uint32)
    _system_sgprs(d, st, groups, len(users) if not d.user_sgpr_count else d.user_sgpr_count)
    _workitem_ids(d, st, groups, waves_per_group)
    return st


def _system_sgprs(d: Dispatch, st: WaveState, groups, first: int) -> None:
    g = np.array(groups, np.int64).reshape(-1, 3) + np.array(d.grid_offset, np.int64)
    per_wave = g[st.group]
    s = first
    for dim in range(3):
        if (d.rsrc2 >> (7 + dim)) & 1:  # ENABLE_SGPR_WORKGROUP_ID_X/Y/Z
            st.sgpr[:, s] = per_wave[:, dim].astype(np.uint32)
            s += 1
    if (d.rsrc2 >> 10) & 1:  # ENABLE_SGPR_WORKGROUP_INFO
        st.sgpr[:, s] = 0
        s += 1
    if d.rsrc2 & 1:  # SCRATCH_EN: private segment wave byte offset
        st.sgpr[:, s] = (np.arange(st.n) * d.private_segment_size * d.wave_size).astype(np.uint32)


def _workitem_ids(d: Dispatch, st: WaveState, groups, waves_per_group: int) -> None:
    wx, wy, wz = d.workgroup
    lanes = d.wave_size
    ngroups = len(groups)
    # The ids of one workgroup's waves, [waves_per_group, lanes], repeated for every group.
    flat = np.arange(waves_per_group)[:, None] * lanes + np.arange(lanes)[None, :]
    x, y, z = flat % wx, (flat // wx) % wy, flat // (wx * wy)
    dims = (d.rsrc2 >> 11) & 3  # ENABLE_VGPR_WORKITEM_ID: 0 = x, 1 = x,y, 2 = x,y,z
    v0 = x if dims == 0 else x | (y << 10) | ((z << 20) if dims >= 2 else 0)
    st.vgpr[0, :, :] = np.tile(v0.astype(np.uint32), (ngroups, 1))
    valid = np.tile(flat < wx * wy * wz, (ngroups, 1))
    if any(g % w for g, w in zip(d.grid, d.workgroup, strict=True)):
        # partial workgroups at the grid's edge: items beyond the grid are not launched
        g = np.array(groups, np.int64).reshape(-1, 3)[st.group] + np.array(d.grid_offset, np.int64)
        for dim, ids in enumerate((x, y, z)):
            valid &= g[:, dim:dim + 1] * d.workgroup[dim] + np.tile(ids, (ngroups, 1)) < d.grid[dim]
    st.set_mask64(np.arange(st.n), EXEC_LO, st.bits_of(valid))
    st.status[~valid.any(axis=1)] = DONE  # hardware launches no wave for an empty tail of a workgroup
