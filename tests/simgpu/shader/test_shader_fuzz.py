"""Random instruction streams through the shader engine: whatever the bytes, a run ends normally or
with a HardwareFault naming a hardware condition (page fault, illegal instruction, watchdog, ...), never an
internal error (a simulator bug surfacing as an exception) and never a host crash; and the engine
runs a known kernel correctly afterwards.

Each example draws a seed; the kernel is six random instruction words that decode to implemented
instructions (any encoding, any operands: scalar and vector ALU, memory with random addresses,
branches), then s_endpgm, launched as one or two workgroups of 1-64 work-items in wave32 or wave64,
with 256 VGPRs or 64 (then VGPRs past the allocation fault as illegal instructions).
More examples: SIMGPU_FUZZ_EXAMPLES=2000 pytest tests/simgpu/shader/test_shader_fuzz.py
"""

import os
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simgpu.fault import HardwareFault
from simgpu.isa import DecodeError, assemble, decode
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from simgpu.shader import semantics
from simgpu.testbed import Testbed

EXAMPLES = int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "120"))
S_ENDPGM = bytes.fromhex("0000b0bf")


@pytest.fixture(scope="module")
def tb():
    tb = Testbed(vram_size=1 << 28)
    tb.engine.watchdog = 20_000
    return tb


def random_instruction(rng: np.random.Generator, arch: str = "gfx1100") -> bytes:
    """The bytes of one random `arch` instruction that decodes and has semantics."""
    while True:
        data = rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
        try:
            inst = decode(data, arch=arch)
        except DecodeError:
            continue
        if semantics.lookup(inst) is not None:
            return data[:inst.size]


def random_kernel(tb: Testbed, rng: np.random.Generator, wave32: bool, vgprs: int = 256):
    """Six random instructions of the testbed's architecture, then s_endpgm."""
    code = b"".join(random_instruction(rng, tb.arch) for _ in range(6)) + S_ENDPGM
    kd = make_descriptor(vgprs, kernarg_size=32, wave32=wave32)
    return tb.load(write_code_object([("k", code, kd, {".args": []})], target=tb.arch))["k"]


def known_kernel_works(tb: Testbed) -> None:
    k = tb.load_asm("""
        s_load_b64 s[4:5], s[0:1], 0x0
        v_lshlrev_b32 v1, 2, v0
        v_add_nc_u32 v2, 7, v0
        s_waitcnt lgkmcnt(0)
        global_store_b32 v1, v2, s[4:5]
        s_endpgm""", args=1, vgprs=8)
    out = tb.alloc(4 * 64)
    tb.launch(k, [out], (1,), (64,))
    assert np.array_equal(tb.download(out, np.uint32, 64), np.arange(64) + 7)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**63 - 1), wave32=st.booleans(), groups=st.integers(1, 2), items=st.integers(1, 64),
       vgprs=st.sampled_from([256, 256, 64]))
def test_random_instructions_fault_cleanly(tb, seed, wave32, groups, items, vgprs):
    """(With 64 VGPRs most streams name a VGPR past the allocation: an illegal_instruction fault.)"""
    rng = np.random.default_rng(seed)
    k = random_kernel(tb, rng, wave32, vgprs)
    try:
        tb.launch(k, [], (groups,), (items,))
    except HardwareFault as e:
        assert e.kind != "internal_error", str(e)
        assert e.pc is not None and e.wave is not None


# Primed streams: a prologue points every even SGPR pair and half the VGPR pairs at a mapped 64 KiB
# buffer (other VGPRs hold small per-lane offsets), M0 at LDS, with 64 KiB of LDS and 256 bytes of
# scratch per lane, so random memory instructions mostly reach real memory. Control flow is left out
# (a random jump lands in the prologue or past the end).
_NO_JUMPS = ("s_setpc", "s_swappc", "s_call", "s_branch", "s_cbranch", "s_endpgm", "s_sethalt", "s_trap",
             "v_illegal", "s_code_end", "s_sleep", "s_rfe")


@cache
def prologue(arch: str = "gfx1100") -> bytes:
    gfx11 = arch == "gfx1100"  # (gfx12 splits the waits and renames the carrying adds)
    add, addc = ("s_add_u32", "s_addc_u32") if gfx11 else ("s_add_co_u32", "s_add_co_ci_u32")
    lines = ["s_load_b64 s[104:105], s[0:1], 0x0", "s_waitcnt lgkmcnt(0)" if gfx11 else "s_wait_kmcnt 0x0"]
    for k in range(0, 104, 2):
        lines += [f"{add} s{k}, s104, {256 * k}", f"{addc} s{k + 1}, s105, 0"]
    lines += ["s_mov_b32 m0, 0x100", "v_lshlrev_b32 v255, 2, v0"]
    for k in range(0, 254, 2):
        if k % 4 == 0:
            lines += [f"v_add_co_u32 v{k}, vcc_lo, s104, v255", f"v_add_co_ci_u32_e64 v{k + 1}, null, s105, 0, vcc_lo"]
        else:
            lines += [f"v_add_nc_u32 v{k}, {64 * k}, v255", f"v_mov_b32 v{k + 1}, v255"]
    return assemble("\n".join(lines), arch=arch)


