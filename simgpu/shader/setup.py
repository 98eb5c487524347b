"""Initial wave state of a dispatch, as gfx11 hardware sets it up (AMDGPUUsage, "Initial Kernel
Execution State"): user SGPRs in descriptor order, then the system SGPRs the descriptor's rsrc2 enables,
then the work-item IDs in v0 (packed as 10-bit x|y|z fields when more than one dimension is enabled).

gfx12 has architected SGPRs (LLVM's FeatureArchitectedSGPRs): the workgroup ids are not system SGPRs but trap
temporaries, TTMP9 = id x, TTMP7 = id y | id z << 16, and TTMP8[29:25] is the wave's id in its workgroup
(llc -mcpu=gfx1201 reads them so: workgroup.id.y is `s_and_b32 ttmp7, 0xffff`, wave.id `s_bfe_u32 ttmp8,
0x50019`). Its scratch is architected too (no private segment wave offset SGPR: the engine's scratch_* reach each
lane's private memory directly), and its rsrc1 bits 21/23 are WG_RR_EN/DISABLE_PERF, not DX10_CLAMP/IEEE_MODE:
MODE starts with only the round and denorm modes.

gfx942 (family gfx9) launches as gfx11 does: the same system SGPRs after the user SGPRs (its scratch is architected
too, but the private segment wave offset SGPR is still set when SCRATCH_EN asks for it), MODE's DX10_CLAMP and IEEE
at the same bits, and packed work-item ids in v0 (AMDGPUUsage lists gfx90a and gfx942 with "Packed work-item IDs";
llc -mcpu=gfx942 reads workitem.id.y as `v_bfe_u32 v, v0, 10, 10`). Its waves are wave64 only.
"""

from __future__ import annotations

import numpy as np

from simgpu.isa.arch import get_arch
from simgpu.isa.kdescriptor import KernelDescriptor
from simgpu.isa.operands import TTMP0
from simgpu.shader.dispatch import Dispatch
from simgpu.shader.state import DONE, EXEC_LO, HW_MODE, WaveState

_SYSTEM_SGPR_FAMILIES = ("gfx11", "gfx9")  # workgroup ids in system SGPRs, MODE with DX10_CLAMP and IEEE


def _u64(v: int) -> list[int]:
    return [v & 0xFFFFFFFF, (v >> 32) & 0xFFFFFFFF]


def user_sgprs(d: Dispatch) -> list[int]:
    """User SGPR values in the order the descriptor enables them (or the PM4 USER_DATA values)."""
    kd = d.descriptor
    if d.user_sgprs is not None:
        return list(d.user_sgprs)[:kd.user_sgpr_count]
    out = []
    if kd.enable_sgpr_private_segment_buffer:
        # gfx11 reaches scratch with scratch_* instructions; LLVM never enables this buffer resource
        # for gfx11, so it is passed as a null descriptor (every access out of range).
        out += [0, 0, 0, 0]
    if kd.enable_sgpr_dispatch_ptr:
        out += _u64(d.dispatch_ptr)
    if kd.enable_sgpr_queue_ptr:
        out += _u64(d.queue_ptr)
    if kd.enable_sgpr_kernarg_segment_ptr:
        out += _u64(d.kernarg_address)
    if kd.enable_sgpr_dispatch_id:
        out += _u64(d.dispatch_id)
    if kd.enable_sgpr_flat_scratch_init:
        out += [0, d.private_segment_size]
    if kd.enable_sgpr_private_segment_size:
        out += [d.private_segment_size]
    return out[:kd.user_sgpr_count] if kd.user_sgpr_count else out


def _mode_bits(kd: KernelDescriptor, family: str = "gfx11") -> int:
    """MODE register at wave launch: [3:0] round modes, [7:4] denorm modes, [8] DX10_CLAMP, [9] IEEE (gfx11;
    gfx12's descriptor has neither bit), [23] FP16_OVFL (rsrc1 bit 26, GFX9-GFX12: AMDGPUUsage's "wavefront starts
    execution with specified fp16 overflow mode")."""
    mode = (kd.float_round_mode_32 | kd.float_round_mode_16_64 << 2 | kd.float_denorm_mode_32 << 4 |
            kd.float_denorm_mode_16_64 << 6 | kd.fp16_ovfl << 23)
    return mode | kd.enable_dx10_clamp << 8 | kd.enable_ieee_mode << 9 if family in _SYSTEM_SGPR_FAMILIES else mode


