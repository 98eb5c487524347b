"""Cross-lane ops and DPP against independent reference models written from the RDNA3 ISA reference:
hand-assembled kernels (operands loaded per lane, EXEC per wave from a buffer, results stored per instruction)
and LLVM-IR kernels using the lane intrinsics."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.llvm import compile_ir
from simgpu.testbed import Testbed

U32 = np.uint32


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 28)


def _prologue(lanes: int) -> str:
    """s[4:5] in0, s[6:7] in1, s[8:9] out, s[12:13] per-wave EXEC; v10 = byte offset of the lane, v1/v2 the
    lane's inputs, v4 = in1 too (the "old" destination); s[20:21] this wave's EXEC, s[22:23] all lanes."""
    shift = 5 if lanes == 32 else 6
    ex, mov = ("exec_lo", "s_mov_b32") if lanes == 32 else ("exec", "s_mov_b64")
    pair = "s20" if lanes == 32 else "s[20:21]"
    save = "s22" if lanes == 32 else "s[22:23]"
    return f"""
        s_load_b64 s[4:5], s[0:1], 0x0
        s_load_b64 s[6:7], s[0:1], 0x8
        s_load_b64 s[8:9], s[0:1], 0x10
        s_load_b64 s[12:13], s[0:1], 0x18
        s_lshl_b32 s14, s2, {shift}
        v_add_nc_u32 v10, s14, v0
        v_lshlrev_b32 v10, 2, v10
        s_lshl_b32 s15, s2, 3
        s_waitcnt lgkmcnt(0)
        s_load_b64 s[20:21], s[12:13], s15
        global_load_b32 v1, v10, s[4:5]
        global_load_b32 v2, v10, s[6:7]
        s_waitcnt vmcnt(0) lgkmcnt(0)
        {mov} {save}, {ex}
        {mov} {ex}, {pair}
    """, ex, mov, save


def run_ops(tb, ops: list[str], a: np.ndarray, b: np.ndarray, execs: np.ndarray, lanes: int,
            result: str = "v4", init: str = "v_mov_b32 v4, v2") -> np.ndarray:
    """Run each op (a list of instruction lines) on fresh registers, EXEC = execs[wave]; the result
    register of every lane after each op, as [len(ops), waves*lanes]."""
    pro, ex, mov, save = _prologue(lanes)
    body = [pro]
    step = a.size * 4
    for op in ops:
        body += [f"{mov} {ex}, {save}", init, "v_mov_b32 v5, v1", "v_mov_b32 v6, v2",
                 f"{mov} {ex}, {'s20' if lanes == 32 else 's[20:21]'}", op,
                 f"{mov} {ex}, {save}", f"global_store_b32 v10, {result}, s[8:9]",
                 f"s_add_u32 s8, s8, {step}", "s_addc_u32 s9, s9, 0"]
    body.append("s_endpgm")
    k = tb.load_asm("\n".join(body), args=4, wave32=lanes == 32)
    out = tb.alloc(step * len(ops))
    waves = a.size // lanes
    ex64 = np.asarray(execs, np.uint64)
    tb.launch(k, [tb.upload(a.astype(U32)), tb.upload(b.astype(U32)), out, tb.upload(ex64)], (waves,), (lanes,))
    return tb.download(out, U32, a.size * len(ops)).reshape(len(ops), a.size)


def exec_bits(execs: np.ndarray, lanes: int) -> np.ndarray:
    """[waves, lanes] bool from per-wave EXEC values."""
    return ((np.asarray(execs, np.uint64)[:, None] >> np.arange(lanes, dtype=np.uint64)) & np.uint64(1)).astype(bool)


def _inputs(lanes: int, waves: int, seed: int):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 32, waves * lanes, dtype=np.uint64).astype(U32)
    b = rng.integers(0, 1 << 32, waves * lanes, dtype=np.uint64).astype(U32)
    full = (1 << lanes) - 1
    execs = [full, full, 0, 1 << (lanes - 1), 0x5555555555555555 & full] + \
        [int(x) & full for x in rng.integers(0, 1 << 62, max(waves - 5, 0), dtype=np.uint64)]
    return a, b, np.array(execs[:waves], np.uint64)


# ---------------------------------------------------------------------------------------------- DPP reference


def ref_dpp16_lane(ctrl: int, lane: int) -> int | None:
    """Source lane of `lane` under a DPP16 control (None: no source in the row)."""
    row, r = lane // 16 * 16, lane % 16
    if ctrl < 0x100:
        return lane // 4 * 4 + ((ctrl >> (2 * (lane % 4))) & 3)
    kind, n = ctrl & 0x1F0, ctrl & 0xF
    table = {0x100: r + n if r + n < 16 else None, 0x110: r - n if r - n >= 0 else None,
             0x120: (r - n) % 16, 0x150: n, 0x160: r ^ n}
    if ctrl == 0x140:
        return row + 15 - r
    if ctrl == 0x141:
        return row + (r // 8) * 8 + 7 - r % 8
    s = table[kind]
    return None if s is None else row + s


def ref_dpp16(ctrl, row_mask, bank_mask, bc, fi, src, old, active):
    """v_mov_b32_dpp for one wave: lanes written when active, row and bank enabled, and the source is valid
    (in the row and active, or fetch-inactive) or bound_ctrl makes an invalid source read 0."""
    lanes = np.arange(len(src))
    s = np.array([-1 if (x := ref_dpp16_lane(ctrl, i)) is None else x for i in lanes])
    row_on = ((row_mask >> (lanes // 16)) & 1).astype(bool)
    enabled = active & row_on & ((bank_mask >> (lanes // 4 % 4)) & 1).astype(bool)
    valid = (s >= 0) & (bool(fi) | active[np.maximum(s, 0)])
    value = np.where(valid, src[np.maximum(s, 0)], 0)
    return np.where(enabled & (valid | bool(bc)), value, old)


def _dpp_text(ctrl: int) -> str:
    if ctrl < 0x100:
        return "quad_perm:[{}]".format(",".join(str((ctrl >> (2 * k)) & 3) for k in range(4)))
    names = {0x100: "row_shl", 0x110: "row_shr", 0x120: "row_ror", 0x150: "row_share", 0x160: "row_xmask"}
    if ctrl == 0x140:
        return "row_mirror"
    if ctrl == 0x141:
        return "row_half_mirror"
    return f"{names[ctrl & 0x1F0]}:{ctrl & 0xF}"


ALL_CTRLS = list(range(256)) + [k | n for k in (0x100, 0x110, 0x120) for n in range(1, 16)] + [0x140, 0x141] + \
    [k | n for k in (0x150, 0x160) for n in range(16)]


@pytest.mark.parametrize("lanes,shift", [(32, 0), (32, 2), (64, 1), (64, 3)])
def test_dpp16_every_control(tb, lanes, shift):
    """Every DPP16 control; (bound_ctrl, fi) rotates per control so that the four runs give each control all
    four combinations (two per wave size)."""
    waves = 6
    a, b, execs = _inputs(lanes, waves, 7 + shift + lanes)
    rng = np.random.default_rng(shift)
    masks = [(0xF, 0xF) if i % 3 == 0 else (int(rng.integers(0, 16)), int(rng.integers(0, 16)))
             for i in range(len(ALL_CTRLS))]
    combos = [((i + shift) % 4 & 1, (i + shift) % 4 >> 1) for i in range(len(ALL_CTRLS))]
    ops = [f"v_mov_b32_dpp v4, v1 {_dpp_text(c)} row_mask:{rm:#x} bank_mask:{bm:#x}"
           + (" bound_ctrl:1" if bc else "") + (" fi:1" if fi else "")
           for c, (rm, bm), (bc, fi) in zip(ALL_CTRLS, masks, combos, strict=True)]
    got = run_ops(tb, ops, a, b, execs, lanes)
    act = exec_bits(execs, lanes)
    for i, (c, (rm, bm), (bc, fi)) in enumerate(zip(ALL_CTRLS, masks, combos, strict=True)):
        for wv in range(waves):
            sl = slice(wv * lanes, (wv + 1) * lanes)
            want = ref_dpp16(c, rm, bm, bc, fi, a[sl], b[sl], act[wv])
            assert np.array_equal(got[i, sl], want), (ops[i], wv)


@pytest.mark.parametrize("lanes", [32, 64])
def test_dpp8(tb, lanes):
    waves = 5
    a, b, execs = _inputs(lanes, waves, 11)
    rng = np.random.default_rng(3)
    sels = [[int(x) for x in rng.integers(0, 8, 8)] for _ in range(24)] + [list(range(8)), [7] * 8]
    ops = [f"v_mov_b32_dpp v4, v1 dpp8:[{','.join(map(str, s))}]" + (" fi:1" if i % 2 else "")
           for i, s in enumerate(sels)]
    got = run_ops(tb, ops, a, b, execs, lanes)
    act = exec_bits(execs, lanes)
    for i, s in enumerate(sels):
        fi = i % 2
        for wv in range(waves):
            base = wv * lanes
            for lane in range(lanes):
                src = lane // 8 * 8 + s[lane % 8]
                if not act[wv, lane]:
                    want = b[base + lane]
                else:  # DPP8 without fetch-inactive reads 0 from an inactive lane
                    want = a[base + src] if fi or act[wv, src] else 0
                assert got[i, base + lane] == want, (ops[i], wv, lane)


def test_dpp_vop2_permutes_only_src0(tb):
    lanes, waves = 32, 3
    a, b, execs = _inputs(lanes, waves, 5)
    ops = ["v_add_nc_u32_dpp v4, v1, v2 row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1",
           "v_sub_nc_u32_dpp v4, v1, v2 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0xf"]
    got = run_ops(tb, ops, a, b, execs, lanes)
    act = exec_bits(execs, lanes)
    for wv in range(waves):
        sl = slice(wv * lanes, (wv + 1) * lanes)
        sh = ref_dpp16(0x111, 0xF, 0xF, 1, 0, a[sl], np.zeros(lanes, U32), np.ones(lanes, bool) & act[wv])
        want0 = np.where(act[wv], (sh.astype(np.uint64) + b[sl]) & 0xFFFFFFFF, b[sl])
        assert np.array_equal(got[0, sl], want0)
        qp = [ref_dpp16_lane(0x1B, i) for i in range(lanes)]
        ok = np.array([act[wv][q] for q in qp])
        want1 = np.where(act[wv] & ok, (a[sl][qp].astype(np.int64) - b[sl]) % (1 << 32), b[sl])
        assert np.array_equal(got[1, sl], want1)


# ---------------------------------------------------------------------------------------------- lane ops


@pytest.mark.parametrize("lanes", [32, 64])
def test_readlane_writelane_readfirstlane(tb, lanes):
    waves = 6
    a, b, execs = _inputs(lanes, waves, 21)
    sel = [0, 1, 5, lanes - 1, 33, 70]
    ops = [f"s_mov_b32 s30, {s}\nv_readlane_b32 s31, v1, s30\nv_mov_b32 v4, s31" for s in sel]
    ops += [f"v_readlane_b32 s31, v1, {s}\nv_mov_b32 v4, s31" for s in (3, 17)]
    ops += ["v_readfirstlane_b32 s31, v1\nv_mov_b32 v4, s31"]
    ops += [f"s_mov_b32 s30, 0x{0xABCD0000 + s:x}\nv_writelane_b32 v4, s30, {s}" for s in (0, 9, 33)]
    got = run_ops(tb, ops, a, b, execs, lanes)
    act = exec_bits(execs, lanes)
    for wv in range(waves):
        sl = slice(wv * lanes, (wv + 1) * lanes)
        wa, wb = a[sl], b[sl]
        for i, s in enumerate(sel + [3, 17]):  # readlane ignores EXEC; the result is written under EXEC
            assert np.array_equal(got[i, sl], np.where(act[wv], wa[s % lanes], wb))
        first = int(np.argmax(act[wv])) if act[wv].any() else 0
        assert np.array_equal(got[len(sel) + 2, sl], np.where(act[wv], wa[first], wb))
        for j, s in enumerate((0, 9, 33)):  # writelane writes its lane even when inactive
            want = wb.copy()
            want[s % lanes] = 0xABCD0000 + s
            assert np.array_equal(got[len(sel) + 3 + j, sl], want)


def ref_permlane(src, old, active, sel, cross, fi, bc):
    """v_permlane16/x16: lane i of row r reads lane sel[i%16] of row r (x16: row r^1)."""
    out = old.copy()
    for lane in range(len(src)):
        if not active[lane]:
            continue
        row = lane // 16 ^ (1 if cross else 0)
        s = row * 16 + ((sel >> (4 * (lane % 16))) & 15)
        if fi or active[s]:
            out[lane] = src[s]
        elif bc:
            out[lane] = 0
    return out


@pytest.mark.parametrize("lanes", [32, 64])
def test_permlane16_x16(tb, lanes):
    waves = 6
    a, b, execs = _inputs(lanes, waves, 31)
    rng = np.random.default_rng(4)
    cases = [(int(rng.integers(0, 1 << 63)) * 2 + 1, name, osel)
             for name in ("v_permlane16_b32", "v_permlanex16_b32") for osel in range(4)]
    cases.append((0xFEDCBA9876543210, "v_permlane16_b32", 0))
    ops = [f"s_mov_b32 s30, 0x{sel & 0xFFFFFFFF:x}\ns_mov_b32 s31, 0x{sel >> 32:x}\n"
           f"{name} v4, v1, s30, s31 op_sel:[{osel & 1},{osel >> 1}]" for sel, name, osel in cases]
    got = run_ops(tb, ops, a, b, execs, lanes)
    act = exec_bits(execs, lanes)
    for i, (sel, name, osel) in enumerate(cases):
        for wv in range(waves):
            sl = slice(wv * lanes, (wv + 1) * lanes)
            want = ref_permlane(a[sl], b[sl], act[wv], sel, "x16" in name, osel & 1, osel >> 1)
            assert np.array_equal(got[i, sl], want), (ops[i], wv)


@pytest.mark.parametrize("lanes", [32, 64])
def test_permlane64(tb, lanes):
    a, b, execs = _inputs(lanes, 5, 41)
    got = run_ops(tb, ["v_permlane64_b32 v4, v1"], a, b, execs, lanes)
    act = exec_bits(execs, lanes)
    for wv in range(5):
        sl = slice(wv * lanes, (wv + 1) * lanes)
        swapped = np.roll(a[sl], 32) if lanes == 64 else b[sl]  # no operation in wave32
        assert np.array_equal(got[0, sl], np.where(act[wv], swapped, b[sl]))


def test_swap_and_m0_relative_moves(tb):
    lanes, waves = 32, 5
    a, b, execs = _inputs(lanes, waves, 51)
    # v5 = a, v6 = b before each op (see run_ops); M0 offsets move v5 -> v6 etc.
    cases = [("v_swap_b32 v5, v6\nv_mov_b32 v4, v5", "b"), ("v_swap_b32 v5, v6\nv_mov_b32 v4, v6", "a"),
             ("s_mov_b32 m0, 1\nv_movrels_b32 v4, v5", "b"),
             ("s_mov_b32 m0, 1\nv_movreld_b32 v3, v5", "a"),
             ("s_mov_b32 m0, 2\nv_movreld_b32 v2, 0x1234", 0x1234),
             ("s_mov_b32 m0, 1\nv_movrelsd_b32 v3, v4", "a"),
             ("s_mov_b32 m0, 0x10001\nv_movrelsd_2_b32 v3, v4", "a"),
             ("s_mov_b32 m0, 0x20000\nv_movrelsd_2_b32 v2, v5", "a"),
             ("s_mov_b32 m0, 0x10001\nv_swaprel_b32 v4, v5\nv_mov_b32 v4, v6", "a")]
    ops = [c for c, _ in cases]
    got = run_ops(tb, ops, a, b, execs, lanes)
    act = exec_bits(execs, lanes)
    for i, (_, want_src) in enumerate(cases):
        for wv in range(waves):
            sl = slice(wv * lanes, (wv + 1) * lanes)
            if isinstance(want_src, int):
                want = np.where(act[wv], want_src, b[sl])
            else:
                want = np.where(act[wv], a[sl] if want_src == "a" else b[sl], b[sl])
            assert np.array_equal(got[i, sl], want), (ops[i], wv)


# ---------------------------------------------------------------------------------------------- LLVM IR kernels

LANE_IR = """
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
declare i32 @llvm.amdgcn.readlane.i32(i32, i32)
declare i32 @llvm.amdgcn.writelane.i32(i32, i32, i32)
declare i32 @llvm.amdgcn.ballot.i32(i1)
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
declare i32 @llvm.amdgcn.mov.dpp.i32(i32, i32, i32, i32, i1)
declare i32 @llvm.amdgcn.permlane16(i32, i32, i32, i32, i1, i1)
declare i32 @llvm.amdgcn.permlanex16(i32, i32, i32, i32, i1, i1)