def primed_kernel(tb: Testbed, rng: np.random.Generator):
    """The prologue, then eight dwords of random instructions of the testbed's architecture (no control flow)."""
    body = b""
    while len(body) < 8 * 4:
        data = random_instruction(rng, tb.arch)
        if not decode(data, arch=tb.arch).mnemonic.startswith(_NO_JUMPS):
            body += data
    kd = make_descriptor(256, kernarg_size=8, group_segment_size=65536, private_segment_size=256, wave32=True)
    meta = {".args": [{".offset": 0, ".size": 8, ".value_kind": "by_value"}]}
    code = prologue(tb.arch) + body + S_ENDPGM
    return tb.load(write_code_object([("k", code, kd, meta)], target=tb.arch))["k"]


def run_primed(seed: int):
    """A primed stream from `seed` on a fresh testbed: (fault or None, the buffer, the code, counters).
    Fresh each time, because a random store may land anywhere mapped (code, earlier buffers), and a
    second run in the same testbed would then start from different memory."""
    tb = Testbed(vram_size=1 << 28)
    tb.engine.watchdog = 20_000
    rng = np.random.default_rng(seed)
    k = primed_kernel(tb, rng)
    data = rng.integers(0, 256, 1 << 16, dtype=np.uint8)
    buf = tb.upload(data)
    try:
        tb.launch(k, [buf], (2,), (64,))
        fault = None
    except HardwareFault as e:
        assert e.kind != "internal_error", str(e)
        fault = (e.kind, e.pc, e.wave, e.address)
    return fault, tb.read(buf, data.size), tb.read(k.code_address, 4096), tb.engine.counters.snapshot()


@settings(max_examples=max(EXAMPLES // 4, 10), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**63 - 1))
def test_primed_random_instructions_fault_cleanly_and_repeat_exactly(seed):
    """...and run twice from the same state they leave the same bytes and counters and end the same way."""
    assert run_primed(seed) == run_primed(seed)


def test_engine_is_usable_after_the_fuzz(tb):
    rng = np.random.default_rng(1)
    for _ in range(20):
        try:
            tb.launch(random_kernel(tb, rng, True), [], (1,), (32,))
        except HardwareFault:
            pass
    known_kernel_works(tb)


def test_a_vgpr_past_the_allocation_is_an_illegal_instruction(tb):
    k = tb.load_asm("v_mov_b32 v40, 1\ns_endpgm", args=0, vgprs=16)
    with pytest.raises(HardwareFault) as e:
        tb.launch(k, [], (1,), (32,))
    assert e.value.kind == "illegal_instruction" and "v40" in str(e.value) and "allocates" in str(e.value)


@pytest.mark.parametrize("text,want", [
    ("v_fmamk_f32 v1, s6, 0x40000000, v2", lambda x: np.float32(3) * 2 + x),
    ("v_fma_f32 v1, s6, s7, v2", lambda x: np.float32(3) * np.float32(0.5) + x),
    ("v_fmaak_f32 v1, s6, v2, 0x3f800000", lambda x: np.float32(3) * x + 1),
])
def test_fma_with_scalar_factors_and_a_vector_addend(tb, text, want):
    """fma whose product comes only from SGPRs/constants ([waves, 1]) and whose addend is a VGPR
    (found by fuzzing: the product could not take the addend in place)."""
    k = tb.load_asm(f"""
        s_load_b64 s[4:5], s[0:1], 0x0
        s_mov_b32 s6, 0x40400000
        s_mov_b32 s7, 0x3f000000
        v_cvt_f32_u32 v2, v0
        {text}
        v_lshlrev_b32 v3, 2, v0
        s_waitcnt lgkmcnt(0)
        global_store_b32 v3, v1, s[4:5]
        s_endpgm""", args=1, vgprs=8)
    out = tb.alloc(4 * 64)
    tb.launch(k, [out], (2,), (32,))
    assert np.array_equal(tb.download(out, np.float32, 32), want(np.arange(32, dtype=np.float32)))
