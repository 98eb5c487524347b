"""Scalar memory loads into VCC (issue 26, item 3).

RDNA3 SMEM returns data to any SGPR including VCC (operand codes 106/107): LLVM allocates VCC as an ordinary
scalar register under register pressure, e.g. tinygrad's sparse_categorical_crossentropy kernel loads a class
index with `s_load_b32 vcc_lo, s[26:27], 0x10` and compares it with `s_cmp_lt_u32 vcc_lo, 10`. simgpu dropped
data for codes 106 and up, so the comparison read a stale VCC and the loss came out 3% off. TTMPs (108-123)
belong to a trap handler: data for them is still dropped."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support import tiers

BODY = """
s_load_b64 s[2:3], s[0:1], 0x0
s_mov_b64 vcc, 0
s_waitcnt lgkmcnt(0)
{load}
s_waitcnt lgkmcnt(0)
v_mov_b32 v1, vcc_lo
v_mov_b32 v2, vcc_hi
v_mov_b32 v3, ttmp0
v_mov_b32 v0, 0
global_store_b96 v0, v[1:3], s[2:3]
s_endpgm
"""


@pytest.mark.parametrize("load,want", [
    ("s_load_b32 vcc_lo, s[0:1], 0x8", [0x12345678, 0, 0]),
    ("s_load_b64 vcc, s[0:1], 0x8", [0x12345678, 0x9ABCDEF0, 0]),
    ("s_load_b64 s[104:105], s[0:1], 0x8\ns_waitcnt lgkmcnt(0)\ns_mov_b32 vcc_lo, s105", [0x9ABCDEF0, 0, 0]),
    ("s_load_b32 ttmp0, s[0:1], 0x8", [0, 0, 0]),  # a trap handler's register: dropped
])
@pytest.mark.parametrize("tier", tiers.TIERS)
def test_smem_returns_data_to_vcc(load, want, tier):
    tb = tiers.testbed(tier)
    k = tb.load_asm(BODY.format(load=load), args=3)
    out = tb.alloc(16)
    tb.launch(k, [out, 0x9ABCDEF0_12345678, 0x0BADF00D_0BADF00D], (1,), (32,))
    assert tb.download(out, np.uint32, 3).tolist() == want