def initial_mode(d: Dispatch) -> int:
    """MODE at the launch of the dispatch's waves (its architecture's reading of the descriptor)."""
    return _mode_bits(d.descriptor, get_arch(d.arch).family)


# Launch states by everything setup reads of a dispatch but its user SGPRs' values (the kernarg address changes
# every launch): a training step launches the same kernels on the same grids every step, and building a batch's
# state (ids, masks, MODE) costs more than copying it. Emptied when full, deterministically.
_TEMPLATES: dict[tuple, WaveState] = {}
_TEMPLATE_CAPACITY = 128


def initial_state(d: Dispatch, groups: list[tuple[int, int, int]], waves_per_group: int) -> WaveState:
    """WaveState for the waves of `groups` (workgroup coordinates), registers set up for launch."""
    users = user_sgprs(d)
    key = (d.descriptor.to_bytes(), d.code_address, d.arch, tuple(d.grid), tuple(d.workgroup), tuple(d.grid_offset),
           d.group_segment_size, d.private_segment_size, len(users), waves_per_group, tuple(map(tuple, groups)))
    template = _TEMPLATES.get(key)
    if template is None:
        if len(_TEMPLATES) >= _TEMPLATE_CAPACITY:
            _TEMPLATES.clear()
        template = _TEMPLATES[key] = _launch_state(d, groups, waves_per_group, users)
    st = template.launch_copy()
    st.sgpr[:, :len(users)] = np.array(users, np.uint32)
    return st


def _launch_state(d: Dispatch, groups: list[tuple[int, int, int]], waves_per_group: int, users: list[int]) -> WaveState:
    """initial_state's registers, built (user SGPRs included)."""
    lanes = d.wave_size
    n = len(groups) * waves_per_group
    st = WaveState(n, d.vgpr_count, lanes, len(groups), d.group_segment_size)
    st.pc[:] = d.code_address
    gid = np.repeat(np.arange(len(groups)), waves_per_group)
    st.group[:] = gid
    st.wave_in_group[:] = np.tile(np.arange(waves_per_group), len(groups))
    family = get_arch(d.arch).family
    st.hwreg[:, HW_MODE] = initial_mode(d)
    st.sgpr[:, :len(users)] = np.array(users, np.uint32)
    if family in _SYSTEM_SGPR_FAMILIES:
        _system_sgprs(d, st, groups, d.descriptor.user_sgpr_count or len(users))
    else:
        _architected_sgprs(d, st, groups, d.descriptor.user_sgpr_count or len(users))
    _workitem_ids(d, st, groups, waves_per_group)
    return st


def workgroup_id_sgprs(d: Dispatch) -> tuple[int, int, int]:
    """The SGPRs a launch writes the three words of `workgroup_ids` to (-1: none): gfx11's workgroup ids x, y, z
    as rsrc2 enables them (gfx9's too); gfx12's TTMP9 (x) and TTMP7 (y | z << 16)."""
    if get_arch(d.arch).family not in _SYSTEM_SGPR_FAMILIES:
        return TTMP9, TTMP7, -1
    return _id_slots(d.descriptor, d.descriptor.user_sgpr_count or len(user_sgprs(d)))


