"""One-kernel code objects for the tests that run every defined instruction in both tiers (test_sem_define's floats,
test_jit_packed, test_jit_16bit): a wave32 kernel "k" of 256 VGPRs taking one 8-byte argument (its data's address),
its descriptor's float-mode fields set as the test's MODE says, and the f16 inputs the 16-bit tests share."""

from __future__ import annotations

import numpy as np

from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor

# per architecture: (the wait for a scalar load, the wait for a vector load)
WAITS = {"gfx1100": ("s_waitcnt lgkmcnt(0)", "s_waitcnt vmcnt(0)"),
         "gfx1201": ("s_wait_kmcnt 0x0", "s_wait_loadcnt 0x0")}
F16_SPECIALS = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7D00, 0xFD01, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF,
                0x3C00, 0xBC00, 0x3800, 0x3C01, 0x4000, 0xC000, 0x3BFF, 0x0200]


def workgroup_id(arch: str) -> str:
    """The SGPR a kernel finds its workgroup id in: s2 on gfx11, ttmp9 on gfx12."""
    return "s2" if arch == "gfx1100" else "ttmp9"


def code_object(lines: list[str], mode: dict, arch: str) -> bytes:
    """The code object of kernel "k" assembled from `lines`, with the descriptor fields `mode` names set."""
    kd = make_descriptor(256, kernarg_size=8, wave32=True)
    for k, v in mode.items():
        setattr(kd, k, v)
    meta = {".args": [{".offset": 0, ".size": 8, ".value_kind": "by_value"}]}
    return write_code_object([("k", assemble("\n".join(lines), arch=arch), kd, meta)], target=arch)


def f16_inputs(rng, lanes: int) -> np.ndarray:
    """4 dwords per lane: v1 and v2 run through every pair of f16 specials (in both halves), v3 specials or random
    bits."""
    halves = rng.choice(np.array(F16_SPECIALS, np.uint32), (lanes, 3, 2))
    halves = np.where(rng.random((lanes, 3, 2)) < 0.3, rng.integers(0, 1 << 16, (lanes, 3, 2)), halves)
    pairs = np.array([(a, b) for a in F16_SPECIALS for b in F16_SPECIALS], np.uint32)
    halves[:len(pairs), :2, 0] = pairs
    halves[:len(pairs), :2, 1] = pairs[::-1]
    words = np.zeros((lanes, 4), np.uint32)
    words[:, :3] = halves[..., 0] | (halves[..., 1] << 16)
    return words
