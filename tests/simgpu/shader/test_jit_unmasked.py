"""Unmasked block versions (simgpu/shader/jit/unmasked.py) agree with the interpreter bit for bit: blocks that
start with EXEC all ones (the unmasked body), with some lanes off (the masked one), and with EXEC changing
inside the block (the unmasked body reads EXEC again from the first instruction that may write it), in wave32
and wave64, with the JIT compiling for this host and for an AVX2-only CPU (SIMGPU_JIT_CPU=haswell: no mask
registers, masked loads and stores split by LLVM). The oracle is the interpreter (tests/support/tiers.py);
LLVM's own assembly shows the AVX2 profile has no AVX-512 in it. The random blocks compile with LLVM's quickest
code generation (tests/support/tiers.fuzz_codegen: the same IR passes); the loop and the fused kernel at the
default levels, for both profiles.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simgpu.isa import assemble
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from simgpu.shader.jit import build, lower, translate
from simgpu.shader.jit import compile as jc
from simgpu.shader.jit import unmasked as um
from tests.simgpu.shader.test_jit_ops import EXAMPLES, NVGPR, _kernel, _random_data, native_instruction
from tests.support import tiers

PROFILES = {"host": "", "avx2": "haswell"}


def _avx2_here() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(line for line in f if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return {"avx2", "fma", "bmi2", "f16c"} <= set(flags)


@pytest.fixture(params=list(PROFILES))
def profile(request, monkeypatch):
    """The JIT compiling for this host, or for an AVX2-only CPU (skipped where this CPU cannot run that). The disk
    cache stays on: its keys hold the CPU compiled for (compile.host_key), and a hit is the object LLVM made for
    that CPU, byte for byte (an AVX2 wave64 kernel is seconds of LLVM, every run, with the cache off)."""
    if request.param == "avx2" and not _avx2_here():
        pytest.skip("this CPU has no AVX2/FMA/BMI2/F16C: it cannot run haswell code")
    monkeypatch.setenv("SIMGPU_JIT_CPU", PROFILES[request.param])
    return request.param


@pytest.fixture
def modules(monkeypatch):
    """The LLVM module texts compiled while the test runs."""
    seen: list[str] = []
    real = jc.object_code

    def spy(ir, *rest):
        seen.append(ir)
        return real(ir, *rest)
    monkeypatch.setattr(jc, "object_code", spy)
    return seen


def _exec(wave32: bool, value: str) -> str:
    return f"s_mov_b32 exec_lo, {value}" if wave32 else f"s_mov_b64 exec, {value}"


# How the block under test starts: EXEC all ones, some lanes off, or all ones and then changed inside it.
STARTS = ("full", "partial", "changing")


def _block(rng, classify, wave32: bool, start: str) -> bytes:
    """EXEC as `start` says, a branch to the next instruction (which so starts a block of its own), then random
    native instructions; for "changing", s_and_saveexec with random lanes halfway through them."""
    head = {"full": _exec(wave32, "-1"), "partial": "s_nop 0", "changing": _exec(wave32, "-1")}[start]
    code = assemble(f"{head}\ns_branch 0")  # (the prologue left about three quarters of the lanes on)
    insns = [native_instruction(rng, classify) for _ in range(8)]
    if start == "changing":
        change = "s_and_saveexec_b32 s102, s98" if wave32 else "s_and_saveexec_b64 s[102:103], s[98:99]"
        insns.insert(4, assemble(change))
    return code + b"".join(insns)


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("wave32", [True, False])
@settings(max_examples=max(EXAMPLES // 120, 1), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**63 - 1))
def test_random_instructions_agree_in_every_exec_state(profile, wave32, start, seed):
    rng = np.random.default_rng(seed)
    lw = lower.Lowering(32 if wave32 else 64, 0, NVGPR)
    body = _block(rng, translate.classifier(lw, NVGPR, lambda inst: True), wave32, start)
    data = _random_data(rng)
    results, pair = [], tiers.pair()
    with tiers.fuzz_codegen():  # (a random block, one module a case, run once: as test_jit_ops' random instructions)
        for tb in pair:
            tb.engine.watchdog = 10_000
            results.append(tiers.launch(tb, _kernel(tb, body, wave32, {}), [tb.upload(data)], (2,), (64,)))
    assert results[0] == results[1]
    tiers.assert_same(*pair)
    assert results[0] is not None or pair[1].engine.jit.stats.native_instructions > 0


# A loop whose odd iterations turn half the lanes off (v_cmpx: EXEC changes inside a block that starts with all
# lanes), run a block that starts with half of them (a masked load) and turn them on again; its loads read by
# rows of 16 lanes (a 2D tile) and scattered (a gather), with VALU on the results.
LOOP = """
    s_load_b128 s[4:7], s[0:1], 0x0
    s_waitcnt lgkmcnt(0)
    v_and_b32 v1, 15, v0
    v_lshrrev_b32 v2, 4, v0
    v_mov_b32 v10, 0
    s_mov_b32 s8, 0
{save}
loop:
    v_mul_u32_u24 v3, 64, v2
    v_add_nc_u32 v3, s8, v3
    v_lshlrev_b32 v3, 2, v3
    global_load_b32 v4, v3, s[4:5]
    v_add_nc_u32 v5, v1, s8
    v_lshlrev_b32 v5, 2, v5
    global_load_b32 v6, v5, s[4:5]
    v_mul_u32_u24 v7, 13, v0
    v_add_nc_u32 v7, v7, s8
    v_and_b32 v7, 0x3fc, v7
    global_load_b32 v8, v7, s[4:5]
    v_fmac_f32 v10, v4, v6
    v_xad_u32 v10, v10, v8, v0
    s_and_b32 s9, s8, 1
    s_cmp_eq_u32 s9, 0
    s_cbranch_scc1 skip
    v_cmpx_gt_u32 8, v1
    s_cbranch_execz back
    v_add_nc_u32 v10, 7, v10
    global_load_b32 v12, v5, s[4:5]
    v_add_nc_u32 v10, v10, v12
