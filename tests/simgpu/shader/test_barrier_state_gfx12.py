"""gfx1201 s_get_barrier_state (simgpu/shader/scalar/gfx12.py): the RDNA4 reference's pseudo-code lays the result
out as {signalCnt[22:16], memberCnt[10:4], valid[0]} of the barrier SRC0 (or M0[4:0]) names. The kernel is assembled
(encodings as llvm-mc -mcpu=gfx1201 gives them: `s_get_barrier_state s12, -1` is ssrc0 193, `..., m0` 125):
clang-19 cannot serve here, since it treats the intrinsic as free of side effects and folds repeated reads and drops
the barrier between them. It runs over PM4 and AQL through the runtime, in both tiers.

A workgroup of four wave32 waves: each reads the workgroup barrier's state at the start (valid, 4 members, no signal
yet: every wave starts together), wave 0 ends, and the other three signal and wait (s_barrier_signal -1,
s_barrier_wait -1), then read the workgroup barrier (3 members: the ended wave left; the completed barrier's count
restarted at 0), barrier 0 and named barrier 3 (never initialised: 0); then wave 1 alone signals again and reads
one signal of three members.
"""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from tests.simgpu.shader.test_corpus_opencl_gfx1201 import launcher

ARCH = "gfx1201"
BODY = """
s_load_b64 s[2:3], s[0:1], 0x0
v_mul_u32_u24_e32 v1, 20, v0
s_get_barrier_state s12, -1
s_wait_kmcnt 0x0
v_mov_b32_e32 v2, s12
global_store_b32 v1, v2, s[2:3]
s_bfe_u32 s11, ttmp8, 0x50019
s_cmp_eq_u32 s11, 0
s_cbranch_scc1 end
s_barrier_signal -1
s_barrier_wait 0xffff
s_get_barrier_state s12, -1
s_mov_b32 m0, 3
s_get_barrier_state s13, m0
s_get_barrier_state s14, 0
v_mov_b32_e32 v2, s12
v_mov_b32_e32 v3, s13
v_mov_b32_e32 v4, s14
global_store_b96 v1, v[2:4], s[2:3] offset:4
s_cmp_eq_u32 s11, 1
s_cbranch_scc0 end
s_barrier_signal -1
s_get_barrier_state s12, -1
v_mov_b32_e32 v2, s12
global_store_b32 v1, v2, s[2:3] offset:16
end:
s_endpgm
"""


def code_object() -> bytes:
    meta = {".args": [{".name": "out", ".offset": 0, ".size": 8, ".value_kind": "global_buffer",
                       ".address_space": "global"}]}
    kd = make_descriptor(8, kernarg_size=8)
    return write_code_object([("k", assemble(BODY, arch=ARCH), kd, meta)], target=ARCH)


def state(signals: int, members: int, valid: int = 1) -> int:
    return signals << 16 | members << 4 | valid


@pytest.mark.parametrize("queue", ["pm4", "aql"])
def test_workgroup_barrier_state_counts_members_and_signals(queue):
    out, _ = launcher(queue, code_object=code_object())("k", [np.zeros((128, 5), np.uint32)], (1,), (128,))
    got = out[0]
    assert (got[:, 0] == state(0, 4)).all()  # at the start
    assert (got[:32, 1:] == 0).all()  # wave 0 ended before the barrier
    assert (got[32:, 1] == state(0, 3)).all()  # after the barrier: the ended wave is no member, the count restarted
    assert (got[32:, 2:4] == 0).all()  # named barrier 3 and barrier 0: never initialised
    assert (got[32:64, 4] == state(1, 3)).all() and (got[64:, 4] == 0).all()  # wave 1's lone signal
