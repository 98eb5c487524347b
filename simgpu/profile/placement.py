"""Where the model places a wave: shader engine, shader array, WGP and SIMD (gfx1100: 6 SEs x 2 SAs x 4 WGPs
x 4 SIMD32s). Workgroups go round-robin over the SEs, then the SAs, then the WGPs of an SA; the waves of a
workgroup go round-robin over its WGP's four SIMDs. The placement decides which per-WGP SQ counter instance
counts a wave and which waves the thread trace's selected SIMD sees; it does not change how waves run.
"""

from __future__ import annotations

import numpy as np

SHADER_ENGINES = 6
SA_PER_SE = 2
WGP_PER_SA = 4
SIMD_PER_WGP = 4
INSTANCES = SHADER_ENGINES * SA_PER_SE * WGP_PER_SA  # SQ counter instances: one per WGP


def place(group: np.ndarray, wave_in_group: np.ndarray) -> tuple[np.ndarray, ...]:
    """(se, sa, wgp, simd) arrays for waves given their dispatch-wide workgroup index and wave index in it."""
    se = group % SHADER_ENGINES
    k = group // SHADER_ENGINES
    return se, k % SA_PER_SE, (k // SA_PER_SE) % WGP_PER_SA, wave_in_group % SIMD_PER_WGP


def instance(se, sa, wgp):
    """The SQ counter instance index of (se, sa, wgp): GRBM_GFX_INDEX's SE, SA and instance (WGP) numbers."""
    return (se * SA_PER_SE + sa) * WGP_PER_SA + wgp



# gfx942 (MI300X in SPX mode): its XCCs run as one device (docs/device.md, "gfx942"), so the waves of a dispatch are
# placed on XCC 0's 4 SEs x 1 SH x 10 CU slots x 4 SIMDs, the XCC whose CP runs the queue and whose SE counters and
# traces PRED_EXEC reaches.
SE_GFX9 = 4
CU_PER_SE_GFX9 = 10
SIMD_PER_CU_GFX9 = 4


def place_gfx9(group: np.ndarray, wave_in_group: np.ndarray) -> tuple[np.ndarray, ...]:
    """(se, sh, cu, simd) arrays of waves on gfx942: workgroups go round-robin over the SEs, then an SE's CU slots;
    a workgroup's waves go round-robin over its CU's SIMDs. (Which CU slots are disabled is not modelled.)"""
    se = group % SE_GFX9
    cu = (group // SE_GFX9) % CU_PER_SE_GFX9
    return se, np.zeros_like(se), cu, wave_in_group % SIMD_PER_CU_GFX9
