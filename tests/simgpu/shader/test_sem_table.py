"""A table of small one-wave programs, each with the register values the RDNA3 ISA reference's pseudo-code
gives: the scalar forms the family suites do not reach (wave64 saveexec/wrexec, 64-bit logic and compares,
SOPK compares, bit tests, M0-relative moves, PC instructions, branches, SOPP controls), s_buffer_load,
image atomics, DS exchanges and a few VALU controls. Row = (program, expected); expected names s40-s47,
scc, vcc, exec (lo dwords) and v40 (lane 0); a row may expect a HardwareFault kind instead.
"""

from __future__ import annotations

import numpy as np
import pytest

from simgpu.fault import HardwareFault
from simgpu.testbed import Testbed
from tests.simgpu.shader.test_sem_ds import rd, ref_atomic, wr
from tests.simgpu.shader.test_sem_ds import run as ds_run
from tests.simgpu.shader.test_sem_mimg import TYPES, asm_run, per_lane, tsharp, upload_image

M32 = 0xFFFFFFFF
A, B = 0x0F0F00FF, 0x33335555  # operands in s30, s31 (and s[30:31], s[32:33] = B, A for 64-bit ones)
SETUP = f"s_mov_b32 s30, {A:#x}\ns_mov_b32 s31, {B:#x}\ns_mov_b32 s32, {B:#x}\ns_mov_b32 s33, {A:#x}\n"
EPILOGUE = """
    s_cselect_b32 s48, 1, 0
    s_mov_b32 s49, vcc_lo
    s_mov_b32 s50, exec_lo
    s_mov_b32 exec_lo, -1
    v_mov_b32 v1, 0
    s_load_b64 s[2:3], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
"""
NAMES = [f"s{i}" for i in range(40, 48)] + ["scc", "vcc", "exec", "v40"]
STORE = "".join(f"v_mov_b32 v2, {r}\nglobal_store_b32 v1, v2, s[2:3] offset:{4 * k}\n"
                for k, r in enumerate([f"s{i}" for i in range(40, 51)] + ["v40"]))
EXEC64 = 0xFFFFFFFF  # a wave32's EXEC_LO (EXEC_HI reads 0)


def _u64(x: int) -> tuple[int, int]:
    return x & M32, x >> 32


AB64 = B << 32 | A  # s[30:31] as a 64-bit value (s30 = A low, s31 = B high)
BA64 = A << 32 | B  # s[32:33] (s32 = B low, s33 = A high)


def _saveexec(op: str, f) -> tuple[str, dict]:
    # S_<OP>_SAVEEXEC_B64: D = EXEC; EXEC = f(S0, EXEC); SCC = EXEC != 0 (EXEC_HI of a wave32 is 0)
    new = f(AB64, EXEC64) & (2 ** 64 - 1)
    return (f"{SETUP}s_{op}_saveexec_b64 s[40:41], s[30:31]\ns_mov_b64 s[42:43], exec",
            {"s40": EXEC64 & M32, "s41": 0, "s42": new & M32, "s43": new >> 32, "scc": int(new != 0)})


_N = 2 ** 64 - 1
_CMP = {"eq": lambda x, k: x == k, "lg": lambda x, k: x != k, "gt": lambda x, k: x > k, "ge": lambda x, k: x >= k,
        "le": lambda x, k: x <= k}


def _cmpk(op: str, t: str, x: int, k: int) -> bool:
    """S_CMPK_<OP>_I32/U32: S0 against the 16-bit immediate, sign-extended for _i32, zero-extended for _u32."""
    if t == "i32":
        x = x - (1 << 32) if x >> 31 else x
        k = k - (1 << 16) if k >> 15 else k
    return _CMP[op](x, k)