back:
{restore}
skip:
    s_add_u32 s8, s8, 1
    s_cmp_lg_u32 s8, 24
    s_cbranch_scc1 loop
    v_lshlrev_b32 v11, 2, v0
    global_store_b32 v11, v10, s[6:7]
    s_endpgm
"""


@pytest.mark.parametrize("wave32", [True, False])
def test_a_loop_in_and_out_of_full_exec_agrees(profile, modules, wave32):
    source = _loop(wave32)
    data = np.random.default_rng(3).random(1024, np.float32) * 4
    results, pair = [], tiers.pair()
    for tb in pair:
        k = tb.load_asm(source, args=2, vgprs=16, wave32=wave32)
        results.append(tiers.launch(tb, k, [tb.upload(data), tb.alloc(4 * 512)], (4,), (128,)))
    assert results == [None, None]
    tiers.assert_same(*pair)
    stats = pair[1].engine.jit.stats
    assert stats.native_instructions > 0 and stats.callbacks == 0
    assert any(_copies(ir) for ir in modules)  # (the kernel has unmasked bodies to run)


def _loop(wave32: bool) -> str:
    if wave32:
        return LOOP.format(save="    s_mov_b32 s10, exec_lo", restore="    s_mov_b32 exec_lo, s10")
    return LOOP.format(save="    s_mov_b64 s[10:11], exec", restore="    s_mov_b64 exec, s[10:11]")


def _copies(ir: str) -> list[str]:
    """The labels of unmasked block bodies in a module's text."""
    return [line[:-1] for line in ir.splitlines() if line.endswith("_u:") and line.startswith("m")]


def test_a_fused_kernel_with_a_partial_last_wave_agrees(profile, modules):
    """The clang saxpy shape (no loops: fused batches) over a grid that ends in a partial wave: every wave but
    the last runs the unmasked bodies, the last the masked ones."""
    source = """
    s_load_b128 s[4:7], s[0:1], 0x0
    s_load_b32 s8, s[0:1], 0x10
    s_waitcnt lgkmcnt(0)
    s_lshl_b32 s9, s2, 7
    v_add_nc_u32 v1, s9, v0
    v_cmp_gt_u32 vcc_lo, s8, v1
    s_and_saveexec_b32 s10, vcc_lo
    s_cbranch_execz done
    v_lshlrev_b32 v1, 2, v1
    global_load_b32 v2, v1, s[4:5]
    global_load_b32 v3, v1, s[6:7]
    s_waitcnt vmcnt(0)
    v_fmac_f32 v3, 0x40200000, v2
    global_store_b32 v1, v3, s[6:7]
done:
    s_endpgm
"""
    rng = np.random.default_rng(5)
    n = 1000  # 8 workgroups of 128 items: the last wave has 8 of its 32 lanes
    x, y = rng.random(1024, np.float32), rng.random(1024, np.float32)
    results, pair = [], tiers.pair()
    for tb in pair:
        k = tb.load_asm(source, args=3, vgprs=8, wave32=True)
        results.append(tiers.launch(tb, k, [tb.upload(x), tb.upload(y), n], (8,), (128,)))
    assert results == [None, None]
    tiers.assert_same(*pair)
    assert _copies(modules[-1]) and pair[1].engine.jit.stats.fused_batches > 0


