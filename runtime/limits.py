"""Launch limits, checked before anything is submitted (a bad shape must not become a queue hang).

The limits are the HSA agent's (what ROCr reports for gfx11): at most 1024 work-items in a workgroup along
all axes together (HSA_AGENT_INFO_WORKGROUP_MAX_SIZE / _DIM), a grid of at most 2^32 - 1 work-items along
each axis (HSA_AGENT_INFO_GRID_MAX_DIM: AQL's grid_size fields are 32 bits), and the LDS a workgroup may
use, from the KFD topology's lds_size_in_kb.

Occupancy (how many waves of a kernel a SIMD keeps resident; the compiler's listings and the debug line of a
launch report it) on gfx1100, wave32: 1536 VGPRs per SIMD allocated in blocks of 24 (FeatureGFX11FullVGPRs), at
most 16 waves per SIMD; LDS: 128 KiB per WGP (4 SIMDs) in WGP mode, shared by the workgroups resident on it.
SGPRs do not limit occupancy on gfx10+ (every wave has 106).
"""

from __future__ import annotations

import operator

import numpy as np

MAX_WORKGROUP_SIZE = 1024
MAX_GRID_ITEMS = (1 << 32) - 1
VGPRS_PER_SIMD = 1536
VGPR_GRANULE = 24
MAX_WAVES_PER_SIMD = 16
LDS_PER_WGP = 128 * 1024
SIMDS_PER_WGP = 4


def dims(value, what: str) -> tuple[int, int, int]:
    """A grid or block given as an int or a sequence of up to three ints, as (x, y, z)."""
    seq = (value,) if isinstance(value, int | np.integer) else value
    try:
        out = tuple(operator.index(v) for v in seq)  # ints only: 2.0 or "2" is a mistake, not a size
    except TypeError:
        raise TypeError(f"{what} must be an int or up to three ints, not {value!r}") from None
    if not 1 <= len(out) <= 3:
        raise TypeError(f"{what} must be an int or up to three ints, not {value!r}")
    return out + (1,) * (3 - len(out))


def check_launch(grid, block, shared: int, static_lds: int, lds_limit: int) -> tuple[tuple, tuple]:
    """(grid, block) as 3-tuples, or ValueError naming the limit a launch exceeds."""
    grid, block = dims(grid, "grid"), dims(block, "block")
    if any(v <= 0 for v in grid + block):
        raise ValueError(f"grid {grid} and block {block} must be positive")
    items = block[0] * block[1] * block[2]
    if items > MAX_WORKGROUP_SIZE:
        raise ValueError(f"block {block} has {items} work-items; a workgroup holds at most {MAX_WORKGROUP_SIZE}")
    for axis, g, b in zip("xyz", grid, block, strict=True):
        if g * b > MAX_GRID_ITEMS:
            raise ValueError(f"grid {grid} of block {block} has {g * b} work-items along {axis}; at most "
                             f"{MAX_GRID_ITEMS} (2^32 - 1) per axis")
    if not isinstance(shared, int) or shared < 0:
        raise ValueError(f"dynamic LDS (shared={shared!r}) must be a non-negative int")
    if static_lds + shared > lds_limit:
        raise ValueError(f"LDS of {static_lds} static + {shared} dynamic bytes exceeds the {lds_limit} bytes a "
                         "workgroup may use")
    return grid, block


def occupancy(vgprs: int, lds_bytes: int, waves_per_group: int) -> int:
    """Waves per SIMD a gfx1100 kernel with these resources can keep resident (module docstring)."""
    blocks = -(-max(vgprs, 1) // VGPR_GRANULE) * VGPR_GRANULE
    waves = min(MAX_WAVES_PER_SIMD, VGPRS_PER_SIMD // blocks)
    if lds_bytes:
        groups = LDS_PER_WGP // lds_bytes
        waves = min(waves, max(1, groups * waves_per_group // SIMDS_PER_WGP))
    return waves