ROWS = {
    **{f"saveexec_{op}": _saveexec(op, f) for op, f in [
        ("and", lambda s, e: s & e), ("or", lambda s, e: s | e), ("xor", lambda s, e: s ^ e),
        ("nand", lambda s, e: ~(s & e) & _N), ("nor", lambda s, e: ~(s | e) & _N),
        ("xnor", lambda s, e: ~(s ^ e) & _N), ("and_not0", lambda s, e: ~s & e),
        ("and_not1", lambda s, e: s & ~e & _N), ("or_not0", lambda s, e: (~s | e) & _N),
        ("or_not1", lambda s, e: (s | ~e) & _N)]},
    # wave32 saveexec forms the family suite does not run
    "nand_saveexec_b32": (f"{SETUP}s_nand_saveexec_b32 s40, s30\ns_mov_b32 s41, exec_lo",
                          {"s40": M32, "s41": ~(A & M32) & M32}),
    "or_not0_saveexec_b32": (f"{SETUP}s_or_not0_saveexec_b32 s40, s30\ns_mov_b32 s41, exec_lo",
                             {"s40": M32, "s41": M32}),
    "xnor_saveexec_b32": (f"{SETUP}s_xnor_saveexec_b32 s40, s30\ns_mov_b32 s41, exec_lo",
                          {"s40": M32, "s41": ~(A ^ M32) & M32}),
    # S_AND_NOT{0,1}_WREXEC: EXEC = D = ~S0 & EXEC / S0 & ~EXEC; SCC = EXEC != 0
    "and_not0_wrexec_b32": (f"{SETUP}s_and_not0_wrexec_b32 s40, s30", {"s40": ~A & M32, "exec": ~A & M32, "scc": 1}),
    "and_not1_wrexec_b32": (f"{SETUP}s_and_not1_wrexec_b32 s40, s30", {"s40": 0, "exec": 0, "scc": 0}),
    "and_not0_wrexec_b64": (f"{SETUP}s_and_not0_wrexec_b64 s[40:41], s[30:31]",
                            {"s40": ~A & M32, "s41": 0, "exec": ~A & M32, "scc": 1}),
    "and_not1_wrexec_b64": (f"{SETUP}s_and_not1_wrexec_b64 s[40:41], s[30:31]",
                            {"s40": 0, "s41": B, "exec": 0, "scc": 1}),
    # 64-bit logic, bit counts and tests, conditional moves, compares
    "nor_b64": (f"{SETUP}s_nor_b64 s[40:41], s[30:31], s[32:33]",
                {"s40": ~(A | B) & M32, "s41": ~(B | A) & M32, "scc": 1}),
    "xnor_b64": (f"{SETUP}s_xnor_b64 s[40:41], s[30:31], s[32:33]", {"s40": ~(A ^ B) & M32, "s41": ~(B ^ A) & M32,
                                                                    "scc": 1}),
    "or_not1_b64": (f"{SETUP}s_or_not1_b64 s[40:41], s[30:31], s[32:33]",
                    {"s40": (A | ~B) & M32, "s41": (B | ~A) & M32, "scc": 1}),
    "bcnt0_i32_b64": (f"{SETUP}s_bcnt0_i32_b64 s40, s[30:31]", {"s40": 64 - bin(AB64).count("1"), "scc": 1}),
    "bitcmp0_b32": (f"{SETUP}s_bitcmp0_b32 s30, 8", {"scc": 1 - (A >> 8 & 1)}),
    "bitcmp0_b64": (f"{SETUP}s_bitcmp0_b64 s[30:31], 40", {"scc": 1 - (AB64 >> 40 & 1)}),
    "bitset0_b64": (f"{SETUP}s_mov_b64 s[40:41], -1\ns_bitset0_b64 s[40:41], 37", {"s40": M32, "s41": M32 ^ 32}),
    "cmov_b64": (f"{SETUP}s_mov_b64 s[40:41], 0\ns_cmp_eq_u32 0, 0\ns_cmov_b64 s[40:41], s[30:31]\n"
                 "s_mov_b64 s[42:43], 0\ns_cmp_eq_u32 0, 1\ns_cmov_b64 s[42:43], s[30:31]",
                 {"s40": A, "s41": B, "s42": 0, "s43": 0}),
    "cmp_lg_u64": (f"{SETUP}s_cmp_lg_u64 s[30:31], s[32:33]", {"scc": int(AB64 != BA64)}),
    **{f"cmpk_{op}_{t}": (f"s_mov_b32 s30, {x:#x}\ns_cmpk_{op}_{t} s30, {k:#x}", {"scc": int(_cmpk(op, t, x, k))})
       for op in ("eq", "lg", "gt", "ge", "le") for t, x, k in [("u32", 0x8000, 0x7FFF), ("i32", 0xFFFFFFFE, 0xFFFE)]},
    # M0-relative moves: S_MOVRELS D = SGPR[S0 + M0], S_MOVRELD SGPR[D + M0] = S0, S_MOVRELSD_2 both
    "movrels_b32": (f"{SETUP}s_mov_b32 m0, 1\ns_movrels_b32 s40, s30", {"s40": B}),
    "movrels_b64": (f"{SETUP}s_mov_b32 m0, 2\ns_movrels_b64 s[40:41], s[30:31]", {"s40": B, "s41": A}),
    "movreld_b32": (f"{SETUP}s_mov_b32 s41, 0\ns_mov_b32 m0, 1\ns_movreld_b32 s40, s30", {"s41": A}),
    "movreld_b64": (f"{SETUP}s_mov_b32 m0, 2\ns_movreld_b64 s[40:41], s[30:31]", {"s42": A, "s43": B}),
    "movrelsd_2_b32": (f"{SETUP}s_mov_b32 s42, 0\ns_mov_b32 m0, 0x20001\ns_movrelsd_2_b32 s40, s30", {"s42": B}),
    # PC: s_getpc_b64 gives the next instruction's address; setpc/swappc/call branch to an address
    "getpc_b64": ("s_getpc_b64 s[40:41]\ns_getpc_b64 s[42:43]\ns_sub_u32 s44, s42, s40", {"s44": 4}),
    "setpc_b64": ("s_getpc_b64 s[30:31]\ns_add_u32 s30, s30, 20\ns_addc_u32 s31, s31, 0\ns_mov_b32 s40, 1\n"
                  "s_setpc_b64 s[30:31]\ns_mov_b32 s40, 2\ns_mov_b32 s41, 3", {"s40": 1, "s41": 3}),
    "swappc_b64": ("s_getpc_b64 s[30:31]\ns_add_u32 s30, s30, 20\ns_addc_u32 s31, s31, 0\ns_mov_b32 s40, 1\n"
                   "s_swappc_b64 s[34:35], s[30:31]\ns_mov_b32 s40, 2\ns_mov_b32 s41, 3\n"
                   "s_sub_u32 s42, s30, s34", {"s40": 1, "s41": 3, "s42": 4}),
    "call_b64": ("s_mov_b32 s40, 1\ns_call_b64 s[34:35], target\ns_mov_b32 s40, 2\ntarget:\ns_mov_b32 s41, 3\n"
                 "s_getpc_b64 s[36:37]\ns_sub_u32 s42, s36, s34", {"s40": 1, "s41": 3, "s42": 12}),
    "rfe_b64": ("s_getpc_b64 s[30:31]\ns_add_u32 s30, s30, 20\ns_addc_u32 s31, s31, 0\ns_mov_b32 s40, 1\n"
                "s_rfe_b64 s[30:31]\ns_mov_b32 s40, 2\ns_mov_b32 s41, 3", {"s40": 1, "s41": 3}),
    # branches on SCC and VCC; the debugger branches are not taken (no debugger is attached)
    "cbranch_scc0": ("s_mov_b32 s40, 0\ns_cmp_eq_u32 0, 1\ns_cbranch_scc0 skip\ns_mov_b32 s40, 1\nskip:", {"s40": 0}),
    "cbranch_vccz": ("s_mov_b32 s40, 0\ns_mov_b32 vcc_lo, 0\ns_mov_b32 vcc_hi, 0\ns_cbranch_vccz skip\n"
                     "s_mov_b32 s40, 1\nskip:", {"s40": 0}),
    "cbranch_vccnz": ("s_mov_b32 s40, 0\ns_mov_b32 vcc_lo, 4\ns_cbranch_vccnz skip\ns_mov_b32 s40, 1\nskip:",
                      {"s40": 0}),
    **{f"cbranch_{d}": (f"s_mov_b32 s40, 0\ns_cbranch_{d} skip\ns_mov_b32 s40, 1\nskip:", {"s40": 1})
       for d in ("cdbgsys", "cdbguser", "cdbgsys_or_user", "cdbgsys_and_user")},
    # program control with no architectural effect on these registers
    "sopp_controls": ("s_mov_b32 s40, 7\ns_nop 3\ns_sleep 2\ns_setprio 1\ns_setkill 0\ns_sethalt 0\ns_wakeup\n"
                      "s_ttracedata\ns_ttracedata_imm 5\ns_wait_idle\ns_wait_event 0\ns_icache_inv\ns_dcache_inv\n"
                      "s_gl1_inv\ns_incperflevel 1\ns_decperflevel 1\ns_waitcnt_vmcnt null, 0\n"
                      "s_waitcnt_expcnt null, 0\ns_waitcnt_lgkmcnt null, 0\ns_version 0x2\n"
                      "s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)\n"
                      "s_atc_probe 0, s[0:1], 0x0\ns_atc_probe_buffer 0, s[0:3], 0x0\n"
                      "v_nop\nv_pipeflush", {"s40": 7}),
    # S_ROUND_MODE sets MODE[3:0] (the round modes): read back through s_getreg
    "round_mode": ("s_round_mode 0x9\ns_getreg_b32 s40, hwreg(HW_REG_MODE, 0, 4)", {"s40": 9}),
    # V_RCP_IFLAG_F32: 1.0 / S0 (the integer-division flag only affects exceptions)
    "rcp_iflag_f32": ("v_mov_b32 v40, 4.0\nv_rcp_iflag_f32 v40, v40", {"v40": 0x3E800000}),
    # V_DOT2_BF16_BF16: S0.lo*S1.lo + S0.hi*S1.hi + S2.bf16 = 1.5*2 + 2*3 + 1 = 10.0 (bf16 0x4120)
    "dot2_bf16_bf16": ("v_mov_b32 v41, 0x40003fc0\nv_mov_b32 v42, 0x40404000\nv_mov_b32 v43, 0x3f80\n"
                       "v_mov_b32 v40, 0\nv_dot2_bf16_bf16 v40, v41, v42, v43", {"v40": 0x4120}),
}
FAULTS = {  # program -> the HardwareFault kind
    "trap": ("s_trap 2", "trap"),
    "illegal": ("v_illegal", "illegal_instruction"),
    "code_end": ("s_code_end", "illegal_instruction"),
}


