"""Every instruction the JIT translates natively agrees with the interpreter bit for bit: random encodings
the translator covers (random opcodes and operands: SGPRs, VGPRs, inline constants, literals, VOP3
modifiers it accepts, VOPD pairs), run after a prologue that fills SGPRs, VGPRs, VCC, EXEC and SCC with
random bits and float specials (NaNs, infinities, denormals, signed zeros), in wave32 and wave64 and
under random MODEs (round and denorm modes, IEEE) from the kernel descriptor, as gfx1100, gfx1201 and gfx942 code
(each architecture's encodings and meanings; gfx942 in wave64 only). Both tiers must end with the same registers,
memory, counters and clock (tests/support/tiers.py). The modules of random instructions and of random LDS loads are
compiled with LLVM's quickest code generation (tiers.fuzz_codegen: the same IR passes as users' kernels); the other
tests here compile at the default levels.
More examples: SIMGPU_FUZZ_EXAMPLES=2000 pytest tests/simgpu/shader/test_jit_ops.py
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simgpu.isa import DecodeError, assemble, decode
from simgpu.isa.codeobject import write_code_object
from simgpu.isa.kdescriptor import make_descriptor
from simgpu.shader import semantics
from simgpu.shader.jit import lower, region, translate
from tests.support import tiers

EXAMPLES = int(os.environ.get("SIMGPU_FUZZ_EXAMPLES", "120"))
ARCHS = ("gfx1100", "gfx1201", "gfx942")
# the prologue's waits: for SMEM, then for VMEM and SMEM
WAITS = {"gfx1100": ("s_waitcnt lgkmcnt(0)", "s_waitcnt vmcnt(0) lgkmcnt(0)"),
         "gfx1201": ("s_wait_kmcnt 0x0", "s_wait_loadcnt 0x0\ns_wait_kmcnt 0x0"),
         "gfx942": ("s_waitcnt lgkmcnt(0)", "s_waitcnt vmcnt(0) lgkmcnt(0)")}
# the prologue's loads under gfx9's names (gfx942 is wave64 only)
GFX9_NAMES = {"s_load_b64": "s_load_dwordx2", "s_load_b128": "s_load_dwordx4", "s_load_b256": "s_load_dwordx8",
              "s_load_b512": "s_load_dwordx16", "global_load_b128": "global_load_dwordx4",
              "global_load_b96": "global_load_dwordx3", "global_load_b32": "global_load_dword"}
NVGPR = 32  # the kernels allocate 32 VGPRs; random VGPR fields are folded into them
S_ENDPGM = bytes.fromhex("0000b0bf")
_VGPR_FIELDS = ("vdst", "vsrc1", "addr", "data", "vdstx", "vsrc1x", "vsrc1y")
_SRC_FIELDS = ("src0", "src1", "src2", "src0x", "src0y")

F32_SPECIALS = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FA00000, 1, 0x807FFFFF,
                0x00800000, 0x3F800000, 0xBF800000, 0x4B000000, 0x7F7FFFFF, 0x00400000, 0x3EFFFFFF]
F64_HIGH = [0x7FF00000, 0xFFF00000, 0x7FF80000, 0x7FF00001, 0x00000000, 0x80000000, 0x000FFFFF, 0x3FF00000]


def _fold_vgprs(inst) -> bytes:
    """The instruction re-encoded with every VGPR operand folded into v0..v(NVGPR-1)."""
    f = inst.fields
    for name in _VGPR_FIELDS:
        if name in f:
            f[name] = f[name] % NVGPR if name != "vdsty" else f[name]
    for name in _SRC_FIELDS:
        if name in f and f[name] >= 256:
            f[name] = 256 + (f[name] - 256) % NVGPR
    if "vdsty" in f:
        f["vdsty"] = f["vdsty"] % (NVGPR // 2)
    if inst.dpp is not None:
        inst.dpp["src0"] = inst.dpp.get("src0", 0) % NVGPR
    return inst.encode()


# Encodings drawn more often than random bytes would pick them: (mask, value) of the first dword's top bits (VOP3,
# VOPC, VOPD, DS, and gfx11's FLAT or gfx12's VGLOBAL and VFLAT).
_COMMON_BIAS = [(0xFC000000, 0xD4000000), (0xFE000000, 0x7C000000), (0xFC000000, 0xC8000000), (0xFC000000, 0xD8000000)]
_BIAS = {"gfx1100": _COMMON_BIAS + [(0xFC000000, 0xDC000000)],
         "gfx1201": _COMMON_BIAS + [(0xFF000000, 0xEE000000), (0xFF000000, 0xEC000000)],
         # gfx9: VOP3 (0xD0..., with VOP3P at 0xD3800000 among them), VOPC, DS, FLAT/GLOBAL, SMEM
         "gfx942": [(0xFC000000, 0xD0000000), (0xFE000000, 0x7C000000), (0xFC000000, 0xD8000000),
                    (0xFC000000, 0xDC000000), (0xFC000000, 0xC0000000)]}


def native_instruction(rng, classify, arch: str = "gfx1100") -> bytes:
    """The bytes of a random `arch` instruction the translator covers natively (not control flow); half of them
    VOP3, VOPC, VOPD, DS or global/flat (random bytes mostly decode as VOP1/VOP2/SOP)."""
    bias = _BIAS[arch]
    while True:
        data = bytearray(rng.integers(0, 256, 16, dtype=np.uint8).tobytes())
        if rng.random() < 0.5:
            mask, value = bias[rng.integers(len(bias))]
            word = (int.from_bytes(data[:4], "little") & ~mask) | value
            data[:4] = word.to_bytes(4, "little")
        data = bytes(data)
        try:
            inst = decode(data, arch=arch)
            if semantics.lookup(inst) is None or inst.mnemonic in region.CONTROLS:
                continue
            inst = decode(_fold_vgprs(inst), arch=arch)
        except (DecodeError, KeyError, ValueError, OverflowError):
            continue
        if semantics.lookup(inst) is not None and classify(inst, 0)[0] == region.NATIVE:
            return inst.encode()


def _prologue(wave32: bool, arch: str = "gfx1100") -> bytes:
    """s[0:1] points at 4 KiB of random data: SGPRs s4-s99 and, per lane, v0-v31 come from it; then VCC,
    M0, EXEC and SCC from random SGPRs."""
    smem, both = WAITS[arch]
    lines = ["s_load_b64 s[100:101], s[0:1], 0x0", smem,
             "v_lshlrev_b32 v31, 7, v0", "v_and_b32 v31, 0xf80, v31"]
    for k in range(4, 100, 16):
        n = min(16, 100 - k)
        size = {16: 512, 8: 256, 4: 128}[max(x for x in (16, 8, 4) if x <= n)]
        lines.append(f"s_load_b{size} s[{k}:{k + size // 32 - 1}], s[100:101], {4 * k:#x}")
    for r in range(0, 28, 4):
        lines.append(f"global_load_b128 v[{r}:{r + 3}], v31, s[100:101] offset:{4 * r}")
    lines += ["global_load_b96 v[28:30], v31, s[100:101] offset:112", "global_load_b32 v31, v31, s[100:101] offset:124",
              both, "s_mov_b32 vcc_lo, s97", "s_mov_b32 m0, s96", "s_cmp_lt_u32 s95, s94"]
    if not wave32:
        lines += ["s_mov_b32 vcc_hi, s93", "s_or_b32 exec_hi, s92, s91"]
    lines.append("s_or_b32 exec_lo, s99, s98")  # random lanes, about three quarters of them
    if arch == "gfx942":
        lines = [" ".join([GFX9_NAMES.get(ln.split(" ", 1)[0], ln.split(" ", 1)[0]), *ln.split(" ", 1)[1:]])
                 for ln in lines]
    return assemble("\n".join(lines), arch=arch)


def _random_data(rng) -> np.ndarray:
    words = rng.integers(0, 1 << 32, 1024, dtype=np.uint64).astype(np.uint32)
    pick = rng.random(1024)
    words = np.where(pick < 0.3, rng.choice(np.array(F32_SPECIALS, np.uint32), 1024), words)
    odd = np.arange(1024) % 2 == 1  # f64 specials in the high dwords of pairs
    words = np.where(odd & (pick > 0.85), rng.choice(np.array(F64_HIGH, np.uint32), 1024), words)
    return words


def _kernel(tb, body: bytes, wave32: bool, mode: dict, lds: int = 0):
    kd = make_descriptor(NVGPR, kernarg_size=8, wave32=wave32, group_segment_size=lds)
    for k, v in mode.items():
        setattr(kd, k, v)
    meta = {".args": [{".offset": 0, ".size": 8, ".value_kind": "by_value"}]}
    code = _prologue(wave32, tb.arch) + body + S_ENDPGM
    return tb.load(write_code_object([("k", code, kd, meta)], target=tb.arch))["k"]


@pytest.mark.parametrize("arch", ARCHS)
@settings(max_examples=max(EXAMPLES // 4, 10), deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**63 - 1), wave32=st.booleans(),
       mode=st.fixed_dictionaries({"float_round_mode_32": st.sampled_from([0, 0, 0, 1, 2, 3]),
                                   "float_round_mode_16_64": st.sampled_from([0, 0, 0, 3]),
                                   "float_denorm_mode_32": st.integers(0, 3),
                                   "float_denorm_mode_16_64": st.integers(0, 3),
                                   "enable_ieee_mode": st.integers(0, 1)}))
def test_native_instructions_agree_with_the_interpreter(arch, seed, wave32, mode):
    wave32 = wave32 and arch != "gfx942"  # (wave64 only)
    rng = np.random.default_rng(seed)
    lw = lower.Lowering(32 if wave32 else 64, 0, NVGPR, arch)
    classify = translate.classifier(lw, NVGPR, lambda inst: True)
    body = b"".join(native_instruction(rng, classify, arch) for _ in range(8))
    data = _random_data(rng)
    results, pair = [], tiers.pair(arch=arch)
    with tiers.fuzz_codegen():  # (one module an example, run once: quicker code generation, the same IR passes)
        for tb in pair:
            tb.engine.watchdog = 10_000
            results.append(tiers.launch(tb, _kernel(tb, body, wave32, mode), [tb.upload(data)], (2,), (64,)))
    assert results[0] == results[1]
    tiers.assert_same(*pair)
    # native code ran (unless a fault stopped the waves first and rolled it all back)
    assert results[0] is not None or pair[1].engine.jit.stats.native_instructions > 0


@pytest.mark.parametrize("wave32", [True, False])
def test_the_prologue_leaves_random_registers(wave32):
    """The harness itself: after the prologue, registers hold the random data (not zeros)."""
    tb = tiers.testbed("interpreter")
    data = _random_data(np.random.default_rng(1))
    tb.launch(_kernel(tb, b"", wave32, {}), [tb.upload(data)], (1,), (64,))
    st_, _ = tb.engine.exit_states[0]
    assert (st_.vgpr[:NVGPR] != 0).mean() > 0.9
    assert (st_.sgpr[:, 4:96] != 0).mean() > 0.9


_LDS_LOADS = ["ds_load_b32 v{d}, v{a} offset:{o}", "ds_load_b64 v[{d}:{d1}], v{a} offset:{o}",
              "ds_load_b128 v[{d}:{d3}], v{a}", "ds_load_u8 v{d}, v{a} offset:{o}", "ds_load_i8 v{d}, v{a}",
              "ds_load_u16 v{d}, v{a} offset:{o}", "ds_load_i16 v{d}, v{a}", "ds_load_b96 v[{d}:{d2}], v{a}",
              "ds_load_2addr_b32 v[{d}:{d1}], v{a} offset0:{o0} offset1:{o1}",
              "ds_load_2addr_stride64_b64 v[{d}:{d3}], v{a} offset1:{o1}"]


@pytest.mark.parametrize("wave32", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_lds_loads_agree(seed, wave32):
    """LDS loads at addresses mostly inside the workgroup's 4 KiB (native gathers, and vector loads where
    the lanes read consecutive dwords), some past it (bytes outside read 0: the interpreter's routine),
    after the waves filled LDS with random data; EXEC is random."""
    rng = np.random.default_rng(seed)
    lines = ["v_and_b32 v1, 0xffc, v1", "v_and_b32 v2, 0x1fff, v2", "ds_store_b128 v1, v[4:7]",
             "ds_store_b64 v2, v[8:9] offset:4", "s_waitcnt lgkmcnt(0)", "s_barrier",
             "v_and_b32 v3, 0xfff, v3", "v_and_b32 v10, 0x7f8, v10", "v_lshlrev_b32 v11, 2, v0"]
    for _ in range(12):
        t = _LDS_LOADS[rng.integers(len(_LDS_LOADS))]
        d = int(rng.integers(12, 27))
        lines.append(t.format(d=d, d1=d + 1, d2=d + 2, d3=d + 3, a=int(rng.choice([3, 3, 10, 2, 11, 11])),
                              o=int(rng.integers(0, 64)) * 4, o0=int(rng.integers(0, 256)), o1=int(rng.integers(0, 8))))
    body = assemble("\n".join(lines))
    data = _random_data(rng)
    results, pair = [], tiers.pair()
    with tiers.fuzz_codegen():  # (random loads, one module a case, run once: as the random instructions above)
        for tb in pair:
            results.append(tiers.launch(tb, _kernel(tb, body, wave32, {}, lds=4096), [tb.upload(data)], (2,), (128,)))
    assert results == [None, None]
    tiers.assert_same(*pair)
    assert pair[1].engine.jit.stats.native_instructions > 0


_ROW_ADDRESSES = """
v_mbcnt_lo_u32_b32 v20, -1, 0
v_mbcnt_hi_u32_b32 v20, -1, v20
v_and_b32 v21, 15, v20
v_lshrrev_b32 v22, 4, v20
v_mul_u32_u24 v23, 37, v22
v_add_nc_u32 v23, v23, v21
v_lshlrev_b32 v23, 2, v23
v_lshlrev_b32 v24, 6, v22
v_lshlrev_b32 v25, 2, v21
v_and_b32 v26, 1, v22
v_cmp_eq_u32 vcc_lo, 0, v26
v_cndmask_b32 v26, v24, v23, vcc_lo
v_mov_b32 v27, 0xffc
v_add_nc_u32 v28, 0xfc0, v25
v_and_b32 v29, 0xffc, v5
"""


@pytest.mark.parametrize("wave32", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_global_loads_by_rows_agree(seed, wave32):
    """Dword loads whose rows of 16 lanes read along a row or one dword each (the 2D-tile fast path),
    rows mixing both, a dword at the buffer's end and random addresses, under random EXEC and then all
    lanes."""
    addresses = (23, 24, 25, 26, 27, 28, 29)
    every = "s_mov_b32 exec_lo, -1" if wave32 else "s_mov_b64 exec, -1"
    body = ("s_mov_b32 s102, exec_lo" if wave32 else "s_mov_b64 s[102:103], exec") + f"\n{every}\n"
    body += _ROW_ADDRESSES.replace("vcc_lo", "vcc_lo" if wave32 else "vcc")  # every lane's address
    body += ("s_mov_b32 exec_lo, s102" if wave32 else "s_mov_b64 exec, s[102:103]") + "\n"
    body += "\n".join(f"global_load_b32 v{8 + k}, v{a}, s[100:101]" for k, a in enumerate(addresses))
    body += f"\ns_waitcnt vmcnt(0)\n{every}\n"
    body += "\n".join(f"global_load_b32 v{15 + k}, v{a}, s[100:101]" for k, a in enumerate(addresses))
    data = _random_data(np.random.default_rng(seed))
    results, pair = [], tiers.pair()
    for tb in pair:
        k = _kernel(tb, assemble(body), wave32, {})
        results.append(tiers.launch(tb, k, [tb.upload(data)], (2,), (64,)))
    assert results == [None, None]
    tiers.assert_same(*pair)
    assert pair[1].engine.jit.stats.native_instructions > 0


@pytest.mark.parametrize("text", ["v_mul_f32_e64 v1, 0, 0x7f800000", "v_sub_f32_e64 v1, 0x7f800000, 0x7f800000",
                                  "v_fma_f32 v1, 0, 0x7f800000, 1.0", "v_mul_f64 v[2:3], 0, 0x7ff00000",
                                  "v_cvt_f64_f32 v[2:3], 0x7f800001", "v_cvt_f32_f64 v1, 0x7ff00001"])
def test_nans_from_constant_operands_are_the_hosts(text):
    """A NaN made from numbers is the host's default NaN in both tiers, also where every operand is a
    constant and LLVM folds the operation (to its own default NaN, 0x7fc00000, not x86's 0xffc00000)."""
    data = _random_data(np.random.default_rng(0))
    pair = tiers.pair()
    for tb in pair:
        assert tiers.launch(tb, _kernel(tb, assemble(text), True, {}), [tb.upload(data)], (1,), (32,)) is None
    tiers.assert_same(*pair)
    assert pair[1].engine.jit.stats.native_instructions > 0


@pytest.mark.parametrize("denorm", [0, 3])
@pytest.mark.parametrize("wave32", [True, False])
def test_rounding_to_integers_agrees_over_float_specials(wave32, denorm):
    """v_trunc/ceil/floor/rndne in f32 and f64 (native through LLVM's intrinsics) over random bits and
    float specials (signaling and quiet NaNs with payloads, infinities, denormals, -0, halves), with
    denormal inputs flushed or kept."""
    # v30 = k + 0.5 and v31 = -(k + 0.5) for small random k: ties, where the round modes differ
    lines = ["v_and_b32 v30, 0xff, v8", "v_cvt_f32_u32 v30, v30", "v_add_f32 v30, 0.5, v30", "v_sub_f32 v31, 0, v30"]
    for k, name in enumerate(("trunc", "ceil", "floor", "rndne")):
        lines += [f"v_{name}_f32 v{12 + k}, v{2 + k}", f"v_{name}_f32_e64 v{16 + k}, -|v{6 + k}|",
                  f"v_{name}_f64 v[{20 + 2 * k}:{21 + 2 * k}], v[{2 * k}:{2 * k + 1}]",
                  f"v_{name}_f32 v{9 + k % 2}, v{30 + k % 2}", f"v_{name}_f32 v{28 + k % 2}, v{31 - k % 2}"]
    data = _random_data(np.random.default_rng(denorm))
    mode = {"float_denorm_mode_32": denorm, "float_denorm_mode_16_64": denorm}
    pair = tiers.pair()
    for tb in pair:
        assert tiers.launch(tb, _kernel(tb, assemble("\n".join(lines)), wave32, mode), [tb.upload(data)], (2,),
                            (64,)) is None
    tiers.assert_same(*pair)
    stats = pair[1].engine.jit.stats
    assert stats.native_instructions > 0 and stats.callbacks == 0


@pytest.mark.parametrize("mode", [{}, {"float_denorm_mode_32": 0, "float_denorm_mode_16_64": 0},
                                  {"float_round_mode_32": 3, "float_round_mode_16_64": 1}])
@pytest.mark.parametrize("wave32", [True, False])
def test_rcp_rsq_sqrt_and_class_agree_over_float_specials(wave32, mode):
    """v_rcp/rsq/sqrt in f32 (inputs and results always flushed) and f64, v_rcp_iflag, and v_cmp(x)_class
    with random masks, over random bits and float specials, under MODEs that flush or keep denormals and
    round other than to nearest (which these ignore)."""
    lines = []
    for k, name in enumerate(("rcp", "rsq", "sqrt")):
        lines += [f"v_{name}_f32 v{12 + k}, v{2 + k}", f"v_{name}_f32_e64 v{15 + k}, -|v{5 + k}|",
                  f"v_{name}_f64 v[{18 + 2 * k}:{19 + 2 * k}], v[{2 * k}:{2 * k + 1}]"]
    def sd(n: int) -> str:  # a lane mask's SGPR (the pair from it in wave64; the assembler spells wave32's)
        return f"s{n}"
    lines += ["v_rcp_iflag_f32 v24, v8", "v_sqrt_f32 v25, -1.0", "v_rsq_f64 v[26:27], 0",
              f"v_cmp_class_f32_e64 {sd(20)}, v9, v10", f"v_cmp_class_f64_e64 {sd(22)}, v[2:3], v11",
              f"v_cmp_class_f32_e64 {sd(24)}, -v3, 0x3ff", "v_and_b32 v28, 0x3ff, v4",
              f"v_cmp_class_f32_e64 {sd(26)}, |v5|, v28", "v_cmpx_class_f32_e64 v6, v28"]
    data = _random_data(np.random.default_rng(len(mode)))
    pair = tiers.pair()
    for tb in pair:
        k = _kernel(tb, assemble("\n".join(lines)), wave32, mode)
        assert tiers.launch(tb, k, [tb.upload(data)], (2,), (64,)) is None
    tiers.assert_same(*pair)
    stats = pair[1].engine.jit.stats
    assert stats.native_instructions > 0 and stats.callbacks == 0


@pytest.mark.parametrize("wave32", [True, False])
def test_d16_loads_agree(wave32):
    """GLOBAL d16 loads (a short, or a byte zero- or sign-extended to 16 bits, into a VGPR's low or high
    half; the other half kept) at random offsets, odd ones for the bytes, under random EXEC."""
    lines = ["v_and_b32 v30, 0xffe, v1", "v_and_b32 v31, 0xfff, v2"]
    for k, (form, addr) in enumerate((("d16_b16", 30), ("d16_hi_b16", 30), ("d16_u8", 31), ("d16_i8", 31),
                                      ("d16_hi_u8", 31), ("d16_hi_i8", 31))):
        lines.append(f"global_load_{form} v{12 + k}, v{addr}, s[100:101]")
    data = _random_data(np.random.default_rng(5))
    pair = tiers.pair()
    for tb in pair:
        k = _kernel(tb, assemble("\n".join(lines)), wave32, {})
        assert tiers.launch(tb, k, [tb.upload(data)], (2,), (64,)) is None
    tiers.assert_same(*pair)
    stats = pair[1].engine.jit.stats
    assert stats.native_instructions > 0 and stats.callbacks == 0


# Definitions the JIT gained from the expression form that random encodings seldom reach: the SAD family, v_lerp_u8,
# the quad SADs, the 64-bit shifts (a constant amount too: the interpreter's pair plan), with and without clamp.
_INTEGER_DEFINED = ["v_sad_u8 v20, v1, v2, v3{c}", "v_sad_hi_u8 v21, v4, v5, v6{c}", "v_sad_u16 v22, v7, v8, v9{c}",
                    "v_sad_u32 v23, v10, v11, v12{c}", "v_msad_u8 v24, v13, v14, v15{c}",
                    "v_lerp_u8 v25, v16, v17, v18", "v_qsad_pk_u16_u8 v[26:27], v[0:1], v2, v[4:5]{c}",
                    "v_mqsad_pk_u16_u8 v[28:29], v[6:7], v8, v[10:11]{c}",
                    "v_lshlrev_b64 v[12:13], v19, v[14:15]", "v_lshrrev_b64 v[16:17], 37, v[12:13]",
                    "v_ashrrev_i64 v[18:19], 5, v[16:17]", "v_ashrrev_i64 v[2:3], s7, v[18:19]",
                    "v_pack_b32_f16 v4, v5, -v6"]


@pytest.mark.parametrize("clamp", ["", " clamp"])
@pytest.mark.parametrize("wave32", [True, False])
def test_integer_definitions_agree(wave32, clamp):
    body = assemble("\n".join(t.format(c=clamp) for t in _INTEGER_DEFINED))
    data = _random_data(np.random.default_rng(len(clamp) + wave32))
    results, pair = [], tiers.pair()
    for tb in pair:
        results.append(tiers.launch(tb, _kernel(tb, body, wave32, {}), [tb.upload(data)], (2,), (64,)))
    assert results[0] == results[1] is None
    tiers.assert_same(*pair)
    assert pair[1].engine.jit.stats.native_instructions > len(_INTEGER_DEFINED)
