"""simgpu.shader.setup's launch states: initial_state copies a state built once per launch shape (the kernarg
address, a user SGPR, differs every launch); every copy must equal the state built from scratch."""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.isa.kdescriptor import make_descriptor
from simgpu.shader import setup
from simgpu.shader.dispatch import Dispatch

ARRAYS = ("sgpr", "vgpr", "scc", "pc", "status", "hwreg", "group", "wave_in_group", "lds")


def _dispatch(arch: str, kernarg: int, grid, workgroup, wave32: bool, dims: int, scratch: int) -> Dispatch:
    kd = make_descriptor(vgprs=24, user_sgprs=("dispatch_ptr", "kernarg_segment_ptr"), workgroup_ids="xyz",
                          workitem_id_dims=dims, wave32=wave32, group_segment_size=256, private_segment_size=scratch)
    return Dispatch(code_address=0x1000, descriptor=kd, grid=grid, workgroup=workgroup, kernarg_address=kernarg,
                    dispatch_ptr=0x5000, group_segment_size=256, private_segment_size=scratch, arch=arch)


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201", "gfx942"])
@pytest.mark.parametrize("grid, workgroup, dims", [((64, 1, 1), (64, 1, 1), 1), ((100, 7, 3), (16, 4, 2), 3),
                                                   ((33, 5, 1), (8, 8, 1), 2)])
def test_a_copied_launch_state_equals_one_built_from_scratch(arch, grid, workgroup, dims):
    wave32 = arch != "gfx942"
    setup._TEMPLATES.clear()
    for kernarg, scratch in ((0x7000_0000_1000, 0), (0x7000_0000_2040, 0), (0x1234_5678_9ABC, 0), (0x2000, 16)):
        d = _dispatch(arch, kernarg, grid, workgroup, wave32, dims, scratch)
        lanes, per_group = d.wave_size, -(-int(np.prod(workgroup)) // d.wave_size)
        for first, count in ((0, 3), (3, 2), (0, 3)):
            groups = [(g % d.workgroups[0], g // d.workgroups[0] % d.workgroups[1],
                       g // (d.workgroups[0] * d.workgroups[1])) for g in range(first, first + count)]
            got = setup.initial_state(d, groups, per_group)
            want = setup._launch_state(d, groups, per_group, setup.user_sgprs(d))
            assert got.n == want.n and got.lanes == want.lanes == lanes
            for name in ARRAYS:
                a, b = getattr(got, name), getattr(want, name)
                assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name
    assert 0 < len(setup._TEMPLATES) <= 8  # one per (scratch, batch) shape, whatever the kernarg address