@pytest.fixture(scope="module")
def tb():
    return Testbed(vram_size=1 << 26)


def run_program(tb, text: str) -> dict[str, int]:
    k = tb.load_asm(text + EPILOGUE + STORE + "s_endpgm", args=1)
    out = tb.alloc(4 * len(NAMES))
    tb.launch(k, [out], (1,), (32,))
    return dict(zip(NAMES, (int(x) for x in tb.download(out, np.uint32, len(NAMES))), strict=True))


@pytest.mark.parametrize("name", sorted(ROWS))
def test_program_table(tb, name):
    text, want = ROWS[name]
    got = run_program(tb, text)
    assert {k: got[k] for k in want} == want, name


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_faulting_instructions(tb, name):
    text, kind = FAULTS[name]
    with pytest.raises(HardwareFault) as e:
        run_program(tb, text)
    assert e.value.kind == kind


@pytest.mark.parametrize("end", ["s_sendmsghalt sendmsg(MSG_DEALLOC_VGPRS)", "s_endpgm_saved"])
def test_wave_ending_instructions(tb, end):
    # S_SENDMSGHALT (send, then halt) and S_ENDPGM_SAVED (end of a context-saved program) end the wave
    got = run_program(tb, f"s_mov_b32 s40, 3\n{end}\ns_mov_b32 s40, 4")
    assert got["s40"] == 0  # the epilogue's store never ran: the output keeps its zeroed allocation