def workgroup_ids(d: Dispatch, first: int, count: int) -> np.ndarray:
    """[count, 3] uint32: the words setup writes to `workgroup_id_sgprs` for workgroups first .. first + count - 1
    of the grid (x fastest, the grid offset added): the ids x, y, z (gfx12: x, y | z << 16, 0)."""
    gx, gy, _gz = d.workgroups
    g = np.arange(first, first + count, dtype=np.int64)
    ids = np.stack([g % gx, (g // gx) % gy, g // (gx * gy)], axis=1) + np.array(d.grid_offset, np.int64)
    if get_arch(d.arch).family not in _SYSTEM_SGPR_FAMILIES:
        ids = np.stack([ids[:, 0], _ttmp7(ids[:, 1], ids[:, 2]), np.zeros(count, np.int64)], axis=1)
    return np.ascontiguousarray(ids.astype(np.uint32))


def _ttmp7(y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """gfx12's TTMP7: workgroup id y in [15:0], z in [31:16]."""
    return (y & 0xFFFF) | (z & 0xFFFF) << 16


def _id_slots(kd: KernelDescriptor, first: int) -> tuple[int, int, int]:
    """The workgroup ids' SGPRs when the system SGPRs start at `first`: the enabled ones, in x, y, z order."""
    enabled = (kd.enable_sgpr_workgroup_id_x, kd.enable_sgpr_workgroup_id_y, kd.enable_sgpr_workgroup_id_z)
    return tuple(first + sum(map(bool, enabled[:dim])) if on else -1 for dim, on in enumerate(enabled))


def _system_sgprs(d: Dispatch, st: WaveState, groups, first: int) -> None:
    g = np.array(groups, np.int64).reshape(-1, 3) + np.array(d.grid_offset, np.int64)
    per_group = st.sgpr.reshape(len(g), -1, 128)  # [groups, waves per group, SGPRs]: one row per group
    kd, slots = d.descriptor, _id_slots(d.descriptor, first)
    for dim, s in enumerate(slots):
        if s >= 0:
            per_group[:, :, s] = g[:, dim:dim + 1].astype(np.uint32)
    s = first + sum(x >= 0 for x in slots)
    if kd.enable_sgpr_workgroup_info:
        st.sgpr[:, s] = 0
        s += 1
    if kd.enable_private_segment:  # SCRATCH_EN: private segment wave byte offset
        st.sgpr[:, s] = (np.arange(st.n) * d.private_segment_size * d.wave_size).astype(np.uint32)


TTMP7, TTMP8, TTMP9 = TTMP0 + 7, TTMP0 + 8, TTMP0 + 9


def _architected_sgprs(d: Dispatch, st: WaveState, groups, first: int) -> None:
    """gfx12: workgroup ids in TTMP9 and TTMP7, the wave's id in its workgroup in TTMP8[29:25]; of the system
    SGPRs only workgroup info remains."""
    g = np.array(groups, np.int64).reshape(-1, 3) + np.array(d.grid_offset, np.int64)
    per_group = st.sgpr.reshape(len(g), -1, 128)
    per_group[:, :, TTMP9] = g[:, 0:1].astype(np.uint32)
    per_group[:, :, TTMP7] = _ttmp7(g[:, 1:2], g[:, 2:3]).astype(np.uint32)
    st.sgpr[:, TTMP8] = ((st.wave_in_group & 0x1F) << 25).astype(np.uint32)
    if d.descriptor.enable_sgpr_workgroup_info:
        st.sgpr[:, first] = 0


def _workitem_ids(d: Dispatch, st: WaveState, groups, waves_per_group: int) -> None:
    wx, wy, wz = d.workgroup
    lanes = d.wave_size
    ngroups = len(groups)
    # The ids of one workgroup's waves, [waves_per_group, lanes], the same in every group.
    flat = np.arange(waves_per_group)[:, None] * lanes + np.arange(lanes)[None, :]
    x, y, z = flat % wx, (flat // wx) % wy, flat // (wx * wy)
    dims = d.descriptor.enable_vgpr_workitem_id  # 0: x, 1: x and y, 2: x, y and z
    v0 = x if dims == 0 else x | (y << 10) | ((z << 20) if dims >= 2 else 0)
    st.vgpr[0].reshape(ngroups, waves_per_group, lanes)[:] = v0.astype(np.uint32)
    valid = flat < wx * wy * wz
    if not any(g % w for g, w in zip(d.grid, d.workgroup, strict=True)):
        # whole workgroups: one group's EXEC masks and ended (empty) waves, in every group
        words = st.words_of(valid)
        st.sgpr[:, EXEC_LO:EXEC_LO + lanes // 32].reshape(ngroups, waves_per_group, -1)[:] = words
        st.status.reshape(ngroups, waves_per_group)[:, ~valid.any(axis=1)] = DONE
        return
    # partial workgroups at the grid's edge: items beyond the grid are not launched
    valid = np.tile(valid, (ngroups, 1))
    g = np.array(groups, np.int64).reshape(-1, 3)[st.group] + np.array(d.grid_offset, np.int64)
    for dim, ids in enumerate((x, y, z)):
        valid &= g[:, dim:dim + 1] * d.workgroup[dim] + np.tile(ids, (ngroups, 1)) < d.grid[dim]
    st.set_mask64(np.arange(st.n), EXEC_LO, st.bits_of(valid))
    st.status[~valid.any(axis=1)] = DONE  # hardware launches no wave for an empty tail of a workgroup