def test_the_avx2_profile_compiles_without_avx512(monkeypatch):
    """SIMGPU_JIT_CPU=haswell: LLVM emits no AVX-512 (no zmm registers, no mask registers) for a kernel's
    module, and its code goes under another disk cache key than the host's."""
    monkeypatch.setenv("SIMGPU_JIT_CACHE", "off")
    monkeypatch.setenv("SIMGPU_JIT_CPU", "")  # (the host's, whatever the environment says)
    tb = tiers.testbed("jit")
    k = tb.load_asm(_loop(True), args=2, vgprs=16)
    modules_seen = []
    real = jc.object_code
    monkeypatch.setattr(jc, "object_code", lambda ir, *rest: (modules_seen.append(ir), real(ir, *rest))[1])
    build._COMPILED.clear()
    tb.launch(k, [tb.alloc(4096), tb.alloc(4096)], (1,), (32,))
    [ir] = modules_seen
    host_key = jc.host_key()
    monkeypatch.setenv("SIMGPU_JIT_CPU", "haswell")
    assert jc.target_cpu() == ("haswell", "")
    assert jc.host_key() != host_key
    text = jc.assembly(ir)
    assert "ymm" in text  # (vector code all the same)
    assert "zmm" not in text and "%k1" not in text


def test_the_copy_renames_its_own_names_and_reads_exec_again_after_a_write():
    """unmasked_copy on a small body: EXEC is the constant all ones before the first write only; names the body
    defines (values, labels) are renamed, the function's (register locals, other blocks) are not."""
    body = ["m4:", "  %t1 = load i32, ptr %S126", "  %t2 = add i32 %t1, 1", "  br label %x3", "x3:",
            "  store i32 %t2, ptr %S126", "  %t4 = load i32, ptr %S126", "  br i1 %fused, label %b8, label %x3"]
    copy, rename = um.unmasked_copy(body, 5, 32)
    assert copy.splitlines() == [
        "m4_u:", "  %t1_u = add i32 -1, 0", "  %t2_u = add i32 %t1_u, 1", "  br label %x3_u", "x3_u:",
        "  store i32 %t2_u, ptr %S126", "  %t4_u = load i32, ptr %S126", "  br i1 %fused, label %b8, label %x3_u"]
    assert rename == {"t1": "t1_u", "t2": "t2_u", "t4": "t4_u", "m4": "m4_u", "x3": "x3_u"}
    assert um.renamed("%t2", rename) == "%t2_u" and um.renamed("17", rename) == "17"
    assert um.reads_exec(body[:2], 32) and not um.reads_exec(body[2:4], 32)
    assert um.exec_slots(64) == (126, 127)


def test_a_region_reading_only_exec_hi_agrees():
    """In wave64 a block whose code reads only EXEC's high half (as a scalar source), in a region where nothing else
    touches EXEC, gets its unmasked version too: the entry test reads both halves, which must be the function's
    locals (found by the gfx1201 fuzz: `s_sub_co_u32 ttmp1, exec_hi, 50` between a DS and a callback)."""
    salu = "\n".join(f"s_add_u32 s{11 + k}, s{10 + k}, {k}" for k in range(8))  # (no short tail: native)
    code = assemble(f"s_sub_u32 s10, exec_hi, 50\n{salu}\ns_endpgm")
    kd = make_descriptor(8, kernarg_size=0, wave32=False)
    pair = tiers.pair()
    for tb in pair:
        k = tb.load(write_code_object([("k", code, kd, {".args": []})]))["k"]
        assert tiers.launch(tb, k, [], (2,), (40,)) is None  # (EXEC: all 64 lanes' bits, then 40 lanes')
    tiers.assert_same(*pair)
    assert pair[1].engine.jit.stats.native_instructions > 0
