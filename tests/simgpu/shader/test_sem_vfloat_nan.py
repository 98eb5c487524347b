"""NaN results of float arithmetic do not depend on how waves are grouped (docs/shader.md, "NaN results":
the first NaN operand, quieted). numpy alone picks between two NaN operands by its inner loop (a broadcast
SGPR operand, one wave or many), which would make one wave's result differ from the same wave's result in a
batch, and the JIT tier's (one wave at a time) from the interpreter's."""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.testbed import Testbed

QA, QB, QC = 0x7FC00001, 0xFFC00002, 0x7FC00003  # three quiet NaNs told apart by payload and sign


@pytest.mark.parametrize("inst,want", [("v_add_f32 v3, s4, v2", QA), ("v_add_f32 v3, v2, s4", QB),
                                       ("v_sub_f32 v3, v2, s4", QB), ("v_subrev_f32 v3, v2, s4", QA),
                                       ("v_mul_f32 v3, s4, v2", QA), ("v_fma_f32 v3, v2, s4, v2", QB),
                                       ("v_fmac_f32 v3, s4, v2", QA)])
@pytest.mark.parametrize("waves", [1, 4])
def test_one_wave_and_a_batch_agree(inst, want, waves):
    tb = Testbed(vram_size=1 << 26)
    k = tb.load_asm(f"""
        s_load_b64 s[6:7], s[0:1], 0x0
        s_mov_b32 s4, {QA:#x}
        v_mov_b32 v2, {QB:#x}
        v_mov_b32 v3, {QC:#x}
        {inst}
        v_lshl_add_u32 v1, s2, 5, v0
        v_lshlrev_b32 v1, 2, v1
        s_waitcnt lgkmcnt(0)
        global_store_b32 v1, v3, s[6:7]
        s_endpgm""", args=1, vgprs=8)
    out = tb.alloc(4 * 32 * waves)
    tb.launch(k, [out], (waves,), (32,))
    assert (tb.download(out, np.uint32, 32 * waves) == want).all()