define amdgpu_kernel void @lanes(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %sel) #0 {
  %l = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %l
  %x = load i32, ptr addrspace(1) %p
  %first = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %x)
  %r5 = call i32 @llvm.amdgcn.readlane.i32(i32 %x, i32 %sel)
  %wl = call i32 @llvm.amdgcn.writelane.i32(i32 %first, i32 7, i32 %x)
  %odd = icmp ugt i32 %x, 1000
  %bal = call i32 @llvm.amdgcn.ballot.i32(i1 %odd)
  %shr = call i32 @llvm.amdgcn.update.dpp.i32(i32 -1, i32 %x, i32 273, i32 15, i32 15, i1 0)
  %qp = call i32 @llvm.amdgcn.mov.dpp.i32(i32 %x, i32 27, i32 15, i32 15, i1 1)
  %pl = call i32 @llvm.amdgcn.permlane16(i32 0, i32 %x, i32 324508639, i32 38177486, i1 0, i1 0)
  %px = call i32 @llvm.amdgcn.permlanex16(i32 0, i32 %x, i32 324508639, i32 38177486, i1 0, i1 0)
  %v = insertelement <8 x i32> undef, i32 %first, i32 0
  %v1 = insertelement <8 x i32> %v, i32 %r5, i32 1
  %v2 = insertelement <8 x i32> %v1, i32 %wl, i32 2
  %v3 = insertelement <8 x i32> %v2, i32 %bal, i32 3
  %v4 = insertelement <8 x i32> %v3, i32 %shr, i32 4
  %v5 = insertelement <8 x i32> %v4, i32 %qp, i32 5
  %v6 = insertelement <8 x i32> %v5, i32 %pl, i32 6
  %v7 = insertelement <8 x i32> %v6, i32 %px, i32 7
  %q = getelementptr <8 x i32>, ptr addrspace(1) %out, i32 %l
  store <8 x i32> %v7, ptr addrspace(1) %q
  ret void
}
attributes #0 = { "target-features"="+wavefrontsize32" }
"""


def test_llvm_lane_intrinsics(tb):
    k = tb.load(compile_ir(LANE_IR))["lanes"]
    rng = np.random.default_rng(8)
    x = rng.integers(0, 2000, 32).astype(U32)
    out = tb.alloc(32 * 32)
    tb.launch(k, [tb.upload(x), out, 5], (1,), (32,))
    got = tb.download(out, U32, 256).reshape(32, 8)
    lane = np.arange(32)
    assert (got[:, 0] == x[0]).all() and (got[:, 1] == x[5]).all()
    assert np.array_equal(got[:, 2], np.where(lane == 7, x[0], x))
    assert (got[:, 3] == int(((x > 1000).astype(np.uint64) << lane.astype(np.uint64)).sum())).all()
    r = lane % 16
    assert np.array_equal(got[:, 4], np.where(r >= 1, x[lane - 1], 0xFFFFFFFF))  # row_shr:1, old = -1
    assert np.array_equal(got[:, 5], x[lane // 4 * 4 + 3 - lane % 4])  # quad_perm [3,2,1,0]
    sel = 0x02468ACE13579BDF  # permlane selects: src2:src1
    nib = np.array([(sel >> (4 * int(i))) & 15 for i in r])
    assert np.array_equal(got[:, 6], x[lane // 16 * 16 + nib])
    assert np.array_equal(got[:, 7], x[(lane // 16 ^ 1) * 16 + nib])