def test_sendmsg_rtn_realtime(tb):
    # S_SENDMSG_RTN_B64 MSG_RTN_GET_REALTIME returns the 64-bit real-time counter: here the virtual clock's
    # 100 MHz timestamp (simgpu/clock.py: one core cycle per wave-instruction, 25 cycles a tick). Started
    # past 2**32 ticks, it advances over 100 instructions; the _B32 form returns its low dword
    clock = tb.engine.clock
    clock.advance(((1 << 32) + 5) * (clock.core_mhz // clock.timestamp_mhz))
    text = ("s_sendmsg_rtn_b64 s[40:41], sendmsg(MSG_RTN_GET_REALTIME)\ns_waitcnt lgkmcnt(0)\n"
            + "s_nop 0\n" * 100 + "s_sendmsg_rtn_b64 s[42:43], sendmsg(MSG_RTN_GET_REALTIME)\n"
            "s_sendmsg_rtn_b32 s44, sendmsg(MSG_RTN_GET_REALTIME)\ns_waitcnt lgkmcnt(0)")
    got = run_program(tb, text)
    t0, t1 = got["s40"] | got["s41"] << 32, got["s42"] | got["s43"] << 32
    assert (1 << 32) + 5 <= t0 < t1 <= clock.timestamp() and got["s41"] == 1
    assert t1 & M32 <= got["s44"] <= (t1 & M32) + 1


def test_s_buffer_load(tb):
    # S_BUFFER_LOAD_B32..B512: dwords at base + offset from a V#; dwords at or past num_records read 0
    data = np.arange(100, 116, dtype=np.uint32)
    va = tb.upload(data)
    desc = [va & M32, (va >> 32) & 0xFFFF, 40, 0]  # num_records 40 bytes: dwords 0-9
    for n, dw in (("b32", 1), ("b64", 2), ("b128", 4), ("b256", 8), ("b512", 16)):
        regs = "s40" if dw == 1 else f"s[40:{39 + dw}]"
        text = (f"s_mov_b32 s20, {desc[0]:#x}\ns_mov_b32 s21, {desc[1]:#x}\ns_mov_b32 s22, {desc[2]}\n"
                f"s_mov_b32 s23, 0\ns_buffer_load_{n} {regs}, s[20:23], 0x8\ns_waitcnt lgkmcnt(0)")
        got = run_program(tb, text)
        want = [int(data[2 + i]) if 2 + i < 10 else 0 for i in range(min(dw, 8))]
        assert [got[f"s{40 + i}"] for i in range(min(dw, 8))] == want, n


IMAGE_ATOMICS = ["sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "inc", "dec", "swap", "cmpswap"]


@pytest.mark.parametrize("op", IMAGE_ATOMICS)
def test_image_atomics(tb, op):
    # IMAGE_ATOMIC_<OP> on a 32_UINT 8x8 image, one texel per lane: the texel becomes op(old, data), the
    # VGPR (glc) the old value (the RDNA3 ISA's atomic definitions, as for buffer atomics).
    lanes = 64
    rng = np.random.default_rng(len(op))
    old = rng.integers(0, 1 << 32, (8, 8), dtype=np.uint64).astype(np.uint32)
    old[0, :4] = [0, 5, 0xFFFFFFFF, 0x80000000]
    img = old.view(np.uint8).reshape(1, 8, 8, 4)
    base = upload_image(tb, img)
    lane = np.arange(lanes)
    c = np.stack([lane % 8, lane // 8, np.zeros(lanes, np.int64)], axis=1)
    src = rng.integers(0, 1 << 32, lanes, dtype=np.uint64).astype(np.uint32)
    src[:4] = [3, 5, 0x7FFFFFFF, 9]
    cmp = np.where(lane % 2 == 0, old.reshape(-1), src ^ 1).astype(np.uint32)  # half the lanes match
    desc = tsharp(base, 20, 8, 8, TYPES["2d"], pitch=8)
    if op == "cmpswap":  # DATA = {src, cmp}; the slice coordinate (v4) is unused by a 2D image: it carries cmp
        text = ("v_mov_b32 v10, v5\nv_mov_b32 v11, v4\n    image_atomic_cmpswap v[10:11], v[2:3], s[8:15] "
                "dmask:0x3 dim:SQ_RSRC_IMG_2D unorm glc")
        per = per_lane(c, src)
        per[:, 2] = cmp
    else:
        text = (f"v_mov_b32 v10, v5\n    image_atomic_{op} v10, v[2:3], s[8:15] dmask:0x1 dim:SQ_RSRC_IMG_2D "
                "unorm glc")
        per = per_lane(c, src)
    got = asm_run(tb, text, desc, per)
    mem = np.frombuffer(tb.read(base, img.nbytes), np.uint32).reshape(8, 8)
    key = {"smin": "min_i", "smax": "max_i", "umin": "min_u", "umax": "max_u", "swap": "storexchg",
           "cmpswap": "cmpstore_b"}.get(op, op)
    for i in range(lanes):
        o = int(old.reshape(-1)[i])
        want = ref_atomic(key, o, int(src[i]), int(cmp[i]), 4)
        assert int(mem.reshape(-1)[i]) == want and int(got[i, 0]) == o, (op, i)


@pytest.mark.parametrize("mn", ["ds_storexchg_2addr_rtn_b64", "ds_storexchg_2addr_stride64_rtn_b32",
                                "ds_storexchg_2addr_stride64_rtn_b64"])
def test_ds_storexchg_2addr_forms(tb, mn):
    # DS_STOREXCHG_2ADDR(_STRIDE64)_RTN_B32/B64: exchange at ADDR + OFFSET0 * size and ADDR + OFFSET1 * size
    # (size 4/8, times 64 for the stride64 forms); returns both old values. LDS is 256 bytes here: addresses
    # past it read 0 and do not write.
    lanes, size = 64, 8 if mn.endswith("b64") else 4
    unit = size * (64 if "stride64" in mn else 1)
    init = np.arange(lanes, dtype=np.uint32) * 7 + 100
    addr = np.arange(lanes) % 4 * 8
    d0 = np.arange(lanes, dtype=np.uint64) * 0x100000001 + 1000
    d1 = np.arange(lanes, dtype=np.uint64) * 0x100000001 + 2000
    o0, o1 = (1, 3) if "stride64" not in mn else (0, 1)
    vd = "v[5:8]" if size == 8 else "v[5:6]"
    vs = ("v[10:11]", "v[12:13]") if size == 8 else ("v10", "v12")
    res, lds = ds_run(tb, f"{mn} {vd}, v3, {vs[0]}, {vs[1]} offset0:{o0} offset1:{o1}\n", init, addr, d0, d1)
    mem = bytearray(init.tobytes())
    olds = []
    for lane in range(lanes):  # the first exchange of every lane, then the second (the engine's order)
        a0 = int(addr[lane]) + o0 * unit
        olds.append(rd(mem, a0, size))
        wr(mem, a0, size, int(d0[lane]))
    for lane in range(lanes):
        a1 = int(addr[lane]) + o1 * unit
        old1 = rd(mem, a1, size)
        wr(mem, a1, size, int(d1[lane]))
        got = [int(x) for x in res[lane]]
        if size == 8:
            assert (got[0] | got[1] << 32, got[2] | got[3] << 32) == (olds[lane], old1), (mn, lane)
        else:
            assert (got[0], got[1]) == (olds[lane], old1), (mn, lane)
    assert lds == mem
