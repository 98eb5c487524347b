"""A lone wave's VALU ops over its lane window (simgpu.shader.vector.window) leave every register as the
whole-wave path does: one wave runs float, integer, compare, carry, 16-bit, 64-bit and VOPD instructions under a
drawn EXEC, with NaNs, infinities, denormals and random bits in every lane, once with the window and once
without it, and both runs must store the same bytes (VGPRs of every lane, VCC, SGPR masks, EXEC after a cmpx)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgpu.shader import semantics
from simgpu.shader.sem.expr import nodes
from simgpu.shader.state import EXEC_LO, WaveState
from simgpu.shader.vector import valu, window
from simgpu.testbed import Testbed

SRC_DWORDS = 8  # v10-v17 per lane
OUT_DWORDS = 32  # v20-v51 per lane

KERNEL = """
    s_load_b128 s[4:7], s[0:1], 0x0
    s_load_b64 s[8:9], s[0:1], 0x10
    s_waitcnt lgkmcnt(0)
    v_lshlrev_b32 v1, 5, v0
    v_lshlrev_b32 v2, 7, v0
    global_load_b128 v[10:13], v1, s[6:7]
    global_load_b128 v[14:17], v1, s[6:7] offset:16
    s_waitcnt vmcnt(0)
    v_mov_b32 v20, v17
    v_mov_b32 v21, v16
    v_mov_b32 v22, v15
    v_mov_b32 v23, v14
    v_mov_b32 v24, v13
    v_mov_b32 v25, v12
    v_mov_b32 v26, v11
    v_mov_b32 v27, v10
    v_mov_b32 v28, v17
    v_mov_b32 v29, v16
    v_mov_b32 v30, v15
    v_mov_b32 v31, v14
    v_mov_b32 v32, v13
    v_mov_b32 v33, v12
    v_mov_b32 v34, v11
    v_mov_b32 v35, v10
    v_mov_b32 v36, v17
    v_mov_b32 v37, v16
    v_mov_b32 v38, v15
    v_mov_b32 v39, v14
    v_cmp_ne_u32 vcc_lo, v16, v17
    s_mov_b32 exec_lo, s8
    v_add_f32 v20, v10, v11
    v_mul_f32 v21, v12, v13
    v_fmac_f32 v22, v10, v14
    v_max_f32 v23, v10, v15
    v_exp_f32 v24, v11
    v_rcp_f32 v25, v12
    v_cndmask_b32 v26, v13, v14, vcc_lo
    v_sub_f32 v27, v14, v15
    v_add_co_u32 v28, s10, v14, v15
    v_add_co_ci_u32 v29, vcc_lo, v16, v17, vcc_lo
    v_cmp_gt_f32_e64 s11, v12, v13
    v_cmp_lt_f32 vcc_lo, v10, v11
    v_add_f64 v[30:31], v[10:11], v[12:13]
    v_add_nc_u16 v32, v10, v11
    v_dual_add_f32 v33, v10, v11 :: v_dual_mul_f32 v34, v12, v13
    v_dual_cndmask_b32 v35, v14, v15 :: v_dual_mov_b32 v36, s9
    v_add_f32 v37, 1.0, s9
    v_mad_u64_u32 v[38:39], null, v10, v11, v[12:13]
    v_cmpx_lt_u32 v16, v17
    v_xor_b32 v40, v10, v11
    s_mov_b32 s12, exec_lo
    s_mov_b32 exec_lo, -1
    v_mov_b32 v41, s10
    v_mov_b32 v42, s11
    v_mov_b32 v43, vcc_lo
    v_mov_b32 v44, s12
    global_store_b128 v2, v[20:23], s[4:5]
    global_store_b128 v2, v[24:27], s[4:5] offset:16
    global_store_b128 v2, v[28:31], s[4:5] offset:32
    global_store_b128 v2, v[32:35], s[4:5] offset:48
    global_store_b128 v2, v[36:39], s[4:5] offset:64
    global_store_b128 v2, v[40:43], s[4:5] offset:80
    global_store_b32 v2, v44, s[4:5] offset:96
    s_endpgm
"""

SPECIAL = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x00000001, 0x807FFFFF,
           0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFFFFFFFF, 0x00800000, 0x42F60000]


@pytest.fixture(scope="module")
def bench():
    tb = Testbed(vram_size=1 << 26)
    tb.engine.jit = None  # interpreted every launch (a hot kernel would be compiled)
    return tb, tb.load_asm(KERNEL, vgprs=64, args=4)


def _run(bench, src: np.ndarray, exec_mask: int, scalar: int) -> np.ndarray:
    tb, k = bench
    inp = tb.upload(src)
    out = tb.alloc(32 * OUT_DWORDS * 4)
    tb.launch(k, [out, inp, exec_mask | scalar << 32, 0], (1,), (32,))
    return tb.download(out, np.uint32, 32 * OUT_DWORDS)


lane_word = st.one_of(st.sampled_from(SPECIAL), st.integers(0, 2**32 - 1))
exec_masks = st.one_of(st.sampled_from([1, 2, 0x80000000, 0x3, 0x10, 0xF0, 0x80000001, 0, 0xFFFFFFFF, 0x7FFFFFFF]),
                       st.integers(0, 2**32 - 1).map(lambda m: m & ~(-(1 << 8))),  # low lanes only
                       st.integers(0, 2**32 - 1))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(words=st.lists(lane_word, min_size=32 * SRC_DWORDS, max_size=32 * SRC_DWORDS), exec_mask=exec_masks,
       scalar=st.one_of(st.sampled_from(SPECIAL), st.integers(0, 2**32 - 1)))
def test_window_matches_whole_wave(bench, words, exec_mask, scalar):
    src = np.array(words, np.uint32)
    with_window = _run(bench, src, exec_mask, scalar)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(window, "lane_window", lambda st, w: None)
        whole = _run(bench, src, exec_mask, scalar)
    assert with_window.tobytes() == whole.tobytes(), np.nonzero(with_window != whole)


def test_window_spans_active_lanes():
    """The window runs from the lowest to the highest active lane; a full or empty EXEC has none."""
    st_ = WaveState(1, 1, 32, 1, 0)
    w = np.zeros(1, np.int64)
    for e, want in ((0b1, (0, 1, 1)), (0b10100, (2, 5, 0b101)), (0x80000000, (31, 32, 1)), (0, None),
                    (0xFFFFFFFF, None), (0x80000001, (0, 32, 0x80000001))):
        st_.sgpr[0, EXEC_LO] = e
        got = window.lane_window(st_, w)
        assert (None if got is None else (got[0].start, got[0].stop, got[2])) == want, hex(e)


def test_lane_index_definitions_keep_the_whole_wave():
    """A definition that reads a lane's index (the `lane` node) is not computed over a window."""
    semantics.implemented()
    lane_ops = [n for n, s in valu.SPECS.items() if s.definition is not None and not window.windowed(s)]
    plain = valu.SPECS["v_add_f32"]
    assert window.windowed(plain)
    for name in lane_ops:
        d = valu.SPECS[name].definition
        assert any(n.op == "lane" for t in (d.tree(False), d.tree(True)) for n in nodes(t)), name
